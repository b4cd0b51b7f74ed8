/**
 * The engine's events. `seq` is engine-global, starts at 1 and increases by one per event, without
 * gaps.
 * Part of the engine's interface (engine-types.ts re-exports it whole).
 */
import type { MarginMode, OrderType, TimeInForce, TriggerBy } from '@tokex/contract';
import type { InstrumentConfig } from '../instruments.ts';
import type { Side } from '../book/order-book.ts';

interface EventBase {
  seq: number;
  ts: number;
  commandId: string;
}

export type OrderStatus = 'UNTRIGGERED' | 'NEW' | 'PARTIALLY_FILLED' | 'FILLED' | 'CANCELED' | 'EXPIRED';
/**
 * Why an order left the book (or never rested): FILLED; USER_CANCEL (cancelOrder, cancelOrders,
 * cancelAll); IOC_REMAINDER (IOC, FOK or MARKET left over); SELF_TRADE_PREVENTION (the taker met its
 * own resting order); REDUCE_ONLY (a resting reduce-only order that could no longer reduce);
 * LIQUIDATION (cancelled because its account is being liquidated); CANCEL_AFTER (the dead man's switch);
 * POSITION_CLOSED (a closePosition trigger whose position reached zero); and for a trigger that fired
 * but could not enter the book: INSUFFICIENT_MARGIN, PRICE_BAND, POST_ONLY_WOULD_CROSS.
 */
export type DoneReason =
  | 'FILLED' | 'USER_CANCEL' | 'IOC_REMAINDER' | 'SELF_TRADE_PREVENTION' | 'REDUCE_ONLY' | 'LIQUIDATION' | 'CANCEL_AFTER'
  | 'POSITION_CLOSED' | 'INSUFFICIENT_MARGIN' | 'PRICE_BAND' | 'POST_ONLY_WOULD_CROSS'
  /** A stock split left the order's remainder under one whole lot, or its price beyond the instrument's range. */
  | 'SPLIT';

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
  /** Present (true) only on the engine's own liquidation orders. */
  liquidation?: true;
  /** Present only on trigger orders (which then rest UNTRIGGERED until orderTriggered). */
  triggerPriceTicks?: number;
  triggerBy?: TriggerBy;
  closePosition?: true;
}

/**
 * A trigger order fired: from here it is the LIMIT or MARKET order it carries, with the size and
 * price below, and its trades, orderResting and orderDone follow as for a new order.
 */
export interface OrderTriggeredEvent extends EventBase {
  type: 'orderTriggered';
  orderId: number;
  account: string;
  symbol: string;
  triggerBy: TriggerBy;
  triggerPriceTicks: number;
  /** The watched price that fired it. */
  firedAtTicks: number;
  /** The size it enters with (a closePosition trigger: the position's size then; reduce-only: capped). */
  sizeLots: number;
  /** Its limit (or, for a market order, the worst price after the band clamp). */
  priceTicks: number;
}

/** An open order amended in place or re-queued (docs/perp-engine.md "Amend"). */
export interface OrderAmendedEvent extends EventBase {
  type: 'orderAmended';
  orderId: number;
  account: string;
  symbol: string;
  side: Side;
  priceTicks: number;
  /** New total size (filled included). */
  sizeLots: number;
  /** Lots still open after the amendment (before any taker fill of a re-queued order). */
  remainingLots: number;
  /** True when the order kept its place in the queue (same price, smaller size). */
  keptPriority: boolean;
  /** A trigger order's new trigger price (only from a split, which rescales waiting trigger orders). */
  triggerPriceTicks?: number;
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

export type BalanceReason =
  | 'deposit'
  | 'withdraw'
  | 'trade'
  | 'fee'
  | 'funding'
  | 'margin'
  /** A withdrawal reserved (−) or released after a failed payment (+). */
  | 'withdrawalReserve'
  | 'liquidity'
  | 'liquidationFee'
  /** Bad debt: covered by the insurance fund (+ for the bankrupt account, − for the fund). */
  | 'badDebt'
  /** A position taken over by the pool, or closed against another by auto-deleveraging. */
  | 'liquidation'
  | 'adl'
  /** A stock split's remainder below whole lots, closed against the pool at the mark (cash in lieu). */
  | 'split';

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
  /** Present (false) only while the underlying's market is closed (the wider band is in force). */
  marketOpen?: false;
}

