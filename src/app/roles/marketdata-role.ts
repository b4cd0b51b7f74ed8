/**
 * Role `marketdata`: writes quotes and candles to storage for every process.
 *
 * - `QUOTE_SOURCE=simulator` (default): the price simulator quotes the stocks and the perp venue's
 *   crypto indices.
 * - `QUOTE_SOURCE=alpaca`: the listed stocks come from Alpaca's stream through the quote guard
 *   (live-quote-service.ts); the crypto indices (`alwaysOpen`: BTC, ETH) stay on the simulator,
 *   which runs beside it for them only. The two are one feed to the rest of the process
 *   (`combineQuoteFeeds`). docs/market-data.md.
 * - `QUOTE_SOURCE=alpaca,pyth`: as `alpaca`, with Pyth's Hermes stream checking every stock's
 *   price; a symbol whose two prices diverge beyond `QUOTE_MAX_DIVERGENCE_BPS` halts.
 */
import { AppError } from '../../errors/app-error.ts';
import { createMarketDataService, type MarketDataService, type QuoteFeed } from '../../marketdata/market-data-service.ts';
import { onVenueClockStep } from '../../lib/venue-clock.ts';
import { venueClockStep } from '../../lib/venue-clock-walk.ts';
import { loadCorporateActions, newYorkDate } from '../../marketdata/corporate-actions.ts';
import { ceilToMinute, priceSplitsOf } from '../../marketdata/price-splits.ts';
import { listCorporateActions } from '../../stock/corporate-actions/corporate-action-store.ts';
import { combineQuoteFeeds, createLiveQuoteService, liveQuoteDetail, liveQuoteMetrics, type LiveQuoteService } from '../../marketdata/live-quote-service.ts';
import { createAlpacaStreamSource } from '../../marketdata/sources/alpaca-stream-source.ts';
import { createPythHermesSource, PYTH_DEMO_FEED_IDS } from '../../marketdata/sources/pyth-hermes-source.ts';
import type { QuoteSource } from '../../marketdata/sources/quote-source.ts';
import { PERP_INDEX_SYMBOLS, type SymbolSpec } from '../../marketdata/symbol-catalog.ts';
import type { RoleSample } from '../../observability/role-status.ts';
import { trackQuoteFeed } from '../../observability/metrics-registry.ts';
import type { StackContext } from '../stack-context.ts';

