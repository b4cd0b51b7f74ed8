/**
 * What the executor does with one on-chain order right now: fill it (quantity and price), close it
 * (final status), both, or nothing. Pure: no I/O, no clock of its own, bigint money only.
 *
 * The fill arithmetic is the StockRouter's own (`_recordFill`): cost and fee are rounded on the
 * order's running totals, so the quantity chosen for a buy is the largest whose charge the contract
 * will accept against what the order still has locked. See docs/executor.md.
 *
 * A stock whose StockRouter check names an oracle feed is filled only at a price the contract will
 * accept against the feed (docs/market-data.md, "On-chain oracle"): a fill the feed refuses waits
 * for a fresh quote and a fresh answer, and is rejected after the no-quote timeout.
 */
import { formatDecimal } from '../../lib/decimal.ts';
import type { MarketCalendar } from '../../marketdata/market-calendar.ts';
import type { Quote } from '../../marketdata/market-types.ts';
import { DEFAULT_QUOTE_MAX_AGE_MS, toPrice18, usableQuote } from '../quote-prices.ts';
import { DEFAULT_SESSION_FLAGS, usSessionRulesOf, type SessionAware, type SymbolSessionFlags, type UsSessionRules } from '../../marketdata/symbol-catalog.ts';
import { orderAllowed, type UsEquitySession } from '../../marketdata/us-equity-sessions.ts';
import { oracleVerdict, type FeedAnswer, type OracleVerdict } from '../../marketdata/oracle-publisher.ts';

export const PRICE_SCALE = 10n ** 18n;
export const BPS = 10_000n;
export const PRICE_DECIMALS = 18;
export const UINT128_MAX = (1n << 128n) - 1n;

/** IStockRouter.Side */
export const Side = { Buy: 0, Sell: 1 } as const;
/** IStockRouter.OrderType */
export const OrderType = { Market: 0, Limit: 1 } as const;
/** IStockRouter.OrderStatus */
export const OrderStatus = { None: 0, Open: 1, Canceling: 2, Filled: 3, Canceled: 4, Expired: 5, Rejected: 6 } as const;
export type CloseStatus = 3 | 4 | 5 | 6;

export const STATUS_NAMES: Record<number, string> = {
  0: 'None',
  1: 'Open',
  2: 'Canceling',
  3: 'Filled',
  4: 'Canceled',
  5: 'Expired',
  6: 'Rejected',
};

/**
 * IStockRouter.Order as viem decodes it from `AccountLens.getOrders` (uint8/uint32 → number,
 * wider integers → bigint).
 */
export interface ChainOrder {
  user: string;
  stock: string;
  side: number;
  orderType: number;
  status: number;
  timeInForce: number;
  deadline: number;
  createdAt: bigint;
  quantity: bigint;
  notional: bigint;
  price: bigint;
  filledQuantity: bigint;
  filledNotional: bigint;
  fees: bigint;
  locked: bigint;
  /** The stock's share multiplier the shares above are in (the router answers the current one). */
  multiplier: bigint;
}

export interface FeeConfig {
  marketFeeBps: number | bigint;
  limitFeeBps: number | bigint;
}

export type DecisionReason =
  | 'not-open'
  | 'cancel-requested'
  | 'deadline-passed'
  | 'session-closed'
  | 'market-closed'
  | 'awaiting-quote'
  | 'no-quote'
  | 'notional-too-small'
  | 'market-buy'
  | 'market-sell'
  | 'limit-not-reached'
  | 'limit-buy'
  | 'limit-sell'
  | 'lock-exhausted'
  // a market order's worst price (the user's bound) is beyond the quote:
  | 'beyond-worst-price'
  // the stock's on-chain oracle refuses the fill's price:
  | 'oracle-stale'
  | 'oracle-deviation'
  | 'oracle-invalid'
  // us-sessions only:
  | 'market-outside-regular'
  | 'not-fractionable'
  | 'session-not-allowed';

export interface FillDecision {
  fill?: { quantity: bigint; price: bigint };
  close?: CloseStatus;
  reason: DecisionReason;
}

