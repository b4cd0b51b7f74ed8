/**
 * The perpetual engine's interface: commands in, results and events out. Everything here is plain
 * data; money is bigint micro-USD, prices integer ticks, sizes integer lots, times milliseconds
 * given by the caller. `snapshot()` is the only JSON-safe form (bigints as decimal strings);
 * `toJsonSafe` converts events and results the same way for a journal.
 */
import type { InstrumentConfig } from './instruments.ts';
import type { Side } from './book/order-book.ts';

export type { Side } from './book/order-book.ts';
// The order vocabulary is the wire contract's (packages/contract, pure data): a value the API takes
// is one the engine knows, by construction.
import type { MarginMode, OrderType, TimeInForce, TriggerBy } from '@tokex/contract';
export type { MarginMode, OrderType, TimeInForce, TriggerBy };

/** Result codes: the names of result-codes.ts (the API maps them onto its numbers and statuses). */
export type { RejectCode, ResultCode } from './result-codes.ts';
import type { RejectCode } from './result-codes.ts';

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
  /** STOP_* and TAKE_PROFIT_*: the price that fires the order (docs/perp-engine.md "Trigger orders"). */
  triggerPriceTicks?: number;
  /** The price the trigger watches; default MARK. */
  triggerBy?: TriggerBy;
  /** A trigger that closes the whole position when it fires (reduce-only; `sizeLots` is ignored, send 0). */
  closePosition?: boolean;
}

/**
 * A new price and/or total size for an open order under the same id (docs/perp-engine.md "Amend"):
 * a smaller size at the same price keeps the order's place in the queue; anything else re-queues it
 * (and a new price that crosses the book trades as a taker first, as a new order would).
 */
export interface AmendOrderCommand extends CommandBase {
  kind: 'amendOrder';
  account: string;
  orderId: number;
  /** The new limit price; omitted: unchanged. */
  priceTicks?: number;
  /** The new total size (filled lots included), above what has filled; omitted: unchanged. */
  sizeLots?: number;
  /** The signed amendment's expiry (ms). */
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
  /** When the index was observed (ms); default `ts`. Liquidation pauses on an index older than indexStaleMs. */
  indexTs?: number;
  /**
   * Whether the underlying's market is open (default true). `false` while a stock perpetual trades
   * on a closed market's last index: its price band widens (risk/price-band.ts, docs/perp-risk.md).
   * The caller reads the market calendar; the engine keeps no clock.
   */
  marketOpen?: boolean;
}

/**
 * A stock split applied to the stock perpetual on it (docs/perp-risk.md "Stock splits"): `ratioTo`
 * new shares for every `ratioFrom` old ones. Positions, open orders, trigger orders, mark, index and
 * last trade are rescaled in this one command; a repeat of the action id on the instrument is a
 * no-op (answered `duplicate: true`).
 */
export interface ApplySplitCommand extends CommandBase {
  kind: 'applySplit';
  symbol: string;
  /** The corporate action's id (`AAPL-2026-11-26`): the idempotency key, kept in the engine's state. */
  actionId: string;
  /** New shares, a positive integer ≤ 1 000 000 (`10` of 10:1). */
  ratioTo: number;
  /** Old shares, a positive integer ≤ 1 000 000, not equal to ratioTo. */
  ratioFrom: number;
}

/**
 * The rules the engine applies from this command on (ENGINE_RULES): journalled, so that a journal
 * replays under the rules its commands were applied under, and a rule change takes effect at a
 * known row. Rules only rise, one release's at a time or more; the sequencer journals it at start.
 */
export interface SetRulesCommand extends CommandBase {
  kind: 'setRules';
  rules: number;
}

