/**
 * Validation of order requests (seed §4A payload shapes, §7A validation failures), pure and
 * exact: the body's decimal strings become bigint amounts in contract units, and every failure is a
 * ValidationError naming the field. The on-chain revert rules are mirrored so that a request the API
 * accepts does not revert for a reason the API could have seen.
 */
import {
  STOCK_MAX_RAW_AMOUNT,
  STOCK_MAX_UNIX_SECONDS,
  STOCK_DEFAULT_SLIPPAGE_BPS,
  STOCK_MAX_SLIPPAGE_BPS,
  STOCK_ORDER_SIDES,
  STOCK_ORDER_TYPES,
  type StockOrderBody,
  type StockOrderType,
  type StockSide,
} from '@tokex/contract';
import type { Address } from 'viem';
import { notListed, ValidationError } from '../errors/app-error.ts';
import { formatDecimal, mulDiv, parseDecimal } from '../lib/decimal.ts';
import type { MarketCalendar } from '../marketdata/market-calendar.ts';
import { symbolFlagsOf, usSessionRulesOf, type SessionAware } from '../marketdata/symbol-catalog.ts';
import type { UsEquitySession } from '../marketdata/us-equity-sessions.ts';
import type { StockDirectory, StockListing } from './stock-deps.ts';
import { MUSD_DECIMALS } from './stock-units.ts';

export const PRICE_SCALE = 10n ** 18n;
/** The only time in force the contracts accept (uint8 0). */
export const TIF_DAY = 0;

export type Side = StockSide;
export type OrderType = StockOrderType;

/** The order fields of every order body (the contract's StockOrderBody; the with-deposit and send bodies add to it). */
export type OrderBody = StockOrderBody;

export interface OrderIntent {
  stock: StockListing;
  side: Side;
  type: OrderType;
  /** Stock units (18 decimals); 0 for a market buy. */
  quantity: bigint;
  /** mUSD (18 decimals); only for a market buy. */
  notional: bigint;
  /** mUSD per whole stock token (18 decimals); only for limit orders. */
  price: bigint;
  /**
   * Market orders: the worst fill price (mUSD per share, 18 decimals) the body gave, or undefined
   * when the server derives it from its quote with `slippageBps` (withWorstPrice).
   */
  worstPrice?: bigint;
  /** Market orders without a worstPrice: the slippage from the quote, in bps. */
  slippageBps?: number;
  deadline: number;
}

/** DAY in any case. */
function isDay(tif: string): boolean {
  return tif === 'DAY' || tif.toUpperCase() === 'DAY';
}

function caseless<T extends string>(field: string, value: string | undefined, allowed: readonly T[]): T {
  if (value === undefined) throw new ValidationError(field, 'required');
  // The documented spelling first: no lower-casing (a new string each) for the usual request.
  for (const a of allowed) if (a === value) return a;
  const lower = value.toLowerCase();
  for (const a of allowed) if (a.toLowerCase() === lower) return a;
  throw new ValidationError(field, `must be one of ${allowed.join(', ')}`);
}

/**
 * An amount of a stock request body in the token's smallest units: a decimal string, or a JSON
 * number the request decoder handed on as its own digits (src/http/request-decoder.ts), both read
 * by parseDecimal (no sign or exponent, at most `decimals` places, not zero), and at most
 * 2^96 - 1 units, the contracts' amount width.
 */
/** parseDecimal's own ceiling: far above the contracts' width, which the check below words. */
const PARSE_CEILING = 1n << 256n;

export function parseStockAmount(value: unknown, field: string, decimals: number): bigint {
  const units = parseDecimal(value, { field, decimals, max: PARSE_CEILING });
  if (units > STOCK_MAX_RAW_AMOUNT) {
    throw new ValidationError(field, `too large: at most ${formatDecimal(STOCK_MAX_RAW_AMOUNT, decimals)} (2^96 - 1 units, the contracts' amount width)`);
  }
  return units;
}

function amount(body: OrderBody, field: 'quantity' | 'notional' | 'price' | 'worstPrice', decimals: number): bigint {
  return parseStockAmount(body[field], field, decimals);
}

