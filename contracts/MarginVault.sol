// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {OwnableUpgradeable} from "@openzeppelin/contracts-upgradeable/access/OwnableUpgradeable.sol";
import {Ownable2StepUpgradeable} from "@openzeppelin/contracts-upgradeable/access/Ownable2StepUpgradeable.sol";
import {VenueUpgradeable} from "./VenueUpgradeable.sol";
import {ReentrancyGuardTransient} from "@openzeppelin/contracts/utils/ReentrancyGuardTransient.sol";
import {IMarginVault} from "./interfaces/IMarginVault.sol";

/// @title MarginVault
/// @notice The perpetual venue's collateral vault; see {IMarginVault}.
contract MarginVault is IMarginVault, VenueUpgradeable, Ownable2StepUpgradeable, ReentrancyGuardTransient {
    using SafeERC20 for IERC20;

    // ----------------------------------------------------------------- State

    /// @inheritdoc IMarginVault
    /// @dev Fixed per venue, so an immutable of the implementation rather than a storage read on every
    /// deposit; an upgrade constructs the new implementation with the proxy's `collateralToken()`.
    /// @custom:oz-upgrades-unsafe-allow state-variable-immutable
    address public immutable collateralToken;
    /// @inheritdoc IMarginVault
    mapping(address account => bool) public isOperator;
    /// @inheritdoc IMarginVault
    mapping(bytes32 withdrawalId => bool) public withdrawalPaid;
    /// @inheritdoc IMarginVault
    mapping(address account => uint256) public depositedOf;
    /// @inheritdoc IMarginVault
    mapping(address account => uint256) public withdrawnOf;
    /// @inheritdoc IMarginVault
    uint256 public totalDeposited;
    /// @inheritdoc IMarginVault
    uint256 public totalWithdrawn;
    /// @dev Accounts already migrated: a rerun after a crash counts nobody twice.
    mapping(address account => bool) private _migrated;

    modifier onlyOperator() {
        if (!isOperator[msg.sender]) revert NotOperator(msg.sender);
        _;
    }

    /// @custom:oz-upgrades-unsafe-allow constructor
    constructor(address collateralToken_) {
        if (collateralToken_ == address(0)) revert ZeroAddress();
        collateralToken = collateralToken_;
    }

    /// @notice Sets up the proxy: the owner of the configuration and the upgrade authority
    /// (docs/upgrades.md); `migrating_` opens the migration window (false for a new venue).
    function initialize(address initialOwner, address upgrader_, bool migrating_) external initializer {
        __VenueUpgradeable_init(upgrader_, migrating_);
        __Ownable_init(initialOwner);
    }

    // ----------------------------------------------------------------- Admin

    /// @inheritdoc IMarginVault
    function setOperator(address operator, bool enabled) external onlyOwner {
        if (operator == address(0)) revert ZeroAddress();
        isOperator[operator] = enabled;
        emit OperatorSet(operator, enabled);
    }

    // ------------------------------------------------------------------ User

    /// @inheritdoc IMarginVault
    function deposit(uint256 amount) external onlyViaProxy nonReentrant {
        if (amount == 0) revert ZeroAmount();
        IERC20 token = IERC20(collateralToken);
        // Checked here so that a wallet sees the vault's own error, not the token's.
        uint256 allowance = token.allowance(msg.sender, address(this));
        if (allowance < amount) revert InsufficientAllowance(msg.sender, allowance, amount);
        depositedOf[msg.sender] += amount;
        totalDeposited += amount;
        token.safeTransferFrom(msg.sender, address(this), amount);
        emit Deposited(msg.sender, amount);
    }

    // -------------------------------------------------------------- Operator

    /// @inheritdoc IMarginVault
    function withdraw(address account, uint256 amount, bytes32 withdrawalId) external onlyOperator nonReentrant {
        if (account == address(0)) revert ZeroAddress();
        if (amount == 0) revert ZeroAmount();
        if (withdrawalId == bytes32(0)) revert ZeroWithdrawalId();
        if (withdrawalPaid[withdrawalId]) revert WithdrawalAlreadyPaid(withdrawalId);
        IERC20 token = IERC20(collateralToken);
        uint256 available = token.balanceOf(address(this));
        if (available < amount) revert InsufficientVaultBalance(available, amount);
        withdrawalPaid[withdrawalId] = true;
        withdrawnOf[account] += amount;
        totalWithdrawn += amount;
        token.safeTransfer(account, amount);
        emit Withdrawn(account, amount, withdrawalId);
    }

    // ---------------------------------------------------------- Migration

    /// @inheritdoc IMarginVault
    function migrateAccounts(address[] calldata accounts, uint256[] calldata deposited, uint256[] calldata withdrawn)
        external
        onlyMigrator
    {
        if (accounts.length != deposited.length || accounts.length != withdrawn.length) revert LengthMismatch();
        for (uint256 i; i < accounts.length; ++i) {
            if (_migrated[accounts[i]]) continue;
            _migrated[accounts[i]] = true;
            depositedOf[accounts[i]] += deposited[i];
            withdrawnOf[accounts[i]] += withdrawn[i];
            totalDeposited += deposited[i];
            totalWithdrawn += withdrawn[i];
            emit AccountMigrated(accounts[i], deposited[i], withdrawn[i]);
        }
    }

    /// @inheritdoc IMarginVault
    function migrateWithdrawalsPaid(bytes32[] calldata withdrawalIds) external onlyMigrator {
        for (uint256 i; i < withdrawalIds.length; ++i) {
            withdrawalPaid[withdrawalIds[i]] = true;
        }
    }
}
