// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// A heavy loop for the tracing bench: about 40 steps per iteration, one storage write at the end.
contract Loop {
    uint256 public last;

    function loop(uint256 n) external returns (uint256 s) {
        for (uint256 i = 0; i < n; i++) s += i * i;
        last = s;
    }
}
