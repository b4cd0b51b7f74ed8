// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {OwnableUpgradeable} from "@openzeppelin/contracts-upgradeable/access/OwnableUpgradeable.sol";
import {Ownable2StepUpgradeable} from "@openzeppelin/contracts-upgradeable/access/Ownable2StepUpgradeable.sol";
import {VenueUpgradeable} from "./VenueUpgradeable.sol";
import {ICashier} from "./interfaces/ICashier.sol";

/// @dev The one router view the Cashier reads (importing IStockRouter would pull its whole surface in).
interface IRouterPause {
    function paused() external view returns (bool);
}

/// @title Cashier
/// @notice Holds the cash tokens and users' mUSD balances; see {ICashier} for the buffers and the
/// invariant.
contract Cashier is ICashier, VenueUpgradeable, Ownable2StepUpgradeable {
    using SafeERC20 for IERC20;

    // ----------------------------------------------------------------- Types

    uint8 private constant MUSD_DECIMALS = 18;
    uint8 private constant STATUS_PENDING = 1;
    uint8 private constant STATUS_SETTLED = 2;

    // ----------------------------------------------------------------- State

    /// @inheritdoc ICashier
    address public router;
    /// @inheritdoc ICashier
    address public treasury;
    /// @inheritdoc ICashier
    mapping(address account => bool) public isOperator;

    /// @inheritdoc ICashier
    mapping(address user => uint256) public balanceOf;
    /// @inheritdoc ICashier
    mapping(address user => uint256) public lockedOf;
    /// @inheritdoc ICashier
    uint256 public feeBalance;
    /// @inheritdoc ICashier
    uint256 public creditBuffer;

    /// @inheritdoc ICashier
    uint256 public totalQueuedDeposits;
    /// @inheritdoc ICashier
    uint256 public totalQueuedWithdrawals;
    /// @inheritdoc ICashier
    uint256 public nextDepositQueueId;
    /// @inheritdoc ICashier
    uint256 public nextWithdrawalQueueId;

    mapping(address token => TokenConfig) private _tokenConfigs;
    mapping(address token => bool) private _known;
    address[] private _supportedTokens;
    mapping(uint256 queueId => QueuedOp) private _queuedDeposits;
    mapping(uint256 queueId => QueuedOp) private _queuedWithdrawals;
    /// @dev What the migration credited (balances, fees, queued operations), in mUSD: the cash held
    /// must cover it before the migration window can close.
    uint256 private _migratedOwed;
    /// @dev Accounts (and, at address(0), the fee balance) already migrated: a migration rerun after a
    /// crash between a send and its record credits nobody twice.
    mapping(address account => bool) private _migrated;

    modifier onlyRouter() {
        if (msg.sender != router) revert NotRouter(msg.sender);
        _;
    }

    modifier onlyOperator() {
        if (!isOperator[msg.sender]) revert NotOperator(msg.sender);
        _;
    }

    /// @dev The router holds the venue's pause (its guardian): operator actions stop with the fills.
    modifier whenRouterNotPaused() {
        address router_ = router;
        if (router_ != address(0) && IRouterPause(router_).paused()) revert VenuePaused();
        _;
    }

    /// @notice Sets up the proxy: `initialOwner` owns the configuration and is the initial treasury;
    /// `upgrader_` is the upgrade authority (docs/upgrades.md).
    function initialize(address initialOwner, address upgrader_, bool migrating_) external initializer {
        __VenueUpgradeable_init(upgrader_, migrating_);
        __Ownable_init(initialOwner);
        nextDepositQueueId = 1;
        nextWithdrawalQueueId = 1;
        treasury = initialOwner;
        emit TreasurySet(initialOwner);
    }

    // ----------------------------------------------------------------- Admin

    /// @inheritdoc ICashier
    function setRouter(address router_) external onlyOwner {
        if (router_ == address(0)) revert ZeroAddress();
        router = router_;
        emit RouterSet(router_);
    }

    /// @inheritdoc ICashier
    function setOperator(address operator, bool enabled) external onlyOwner {
        if (operator == address(0)) revert ZeroAddress();
        isOperator[operator] = enabled;
        emit OperatorSet(operator, enabled);
    }

    /// @inheritdoc ICashier
    function configureToken(address token, bool enabled, uint8 decimals, uint128 minAmount, uint128 withdrawBuffer)
        external
        onlyOwner
    {
        if (token == address(0)) revert ZeroAddress();
        if (decimals > MUSD_DECIMALS) revert InvalidTokenDecimals(decimals);
        _tokenConfigs[token] = TokenConfig(enabled, decimals, minAmount, withdrawBuffer);
        if (!_known[token]) {
            _known[token] = true;
            _supportedTokens.push(token);
        }
        emit TokenConfigured(token, enabled, decimals, minAmount, withdrawBuffer);
    }

    /// @inheritdoc ICashier
    function setCreditBuffer(uint256 amount) external onlyOwner {
        creditBuffer = amount;
        emit CreditBufferSet(amount);
    }

    /// @inheritdoc ICashier
    function setWithdrawBuffer(address token, uint128 amount) external onlyOwner {
        if (!_known[token]) revert TokenNotSupported(token);
        _tokenConfigs[token].withdrawBuffer = amount;
        emit WithdrawBufferSet(token, amount);
    }

    /// @inheritdoc ICashier
    function setTreasury(address treasury_) external onlyOwner {
        if (treasury_ == address(0)) revert ZeroAddress();
        treasury = treasury_;
        emit TreasurySet(treasury_);
    }

    /// @inheritdoc ICashier
    function sweepFees(uint256 musdAmount) external onlyOwner {
        if (musdAmount == 0) revert ZeroAmount();
        uint256 available = feeBalance;
        if (available < musdAmount) revert InsufficientBalance(available, musdAmount);
        unchecked {
            feeBalance = available - musdAmount;
        }
        address treasury_ = treasury;
        balanceOf[treasury_] += musdAmount;
        emit FeesSwept(treasury_, musdAmount);
    }

    // ---------------------------------------------------------------- Router

    /// @inheritdoc ICashier
    function creditDeposit(address user, address token, uint256 tokenAmount)
        external
        onlyRouter
        returns (bool instant, uint256 queueId)
    {
        uint256 musd = _checkedMusd(token, tokenAmount);
        uint256 buffer = creditBuffer;
        if (buffer >= musd) {
            unchecked {
                creditBuffer = buffer - musd;
            }
            balanceOf[user] += musd;
            emit Deposited(user, token, tokenAmount, musd);
            return (true, 0);
        }
        queueId = nextDepositQueueId++;
        _queuedDeposits[queueId] = QueuedOp(user, token, _u128(tokenAmount), _u128(musd), STATUS_PENDING);
        totalQueuedDeposits += musd;
        emit DepositQueued(queueId, user, token, tokenAmount, musd);
    }

    /// @inheritdoc ICashier
    function debitWithdrawal(address user, address token, uint256 tokenAmount)
        external
        onlyRouter
        returns (bool instant, uint256 queueId)
    {
        uint256 musd = _checkedMusd(token, tokenAmount);
        _debitFree(user, musd);
        TokenConfig storage config = _tokenConfigs[token];
        uint128 buffer = config.withdrawBuffer;
        if (buffer >= tokenAmount) {
            unchecked {
                config.withdrawBuffer = buffer - uint128(tokenAmount);
            }
            IERC20(token).safeTransfer(user, tokenAmount);
            emit Withdrawn(user, token, tokenAmount, musd);
            return (true, 0);
        }
        queueId = nextWithdrawalQueueId++;
        _queuedWithdrawals[queueId] = QueuedOp(user, token, _u128(tokenAmount), _u128(musd), STATUS_PENDING);
        totalQueuedWithdrawals += musd;
        emit WithdrawalQueued(queueId, user, token, tokenAmount, musd);
    }

    /// @inheritdoc ICashier
    function lock(address user, uint256 musdAmount) external onlyRouter {
        _debitFree(user, musdAmount);
        lockedOf[user] += musdAmount;
    }

    /// @inheritdoc ICashier
    function unlock(address user, uint256 musdAmount) external onlyRouter {
        _debitLocked(user, musdAmount);
        balanceOf[user] += musdAmount;
    }

    /// @inheritdoc ICashier
    function settleBuy(address user, uint256 cost, uint256 fee) external onlyRouter {
        _debitLocked(user, cost + fee);
        balanceOf[treasury] += cost;
        feeBalance += fee;
    }

    /// @inheritdoc ICashier
    function settleSell(address user, uint256 proceeds, uint256 fee) external onlyRouter {
        address treasury_ = treasury;
        uint256 available = balanceOf[treasury_];
        if (available < proceeds) revert TreasuryInsufficient(available, proceeds);
        unchecked {
            balanceOf[treasury_] = available - proceeds;
        }
        balanceOf[user] += proceeds - fee;
        feeBalance += fee;
    }

    // -------------------------------------------------------------- Operator

    /// @inheritdoc ICashier
    function settleDeposit(uint256 queueId) external onlyOperator whenRouterNotPaused {
        _settleDeposit(queueId);
    }

    /// @inheritdoc ICashier
    function settleWithdrawal(uint256 queueId) external onlyOperator whenRouterNotPaused {
        _settleWithdrawal(queueId);
    }

    /// @inheritdoc ICashier
    function settleDepositFor(address user, uint256 queueId) external onlyRouter {
        if (_queuedDeposits[queueId].user != user) revert NotQueuedOpOwner(queueId, user);
        _settleDeposit(queueId);
    }

    /// @inheritdoc ICashier
    function settleWithdrawalFor(address user, uint256 queueId) external onlyRouter {
        if (_queuedWithdrawals[queueId].user != user) revert NotQueuedOpOwner(queueId, user);
        _settleWithdrawal(queueId);
    }

    function _settleDeposit(uint256 queueId) private {
        QueuedOp storage op = _queuedDeposits[queueId];
        if (op.status != STATUS_PENDING) revert QueuedOpNotPending(queueId);
        op.status = STATUS_SETTLED;
        uint256 musd = op.musdAmount;
        totalQueuedDeposits -= musd;
        balanceOf[op.user] += musd;
        emit DepositSettled(queueId, op.user, op.token, op.tokenAmount, musd);
    }

    function _settleWithdrawal(uint256 queueId) private {
        QueuedOp storage op = _queuedWithdrawals[queueId];
        if (op.status != STATUS_PENDING) revert QueuedOpNotPending(queueId);
        op.status = STATUS_SETTLED;
        uint256 musd = op.musdAmount;
        totalQueuedWithdrawals -= musd;
        IERC20(op.token).safeTransfer(op.user, op.tokenAmount);
        emit WithdrawalSettled(queueId, op.user, op.token, op.tokenAmount, musd);
    }

    /// @inheritdoc ICashier
    function fundTreasury(address token, uint256 tokenAmount) external onlyOperator whenRouterNotPaused {
        if (!_tokenConfigs[token].enabled) revert TokenNotSupported(token);
        if (tokenAmount == 0) revert ZeroAmount();
        uint256 musd = _toMusd(token, tokenAmount);
        balanceOf[treasury] += musd;
        IERC20(token).safeTransferFrom(msg.sender, address(this), tokenAmount);
        emit TreasuryFunded(msg.sender, token, tokenAmount, musd);
    }

    // ----------------------------------------------------------------- Views

    /// @inheritdoc ICashier
    function tokenConfig(address token) external view returns (TokenConfig memory) {
        return _tokenConfigs[token];
    }

    /// @inheritdoc ICashier
    function supportedTokens() external view returns (address[] memory) {
        return _supportedTokens;
    }

    /// @inheritdoc ICashier
    function queuedDeposit(uint256 queueId) external view returns (QueuedOp memory) {
        return _queuedDeposits[queueId];
    }

    /// @inheritdoc ICashier
    function queuedWithdrawal(uint256 queueId) external view returns (QueuedOp memory) {
        return _queuedWithdrawals[queueId];
    }

    /// @inheritdoc ICashier
    function toMusd(address token, uint256 tokenAmount) external view returns (uint256) {
        return _toMusd(token, tokenAmount);
    }

    // -------------------------------------------------------------- Internal

    /// @dev Validates a user cash operation and returns its mUSD amount (exact: decimals <= 18).
    function _checkedMusd(address token, uint256 tokenAmount) private view returns (uint256) {
        TokenConfig storage config = _tokenConfigs[token];
        if (!config.enabled) revert TokenNotSupported(token);
        if (tokenAmount == 0) revert ZeroAmount();
        uint256 minimum = config.minAmount;
        if (tokenAmount < minimum) revert AmountBelowMinimum(minimum, tokenAmount);
        return tokenAmount * 10 ** (MUSD_DECIMALS - config.decimals);
    }

    function _toMusd(address token, uint256 tokenAmount) private view returns (uint256) {
        return tokenAmount * 10 ** (MUSD_DECIMALS - _tokenConfigs[token].decimals);
    }

    function _debitFree(address user, uint256 amount) private {
        uint256 available = balanceOf[user];
        if (available < amount) revert InsufficientBalance(available, amount);
        unchecked {
            balanceOf[user] = available - amount;
        }
    }

    function _debitLocked(address user, uint256 amount) private {
        uint256 available = lockedOf[user];
        if (available < amount) revert InsufficientBalance(available, amount);
        unchecked {
            lockedOf[user] = available - amount;
        }
    }

    function _u128(uint256 amount) private pure returns (uint128) {
        if (amount > type(uint128).max) revert AmountTooLarge(amount);
        return uint128(amount);
    }

    // ---------------------------------------------------------- Migration

    /// @inheritdoc ICashier
    function migrateBalances(address[] calldata users, uint256[] calldata musdAmounts) external onlyMigrator {
        if (users.length != musdAmounts.length) revert LengthMismatch();
        uint256 total;
        for (uint256 i; i < users.length; ++i) {
            address user = users[i];
            if (user == address(0)) revert ZeroAddress();
            if (_migrated[user]) continue;
            _migrated[user] = true;
            balanceOf[user] += musdAmounts[i];
            total += musdAmounts[i];
            emit BalanceMigrated(user, musdAmounts[i]);
        }
        _migratedOwed += total;
    }

    /// @inheritdoc ICashier
    function migrateFees(uint256 musdAmount) external onlyMigrator {
        if (_migrated[address(0)]) return;
        _migrated[address(0)] = true;
        feeBalance += musdAmount;
        _migratedOwed += musdAmount;
    }

    /// @inheritdoc ICashier
    function migrateQueuedOp(
        bool deposit,
        uint256 queueId,
        address user,
        address token,
        uint128 tokenAmount,
        uint128 musdAmount
    ) external onlyMigrator {
        if (queueId == 0) revert ZeroAmount();
        mapping(uint256 => QueuedOp) storage ops = deposit ? _queuedDeposits : _queuedWithdrawals;
        if (ops[queueId].status != 0) return; // carried over already
        ops[queueId] = QueuedOp(user, token, tokenAmount, musdAmount, STATUS_PENDING);
        if (deposit) {
            totalQueuedDeposits += musdAmount;
            if (nextDepositQueueId <= queueId) nextDepositQueueId = queueId + 1;
        } else {
            totalQueuedWithdrawals += musdAmount;
            if (nextWithdrawalQueueId <= queueId) nextWithdrawalQueueId = queueId + 1;
        }
        _migratedOwed += musdAmount;
        emit QueuedOpMigrated(queueId, deposit, user, token, tokenAmount, musdAmount);
    }

    /// @dev The window closes only when the cash moved in covers everything credited.
    function _beforeMigrationFinished() internal view override {
        uint256 held;
        for (uint256 i; i < _supportedTokens.length; ++i) {
            address token = _supportedTokens[i];
            held += _toMusd(token, IERC20(token).balanceOf(address(this)));
        }
        if (held < _migratedOwed) revert MigrationUnderfunded(held, _migratedOwed);
    }
}
