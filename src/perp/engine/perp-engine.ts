/**
 * The perpetual futures matching engine: pure, synchronous and deterministic. Commands go in (each
 * with the caller's `id` and `ts`), a result comes out with the events the command caused; the same
 * command stream always gives the same events and the same state. No I/O, no clock, no randomness:
 * the journal, the API and the workers live outside (docs/perp-engine.md has the rules).
 *
 * Bad input never throws: it returns `{ ok: false, code, message }` and changes nothing. Only a
 * programmer error (an invalid instrument configuration, a corrupt snapshot, a broken internal
 * invariant) throws.
 */
import { createHash } from 'node:crypto';
import type {
  AccountSnapshot,
  AccountView,
  AdjustMarginCommand,
  ApplyFundingCommand,
  BalanceReason,
  CancelAllCommand,
  CancelAllResult,
  CancelOrderCommand,
  CancelOrdersCommand,
  CancelOrdersResult,
  CancelOutcome,
  CommandResult,
  DepositCommand,
  DoneReason,
  EngineCommand,
  EngineEvent,
  EngineSnapshot,
  MarginMode,
  MarginSummary,
  OrderOutcome,
  OrderSnapshot,
  OrderType,
  OrderView,
  PlaceOrderCommand,
  PlaceOrderResult,
  PositionView,
  Rejected,
  RejectCode,
  Accepted,
  SetLeverageCommand,
  SetMarkPriceCommand,
  TimeInForce,
  TradeEvent,
  WithdrawCommand,
} from './engine-types.ts';
import { ceilDiv, floorDiv, PPM, RATE_E9 } from './fixed-point.ts';
import { DEFAULT_INSTRUMENTS, instrumentSpec, type InstrumentConfig, type InstrumentSpec } from './instruments.ts';
import { BookOrder, MARKET_BUY_LIMIT, MARKET_SELL_LIMIT, OrderBook, type Side } from './order-book.ts';

/** The account that receives every fee and the funding rounding remainder. */
export const FEE_ACCOUNT = '0x000000000000000000000000000000000000fee0';
/** Leverage of a position whose account never chose one (capped at the instrument's maximum). */
export const DEFAULT_LEVERAGE = 10;
/** Most order ids one cancelOrders command may name. */
export const MAX_BATCH_CANCEL = 100;
/** Largest deposit, withdrawal or margin move in one command (micro-USD). */
export const MAX_AMOUNT = 10n ** 30n;
/** Largest |rateE9| applyFunding accepts (10 % per interval). */
export const MAX_FUNDING_RATE_E9 = 100_000_000n;
const MAX_CLIENT_ORDER_ID = 64;
const MAX_COMMAND_ID = 128;
const ADDRESS_RE = /^0x[0-9a-f]{40}$/;

export interface PerpEngineOptions {
  /** Default: DEFAULT_INSTRUMENTS. */
  instruments?: readonly InstrumentConfig[];
  /** Default: FEE_ACCOUNT. */
  feeAccount?: string;
  /** Default: DEFAULT_LEVERAGE. */
  defaultLeverage?: number;
}

// ---------------------------------------------------------------------------------------------
// Internal state.

class Account {
  collateral = 0n;
  /** Σ reservePerLot × remainingLots over the account's open orders. */
  reserved = 0n;
  deposited = 0n;
  withdrawn = 0n;
  realisedPnl = 0n;
  feesPaid = 0n;
  feesReceived = 0n;
  funding = 0n;
  readonly positions = new Map<string, Position>();
  /** The same positions as an array: iterated on every margin check without an iterator object. */
  readonly positionList: Position[] = [];
  /** Open orders in placement order (intrusive list through EngineOrder.accPrev/accNext). */
  ordersHead: EngineOrder | null = null;
  ordersTail: EngineOrder | null = null;
  /** Scratch of the matching plan: lots of this account's resting orders planned to fill. */
  planLots = 0;
  constructor(
    readonly address: string,
    /** Self-trade key in the book (never 0). */
    readonly owner: number,
  ) {}
}

class Position {
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
  /** Open orders of the account on this instrument. */
  openOrders = 0;
  constructor(
    readonly account: Account | null,
    readonly inst: Instrument,
    leverage: number,
  ) {
    this.leverage = leverage;
    this.imrPpm = imrFor(inst.spec, leverage);
  }
}

class Instrument {
  readonly book: OrderBook<EngineOrder>;
  markTicks = 0;
  indexTicks = 0;
  lastTradeTicks = 0;
  lastFundingTs = 0;
  lastFundingRateE9 = 0n;
  readonly positions = new Set<Position>();
  readonly unit: bigint;
  readonly makerFee: bigint;
  readonly takerFee: bigint;
  readonly mmrPpm: bigint;
  readonly defaultLeverage: number;
  /** Scratch position for a taker's post-trade margin check on this instrument. */
  scratch: Position | null = null;
  constructor(
    readonly spec: InstrumentSpec,
    index: Map<number, EngineOrder>,
    defaultLeverage: number,
  ) {
    this.book = new OrderBook<EngineOrder>(index);
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

class EngineOrder extends BookOrder {
  filledLots = 0;
  reservePerLot = 0n;
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
    readonly sizeLots: number,
    readonly reduceOnly: boolean,
    readonly clientOrderId: string | null,
    readonly createdTs: number,
  ) {
    super(id, side, priceTicks, lots, account.owner);
  }
}

interface ClientOrderRecord extends OrderOutcome {
  account: string;
  clientOrderId: string;
}

function imrFor(spec: InstrumentSpec, leverage: number): bigint {
  return BigInt(Math.max(Math.ceil(1_000_000 / leverage), spec.initialMarginRatioPpm));
}

function isSafeNonNegInt(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}

function isSafePosInt(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v > 0;
}

const abs = (v: bigint): bigint => (v < 0n ? -v : v);

function reject(code: RejectCode, message: string): Rejected {
  return { ok: false, code, message, events: [] };
}

// ---------------------------------------------------------------------------------------------

export class PerpEngine {
  private readonly instruments = new Map<string, Instrument>();
  private readonly accounts = new Map<string, Account>();
  /** Every resting order of every instrument by id (shared with the books). */
  private readonly orders = new Map<number, EngineOrder>();
  private readonly clientOrders = new Map<string, ClientOrderRecord>();
  private readonly feeAccount: Account;
  private readonly defaultLeverage: number;
  private nextSeq = 1;
  private nextOrderId = 1;
  private nextOwner = 1;

  // The command being applied: its events carry its id and ts.
  private events: EngineEvent[] = [];
  private cmdId = '';
  private cmdTs = 0;

  // The matching plan of the order being placed (reused arrays: no allocation per order).
  private planMakers: EngineOrder[] = [];
  private planFillLots: number[] = [];
  private planCancel: boolean[] = [];
  private planN = 0;
  private planStp = false;
  private planTouched: Account[] = [];
  /** Out-value of applyFill: margin moved into an isolated position (negative: released). */
  private fillBucketIn = 0n;

  constructor(options: PerpEngineOptions = {}) {
    const defaultLeverage = options.defaultLeverage ?? DEFAULT_LEVERAGE;
    if (!isSafePosInt(defaultLeverage)) throw new Error('engine: defaultLeverage must be a positive integer');
    this.defaultLeverage = defaultLeverage;
    for (const config of options.instruments ?? DEFAULT_INSTRUMENTS) {
      const spec = instrumentSpec(config);
      if (this.instruments.has(spec.symbol)) throw new Error(`engine: instrument ${spec.symbol} configured twice`);
      this.instruments.set(spec.symbol, new Instrument(spec, this.orders, defaultLeverage));
    }
    const fee = (options.feeAccount ?? FEE_ACCOUNT).toLowerCase();
    if (!ADDRESS_RE.test(fee)) throw new Error('engine: feeAccount must be a 0x address');
    this.feeAccount = this.createAccount(fee);
  }

