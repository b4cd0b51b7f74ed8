/**
 * K-line history as the stock API answers it: any stored interval, plus `3m` and `1w` rolled up
 * from the stored `1m` and `1d` candles when asked (they are not stored), each optionally
 * back-adjusted for the corporate actions (price-adjustment.ts). Bars are adjusted before they are
 * rolled up, so a week holding an ex-date is built from days that are all in one basis.
 *
 * Buckets are UTC-aligned like the stored ones: a 3m bar opens at a multiple of 3 minutes; a 1w bar
 * opens on Monday 00:00 UTC (the week convention of exchanges' weekly K-lines).
 */
import { listCandles } from '../storage/candle-store.ts';
import type { DbExecutor } from '../storage/database.ts';
import { mergeCandles } from './candle-aggregator.ts';
import type { CorporateAction } from './corporate-actions.ts';
import { INTERVAL_MS, INTERVALS, type Candle, type Interval } from './market-types.ts';
import { adjustBars, adjustmentSteps } from './price-adjustment.ts';

/** The intervals the history answers: the stored ones and the two rolled up on request. */
export const HISTORY_INTERVALS = ['1m', '3m', '5m', '15m', '1h', '4h', '1d', '1w'] as const;
export type HistoryInterval = (typeof HISTORY_INTERVALS)[number];

export const PRICE_ADJUSTMENTS = ['raw', 'split', 'dividend', 'spin-off', 'all'] as const;
export type PriceAdjustment = (typeof PRICE_ADJUSTMENTS)[number];

const MINUTE = 60_000;
const DAY = 86_400_000;
/** 1970-01-05, the first Monday after the epoch (a Thursday). */
const FIRST_MONDAY = 4 * DAY;

/** An interval rolled up on request: from which stored one, how many of those at most per bar, its length. */
const ROLLED_UP: Record<'3m' | '1w', { base: Interval; perBar: number; length: number }> = {
  '3m': { base: '1m', perBar: 3, length: 3 * MINUTE },
  '1w': { base: '1d', perBar: 7, length: 7 * DAY },
};

export function historyIntervalMs(interval: HistoryInterval): number {
  return interval === '3m' || interval === '1w' ? ROLLED_UP[interval].length : INTERVAL_MS[interval];
}

/** Where the bar of `interval` holding `time` opens. */
export function historyBucketStart(time: number, interval: HistoryInterval): number {
  const length = historyIntervalMs(interval);
  const offset = interval === '1w' ? FIRST_MONDAY : 0;
  return Math.floor((time - offset) / length) * length + offset;
}

export interface HistoryBar {
  openTime: number;
  closeTime: number;
  open: string;
  high: string;
  low: string;
  close: string;
  volume: string;
}

export interface PriceHistoryQuery {
  symbol: string;
  interval: HistoryInterval;
  /** ms, inclusive lower bound on openTime: the first `limit` bars from here. */
  startTime?: number;
  /** ms, inclusive upper bound on openTime; without startTime the latest `limit` bars up to here. */
  endTime: number;
  limit: number;
  adjustment: PriceAdjustment;
  /** ms: actions whose ex-date has not come yet adjust nothing. */
  now: number;
}

function isStored(interval: HistoryInterval): interval is Interval {
  return (INTERVALS as readonly string[]).includes(interval);
}

/** The raw bars of the stored base interval the answer is made of (one symbol, ascending). */
async function baseBars(db: DbExecutor, q: PriceHistoryQuery): Promise<{ base: Interval; rows: Candle[] }> {
  const { symbol, interval, startTime, endTime, limit } = q;
  if (isStored(interval)) return { base: interval, rows: await listCandles(db, { symbol, interval, startTime, endTime, limit }) };
  const { base, perBar, length } = ROLLED_UP[interval];
  // Every base bar of the bucket holding endTime, so that its bar is whole.
  const last = historyBucketStart(endTime, interval) + length - 1;
  // At most perBar base bars make a bar, so a full read of one bar's worth more than asked holds at
  // least limit + 1 bars. Only the bar at its far end can be partial, and the answer's `limit` bars
  // (from the near end: readPriceHistory) never reach it.
  const fetch = (limit + 1) * perBar;
  if (startTime !== undefined) {
    const bucket = historyBucketStart(startTime, interval);
    const first = bucket === startTime ? startTime : bucket + length;
    if (first > last) return { base, rows: [] };
    return { base, rows: await listCandles(db, { symbol, interval: base, startTime: first, endTime: last, limit: fetch }) };
  }
  return { base, rows: await listCandles(db, { symbol, interval: base, endTime: last, limit: fetch }) };
}

/** Rolls adjusted base bars (ascending) up into `interval`. */
function rollUp(rows: readonly Candle[], interval: '3m' | '1w'): Candle[] {
  const out: Candle[] = [];
  let current: Candle | undefined;
  for (const row of rows) {
    const openTime = historyBucketStart(row.openTime, interval);
    if (current !== undefined && current.openTime === openTime) {
      current = mergeCandles(current, row);
    } else {
      if (current !== undefined) out.push(current);
      current = { ...row, openTime };
    }
  }
  if (current !== undefined) out.push(current);
  return out;
}

/**
 * The history of one symbol: ascending bars, at most `limit` of them, adjusted as asked with the
 * symbol's `actions` (the corporate-action table's rows of that symbol).
 */
export async function readPriceHistory(db: DbExecutor, actions: readonly CorporateAction[], q: PriceHistoryQuery): Promise<HistoryBar[]> {
  const { base, rows } = await baseBars(db, q);
  let bars = rows;
  if (rows.length > 0 && actions.length > 0) {
    const closeBefore = async (boundary: number): Promise<string | undefined> => {
      for (const interval of base === '1d' ? (['1d'] as const) : (['1d', base] as const)) {
        const [row] = await listCandles(db, { symbol: q.symbol, interval, endTime: boundary - 1, limit: 1 });
        if (row !== undefined) return row.close;
      }
      return undefined;
    };
    const steps = await adjustmentSteps(actions, q.adjustment, rows[0].openTime, q.now, closeBefore);
    bars = adjustBars(rows, steps);
  }
  const { interval, limit } = q;
  let out = interval === '3m' || interval === '1w' ? rollUp(bars, interval) : bars;
  if (out.length > limit) out = q.startTime !== undefined ? out.slice(0, limit) : out.slice(out.length - limit);
  const length = historyIntervalMs(interval);
  return out.map((c) => ({ openTime: c.openTime, closeTime: c.openTime + length - 1, open: c.open, high: c.high, low: c.low, close: c.close, volume: c.volume }));
}