export interface DecideInput {
  order: ChainOrder;
  /** The latest quote of the order's stock (undefined: none). */
  quote: Pick<Quote, 'bid' | 'ask' | 'timestamp'> | undefined;
  /** The router's current fee config (what `settleOrders` will charge). */
  fees: FeeConfig;
  /** ms since the epoch. */
  now: number;
  /**
   * The trading calendar. A `us-sessions` calendar (its `kind`) brings the four-session rules (the
   * venue calendar's `usSessions`, on its clock; the wall clock's for a bare calendar).
   */
  calendar: ExecutorCalendar;
  /** Under us-sessions: the session flags of the order's symbol. Default: all true. */
  sessionFlags?: SymbolSessionFlags;
  /** Largest quantity (stock units) one fill may take, e.g. a liquidity limit. Unset: no limit. */
  maxFillQuantity?: bigint;
  /** A quote older than this is not used. Default 30 s. */
  quoteMaxAgeMs?: number;
  /** An order whose stock has had no usable quote for this long is rejected. Default 60 s. */
  noQuoteTimeoutMs?: number;
  /**
   * Since when the stock has had no usable quote (ms), as observed by the caller. The wait is
   * counted from the later of this and the order's creation. Default: the order's creation.
   */
  noQuoteSince?: number;
  /**
   * Exact Σ quantity·price over the order's fills so far (the router's private `_filledValue`),
   * when the caller knows it. Only matters for a partially filled buy; without it the policy
   * assumes the largest value consistent with `filledNotional`, which never over-spends the lock.
   */
  filledValue?: bigint;
  /** The stock's oracle check as the StockRouter will apply it; undefined: the stock has none. */
  oracle?: OracleCheck;
  /**
   * Since when the stock's fills have been refused by its oracle (ms), as observed by the caller;
   * counted like `noQuoteSince`. Default: now.
   */
  oracleBlockedSince?: number;
}

/** A stock's oracle check: the router's configuration and the feed's latest round. */
export interface OracleCheck {
  /** The feed's latest round and the chain's time at the read; undefined when it could not be read. */
  reading?: FeedAnswer;
  toleranceBps: number;
  maxAgeS: number;
  /**
   * Seconds the settlement's block may come after the read: an answer that will be stale by then
   * is treated as stale now. Default {@link DEFAULT_ORACLE_AGE_MARGIN_S}.
   */
  ageMarginS?: number;
}

/** What the executor asks of the calendar. */
export type ExecutorCalendar = Pick<MarketCalendar, 'isOpen' | 'sessionClose'> & SessionAware;

export { DEFAULT_QUOTE_MAX_AGE_MS } from '../quote-prices.ts';
export const DEFAULT_NO_QUOTE_TIMEOUT_MS = 60_000;
/** An oracle answer within this many seconds of its maximum age is not relied on. */
export const DEFAULT_ORACLE_AGE_MARGIN_S = 15;

/** The StockRouter's verdict on a fill at `price` (18 decimals) against the stock's oracle. */
export function fillOracleVerdict(check: OracleCheck, price: bigint): OracleVerdict {
  if (check.reading === undefined) return 'invalid';
  return oracleVerdict(check.reading, price, PRICE_DECIMALS, check.toleranceBps, check.maxAgeS, check.ageMarginS ?? DEFAULT_ORACLE_AGE_MARGIN_S);
}

// ----------------------------------------------------------------- contract arithmetic

const ceilDiv = (a: bigint, b: bigint): bigint => (a === 0n ? 0n : (a - 1n) / b + 1n);

/** Running totals of an order as the router keeps them. */
export interface FillTotals {
  /** Σ quantity·price (scale 1e36). */
  filledValue: bigint;
  filledNotional: bigint;
  fees: bigint;
}

/** One fill as `StockRouter._recordFill` computes it: this fill's notional and fee, and the new totals. */
export function contractFill(
  totals: FillTotals,
  side: number,
  quantity: bigint,
  price: bigint,
  feeBps: bigint,
): { notional: bigint; fee: bigint; totals: FillTotals } {
  const filledValue = totals.filledValue + quantity * price;
  const filledNotional = side === Side.Buy ? ceilDiv(filledValue, PRICE_SCALE) : filledValue / PRICE_SCALE;
  const notional = filledNotional - totals.filledNotional;
  const totalFee = ceilDiv(filledNotional * feeBps, BPS);
  let fee = totalFee > totals.fees ? totalFee - totals.fees : 0n;
  if (fee > notional) fee = notional;
  return { notional, fee, totals: { filledValue, filledNotional, fees: totals.fees + fee } };
}

