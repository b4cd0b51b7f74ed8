/** Role `marketdata`: the price simulator, writing quotes and candles to storage for every process. */
import { createMarketDataService } from '../../marketdata/market-data-service.ts';
import type { StackContext } from '../stack-context.ts';

export async function startMarketDataRole(ctx: StackContext): Promise<() => Promise<void>> {
  const { config } = ctx;
  const md = createMarketDataService({
    db: ctx.db,
    symbols: ctx.symbols,
    calendar: ctx.calendar,
    seed: config.marketDataSeed,
    tickMs: config.marketDataTickMs,
    historyDays: config.historyDays,
    logger: ctx.logger,
  });
  await md.start();
  ctx.provideQuotes(md);
  return () => md.stop();
}