  // ===========================================================================================
  // Commands.

  /** Applies any command; dispatches on `kind`. Never throws for bad input. */
  apply(cmd: EngineCommand): CommandResult {
    if (cmd === null || typeof cmd !== 'object') return reject('INVALID', 'command: must be an object');
    switch (cmd.kind) {
      case 'deposit':
        return this.deposit(cmd);
      case 'withdraw':
        return this.withdraw(cmd);
      case 'placeOrder':
        return this.placeOrder(cmd);
      case 'cancelOrder':
        return this.cancelOrder(cmd);
      case 'cancelOrders':
        return this.cancelOrders(cmd);
      case 'cancelAll':
        return this.cancelAll(cmd);
      case 'setLeverage':
        return this.setLeverage(cmd);
      case 'adjustMargin':
        return this.adjustMargin(cmd);
      case 'setMarkPrice':
        return this.setMarkPrice(cmd);
      case 'applyFunding':
        return this.applyFunding(cmd);
      default:
        return reject('INVALID', `kind: unknown command ${JSON.stringify((cmd as { kind?: unknown }).kind)}`);
    }
  }

  deposit(cmd: DepositCommand): Accepted | Rejected {
    const bad = this.checkBase(cmd) ?? this.checkAmount(cmd.amount, 'amount');
    if (bad) return bad;
    const address = this.normaliseAccount(cmd.account);
    if (address === null) return reject('INVALID', 'account: must be a 0x address');
    this.begin(cmd);
    const acct = this.accounts.get(address) ?? this.createAccount(address);
    acct.collateral += cmd.amount;
    acct.deposited += cmd.amount;
    this.emitBalance(acct, cmd.amount, 'deposit');
    return this.accepted();
  }

  withdraw(cmd: WithdrawCommand): Accepted | Rejected {
    const bad = this.checkBase(cmd) ?? this.checkAmount(cmd.amount, 'amount');
    if (bad) return bad;
    const acct = this.accountOf(cmd.account);
    if (!(acct instanceof Account)) return acct;
    const withdrawable = this.free(acct, true);
    if (cmd.amount > withdrawable) return reject('INSUFFICIENT_BALANCE', `amount: more than the withdrawable ${withdrawable}`);
    this.begin(cmd);
    acct.collateral -= cmd.amount;
    acct.withdrawn += cmd.amount;
    this.emitBalance(acct, -cmd.amount, 'withdraw');
    return this.accepted();
  }

  placeOrder(cmd: PlaceOrderCommand): PlaceOrderResult {
    const bad = this.checkBase(cmd);
    if (bad) return bad;
    const acct = this.accountOf(cmd.account);
    if (!(acct instanceof Account)) return acct;
    if (acct === this.feeAccount) return reject('INVALID', 'account: the fee account does not trade');

    const cid = cmd.clientOrderId;
    let cidKey: string | null = null;
    if (cid !== undefined && cid !== null) {
      if (typeof cid !== 'string' || cid.length === 0 || cid.length > MAX_CLIENT_ORDER_ID) {
        return reject('INVALID', `clientOrderId: a string of 1..${MAX_CLIENT_ORDER_ID} characters`);
      }
      cidKey = acct.address + '\n' + cid;
      const first = this.clientOrders.get(cidKey);
      if (first !== undefined) {
        return {
          ok: true, code: 'OK', events: [], fills: [], duplicate: true,
          order: { orderId: first.orderId, status: first.status, sizeLots: first.sizeLots, filledLots: first.filledLots, remainingLots: first.remainingLots },
        };
      }
    }

    const inst = this.instruments.get(cmd.symbol);
    if (inst === undefined) return reject('UNKNOWN_SYMBOL', `symbol: unknown ${JSON.stringify(cmd.symbol)}`);
    const spec = inst.spec;
    const side = cmd.side;
    if (side !== 'BUY' && side !== 'SELL') return reject('INVALID', 'side: BUY or SELL');
    const type = cmd.type;
    if (type !== 'LIMIT' && type !== 'MARKET') return reject('INVALID', 'type: LIMIT or MARKET');
    let tif = cmd.timeInForce;
    if (type === 'MARKET') {
      tif ??= 'IOC';
      if (tif !== 'IOC' && tif !== 'FOK') return reject('INVALID', 'timeInForce: a MARKET order is IOC or FOK');
    } else {
      tif ??= 'GTC';
      if (tif !== 'GTC' && tif !== 'IOC' && tif !== 'FOK' && tif !== 'POST_ONLY') return reject('INVALID', 'timeInForce: GTC, IOC, FOK or POST_ONLY');
    }
    const reduceOnly = cmd.reduceOnly ?? false;
    if (typeof reduceOnly !== 'boolean') return reject('INVALID', 'reduceOnly: a boolean');
    const size = cmd.sizeLots;
    if (typeof size !== 'number' || !Number.isSafeInteger(size)) return reject('INVALID', 'sizeLots: an integer number of lots');
    if (size < spec.minSizeLots || size > spec.maxSizeLots) {
      return reject('SIZE_OUT_OF_RANGE', `sizeLots: between ${spec.minSizeLots} and ${spec.maxSizeLots} lots`);
    }
    let limit: number;
    const price = cmd.priceTicks;
    if (price === undefined || price === null) {
      if (type === 'LIMIT') return reject('INVALID', 'priceTicks: required for a LIMIT order');
      limit = side === 'BUY' ? MARKET_BUY_LIMIT : MARKET_SELL_LIMIT;
    } else {
      if (typeof price !== 'number' || !Number.isSafeInteger(price)) return reject('INVALID', 'priceTicks: an integer number of ticks');
      if (price <= 0 || price > spec.maxPriceTicks) return reject('PRICE_OUT_OF_RANGE', `priceTicks: between 1 and ${spec.maxPriceTicks}`);
      if (spec.priceBandPpm !== 0 && inst.markTicks !== 0 && type === 'LIMIT') {
        const band = (BigInt(inst.markTicks) * BigInt(spec.priceBandPpm)) / PPM;
        const p = BigInt(price);
        const m = BigInt(inst.markTicks);
        if (p > m + band || p < m - band) return reject('PRICE_OUT_OF_RANGE', `priceTicks: more than ${spec.priceBandPpm} ppm from the mark`);
      }
      limit = price;
    }
    if (cmd.expiresAtMs !== undefined && cmd.expiresAtMs !== null) {
      if (!isSafeNonNegInt(cmd.expiresAtMs)) return reject('INVALID', 'expiresAtMs: milliseconds');
      if (cmd.ts > cmd.expiresAtMs) return reject('ORDER_EXPIRED', 'expiresAtMs: the order has expired');
    }

    const existing = acct.positions.get(spec.symbol);
    const posSize = existing === undefined ? 0 : existing.sizeLots;
    let lots = size;
    if (reduceOnly) {
      // Reduce-only: the position must be on the other side; the size is capped to it.
      const reducible = side === 'BUY' ? -posSize : posSize;
      if (reducible <= 0) return reject('REDUCE_ONLY_WOULD_INCREASE', 'reduceOnly: no position on the other side to reduce');
      if (lots > reducible) lots = reducible;
    }
    const book = inst.book;
    if (tif === 'POST_ONLY') {
      const best = book.oppositeOf(side).best();
      if (best !== undefined && OrderBook.crosses(side, limit, best.priceTicks)) {
        return reject('POST_ONLY_WOULD_CROSS', 'timeInForce: a POST_ONLY order would take liquidity');
      }
    }

    // Plan the match without changing anything.
    const remainingAfter = this.plan(inst, acct, side, limit, lots);
    const filled = lots - remainingAfter;
    if (tif === 'FOK' && remainingAfter > 0) {
      this.resetPlan();
      return reject('FOK_NOT_FILLED', 'timeInForce: FOK could not be filled in full');
    }
    const ioc = type === 'MARKET' || tif === 'IOC' || tif === 'FOK';
    if (ioc && filled === 0 && !this.planStp) {
      this.resetPlan();
      return reject('NO_LIQUIDITY', 'no resting liquidity within the price');
    }
    const rests = remainingAfter > 0 && !ioc && !this.planStp;
    const position = existing ?? null;
    const imr = position === null ? imrFor(spec, inst.defaultLeverage) : position.imrPpm;
    const perLot = rests ? this.reservePerLot(inst, side, limit, imr, reduceOnly) : 0n;
    const newReserve = perLot * BigInt(remainingAfter);

    // Admission: free collateral after the fills and the new reserve must be ≥ 0, or not below what it was.
    const post = this.postTradeFree(acct, inst, position, side, newReserve);
    if (post < 0n && post < this.free(acct, false)) {
      this.resetPlan();
      return reject('INSUFFICIENT_MARGIN', `free collateral would be ${post}`);
    }

    // Execute.
    this.begin(cmd);
    const pos = position ?? this.materialisePosition(acct, inst);
    const orderId = this.nextOrderId++;
    const order = new EngineOrder(orderId, side, limit, lots, acct, pos, type, tif, lots, reduceOnly, cid ?? null, cmd.ts);
    this.events.push({
      seq: this.nextSeq++, ts: this.cmdTs, commandId: this.cmdId, type: 'orderAccepted',
      orderId, account: acct.address, symbol: spec.symbol, side, orderType: type, timeInForce: tif,
      priceTicks: price === undefined || price === null ? null : price,
      sizeLots: lots, requestedSizeLots: size, reduceOnly, clientOrderId: cid ?? null,
    });
    const fills: TradeEvent[] = [];
    const collateralBefore = acct.collateral;
    const feeBefore = this.feeAccount.collateral;
    const n = this.planN;
    for (let i = 0; i < n; i++) {
      const maker = this.planMakers[i];
      const q = this.planFillLots[i];
      if (q > 0) fills.push(this.executeFill(inst, order, maker, q));
      if (this.planCancel[i]) this.finishOrder(maker, 'EXPIRED', 'REDUCE_ONLY');
    }
    this.resetPlan();
    if (order.remainingLots !== remainingAfter) throw new Error('engine: execution diverged from the plan');

    let status: OrderOutcome['status'];
    if (remainingAfter === 0) {
      status = 'FILLED';
      this.emitDone(order, 'FILLED', 'FILLED', 0);
    } else if (!rests) {
      status = 'EXPIRED';
      this.emitDone(order, 'EXPIRED', this.planStp ? 'SELF_TRADE_PREVENTION' : 'IOC_REMAINDER', remainingAfter);
    } else {
      status = filled > 0 ? 'PARTIALLY_FILLED' : 'NEW';
      order.reservePerLot = perLot;
      acct.reserved += newReserve;
      book.add(order);
      this.linkOrder(order);
      this.events.push({
        seq: this.nextSeq++, ts: this.cmdTs, commandId: this.cmdId, type: 'orderResting',
        orderId, account: acct.address, symbol: spec.symbol, side, priceTicks: limit, remainingLots: remainingAfter, reserved: newReserve,
      });
    }
    if (filled > 0) {
      this.emitPosition(pos);
      this.emitBalance(acct, acct.collateral - collateralBefore, 'trade');
      const fees = this.feeAccount.collateral - feeBefore;
      if (fees !== 0n) this.emitBalance(this.feeAccount, fees, 'fee');
    }
    const outcome: OrderOutcome = { orderId, status, sizeLots: lots, filledLots: filled, remainingLots: rests ? remainingAfter : 0 };
    if (cidKey !== null) this.clientOrders.set(cidKey, { ...outcome, account: acct.address, clientOrderId: cid as string });
    return { ok: true, code: 'OK', events: this.end(), order: outcome, fills, duplicate: false };
  }