/**
 * The largest `filledValue` consistent with a buy's recorded `filledNotional`
 * (`filledNotional = ceil(filledValue / 1e18)`). Charges are non-decreasing in it, so a quantity
 * that fits with this value fits with the real one.
 */
export function worstCaseBuyFilledValue(filledNotional: bigint): bigint {
  return filledNotional * PRICE_SCALE;
}

/** What a buy fill of `quantity` at `price` takes from the order's lock (cost + fee). */
export function buyDebit(totals: FillTotals, quantity: bigint, price: bigint, feeBps: bigint): bigint {
  const { notional, fee } = contractFill(totals, Side.Buy, quantity, price, feeBps);
  return notional + fee;
}

/**
 * Largest quantity (≤ `cap`) whose buy debit at `price` is at most `available`. The debit is
 * non-decreasing in the quantity, so a binary search below the bound the notional alone sets is exact.
 */
export function maxBuyQuantity(
  available: bigint,
  price: bigint,
  feeBps: bigint,
  totals: FillTotals,
  cap: bigint = UINT128_MAX,
): bigint {
  if (price <= 0n || available < 0n) return 0n;
  // The running total after the fill must stay within filledNotional + available (the rounding
  // slack of earlier fills can make a tiny fill free), so nothing above this can fit.
  const room = (totals.filledNotional + available) * PRICE_SCALE - totals.filledValue;
  if (room <= 0n) return 0n;
  let hi = room / price;
  if (hi > cap) hi = cap;
  if (hi <= 0n) return 0n;
  if (buyDebit(totals, hi, price, feeBps) <= available) return hi;
  let lo = 0n; // always fits: a zero fill charges nothing
  // Invariant: lo fits, hi does not.
  while (hi - lo > 1n) {
    const mid = (lo + hi) / 2n;
    if (buyDebit(totals, mid, price, feeBps) <= available) lo = mid;
    else hi = mid;
  }
  return lo;
}

// ----------------------------------------------------------------- quotes

// toPrice18 and usableQuote live in ../quote-prices.ts (the order routes use them too).
export { toPrice18, usableQuote } from '../quote-prices.ts';

// ----------------------------------------------------------------- the decision

/** One whole share of a stock token (every Stock token has 18 decimals). */
const SHARE = 10n ** 18n;
const wholeShares = (q: bigint): bigint => q - (q % SHARE);

/** The us-sessions facts of one order: the rules on the calendar's clock, its symbol's flags, and what they imply. */
interface SessionContext {
  rules: UsSessionRules;
  flags: SymbolSessionFlags;
  isMarket: boolean;
  /** The order's quantity has a fraction of a share (a market buy, given by notional, has none). */
  fractional: boolean;
  /** It can execute only in the regular session, so its DAY ends at the regular close. */
  regularOnly: boolean;
}

function sessionContext(input: Pick<DecideInput, 'calendar' | 'sessionFlags' | 'order'>): SessionContext | undefined {
  const rules = usSessionRulesOf(input.calendar);
  if (rules === undefined) return undefined;
  const flags = input.sessionFlags ?? DEFAULT_SESSION_FLAGS;
  const isMarket = input.order.orderType === OrderType.Market;
  const fractional = input.order.quantity % SHARE !== 0n;
  return { rules, flags, isMarket, fractional, regularOnly: isMarket || (fractional && !flags.fractionalEhEnabled) };
}

/**
 * The us-sessions rules before any quote is looked at (docs/executor.md, "Sessions"): a fraction
 * of a share of a symbol that trades none is rejected; a DAY order expires at `dayOrderExpiry` of
 * its creation (its trading day's after-hours close, or its regular close when it can execute only
 * in regular hours); a market order found outside the regular session is rejected, never filled
 * there; a limit order waits for a session its symbol allows (`orderAllowed`).
 */
