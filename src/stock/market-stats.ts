/**
 * The 24-hour figures of `GET symbols` (anchored-reference.md §4.1: `price`, `change24H`,
 * `change24HPercent`, `volume24H`, `lastUpdateTimestamp`), computed from the candles: at a time T
 * (whole seconds), the 1-minute candles whose open time is in [T − 24 h, T]. `price` is the quote's
 * last (else the last of those candles' close), `change24H` that minus the first candle's open,
 * `change24HPercent` the change in percent of that open to 2 decimals (half away from zero), and
 * `volume24H` the sum of the candles' volumes. Exact decimals throughout.
 *
 * Anchored documents `lastUpdateTimestamp` as the time its cache was refreshed; these figures are
 * cached the same way, for `ttlMs`, so a burst of `GET symbols` reads the candles once.
 */
import type { QuoteReader } from '../marketdata/market-types.ts';
import { formatDecimal } from '../lib/decimal.ts';
import type { DbExecutor } from '../storage/database.ts';
import { listCandles } from '../storage/candle-store.ts';
import { venueNow } from '../lib/venue-clock.ts';

export interface DayStats {
  /** Decimal strings, or null when there is nothing to compute them from. */
  price: string | null;
  change24H: string | null;
  change24HPercent: string | null;
  volume24H: string;
  /** T, Unix seconds. */
  lastUpdateTimestamp: number;
}

export const DAY_MS = 86_400_000;
/** 1-minute candles in a closed 24-hour range: one per minute, both ends included. */
const DAY_CANDLES = DAY_MS / 60_000 + 1;
const SCALE = 18;

/** A non-negative decimal string as an integer scaled by 10^SCALE. */
function scaled(text: string): bigint {
  const dot = text.indexOf('.');
  const whole = dot === -1 ? text : text.slice(0, dot);
  const frac = dot === -1 ? '' : text.slice(dot + 1);
  if (!/^\d+$/.test(whole) || !/^\d*$/.test(frac) || frac.length > SCALE) throw new Error(`market stats: not a decimal of at most ${SCALE} places: ${text}`);
  return BigInt(whole + frac.padEnd(SCALE, '0'));
}

/** `change / base × 100` to 2 decimals, half away from zero; null when base is 0. */
export function percentOf(change: bigint, base: bigint): string | null {
  if (base === 0n) return null;
  const num = (change < 0n ? -change : change) * 10_000n;
  let q = num / base;
  if ((num % base) * 2n >= base) q += 1n;
  return formatDecimal(change < 0n ? -q : q, 2);
}

/** The figures at `atMs` from the candles and the quote (no cache). */
export async function computeDayStats(db: DbExecutor, quotes: QuoteReader, symbol: string, atMs: number): Promise<DayStats> {
  const t = Math.floor(atMs / 1000);
  const end = t * 1000;
  const candles = await listCandles(db, { symbol, interval: '1m', startTime: end - DAY_MS, endTime: end, limit: DAY_CANDLES });
  let volume = 0n;
  for (const c of candles) volume += scaled(c.volume);
  const price = quotes.getQuote(symbol)?.last ?? candles.at(-1)?.close ?? null;
  const first = candles[0];
  let change: string | null = null;
  let percent: string | null = null;
  if (price !== null && first !== undefined) {
    const base = scaled(first.open);
    const diff = scaled(price) - base;
    change = formatDecimal(diff, SCALE);
    percent = percentOf(diff, base);
  }
  return { price, change24H: change, change24HPercent: percent, volume24H: formatDecimal(volume, SCALE), lastUpdateTimestamp: t };
}

export interface MarketStats {
  /** Every symbol's figures, from the cache while it is younger than ttlMs. */
  of(symbols: readonly string[]): Promise<Map<string, DayStats>>;
}

export function createMarketStats(opts: { db: DbExecutor; quotes: QuoteReader; now?: () => number; ttlMs?: number }): MarketStats {
  const now = opts.now ?? venueNow;
  const ttlMs = opts.ttlMs ?? 2_000;
  let cached: { at: number; key: string; stats: Promise<Map<string, DayStats>> } | undefined;
  return {
    of(symbols) {
      const t = now();
      const key = symbols.join(',');
      if (cached && cached.key === key && t - cached.at < ttlMs) return cached.stats;
      const stats = Promise.all(symbols.map(async (s) => [s, await computeDayStats(opts.db, opts.quotes, s, t)] as const)).then((rows) => new Map(rows));
      // A failed read is not remembered: the next request tries again.
      stats.catch(() => {
        if (cached?.stats === stats) cached = undefined;
      });
      cached = { at: t, key, stats };
      return stats;
    },
  };
}
