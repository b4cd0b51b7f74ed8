// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20Errors} from "@openzeppelin/contracts/interfaces/draft-IERC6093.sol";
import {ICommonErrors} from "./ICommonErrors.sol";
import {ICashierErrors} from "./ICashier.sol";
import {IStockErrors} from "./IStock.sol";

/// @title IStockRouterErrors
/// @notice Errors raised by the StockRouter itself.
interface IStockRouterErrors {
    error StockNotListed(address stock);
    error StockAlreadyListed(address stock);
    error ZeroQuantity();
    error ZeroPrice();
    error ZeroNotional();
    /// @notice Only DAY (0) is a valid time in force.
    error InvalidTimeInForce(uint8 timeInForce);
    /// @notice `block.timestamp` is past the order's deadline.
    error DeadlineExpired(uint32 deadline);
    error NotOrderOwner(uint256 orderId);
    error NotLimitOrder(uint256 orderId);
    /// @notice The order is not open (or, for a cancel, already canceling).
    error OrderNotOpen(uint256 orderId);
    /// @notice A close must end the order as Filled, Canceled, Expired or Rejected.
    error InvalidCloseStatus();
    /// @notice A limit buy filled above, or a limit sell below, its limit price.
    error PriceOutsideLimit(uint256 orderId);
    /// @notice The fill would exceed the order's quantity.
    error FillExceedsOrder(uint256 orderId);
    /// @notice The fill's cost plus fee exceeds what the buy order still has locked.
    error LockInsufficient(uint256 orderId);
    /// @notice A deposit-and-buy needs its deposit credited instantly (credit buffer too small).
    error DepositNotInstant();
    /// @notice Fee rates are capped at 1,000 bps (10%).
    error InvalidFeeBps(uint16 feeBps);
    /// @notice The fill's `price` (mUSD per 1e18 units) strays from the stock's oracle `answer`
    /// (in the feed's decimals) by more than the stock's tolerance.
    error OraclePriceDeviation(uint256 orderId, uint256 price, int256 answer);
    /// @notice The stock's oracle answer was written at `updatedAt`, more than `maxAge` seconds
    /// before the block.
    error OraclePriceStale(uint256 orderId, uint256 updatedAt, uint256 maxAge);
    /// @notice The stock's oracle answered zero, a negative value or one above 128 bits.
    error OracleAnswerInvalid(uint256 orderId, int256 answer);
    /// @notice An oracle tolerance must be 1 to 5,000 bps.
    error InvalidOracleTolerance(uint16 toleranceBps);
    /// @notice An oracle's maximum age must be at least one second.
    error InvalidOracleMaxAge(uint32 maxAge);
    /// @notice A feed with more than 18 decimals cannot be compared with 18-decimal prices.
    error InvalidFeedDecimals(uint8 decimals);
    /// @notice The router requires a live feed for every fill ({requireOracle}) and `stock` has none.
    error PriceFeedRequired(uint256 orderId, address stock);
    /// @notice The fill would take the treasury's net loss against the oracle in the current window
    /// past `limit` (mUSD) for `stock`, or for the whole venue when `stock` is the zero address.
    /// `netLoss` is what the window's net loss would have become.
    error TreasuryLossBudgetExceeded(uint256 orderId, address stock, int256 netLoss, uint256 limit);
    /// @notice A treasury loss window must be 1 hour to 30 days long.
    error InvalidLossPeriod(uint32 period);
    /// @notice `caller` is neither the guardian nor the owner.
    error NotGuardian(address caller);
    /// @notice The escape hatch is closed: the venue is not paused and the operator settled within
    /// the silence period, so the operator's own path serves (cancel requests, queued payments).
    error EscapeHatchClosed();
    /// @notice Queued cash (`emergencySettleWithdrawal`, `emergencySettleDeposit`) reaches the escape
    /// hatch only from `opensAt` (unix seconds): `operatorSilence()` after the operator's last
    /// settlement or, while paused, after the pause began. A pause does not open it at once; a
    /// settlement by the operator (only possible while not paused) moves `opensAt` later.
    error QueuedCashHatchClosed(uint256 opensAt);
    /// @notice The operator silence after which the escape hatch opens must be 1 to 30 days.
    error InvalidOperatorSilence(uint32 silence);
}