function sessionGate(c: SessionContext, createdAtMs: number, now: number): FillDecision | undefined {
  if (c.fractional && !c.flags.fractionable) return { close: OrderStatus.Rejected, reason: 'not-fractionable' };
  if (c.rules.dayOrderExpiry(createdAtMs, { regularOnly: c.regularOnly }) <= now) return { close: OrderStatus.Expired, reason: 'session-closed' };
  const session: UsEquitySession = c.rules.session(now);
  if (c.isMarket) return session === 'regular' ? undefined : { close: OrderStatus.Rejected, reason: 'market-outside-regular' };
  if (!orderAllowed({ session, type: 'LIMIT', fractional: c.fractional, flags: c.flags }).ok) {
    return { reason: session === 'closed' ? 'market-closed' : 'session-not-allowed' };
  }
  return undefined;
}

const isLive = (status: number): boolean => status === OrderStatus.Open || status === OrderStatus.Canceling;
const min = (a: bigint, b: bigint): bigint => (a < b ? a : b);

/**
 * The decision for one order. A fill that the stock's oracle would refuse is not made: the order
 * waits (`oracle-*`) for a fresh quote and answer, and is rejected once its stock's fills have been
 * refused for `noQuoteTimeoutMs` — the no-quote rule, as a refused price is no usable price.
 */
export function decideFill(input: DecideInput): FillDecision {
  const decision = decideOnQuote(input);
  if (!decision.fill || input.oracle === undefined) return decision;
  const verdict = fillOracleVerdict(input.oracle, decision.fill.price);
  if (verdict === 'ok') return decision;
  const reason: DecisionReason = `oracle-${verdict}`;
  const since = Math.max(Number(input.order.createdAt) * 1000, input.oracleBlockedSince ?? input.now);
  if (input.now - since >= (input.noQuoteTimeoutMs ?? DEFAULT_NO_QUOTE_TIMEOUT_MS)) return { close: OrderStatus.Rejected, reason };
  return { reason };
}

