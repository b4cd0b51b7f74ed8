/**
 * The engine's state objects: accounts, their positions, instruments with their books, and resting
 * orders. Plain mutable records wired to each other by reference; the rules that change them live in
 * matching/, risk/, funding/, pool/ and commands/, never here.
 */
import { BookOrder, OrderBook, type Side } from '../book/order-book.ts';
import type { MarginMode, OrderType, TimeInForce, TriggerBy } from '../engine-types.ts';
import type { InstrumentSpec } from '../instruments.ts';
import { imrFor } from '../risk/margin-rates.ts';
import { TriggerBook, type OrderTrigger } from '../triggers/trigger-book.ts';

export class Account {
  collateral = 0n;
  /** Σ reservePerLot × remainingLots over the account's open orders. */
  reserved = 0n;
  deposited = 0n;
  /** Paid out: completed withdrawals. */
  withdrawn = 0n;
  /** Reserved for withdrawals not yet paid or failed (already out of `collateral`). */
  pendingWithdrawals = 0n;
  realisedPnl = 0n;
  feesPaid = 0n;
  feesReceived = 0n;
  funding = 0n;
  /** Liquidation fees paid (to the insurance fund) or, for the fund, received. */
  liquidationFees = 0n;
  /** Bad debt covered: + received by a bankrupt account, − paid by the insurance fund. */
  badDebt = 0n;
  /** Collateral moved by liquidity: − added to the pool, + removed from it (the pool: the mirror). */
  liquidity = 0n;
  readonly positions = new Map<string, Position>();
  /** The same positions as an array: iterated on every margin check without an iterator object. */
  readonly positionList: Position[] = [];
  /** Open orders in placement order (intrusive list through EngineOrder.accPrev/accNext). */
  ordersHead: EngineOrder | null = null;
  ordersTail: EngineOrder | null = null;
  /** Scratch of the matching plan: lots of this account's resting orders planned to fill. */
  planLots = 0;
  /** Time of the last partial liquidation step (its cooldown runs from here); 0 = none. */
  lastLiquidationTs = 0;
  /** Dead man's switch: every open order is cancelled at this time (0 = disarmed). */
  cancelAfterTs = 0;
  /** Set while the account is on the command's list of accounts to re-arm (risk/liquidation-index.ts). */
  dirty = false;
  constructor(
    readonly address: string,
    /** Self-trade key in the book (never 0). */
    readonly owner: number,
    /** Fee account and insurance fund: hold collateral, never trade. */
    readonly system: boolean = false,
  ) {}
}

export class Position {
  sizeLots = 0;
  /** Entry cost of the open size, ≥ 0 (what a long paid / a short received). */
  entryNotional = 0n;
  isolatedMargin = 0n;
  mode: MarginMode = 'cross';
  leverage: number;
  /** Initial margin rate of this position: max(1/leverage, the instrument's floor), in ppm. */
  imrPpm: bigint;
  realisedPnl = 0n;
  funding = 0n;
  /** Open orders of the account on this instrument (untriggered trigger orders included). */
  openOrders = 0;
  /** Untriggered closePosition triggers on this position: cancelled when it reaches zero. */
  closeTriggers = 0;
  /** Liquidation trigger (risk/liquidation-index.ts): the version of its live heap entry. */
  trigVersion = 0;
  /** Whether a live heap entry exists, its trigger and its side (a flip needs the other heap). */
  armed = false;
  liveTrig = 0;
  liveLong = false;
  constructor(
    readonly account: Account | null,
    readonly inst: Instrument,
    leverage: number,
  ) {
    this.leverage = leverage;
    this.imrPpm = imrFor(inst.spec, leverage);
  }
}

/** An entry of a liquidation trigger heap; stale once the position's trigVersion moved on. */
export interface TriggerEntry {
  trig: number;
  pos: Position;
  version: number;
}

export class Instrument {
  readonly book: OrderBook<EngineOrder>;
  markTicks = 0;
  indexTicks = 0;
  /** When the mark and the index were last set (command ts; the index's own time when given). */
  markTs = 0;
  indexTs = 0;
  lastTradeTicks = 0;
  lastFundingTs = 0;
  lastFundingRateE9 = 0n;
  /** The underlying's market was closed at the last mark command (`marketOpen: false`): the band is wider (risk/price-band.ts). */
  marketClosed = false;
  /** Corporate action ids of the splits applied to this instrument (commands/split-command.ts): a repeat is a no-op. */
  readonly splits = new Set<string>();
  readonly positions = new Set<Position>();
  spec: InstrumentSpec;
  unit: bigint;
  makerFee: bigint;
  takerFee: bigint;
  mmrPpm: bigint;
  defaultLeverage: number;
  /** Scratch position for a taker's post-trade margin check on this instrument. */
  scratch: Position | null = null;
  /** Liquidation triggers: longs fire when mark ≤ trig (max-heap), shorts when mark ≥ trig (min-heap). */
  readonly longTriggers: TriggerEntry[] = [];
  readonly shortTriggers: TriggerEntry[] = [];
  /** Untriggered stop and take-profit orders by trigger price (triggers/trigger-book.ts). */
  readonly triggers = new TriggerBook<EngineOrder>();
  constructor(spec: InstrumentSpec, index: Map<number, EngineOrder>, defaultLeverage: number) {
    this.book = new OrderBook<EngineOrder>(index);
    this.spec = spec;
    this.unit = spec.unitMicros;
    this.makerFee = BigInt(spec.makerFeeRatePpm);
    this.takerFee = BigInt(spec.takerFeeRatePpm);
    this.mmrPpm = BigInt(spec.maintenanceMarginRatioPpm);
    this.defaultLeverage = Math.min(defaultLeverage, spec.maxLeverage);
  }
  /** Applies new settings (same tick and lot) to the derived fields. */
  configure(spec: InstrumentSpec, defaultLeverage: number): void {
    this.spec = spec;
    this.unit = spec.unitMicros;
    this.makerFee = BigInt(spec.makerFeeRatePpm);
    this.takerFee = BigInt(spec.takerFeeRatePpm);
    this.mmrPpm = BigInt(spec.maintenanceMarginRatioPpm);
    this.defaultLeverage = Math.min(defaultLeverage, spec.maxLeverage);
  }
  /** The price positions are valued at: the mark, or the last trade before any mark was set. */
  get valuationTicks(): number {
    return this.markTicks !== 0 ? this.markTicks : this.lastTradeTicks;
  }
}

export class EngineOrder extends BookOrder {
  filledLots = 0;
  reservePerLot = 0n;
  /** Stop and take-profit orders only; null for LIMIT and MARKET orders and once fired. */
  trigger: OrderTrigger | null = null;
  accPrev: EngineOrder | null = null;
  accNext: EngineOrder | null = null;
  constructor(
    id: number,
    side: Side,
    priceTicks: number,
    lots: number,
    readonly account: Account,
    readonly position: Position,
    readonly type: OrderType,
    readonly timeInForce: TimeInForce,
    /** Total size; an amendment may lower it in place (amend-order-command.ts). */
    public sizeLots: number,
    readonly reduceOnly: boolean,
    readonly clientOrderId: string | null,
    readonly createdTs: number,
  ) {
    super(id, side, priceTicks, lots, account.owner);
  }
}