  cancelOrder(cmd: CancelOrderCommand): Accepted | Rejected {
    const bad = this.checkBase(cmd);
    if (bad) return bad;
    const acct = this.accountOf(cmd.account);
    if (!(acct instanceof Account)) {
      return acct.code === 'UNKNOWN_ACCOUNT' ? reject('ORDER_NOT_FOUND', 'orderId: no such order for this account') : acct;
    }
    const code = this.cancelCheck(acct, cmd.orderId);
    if (code !== 'OK') return reject(code, code === 'ORDER_NOT_OPEN' ? 'orderId: the order is no longer open' : 'orderId: no such order for this account');
    this.begin(cmd);
    this.finishOrder(this.orders.get(cmd.orderId) as EngineOrder, 'CANCELED', 'USER_CANCEL');
    return this.accepted();
  }

  cancelOrders(cmd: CancelOrdersCommand): CancelOrdersResult {
    const bad = this.checkBase(cmd);
    if (bad) return bad;
    const ids = cmd.orderIds;
    if (!Array.isArray(ids) || ids.length === 0 || ids.length > MAX_BATCH_CANCEL) return reject('INVALID', `orderIds: 1..${MAX_BATCH_CANCEL} order ids`);
    const found = this.accountOf(cmd.account);
    if (!(found instanceof Account) && found.code !== 'UNKNOWN_ACCOUNT') return found;
    const acct = found instanceof Account ? found : null;
    this.begin(cmd);
    const cancels: CancelOutcome[] = [];
    for (const id of ids) {
      const code = acct === null ? 'ORDER_NOT_FOUND' : this.cancelCheck(acct, id);
      if (code === 'OK') this.finishOrder(this.orders.get(id) as EngineOrder, 'CANCELED', 'USER_CANCEL');
      cancels.push({ orderId: id, code });
    }
    return { ...this.accepted(), cancels };
  }

  cancelAll(cmd: CancelAllCommand): CancelAllResult {
    const bad = this.checkBase(cmd);
    if (bad) return bad;
    const symbol = cmd.symbol;
    if (symbol !== undefined && symbol !== null && !this.instruments.has(symbol)) return reject('UNKNOWN_SYMBOL', `symbol: unknown ${JSON.stringify(symbol)}`);
    const found = this.accountOf(cmd.account);
    if (!(found instanceof Account) && found.code !== 'UNKNOWN_ACCOUNT') return found;
    this.begin(cmd);
    const canceledOrderIds: number[] = [];
    if (found instanceof Account) {
      for (let o = found.ordersHead; o !== null; ) {
        const next = o.accNext;
        if (symbol === undefined || symbol === null || o.position.inst.spec.symbol === symbol) {
          canceledOrderIds.push(o.id);
          this.finishOrder(o, 'CANCELED', 'USER_CANCEL');
        }
        o = next;
      }
    }
    return { ...this.accepted(), canceledOrderIds };
  }

