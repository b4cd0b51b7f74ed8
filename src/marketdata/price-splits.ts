/**
 * Splits as the quotes see them (docs/corporate-actions.md, "Splits"). A split takes effect for the
 * prices at a minute boundary, `at`; from then on a symbol's quotes are in post-split shares and
 * carry the Stock token's multiplier they are stated in (`Quote.multiplier`), so that whoever
 * fills on them (the stock executor, the perpetual index) can check the chain and the quote speak
 * of the same share. The multiplier follows the Stock contract's rule to the unit: it starts at
 * 1e36 and each split `numerator:denominator` makes it `floor(m × numerator / denominator)`.
 */

import { newYorkDayStart, SPLIT_RATIO_RE, type CorporateAction } from './corporate-actions.ts';

/** The multiplier of a stock that never split. */
export const BASE_MULTIPLIER = 10n ** 36n;

const MINUTE = 60_000;

export interface PriceSplit {
  /** The corporate action (`AAPL-2026-12-01`). */
  id: string;
  symbol: string;
  /** When the prices move to the new shares: a minute boundary (ms). */
  at: number;
  numerator: bigint;
  denominator: bigint;
}

/** The first minute boundary at or after `ms`. */
export function ceilToMinute(ms: number): number {
  return Math.ceil(ms / MINUTE) * MINUTE;
}

/** The multiplier after `split`, as `Stock.split` computes it. */
export function multiplierAfter(multiplier: bigint, split: Pick<PriceSplit, 'numerator' | 'denominator'>): bigint {
  return (multiplier * split.numerator) / split.denominator;
}

/** `symbol`'s splits in effect at `time`, oldest first. */
export function splitsThrough(splits: readonly PriceSplit[], symbol: string, time: number): PriceSplit[] {
  return splits.filter((s) => s.symbol === symbol && s.at <= time).sort((a, b) => a.at - b.at || (a.id < b.id ? -1 : 1));
}

/** The multiplier `symbol`'s prices are stated in at `time`. */
export function multiplierThrough(splits: readonly PriceSplit[], symbol: string, time: number): bigint {
  return splitsThrough(splits, symbol, time).reduce(multiplierAfter, BASE_MULTIPLIER);
}

/**
 * A two-decimal price in post-split shares: `price × denominator / numerator`, rounded half up to
 * the cent, and never below one cent (the simulator's smallest price).
 */
export function splitPrice(price: string, split: Pick<PriceSplit, 'numerator' | 'denominator'>): string {
  const m = /^(\d+)(?:\.(\d{1,2}))?$/.exec(price);
  if (!m) throw new RangeError(`splitPrice: not a price with at most two decimals: ${price}`);
  const cents = BigInt(m[1]) * 100n + BigInt((m[2] ?? '').padEnd(2, '0'));
  let scaled = (cents * split.denominator * 2n + split.numerator) / (split.numerator * 2n);
  if (scaled < 1n) scaled = 1n;
  return `${scaled / 100n}.${(scaled % 100n).toString().padStart(2, '0')}`;
}

/**
 * The least notice a split gets: one added on its ex-date takes effect this long after it was
 * stored (then at the next minute), so every process (the quotes, the executor's check, the
 * perpetual's index) has read it before the prices move.
 */
export const SPLIT_NOTICE_MS = 5_000;

/**
 * When a split takes effect, for the prices, the chain and the perpetuals alike: 00:00 New York on
 * its ex-date, or `SPLIT_NOTICE_MS` after it was stored when that is later, at a minute boundary.
 */
export function splitEffectiveAt(exDate: string, createdAt?: number): number {
  const start = newYorkDayStart(exDate);
  return ceilToMinute(createdAt === undefined ? start : Math.max(start, createdAt + SPLIT_NOTICE_MS));
}

/** A corporate action as stored (the stock side's table) or in the configuration file, as far as splits read it. */
export interface SplitSourceAction {
  symbol: string;
  type: CorporateAction['type'];
  exDate: string;
  ratio?: string | null;
  status?: 'scheduled' | 'applied' | 'failed';
  createdAt?: number;
}

export interface ScheduledPriceSplit extends PriceSplit {
  exDate: string;
  /** The table's state of the action (`scheduled` for a file action not stored yet). */
  status: 'scheduled' | 'applied' | 'failed';
}

/**
 * The splits the venue applies: the file's SPLITs and the table's (a row replaces the file's entry
 * of the same symbol and ex-date), from the venue's start date on (a split before it predates the
 * venue: its tokens and prices were always post-split), oldest first. `at` is on the market
 * calendar's clock, which runs `clockOffsetMs` ahead of the wall clock the rows' `createdAt` is on
 * (MARKET_CLOCK_START).
 */
export function priceSplitsOf(
  file: readonly SplitSourceAction[],
  stored: readonly SplitSourceAction[],
  venueStartDate: string,
  clockOffsetMs = 0,
): ScheduledPriceSplit[] {
  const byId = new Map<string, SplitSourceAction>();
  for (const a of file) byId.set(`${a.symbol.toUpperCase()}-${a.exDate}`, { ...a, createdAt: undefined, status: 'scheduled' });
  for (const a of stored) byId.set(`${a.symbol.toUpperCase()}-${a.exDate}`, a);
  const out: ScheduledPriceSplit[] = [];
  for (const [id, a] of byId) {
    if (a.type !== 'SPLIT' || a.exDate < venueStartDate) continue;
    const m = SPLIT_RATIO_RE.exec(a.ratio ?? '');
    if (!m || m[1] === m[2]) continue;
    out.push({
      id,
      symbol: a.symbol.toUpperCase(),
      exDate: a.exDate,
      at: splitEffectiveAt(a.exDate, a.createdAt === undefined ? undefined : a.createdAt + clockOffsetMs),
      numerator: BigInt(m[1]),
      denominator: BigInt(m[2]),
      status: a.status ?? 'scheduled',
    });
  }
  return out.sort((x, y) => x.at - y.at || (x.id < y.id ? -1 : 1));
}