export function resolveStock(stocks: StockDirectory, body: { symbol?: string; stockAddress?: string }): StockListing {
  if (body.symbol === undefined && body.stockAddress === undefined) throw new ValidationError('symbol', 'required (or stockAddress)');
  const bySymbol = body.symbol !== undefined ? (stocks.bySymbol(body.symbol) ?? stocks.bySymbol(body.symbol.toUpperCase())) : undefined;
  if (body.symbol !== undefined && !bySymbol) throw new ValidationError('symbol', notListed(body.symbol));
  const byAddress = body.stockAddress !== undefined ? stocks.byAddress(body.stockAddress) : undefined;
  if (body.stockAddress !== undefined && !byAddress) throw new ValidationError('stockAddress', `${JSON.stringify(body.stockAddress)} is not a listed stock token`);
  if (bySymbol && byAddress && bySymbol !== byAddress) throw new ValidationError('stockAddress', 'does not match symbol');
  return (bySymbol ?? byAddress)!;
}

/**
 * A `deadline` (Unix seconds): in the future and at most 4294967295, the `uint32` the contracts
 * take (as Anchored documents). No nearer cap: the deadline bounds when the transaction may still
 * place the order, which is the wallet's business (docs/stock-api.md, "Requests").
 */
export function checkDeadline(deadline: number | undefined, nowSeconds: number): number {
  if (deadline === undefined) throw new ValidationError('deadline', 'required (Unix seconds)');
  if (!Number.isInteger(deadline) || deadline <= 0) throw new ValidationError('deadline', 'must be Unix seconds');
  if (deadline > STOCK_MAX_UNIX_SECONDS) throw new ValidationError('deadline', `must be at most ${STOCK_MAX_UNIX_SECONDS} (Unix seconds, uint32)`);
  if (deadline <= nowSeconds) throw new ValidationError('deadline', 'expired: must be in the future');
  return deadline;
}

export function parseOrder(body: OrderBody, stocks: StockDirectory, nowSeconds: number): OrderIntent {
  const stock = resolveStock(stocks, body);
  const side = caseless('side', body.side, STOCK_ORDER_SIDES);
  const type = caseless('type', body.type, STOCK_ORDER_TYPES);
  let quantity = 0n;
  let notional = 0n;
  let price = 0n;
  if (type === 'Market') {
    if (side === 'Buy') {
      if (body.notional === undefined) throw new ValidationError('notional', 'required for a market buy');
      if (body.quantity !== undefined) throw new ValidationError('quantity', 'not allowed for a market buy (use notional)');
      notional = amount(body, 'notional', MUSD_DECIMALS);
    } else {
      if (body.quantity === undefined) throw new ValidationError('quantity', 'required for a market sell');
      if (body.notional !== undefined) throw new ValidationError('notional', 'not allowed for a market sell (use quantity)');
      quantity = amount(body, 'quantity', stock.decimals);
    }
    if (body.price !== undefined) throw new ValidationError('price', 'not allowed for a market order (worstPrice bounds its fills)');
    if (body.timeInForce !== undefined && !isDay(body.timeInForce)) {
      throw new ValidationError('timeInForce', 'only DAY is accepted');
    }
  } else {
    if (body.quantity === undefined) throw new ValidationError('quantity', 'required for a limit order');
    if (body.price === undefined) throw new ValidationError('price', 'required for a limit order');
    if (body.timeInForce === undefined) throw new ValidationError('timeInForce', 'required for a limit order (DAY)');
    if (!isDay(body.timeInForce)) throw new ValidationError('timeInForce', 'only DAY is accepted');
    if (body.notional !== undefined) throw new ValidationError('notional', 'not allowed for a limit order');
    quantity = amount(body, 'quantity', stock.decimals);
    price = amount(body, 'price', MUSD_DECIMALS);
    if (body.worstPrice !== undefined) throw new ValidationError('worstPrice', 'not allowed for a limit order (its price bounds its fills)');
    if (body.slippageBps !== undefined) throw new ValidationError('slippageBps', 'not allowed for a limit order');
  }
  const deadline = checkDeadline(body.deadline, nowSeconds);
  if (type === 'Limit') return { stock, side, type, quantity, notional, price, deadline };
  if (body.worstPrice !== undefined) {
    if (body.slippageBps !== undefined) throw new ValidationError('slippageBps', 'not allowed with worstPrice');
    return { stock, side, type, quantity, notional, price, worstPrice: amount(body, 'worstPrice', MUSD_DECIMALS), deadline };
  }
  const slippageBps = body.slippageBps ?? STOCK_DEFAULT_SLIPPAGE_BPS;
  if (!Number.isInteger(slippageBps) || slippageBps < 0 || slippageBps > STOCK_MAX_SLIPPAGE_BPS) {
    throw new ValidationError('slippageBps', `must be an integer from 0 to ${STOCK_MAX_SLIPPAGE_BPS}`);
  }
  return { stock, side, type, quantity, notional, price, slippageBps, deadline };
}

