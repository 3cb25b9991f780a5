// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// Minimal ERC-20-like token (benches and tests): the whole supply is minted to the deployer.
contract Token {
    string public name;
    string public symbol;
    uint8 public constant decimals = 18;
    uint256 public totalSupply;
    mapping(address => uint256) public balanceOf;

    event Transfer(address indexed from, address indexed to, uint256 value);

    constructor(string memory name_, string memory symbol_, uint256 supply) {
        name = name_;
        symbol = symbol_;
        totalSupply = supply;
        balanceOf[msg.sender] = supply;
        emit Transfer(address(0), msg.sender, supply);
    }

    function transfer(address to, uint256 value) external returns (bool) {
        uint256 have = balanceOf[msg.sender];
        require(have >= value, "insufficient balance");
        unchecked {
            balanceOf[msg.sender] = have - value;
        }
        balanceOf[to] += value;
        emit Transfer(msg.sender, to, value);
        return true;
    }
}
