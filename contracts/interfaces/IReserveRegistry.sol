// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ICommonErrors} from "./ICommonErrors.sol";

/// @title IReserveRegistry
/// @notice The perpetual venue's proof of reserves (docs/proof-of-reserves.md). At each funding
/// interval the venue builds a Merkle-sum tree of what it owes its accounts (each leaf an account's
/// equity, never below zero, plus its withdrawals not paid yet) and an operator posts the tree's
/// root and total here. A user checks that the path the API gives for their own leaf leads to the
/// root recorded for that epoch, and that the MarginVault holds at least the recorded total.
/// Records are append-only: epochs strictly increase and a posted record is never changed.
interface IReserveRegistry is ICommonErrors {
    /// @notice One posted epoch.
    struct ReserveRecord {
        /// @notice The epoch: the funding interval's start time, ms since the Unix epoch (0: none).
        uint64 epoch;
        /// @notice The root hash of the Merkle-sum tree.
        bytes32 root;
        /// @notice The tree's total: the sum of every leaf's value, collateral-token units (6 decimals).
        uint128 total;
        /// @notice Number of leaves (accounts) in the tree.
        uint64 leafCount;
        /// @notice When the venue took the snapshot the tree was built from, ms since the Unix epoch.
        uint64 timestamp;
    }

    /// @notice `epoch` is not after the latest posted epoch `latestEpoch`.
    error EpochNotIncreasing(uint64 epoch, uint64 latestEpoch);
    /// @notice `epoch` (ms) is more than `MAX_EPOCH_LEAD_MS` after the block's time: at most `maxEpoch`.
    error EpochTooFarAhead(uint64 epoch, uint256 maxEpoch);
    /// @notice No record was posted for `epoch`.
    error UnknownEpoch(uint64 epoch);
    /// @notice The record is not self-consistent: a tree without leaves has a zero root and total,
    /// a tree with leaves a non-zero root.
    error InvalidRecord();

    /// @notice The operator posted the reserves record of `epoch`.
    event ReservesPosted(uint64 indexed epoch, bytes32 root, uint256 total, uint64 leafCount, uint64 timestamp);
    event OperatorSet(address indexed operator, bool enabled);

    // ------------------------------------------------------------------ Admin

    /// @notice Grants or revokes the operator right (posting records). Owner only.
    function setOperator(address operator, bool enabled) external;

    // --------------------------------------------------------------- Operator

    /// @notice Records the tree of `epoch`, which must be after every epoch posted before (so a
    /// record can neither be replaced nor posted twice) and at most `MAX_EPOCH_LEAD_MS` after the
    /// block's time in ms (`EpochTooFarAhead`: an epoch far in the future would refuse every real one
    /// after it, stopping proof of reserves for good). `total` must fit 128 bits (`AmountTooLarge`).
    /// Operator only.
    function postReserves(uint64 epoch, bytes32 root, uint256 total, uint64 leafCount, uint64 timestamp) external;

    // ------------------------------------------------------------------ Views

    /// @notice The latest posted record; all zero (epoch 0) before the first.
    function latest() external view returns (ReserveRecord memory);
    /// @notice The record posted for `epoch`; reverts `UnknownEpoch` when there is none.
    function rootOf(uint64 epoch) external view returns (ReserveRecord memory);
    /// @notice How far an epoch may be ahead of the block's time, ms: one hour (clock skew between
    /// the venue and the chain; epochs are funding-interval start times, never in the future).
    // solhint-disable-next-line func-name-mixedcase
    function MAX_EPOCH_LEAD_MS() external view returns (uint64);
    /// @notice Number of epochs posted.
    function epochCount() external view returns (uint256);
    /// @notice The block time (unix seconds) of the last post: the operator's heartbeat that keeps
    /// the MarginVault's escape hatch closed (0 before the first post since 0.2.0).
    function lastPostedAt() external view returns (uint64);
    function isOperator(address account) external view returns (bool);
}
