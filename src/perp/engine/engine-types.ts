/**
 * The perpetual engine's interface: commands in, results and events out. Everything here is plain
 * data; money is bigint micro-USD, prices integer ticks, sizes integer lots, times milliseconds
 * given by the caller. `snapshot()` is the only JSON-safe form (bigints as decimal strings);
 * `toJsonSafe` converts events and results the same way for a journal.
 */
import type { InstrumentConfig } from './instruments.ts';
import type { Side } from './order-book.ts';

export type { Side } from './order-book.ts';
export type OrderType = 'LIMIT' | 'MARKET';
export type TimeInForce = 'GTC' | 'IOC' | 'FOK' | 'POST_ONLY';
export type MarginMode = 'cross' | 'isolated';

/**
 * Result codes. Names shared with `Rejection` in src/errors/app-error.ts mean the same thing;
 * `INVALID`, `UNKNOWN_SYMBOL`, `UNKNOWN_ACCOUNT`, `ORDER_NOT_FOUND` and `MARGIN_MODE_LOCKED` are the
 * engine's own (parameter, not-found and state-conflict answers in the API's table).
 */
export type ResultCode =
  | 'OK'
  | 'INVALID'
  | 'UNKNOWN_SYMBOL'
  | 'UNKNOWN_ACCOUNT'
  | 'INSUFFICIENT_MARGIN'
  | 'INSUFFICIENT_BALANCE'
  | 'POST_ONLY_WOULD_CROSS'
  | 'REDUCE_ONLY_WOULD_INCREASE'
  | 'FOK_NOT_FILLED'
  | 'NO_LIQUIDITY'
  | 'ORDER_NOT_FOUND'
  | 'ORDER_NOT_OPEN'
  | 'ORDER_EXPIRED'
  | 'LEVERAGE_EXCEEDED'
  | 'SIZE_OUT_OF_RANGE'
  | 'PRICE_OUT_OF_RANGE'
  | 'POSITION_NOT_OPEN'
  | 'MARGIN_MODE_LOCKED';

export type RejectCode = Exclude<ResultCode, 'OK'>;

// ---------------------------------------------------------------------------------------------
// Commands. Every command has a caller-chosen `id` (echoed on its events as `commandId`) and `ts`,
// the time in ms the caller assigns (the engine never reads a clock).

interface CommandBase {
  id: string;
  ts: number;
}

export interface DepositCommand extends CommandBase {
  kind: 'deposit';
  account: string;
  /** Micro-USD, > 0. */
  amount: bigint;
}

export interface WithdrawCommand extends CommandBase {
  kind: 'withdraw';
  account: string;
  /** Micro-USD, > 0, at most the account's withdrawable amount. */
  amount: bigint;
}

export interface PlaceOrderCommand extends CommandBase {
  kind: 'placeOrder';
  account: string;
  symbol: string;
  side: Side;
  type: OrderType;
  /** LIMIT: the limit price (required). MARKET: optional worst price. */
  priceTicks?: number;
  sizeLots: number;
  /** LIMIT: default GTC. MARKET: IOC (default) or FOK. */
  timeInForce?: TimeInForce;
  reduceOnly?: boolean;
  /** Idempotency key per account: a repeat answers the first order's result. */
  clientOrderId?: string;
  /** The signed order's expiry (ms); an order arriving after it is refused with ORDER_EXPIRED. */
  expiresAtMs?: number;
}

export interface CancelOrderCommand extends CommandBase {
  kind: 'cancelOrder';
  account: string;
  orderId: number;
}

export interface CancelOrdersCommand extends CommandBase {
  kind: 'cancelOrders';
  account: string;
  /** At most MAX_BATCH_CANCEL ids. */
  orderIds: number[];
}

export interface CancelAllCommand extends CommandBase {
  kind: 'cancelAll';
  account: string;
  symbol?: string;
}