  setLeverage(cmd: SetLeverageCommand): Accepted | Rejected {
    const bad = this.checkBase(cmd);
    if (bad) return bad;
    const acct = this.accountOf(cmd.account);
    if (!(acct instanceof Account)) return acct;
    const inst = this.instruments.get(cmd.symbol);
    if (inst === undefined) return reject('UNKNOWN_SYMBOL', `symbol: unknown ${JSON.stringify(cmd.symbol)}`);
    const leverage = cmd.leverage;
    if (!isSafePosInt(leverage)) return reject('INVALID', 'leverage: a positive integer');
    if (leverage > inst.spec.maxLeverage) return reject('LEVERAGE_EXCEEDED', `leverage: at most ${inst.spec.maxLeverage}`);
    const mode = cmd.marginMode;
    if (mode !== undefined && mode !== null && mode !== 'cross' && mode !== 'isolated') return reject('INVALID', 'marginMode: cross or isolated');
    const existing = acct.positions.get(inst.spec.symbol);
    const newMode: MarginMode = mode ?? existing?.mode ?? 'cross';
    if (existing !== undefined) {
      if (newMode !== existing.mode && (existing.sizeLots !== 0 || existing.openOrders > 0)) {
        return reject('MARGIN_MODE_LOCKED', 'marginMode: changes only with no position and no open orders on the symbol');
      }
      const newImr = imrFor(inst.spec, leverage);
      if (existing.sizeLots !== 0 && existing.mode === 'isolated') {
        const { upnl, notional } = this.valuation(existing);
        const need = ceilDiv(abs(notional) * newImr, PPM);
        if (existing.isolatedMargin + (upnl < 0n ? upnl : 0n) < need) {
          return reject('INSUFFICIENT_MARGIN', 'leverage: the isolated margin would not cover the initial margin; add margin first');
        }
      }
      // Tentatively apply: the position's rate and the reserves of its open orders at the current mark.
      const pre = this.free(acct, false);
      const oldImr = existing.imrPpm;
      const oldLeverage = existing.leverage;
      const saved: Array<[EngineOrder, bigint]> = [];
      existing.imrPpm = newImr;
      existing.leverage = leverage;
      for (let o = acct.ordersHead; o !== null; o = o.accNext) {
        if (o.position !== existing) continue;
        saved.push([o, o.reservePerLot]);
        const perLot = this.reservePerLot(inst, o.side, o.priceTicks, newImr, o.reduceOnly);
        acct.reserved += (perLot - o.reservePerLot) * BigInt(o.remainingLots);
        o.reservePerLot = perLot;
      }
      const post = this.free(acct, false);
      if (post < 0n && post < pre) {
        existing.imrPpm = oldImr;
        existing.leverage = oldLeverage;
        for (const [o, perLot] of saved) {
          acct.reserved += (perLot - o.reservePerLot) * BigInt(o.remainingLots);
          o.reservePerLot = perLot;
        }
        return reject('INSUFFICIENT_MARGIN', `leverage: free collateral would be ${post}`);
      }
      this.begin(cmd);
      existing.mode = newMode;
    } else {
      this.begin(cmd);
      const pos = this.materialisePosition(acct, inst);
      pos.leverage = leverage;
      pos.imrPpm = imrFor(inst.spec, leverage);
      pos.mode = newMode;
    }
    this.events.push({
      seq: this.nextSeq++, ts: this.cmdTs, commandId: this.cmdId, type: 'leverageChanged',
      account: acct.address, symbol: inst.spec.symbol, leverage, marginMode: newMode,
    });
    return this.accepted();
  }

  adjustMargin(cmd: AdjustMarginCommand): Accepted | Rejected {
    const bad = this.checkBase(cmd);
    if (bad) return bad;
    const amount = cmd.amount;
    if (typeof amount !== 'bigint' || amount === 0n || abs(amount) > MAX_AMOUNT) return reject('INVALID', 'amount: a non-zero bigint of micro-USD');
    const acct = this.accountOf(cmd.account);
    if (!(acct instanceof Account)) return acct;
    const inst = this.instruments.get(cmd.symbol);
    if (inst === undefined) return reject('UNKNOWN_SYMBOL', `symbol: unknown ${JSON.stringify(cmd.symbol)}`);
    const pos = acct.positions.get(inst.spec.symbol);
    if (pos === undefined || pos.sizeLots === 0 || pos.mode !== 'isolated') return reject('POSITION_NOT_OPEN', 'symbol: no open isolated position');
    if (amount > 0n) {
      const withdrawable = this.free(acct, true);
      if (amount > withdrawable) return reject('INSUFFICIENT_MARGIN', `amount: more than the free ${withdrawable}`);
    } else {
      const { upnl, notional } = this.valuation(pos);
      const need = ceilDiv(abs(notional) * pos.imrPpm, PPM);
      const removable = pos.isolatedMargin + (upnl < 0n ? upnl : 0n) - need;
      const cap = removable < pos.isolatedMargin ? removable : pos.isolatedMargin;
      if (-amount > cap) return reject('INSUFFICIENT_MARGIN', `amount: at most ${cap > 0n ? cap : 0n} can be removed`);
    }
    this.begin(cmd);
    pos.isolatedMargin += amount;
    acct.collateral -= amount;
    this.emitPosition(pos);
    this.emitBalance(acct, -amount, 'margin');
    return this.accepted();
  }

  setMarkPrice(cmd: SetMarkPriceCommand): Accepted | Rejected {
    const bad = this.checkBase(cmd);
    if (bad) return bad;
    const inst = this.instruments.get(cmd.symbol);
    if (inst === undefined) return reject('UNKNOWN_SYMBOL', `symbol: unknown ${JSON.stringify(cmd.symbol)}`);
    const { markPriceTicks, indexPriceTicks } = cmd;
    if (!isSafePosInt(markPriceTicks) || markPriceTicks > inst.spec.maxPriceTicks) return reject('PRICE_OUT_OF_RANGE', 'markPriceTicks: 1..maxPriceTicks');
    if (!isSafePosInt(indexPriceTicks) || indexPriceTicks > inst.spec.maxPriceTicks) return reject('PRICE_OUT_OF_RANGE', 'indexPriceTicks: 1..maxPriceTicks');
    this.begin(cmd);
    inst.markTicks = markPriceTicks;
    inst.indexTicks = indexPriceTicks;
    this.events.push({ seq: this.nextSeq++, ts: this.cmdTs, commandId: this.cmdId, type: 'markPrice', symbol: inst.spec.symbol, markPriceTicks, indexPriceTicks });
    return this.accepted();
  }

  applyFunding(cmd: ApplyFundingCommand): Accepted | Rejected {
    const bad = this.checkBase(cmd);
    if (bad) return bad;
    const inst = this.instruments.get(cmd.symbol);
    if (inst === undefined) return reject('UNKNOWN_SYMBOL', `symbol: unknown ${JSON.stringify(cmd.symbol)}`);
    const rate = cmd.rateE9;
    if (typeof rate !== 'bigint' || abs(rate) > MAX_FUNDING_RATE_E9) return reject('INVALID', `rateE9: a bigint with |rate| ≤ ${MAX_FUNDING_RATE_E9}`);
    this.begin(cmd);
    const mark = inst.valuationTicks;
    const open = [...inst.positions].filter((p) => p.sizeLots !== 0);
    // Account order: the events do not depend on the order positions were opened in.
    open.sort((a, b) => ((a.account as Account).address < (b.account as Account).address ? -1 : 1));
    let paid = 0n;
    let received = 0n;
    const absRate = abs(rate);
    if (rate !== 0n && mark !== 0) {
      const markUnit = BigInt(mark) * inst.unit;
      for (const pos of open) {
        const acct = pos.account as Account;
        const exact = BigInt(pos.sizeLots < 0 ? -pos.sizeLots : pos.sizeLots) * markUnit * absRate;
        // Positive rate: longs pay. Payers round up, receivers round down.
        const pays = rate > 0n ? pos.sizeLots > 0 : pos.sizeLots < 0;
        const amount = pays ? -ceilDiv(exact, RATE_E9) : floorDiv(exact, RATE_E9);
        if (pays) paid -= amount;
        else received += amount;
        pos.funding += amount;
        acct.funding += amount;
        acct.collateral += amount;
        this.events.push({
          seq: this.nextSeq++, ts: this.cmdTs, commandId: this.cmdId, type: 'fundingPayment',
          account: acct.address, symbol: inst.spec.symbol, sizeLots: pos.sizeLots, markPriceTicks: mark, rateE9: rate, amount,
        });
        if (amount !== 0n) this.emitBalance(acct, amount, 'funding');
      }
    }
    const remainder = paid - received;
    if (remainder !== 0n) {
      this.feeAccount.collateral += remainder;
      this.feeAccount.funding += remainder;
      this.emitBalance(this.feeAccount, remainder, 'funding');
    }
    inst.lastFundingTs = cmd.ts;
    inst.lastFundingRateE9 = rate;
    this.events.push({
      seq: this.nextSeq++, ts: this.cmdTs, commandId: this.cmdId, type: 'fundingApplied',
      symbol: inst.spec.symbol, rateE9: rate, markPriceTicks: mark, paid, received, remainder,
    });
    return this.accepted();
  }