/** A stock split applied to an instrument (its positions, orders and prices follow as their own events). */
export interface SplitEvent extends EventBase {
  type: 'split';
  symbol: string;
  actionId: string;
  ratioTo: number;
  ratioFrom: number;
  /** Mark, index and last trade after the split. */
  markPriceTicks: number;
  indexPriceTicks: number;
  lastTradePriceTicks: number;
  /** Positions rescaled, and those of them whose remainder below whole lots was closed against the pool. */
  positions: number;
  remainders: number;
  /** Open orders rescaled, and cancelled (reason SPLIT). */
  ordersAdjusted: number;
  ordersCanceled: number;
}

export interface LeverageChangedEvent extends EventBase {
  type: 'leverageChanged';
  account: string;
  symbol: string;
  leverage: number;
  marginMode: MarginMode;
}

export interface InstrumentConfiguredEvent extends EventBase {
  type: 'instrumentConfigured';
  symbol: string;
  /** The settings now in force (every optional setting filled in). */
  config: InstrumentConfig;
  added: boolean;
}

export interface WithdrawalEvent extends EventBase {
  type: 'withdrawal';
  withdrawalId: string;
  account: string;
  amount: bigint;
  /** PENDING when reserved; PAID or FAILED when settled. */
  status: 'PENDING' | 'PAID' | 'FAILED';
}

export interface LiquidityEvent extends EventBase {
  type: 'liquidity';
  account: string;
  action: 'ADD' | 'REMOVE';
  /** Collateral moved (micro-USD). */
  amount: bigint;
  /** Shares minted (ADD) or burned (REMOVE). */
  shares: bigint;
  /** The holder's shares after. */
  holderShares: bigint;
  totalShares: bigint;
  /** Pool equity after (collateral + uPnL at the mark, micro-USD). */
  poolEquity: bigint;
  lockedUntil: number;
}

/** One step of a liquidation (docs/perp-risk.md). */
export interface LiquidationEvent extends EventBase {
  type: 'liquidation';
  account: string;
  symbol: string;
  /** BOOK: closed through the book by an IOC order; BACKSTOP: taken by the pool; ADL: closed against ranked opposite positions. */
  method: 'BOOK' | 'BACKSTOP' | 'ADL';
  /** Signed position size before this step. */
  positionLots: number;
  /** Lots closed by this step. */
  closedLots: number;
  markPriceTicks: number;
  /** The bankruptcy price of the position when the step began. */
  bankruptcyPriceTicks: number;
  /** The liquidation order's id (BOOK), else null. */
  orderId: number | null;
  /** Liquidation fee paid to the insurance fund. */
  fee: bigint;
  /** Equity and maintenance margin of the account (or isolated position) when the step began. */
  equity: bigint;
  maintenanceMargin: bigint;
}

/** A position reduced by auto-deleveraging to absorb a bankrupt account's position. */
export interface AdlEvent extends EventBase {
  type: 'adl';
  account: string;
  symbol: string;
  /** The bankrupt account whose position was closed against this one. */
  counterparty: string;
  sizeLots: number;
  priceTicks: number;
  realisedPnl: bigint;
}

/** The insurance fund moved: a liquidation fee in, or bad debt paid out. */
export interface InsuranceEvent extends EventBase {
  type: 'insurance';
  reason: 'liquidationFee' | 'badDebt';
  /** The account liquidated, or whose bad debt was paid. */
  account: string;
  delta: bigint;
  /** The fund's balance after. */
  balance: bigint;
}

/** An account's negative equity that nothing could resolve yet (OPEN), or its resolution. */
export interface BadDebtEvent extends EventBase {
  type: 'badDebt';
  account: string;
  amount: bigint;
  status: 'OPEN' | 'RESOLVED';
}

export interface CancelAllAfterEvent extends EventBase {
  type: 'cancelAllAfter';
  account: string;
  /** ARMED (deadline set), DISARMED, or TRIGGERED (the orders were cancelled). */
  status: 'ARMED' | 'DISARMED' | 'TRIGGERED';
  deadlineTs: number;
  canceledOrderIds: number[];
}

export type EngineEvent =
  | InstrumentConfiguredEvent
  | WithdrawalEvent
  | LiquidityEvent
  | LiquidationEvent
  | AdlEvent
  | InsuranceEvent
  | BadDebtEvent
  | CancelAllAfterEvent
  | OrderAcceptedEvent
  | OrderTriggeredEvent
  | OrderAmendedEvent
  | OrderRestingEvent
  | TradeEvent
  | OrderDoneEvent
  | PositionChangedEvent
  | BalanceChangedEvent
  | FundingPaymentEvent
  | FundingAppliedEvent
  | MarkPriceEvent
  | SplitEvent
  | LeverageChangedEvent;

export type EventType = EngineEvent['type'];