function decideOnQuote(input: DecideInput): FillDecision {
  const { order, now, calendar } = input;
  if (!isLive(order.status)) return { reason: 'not-open' };
  if (order.status === OrderStatus.Canceling) return { close: OrderStatus.Canceled, reason: 'cancel-requested' };

  const createdAtMs = Number(order.createdAt) * 1000;
  if (now > order.deadline * 1000) return { close: OrderStatus.Expired, reason: 'deadline-passed' };
  const sessions = sessionContext(input);
  if (sessions !== undefined) {
    const gate = sessionGate(sessions, createdAtMs, now);
    if (gate !== undefined) return gate;
  } else {
    const sessionClose = calendar.sessionClose(createdAtMs);
    if (sessionClose !== null && sessionClose <= now) return { close: OrderStatus.Expired, reason: 'session-closed' };
    // Closed hours (a DAY order placed overnight lives until the next session's close): wait.
    if (!calendar.isOpen(now)) return { reason: 'market-closed' };
  }

  const prices = usableQuote(input.quote, now, input.quoteMaxAgeMs);
  if (!prices) {
    const since = Math.max(createdAtMs, input.noQuoteSince ?? createdAtMs);
    if (now - since >= (input.noQuoteTimeoutMs ?? DEFAULT_NO_QUOTE_TIMEOUT_MS)) {
      return { close: OrderStatus.Rejected, reason: 'no-quote' };
    }
    return { reason: 'awaiting-quote' };
  }

  // A symbol that does not trade fractions (us-sessions, fractionable: false) fills whole shares;
  // a liquidity cap below one share still lets one through.
  const wholeOnly = sessions !== undefined && !sessions.flags.fractionable;
  const round = wholeOnly ? wholeShares : (q: bigint) => q;
  let cap = input.maxFillQuantity !== undefined && input.maxFillQuantity > 0n ? input.maxFillQuantity : UINT128_MAX;
  if (wholeOnly && cap !== UINT128_MAX) cap = cap < SHARE ? SHARE : wholeShares(cap);
  const isBuy = order.side === Side.Buy;
  const isLimit = order.orderType === OrderType.Limit;
  const feeBps = BigInt(isLimit ? input.fees.limitFeeBps : input.fees.marketFeeBps);
  const totals: FillTotals = {
    filledValue: input.filledValue ?? (isBuy ? worstCaseBuyFilledValue(order.filledNotional) : order.filledNotional * PRICE_SCALE),
    filledNotional: order.filledNotional,
    fees: order.fees,
  };

  // A market order fills at the quote only within the worst price its owner set (the router refuses
  // any fill beyond it): beyond, it closes now, as an immediate order does, with its lock back.
  const worst = isLimit ? 0n : order.price;
  if (worst > 0n && (isBuy ? prices.ask > worst : prices.bid < worst)) {
    return { close: order.filledQuantity === 0n ? OrderStatus.Rejected : OrderStatus.Filled, reason: 'beyond-worst-price' };
  }

  if (!isLimit && isBuy) {
    const price = prices.ask;
    const affordable = round(maxBuyQuantity(order.locked, price, feeBps, totals));
    if (affordable === 0n) {
      // Nothing more fits: an untouched order could never buy a unit; a filled one is done.
      return order.filledQuantity === 0n
        ? { close: OrderStatus.Rejected, reason: 'notional-too-small' }
        : { close: OrderStatus.Filled, reason: 'lock-exhausted' };
    }
    const quantity = min(affordable, cap);
    return quantity === affordable
      ? { fill: { quantity, price }, close: OrderStatus.Filled, reason: 'market-buy' }
      : { fill: { quantity, price }, reason: 'market-buy' };
  }

  const remaining = order.quantity > order.filledQuantity ? order.quantity - order.filledQuantity : 0n;
  if (remaining === 0n) return { close: OrderStatus.Filled, reason: isLimit ? (isBuy ? 'limit-buy' : 'limit-sell') : 'market-sell' };

  if (!isLimit) {
    const price = prices.bid;
    const quantity = min(remaining, cap);
    return quantity === remaining
      ? { fill: { quantity, price }, close: OrderStatus.Filled, reason: 'market-sell' }
      : { fill: { quantity, price }, reason: 'market-sell' };
  }

  if (isBuy) {
    const price = prices.ask;
    if (price > order.price) return { reason: 'limit-not-reached' };
    // The lock covers the whole order at its limit and today's fee; only a fee rise since the
    // order was placed can make it fall short, and then what fits is filled and the rest released.
    const fits = round(maxBuyQuantity(order.locked, price, feeBps, totals, remaining));
    if (fits === 0n) {
      return order.filledQuantity === 0n
        ? { close: OrderStatus.Rejected, reason: 'lock-exhausted' }
        : { close: OrderStatus.Filled, reason: 'lock-exhausted' };
    }
    const quantity = min(fits, cap);
    if (quantity < fits) return { fill: { quantity, price }, reason: 'limit-buy' };
    return { fill: { quantity, price }, close: OrderStatus.Filled, reason: fits === remaining ? 'limit-buy' : 'lock-exhausted' };
  }

  const price = prices.bid;
  if (price < order.price) return { reason: 'limit-not-reached' };
  const quantity = min(remaining, cap);
  return quantity === remaining
    ? { fill: { quantity, price }, close: OrderStatus.Filled, reason: 'limit-sell' }
    : { fill: { quantity, price }, reason: 'limit-sell' };
}

// ----------------------------------------------------------------- why an order closed

const seconds = (ms: number): string => `${ms / 1000} s`;
const iso = (ms: number): string => new Date(ms).toISOString().replace('.000Z', 'Z');

/**
 * The sentence the API shows for an order the decision closes REJECTED or EXPIRED (undefined for
 * any other decision): short, secret-free, naming the rule and its figures, e.g.
 * `no fresh quote for AAPL within 60 s (a quote older than 30 s is not used)`. Pure, like the
 * decision it explains; `symbol` is the stock's symbol (its address when unknown).
 */