  // ===========================================================================================
  // Matching.

  /**
   * Walks the opposite side from the best price and records what a taker would do, changing nothing
   * but the scratch fields: fills per maker, reduce-only makers that can no longer reduce (to cancel),
   * and whether the walk stopped at the taker's own order (self-trade prevention). Returns the lots
   * the taker would have left.
   */
  private plan(inst: Instrument, acct: Account, side: Side, limit: number, lots: number): number {
    const levels = inst.book.oppositeOf(side).levels;
    this.planN = 0;
    this.planStp = false;
    let remaining = lots;
    const buy = side === 'BUY';
    outer: for (let li = levels.length - 1; li >= 0 && remaining > 0; li--) {
      const level = levels[li];
      if (buy ? level.priceTicks > limit : level.priceTicks < limit) break;
      for (let m = level.head as EngineOrder | null; m !== null && remaining > 0; m = m.next as EngineOrder | null) {
        const mAcct = m.account;
        if (mAcct === acct) {
          this.planStp = true;
          break outer;
        }
        let cap = m.remainingLots;
        let cancel = false;
        if (m.reduceOnly) {
          // What the maker can still reduce after the fills already planned for its account.
          const size = m.position.sizeLots;
          const reducible = Math.max(0, (m.side === 'SELL' ? size : -size) - mAcct.planLots);
          if (reducible < cap) {
            cap = reducible;
            cancel = true;
          }
        }
        const q = cap < remaining ? cap : remaining;
        if (q > 0) {
          if (mAcct.planLots === 0) this.planTouched.push(mAcct);
          mAcct.planLots += q;
          remaining -= q;
        }
        const i = this.planN++;
        this.planMakers[i] = m;
        this.planFillLots[i] = q;
        this.planCancel[i] = cancel && q === cap;
      }
    }
    return remaining;
  }

  private resetPlan(): void {
    const touched = this.planTouched;
    if (touched.length !== 0) {
      for (let i = 0; i < touched.length; i++) touched[i].planLots = 0;
      touched.length = 0;
    }
    // Drop maker references so cancelled orders can be collected.
    for (let i = 0; i < this.planN; i++) this.planMakers[i] = undefined as unknown as EngineOrder;
    this.planN = 0;
  }

  /**
   * The taker's free collateral after the planned fills and with `newReserve` added, computed on a
   * scratch copy of its position with the same arithmetic the execution uses.
   */
  private postTradeFree(acct: Account, inst: Instrument, position: Position | null, side: Side, newReserve: bigint): bigint {
    const n = this.planN;
    let anyFill = false;
    for (let i = 0; i < n; i++) if (this.planFillLots[i] > 0) anyFill = true;
    if (!anyFill) return this.free(acct, false) - newReserve;
    const sim = (inst.scratch ??= new Position(null, inst, inst.defaultLeverage));
    if (position === null) {
      sim.sizeLots = 0;
      sim.entryNotional = 0n;
      sim.isolatedMargin = 0n;
      sim.mode = 'cross';
      sim.imrPpm = imrFor(inst.spec, inst.defaultLeverage);
    } else {
      sim.sizeLots = position.sizeLots;
      sim.entryNotional = position.entryNotional;
      sim.isolatedMargin = position.isolatedMargin;
      sim.mode = position.mode;
      sim.imrPpm = position.imrPpm;
    }
    const buy = side === 'BUY';
    let delta = 0n;
    let lastPrice = 0;
    for (let i = 0; i < n; i++) {
      const q = this.planFillLots[i];
      if (q === 0) continue;
      const price = this.planMakers[i].priceTicks;
      const notional = BigInt(q) * BigInt(price) * inst.unit;
      const realised = this.applyFill(sim, buy, q, notional);
      delta += realised - this.fillBucketIn - ceilDiv(notional * inst.takerFee, PPM);
      lastPrice = price;
    }
    let f = acct.collateral + delta - acct.reserved - newReserve;
    const list = acct.positionList;
    for (let i = 0; i < list.length; i++) {
      const pos = list[i];
      if (pos !== position) f += this.contribution(pos, pos.inst.valuationTicks, false);
    }
    // Without a mark the trade itself moves the valuation price.
    f += this.contribution(sim, inst.markTicks !== 0 ? inst.markTicks : lastPrice, false);
    return f;
  }

  /** One fill of the taker against a resting maker, at the maker's price. */
  private executeFill(inst: Instrument, taker: EngineOrder, maker: EngineOrder, lots: number): TradeEvent {
    const price = maker.priceTicks;
    const notional = BigInt(lots) * BigInt(price) * inst.unit;
    inst.book.reduce(maker, lots);
    maker.filledLots += lots;
    taker.filledLots += lots;
    taker.remainingLots -= lots;
    inst.lastTradeTicks = price;

    const mAcct = maker.account;
    const mPos = maker.position;
    const makerRealised = this.applyFill(mPos, maker.side === 'BUY', lots, notional);
    const makerFee = ceilDiv(notional * inst.makerFee, PPM);
    const makerDelta = makerRealised - makerFee - this.fillBucketIn;
    mAcct.collateral += makerDelta;
    mAcct.reserved -= maker.reservePerLot * BigInt(lots);
    mAcct.realisedPnl += makerRealised;
    mAcct.feesPaid += makerFee;
    mPos.realisedPnl += makerRealised;

    const tAcct = taker.account;
    const tPos = taker.position;
    const takerRealised = this.applyFill(tPos, taker.side === 'BUY', lots, notional);
    const takerFee = ceilDiv(notional * inst.takerFee, PPM);
    tAcct.collateral += takerRealised - takerFee - this.fillBucketIn;
    tAcct.realisedPnl += takerRealised;
    tAcct.feesPaid += takerFee;
    tPos.realisedPnl += takerRealised;

    const fees = makerFee + takerFee;
    this.feeAccount.collateral += fees;
    this.feeAccount.feesReceived += fees;

    const trade: TradeEvent = {
      seq: this.nextSeq++, ts: this.cmdTs, commandId: this.cmdId, type: 'trade',
      symbol: inst.spec.symbol, priceTicks: price, sizeLots: lots, notional, takerSide: taker.side,
      makerOrderId: maker.id, takerOrderId: taker.id, makerAccount: mAcct.address, takerAccount: tAcct.address,
      makerFee, takerFee, makerRealisedPnl: makerRealised, takerRealisedPnl: takerRealised,
    };
    this.events.push(trade);
    if (maker.remainingLots === 0) {
      this.unlinkOrder(maker);
      this.emitDone(maker, 'FILLED', 'FILLED', 0);
    }
    this.emitPosition(mPos);
    this.emitBalance(mAcct, makerDelta, 'trade');
    return trade;
  }