/**
 * The engine's rules: what a replay must apply to reproduce the journal. A journal starts at 1 (a
 * genesis engine); its `setRules` rows raise them. What each version changed:
 * - 1: the rules before versions existed.
 * - 2: an account with open bad debt is checked at every mark update of its instruments
 *   (risk/liquidation-index.ts `armAccount`), so that its debt resolves at the same command on an
 *   engine restored from a snapshot as on the one that ran.
 * - 3: open bad debt is settled again whenever money arrives to pay it: after any command that
 *   changes the debtor's account (a deposit to it), and whenever the insurance fund receives money
 *   (a liquidation fee, a deposit to it). Before, a flat account's debt the fund could
 *   not pay when it arose stayed open for good, and withdrawals with it (risk/liquidation.ts
 *   `rearmDirty`).
 */
export const ENGINE_RULES = 3;

/** Lists an instrument (journalled, so a replay reproduces the settings the venue traded under). */
export interface AddInstrumentCommand extends CommandBase {
  kind: 'addInstrument';
  config: InstrumentConfig;
}

/** Changes a listed instrument's settings; tick and lot size cannot change. */
export interface UpdateInstrumentCommand extends CommandBase {
  kind: 'updateInstrument';
  config: InstrumentConfig;
}

/** Reserves `amount` of the account's withdrawable collateral for an on-chain payment. */
export interface RequestWithdrawalCommand extends CommandBase {
  kind: 'requestWithdrawal';
  account: string;
  /** Unique forever: the vault's withdrawal id is derived from it. */
  withdrawalId: string;
  amount: bigint;
  /**
   * The account's forced withdrawal filed on chain (IMarginVault.requestForcedWithdrawal): reserved
   * up to the account's equity rather than its withdrawable amount, so that a venue can always
   * answer one it owes (the account's positions, left with less margin, are then liquidated as any
   * other's would be). Withdrawals still pause while bad debt is open.
   */
  forced?: boolean;
}

/** Settles a pending withdrawal: paid on chain (the reserve leaves), or failed (released once). */
export interface SettleWithdrawalCommand extends CommandBase {
  kind: 'settleWithdrawal';
  withdrawalId: string;
  outcome: 'PAID' | 'FAILED';
}

export interface AddLiquidityCommand extends CommandBase {
  kind: 'addLiquidity';
  account: string;
  /** Micro-USD of free collateral moved into the pool. */
  amount: bigint;
  /** Lock-up of this addition (ms): removals wait until ts + lockupMs. */
  lockupMs: number;
}

export interface RemoveLiquidityCommand extends CommandBase {
  kind: 'removeLiquidity';
  account: string;
  shares: bigint;
}