export function closeReason(input: DecideInput, decision: FillDecision, symbol: string): string | undefined {
  if (decision.close !== OrderStatus.Rejected && decision.close !== OrderStatus.Expired) return undefined;
  const { order } = input;
  const isLimit = order.orderType === OrderType.Limit;
  const feeBps = BigInt(isLimit ? input.fees.limitFeeBps : input.fees.marketFeeBps);
  const ask = usableQuote(input.quote, input.now, input.quoteMaxAgeMs)?.ask;
  const money = (v: bigint) => formatDecimal(v, PRICE_DECIMALS);
  const sessions = sessionContext(input);
  switch (decision.reason) {
    case 'market-outside-regular': {
      const session = sessions?.rules.session(input.now) ?? 'closed';
      return `market orders execute only in the regular session (09:30–16:00 New York, 13:00 on early-close days): the market was ${session === 'closed' ? 'closed' : `in ${session}`} at ${iso(input.now)}, when the executor reached the order (a limit order rests until its sessions)`;
    }
    case 'not-fractionable':
      return `${symbol} trades whole shares only (fractionable: false): the quantity ${formatDecimal(order.quantity, PRICE_DECIMALS)} has a fraction`;
    case 'no-quote':
      return `no fresh quote for ${symbol} within ${seconds(input.noQuoteTimeoutMs ?? DEFAULT_NO_QUOTE_TIMEOUT_MS)} (a quote older than ${seconds(input.quoteMaxAgeMs ?? DEFAULT_QUOTE_MAX_AGE_MS)} is not used)`;
    case 'notional-too-small': {
      const unit = sessions !== undefined && !sessions.flags.fractionable ? `one whole share of ${symbol} (fractionable: false)` : `the smallest unit of ${symbol}`;
      return `notional too small: ${money(order.locked)} mUSD does not buy ${unit} at the ask ${ask === undefined ? '?' : money(ask)} plus the ${feeBps} bps fee`;
    }
    case 'beyond-worst-price': {
      const quote = usableQuote(input.quote, input.now, input.quoteMaxAgeMs);
      const isBuy = order.side === Side.Buy;
      const at = quote === undefined ? '?' : money(isBuy ? quote.ask : quote.bid);
      return `the ${isBuy ? 'ask' : 'bid'} ${at} of ${symbol} was ${isBuy ? 'above' : 'below'} the order's worst price ${money(order.price)} when the executor reached it`;
    }
    case 'lock-exhausted':
      return `the ${money(order.locked)} mUSD locked no longer pays for the smallest unit of ${symbol} at ${ask === undefined ? '?' : money(ask)} plus the current ${feeBps} bps fee (the fee rose after the order was placed)`;
    case 'oracle-stale':
    case 'oracle-deviation':
    case 'oracle-invalid': {
      const wait = seconds(input.noQuoteTimeoutMs ?? DEFAULT_NO_QUOTE_TIMEOUT_MS);
      const price = decideOnQuote(input).fill?.price;
      const reading = input.oracle?.reading;
      if (decision.reason === 'oracle-deviation' && reading !== undefined && price !== undefined) {
        const answer = formatDecimal(reading.answer, reading.decimals);
        return `the price ${money(price)} for ${symbol} strayed from its on-chain oracle's ${answer} by more than ${input.oracle!.toleranceBps} bps for ${wait}`;
      }
      if (decision.reason === 'oracle-stale') return `the on-chain oracle of ${symbol} was older than ${input.oracle!.maxAgeS} s for ${wait}, so no fill could be checked against it`;
      return `the on-chain oracle of ${symbol} gave no valid price for ${wait}`;
    }
    case 'deadline-passed':
      return `expired: its deadline ${iso(order.deadline * 1000)} passed`;
    case 'session-closed': {
      if (sessions !== undefined) {
        const expiry = iso(sessions.rules.dayOrderExpiry(Number(order.createdAt) * 1000, { regularOnly: sessions.regularOnly }));
        if (!sessions.regularOnly) return `expired at the end of its trading day (${expiry}): a DAY order lives until its trading day's after-hours session closes`;
        const why = sessions.isMarket ? 'a market order executes only in regular hours' : `a fractional order of ${symbol} executes only in regular hours (fractionalEhEnabled: false)`;
        return `expired at its trading day's regular close (${expiry}): ${why}, so its DAY ends there`;
      }
      const close = input.calendar.sessionClose(Number(order.createdAt) * 1000);
      return `expired at the close of the trading day${close === null ? '' : ` (${iso(close)})`}: a DAY order lives until the session it was placed in ends`;
    }
    default:
      return decision.close === OrderStatus.Rejected ? `rejected by the executor (${decision.reason})` : `expired (${decision.reason})`;
  }
}