  /**
   * Applies a fill of `lots` (notional given) to a position: increases add to the entry cost; decreases
   * release a share of it (rounded so the realised PnL is rounded down) and realise PnL; a flip does
   * both. Isolated positions move initial margin from the wallet on increase (rounded up) and back on
   * decrease (a share, rounded up; all of it when flat). Returns the realised PnL; the margin moved into
   * the position is left in `fillBucketIn` (negative when released).
   */
  private applyFill(p: Position, buy: boolean, lots: number, notional: bigint): bigint {
    const s = p.sizeLots;
    const isolated = p.mode === 'isolated';
    let bucketIn = 0n;
    let realised = 0n;
    if (s === 0 || s > 0 === buy) {
      p.entryNotional += notional;
      p.sizeLots = buy ? s + lots : s - lots;
      if (isolated) bucketIn = ceilDiv(notional * p.imrPpm, PPM);
    } else {
      const held = s > 0 ? s : -s;
      const close = lots < held ? lots : held;
      const closeNotional = close === lots ? notional : BigInt(close) * (notional / BigInt(lots));
      const e = p.entryNotional;
      let released: bigint;
      if (close === held) released = e;
      else if (s > 0) released = ceilDiv(e * BigInt(close), BigInt(held));
      else released = floorDiv(e * BigInt(close), BigInt(held));
      realised = s > 0 ? closeNotional - released : released - closeNotional;
      p.entryNotional = e - released;
      if (isolated) {
        const b = p.isolatedMargin;
        bucketIn = close === held ? -b : -ceilDiv(b * BigInt(close), BigInt(held));
      }
      const open = lots - close;
      if (open > 0) {
        const openNotional = notional - closeNotional;
        p.entryNotional = openNotional;
        if (isolated) bucketIn += ceilDiv(openNotional * p.imrPpm, PPM);
      }
      p.sizeLots = buy ? s + lots : s - lots;
    }
    p.isolatedMargin += bucketIn;
    this.fillBucketIn = bucketIn;
    return realised;
  }

  /** Margin reserved per lot of a resting order: initial margin, the loss against the mark if filled, the maker fee. */
  private reservePerLot(inst: Instrument, side: Side, priceTicks: number, imrPpm: bigint, reduceOnly: boolean): bigint {
    const mark = inst.markTicks !== 0 ? inst.markTicks : priceTicks;
    const unit = inst.unit;
    const p = BigInt(priceTicks);
    const gap = side === 'BUY' ? priceTicks - mark : mark - priceTicks;
    let r = ceilDiv(p * unit * inst.makerFee, PPM);
    if (gap > 0) r += BigInt(gap) * unit;
    if (!reduceOnly) r += ceilDiv(BigInt(priceTicks > mark ? priceTicks : mark) * unit * imrPpm, PPM);
    return r;
  }

  // ===========================================================================================
  // Margin.

  /** Unrealised PnL and signed notional of a position at its instrument's valuation price. */
  private valuation(pos: Position, ticks = pos.inst.valuationTicks): { upnl: bigint; notional: bigint } {
    const notional = BigInt(pos.sizeLots) * BigInt(ticks) * pos.inst.unit;
    return { upnl: pos.sizeLots > 0 ? notional - pos.entryNotional : notional + pos.entryNotional, notional };
  }

  /** A position's part of free collateral: cross uPnL − IM; isolated only its deficit below zero. */
  private contribution(pos: Position, ticks: number, withdrawable: boolean): bigint {
    const s = pos.sizeLots;
    if (s === 0) return 0n;
    const notional = BigInt(s) * BigInt(ticks) * pos.inst.unit;
    const upnl = s > 0 ? notional - pos.entryNotional : notional + pos.entryNotional;
    if (pos.mode === 'cross') {
      const im = ceilDiv((s > 0 ? notional : -notional) * pos.imrPpm, PPM);
      return (withdrawable && upnl > 0n ? 0n : upnl) - im;
    }
    const t = pos.isolatedMargin + upnl;
    return t < 0n ? t : 0n;
  }

  /**
   * Free collateral: collateral − order reserves + Σ cross (uPnL − IM) + Σ isolated min(0, margin + uPnL).
   * `withdrawable` leaves out unrealised profits.
   */
  private free(acct: Account, withdrawable: boolean): bigint {
    let f = acct.collateral - acct.reserved;
    const list = acct.positionList;
    for (let i = 0; i < list.length; i++) f += this.contribution(list[i], list[i].inst.valuationTicks, withdrawable);
    return f;
  }

  // ===========================================================================================
  // Helpers.

  private checkBase(cmd: { id: unknown; ts: unknown }): Rejected | null {
    if (typeof cmd.id !== 'string' || cmd.id.length === 0 || cmd.id.length > MAX_COMMAND_ID) return reject('INVALID', `id: a string of 1..${MAX_COMMAND_ID} characters`);
    if (!isSafeNonNegInt(cmd.ts)) return reject('INVALID', 'ts: milliseconds since the epoch');
    return null;
  }

  private checkAmount(amount: unknown, field: string): Rejected | null {
    if (typeof amount !== 'bigint' || amount <= 0n || amount > MAX_AMOUNT) return reject('INVALID', `${field}: a positive bigint of micro-USD`);
    return null;
  }

  private normaliseAccount(account: unknown): string | null {
    if (typeof account !== 'string') return null;
    const a = account.toLowerCase();
    return ADDRESS_RE.test(a) ? a : null;
  }

  private accountOf(account: unknown): Account | Rejected {
    // Known addresses arrive already normalised: one map lookup, no regex.
    if (typeof account === 'string') {
      const known = this.accounts.get(account);
      if (known !== undefined) return known;
    }
    const address = this.normaliseAccount(account);
    if (address === null) return reject('INVALID', 'account: must be a 0x address');
    return this.accounts.get(address) ?? reject('UNKNOWN_ACCOUNT', 'account: no deposit yet');
  }

  private createAccount(address: string): Account {
    const acct = new Account(address, this.nextOwner++);
    this.accounts.set(address, acct);
    return acct;
  }

  private materialisePosition(acct: Account, inst: Instrument): Position {
    let pos = acct.positions.get(inst.spec.symbol);
    if (pos === undefined) {
      pos = new Position(acct, inst, inst.defaultLeverage);
      acct.positions.set(inst.spec.symbol, pos);
      acct.positionList.push(pos);
      inst.positions.add(pos);
    }
    return pos;
  }

  private cancelCheck(acct: Account, orderId: unknown): 'OK' | 'ORDER_NOT_FOUND' | 'ORDER_NOT_OPEN' | 'INVALID' {
    if (!isSafePosInt(orderId)) return 'INVALID';
    const order = this.orders.get(orderId);
    if (order === undefined) return orderId < this.nextOrderId ? 'ORDER_NOT_OPEN' : 'ORDER_NOT_FOUND';
    return order.account === acct ? 'OK' : 'ORDER_NOT_FOUND';
  }

  private linkOrder(o: EngineOrder): void {
    const acct = o.account;
    o.accPrev = acct.ordersTail;
    o.accNext = null;
    if (acct.ordersTail === null) acct.ordersHead = o;
    else acct.ordersTail.accNext = o;
    acct.ordersTail = o;
    o.position.openOrders++;
  }

