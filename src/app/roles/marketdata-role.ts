/** Role `marketdata`: the price simulator, writing quotes and candles to storage for every process. */
import { createMarketDataService } from '../../marketdata/market-data-service.ts';
import { PERP_INDEX_SYMBOLS } from '../../marketdata/symbol-catalog.ts';
import type { StackContext } from '../stack-context.ts';

export async function startMarketDataRole(ctx: StackContext): Promise<() => Promise<void>> {
  const { config } = ctx;
  const md = createMarketDataService({
    db: ctx.db,
    // The stocks, and the crypto indices of the perpetual venue (simulated only, 24/7).
    symbols: [...ctx.symbols, ...PERP_INDEX_SYMBOLS.filter((p) => !ctx.symbols.some((s) => s.symbol === p.symbol))],
    calendar: ctx.calendar,
    seed: config.marketDataSeed,
    tickMs: config.marketDataTickMs,
    historyDays: config.historyDays,
    logger: ctx.logger,
  });
  await md.start();
  ctx.provideQuotes(md);
  // Progress is a tick whose quotes reached storage: other processes read them from there.
  const untrack = ctx.status.track('marketdata', () => ({
    progressAt: md.lastWrittenAt(),
    subjects: Object.fromEntries(md.listQuotes().map((q) => [q.symbol, q.timestamp])),
  }));
  return async () => {
    untrack();
    await md.stop();
  };
}