/**
 * A market order's worst price from the quote when the body gave none (docs/stock-api.md
 * "Orders"): the ask (a buy) raised, or the bid (a sell) lowered, by `slippageBps`, rounded against
 * the fill (up for a buy, down for a sell; a sell's never below one wei). A limit order, or a market
 * order that gave its own, is answered as it is. Without a fresh quote the server cannot bound the
 * order for the user: ValidationError naming `worstPrice`.
 */
export function withWorstPrice(intent: OrderIntent, quote: { bid: bigint; ask: bigint } | undefined): OrderIntent {
  if (intent.type !== 'Market' || intent.worstPrice !== undefined) return intent;
  if (!quote) throw new ValidationError('worstPrice', `required now: there is no fresh quote of ${intent.stock.symbol} to derive it from`);
  const bps = BigInt(intent.slippageBps ?? STOCK_DEFAULT_SLIPPAGE_BPS);
  const worstPrice =
    intent.side === 'Buy' ? (quote.ask * (10_000n + bps) + 9_999n) / 10_000n : (quote.bid * (10_000n - bps)) / 10_000n;
  return { ...intent, worstPrice: worstPrice > 0n ? worstPrice : 1n };
}

const REGULAR_ONLY: ReadonlySet<UsEquitySession> = new Set<UsEquitySession>(['regular']);
const iso = (ms: number): string => new Date(ms).toISOString().replace('.000Z', 'Z');

/**
 * The session rules of order entry under `MARKET_CALENDAR=us-sessions` (docs/stock-api.md,
 * "Trading sessions"); the other calendars accept every order as they always did:
 * - a market order only while the regular session is on (`type: market orders are accepted only
 *   in regular hours …; the market is in pre-market until 2026-03-10T13:30Z …`);
 * - a limit order at any time: it rests until a session its symbol trades in;
 * - for a symbol that does not trade fractions (`fractionable: false`), whole shares only
 *   (`quantity: TSLA trades whole shares only …`); a market buy, given by notional, buys whole shares.
 */
export function checkOrderSession(
  intent: Pick<OrderIntent, 'stock' | 'type' | 'quantity'>,
  calendar: SessionAware & Pick<MarketCalendar, 'session'>,
  nowMs: number,
): void {
  const rules = usSessionRulesOf(calendar);
  if (rules === undefined) return;
  const flags = symbolFlagsOf(calendar, intent.stock.symbol);
  if (!flags.fractionable && intent.quantity % 10n ** BigInt(intent.stock.decimals) !== 0n) {
    throw new ValidationError('quantity', `${intent.stock.symbol} trades whole shares only (fractionable: false): ${formatDecimal(intent.quantity, intent.stock.decimals)} has a fraction`);
  }
  if (intent.type !== 'Market') return;
  const now = rules.bounds(nowMs);
  if (now.session === 'regular') return;
  const regularOpens = rules.nextStart(nowMs, REGULAR_ONLY);
  const where = now.session === 'closed' ? 'closed' : `in ${now.session}`;
  const next = regularOpens === now.end ? '' : `; regular hours open next at ${iso(regularOpens)}`;
  throw new ValidationError(
    'type',
    `market orders are accepted only in regular hours (09:30–16:00 New York, 13:00 on early-close days); the market is ${where} until ${iso(now.end)}${next}. A limit order is accepted at any time`,
  );
}

/** mUSD a buy locks, computed exactly as StockRouter does (cost and fee rounded up). */
export function buyLock(intent: OrderIntent, limitFeeBps: number): bigint {
  if (intent.type === 'Market') return intent.notional;
  const cost = mulDiv(intent.quantity, intent.price, PRICE_SCALE, 'ceil');
  return cost + mulDiv(cost, BigInt(limitFeeBps), 10_000n, 'ceil');
}

export function sideIndex(side: Side): 0 | 1 {
  return side === 'Buy' ? 0 : 1;
}

export function lowerAddress(a: string): Address {
  return a.toLowerCase() as Address;
}