export interface SetLeverageCommand extends CommandBase {
  kind: 'setLeverage';
  account: string;
  symbol: string;
  /** Integer 1..maxLeverage. */
  leverage: number;
  /** Omitted: unchanged. A change needs a flat position and no open orders on the symbol. */
  marginMode?: MarginMode;
}

export interface AdjustMarginCommand extends CommandBase {
  kind: 'adjustMargin';
  account: string;
  symbol: string;
  /** Micro-USD moved into (positive) or out of (negative) the isolated position's margin. */
  amount: bigint;
}

export interface SetMarkPriceCommand extends CommandBase {
  kind: 'setMarkPrice';
  symbol: string;
  markPriceTicks: number;
  indexPriceTicks: number;
}

export interface ApplyFundingCommand extends CommandBase {
  kind: 'applyFunding';
  symbol: string;
  /** Signed funding rate in units of 1e-9 per interval: positive, longs pay shorts. |rate| ≤ 1e8 (10 %). */
  rateE9: bigint;
}

export type EngineCommand =
  | DepositCommand
  | WithdrawCommand
  | PlaceOrderCommand
  | CancelOrderCommand
  | CancelOrdersCommand
  | CancelAllCommand
  | SetLeverageCommand
  | AdjustMarginCommand
  | SetMarkPriceCommand
  | ApplyFundingCommand;

export type CommandKind = EngineCommand['kind'];

// ---------------------------------------------------------------------------------------------
// Events. `seq` is engine-global, starts at 1 and increases by one per event, without gaps.

interface EventBase {
  seq: number;
  ts: number;
  commandId: string;
}

export type OrderStatus = 'NEW' | 'PARTIALLY_FILLED' | 'FILLED' | 'CANCELED' | 'EXPIRED';
/**
 * Why an order left the book (or never rested): FILLED; USER_CANCEL (cancelOrder, cancelOrders,
 * cancelAll); IOC_REMAINDER (IOC, FOK or MARKET left over); SELF_TRADE_PREVENTION (the taker met its
 * own resting order); REDUCE_ONLY (a resting reduce-only order that could no longer reduce).
 */
export type DoneReason = 'FILLED' | 'USER_CANCEL' | 'IOC_REMAINDER' | 'SELF_TRADE_PREVENTION' | 'REDUCE_ONLY';

export interface OrderAcceptedEvent extends EventBase {
  type: 'orderAccepted';
  orderId: number;
  account: string;
  symbol: string;
  side: Side;
  orderType: OrderType;
  timeInForce: TimeInForce;
  /** Limit or worst price; null for a market order without one. */
  priceTicks: number | null;
  /** The size the order trades with (a reduce-only order is capped to the position). */
  sizeLots: number;
  /** The size asked for. */
  requestedSizeLots: number;
  reduceOnly: boolean;
  clientOrderId: string | null;
}

export interface OrderRestingEvent extends EventBase {
  type: 'orderResting';
  orderId: number;
  account: string;
  symbol: string;
  side: Side;
  priceTicks: number;
  remainingLots: number;
  /** Margin reserved for the resting remainder (micro-USD). */
  reserved: bigint;
}

export interface TradeEvent extends EventBase {
  type: 'trade';
  symbol: string;
  /** Always the resting order's price. */
  priceTicks: number;
  sizeLots: number;
  /** priceTicks × sizeLots × unitMicros. */
  notional: bigint;
  takerSide: Side;
  makerOrderId: number;
  takerOrderId: number;
  makerAccount: string;
  takerAccount: string;
  makerFee: bigint;
  takerFee: bigint;
  makerRealisedPnl: bigint;
  takerRealisedPnl: bigint;
}

export interface OrderDoneEvent extends EventBase {
  type: 'orderDone';
  orderId: number;
  account: string;
  symbol: string;
  status: 'FILLED' | 'CANCELED' | 'EXPIRED';
  reason: DoneReason;
  filledLots: number;
  /** Lots that were still open when the order ended (0 when filled). */
  remainingLots: number;
}

