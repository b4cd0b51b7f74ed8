// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ICommonErrors} from "./ICommonErrors.sol";

/// @title ICashierErrors
/// @notice Errors of the Cashier that can surface through the StockRouter.
interface ICashierErrors {
    /// @notice Cash the migrated balances and queued operations are owed exceeds the cash held
    /// (`finishMigration`, docs/upgrades.md).
    error MigrationUnderfunded(uint256 heldMusd, uint256 owedMusd);

    /// @notice The user's free (or locked, for unlock and settlement) mUSD balance is too low.
    error InsufficientBalance(uint256 available, uint256 required);

    /// @notice `token` is not configured, or disabled, in the Cashier.
    error TokenNotSupported(address token);

    /// @notice A cash operation of `amount` token units is below the token's configured minimum.
    error AmountBelowMinimum(uint256 minimum, uint256 amount);

    /// @notice The queued deposit or withdrawal `queueId` does not exist or is already settled.
    error QueuedOpNotPending(uint256 queueId);

    /// @notice The treasury's free mUSD cannot pay a sell settlement.
    error TreasuryInsufficient(uint256 available, uint256 required);

    /// @notice Cash tokens with more than 18 decimals are not supported.
    error InvalidTokenDecimals(uint8 decimals);
    /// @notice The queued operation `queueId` is not `user`'s.
    error NotQueuedOpOwner(uint256 queueId, address user);
}

/// @title ICashier
/// @notice Holds the cash tokens and users' mUSD balances (18 decimals, 1e18 = 1 USD).
/// Deposits are credited instantly while the credit buffer covers them and queued otherwise;
/// withdrawals are paid instantly while the token's withdrawal buffer covers them and queued
/// otherwise (the mUSD is debited at once either way). The treasury is the counterparty of every
/// trade settlement and holds an ordinary mUSD balance.
///
/// Invariant: cash tokens held (in mUSD) = sum of free + sum of locked (treasury included)
/// + feeBalance + totalQueuedWithdrawals + totalQueuedDeposits.
interface ICashier is ICashierErrors, ICommonErrors {
    /// @notice Per-token configuration. Amounts are in the token's own units.
    struct TokenConfig {
        bool enabled;
        uint8 decimals;
        uint128 minAmount;
        uint128 withdrawBuffer;
    }

    /// @notice A queued deposit or withdrawal. `status`: 0 none, 1 pending, 2 settled.
    struct QueuedOp {
        address user;
        address token;
        uint128 tokenAmount;
        uint128 musdAmount;
        uint8 status;
    }

    /// @notice A deposit was credited instantly.
    event Deposited(address indexed user, address indexed token, uint256 tokenAmount, uint256 musdAmount);
    /// @notice A deposit exceeded the credit buffer; the tokens are held and the credit waits for the operator.
    event DepositQueued(
        uint256 indexed queueId, address indexed user, address indexed token, uint256 tokenAmount, uint256 musdAmount
    );
    /// @notice The operator credited a queued deposit.
    event DepositSettled(
        uint256 indexed queueId, address indexed user, address indexed token, uint256 tokenAmount, uint256 musdAmount
    );
    /// @notice A withdrawal was paid instantly.
    event Withdrawn(address indexed user, address indexed token, uint256 tokenAmount, uint256 musdAmount);
    /// @notice A withdrawal exceeded the withdrawal buffer; the mUSD is debited, the tokens wait for the operator.
    event WithdrawalQueued(
        uint256 indexed queueId, address indexed user, address indexed token, uint256 tokenAmount, uint256 musdAmount
    );
    /// @notice The operator paid a queued withdrawal.
    event WithdrawalSettled(
        uint256 indexed queueId, address indexed user, address indexed token, uint256 tokenAmount, uint256 musdAmount
    );
    event CreditBufferSet(uint256 amount);
    event WithdrawBufferSet(address indexed token, uint256 amount);
    event TokenConfigured(address indexed token, bool enabled, uint8 decimals, uint256 minAmount, uint256 withdrawBuffer);
    event TreasuryFunded(address indexed from, address indexed token, uint256 tokenAmount, uint256 musdAmount);
    event TreasurySet(address indexed treasury);
    event RouterSet(address indexed router);
    event OperatorSet(address indexed operator, bool enabled);
    /// @notice `musdAmount` of trading fees moved from the fee balance to `treasury`'s free balance.
    event FeesSwept(address indexed treasury, uint256 musdAmount);

    // ---------------------------------------------------------------- Router

    /// @notice Records a deposit whose tokens the router moves into the Cashier in the same
    /// transaction. Instant while the credit buffer covers the mUSD amount (the buffer shrinks),
    /// queued otherwise. Router only.
    /// @return instant true when credited now; false when queued
    /// @return queueId the queued deposit's id (0 when instant)
    function creditDeposit(address user, address token, uint256 tokenAmount)
        external
        returns (bool instant, uint256 queueId);

    /// @notice Debits the mUSD of a withdrawal at once; pays the tokens now while the token's
    /// withdrawal buffer covers them (the buffer shrinks), queues the payment otherwise. Router only.
    function debitWithdrawal(address user, address token, uint256 tokenAmount)
        external
        returns (bool instant, uint256 queueId);