  private unlinkOrder(o: EngineOrder): void {
    const acct = o.account;
    if (o.accPrev === null) acct.ordersHead = o.accNext;
    else o.accPrev.accNext = o.accNext;
    if (o.accNext === null) acct.ordersTail = o.accPrev;
    else o.accNext.accPrev = o.accPrev;
    o.accPrev = o.accNext = null;
    o.position.openOrders--;
  }

  /** Takes a resting order off the book with its reserve and reports it done. */
  private finishOrder(o: EngineOrder, status: 'CANCELED' | 'EXPIRED', reason: DoneReason): void {
    const remaining = o.remainingLots;
    o.position.inst.book.remove(o);
    this.unlinkOrder(o);
    o.account.reserved -= o.reservePerLot * BigInt(remaining);
    this.emitDone(o, status, reason, remaining);
  }

  private emitDone(o: EngineOrder, status: 'FILLED' | 'CANCELED' | 'EXPIRED', reason: DoneReason, remaining: number): void {
    this.events.push({
      seq: this.nextSeq++, ts: this.cmdTs, commandId: this.cmdId, type: 'orderDone',
      orderId: o.id, account: o.account.address, symbol: o.position.inst.spec.symbol, status, reason, filledLots: o.filledLots, remainingLots: remaining,
    });
  }

  private emitPosition(p: Position): void {
    this.events.push({
      seq: this.nextSeq++, ts: this.cmdTs, commandId: this.cmdId, type: 'positionChanged',
      account: (p.account as Account).address, symbol: p.inst.spec.symbol, sizeLots: p.sizeLots, entryNotional: p.entryNotional,
      isolatedMargin: p.isolatedMargin, realisedPnl: p.realisedPnl, marginMode: p.mode, leverage: p.leverage,
    });
  }

  private emitBalance(acct: Account, delta: bigint, reason: BalanceReason): void {
    this.events.push({ seq: this.nextSeq++, ts: this.cmdTs, commandId: this.cmdId, type: 'balanceChanged', account: acct.address, collateral: acct.collateral, delta, reason });
  }

  private begin(cmd: { id: string; ts: number }): void {
    this.events = [];
    this.cmdId = cmd.id;
    this.cmdTs = cmd.ts;
  }

  private end(): EngineEvent[] {
    const events = this.events;
    this.events = [];
    return events;
  }

  private accepted(): Accepted {
    return { ok: true, code: 'OK', events: this.end() };
  }

  // ===========================================================================================
  // Reads (for the API and the workers).

  get lastSeq(): number {
    return this.nextSeq - 1;
  }

  get feeAccountAddress(): string {
    return this.feeAccount.address;
  }

  instrument(symbol: string): InstrumentSpec | undefined {
    return this.instruments.get(symbol)?.spec;
  }

  instrumentList(): InstrumentSpec[] {
    return [...this.instruments.values()].map((i) => i.spec);
  }

  /** Mark, index and last trade prices (0 = never set). */
  prices(symbol: string): { markPriceTicks: number; indexPriceTicks: number; lastTradePriceTicks: number; lastFundingTs: number; lastFundingRateE9: bigint } | undefined {
    const inst = this.instruments.get(symbol);
    if (inst === undefined) return undefined;
    return { markPriceTicks: inst.markTicks, indexPriceTicks: inst.indexTicks, lastTradePriceTicks: inst.lastTradeTicks, lastFundingTs: inst.lastFundingTs, lastFundingRateE9: inst.lastFundingRateE9 };
  }

  bestBidAsk(symbol: string): { bidTicks: number | undefined; askTicks: number | undefined } | undefined {
    const inst = this.instruments.get(symbol);
    if (inst === undefined) return undefined;
    return { bidTicks: inst.book.bestBid(), askTicks: inst.book.bestAsk() };
  }

  /**
   * Open interest in lots: the sum of the long positions (equal to the shorts). Walks the
   * instrument's positions: for a ticker read, never on the command path.
   */
  openInterest(symbol: string): number | undefined {
    const inst = this.instruments.get(symbol);
    if (inst === undefined) return undefined;
    let lots = 0;
    for (const p of inst.positions) if (p.sizeLots > 0) lots += p.sizeLots;
    return lots;
  }

  /** Aggregated book, best first: `[priceTicks, lots]`. */
  depth(symbol: string, levels = 50): { bids: Array<[number, number]>; asks: Array<[number, number]> } | undefined {
    return this.instruments.get(symbol)?.book.depth(levels);
  }

  /** A resting order (done orders live in the journal, not here). */
  getOrder(orderId: number): OrderView | undefined {
    const o = this.orders.get(orderId);
    return o === undefined ? undefined : this.orderView(o);
  }

  /** The account's resting orders in placement order. */
  openOrders(account: string, symbol?: string): OrderView[] {
    const acct = this.accounts.get(account.toLowerCase());
    const out: OrderView[] = [];
    if (acct === undefined) return out;
    for (let o = acct.ordersHead; o !== null; o = o.accNext) {
      if (symbol === undefined || o.position.inst.spec.symbol === symbol) out.push(this.orderView(o));
    }
    return out;
  }

  getAccount(account: string): AccountView | undefined {
    const acct = this.accounts.get(account.toLowerCase());
    if (acct === undefined) return undefined;
    const positions: PositionView[] = [];
    for (const p of acct.positions.values()) {
      const ticks = p.inst.valuationTicks;
      const { upnl, notional } = p.sizeLots === 0 ? { upnl: 0n, notional: 0n } : this.valuation(p, ticks);
      positions.push({
        symbol: p.inst.spec.symbol, sizeLots: p.sizeLots, entryNotional: p.entryNotional, isolatedMargin: p.isolatedMargin,
        marginMode: p.mode, leverage: p.leverage, realisedPnl: p.realisedPnl, funding: p.funding, unrealisedPnl: upnl,
        initialMargin: ceilDiv(abs(notional) * p.imrPpm, PPM), maintenanceMargin: ceilDiv(abs(notional) * p.inst.mmrPpm, PPM),
      });
    }
    positions.sort((a, b) => (a.symbol < b.symbol ? -1 : 1));
    return {
      account: acct.address, collateral: acct.collateral, reserved: acct.reserved, deposited: acct.deposited, withdrawn: acct.withdrawn,
      realisedPnl: acct.realisedPnl, feesPaid: acct.feesPaid, feesReceived: acct.feesReceived, funding: acct.funding, positions,
    };
  }

  marginSummary(account: string): MarginSummary | undefined {
    const acct = this.accounts.get(account.toLowerCase());
    if (acct === undefined) return undefined;
    let crossUpnl = 0n;
    let crossIm = 0n;
    let crossMm = 0n;
    let isoEquity = 0n;
    let liquidatable = false;
    for (const p of acct.positions.values()) {
      if (p.sizeLots === 0) continue;
      const { upnl, notional } = this.valuation(p);
      const im = ceilDiv(abs(notional) * p.imrPpm, PPM);
      const mm = ceilDiv(abs(notional) * p.inst.mmrPpm, PPM);
      if (p.mode === 'cross') {
        crossUpnl += upnl;
        crossIm += im;
        crossMm += mm;
      } else {
        isoEquity += p.isolatedMargin + upnl;
        if (p.isolatedMargin + upnl < mm) liquidatable = true;
      }
    }
    if (acct.collateral + crossUpnl < crossMm) liquidatable = true;
    return {
      collateral: acct.collateral, equity: acct.collateral + crossUpnl + isoEquity, crossUnrealisedPnl: crossUpnl,
      crossInitialMargin: crossIm, crossMaintenanceMargin: crossMm, orderReserve: acct.reserved,
      freeCollateral: this.free(acct, false), withdrawable: this.free(acct, true), liquidatable,
    };
  }

