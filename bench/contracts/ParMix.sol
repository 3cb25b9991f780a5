// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// Parallel execution's differential test and bench (test/execution/parallel-diff.test.ts, bench/evm-parallel.ts):
/// a hot counter every bump() conflicts on, per-sender slots that conflict only when senders meet, nested calls
/// between instances that conflict only sometimes, reverts (caught and not), creation, self-destruct, BLOCKHASH.
contract ParMix {
    uint256 public count;
    mapping(address => uint256) public per;
    event Bumped(address indexed who, uint256 count);

    function bump() external {
        count += 1;
        emit Bumped(msg.sender, count);
    }

    function mark(uint256 v) external {
        per[msg.sender] += v;
    }

    /// Writes the origin's slot; one call in five also the hot counter.
    function maybe(uint256 v) public {
        per[tx.origin] += v;
        if (v % 5 == 0) count += v;
    }

    function fail(uint256 v) external {
        per[msg.sender] = v;
        require(v % 2 == 0, "odd");
    }

    function poke(ParMix other, uint256 v) external {
        per[msg.sender] += 1;
        other.maybe(v);
    }

    function pokeTry(ParMix other, uint256 v) external {
        try other.fail(v) {
            per[msg.sender] += 3;
        } catch {
            per[msg.sender] += 2;
        }
    }

    function spawn(uint256 salt, bool die) external payable returns (address) {
        return address(new ParChild{salt: bytes32(salt), value: msg.value}(die));
    }

    function spin(uint256 n) external returns (uint256 s) {
        for (uint256 i = 0; i < n; i++) s += i * i;
        per[msg.sender] = s;
    }

    function pay(address payable to) external payable {
        to.transfer(msg.value);
    }

    function seeHash() external {
        per[msg.sender] = uint256(blockhash(block.number - 1));
    }
}

contract ParChild {
    uint256 public born;

    constructor(bool die) payable {
        born = block.number;
        if (die) selfdestruct(payable(msg.sender));
    }

    function kill(address payable to) external {
        selfdestruct(to);
    }
}
