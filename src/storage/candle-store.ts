import { CompiledQuery, type Selectable } from 'kysely';
import { ValidationError } from '../errors/app-error.ts';
import { kyselyOf, type DbExecutor } from './database.ts';
import type { CandlesTable } from './schema.ts';
import { withTransaction, type Tx } from './transaction.ts';

/**
 * Rows per INSERT. 8 columns × 4000 = 32 000 bound parameters: under SQLite's 32 766 and
 * PostgreSQL's 65 535. Large statements matter: per-statement overhead dominates a bulk load.
 */
export const CANDLE_CHUNK_ROWS = 4_000;

/** The bar lengths the candles table holds (market data re-exports them as its intervals). */
export const CANDLE_INTERVALS = ['1m', '5m', '15m', '1h', '4h', '1d'] as const;
export type CandleInterval = (typeof CANDLE_INTERVALS)[number];

/** One stored OHLCV bar. Prices and volume are exact decimal strings; openTime is ms since the epoch. */
export interface CandleRecord {
  symbol: string;
  interval: CandleInterval;
  openTime: number;
  open: string;
  high: string;
  low: string;
  close: string;
  volume: string;
}

export interface CandleQuery {
  symbol: string;
  interval: CandleInterval;
  /** Inclusive lower bound on openTime (ms). */
  startTime?: number;
  /** Inclusive upper bound on openTime (ms). */
  endTime?: number;
  /** Maximum number of candles, at least 1. */
  limit: number;
}

function fromRow(row: Selectable<CandlesTable>): CandleRecord {
  return {
    symbol: row.symbol,
    interval: row.interval as CandleInterval,
    openTime: Number(row.open_time),
    open: row.open,
    high: row.high,
    low: row.low,
    close: row.close,
    volume: row.volume,
  };
}

/**
 * Inserts the candles, replacing OHLCV of any (symbol, interval, openTime) already stored; a later
 * entry for the same bar in `candles` beats an earlier one. All-or-nothing: one transaction.
 */
export async function upsertCandles(db: DbExecutor, candles: readonly CandleRecord[]): Promise<void> {
  if (candles.length === 0) return;
  // PostgreSQL refuses to update one row twice in a statement: keep the last entry per bar.
  const byKey = new Map<string, CandleRecord>();
  for (const c of candles) byKey.set(`${c.symbol}\u0000${c.interval}\u0000${c.openTime}`, c);
  const unique = byKey.size === candles.length ? candles : [...byKey.values()];

  await withTransaction(db, async (tx) => {
    // Building and compiling a 4000-row Kysely query costs about as much as SQLite's own work, and
    // every full chunk compiles to the same SQL text: compile once, then bind fresh parameters.
    let reusable: { rows: number; sql: string } | undefined;
    for (let i = 0; i < unique.length; i += CANDLE_CHUNK_ROWS) {
      const chunk = unique.slice(i, i + CANDLE_CHUNK_ROWS);
      const params = candleParams(chunk);
      if (reusable?.rows !== chunk.length) {
        const compiled = candleInsert(tx, chunk).compile();
        // Guards the assumption that parameters are the rows' values in column order.
        if (compiled.parameters.length !== params.length || compiled.parameters.some((p, k) => p !== params[k])) {
          throw new Error('candle-store: unexpected parameter layout of the compiled insert');
        }
        reusable = { rows: chunk.length, sql: compiled.sql };
      }
      await tx.executeQuery(CompiledQuery.raw(reusable.sql, params));
    }
  });
}

function candleInsert(tx: Tx, chunk: readonly CandleRecord[]) {
  return tx
    .insertInto('candles')
    .values(
      chunk.map((c) => ({
        symbol: c.symbol,
        interval: c.interval,
        open_time: c.openTime,
        open: c.open,
        high: c.high,
        low: c.low,
        close: c.close,
        volume: c.volume,
      })),
    )
    .onConflict((oc) =>
      oc.columns(['symbol', 'interval', 'open_time']).doUpdateSet((eb) => ({
        open: eb.ref('excluded.open'),
        high: eb.ref('excluded.high'),
        low: eb.ref('excluded.low'),
        close: eb.ref('excluded.close'),
        volume: eb.ref('excluded.volume'),
      })),
    );
}

/** The bound values of `candleInsert(chunk)`, in the same order. */
function candleParams(chunk: readonly CandleRecord[]): unknown[] {
  const params = new Array<unknown>(chunk.length * 8);
  let k = 0;
  for (const c of chunk) {
    params[k++] = c.symbol;
    params[k++] = c.interval;
    params[k++] = c.openTime;
    params[k++] = c.open;
    params[k++] = c.high;
    params[k++] = c.low;
    params[k++] = c.close;
    params[k++] = c.volume;
  }
  return params;
}

/**
 * Candles of one symbol and interval, ascending by openTime.
 * - with startTime: the first `limit` candles with startTime <= openTime (<= endTime if given);
 * - without: the latest `limit` candles with openTime <= endTime (default now).
 */
export async function listCandles(db: DbExecutor, q: CandleQuery): Promise<CandleRecord[]> {
  if (!Number.isSafeInteger(q.limit) || q.limit < 1) throw new ValidationError('limit', 'must be a positive integer');
  let query = kyselyOf(db)
    .selectFrom('candles')
    .selectAll()
    .where('symbol', '=', q.symbol)
    .where('interval', '=', q.interval);
  if (q.startTime !== undefined) {
    query = query.where('open_time', '>=', q.startTime);
    if (q.endTime !== undefined) query = query.where('open_time', '<=', q.endTime);
    const rows = await query.orderBy('open_time', 'asc').limit(q.limit).execute();
    return rows.map(fromRow);
  }
  const rows = await query
    .where('open_time', '<=', q.endTime ?? Date.now())
    .orderBy('open_time', 'desc')
    .limit(q.limit)
    .execute();
  return rows.reverse().map(fromRow);
}

/** The candle with the greatest openTime, or undefined when there is none. */
export async function latestCandle(db: DbExecutor, symbol: string, interval: CandleInterval): Promise<CandleRecord | undefined> {
  const row = await kyselyOf(db)
    .selectFrom('candles')
    .selectAll()
    .where('symbol', '=', symbol)
    .where('interval', '=', interval)
    .orderBy('open_time', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row ? fromRow(row) : undefined;
}

/** Number of stored candles, optionally of one symbol and/or one interval. */
export async function countCandles(db: DbExecutor, symbol?: string, interval?: CandleInterval): Promise<number> {
  let query = kyselyOf(db).selectFrom('candles').select((eb) => eb.fn.countAll<number | string>().as('n'));
  if (symbol !== undefined) query = query.where('symbol', '=', symbol);
  if (interval !== undefined) query = query.where('interval', '=', interval);
  const row = await query.executeTakeFirstOrThrow();
  return Number(row.n);
}
