/**
 * Candles of the perpetual instruments (migration 0010): of the instrument's own trades (`trade`),
 * of its mark price and of its index (`mark`, `index`, from the engine's markPrice events), in the
 * intervals market data uses. Prices are ticks, volume lots and turnover micro-USD.
 */
import type { Selectable } from 'kysely';
import { bulkInsert, type BulkTable } from '../../storage/bulk-sql.ts';
import { kyselyOf, type DbExecutor } from '../../storage/database.ts';
import type { CandleInterval } from '../../storage/candle-store.ts';
import type { PerpCandlesTable } from '../../storage/schema.ts';

export type PerpCandleKind = 'trade' | 'mark' | 'index';
export const PERP_CANDLE_KINDS: readonly PerpCandleKind[] = ['trade', 'mark', 'index'];

export interface PerpCandleRecord {
  symbol: string;
  kind: PerpCandleKind;
  interval: CandleInterval;
  openTime: number;
  openTicks: number;
  highTicks: number;
  lowTicks: number;
  closeTicks: number;
  volumeLots: number;
  turnover: bigint;
  trades: number;
}

export const perpCandleKey = (c: Pick<PerpCandleRecord, 'symbol' | 'kind' | 'interval' | 'openTime'>): string =>
  `${c.symbol}|${c.kind}|${c.interval}|${c.openTime}`;

const UPSERT: BulkTable = {
  table: 'perp_candles',
  columns: ['symbol', 'kind', 'interval', 'open_time', 'open_ticks', 'high_ticks', 'low_ticks', 'close_ticks', 'volume_lots', 'turnover', 'trades'],
  onConflict: {
    columns: ['symbol', 'kind', 'interval', 'open_time'],
    update: ['open_ticks', 'high_ticks', 'low_ticks', 'close_ticks', 'volume_lots', 'turnover', 'trades'],
  },
};

function fromRow(r: Selectable<PerpCandlesTable>): PerpCandleRecord {
  return {
    symbol: r.symbol,
    kind: r.kind as PerpCandleKind,
    interval: r.interval as CandleInterval,
    openTime: Number(r.open_time),
    openTicks: Number(r.open_ticks),
    highTicks: Number(r.high_ticks),
    lowTicks: Number(r.low_ticks),
    closeTicks: Number(r.close_ticks),
    volumeLots: Number(r.volume_lots),
    turnover: BigInt(r.turnover),
    trades: Number(r.trades),
  };
}

/** Writes whole candles (the caller merged them with what was stored). One row per key. */
export async function upsertPerpCandles(db: DbExecutor, candles: readonly PerpCandleRecord[]): Promise<void> {
  await bulkInsert(
    db,
    UPSERT,
    candles.map((c) => [
      c.symbol, c.kind, c.interval, c.openTime, c.openTicks, c.highTicks, c.lowTicks, c.closeTicks, c.volumeLots, c.turnover.toString(), c.trades,
    ]),
  );
}

/** The stored candles among `keys` (symbol, kind, interval, openTime). */
export async function getPerpCandles(
  db: DbExecutor,
  keys: ReadonlyArray<Pick<PerpCandleRecord, 'symbol' | 'kind' | 'interval' | 'openTime'>>,
): Promise<PerpCandleRecord[]> {
  if (keys.length === 0) return [];
  // Few distinct (symbol, kind, interval) per batch: one query per group, by open time.
  const groups = new Map<string, { symbol: string; kind: string; interval: string; times: number[] }>();
  for (const k of keys) {
    const g = `${k.symbol}|${k.kind}|${k.interval}`;
    let entry = groups.get(g);
    if (!entry) groups.set(g, (entry = { symbol: k.symbol, kind: k.kind, interval: k.interval, times: [] }));
    entry.times.push(k.openTime);
  }
  const out: PerpCandleRecord[] = [];
  for (const g of groups.values()) {
    const rows = await kyselyOf(db)
      .selectFrom('perp_candles')
      .selectAll()
      .where('symbol', '=', g.symbol)
      .where('kind', '=', g.kind)
      .where('interval', '=', g.interval)
      .where('open_time', 'in', [...new Set(g.times)])
      .execute();
    for (const r of rows) out.push(fromRow(r));
  }
  return out;
}

/** Oldest first: the newest `limit` candles within the range. */
export async function listPerpCandles(
  db: DbExecutor,
  q: { symbol: string; kind: PerpCandleKind; interval: CandleInterval; startTime?: number; endTime?: number; limit: number },
): Promise<PerpCandleRecord[]> {
  let base = kyselyOf(db)
    .selectFrom('perp_candles')
    .selectAll()
    .where('symbol', '=', q.symbol)
    .where('kind', '=', q.kind)
    .where('interval', '=', q.interval);
  if (q.startTime !== undefined) base = base.where('open_time', '>=', q.startTime);
  if (q.endTime !== undefined) base = base.where('open_time', '<=', q.endTime);
  const rows = await base.orderBy('open_time', 'desc').limit(q.limit).execute();
  return rows.map(fromRow).reverse();
}
