/**
 * One write of the perpetual projection: a batch of engine events folded into the history tables'
 * rows (event-projection.ts) and written with the projection's cursor in one transaction. Used by
 * the projector in the engine's thread and by its worker thread (projection-worker.ts) alike.
 */
import type { DbExecutor } from '../../storage/database.ts';
import { setMeta } from '../../storage/meta-store.ts';
import { withTransaction } from '../../storage/transaction.ts';
import type { EngineEvent } from '../engine/engine-types.ts';
import { getPerpCandles, upsertPerpCandles } from '../store/perp-candle-store.ts';
import { getOrdersByIds, insertFundingRates, insertTrades, insertTransactions, upsertOrders } from '../store/perp-history-store.ts';
import { insertInsuranceMoves, insertLiquidityMoves } from '../store/liquidity-store.ts';
import { mergeCandle, projectEvents, referencedOrderIds, type ProjectedBatch } from './event-projection.ts';
import type { PerpCandleRecord } from '../store/perp-candle-store.ts';

export const PROJECTION_CURSOR_KEY = 'perp.projection.seq';

/**
 * Most events the worker writes in one transaction. On SQLite the order thread's writes wait (without
 * blocking its loop) for the worker's transaction they meet (sqlite-write-gate.ts), so this bounds
 * that wait (at about 21 µs an event on SQLite, some tens of milliseconds), where a catch-up batch
 * of the projector is up to 5 000 events. Smaller costs throughput: a transaction's fixed cost
 * (about 2.3 ms) is paid more often (single REST orders on SQLite, 27 November: 250 events 0.91× the
 * orders a second of the projection on the order thread, 1 000 0.91×, 2 000 1.05×;
 * docs/performance.md "The projector's worker behind the write gate").
 */
export const PROJECTION_WORKER_CHUNK = 2_000;

export interface ProjectionWriteOptions {
  /** See projectEvents. */
  onUnknownReason?: (reason: string) => void;
  /**
   * Read the orders and candles the batch builds on before the write transaction, not inside it.
   * Safe only where this writer is the tables' one writer (the projector is: one per database), and
   * what it buys is a short write lock: on SQLite a projection written from another thread holds
   * the file's single write lock only for its statements, not for its reads and its folding, so
   * the journal's commits on the order thread rarely meet it.
   */
  readOutside?: boolean;
}

/** Writes one folded batch and the cursor; answers the last seq written. */
export async function writeProjection(db: DbExecutor, events: readonly EngineEvent[], feeAccount: string, opts: ProjectionWriteOptions | ((reason: string) => void) = {}): Promise<number> {
  const o: ProjectionWriteOptions = typeof opts === 'function' ? { onUnknownReason: opts } : opts;
  const fold = async (reader: DbExecutor) => {
    const known = new Map((await getOrdersByIds(reader, referencedOrderIds(events))).map((x) => [x.orderId, x]));
    const batch = projectEvents(events, known, feeAccount, o.onUnknownReason);
    const candles = [...batch.candles.values()];
    const stored = new Map((await getPerpCandles(reader, candles)).map((c) => [candleKey(c), c]));
    return { batch, candles: candles.map((c) => mergeCandle(stored.get(candleKey(c)), c)) };
  };
  const write = async (tx: DbExecutor, f: { batch: ProjectedBatch; candles: PerpCandleRecord[] }) => {
    await upsertOrders(tx, [...f.batch.orders.values()]);
    await insertTrades(tx, f.batch.trades);
    await insertTransactions(tx, f.batch.transactions);
    await insertFundingRates(tx, f.batch.fundingRates);
    await insertLiquidityMoves(tx, f.batch.liquidityMoves);
    await insertInsuranceMoves(tx, f.batch.insuranceMoves);
    await upsertPerpCandles(tx, f.candles);
    await setMeta(tx, PROJECTION_CURSOR_KEY, String(f.batch.lastSeq));
    return f.batch.lastSeq;
  };
  // Not durable: the rows and the cursor commit together, and the journal they come from is, so a
  // machine crash that loses the last batches only makes the projector write them again.
  if (o.readOutside) {
    const folded = await fold(db);
    return withTransaction(db, (tx) => write(tx, folded), { durable: false });
  }
  return withTransaction(db, async (tx) => write(tx, await fold(tx)), { durable: false });
}

function candleKey(c: PerpCandleRecord): string {
  return `${c.symbol}|${c.kind}|${c.interval}|${c.openTime}`;
}
