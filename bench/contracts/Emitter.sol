// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// Emits logs with 0 to 4 topics (log-index tests): named events with indexed arguments and an anonymous one.
contract Emitter {
    event Three(bytes32 indexed x, bytes32 indexed y, bytes32 indexed z, uint256 i);
    event Two(address indexed who, bytes32 indexed x, uint256 n);
    event Quad(bytes32 indexed x, bytes32 indexed y, bytes32 indexed z, bytes32 w) anonymous;
    event Plain(uint256 n);
    event Bare() anonymous;

    /// One Three per full triple of xs, then Two, Quad (topics x0..x3 when present), Plain, and Bare when xs is empty.
    function fire(bytes32[] calldata xs, address who) external {
        uint256 n = xs.length;
        for (uint256 i = 0; i + 2 < n; i += 3) emit Three(xs[i], xs[i + 1], xs[i + 2], i);
        emit Two(who, n > 0 ? xs[0] : bytes32(0), n);
        if (n >= 3) emit Quad(xs[n - 1], xs[n - 2], xs[n - 3], bytes32(n));
        emit Plain(n);
        if (n == 0) emit Bare();
    }
}
