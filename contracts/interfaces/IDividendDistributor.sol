// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ICommonErrors} from "./ICommonErrors.sol";

/// @title IDividendDistributorErrors
/// @notice Errors of the DividendDistributor.
interface IDividendDistributorErrors {
    /// @notice A distribution with this `ref` (one corporate action) exists already, as `distributionId`.
    error DistributionExists(bytes32 ref, uint256 distributionId);

    /// @notice No distribution has the id `distributionId`.
    error UnknownDistribution(uint256 distributionId);

    /// @notice `account` has already been paid its leaf of distribution `distributionId`.
    error AlreadyClaimed(uint256 distributionId, address account);

    /// @notice The proof does not lead from the leaf (`account`, `amount`) to the distribution's root.
    error InvalidProof(uint256 distributionId, address account, uint256 amount);

    /// @notice A payment would take the distribution past the total it was funded with.
    error OverFunded(uint256 distributionId, uint256 total, uint256 wouldPay);
}

/// @title IDividendDistributor
/// @notice Pays cash dividends to the holders of record of a stock, one distribution per corporate
/// action. The operator funds a distribution with exactly the sum of its leaves and publishes the
/// Merkle root of the leaves; each leaf pays `amount` cash-token units to `account`, once. The
/// operator pushes the payments in batches ({pushPayouts}); a holder (or anyone on its behalf) may
/// also claim with its proof ({claim}). The payment always goes to the leaf's `account`.
/// @dev Leaves are OpenZeppelin's standard Merkle tree leaves of `(address account, uint256 amount)`:
/// `keccak256(bytes.concat(keccak256(abi.encode(account, amount))))`, pairs hashed sorted, as
/// {MerkleProof} verifies them. The double hash keeps a leaf from ever equalling an inner node.
interface IDividendDistributor is IDividendDistributorErrors, ICommonErrors {
    /// @notice One distribution: what it pays in, the root of its leaves, and how much it holds.
    struct Distribution {
        /// @notice The cash token paid out.
        address token;
        /// @notice The stock whose holders of record are paid.
        address stock;
        /// @notice Root of the leaves `(account, amount)`.
        bytes32 merkleRoot;
        /// @notice Cash-token units funded: the exact sum of the leaves' amounts.
        uint128 total;
        /// @notice Cash-token units paid out so far.
        uint128 paid;
        /// @notice Block whose state the holders of record and their balances were read at.
        uint64 recordBlock;
        /// @notice Caller-chosen identifier of the corporate action (one distribution per ref).
        bytes32 ref;
    }

    /// @notice A distribution was funded with `total` units of `token` and its root published.
    event DistributionCreated(
        uint256 indexed distributionId,
        bytes32 indexed ref,
        address indexed stock,
        address token,
        bytes32 merkleRoot,
        uint256 total,
        uint64 recordBlock
    );

    /// @notice `account` was paid `amount` of distribution `distributionId` (pushed or claimed).
    event Claimed(uint256 indexed distributionId, address indexed account, uint256 amount);

    /// @notice `operator` may (`enabled`) or may no longer create distributions.
    event OperatorSet(address indexed operator, bool enabled);

    /// @notice Makes `operator` one (or not) of the accounts that may create distributions. Owner only.
    function setOperator(address operator, bool enabled) external;

    /// @notice Creates a distribution: pulls `total` units of `token` from the caller (who must have
    /// approved this contract) and publishes `merkleRoot`. Operator only. One distribution per `ref`.
    /// @param ref Identifier of the corporate action, so that a retried call cannot pay twice.
    /// @param stock The stock whose holders of record the leaves pay.
    /// @param token The cash token paid out.
    /// @param merkleRoot Root of the leaves `(account, amount)`.
    /// @param total The exact sum of the leaves' amounts.
    /// @param recordBlock The block whose balances the leaves were computed from.
    /// @return distributionId The new distribution's id (from 1).
    function createDistribution(
        bytes32 ref,
        address stock,
        address token,
        bytes32 merkleRoot,
        uint256 total,
        uint64 recordBlock
    ) external returns (uint256 distributionId);

    /// @notice Pays `account` its leaf `amount` of distribution `distributionId`. Anyone may call;
    /// the payment goes to `account`. Reverts {AlreadyClaimed} on a second claim, {InvalidProof} when
    /// the leaf is not in the tree.
    function claim(uint256 distributionId, address account, uint256 amount, bytes32[] calldata proof) external;

    /// @notice Pays a batch of leaves of distribution `distributionId` (the operator's push). A leaf
    /// already claimed is skipped, so that a holder's own claim racing the push does not undo the
    /// batch; an invalid proof reverts the whole batch. Anyone may call.
    /// @return paidCount How many leaves this call paid.
    function pushPayouts(
        uint256 distributionId,
        address[] calldata accounts,
        uint256[] calldata amounts,
        bytes32[][] calldata proofs
    ) external returns (uint256 paidCount);

    /// @notice Whether `account` has been paid its leaf of distribution `distributionId`.
    function isClaimed(uint256 distributionId, address account) external view returns (bool);

    /// @notice Distribution `distributionId` (all zero for an unknown id).
    function distribution(uint256 distributionId) external view returns (Distribution memory);

    /// @notice The distribution created for `ref`, or 0.
    function distributionOf(bytes32 ref) external view returns (uint256);

    /// @notice How many distributions exist (ids run from 1 to this).
    function distributionCount() external view returns (uint256);

    /// @notice Whether `account` may create distributions.
    function isOperator(address account) external view returns (bool);
}
