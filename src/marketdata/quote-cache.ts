/**
 * Quotes for API instances that run without the simulator: the quotes table, re-read every
 * `refreshMs`. A failed refresh is logged and the previous quotes keep being served (their
 * timestamps show how old they are) until the next refresh succeeds.
 */
import type { DbExecutor } from '../storage/database.ts';
import { listQuotes as readQuotes } from '../storage/quote-store.ts';
import type { Quote, QuoteReader } from './market-types.ts';
import type { MarketDataLogger } from './history-seeder.ts';

export interface QuoteCacheOptions {
  db: DbExecutor;
  /** Default 1000. */
  refreshMs?: number;
  logger?: MarketDataLogger;
}

export interface QuoteCache extends QuoteReader {
  /** Loads the quotes once (a failure is logged, not thrown), then refreshes on a timer. */
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Re-reads the table now; throws when storage fails. */
  refresh(): Promise<void>;
  getQuote(symbol: string): Quote | undefined;
  listQuotes(): Quote[];
}

export function createQuoteCache(opts: QuoteCacheOptions): QuoteCache {
  const refreshMs = opts.refreshMs ?? 1000;
  if (!Number.isInteger(refreshMs) || refreshMs < 10) throw new Error('refreshMs: must be an integer of at least 10');
  let quotes = new Map<string, Quote>();
  let timer: NodeJS.Timeout | undefined;
  let running = false;
  let inFlight: Promise<void> | undefined;
  let failing = false;

  const refresh = async (): Promise<void> => {
    const rows = await readQuotes(opts.db);
    quotes = new Map(rows.map((q) => [q.symbol, q]));
  };

  const refreshLogged = async (): Promise<void> => {
    try {
      await refresh();
      if (failing) opts.logger?.info({}, 'quote cache: refresh resumed');
      failing = false;
    } catch (err) {
      if (!failing) opts.logger?.error({ err }, 'quote cache: refresh failed; serving the previous quotes');
      failing = true;
    }
  };

  const schedule = (): void => {
    if (!running) return;
    timer = setTimeout(() => {
      timer = undefined;
      inFlight = refreshLogged().finally(() => {
        inFlight = undefined;
        schedule();
      });
    }, refreshMs);
  };

  return {
    async start() {
      if (running) return;
      running = true;
      await refreshLogged();
      schedule();
    },
    async stop() {
      running = false;
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      await inFlight;
    },
    refresh,
    getQuote: (symbol) => quotes.get(symbol),
    listQuotes: () => [...quotes.values()],
  };
}