export interface PositionChangedEvent extends EventBase {
  type: 'positionChanged';
  account: string;
  symbol: string;
  /** Signed: positive long, negative short. */
  sizeLots: number;
  /** Entry cost of the open size (micro-USD, ≥ 0). */
  entryNotional: bigint;
  isolatedMargin: bigint;
  /** Cumulative realised PnL of this position's account on this symbol. */
  realisedPnl: bigint;
  marginMode: MarginMode;
  leverage: number;
}

export type BalanceReason = 'deposit' | 'withdraw' | 'trade' | 'fee' | 'funding' | 'margin';

export interface BalanceChangedEvent extends EventBase {
  type: 'balanceChanged';
  account: string;
  /** The collateral after the change. */
  collateral: bigint;
  delta: bigint;
  reason: BalanceReason;
}

export interface FundingPaymentEvent extends EventBase {
  type: 'fundingPayment';
  account: string;
  symbol: string;
  sizeLots: number;
  markPriceTicks: number;
  rateE9: bigint;
  /** Signed: positive received, negative paid. */
  amount: bigint;
}

export interface FundingAppliedEvent extends EventBase {
  type: 'fundingApplied';
  symbol: string;
  rateE9: bigint;
  markPriceTicks: number;
  /** Sum paid by payers (rounded up each). */
  paid: bigint;
  /** Sum received by receivers (rounded down each). */
  received: bigint;
  /** paid − received, credited to the fee account. */
  remainder: bigint;
}

export interface MarkPriceEvent extends EventBase {
  type: 'markPrice';
  symbol: string;
  markPriceTicks: number;
  indexPriceTicks: number;
}

export interface LeverageChangedEvent extends EventBase {
  type: 'leverageChanged';
  account: string;
  symbol: string;
  leverage: number;
  marginMode: MarginMode;
}

export type EngineEvent =
  | OrderAcceptedEvent
  | OrderRestingEvent
  | TradeEvent
  | OrderDoneEvent
  | PositionChangedEvent
  | BalanceChangedEvent
  | FundingPaymentEvent
  | FundingAppliedEvent
  | MarkPriceEvent
  | LeverageChangedEvent;

export type EventType = EngineEvent['type'];

// ---------------------------------------------------------------------------------------------
// Results.

export interface Rejected {
  ok: false;
  code: RejectCode;
  message: string;
  /** Always empty: a rejected command changes nothing. */
  events: [];
}

export interface Accepted {
  ok: true;
  code: 'OK';
  events: EngineEvent[];
}

/** The outcome of a placed order at the end of the placing command. */
export interface OrderOutcome {
  orderId: number;
  status: OrderStatus;
  sizeLots: number;
  filledLots: number;
  /** Lots resting after the command (0 unless status is NEW or PARTIALLY_FILLED). */
  remainingLots: number;
}

export interface PlaceOrderAccepted extends Accepted {
  order: OrderOutcome;
  /** The fills of this command (a subset of `events`). */
  fills: TradeEvent[];
  /** True when this answers a repeated clientOrderId: nothing happened now and `events`/`fills` are empty. */
  duplicate: boolean;
}

export interface CancelOutcome {
  orderId: number;
  code: 'OK' | 'ORDER_NOT_FOUND' | 'ORDER_NOT_OPEN' | 'INVALID';
}

export interface CancelOrdersAccepted extends Accepted {
  cancels: CancelOutcome[];
}

export interface CancelAllAccepted extends Accepted {
  canceledOrderIds: number[];
}

export type PlaceOrderResult = PlaceOrderAccepted | Rejected;
export type CancelOrdersResult = CancelOrdersAccepted | Rejected;
export type CancelAllResult = CancelAllAccepted | Rejected;
export type CommandResult = Accepted | PlaceOrderAccepted | CancelOrdersAccepted | CancelAllAccepted | Rejected;

// ---------------------------------------------------------------------------------------------
// Read models for the API.

