/**
 * The quotes and candles a market-data writer (the simulator, the live quote service) has made but
 * storage does not hold yet. Each write takes everything pending in one transaction; a failed write
 * keeps it for the next (logged once per outage, not once per try), so a minute that finished while
 * the database was away still reaches it in its final form. A point made while a write is in flight
 * replaces its entry and stays pending after that write.
 */
import type { DbExecutor } from '../storage/database.ts';
import { upsertCandles } from '../storage/candle-store.ts';
import { upsertQuotes } from '../storage/quote-store.ts';
import { withTransaction } from '../storage/transaction.ts';
import type { MarketDataLogger } from './history-seeder.ts';
import type { Candle, Quote } from './market-types.ts';

export interface PendingMarketWrites {
  candle(c: Candle): void;
  quote(q: Quote): void;
  /** Writes what is pending; true when it reached storage (or nothing was pending). */
  write(): Promise<boolean>;
  clear(): void;
}

const candleKey = (c: Candle): string => `${c.symbol}\u0000${c.interval}\u0000${c.openTime}`;

/**
 * `what` names the writer in its log lines (`marketdata`, `live quotes`), `failure` says what
 * failed and when it is tried again (`tick write failed; retrying next tick`).
 */
export function createPendingMarketWrites(db: DbExecutor, log: MarketDataLogger | undefined, what: string, failure: string): PendingMarketWrites {
  const candles = new Map<string, Candle>();
  const quotes = new Map<string, Quote>();
  let failing = false;
  return {
    candle: (c) => void candles.set(candleKey(c), c),
    quote: (q) => void quotes.set(q.symbol, q),
    async write() {
      const candleRows = [...candles.values()];
      const quoteRows = [...quotes.values()];
      if (candleRows.length === 0 && quoteRows.length === 0) return true;
      try {
        await withTransaction(db, async (tx) => {
          await upsertCandles(tx, candleRows);
          await upsertQuotes(tx, quoteRows);
        });
      } catch (err) {
        if (!failing) log?.error({ err, pendingCandles: candles.size }, `${what}: ${failure}`);
        failing = true;
        return false;
      }
      // Only what this write carried.
      for (const c of candleRows) if (candles.get(candleKey(c)) === c) candles.delete(candleKey(c));
      for (const q of quoteRows) if (quotes.get(q.symbol) === q) quotes.delete(q.symbol);
      if (failing) log?.info({ candles: candleRows.length }, `${what}: storage writes resumed`);
      failing = false;
      return true;
    },
    clear() {
      candles.clear();
      quotes.clear();
    },
  };
}

/** Tells each listener of each quote, a listener's throw logged and the others still told. */
export function notifyQuoteListeners(listeners: Iterable<(q: Quote) => void>, fresh: readonly Quote[], what: string, log?: MarketDataLogger): void {
  for (const q of fresh) {
    for (const listener of listeners) {
      try {
        listener(q);
      } catch (err) {
        log?.error({ err }, `${what}: quote listener threw`);
      }
    }
  }
}