  private orderView(o: EngineOrder): OrderView {
    return {
      orderId: o.id, account: o.account.address, symbol: o.position.inst.spec.symbol, side: o.side, type: o.type, timeInForce: o.timeInForce,
      priceTicks: o.priceTicks, sizeLots: o.sizeLots, filledLots: o.filledLots, remainingLots: o.remainingLots, reduceOnly: o.reduceOnly,
      clientOrderId: o.clientOrderId, status: o.filledLots > 0 ? 'PARTIALLY_FILLED' : 'NEW', reserved: o.reservePerLot * BigInt(o.remainingLots), createdTs: o.createdTs,
    };
  }

  // ===========================================================================================
  // Durability.

  /** The complete state, JSON-safe (bigints as decimal strings) and canonical (sorted). */
  snapshot(): EngineSnapshot {
    const instruments = [...this.instruments.values()].map((i) => ({
      config: stripSpec(i.spec), markPriceTicks: i.markTicks, indexPriceTicks: i.indexTicks, lastTradePriceTicks: i.lastTradeTicks,
      lastFundingTs: i.lastFundingTs, lastFundingRateE9: i.lastFundingRateE9.toString(),
    }));
    const accounts: AccountSnapshot[] = [...this.accounts.values()]
      .sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0))
      .map((a) => ({
        account: a.address, collateral: a.collateral.toString(), reserved: a.reserved.toString(), deposited: a.deposited.toString(),
        withdrawn: a.withdrawn.toString(), realisedPnl: a.realisedPnl.toString(), feesPaid: a.feesPaid.toString(),
        feesReceived: a.feesReceived.toString(), funding: a.funding.toString(),
        positions: [...a.positions.values()]
          .sort((x, y) => (x.inst.spec.symbol < y.inst.spec.symbol ? -1 : 1))
          .map((p) => ({
            symbol: p.inst.spec.symbol, sizeLots: p.sizeLots, entryNotional: p.entryNotional.toString(), isolatedMargin: p.isolatedMargin.toString(),
            marginMode: p.mode, leverage: p.leverage, realisedPnl: p.realisedPnl.toString(), funding: p.funding.toString(),
          })),
      }));
    const orders: OrderSnapshot[] = [...this.orders.values()]
      .sort((a, b) => a.id - b.id)
      .map((o) => ({
        orderId: o.id, account: o.account.address, symbol: o.position.inst.spec.symbol, side: o.side, type: o.type, timeInForce: o.timeInForce,
        priceTicks: o.priceTicks, sizeLots: o.sizeLots, filledLots: o.filledLots, remainingLots: o.remainingLots, reduceOnly: o.reduceOnly,
        clientOrderId: o.clientOrderId, reservePerLot: o.reservePerLot.toString(), createdTs: o.createdTs,
      }));
    const clientOrders = [...this.clientOrders.values()]
      .map((r) => ({ account: r.account, clientOrderId: r.clientOrderId, orderId: r.orderId, status: r.status, sizeLots: r.sizeLots, filledLots: r.filledLots, remainingLots: r.remainingLots }))
      .sort((a, b) => (a.account < b.account ? -1 : a.account > b.account ? 1 : a.clientOrderId < b.clientOrderId ? -1 : a.clientOrderId > b.clientOrderId ? 1 : 0));
    return {
      version: 1, nextSeq: this.nextSeq, nextOrderId: this.nextOrderId, feeAccount: this.feeAccount.address, defaultLeverage: this.defaultLeverage,
      instruments, accounts, orders, clientOrders,
    };
  }

  /** sha256 (hex) of the canonical snapshot: equal hashes mean equal states. */
  stateHash(): string {
    return createHash('sha256').update(JSON.stringify(this.snapshot())).digest('hex');
  }

  /** An engine in exactly the state of `snap`. Throws on a snapshot that is not self-consistent. */
  static fromSnapshot(snap: EngineSnapshot): PerpEngine {
    if (snap?.version !== 1) throw new Error('engine snapshot: unsupported version');
    const engine = new PerpEngine({ instruments: snap.instruments.map((i) => i.config), feeAccount: snap.feeAccount, defaultLeverage: snap.defaultLeverage });
    engine.nextSeq = snap.nextSeq;
    engine.nextOrderId = snap.nextOrderId;
    for (const s of snap.instruments) {
      const inst = engine.instruments.get(s.config.symbol) as Instrument;
      inst.markTicks = s.markPriceTicks;
      inst.indexTicks = s.indexPriceTicks;
      inst.lastTradeTicks = s.lastTradePriceTicks;
      inst.lastFundingTs = s.lastFundingTs;
      inst.lastFundingRateE9 = BigInt(s.lastFundingRateE9);
    }
    // The fee account was created by the constructor; the others in sorted order.
    for (const a of snap.accounts) {
      const acct = engine.accounts.get(a.account) ?? engine.createAccount(a.account);
      acct.collateral = BigInt(a.collateral);
      acct.deposited = BigInt(a.deposited);
      acct.withdrawn = BigInt(a.withdrawn);
      acct.realisedPnl = BigInt(a.realisedPnl);
      acct.feesPaid = BigInt(a.feesPaid);
      acct.feesReceived = BigInt(a.feesReceived);
      acct.funding = BigInt(a.funding);
      for (const p of a.positions) {
        const inst = engine.instruments.get(p.symbol);
        if (inst === undefined) throw new Error(`engine snapshot: position on unknown ${p.symbol}`);
        const pos = engine.materialisePosition(acct, inst);
        pos.sizeLots = p.sizeLots;
        pos.entryNotional = BigInt(p.entryNotional);
        pos.isolatedMargin = BigInt(p.isolatedMargin);
        pos.mode = p.marginMode;
        pos.leverage = p.leverage;
        pos.imrPpm = imrFor(inst.spec, p.leverage);
        pos.realisedPnl = BigInt(p.realisedPnl);
        pos.funding = BigInt(p.funding);
      }
    }
    let lastId = 0;
    for (const s of snap.orders) {
      if (s.orderId <= lastId || s.orderId >= snap.nextOrderId) throw new Error('engine snapshot: orders out of order');
      lastId = s.orderId;
      const acct = engine.accounts.get(s.account);
      const inst = engine.instruments.get(s.symbol);
      if (acct === undefined || inst === undefined) throw new Error(`engine snapshot: order ${s.orderId} of an unknown account or symbol`);
      const pos = engine.materialisePosition(acct, inst);
      const o = new EngineOrder(s.orderId, s.side, s.priceTicks, s.remainingLots, acct, pos, s.type, s.timeInForce, s.sizeLots, s.reduceOnly, s.clientOrderId, s.createdTs);
      o.filledLots = s.filledLots;
      o.reservePerLot = BigInt(s.reservePerLot);
      const best = inst.book.oppositeOf(s.side).best();
      if (best !== undefined && OrderBook.crosses(s.side, s.priceTicks, best.priceTicks)) throw new Error(`engine snapshot: order ${s.orderId} crosses the book`);
      inst.book.add(o);
      engine.linkOrder(o);
      acct.reserved += o.reservePerLot * BigInt(o.remainingLots);
    }
    for (const a of snap.accounts) {
      if ((engine.accounts.get(a.account) as Account).reserved !== BigInt(a.reserved)) throw new Error(`engine snapshot: reserve of ${a.account} does not match its orders`);
    }
    for (const r of snap.clientOrders) {
      engine.clientOrders.set(r.account + '\n' + r.clientOrderId, { ...r });
    }
    return engine;
  }
}

function stripSpec(spec: InstrumentSpec): InstrumentConfig {
  const { unitMicros: _unit, ...config } = spec;
  return config;
}
