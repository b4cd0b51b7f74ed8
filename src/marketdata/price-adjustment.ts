/**
 * Back-adjustment of candles for corporate actions, exactly: every factor is a ratio of bigints
 * (a split's share counts, a dividend's `(close - dividend) / close` with both decimals taken as
 * they are written), factors multiply as ratios, and each adjusted value is rounded once, half up
 * to ADJUSTED_DECIMALS places. No float is involved anywhere.
 *
 * The convention is CRSP's and Yahoo's: bars before an action's ex-date are restated in the
 * share basis and the price level of after it, so a chart runs through the ex-date without a cliff.
 * - A split `new:old` (`"10:1"`) multiplies prices before the ex-date by old/new and volumes by
 *   new/old (a reverse split `1:10` the other way).
 * - A dividend `d` multiplies prices before the ex-date by `1 - d / C`, `C` the close before the
 *   ex-date (the last daily close before it); volumes stay. A dividend not below that close is
 *   left out (it would zero or negate the prices: a mistake in the table, not a dividend).
 * - A bar is "before" an ex-date when it opens before 00:00 UTC of that date. Every stored interval
 *   divides a UTC day, so no stored bar straddles that instant (3m and 1w bars are rolled up from
 *   bars adjusted first: price-history.ts).
 * - Only actions whose ex-date has come count: a split announced for next month changes nothing yet.
 */
import { formatDecimal } from '../lib/decimal.ts';
import type { CorporateAction } from './corporate-actions.ts';
import type { CandleRecord } from '../storage/candle-store.ts';

/** Places an adjusted price or volume is rounded to (half up): the precision of the chain's price oracle. */
export const ADJUSTED_DECIMALS = 8;
/** Adjusted prices print at least this many places, as the stored prices do (`"120.10"`). */
const PRICE_MIN_DECIMALS = 2;

/** A positive rational `num / den`. */
export interface Ratio {
  num: bigint;
  den: bigint;
}

export const ONE: Ratio = { num: 1n, den: 1n };

function gcd(a: bigint, b: bigint): bigint {
  while (b !== 0n) [a, b] = [b, a % b];
  return a < 0n ? -a : a;
}

function reduce(r: Ratio): Ratio {
  const g = gcd(r.num, r.den);
  return g <= 1n ? r : { num: r.num / g, den: r.den / g };
}

export function multiply(a: Ratio, b: Ratio): Ratio {
  return reduce({ num: a.num * b.num, den: a.den * b.den });
}

const DECIMAL_RE = /^(0|[1-9]\d*)(\.\d+)?$/;

/** A non-negative decimal string as a ratio (`"12.5"` → 125/10). */
export function ratioOf(decimal: string): Ratio {
  if (!DECIMAL_RE.test(decimal)) throw new Error(`not a non-negative decimal: ${JSON.stringify(decimal)}`);
  const dot = decimal.indexOf('.');
  if (dot === -1) return { num: BigInt(decimal), den: 1n };
  const fraction = decimal.slice(dot + 1);
  return { num: BigInt(decimal.slice(0, dot) + fraction), den: 10n ** BigInt(fraction.length) };
}

/** `value × factor`, rounded half up to ADJUSTED_DECIMALS places, printed with at least `minDecimals` places. */
export function scaleDecimal(value: string, factor: Ratio, minDecimals = 0): string {
  const v = ratioOf(value);
  const num = v.num * factor.num * 10n ** BigInt(ADJUSTED_DECIMALS);
  const den = v.den * factor.den;
  const scaled = (2n * num + den) / (2n * den);
  const text = formatDecimal(scaled, ADJUSTED_DECIMALS);
  if (minDecimals === 0) return text;
  const dot = text.indexOf('.');
  const places = dot === -1 ? 0 : text.length - dot - 1;
  if (places >= minDecimals) return text;
  return (dot === -1 ? `${text}.` : text) + '0'.repeat(minDecimals - places);
}

/** 00:00 UTC of a `YYYY-MM-DD` ex-date, in ms: bars opening before it are adjusted. */
export function exDateBoundary(exDate: string): number {
  const ms = Date.parse(`${exDate}T00:00:00Z`);
  if (Number.isNaN(ms)) throw new Error(`not a date: ${JSON.stringify(exDate)}`);
  return ms;
}

/** A split's factors: prices × old/new, volumes × new/old (`"10:1"`: prices ÷ 10, volumes × 10). */
export function splitFactors(ratio: string): { price: Ratio; volume: Ratio } {
  const m = /^([1-9]\d*):([1-9]\d*)$/.exec(ratio);
  if (!m) throw new Error(`not a split ratio: ${JSON.stringify(ratio)}`);
  const newShares = BigInt(m[1]);
  const oldShares = BigInt(m[2]);
  return { price: reduce({ num: oldShares, den: newShares }), volume: reduce({ num: newShares, den: oldShares }) };
}

