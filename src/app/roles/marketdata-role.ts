/**
 * Role `marketdata`: writes quotes and candles to storage for every process.
 *
 * - `QUOTE_SOURCE=simulator` (default): the price simulator quotes the stocks and the perp venue's
 *   crypto indices.
 * - `QUOTE_SOURCE=alpaca`: the listed stocks come from Alpaca's stream through the quote guard
 *   (live-quote-service.ts); the crypto indices (`alwaysOpen`: BTC, ETH) stay on the simulator,
 *   which runs beside it for them only. The two are one feed to the rest of the process
 *   (`combineQuoteFeeds`). docs/market-data.md.
 */
import { AppError } from '../../errors/app-error.ts';
import { createMarketDataService, type QuoteFeed } from '../../marketdata/market-data-service.ts';
import { combineQuoteFeeds, createLiveQuoteService, liveQuoteDetail, liveQuoteMetrics, type LiveQuoteService } from '../../marketdata/live-quote-service.ts';
import { createAlpacaStreamSource } from '../../marketdata/sources/alpaca-stream-source.ts';
import { PERP_INDEX_SYMBOLS, type SymbolSpec } from '../../marketdata/symbol-catalog.ts';
import type { RoleSample } from '../../observability/role-status.ts';
import { trackQuoteFeed } from '../../observability/metrics-registry.ts';
import type { StackContext } from '../stack-context.ts';

export async function startMarketDataRole(ctx: StackContext): Promise<() => Promise<void>> {
  const { config } = ctx;
  // The stocks, and the crypto indices of the perpetual venue (simulated only, 24/7).
  const all = [...ctx.symbols, ...PERP_INDEX_SYMBOLS.filter((p) => !ctx.symbols.some((s) => s.symbol === p.symbol))];
  const simulator = (symbols: readonly SymbolSpec[]) =>
    createMarketDataService({
      db: ctx.db,
      symbols,
      calendar: ctx.calendar,
      seed: config.marketDataSeed,
      tickMs: config.marketDataTickMs,
      historyDays: config.historyDays,
      logger: ctx.logger,
    });

  let feed: QuoteFeed;
  let live: LiveQuoteService | undefined;
  if (config.quoteSource.kind === 'simulator') {
    feed = simulator(all);
  } else {
    const stocks = all.filter((s) => !s.alwaysOpen);
    const simulated = all.filter((s) => s.alwaysOpen);
    live = createLiveQuoteService({
      db: ctx.db,
      symbols: stocks,
      sources: [alpacaSource(ctx, stocks)],
      staleAfterMs: config.quoteSource.staleAfterMs,
      maxDivergenceBps: config.quoteSource.maxDivergenceBps,
      recoverAfterMs: config.quoteSource.recoverAfterMs,
      calendar: ctx.calendar,
      logger: ctx.logger,
    });
    feed = combineQuoteFeeds([
      { feed: live, symbols: stocks.map((s) => s.symbol) },
      ...(simulated.length > 0 ? [{ feed: simulator(simulated), symbols: simulated.map((s) => s.symbol) }] : []),
    ]);
    if (ctx.calendar.kind === 'always-open') {
      ctx.logger.warn(
        { quoteSource: live.primary },
        'QUOTE_SOURCE=alpaca with MARKET_CALENDAR=always-open: quotes are expected round the clock, so the stocks halt as stale whenever the US market sends none (nights, weekends); set MARKET_CALENDAR=us-sessions or nyse',
      );
    }
  }

  await feed.start();
  const health = live?.sourceHealth()[0];
  if (health?.state === 'failed') {
    await feed.stop();
    // Refused credentials or a plan without the feed: a retry cannot help, so the start stops here.
    throw new AppError('VALIDATION', `QUOTE_SOURCE=alpaca: the stream refused us (${health.lastError?.message ?? 'failed'}); check ALPACA_KEY_ID, ALPACA_SECRET_KEY and ALPACA_FEED`);
  }
  ctx.provideQuotes(feed);
  // Progress is a write that reached storage (other processes read the quotes from there); the live
  // source's state and each halted symbol, with the guard's reasons, go with it to /readyz.
  const untrack = ctx.status.track('marketdata', (): RoleSample => ({
    progressAt: feed.lastWrittenAt(),
    subjects: Object.fromEntries(feed.listQuotes().map((q) => [q.symbol, q.timestamp])),
    ...(live === undefined ? {} : { detail: liveQuoteDetail(live) }),
  }));
  const untrackMetrics = live === undefined ? () => {} : trackQuoteFeed(liveQuoteMetrics(live));
  return async () => {
    untrackMetrics();
    untrack();
    await feed.stop();
  };
}

/** The Alpaca stream for `stocks`: each asked for by its `QUOTE_SYMBOL_MAP` ticker, else its underlying's. */
function alpacaSource(ctx: StackContext, stocks: readonly SymbolSpec[]) {
  const { quoteSource } = ctx.config;
  const alpaca = quoteSource.alpaca!;
  for (const symbol of Object.keys(quoteSource.symbolMap)) {
    if (!stocks.some((s) => s.symbol === symbol)) {
      throw new AppError('VALIDATION', `QUOTE_SYMBOL_MAP: ${symbol} is not a listed stock (listed: ${stocks.map((s) => s.symbol).join(', ')})`);
    }
  }
  const providerSymbols: Record<string, string> = {};
  for (const s of stocks) {
    const ticker = quoteSource.symbolMap[s.symbol] ?? s.underlying;
    if (ticker !== s.symbol) providerSymbols[s.symbol] = ticker;
  }
  return createAlpacaStreamSource({
    keyId: alpaca.keyId,
    secretKey: alpaca.secretKey,
    feed: alpaca.feed,
    ...(alpaca.streamUrl === undefined ? {} : { url: alpaca.streamUrl }),
    symbols: stocks.map((s) => s.symbol),
    providerSymbols,
    logger: ctx.logger,
  });
}