/// @title IStockRouter
/// @notice The only contract the API's calldata targets. Users call it directly, or through the
/// OneClickRouter (its ERC-2771 trusted forwarder) when they delegated. Buy orders lock mUSD in the
/// Cashier, sell orders lock exchange stock; the operator settles fills and closes in batches.
/// @dev Inherits every error interface whose errors can surface from a router call (Cashier, Stock,
/// ERC-20), so that the router ABI alone decodes any revert a user sees. `SafeERC20FailedOperation`
/// needs no declaration here: the compiler adds the errors of libraries the router uses to its ABI.
interface IStockRouter is
    IStockRouterErrors,
    ICashierErrors,
    IStockErrors,
    ICommonErrors,
    IERC20Errors
{
    // ----------------------------------------------------------------- Types

    enum Side {
        Buy,
        Sell
    }

    enum OrderType {
        Market,
        Limit
    }

    enum OrderStatus {
        None,
        Open,
        Canceling,
        Filled,
        Canceled,
        Expired,
        Rejected
    }

    /// @notice An order of record. Amounts: quantity in stock units (18 decimals), price in mUSD per
    /// 1e18 stock units, notional/fees/filledNotional in mUSD; `locked` is mUSD for a buy and the
    /// stock's base units for a sell (see {IStock}: base units never change with a split). A market
    /// buy records quantity 0, a market sell notional 0, market orders price 0.
    ///
    /// `quantity`, `price` and `filledQuantity` are in the shares of the stock's `multiplier` as of
    /// the order's last fill or placement; `getOrder` and every fill convert them to the stock's
    /// current multiplier first (quantities × new/old, a limit price × old/new rounded in the
    /// user's favour: down for a buy, up for a sell), so that callers only ever see current shares.
    struct Order {
        address user;
        address stock;
        Side side;
        OrderType orderType;
        OrderStatus status;
        uint8 timeInForce;
        uint32 deadline;
        uint64 createdAt;
        uint128 quantity;
        uint128 notional;
        uint128 price;
        uint128 filledQuantity;
        uint128 filledNotional;
        uint128 fees;
        uint128 locked;
        uint256 multiplier;
    }

    /// @notice One execution of `quantity` stock units at `price` (mUSD per 1e18 units).
    struct Fill {
        uint256 orderId;
        uint128 quantity;
        uint128 price;
    }

    /// @notice Ends an order with a final `status`, releasing what it still has locked.
    struct Close {
        uint256 orderId;
        OrderStatus status;
    }

    struct FeeConfig {
        uint16 marketFeeBps;
        uint16 limitFeeBps;
    }

    /// @notice The oracle a stock's fills are checked against (feed zero: none). A fill's price
    /// must be within `toleranceBps` of the feed's latest answer, and that answer at most `maxAge`
    /// seconds old. `decimals` is the feed's, read when it was set.
    struct PriceFeedConfig {
        address feed;
        uint8 decimals;
        uint16 toleranceBps;
        uint32 maxAge;
    }

    // ---------------------------------------------------------------- Events

    event OrderPlaced(
        uint256 indexed orderId,
        address indexed user,
        address indexed stock,
        Side side,
        OrderType orderType,
        uint256 quantity,
        uint256 notional,
        uint256 price,
        uint8 timeInForce,
        uint32 deadline,
        uint256 locked,
        uint256 multiplier
    );
    event OrderCancelRequested(uint256 indexed orderId, address indexed user);
    /// @notice `notional` is this fill's cost (buy) or proceeds (sell) in mUSD; `fee` is charged on top
    /// of a buy's cost and out of a sell's proceeds. `quantity` and `price` are in the shares of the
    /// stock's `multiplier` at the fill; `locked` is what the order still has locked afterwards.
    event OrderFilled(
        uint256 indexed orderId,
        address indexed user,
        uint256 quantity,
        uint256 price,
        uint256 notional,
        uint256 fee,
        uint256 locked,
        uint256 multiplier
    );
    event OrderClosed(uint256 indexed orderId, address indexed user, OrderStatus status, uint256 released);
    event StockListed(address indexed stock);
    event FeeConfigSet(uint16 marketFeeBps, uint16 limitFeeBps);
    event OperatorSet(address indexed operator, bool enabled);
    /// @notice The stock's oracle changed (feed zero: removed, fills unchecked).
    event PriceFeedSet(address indexed stock, address indexed feed, uint8 decimals, uint16 toleranceBps, uint32 maxAge);
    /// @notice Fills of a stock without a feed are refused (`required`) or allowed unchecked.
    event RequireOracleSet(bool required);
    /// @notice The treasury's net loss budget per window for `stock` (zero address: the whole venue), mUSD.
    event TreasuryLossBudgetSet(address indexed stock, uint256 limit);
    /// @notice The length of a treasury loss window, seconds (windows are `block.timestamp / period`).
    event TreasuryLossPeriodSet(uint32 period);
    /// @notice A fill took the treasury's net loss against the oracle in window `window` for `stock`
    /// (zero address: the whole venue) to at least 80% of its budget `limit`: operators alert on it.
    event TreasuryLossBudgetAlert(address indexed stock, uint256 indexed window, int256 netLoss, uint256 limit);
    /// @notice The owner named the guardian (zero: none), who can pause and unpause the venue.
    event GuardianSet(address indexed guardian);
    /// @notice `by` (the guardian or the owner) paused new orders, fills and operator actions.
    event VenuePausedBy(address indexed by);
    /// @notice `by` (the guardian or the owner) lifted the pause.
    event VenueUnpausedBy(address indexed by);
    /// @notice The owner set how long the operator may stay silent before the escape hatch opens.
    event OperatorSilenceSet(uint32 silence);
    /// @notice `user` cancelled their own open order through the escape hatch; its lock was released
    /// (the order is also closed with `OrderClosed`, status Canceled).
    event EmergencyCancel(uint256 indexed orderId, address indexed user);

    // ------------------------------------------------------------------ User

    /// @notice Deposits `amount` of cash `token` (the user approved this router on the token).
    /// @return instant true when credited now, false when queued in the Cashier
    /// @return queueId the Cashier's queued-deposit id (0 when instant)
    function deposit(address token, uint256 amount) external returns (bool instant, uint256 queueId);

    /// @notice Withdraws `amount` of cash `token` (token units) from the user's free mUSD.
    function withdraw(address token, uint256 amount) external returns (bool instant, uint256 queueId);

    /// @notice Moves `amount` of wallet stock into the exchange balance (the user approved this router on the stock).
    function depositStock(address stock, uint256 amount) external;

    /// @notice Moves `amount` of free exchange stock back to the user's wallet.
    function withdrawStock(address stock, uint256 amount) external;

    /// @notice Market order. Buy: `notional` (mUSD, fees included) is required and locked, `quantity`
    /// is ignored. Sell: `quantity` is required and locked from the exchange balance, `notional` is ignored.
    /// `worstPrice` (mUSD per share, 18 decimals, required): no fill of the order is above it (a buy)
    /// or below it (a sell), as a limit; it is recorded as the order's `price`.
    function placeMarketOrder(
        address stock,
        Side side,
        uint256 quantity,
        uint256 notional,
        uint256 worstPrice,
        uint32 deadline
    ) external returns (uint256 orderId);

    /// @notice Limit order, DAY only. A buy locks ceil(quantity * price / 1e18) plus the limit fee on it.
    function placeLimitOrder(
        address stock,
        Side side,
        uint256 quantity,
        uint256 price,
        uint8 timeInForce,
        uint32 deadline
    ) external returns (uint256 orderId);

    /// @notice Requests the cancel of an open limit order (status becomes Canceling); the operator closes it.
    function cancelLimitOrder(uint256 orderId) external;

    /// @notice Deposit (must be credited instantly) then market buy for `notional`, no fill above `worstPrice`.
    function depositAndMarketBuy(
        address token,
        uint256 tokenAmount,
        address stock,
        uint256 notional,
        uint256 worstPrice,
        uint32 deadline
    ) external returns (uint256 orderId);

    /// @notice Deposit (must be credited instantly) then limit buy.
    function depositAndLimitBuy(
        address token,
        uint256 tokenAmount,
        address stock,
        uint256 quantity,
        uint256 price,
        uint8 timeInForce,
        uint32 deadline
    ) external returns (uint256 orderId);

    /// @notice Stock deposit of `quantity` then market sell of it, no fill below `worstPrice`.
    function depositStockAndMarketSell(address stock, uint256 quantity, uint256 worstPrice, uint32 deadline)
        external
        returns (uint256 orderId);

    /// @notice Stock deposit of `quantity` then limit sell of it.
    function depositStockAndLimitSell(
        address stock,
        uint256 quantity,
        uint256 price,
        uint8 timeInForce,
        uint32 deadline
    ) external returns (uint256 orderId);

    // ------------------------------------------------------------ Escape hatch

    /// @notice While the escape hatch is open ({escapeHatchOpen}: paused, from the pause's first
    /// block, or the operator silent), the order's owner closes it as Canceled at once and gets its
    /// whole lock back, without the operator.
    function emergencyCancel(uint256 orderId) external;

    /// @notice From {queuedCashHatchOpensAt} on (else `QueuedCashHatchClosed(opensAt)`), the user
    /// credits their own queued deposit (its tokens are in the Cashier already) as the operator
    /// would (`DepositSettled`).
    function emergencySettleDeposit(uint256 queueId) external;

    /// @notice From {queuedCashHatchOpensAt} on (else `QueuedCashHatchClosed(opensAt)`), the user is
    /// paid their own queued withdrawal from the Cashier's tokens as the operator would
    /// (`WithdrawalSettled`). A pause alone does not open it: it opens `operatorSilence()` after the
    /// pause began (or after the operator's last settlement, paused or not).
    function emergencySettleWithdrawal(uint256 queueId) external;

    // -------------------------------------------------------------- Operator

    /// @notice Applies `fills` in order, then `closes`. Reverts as a whole if any item is invalid,
    /// including a fill of a stock with an oracle whose price strays from the oracle's answer by
    /// more than the tolerance (`OraclePriceDeviation`) or whose answer is too old
    /// (`OraclePriceStale`) or not positive (`OracleAnswerInvalid`), a fill of a stock without a
    /// feed while one is required (`PriceFeedRequired`), and a fill that would take the treasury's
    /// net loss against the oracle past its budget (`TreasuryLossBudgetExceeded`). Each fill is
    /// charged the fee rate its order was placed with.
    function settleOrders(Fill[] calldata fills, Close[] calldata closes) external;

    // ----------------------------------------------------------------- Admin

    /// @notice Names the guardian (zero: none). Owner only.
    function setGuardian(address guardian_) external;

    /// @notice Pauses new orders, fills and the Cashier's operator actions; deposits, withdrawals,
    /// cancel requests and the escape hatch for one's own orders stay open. The guardian or the
    /// owner. Records the pause's start ({pausedSince}): a new start only when the operator settled
    /// since the previous pause began (or there was none), so pausing again, or unpausing and pausing
    /// again with no settlement in between, never restarts the hold on queued cash.
    function pause() external;

    /// @notice Lifts the pause. The guardian or the owner.
    function unpause() external;

    /// @notice How long (1 to 30 days) the operator may go without settling before the escape hatch
    /// opens. Owner only. Default 3 days.
    function setOperatorSilence(uint32 silence) external;

    function listStock(address stock) external;
    /// @notice Fee rates of orders placed from now on; an open order keeps the rate it was placed with.
    function setFeeConfig(FeeConfig calldata config) external;
    function setOperator(address operator, bool enabled) external;
    /// @notice Checks the fills of listed `stock` against `feed` (any AggregatorV3Interface with at
    /// most 18 decimals) with `toleranceBps` (1 to 5,000) and `maxAge` (seconds, at least 1); feed
    /// zero removes the check (tolerance and age ignored).
    function setPriceFeed(address stock, address feed, uint16 toleranceBps, uint32 maxAge) external;
    /// @notice true (the default, also of a router upgraded from one without the flag): a fill of a
    /// stock without a feed reverts with `PriceFeedRequired`. false: such fills go unchecked and
    /// outside the treasury loss budget (the embedded demo's `ORACLE_TOLERANCE_BPS=0` only).
    function setRequireOracle(bool required) external;
    /// @notice The treasury's net loss budget per window for listed `stock`, mUSD (18 decimals).
    /// Until set, a stock's budget is 25,000 mUSD (docs/security.md).
    function setTreasuryLossBudget(address stock, uint96 limit) external;
    /// @notice The treasury's net loss budget per window over every stock, mUSD. Until set, 100,000 mUSD.
    function setOverallTreasuryLossBudget(uint96 limit) external;
    /// @notice The window length, seconds (1 hour to 30 days; until set, 1 day). Windows are
    /// `block.timestamp / period`, so a change starts a new window at once.
    function setTreasuryLossPeriod(uint32 period) external;

    // ----------------------------------------------------------------- Views

    /// @notice The guardian (zero: none).
    function guardian() external view returns (address);

    /// @notice Whether the guardian (or the owner) has paused the venue.
    function paused() external view returns (bool);

    /// @notice Whether users may cancel their own open orders without the operator
    /// (`emergencyCancel`): the venue is paused, or the operator has not settled for longer than
    /// `operatorSilence()` (since `lastOperatorActivity()`). Queued cash follows
    /// {queuedCashHatchOpensAt}.
    function escapeHatchOpen() external view returns (bool);

    /// @notice The first second (unix) from which users may settle their own queued withdrawals and
    /// deposits without the operator (open when it is at or before the latest block's time). Not
    /// paused: `lastOperatorActivity() + operatorSilence() + 1`. Paused: `pausedSince() +
    /// operatorSilence() + 1`, unless the operator's silence had opened it before the pause began (a
    /// pause never closes it again), or the pause's start is unknown (a router paused since before
    /// its upgrade to 0.3.0: the operator's silence alone, counted from its last settlement, which
    /// came before that pause).
    function queuedCashHatchOpensAt() external view returns (uint256);

    /// @notice When the current pause began (unix seconds); 0 when not paused, or when paused since
    /// before the upgrade to 0.3.0 (unknown until the next `pause()` records it).
    function pausedSince() external view returns (uint64);

    /// @notice When the operator last settled (unix seconds; the deployment before any settlement).
    function lastOperatorActivity() external view returns (uint64);

    /// @notice The operator silence that opens the escape hatch, in seconds.
    function operatorSilence() external view returns (uint32);

    function getOrder(uint256 orderId) external view returns (Order memory);
    /// @notice The id the next order will get (ids start at 1).
    function nextOrderId() external view returns (uint256);
    function feeConfig() external view returns (FeeConfig memory);
    function isListed(address stock) external view returns (bool);
    function listedStocks() external view returns (address[] memory);
    function isOperator(address account) external view returns (bool);
    function cashier() external view returns (address);
    function priceFeedOf(address stock) external view returns (PriceFeedConfig memory);
    /// @notice Whether fills of a stock without a feed are refused (see {setRequireOracle}).
    function requireOracle() external view returns (bool);
    /// @notice The fee rate (bps) each order pays, fixed when it was placed; for an id never placed,
    /// what an order placed now would pay as a limit order (`limitFeeBps`).
    function orderFeeBps(uint256[] calldata orderIds) external view returns (uint16[] memory feeBps);
    /// @notice The treasury loss budget of `stock` (zero address: the whole venue) in the current
    /// window: its `limit`, the window's net loss so far (negative: a net gain) and the window's bounds.
    function treasuryLoss(address stock)
        external
        view
        returns (uint256 limit, int256 netLoss, uint256 windowStart, uint256 windowEnd);
    /// @notice The window length of the treasury loss budget, seconds.
    function treasuryLossPeriod() external view returns (uint32);
    /// @notice The stock's oracle configuration, its feed's latest round as a fill would read it
    /// now (zeros without a feed) and the block's timestamp, in one call for the executor.
    function oracleReading(address stock)
        external
        view
        returns (PriceFeedConfig memory config, uint80 roundId, int256 answer, uint256 updatedAt, uint256 blockTimestamp);
}
