// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {Ownable2Step} from "@openzeppelin/contracts/access/Ownable2Step.sol";
import {ReentrancyGuard} from "@openzeppelin/contracts/utils/ReentrancyGuard.sol";
import {IMarginVault} from "./interfaces/IMarginVault.sol";

/// @title MarginVault
/// @notice The perpetual venue's collateral vault; see {IMarginVault}.
contract MarginVault is IMarginVault, Ownable2Step, ReentrancyGuard {
    using SafeERC20 for IERC20;

    // ----------------------------------------------------------------- State

    /// @inheritdoc IMarginVault
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

    modifier onlyOperator() {
        if (!isOperator[msg.sender]) revert NotOperator(msg.sender);
        _;
    }

    constructor(address collateralToken_, address initialOwner) Ownable(initialOwner) {
        if (collateralToken_ == address(0)) revert ZeroAddress();
        collateralToken = collateralToken_;
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
    function deposit(uint256 amount) external nonReentrant {
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
}