export async function startMarketDataRole(ctx: StackContext): Promise<() => Promise<void>> {
  const { config } = ctx;
  // The stocks, and the crypto indices of the perpetual venue (simulated only, 24/7).
  const all = [...ctx.symbols, ...PERP_INDEX_SYMBOLS.filter((p) => !ctx.symbols.some((s) => s.symbol === p.symbol))];
  // Splits move the simulator's prices at their minute (wall clock: the simulator's), and stamp the
  // quotes with the multiplier they are in (docs/corporate-actions.md, "Splits").
  const fileActions = (await loadCorporateActions(config.corporateActionsFile)).list();
  const venueStartDate = newYorkDate(ctx.chain.deployment.deployedAt);
  const offset = ctx.calendar.clockOffsetMs;
  const readSplits = async () =>
    priceSplitsOf(fileActions, await listCorporateActions(ctx.db), venueStartDate, offset).map((s) => ({ ...s, at: ceilToMinute(s.at - offset) }));
  const simulator = (symbols: readonly SymbolSpec[]) =>
    createMarketDataService({
      db: ctx.db,
      symbols,
      calendar: ctx.calendar,
      seed: config.marketDataSeed,
      tickMs: config.marketDataTickMs,
      historyDays: config.historyDays,
      logger: ctx.logger,
      readSplits,
    });

  let feed: QuoteFeed;
  // The simulator's tick, for a sandbox's clock advance (docs/sandbox.md): each step's prices first.
  let simulated: MarketDataService | undefined;
  let live: LiveQuoteService | undefined;
  let sources: QuoteSource[] = [];
  if (config.quoteSource.kind === 'simulator') {
    feed = simulated = simulator(all);
  } else {
    const stocks = all.filter((s) => !s.alwaysOpen);
    const simulated = all.filter((s) => s.alwaysOpen);
    // Primary first: its prices are traded on; the check sources only judge them.
    sources = [alpacaSource(ctx, stocks), ...config.quoteSource.checks.map(() => pythSource(ctx, stocks))];
    live = createLiveQuoteService({
      db: ctx.db,
      symbols: stocks,
      sources,
      staleAfterMs: config.quoteSource.staleAfterMs,
      maxDivergenceBps: config.quoteSource.maxDivergenceBps,
      recoverAfterMs: config.quoteSource.recoverAfterMs,
      requireAllSources: config.quoteSource.requireAllSources,
      // The live service's clock is the wall clock: the splits' moments are moved onto it.
      readSplits,
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
  const failed = sources.findIndex((s) => s.health().state === 'failed');
  if (failed !== -1) {
    const health = sources[failed].health();
    await feed.stop();
    // Refused credentials, a plan without the feed or unknown feed ids: a retry cannot help, so the start stops here.
    const why = health.lastError?.message ?? 'failed';
    throw new AppError(
      'VALIDATION',
      failed === 0
        ? `QUOTE_SOURCE=alpaca: the stream refused us (${why}); check ALPACA_KEY_ID, ALPACA_SECRET_KEY and ALPACA_FEED`
        : `QUOTE_SOURCE=${['alpaca', ...config.quoteSource.checks].join(',')}: Pyth's Hermes refused us (${why}); check PYTH_API_KEY, PYTH_FEED_IDS and PYTH_HERMES_URL`,
    );
  }
  ctx.provideQuotes(feed);
  // At a step of a sandbox's advance: the jump's whole days inside walked by the hour, and what the
  // step made written to storage only at its calendar steps (the last among them): in between the
  // quotes are this process's, which is all the step's tasks read (docs/sandbox.md "Clock").
  const offStep = ctx.sandbox && simulated
    ? onVenueClockStep({
        stage: 'prices',
        name: 'price simulator',
        run: () => {
          const step = venueClockStep();
          return simulated!.tick(step === undefined ? {} : { coarse: { from: step.from, to: step.to }, write: step.calendar });
        },
      })
    : () => {};
  // Progress is a write that reached storage (other processes read the quotes from there); the live
  // source's state and each halted symbol, with the guard's reasons, go with it to /readyz.
  const untrack = ctx.status.track('marketdata', (): RoleSample => ({
    progressAt: feed.lastWrittenAt(),
    subjects: Object.fromEntries(feed.listQuotes().map((q) => [q.symbol, q.timestamp])),
    ...(live === undefined ? {} : { detail: liveQuoteDetail(live) }),
  }));
  const untrackMetrics = live === undefined ? () => {} : trackQuoteFeed(liveQuoteMetrics(live));
  return async () => {
    offStep();
    untrackMetrics();
    untrack();
    await feed.stop();
    // The roles that stay (the APIs, their streams) read the quotes table until a feed is back.
    await ctx.withdrawQuotes(feed);
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

/** Pyth's Hermes stream checking `stocks`: each by its `PYTH_FEED_IDS` id, else the built-in id of its underlying. */
function pythSource(ctx: StackContext, stocks: readonly SymbolSpec[]): QuoteSource {
  const pyth = ctx.config.quoteSource.pyth!;
  for (const symbol of Object.keys(pyth.feedIds)) {
    if (!stocks.some((s) => s.symbol === symbol)) {
      throw new AppError('VALIDATION', `PYTH_FEED_IDS: ${symbol} is not a listed stock (listed: ${stocks.map((s) => s.symbol).join(', ')})`);
    }
  }
  const feedIds: Record<string, string> = {};
  const missing: string[] = [];
  for (const s of stocks) {
    const id = pyth.feedIds[s.symbol] ?? PYTH_DEMO_FEED_IDS[s.underlying] ?? PYTH_DEMO_FEED_IDS[s.symbol];
    if (id === undefined) missing.push(s.symbol);
    else feedIds[s.symbol] = id;
  }
  if (missing.length > 0) {
    throw new AppError('VALIDATION', `PYTH_FEED_IDS: no Pyth feed id for ${missing.join(', ')} (give each as SYMBOL=<64 hex digits>, the Equity.US.<TICKER>/USD id from Pyth's price-feed ids page)`);
  }
  return createPythHermesSource({
    apiKey: pyth.apiKey,
    ...(pyth.hermesUrl === undefined ? {} : { url: pyth.hermesUrl }),
    symbols: stocks.map((s) => s.symbol),
    feedIds,
    maxConfBps: pyth.maxConfBps,
    logger: ctx.logger,
  });
}