/** A dividend's price factor `1 - amount / close` = `(close - amount) / close`; undefined when the dividend is not below the close. */
export function dividendFactor(amount: string, close: string): Ratio | undefined {
  const d = ratioOf(amount);
  const c = ratioOf(close);
  // (c - d) / c with c = cn/cd, d = dn/dd: (cn·dd - dn·cd) / (cn·dd).
  const num = c.num * d.den - d.num * c.den;
  const den = c.num * d.den;
  if (num <= 0n || den <= 0n) return undefined;
  return reduce({ num, den });
}

/** One action's effect: prices and volumes of the bars opening before `boundary` are multiplied by these. */
export interface AdjustmentStep {
  boundary: number;
  price: Ratio;
  volume: Ratio;
}

/** A bar's time and figures, as a stored candle holds them. */
export type AdjustableBar = Omit<CandleRecord, 'symbol' | 'interval'>;

/**
 * The bars with each step applied to those opening before its boundary (any order of steps and
 * bars). A bar no step reaches is returned as it is, its strings untouched.
 */
export function adjustBars<B extends AdjustableBar>(bars: readonly B[], steps: readonly AdjustmentStep[]): B[] {
  if (steps.length === 0) return [...bars];
  const sorted = [...steps].sort((a, b) => a.boundary - b.boundary);
  // after[k]: the product of the steps from k on, what a bar opening before sorted[k].boundary
  // (and at or after the one before it) is multiplied by.
  const after: Array<{ price: Ratio; volume: Ratio }> = new Array(sorted.length + 1);
  after[sorted.length] = { price: ONE, volume: ONE };
  for (let k = sorted.length - 1; k >= 0; k--) {
    after[k] = { price: multiply(after[k + 1].price, sorted[k].price), volume: multiply(after[k + 1].volume, sorted[k].volume) };
  }
  return bars.map((bar) => {
    let k = 0;
    while (k < sorted.length && sorted[k].boundary <= bar.openTime) k++;
    if (k === sorted.length) return bar;
    const { price, volume } = after[k];
    const samePrice = price.num === price.den;
    return {
      ...bar,
      open: samePrice ? bar.open : scaleDecimal(bar.open, price, PRICE_MIN_DECIMALS),
      high: samePrice ? bar.high : scaleDecimal(bar.high, price, PRICE_MIN_DECIMALS),
      low: samePrice ? bar.low : scaleDecimal(bar.low, price, PRICE_MIN_DECIMALS),
      close: samePrice ? bar.close : scaleDecimal(bar.close, price, PRICE_MIN_DECIMALS),
      volume: volume.num === volume.den ? bar.volume : scaleDecimal(bar.volume, volume),
    };
  });
}

/** Which kinds of action an `adjustment` applies. */
export function adjustmentKinds(adjustment: string): { splits: boolean; dividends: boolean } {
  switch (adjustment) {
    case 'split':
      return { splits: true, dividends: false };
    case 'dividend':
      return { splits: false, dividends: true };
    case 'all':
      return { splits: true, dividends: true };
    default:
      // raw, and spin-off: the table has no spin-offs (its types are SPLIT and DIVIDEND).
      return { splits: false, dividends: false };
  }
}

/**
 * The steps of `actions` for bars from `firstOpenTime` on, at `now`: the kinds `adjustment` asks
 * for, ex-date come (boundary ≤ now) and after the first bar (an earlier one reaches no bar).
 * `closeBefore(boundary)` answers the raw close before a dividend's ex-date.
 */
export async function adjustmentSteps(
  actions: readonly CorporateAction[],
  adjustment: string,
  firstOpenTime: number,
  now: number,
  closeBefore: (boundary: number) => Promise<string | undefined>,
): Promise<AdjustmentStep[]> {
  const kinds = adjustmentKinds(adjustment);
  const steps: AdjustmentStep[] = [];
  for (const action of actions) {
    const boundary = action.effectiveAt ?? exDateBoundary(action.exDate);
    if (boundary > now || boundary <= firstOpenTime) continue;
    if (action.type === 'SPLIT' && kinds.splits && action.ratio !== undefined) {
      steps.push({ boundary, ...splitFactors(action.ratio) });
    } else if (action.type === 'DIVIDEND' && kinds.dividends && action.amount !== undefined) {
      const close = await closeBefore(boundary);
      const price = close === undefined ? undefined : dividendFactor(action.amount, close);
      if (price !== undefined) steps.push({ boundary, price, volume: ONE });
    }
  }
  return steps;
}