export interface OrderView {
  orderId: number;
  account: string;
  symbol: string;
  side: Side;
  type: OrderType;
  timeInForce: TimeInForce;
  priceTicks: number;
  sizeLots: number;
  filledLots: number;
  remainingLots: number;
  reduceOnly: boolean;
  clientOrderId: string | null;
  status: 'NEW' | 'PARTIALLY_FILLED';
  reserved: bigint;
  createdTs: number;
}

export interface PositionView {
  symbol: string;
  sizeLots: number;
  entryNotional: bigint;
  isolatedMargin: bigint;
  marginMode: MarginMode;
  leverage: number;
  realisedPnl: bigint;
  /** Net funding (positive received). */
  funding: bigint;
  /** At the valuation price (mark, or last trade before any mark); 0 when flat. */
  unrealisedPnl: bigint;
  initialMargin: bigint;
  maintenanceMargin: bigint;
}

export interface AccountView {
  account: string;
  collateral: bigint;
  /** Margin reserved for open orders. */
  reserved: bigint;
  deposited: bigint;
  withdrawn: bigint;
  realisedPnl: bigint;
  feesPaid: bigint;
  feesReceived: bigint;
  funding: bigint;
  positions: PositionView[];
}

export interface MarginSummary {
  collateral: bigint;
  /** collateral + unrealised PnL of cross positions + isolated margin and PnL of isolated positions. */
  equity: bigint;
  /** Unrealised PnL of cross positions. */
  crossUnrealisedPnl: bigint;
  crossInitialMargin: bigint;
  crossMaintenanceMargin: bigint;
  orderReserve: bigint;
  /** What new orders and margin moves may use (docs/perp-engine.md, "Free collateral"). */
  freeCollateral: bigint;
  /** What `withdraw` accepts: free collateral without unrealised profits. */
  withdrawable: bigint;
  /** Cross equity below cross maintenance margin, or an isolated position below its own. */
  liquidatable: boolean;
}

// ---------------------------------------------------------------------------------------------
// Snapshot (JSON-safe: bigints as decimal strings).

export interface PositionSnapshot {
  symbol: string;
  sizeLots: number;
  entryNotional: string;
  isolatedMargin: string;
  marginMode: MarginMode;
  leverage: number;
  realisedPnl: string;
  funding: string;
}

export interface AccountSnapshot {
  account: string;
  collateral: string;
  reserved: string;
  deposited: string;
  withdrawn: string;
  realisedPnl: string;
  feesPaid: string;
  feesReceived: string;
  funding: string;
  positions: PositionSnapshot[];
}

export interface OrderSnapshot {
  orderId: number;
  account: string;
  symbol: string;
  side: Side;
  type: OrderType;
  timeInForce: TimeInForce;
  priceTicks: number;
  sizeLots: number;
  filledLots: number;
  remainingLots: number;
  reduceOnly: boolean;
  clientOrderId: string | null;
  reservePerLot: string;
  createdTs: number;
}

export interface InstrumentStateSnapshot {
  config: InstrumentConfig;
  markPriceTicks: number;
  indexPriceTicks: number;
  lastTradePriceTicks: number;
  lastFundingTs: number;
  lastFundingRateE9: string;
}

export interface ClientOrderSnapshot extends OrderOutcome {
  account: string;
  clientOrderId: string;
}

export interface EngineSnapshot {
  version: 1;
  nextSeq: number;
  nextOrderId: number;
  feeAccount: string;
  defaultLeverage: number;
  instruments: InstrumentStateSnapshot[];
  /** Sorted by address. */
  accounts: AccountSnapshot[];
  /** Resting orders sorted by id (= time priority within a price level). */
  orders: OrderSnapshot[];
  /** Sorted by account, then clientOrderId. */
  clientOrders: ClientOrderSnapshot[];
}

/** Deep copy with every bigint as its decimal string (for journals and JSON answers). */
export function toJsonSafe<T>(value: T): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (Array.isArray(value)) return value.map((v) => toJsonSafe(v));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = toJsonSafe(v);
    return out;
  }
  return value;
}