    /// @notice Moves `musdAmount` of `user`'s free balance to locked. Router only.
    function lock(address user, uint256 musdAmount) external;

    /// @notice Moves `musdAmount` of `user`'s locked balance back to free. Router only.
    function unlock(address user, uint256 musdAmount) external;

    /// @notice Buy settlement: `cost + fee` leave `user`'s locked balance, `cost` goes to the
    /// treasury, `fee` to the fee balance. Router only.
    function settleBuy(address user, uint256 cost, uint256 fee) external;

    /// @notice Sell settlement: the treasury pays `proceeds`, `user` receives `proceeds - fee`,
    /// `fee` goes to the fee balance. Router only.
    function settleSell(address user, uint256 proceeds, uint256 fee) external;

    /// @notice The escape hatch (router only, which checks it is open): credits `user`'s own queued
    /// deposit as `settleDeposit` does.
    function settleDepositFor(address user, uint256 queueId) external;

    /// @notice The escape hatch (router only, which checks it is open): pays `user`'s own queued
    /// withdrawal as `settleWithdrawal` does.
    function settleWithdrawalFor(address user, uint256 queueId) external;

    // -------------------------------------------------------------- Operator

    /// @notice Credits a queued deposit.
    function settleDeposit(uint256 queueId) external;

    /// @notice Pays a queued withdrawal's tokens to its user.
    function settleWithdrawal(uint256 queueId) external;

    /// @notice Pulls `tokenAmount` from the caller (who approved the Cashier) and credits the
    /// treasury. Does not touch the credit buffer.
    function fundTreasury(address token, uint256 tokenAmount) external;

    // ----------------------------------------------------------------- Admin

    function setRouter(address router) external;
    function setOperator(address operator, bool enabled) external;
    function configureToken(address token, bool enabled, uint8 decimals, uint128 minAmount, uint128 withdrawBuffer)
        external;
    function setCreditBuffer(uint256 amount) external;
    function setWithdrawBuffer(address token, uint128 amount) external;
    function setTreasury(address treasury) external;
    /// @notice Moves `musdAmount` of the trading fees collected (`feeBalance`) to the treasury's
    /// free mUSD balance, from where the treasury account withdraws or trades it like any balance.
    /// No token moves, so the invariant holds as it was. Owner only.
    function sweepFees(uint256 musdAmount) external;

    // ----------------------------------------------------------------- Views

    function router() external view returns (address);
    function treasury() external view returns (address);
    function isOperator(address account) external view returns (bool);
    /// @notice Free mUSD of `user`.
    function balanceOf(address user) external view returns (uint256);
    /// @notice mUSD of `user` locked by open buy orders.
    function lockedOf(address user) external view returns (uint256);
    function feeBalance() external view returns (uint256);
    function creditBuffer() external view returns (uint256);
    function totalQueuedDeposits() external view returns (uint256);
    function totalQueuedWithdrawals() external view returns (uint256);
    function tokenConfig(address token) external view returns (TokenConfig memory);
    /// @notice Every token ever configured (enabled or not), in configuration order.
    function supportedTokens() external view returns (address[] memory);
    function queuedDeposit(uint256 queueId) external view returns (QueuedOp memory);
    function queuedWithdrawal(uint256 queueId) external view returns (QueuedOp memory);
    /// @notice The id the next queued deposit will get (ids start at 1).
    function nextDepositQueueId() external view returns (uint256);
    /// @notice The id the next queued withdrawal will get (ids start at 1).
    function nextWithdrawalQueueId() external view returns (uint256);
    /// @notice `tokenAmount` of `token` in mUSD, rounded down.
    function toMusd(address token, uint256 tokenAmount) external view returns (uint256);

    // ---------------------------------------------------------- Migration
    // Only the upgrader, only while the migration window is open (IVenueUpgradeable.migrating):
    // the state of a deployment from before the proxies, imported once (docs/upgrades.md).

    /// @notice `user`'s free balance of the earlier deployment was credited.
    event BalanceMigrated(address indexed user, uint256 musdAmount);

    /// @notice A pending queued operation of the earlier deployment was carried over under its id.
    event QueuedOpMigrated(
        uint256 indexed queueId, bool deposit, address indexed user, address indexed token, uint256 tokenAmount, uint256 musdAmount
    );

    /// @notice Credits each user's free balance (mUSD), once per user (a repeated user is skipped, so
    /// a rerun after a crash credits nobody twice). Migration only.
    function migrateBalances(address[] calldata users, uint256[] calldata musdAmounts) external;

    /// @notice Adds the earlier deployment's collected fees, once. Migration only.
    function migrateFees(uint256 musdAmount) external;

    /// @notice Carries a pending queued deposit (`deposit`) or withdrawal over under its own id, so that
    /// records keyed by it stay right; later ids follow it; an id already taken is skipped. Migration only.
    function migrateQueuedOp(
        bool deposit,
        uint256 queueId,
        address user,
        address token,
        uint128 tokenAmount,
        uint128 musdAmount
    ) external;
}
