// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IReserveRegistry} from "../interfaces/IReserveRegistry.sol";
import {IMarginVault} from "../interfaces/IMarginVault.sol";

/// @title ReservesTree
/// @notice The Merkle-sum tree of the perpetual venue's liabilities as the chain checks it
/// (docs/proof-of-reserves.md): the ReserveRegistry builds it from the leaves an epoch publishes,
/// the MarginVault verifies escape paths against it. The same rules as the off-chain builder
/// (packages/sdk/src/perp/reserves-tree.ts): every value and sum below 2^128, an odd level completed
/// with the zero leaf (hash 0, sum 0), one leaf is its own root, no leaf is root 0 and total 0.
library ReservesTree {
    /// @dev Values and sums of the tree stay below 2^128.
    uint256 internal constant MAX_SUM = 1 << 128;

    error ReservesValueOutOfRange();

    /// @notice A leaf's hash: keccak256(abi.encode(salt, account, equity, pendingWithdrawals, deposited, withdrawn)).
    function leafHash(IReserveRegistry.Leaf calldata l) internal pure returns (bytes32) {
        return keccak256(abi.encode(l.salt, l.account, l.equity, l.pendingWithdrawals, l.deposited, l.withdrawn));
    }

    /// @notice A leaf's value: equity + pending withdrawals (reverts past the range).
    function leafValue(IReserveRegistry.Leaf calldata l) internal pure returns (uint256 v) {
        if (l.equity >= MAX_SUM || l.pendingWithdrawals >= MAX_SUM) revert ReservesValueOutOfRange();
        v = l.equity + l.pendingWithdrawals;
        if (v >= MAX_SUM || l.deposited >= MAX_SUM || l.withdrawn >= MAX_SUM) revert ReservesValueOutOfRange();
    }

    function nodeHash(bytes32 leftHash, uint256 leftSum, bytes32 rightHash, uint256 rightSum) internal pure returns (bytes32) {
        return keccak256(abi.encode(leftHash, leftSum, rightHash, rightSum));
    }

    /// @notice Root and total of `leaves`, in their order. Memory only: about 1,000 gas a leaf
    /// besides its calldata.
    function build(IReserveRegistry.Leaf[] calldata leaves) internal pure returns (bytes32 root, uint256 total) {
        uint256 n = leaves.length;
        if (n == 0) return (bytes32(0), 0);
        bytes32[] memory hashes = new bytes32[](n);
        uint256[] memory sums = new uint256[](n);
        for (uint256 i; i < n; ++i) {
            hashes[i] = leafHash(leaves[i]);
            sums[i] = leafValue(leaves[i]);
        }
        // Each level is written over the one below it, in place.
        while (n > 1) {
            uint256 up = (n + 1) / 2;
            for (uint256 i; i < up; ++i) {
                uint256 l = 2 * i;
                uint256 r = l + 1;
                (bytes32 rh, uint256 rs) = r < n ? (hashes[r], sums[r]) : (bytes32(0), uint256(0));
                uint256 s = sums[l] + rs;
                if (s >= MAX_SUM) revert ReservesValueOutOfRange();
                hashes[i] = nodeHash(hashes[l], sums[l], rh, rs);
                sums[i] = s;
            }
            n = up;
        }
        return (hashes[0], sums[0]);
    }

    /// @notice Where `path` leads from `leaf`: the root, the total and the leaf's index (each step
    /// whose sibling is on the left sets the bit of its level). `ok` is false past the range.
    function walk(bytes32 leaf, uint256 value, IMarginVault.ProofStep[] calldata path)
        internal
        pure
        returns (bool ok, bytes32 root, uint256 total, uint256 index)
    {
        if (value >= MAX_SUM || path.length > 64) return (false, 0, 0, 0);
        root = leaf;
        total = value;
        for (uint256 i; i < path.length; ++i) {
            IMarginVault.ProofStep calldata step = path[i];
            if (step.sum >= MAX_SUM) return (false, 0, 0, 0);
            if (step.left) {
                root = nodeHash(step.hash, step.sum, root, total);
                index |= uint256(1) << i;
            } else {
                root = nodeHash(root, total, step.hash, step.sum);
            }
            total += step.sum;
            if (total >= MAX_SUM) return (false, 0, 0, 0);
        }
        return (true, root, total, index);
    }
}