/** Dead man's switch: cancel every open order of the account at ts + timeoutMs unless re-armed; 0 disarms. */
export interface CancelAllAfterCommand extends CommandBase {
  kind: 'cancelAllAfter';
  account: string;
  timeoutMs: number;
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
  | AmendOrderCommand
  | CancelOrderCommand
  | CancelOrdersCommand
  | CancelAllCommand
  | SetLeverageCommand
  | AdjustMarginCommand
  | SetMarkPriceCommand
  | ApplyFundingCommand
  | AddInstrumentCommand
  | UpdateInstrumentCommand
  | RequestWithdrawalCommand
  | SettleWithdrawalCommand
  | AddLiquidityCommand
  | RemoveLiquidityCommand
  | CancelAllAfterCommand
  | ApplySplitCommand
  | SetRulesCommand;

export type CommandKind = EngineCommand['kind'];

// ---------------------------------------------------------------------------------------------
// Events. `seq` is engine-global, starts at 1 and increases by one per event, without gaps.

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
  shares: bigint;
  /** The holder's shares after. */
  holderShares: bigint;
  totalShares: bigint;
  /** Pool equity after (collateral + uPnL at the mark). */
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

// ---------------------------------------------------------------------------------------------
// Results.

export interface Rejected {
  ok: false;
  code: RejectCode;
  message: string;
  /** Always empty: a rejected command changes nothing. */
  events: [];
  /** Facts the API needs to word the refusal for the client (the engine speaks ticks; the API, prices). */
  detail?: RejectDetail;
}

/**
 * What a refusal carries beyond its code, for the API to render. `priceBand`: a limit price beyond
 * the band around the mark (PRICE_OUT_OF_RANGE), with the band's edges as they stood.
 */
export interface RejectDetail {
  priceBand?: { side: Side; priceTicks: number; lowTicks: number; highTicks: number; markTicks: number; bandPpm: number };
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

export interface AmendAccepted extends Accepted {
  order: OrderOutcome;
  /** Taker fills of a re-queued order whose new price crossed the book. */
  fills: TradeEvent[];
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

export interface WithdrawalAccepted extends Accepted {
  withdrawalId: string;
  status: 'PENDING' | 'PAID' | 'FAILED';
  /** True when the id was requested before with the same amount: nothing happened now. */
  duplicate: boolean;
}

export interface LiquidityAccepted extends Accepted {
  /** Shares minted or burned, micro-USD moved, and the lock-up end: decimal strings (results stay JSON-plain). */
  shares: string;
  amount: string;
  lockedUntil: number;
}

export interface SplitAccepted extends Accepted {
  /** True when the action id was applied to the instrument before: nothing happened now. */
  duplicate: boolean;
}

export type PlaceOrderResult = PlaceOrderAccepted | Rejected;
export type AmendOrderResult = AmendAccepted | Rejected;
export type CancelOrdersResult = CancelOrdersAccepted | Rejected;
export type CancelAllResult = CancelAllAccepted | Rejected;
export type CommandResult = Accepted | PlaceOrderAccepted | AmendAccepted | CancelOrdersAccepted | CancelAllAccepted | WithdrawalAccepted | LiquidityAccepted | SplitAccepted | Rejected;

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
  status: 'UNTRIGGERED' | 'NEW' | 'PARTIALLY_FILLED';
  reserved: bigint;
  createdTs: number;
  /** Trigger orders only (UNTRIGGERED: waiting; the order then rests or trades as its LIMIT or MARKET self). */
  trigger?: { priceTicks: number; by: TriggerBy; closePosition: boolean };
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
  pendingWithdrawals: bigint;
  liquidationFees: bigint;
  badDebt: bigint;
  liquidity: bigint;
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
  /** What a withdrawal may take: min(balance, balance + cross uPnL) − IM − order reserves, ≥ 0 (Binance's rule). */
  withdrawable: bigint;
  /** Reserved for withdrawals not yet paid (already out of `collateral`). */
  pendingWithdrawals: bigint;
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
  pendingWithdrawals: string;
  liquidationFees: string;
  badDebt: string;
  liquidity: string;
  lastLiquidationTs: number;
  cancelAfterTs: number;
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
  /** Present only on an UNTRIGGERED trigger order (it rests in the trigger index, not on the book). */
  trigger?: { priceTicks: number; by: TriggerBy; closePosition: boolean };
}

export interface InstrumentStateSnapshot {
  config: InstrumentConfig;
  markPriceTicks: number;
  indexPriceTicks: number;
  markTs: number;
  indexTs: number;
  lastTradePriceTicks: number;
  lastFundingTs: number;
  lastFundingRateE9: string;
  /** Present (true) only while the underlying's market is closed: a snapshot without it is one from before the rule. */
  marketClosed?: true;
  /** Present only once a split was applied: the action ids, sorted. */
  splits?: string[];
}

export interface ClientOrderSnapshot extends OrderOutcome {
  account: string;
  clientOrderId: string;
}

export interface WithdrawalSnapshot {
  withdrawalId: string;
  account: string;
  amount: string;
  status: 'PENDING' | 'PAID' | 'FAILED';
  requestedTs: number;
  /** Present (true) only on a forced withdrawal. */
  forced?: true;
}

export interface LpSnapshot {
  account: string;
  shares: string;
  lockedUntil: number;
  netDeposited: string;
}

export interface EngineSnapshot {
  version: 2;
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
  /** Sorted by id. */
  withdrawals: WithdrawalSnapshot[];
  totalShares: string;
  /** Sorted by account. */
  lps: LpSnapshot[];
  /** Sorted. */
  badDebtAccounts: string[];
  /** ENGINE_RULES the state is under; absent for 1, so a snapshot from before versions hashes as it did. */
  rules?: number;
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
