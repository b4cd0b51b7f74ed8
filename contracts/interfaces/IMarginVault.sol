// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ICommonErrors} from "./ICommonErrors.sol";

/// @title IMarginVault
/// @notice The perpetual venue's collateral. A user deposits the collateral token (the exchange's
/// USDC) with `deposit`, directly from a wallet or any tool; the `Deposited` event is what the
/// off-chain engine credits the account's margin from. The engine keeps the accounts' margin, PnL
/// and funding off chain, so the vault does not hold per-account balances it could pay against:
/// withdrawals are paid by an operator (`withdraw`) after the engine has debited the account, each
/// identified by the engine's withdrawal id and paid at most once.
interface IMarginVault is ICommonErrors {
    /// @notice `account` has approved the vault for `allowance` only, less than the `needed` amount.
    error InsufficientAllowance(address account, uint256 allowance, uint256 needed);
    /// @notice The vault holds `available` collateral, less than the `needed` payout.
    error InsufficientVaultBalance(uint256 available, uint256 needed);
    /// @notice The withdrawal `withdrawalId` was paid already.
    error WithdrawalAlreadyPaid(bytes32 withdrawalId);
    /// @notice A withdrawal id of zero (the "no id" value) was given.
    error ZeroWithdrawalId();

    /// @notice `account` deposited `amount` collateral-token units; the engine credits its margin.
    event Deposited(address indexed account, uint256 amount);
    /// @notice The operator paid `amount` collateral-token units to `account` for the engine's withdrawal `withdrawalId`.
    event Withdrawn(address indexed account, uint256 amount, bytes32 indexed withdrawalId);
    event OperatorSet(address indexed operator, bool enabled);

    // ------------------------------------------------------------------ Admin

    /// @notice Grants or revokes the operator right (paying withdrawals). Owner only.
    function setOperator(address operator, bool enabled) external;

    // ------------------------------------------------------------------- User

    /// @notice Takes `amount` collateral-token units from the caller (who must have approved the
    /// vault for it) and credits the caller. Reverts `ZeroAmount` for zero, `InsufficientAllowance`
    /// without the approval.
    function deposit(uint256 amount) external;

    // --------------------------------------------------------------- Operator

    /// @notice Pays `amount` collateral-token units to `account` for the engine's withdrawal
    /// `withdrawalId`, which must not have been paid before. Operator only.
    function withdraw(address account, uint256 amount, bytes32 withdrawalId) external;

    // ------------------------------------------------------------------ Views

    /// @notice The ERC-20 the vault takes and pays (immutable).
    function collateralToken() external view returns (address);
    function isOperator(address account) external view returns (bool);
    /// @notice Whether the withdrawal `withdrawalId` has been paid.
    function withdrawalPaid(bytes32 withdrawalId) external view returns (bool);
    /// @notice Collateral-token units `account` has deposited, in total.
    function depositedOf(address account) external view returns (uint256);
    /// @notice Collateral-token units paid to `account` by withdrawals, in total.
    function withdrawnOf(address account) external view returns (uint256);
    /// @notice Collateral-token units deposited by every account, in total.
    function totalDeposited() external view returns (uint256);
    /// @notice Collateral-token units paid by every withdrawal, in total.
    function totalWithdrawn() external view returns (uint256);

    /// @notice An account's totals of the earlier vault were carried over.
    event AccountMigrated(address indexed account, uint256 deposited, uint256 withdrawn);

    /// @notice Carries each account's deposited and withdrawn totals over, once per account. Only the upgrader, only while
    /// the migration window is open; the collateral itself is moved in by the earlier vault's operator.
    function migrateAccounts(address[] calldata accounts, uint256[] calldata deposited, uint256[] calldata withdrawn)
        external;

    /// @notice Marks the earlier vault's paid withdrawal ids paid here too, so none is paid twice.
    /// Only the upgrader, only while the migration window is open.
    function migrateWithdrawalsPaid(bytes32[] calldata withdrawalIds) external;
}
