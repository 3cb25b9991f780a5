// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// Storage-heavy calls for the execution ceiling bench (bench/evm-ceiling.ts): fresh slots, updates, and writes
/// that a revert rolls back.
contract Store {
    mapping(uint256 => uint256) public slot;

    /// Writes n fresh slots from `from` on (22,100 gas each when they were zero).
    function fill(uint256 from, uint256 n) external {
        for (uint256 i = 0; i < n; i++) slot[from + i] = from + i + 1;
    }

    /// Adds one to n existing slots.
    function bump(uint256 from, uint256 n) external {
        for (uint256 i = 0; i < n; i++) slot[from + i] += 1;
    }

    /// Writes n slots, then reverts: the writes are rolled back.
    function fillThenRevert(uint256 from, uint256 n) external {
        for (uint256 i = 0; i < n; i++) slot[from + i] = 1;
        revert("rolled back");
    }
}
