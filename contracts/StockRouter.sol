// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {OwnableUpgradeable} from "@openzeppelin/contracts-upgradeable/access/OwnableUpgradeable.sol";
import {Ownable2StepUpgradeable} from "@openzeppelin/contracts-upgradeable/access/Ownable2StepUpgradeable.sol";
import {ContextUpgradeable} from "@openzeppelin/contracts-upgradeable/utils/ContextUpgradeable.sol";
import {ERC2771ContextUpgradeable} from "@openzeppelin/contracts-upgradeable/metatx/ERC2771ContextUpgradeable.sol";
import {VenueUpgradeable} from "./VenueUpgradeable.sol";
import {Math} from "@openzeppelin/contracts/utils/math/Math.sol";
import {IStockRouter} from "./interfaces/IStockRouter.sol";
import {ICashier} from "./interfaces/ICashier.sol";
import {IStock} from "./interfaces/IStock.sol";
import {AggregatorV3Interface} from "./interfaces/IPriceFeed.sol";

/// @title StockRouter
/// @notice Entry point for every user action and the order book of record; see {IStockRouter}.
/// @dev User functions take the sender from `_msgSender()` so that they work both directly and
/// through the OneClickRouter (the immutable ERC-2771 trusted forwarder). Admin and operator
/// functions check `msg.sender` instead: a One Click delegation never grants them.
contract StockRouter is IStockRouter, VenueUpgradeable, ERC2771ContextUpgradeable, Ownable2StepUpgradeable {
    using SafeERC20 for IERC20;

    // ----------------------------------------------------------------- Types

    uint256 private constant PRICE_SCALE = 1e18;
    uint256 private constant BPS = 10_000;
    uint16 private constant MAX_FEE_BPS = 1_000;
    uint8 private constant TIME_IN_FORCE_DAY = 0;
    uint16 private constant MAX_ORACLE_TOLERANCE_BPS = 5_000;
    uint8 private constant PRICE_DECIMALS = 18;
    /// @dev Marks an order's fee rate as recorded at placement (a rate of 0 is a rate too).
    uint24 private constant FEE_RECORDED = 1 << 16;
    /// @dev The treasury loss budgets until the owner sets them (docs/security.md, "Executor key"):
    /// sized so that the embedded demo's trading never nears them while a leaked executor key takes
    /// at most this much a day.
    uint96 private constant DEFAULT_STOCK_LOSS_BUDGET = 25_000e18;
    uint96 private constant DEFAULT_OVERALL_LOSS_BUDGET = 100_000e18;
    uint32 private constant DEFAULT_LOSS_PERIOD = 1 days;
    uint32 private constant MIN_LOSS_PERIOD = 1 hours;
    uint32 private constant MAX_LOSS_PERIOD = 30 days;
    /// @dev A budget alert fires when a fill takes the window's net loss to this share of the budget.
    uint256 private constant ALERT_BPS = 8_000;
    /// @dev The escape hatch opens after this long without a settlement unless the owner says otherwise.
    uint32 private constant DEFAULT_OPERATOR_SILENCE = 3 days;
    uint32 private constant MIN_OPERATOR_SILENCE = 1 days;
    uint32 private constant MAX_OPERATOR_SILENCE = 30 days;
    /// @dev The last settlement is noted at most this often: the hatch counts in days, and the slot
    /// write would otherwise cost every batch.
    uint64 private constant ACTIVITY_GRANULARITY = 1 hours;

    // ----------------------------------------------------------------- State

    /// @dev Fixed per venue: an immutable of the implementation rather than a storage read on every
    /// call; an upgrade constructs the new implementation with the proxy's `cashier()` and
    /// `trustedForwarder()` (docs/upgrades.md).
    /// @custom:oz-upgrades-unsafe-allow state-variable-immutable
    ICashier private immutable _cashier;

    uint256 private _nextOrderId;
    FeeConfig private _feeConfig;
    mapping(uint256 orderId => Order) private _orders;
    /// @dev Exact sum of quantity * price over an order's fills (scale 1e36). Cost and fee are
    /// rounded once on the running total, so splitting a fill never changes what the user pays or
    /// gets and a limit buy's fills never outgrow its lock.
    mapping(uint256 orderId => uint256) private _filledValue;
    mapping(address stock => bool) private _listed;
    address[] private _listedStocks;
    mapping(address account => bool) private _operators;
    /// @dev Unset (feed zero) for a stock whose fills are not checked against an oracle.
    mapping(address stock => PriceFeedConfig) private _priceFeeds;
    // Appended in 0.2.0 (issue 43); every zero value below is the safe default, so a router upgraded
    // from an implementation without them starts bounded.
    /// @dev `FEE_RECORDED | bps`: the fee rate of the order, fixed at placement.
    mapping(uint256 orderId => uint24) private _orderFeeBps;
    /// @dev The treasury's net loss against the oracle mid per stock in the current window.
    mapping(address stock => LossWindow) private _stockLoss;
    /// @dev The same over every stock.
    LossWindow private _overallLoss;
    /// @dev The window length in seconds; 0: DEFAULT_LOSS_PERIOD.
    uint32 private _lossPeriod;
    /// @dev Inverted so that the zero value is the safe one: false requires a feed for every fill.
    bool private _oracleOptional;
    /// @dev The guardian's pause. In the slot of the loss period and the oracle flag, which every
    /// fill reads already, so the check costs a settlement nothing.
    bool private _paused;
    /// @dev When the operator last settled (unix seconds, to ACTIVITY_GRANULARITY); the escape hatch
    /// opens after `_operatorSilence` without one.
    uint64 private _lastOperatorActivity;
    /// @dev Pauses and unpauses; named by the owner.
    address private _guardian;
    /// @dev 0: DEFAULT_OPERATOR_SILENCE.
    uint32 private _operatorSilence;
    // Appended in 0.3.0 (issue 60); packs into the guardian's slot. Zero (a router upgraded in place
    // from 0.2.0) reads as "no pause start known": queued cash then follows the operator's silence,
    // counted from its last settlement, which a paused router cannot move.
    /// @dev When the latest pause began (unix seconds). Kept after `unpause` so that pausing again
    /// with no settlement in between continues the same hold instead of starting a new one.
    uint64 private _pausedAt;

    /// @dev One slot: the budget (`limitSet` false: the default), the window it last counted and the
    /// window's net loss in mUSD (negative: a net gain, which later losses of the window use up).
    struct LossWindow {
        uint96 limit;
        bool limitSet;
        uint32 window;
        int120 net;
    }

    modifier onlyOperator() {
        if (!_operators[msg.sender]) revert NotOperator(msg.sender);
        _;
    }

    /// @custom:oz-upgrades-unsafe-allow constructor
    constructor(address cashier_, address oneClickRouter) ERC2771ContextUpgradeable(oneClickRouter) {
        if (cashier_ == address(0) || oneClickRouter == address(0)) revert ZeroAddress();
        _cashier = ICashier(cashier_);
    }

    /// @notice Sets up the proxy: the owner of the configuration and the upgrade authority
    /// (docs/upgrades.md). Order ids start at `firstOrderId` (1 for a new venue; a venue migrated
    /// from an earlier deployment continues its numbering).
    function initialize(address initialOwner, address upgrader_, uint256 firstOrderId) external initializer {
        __VenueUpgradeable_init(upgrader_, false);
        if (firstOrderId == 0) revert ZeroAmount();
        __Ownable_init(initialOwner);
        _nextOrderId = firstOrderId;
        _lastOperatorActivity = uint64(block.timestamp);
    }

    modifier whenNotPaused() {
        if (_paused) revert VenuePaused();
        _;
    }

    modifier onlyGuardianOrOwner() {
        if (msg.sender != _guardian && msg.sender != owner()) revert NotGuardian(msg.sender);
        _;
    }

    // ----------------------------------------------------------------- Admin

    /// @inheritdoc IStockRouter
    function listStock(address stock) external onlyOwner {
        if (stock == address(0)) revert ZeroAddress();
        if (_listed[stock]) revert StockAlreadyListed(stock);
        _listed[stock] = true;
        _listedStocks.push(stock);
        emit StockListed(stock);
    }

    /// @inheritdoc IStockRouter
    function setFeeConfig(FeeConfig calldata config) external onlyOwner {
        if (config.marketFeeBps > MAX_FEE_BPS) revert InvalidFeeBps(config.marketFeeBps);
        if (config.limitFeeBps > MAX_FEE_BPS) revert InvalidFeeBps(config.limitFeeBps);
        _feeConfig = config;
        emit FeeConfigSet(config.marketFeeBps, config.limitFeeBps);
    }

    /// @inheritdoc IStockRouter
    function setOperator(address operator, bool enabled) external onlyOwner {
        if (operator == address(0)) revert ZeroAddress();
        _operators[operator] = enabled;
        emit OperatorSet(operator, enabled);
    }

    /// @inheritdoc IStockRouter
    function setPriceFeed(address stock, address feed, uint16 toleranceBps, uint32 maxAge) external onlyOwner {
        _requireListed(stock);
        if (feed == address(0)) {
            delete _priceFeeds[stock];
            emit PriceFeedSet(stock, address(0), 0, 0, 0);
            return;
        }
        if (toleranceBps == 0 || toleranceBps > MAX_ORACLE_TOLERANCE_BPS) revert InvalidOracleTolerance(toleranceBps);
        if (maxAge == 0) revert InvalidOracleMaxAge(maxAge);
        // Read once here rather than on every fill; a feed whose decimals change is set again.
        uint8 feedDecimals = AggregatorV3Interface(feed).decimals();
        if (feedDecimals > PRICE_DECIMALS) revert InvalidFeedDecimals(feedDecimals);
        _priceFeeds[stock] =
            PriceFeedConfig({feed: feed, decimals: feedDecimals, toleranceBps: toleranceBps, maxAge: maxAge});
        emit PriceFeedSet(stock, feed, feedDecimals, toleranceBps, maxAge);
    }

    /// @inheritdoc IStockRouter
    function setRequireOracle(bool required) external onlyOwner {
        _oracleOptional = !required;
        emit RequireOracleSet(required);
    }

    /// @inheritdoc IStockRouter
    function setTreasuryLossBudget(address stock, uint96 limit) external onlyOwner {
        _requireListed(stock);
        LossWindow storage w = _stockLoss[stock];
        w.limit = limit;
        w.limitSet = true;
        emit TreasuryLossBudgetSet(stock, limit);
    }

    /// @inheritdoc IStockRouter
    function setOverallTreasuryLossBudget(uint96 limit) external onlyOwner {
        _overallLoss.limit = limit;
        _overallLoss.limitSet = true;
        emit TreasuryLossBudgetSet(address(0), limit);
    }

    /// @inheritdoc IStockRouter
    function setTreasuryLossPeriod(uint32 period) external onlyOwner {
        if (period < MIN_LOSS_PERIOD || period > MAX_LOSS_PERIOD) revert InvalidLossPeriod(period);
        _lossPeriod = period;
        emit TreasuryLossPeriodSet(period);
    }

    /// @inheritdoc IStockRouter
    function setGuardian(address guardian_) external onlyOwner {
        _guardian = guardian_;
        emit GuardianSet(guardian_);
    }

    /// @inheritdoc IStockRouter
    function pause() external onlyGuardianOrOwner {
        // A new start, so a new hold on queued cash, only when the operator settled since the previous
        // pause began: unpausing and pausing again cannot keep queued cash from the hatch for good.
        // Zero while paused: paused since before the upgrade that records it; this call is the first
        // to see it.
        uint64 previous = _pausedAt;
        if (previous == 0 || (!_paused && _lastOperatorActivity > previous)) _pausedAt = uint64(block.timestamp);
        _paused = true;
        emit VenuePausedBy(msg.sender);
    }

    /// @inheritdoc IStockRouter
    function unpause() external onlyGuardianOrOwner {
        _paused = false;
        emit VenueUnpausedBy(msg.sender);
    }

    /// @inheritdoc IStockRouter
    function setOperatorSilence(uint32 silence) external onlyOwner {
        if (silence < MIN_OPERATOR_SILENCE || silence > MAX_OPERATOR_SILENCE) revert InvalidOperatorSilence(silence);
        _operatorSilence = silence;
        emit OperatorSilenceSet(silence);
    }

    // ------------------------------------------------------------------ User

    /// @inheritdoc IStockRouter
    function deposit(address token, uint256 amount) external onlyViaProxy returns (bool instant, uint256 queueId) {
        return _deposit(_msgSender(), token, amount);
    }

    /// @inheritdoc IStockRouter
    function withdraw(address token, uint256 amount) external returns (bool instant, uint256 queueId) {
        return _cashier.debitWithdrawal(_msgSender(), token, amount);
    }

    /// @inheritdoc IStockRouter
    function depositStock(address stock, uint256 amount) external onlyViaProxy {
        _requireListed(stock);
        IStock(stock).depositToExchange(_msgSender(), amount);
    }

    /// @inheritdoc IStockRouter
    function withdrawStock(address stock, uint256 amount) external {
        _requireListed(stock);
        IStock(stock).withdrawFromExchange(_msgSender(), amount);
    }

    /// @inheritdoc IStockRouter
    function placeMarketOrder(
        address stock,
        Side side,
        uint256 quantity,
        uint256 notional,
        uint256 worstPrice,
        uint32 deadline
    ) external returns (uint256 orderId) {
        _checkMarket(stock, side, quantity, notional, worstPrice, deadline);
        return _placeMarket(_msgSender(), stock, side, quantity, notional, worstPrice, deadline);
    }

    /// @inheritdoc IStockRouter
    function placeLimitOrder(
        address stock,
        Side side,
        uint256 quantity,
        uint256 price,
        uint8 timeInForce,
        uint32 deadline
    ) external returns (uint256 orderId) {
        _checkLimit(stock, quantity, price, timeInForce, deadline);
        return _placeLimit(_msgSender(), stock, side, quantity, price, deadline);
    }

    /// @inheritdoc IStockRouter
    function cancelLimitOrder(uint256 orderId) external {
        Order storage order = _orders[orderId];
        OrderStatus status = order.status;
        if (status == OrderStatus.None) revert OrderNotOpen(orderId);
        address sender = _msgSender();
        if (order.user != sender) revert NotOrderOwner(orderId);
        if (order.orderType != OrderType.Limit) revert NotLimitOrder(orderId);
        if (status != OrderStatus.Open) revert OrderNotOpen(orderId);
        order.status = OrderStatus.Canceling;
        emit OrderCancelRequested(orderId, sender);
    }

    /// @inheritdoc IStockRouter
    function depositAndMarketBuy(
        address token,
        uint256 tokenAmount,
        address stock,
        uint256 notional,
        uint256 worstPrice,
        uint32 deadline
    ) external onlyViaProxy returns (uint256 orderId) {
        _checkMarket(stock, Side.Buy, 0, notional, worstPrice, deadline);
        address user = _msgSender();
        _depositInstant(user, token, tokenAmount);
        return _placeMarket(user, stock, Side.Buy, 0, notional, worstPrice, deadline);
    }

    /// @inheritdoc IStockRouter
    function depositAndLimitBuy(
        address token,
        uint256 tokenAmount,
        address stock,
        uint256 quantity,
        uint256 price,
        uint8 timeInForce,
        uint32 deadline
    ) external onlyViaProxy returns (uint256 orderId) {
        _checkLimit(stock, quantity, price, timeInForce, deadline);
        address user = _msgSender();
        _depositInstant(user, token, tokenAmount);
        return _placeLimit(user, stock, Side.Buy, quantity, price, deadline);
    }

    /// @inheritdoc IStockRouter
    function depositStockAndMarketSell(address stock, uint256 quantity, uint256 worstPrice, uint32 deadline)
        external
        onlyViaProxy
        returns (uint256 orderId)
    {
        _checkMarket(stock, Side.Sell, quantity, 0, worstPrice, deadline);
        address user = _msgSender();
        IStock(stock).depositToExchange(user, quantity);
        return _placeMarket(user, stock, Side.Sell, quantity, 0, worstPrice, deadline);
    }

    /// @inheritdoc IStockRouter
    function depositStockAndLimitSell(
        address stock,
        uint256 quantity,
        uint256 price,
        uint8 timeInForce,
        uint32 deadline
    ) external onlyViaProxy returns (uint256 orderId) {
        _checkLimit(stock, quantity, price, timeInForce, deadline);
        address user = _msgSender();
        IStock(stock).depositToExchange(user, quantity);
        return _placeLimit(user, stock, Side.Sell, quantity, price, deadline);
    }

    // ------------------------------------------------------------ Escape hatch

    /// @inheritdoc IStockRouter
    function emergencyCancel(uint256 orderId) external {
        _requireEscapeHatch();
        Order storage order = _orders[orderId];
        if (order.status == OrderStatus.None) revert OrderNotOpen(orderId);
        address user = _msgSender();
        if (order.user != user) revert NotOrderOwner(orderId);
        _closeOrder(orderId, OrderStatus.Canceled);
        emit EmergencyCancel(orderId, user);
    }

    /// @inheritdoc IStockRouter
    function emergencySettleDeposit(uint256 queueId) external {
        _requireQueuedCashHatch();
        _cashier.settleDepositFor(_msgSender(), queueId);
    }

    /// @inheritdoc IStockRouter
    function emergencySettleWithdrawal(uint256 queueId) external {
        _requireQueuedCashHatch();
        _cashier.settleWithdrawalFor(_msgSender(), queueId);
    }

    // -------------------------------------------------------------- Operator

    /// @inheritdoc IStockRouter
    function settleOrders(Fill[] calldata fills, Close[] calldata closes) external onlyOperator whenNotPaused {
        uint64 last = _lastOperatorActivity;
        if (block.timestamp >= last + ACTIVITY_GRANULARITY) _lastOperatorActivity = uint64(block.timestamp);
        FeeConfig memory fees = _feeConfig;
        for (uint256 i; i < fills.length; ++i) {
            _fill(fills[i], fees);
        }
        for (uint256 i; i < closes.length; ++i) {
            _close(closes[i]);
        }
    }

    // ----------------------------------------------------------------- Views

    /// @inheritdoc IStockRouter
    function guardian() external view returns (address) {
        return _guardian;
    }

    /// @inheritdoc IStockRouter
    function paused() external view returns (bool) {
        return _paused;
    }

    /// @inheritdoc IStockRouter
    function escapeHatchOpen() public view returns (bool) {
        return _paused || block.timestamp > uint256(_lastOperatorActivity) + _silence();
    }

    /// @inheritdoc IStockRouter
    function queuedCashHatchOpensAt() public view returns (uint256) {
        uint256 silence = _silence();
        uint256 from = _lastOperatorActivity;
        // Paused: counted from the pause's start instead, unless that is unknown (paused since before
        // the upgrade) or the silence had opened the hatch before the pause began. A known start is
        // never before the last settlement: `pause` records one only at or after it, and a paused
        // router settles nothing.
        if (_paused) {
            uint256 start = _pausedAt;
            if (start != 0 && from + silence >= start) from = start;
        }
        return from + silence + 1;
    }

    /// @inheritdoc IStockRouter
    function pausedSince() external view returns (uint64) {
        return _paused ? _pausedAt : 0;
    }

    /// @inheritdoc IStockRouter
    function lastOperatorActivity() external view returns (uint64) {
        return _lastOperatorActivity;
    }

    /// @inheritdoc IStockRouter
    function operatorSilence() external view returns (uint32) {
        return uint32(_silence());
    }

    /// @inheritdoc IStockRouter
    function getOrder(uint256 orderId) external view returns (Order memory order) {
        order = _orders[orderId];
        if (order.status == OrderStatus.None) return order;
        uint256 current = IStock(order.stock).multiplier();
        if (order.multiplier != current) {
            (order.quantity, order.filledQuantity, order.price) = _rescaled(order, current);
            order.multiplier = current;
        }
    }

    /// @inheritdoc IStockRouter
    function nextOrderId() external view returns (uint256) {
        return _nextOrderId;
    }

    /// @inheritdoc IStockRouter
    function feeConfig() external view returns (FeeConfig memory) {
        return _feeConfig;
    }

    /// @inheritdoc IStockRouter
    function isListed(address stock) external view returns (bool) {
        return _listed[stock];
    }

    /// @inheritdoc IStockRouter
    function listedStocks() external view returns (address[] memory) {
        return _listedStocks;
    }

    /// @inheritdoc IStockRouter
    function isOperator(address account) external view returns (bool) {
        return _operators[account];
    }

    /// @inheritdoc IStockRouter
    function cashier() external view returns (address) {
        return address(_cashier);
    }

    /// @inheritdoc IStockRouter
    function priceFeedOf(address stock) external view returns (PriceFeedConfig memory) {
        return _priceFeeds[stock];
    }

    /// @inheritdoc IStockRouter
    function requireOracle() external view returns (bool) {
        return !_oracleOptional;
    }

    /// @inheritdoc IStockRouter
    function orderFeeBps(uint256[] calldata orderIds) external view returns (uint16[] memory feeBps) {
        FeeConfig memory fees = _feeConfig;
        feeBps = new uint16[](orderIds.length);
        for (uint256 i; i < orderIds.length; ++i) {
            uint256 id = orderIds[i];
            Order storage order = _orders[id];
            feeBps[i] = order.status == OrderStatus.None
                ? fees.limitFeeBps
                : uint16(_feeBpsOf(id, order.orderType, fees));
        }
    }

    /// @inheritdoc IStockRouter
    function treasuryLoss(address stock)
        external
        view
        returns (uint256 limit, int256 netLoss, uint256 windowStart, uint256 windowEnd)
    {
        LossWindow memory w = stock == address(0) ? _overallLoss : _stockLoss[stock];
        uint256 period = _period();
        uint256 window = block.timestamp / period;
        limit = _limitOf(w, stock == address(0));
        netLoss = w.window == window ? int256(w.net) : int256(0);
        windowStart = window * period;
        windowEnd = windowStart + period;
    }

    /// @inheritdoc IStockRouter
    function treasuryLossPeriod() external view returns (uint32) {
        return uint32(_period());
    }

    /// @inheritdoc IStockRouter
    function oracleReading(address stock)
        external
        view
        returns (PriceFeedConfig memory config, uint80 roundId, int256 answer, uint256 updatedAt, uint256 blockTimestamp)
    {
        config = _priceFeeds[stock];
        blockTimestamp = block.timestamp;
        if (config.feed != address(0)) {
            (roundId, answer,, updatedAt,) = AggregatorV3Interface(config.feed).latestRoundData();
        }
    }

    // ------------------------------------------------------ Internal: orders

    /// @dev Validation runs before any deposit so that a combined call reports the order's problem
    /// rather than a token error.
    function _checkMarket(
        address stock,
        Side side,
        uint256 quantity,
        uint256 notional,
        uint256 worstPrice,
        uint32 deadline
    ) private view {
        if (_paused) revert VenuePaused();
        _requireListed(stock);
        _checkDeadline(deadline);
        // The user's own bound on the fills: the executor (or its leaked key) fills within it.
        if (worstPrice == 0) revert ZeroPrice();
        if (side == Side.Buy) {
            if (notional == 0) revert ZeroNotional();
        } else if (quantity == 0) {
            revert ZeroQuantity();
        }
    }

    function _checkLimit(address stock, uint256 quantity, uint256 price, uint8 timeInForce, uint32 deadline)
        private
        view
    {
        if (_paused) revert VenuePaused();
        _requireListed(stock);
        _checkDeadline(deadline);
        if (timeInForce != TIME_IN_FORCE_DAY) revert InvalidTimeInForce(timeInForce);
        if (quantity == 0) revert ZeroQuantity();
        if (price == 0) revert ZeroPrice();
    }

    function _checkDeadline(uint32 deadline) private view {
        // Only the past is refused: how far ahead a wallet lets its order be mined is its own call,
        // up to what the uint32 holds (Anchored's documented deadlines are years ahead).
        if (block.timestamp > deadline) revert DeadlineExpired(deadline);
    }

    function _requireListed(address stock) private view {
        if (!_listed[stock]) revert StockNotListed(stock);
    }

    function _placeMarket(
        address user,
        address stock,
        Side side,
        uint256 quantity,
        uint256 notional,
        uint256 worstPrice,
        uint32 deadline
    ) private returns (uint256 orderId) {
        uint256 locked;
        if (side == Side.Buy) {
            quantity = 0;
            locked = notional;
            _cashier.lock(user, notional);
        } else {
            notional = 0;
            locked = IStock(stock).lock(user, quantity);
        }
        // A market order's `price` is its worst price: checked like a limit on every fill, restated
        // like one at a split.
        return _record(user, stock, side, OrderType.Market, quantity, notional, worstPrice, deadline, locked);
    }

    function _placeLimit(address user, address stock, Side side, uint256 quantity, uint256 price, uint32 deadline)
        private
        returns (uint256 orderId)
    {
        uint256 notional;
        uint256 locked;
        if (side == Side.Buy) {
            notional = Math.mulDiv(quantity, price, PRICE_SCALE, Math.Rounding.Ceil);
            locked = notional + Math.mulDiv(notional, _feeConfig.limitFeeBps, BPS, Math.Rounding.Ceil);
            _cashier.lock(user, locked);
        } else {
            notional = Math.mulDiv(quantity, price, PRICE_SCALE);
            locked = IStock(stock).lock(user, quantity);
        }
        return _record(user, stock, side, OrderType.Limit, quantity, notional, price, deadline, locked);
    }

    function _record(
        address user,
        address stock,
        Side side,
        OrderType orderType,
        uint256 quantity,
        uint256 notional,
        uint256 price,
        uint32 deadline,
        uint256 locked
    ) private returns (uint256 orderId) {
        orderId = _nextOrderId++;
        FeeConfig memory fees = _feeConfig;
        _orderFeeBps[orderId] = FEE_RECORDED | (orderType == OrderType.Limit ? fees.limitFeeBps : fees.marketFeeBps);
        Order storage order = _orders[orderId];
        order.user = user;
        order.stock = stock;
        order.side = side;
        order.orderType = orderType;
        order.status = OrderStatus.Open;
        order.timeInForce = TIME_IN_FORCE_DAY;
        order.deadline = deadline;
        order.createdAt = uint64(block.timestamp);
        order.quantity = _u128(quantity);
        order.notional = _u128(notional);
        order.price = _u128(price);
        order.locked = _u128(locked);
        uint256 multiplier = IStock(stock).multiplier();
        order.multiplier = multiplier;
        emit OrderPlaced(
            orderId,
            user,
            stock,
            side,
            orderType,
            quantity,
            notional,
            price,
            TIME_IN_FORCE_DAY,
            deadline,
            locked,
            multiplier
        );
    }

    function _fill(Fill calldata fill, FeeConfig memory fees) private {
        uint256 orderId = fill.orderId;
        Order storage order = _orders[orderId];
        if (order.status == OrderStatus.None) revert OrderNotOpen(orderId);
        IStock stock = IStock(order.stock);
        uint256 multiplier = stock.multiplier();
        // A split since the order's placement (or last fill): its shares are restated once, here,
        // so that the fill below is checked and booked in the stock's current shares.
        if (order.multiplier != multiplier) {
            (order.quantity, order.filledQuantity, order.price) = _rescaled(order, multiplier);
            order.multiplier = multiplier;
        }
        _checkFill(order, fill);
        uint256 oraclePrice = _checkOracle(address(stock), orderId, fill.price);
        address user = order.user;
        if (oraclePrice != 0) _chargeLossBudget(address(stock), orderId, order.side, fill, oraclePrice);
        (uint256 notional, uint256 fee) = _recordFill(order, fill, fees);
        if (order.side == Side.Buy) {
            uint256 debit = notional + fee;
            if (debit > order.locked) revert LockInsufficient(orderId);
            order.locked -= uint128(debit);
            _cashier.settleBuy(user, notional, fee);
            stock.mintToExchange(user, fill.quantity);
        } else {
            // The seller gives the shares sold rounded up to base units, never more than the order
            // locked: FillExceedsOrder bounds the shares, the cap absorbs the rounding of partial fills.
            uint256 base = stock.sharesToBase(fill.quantity, true);
            uint256 lockedBase = order.locked;
            if (base > lockedBase) base = lockedBase;
            order.locked = uint128(lockedBase - base);
            stock.burnLocked(user, base);
            _cashier.settleSell(user, notional, fee);
        }
        emit OrderFilled(orderId, user, fill.quantity, fill.price, notional, fee, order.locked, multiplier);
    }

    /// @dev An order's shares restated in `current` multiplier units: quantities scale with the
    /// split, a limit price inversely, rounded in the user's favour (a buy's limit down, a sell's up)
    /// so that a buy never owes more than it locked and a sell never receives less than it asked.
    function _rescaled(Order memory order, uint256 current)
        private
        pure
        returns (uint128 quantity, uint128 filledQuantity, uint128 price)
    {
        uint256 old = order.multiplier;
        quantity = _u128(Math.mulDiv(order.quantity, current, old));
        filledQuantity = _u128(Math.mulDiv(order.filledQuantity, current, old));
        price = _u128(
            Math.mulDiv(order.price, old, current, order.side == Side.Buy ? Math.Rounding.Floor : Math.Rounding.Ceil)
        );
    }

    function _checkFill(Order storage order, Fill calldata fill) private view {
        uint256 orderId = fill.orderId;
        OrderStatus status = order.status;
        if (status != OrderStatus.Open && status != OrderStatus.Canceling) revert OrderNotOpen(orderId);
        if (fill.quantity == 0) revert ZeroQuantity();
        if (fill.price == 0) revert ZeroPrice();
        bool isBuy = order.side == Side.Buy;
        bool isLimit = order.orderType == OrderType.Limit;
        // A limit order's limit, a market order's worst price (zero only on a market order from
        // before 0.2.0, which had none).
        uint256 bound = order.price;
        if (bound != 0 && (isBuy ? fill.price > bound : fill.price < bound)) {
            revert PriceOutsideLimit(orderId);
        }
        if ((isLimit || !isBuy) && uint256(order.filledQuantity) + fill.quantity > order.quantity) {
            revert FillExceedsOrder(orderId);
        }
    }

    /// @dev A stock with a feed fills only within `toleranceBps` of the feed's latest answer, and
    /// only while that answer is at most `maxAge` seconds old (docs/contracts.md, "Oracle check").
    /// A stock without one fills only while the router does not require feeds, and then unchecked.
    /// Returns the oracle's price in 18 decimals (0: no feed).
    function _checkOracle(address stock, uint256 orderId, uint256 price) private view returns (uint256 oraclePrice) {
        PriceFeedConfig memory config = _priceFeeds[stock];
        if (config.feed == address(0)) {
            if (!_oracleOptional) revert PriceFeedRequired(orderId, stock);
            return 0;
        }
        (, int256 answer,, uint256 updatedAt,) = AggregatorV3Interface(config.feed).latestRoundData();
        if (answer <= 0 || answer > int256(uint256(type(uint128).max))) revert OracleAnswerInvalid(orderId, answer);
        // An answer stamped after the block (a foreign feed's clock) counts as fresh.
        if (updatedAt < block.timestamp && block.timestamp - updatedAt > config.maxAge) {
            revert OraclePriceStale(orderId, updatedAt, config.maxAge);
        }
        oraclePrice = uint256(answer) * 10 ** (PRICE_DECIMALS - config.decimals);
        uint256 deviation = price > oraclePrice ? price - oraclePrice : oraclePrice - price;
        if (deviation * BPS > oraclePrice * config.toleranceBps) revert OraclePriceDeviation(orderId, price, answer);
    }

    /// @dev Updates the order's filled totals and returns this fill's notional and fee. Buyers pay
    /// rounded up, sellers receive rounded down, both on the running total.
    function _recordFill(Order storage order, Fill calldata fill, FeeConfig memory fees)
        private
        returns (uint256 notional, uint256 fee)
    {
        uint256 filledValue = _filledValue[fill.orderId] + uint256(fill.quantity) * fill.price;
        _filledValue[fill.orderId] = filledValue;
        uint256 filledNotional =
            order.side == Side.Buy ? Math.ceilDiv(filledValue, PRICE_SCALE) : filledValue / PRICE_SCALE;
        notional = filledNotional - order.filledNotional;
        uint256 feeBps = _feeBpsOf(fill.orderId, order.orderType, fees);
        uint256 totalFee = Math.mulDiv(filledNotional, feeBps, BPS, Math.Rounding.Ceil);
        uint256 feesSoFar = order.fees;
        fee = totalFee > feesSoFar ? totalFee - feesSoFar : 0;
        // A guard: at the order's own rate (fixed at placement, at most 10%) the running fee grows
        // by at most what the running notional grows, so this cap never binds for such an order.
        if (fee > notional) fee = notional;
        order.filledQuantity = _u128(uint256(order.filledQuantity) + fill.quantity);
        order.filledNotional = _u128(filledNotional);
        order.fees = _u128(feesSoFar + fee);
    }

    /// @dev The order's fee rate: the one recorded at its placement; an order placed before rates
    /// were recorded per order (none in a venue deployed at 0.2.0 or later) pays the current one.
    function _feeBpsOf(uint256 orderId, OrderType orderType, FeeConfig memory fees) private view returns (uint256) {
        uint24 recorded = _orderFeeBps[orderId];
        if (recorded & FEE_RECORDED != 0) return recorded & 0xFFFF;
        return orderType == OrderType.Limit ? fees.limitFeeBps : fees.marketFeeBps;
    }

    /// @dev Books the fill's loss (positive) or gain (negative) for the treasury against the oracle
    /// mid `oraclePrice` (the reading `_checkOracle` took) in the stock's and the venue's current
    /// window, reverting when either would exceed its budget. The treasury is the counterparty: it
    /// sells to a buy below the mid and buys from a sell above it. Losses round up and gains down,
    /// so the booked net is never below the treasury's true net.
    function _chargeLossBudget(address stock, uint256 orderId, Side side, Fill calldata fill, uint256 oraclePrice)
        private
    {
        uint256 price = fill.price;
        bool loss = side == Side.Buy ? price < oraclePrice : price > oraclePrice;
        uint256 diff = price > oraclePrice ? price - oraclePrice : oraclePrice - price;
        uint256 amount = Math.mulDiv(diff, fill.quantity, PRICE_SCALE, loss ? Math.Rounding.Ceil : Math.Rounding.Floor);
        // At most 2^128 * 2^128 / 1e18 < 2^197: the cast is exact, and the budgets (96 bits) keep
        // any window's stored net within 120 bits.
        int256 delta = loss ? int256(amount) : -int256(amount);
        uint256 window = block.timestamp / _period();
        _book(_stockLoss[stock], stock, orderId, window, delta, false);
        _book(_overallLoss, address(0), orderId, window, delta, true);
    }

    function _book(LossWindow storage w, address stock, uint256 orderId, uint256 window, int256 delta, bool overall)
        private
    {
        LossWindow memory m = w;
        // A new window starts at zero: a gain never carries over, nor does a loss.
        int256 before = m.window == window ? int256(m.net) : int256(0);
        int256 net = before + delta;
        uint256 limit = _limitOf(m, overall);
        if (delta > 0) {
            if (net > int256(limit)) revert TreasuryLossBudgetExceeded(orderId, stock, net, limit);
            int256 alertAt = int256(Math.mulDiv(limit, ALERT_BPS, BPS, Math.Rounding.Ceil));
            if (before < alertAt && net >= alertAt) emit TreasuryLossBudgetAlert(stock, window, net, limit);
        } else if (net < type(int120).min) {
            // Gains beyond 2^119 wei in one window change nothing that matters: clamp.
            net = type(int120).min;
        }
        w.window = uint32(window);
        w.net = int120(net);
    }

    function _limitOf(LossWindow memory w, bool overall) private pure returns (uint256) {
        if (w.limitSet) return w.limit;
        return overall ? DEFAULT_OVERALL_LOSS_BUDGET : DEFAULT_STOCK_LOSS_BUDGET;
    }

    function _period() private view returns (uint256) {
        uint32 period = _lossPeriod;
        return period == 0 ? DEFAULT_LOSS_PERIOD : period;
    }

    function _close(Close calldata close) private {
        _closeOrder(close.orderId, close.status);
    }

    function _closeOrder(uint256 orderId, OrderStatus status) private {
        Order storage order = _orders[orderId];
        if (order.status != OrderStatus.Open && order.status != OrderStatus.Canceling) revert OrderNotOpen(orderId);
        if (status < OrderStatus.Filled) revert InvalidCloseStatus();
        uint256 released = order.locked;
        order.status = status;
        order.locked = 0;
        address user = order.user;
        if (released != 0) {
            if (order.side == Side.Buy) {
                _cashier.unlock(user, released);
            } else {
                IStock(order.stock).unlock(user, released);
            }
        }
        emit OrderClosed(orderId, user, status, released);
    }

    function _requireEscapeHatch() private view {
        if (!escapeHatchOpen()) revert EscapeHatchClosed();
    }

    /// @dev A pause opens the hatch for one's own orders at once, never for queued cash: a suspect
    /// withdrawal is held for the operator's silence period from the pause's start (docs/security.md).
    function _requireQueuedCashHatch() private view {
        uint256 opensAt = queuedCashHatchOpensAt();
        if (block.timestamp < opensAt) revert QueuedCashHatchClosed(opensAt);
    }

    function _silence() private view returns (uint256) {
        uint32 silence = _operatorSilence;
        return silence == 0 ? DEFAULT_OPERATOR_SILENCE : silence;
    }

    // ------------------------------------------------------- Internal: cash

    function _deposit(address user, address token, uint256 amount) private returns (bool instant, uint256 queueId) {
        // The Cashier validates (token, minimum) before the tokens move; the pull comes last.
        (instant, queueId) = _cashier.creditDeposit(user, token, amount);
        IERC20(token).safeTransferFrom(user, address(_cashier), amount);
    }

    function _depositInstant(address user, address token, uint256 amount) private {
        (bool instant,) = _deposit(user, token, amount);
        if (!instant) revert DepositNotInstant();
    }

    function _u128(uint256 amount) private pure returns (uint128) {
        if (amount > type(uint128).max) revert AmountTooLarge(amount);
        return uint128(amount);
    }

    // ------------------------------------------------------ Context plumbing

    /// @dev Ownership is checked against the direct caller: a delegatee must not act as the owner.
    function _checkOwner() internal view override {
        if (owner() != msg.sender) revert OwnableUnauthorizedAccount(msg.sender);
    }

    /// @notice Accepts the ownership offered to the direct caller.
    /// @dev `msg.sender`, never the ERC-2771 sender: a One Click delegatee of the pending owner must not
    /// accept for it through the OneClickRouter.
    function acceptOwnership() public override {
        if (pendingOwner() != msg.sender) revert OwnableUnauthorizedAccount(msg.sender);
        _transferOwnership(msg.sender);
    }

    function _msgSender() internal view override(ContextUpgradeable, ERC2771ContextUpgradeable) returns (address) {
        return ERC2771ContextUpgradeable._msgSender();
    }

    function _msgData() internal view override(ContextUpgradeable, ERC2771ContextUpgradeable) returns (bytes calldata) {
        return ERC2771ContextUpgradeable._msgData();
    }

    function _contextSuffixLength()
        internal
        view
        override(ContextUpgradeable, ERC2771ContextUpgradeable)
        returns (uint256)
    {
        return ERC2771ContextUpgradeable._contextSuffixLength();
    }
}
