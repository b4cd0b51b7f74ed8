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

    /// @notice One account's leaf as an epoch publishes it (docs/proof-of-reserves.md "Leaves"):
    /// `keccak256(abi.encode(salt, account, equity, pendingWithdrawals, deposited, withdrawn))`, value
    /// `equity + pendingWithdrawals`, collateral-token units.
    struct Leaf {
        bytes32 salt;
        address account;
        uint256 equity;
        uint256 pendingWithdrawals;
        uint256 deposited;
        uint256 withdrawn;
    }

    /// @notice Since 0.3.0 every record is posted with its leaves (`postReservesWithLeaves`), so that
    /// any user can rebuild their escape proof from the chain alone.
    error LeavesRequired();
    /// @notice Leaf `index` is not strictly after the one before it by account (or is the zero
    /// account): the published order is by account, which is what lets the vault see that an
    /// account has no leaf.
    error LeavesNotSorted(uint256 index);

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
    /// @notice Every leaf of `epoch`'s tree, in the tree's order (by account): with these alone a
    /// user rebuilds the path of their own leaf, or shows that they have none, after the API is gone.
    event ReserveLeaves(uint64 indexed epoch, Leaf[] leaves);

    // ------------------------------------------------------------------ Admin

    /// @notice Grants or revokes the operator right (posting records). Owner only.
    function setOperator(address operator, bool enabled) external;

    // --------------------------------------------------------------- Operator

    /// @notice Records the tree of `epoch`, which must be after every epoch posted before (so a
    /// record can neither be replaced nor posted twice) and at most `MAX_EPOCH_LEAD_MS` after the
    /// block's time in ms (`EpochTooFarAhead`: an epoch far in the future would refuse every real one
    /// after it, stopping proof of reserves for good). `total` must fit 128 bits (`AmountTooLarge`).
    /// Operator only.
    /// Since 0.3.0 it reverts `LeavesRequired`: a root whose leaves nobody can read is no exit.
    function postReserves(uint64 epoch, bytes32 root, uint256 total, uint64 leafCount, uint64 timestamp) external;

    /// @notice Records `epoch` from its leaves: the registry builds the tree itself (root, total and
    /// leaf count are the leaves'), so the root on chain is always one whose leaves are public, and
    /// emits them in `ReserveLeaves`. The leaves must be strictly increasing by account
    /// (`LeavesNotSorted`), every value and sum below 2^128; the epoch rules are `postReserves`'.
    /// About 5,000 gas a leaf with its calldata: some 5,000 leaves fit a 30M-gas block. Operator only.
    function postReservesWithLeaves(uint64 epoch, uint64 timestamp, Leaf[] calldata leaves) external;

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
    /// @notice Whether `epoch` was posted with its leaves (sorted by account, in `ReserveLeaves`).
    function leavesPublished(uint64 epoch) external view returns (bool);
}
