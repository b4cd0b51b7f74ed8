/**
 * Two independent providers through the quote guard: the live quote service fed by the Alpaca
 * stream (primary, traded on) and Pyth's Hermes stream (check), each from a local server speaking
 * its provider's protocol, writing a real database. A divergence beyond QUOTE_MAX_DIVERGENCE_BPS, a
 * silent check feed and a too-uncertain check price each halt the symbol (no write; readiness
 * detail and metrics say why) and the next agreeing price lifts it. Shared fake clock, no sleeps.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { testDatabases } from '../support/test-databases.ts';
import { FAKE_ALPACA_KEY, FAKE_ALPACA_SECRET, frame, quote, startFakeAlpaca, tickLog } from '../support/alpaca-fake-server.ts';
import { FAKE_PYTH_KEY, FEED, startFakeHermes, type FeedPrice } from '../support/pyth-hermes-fake-server.ts';
import type { Db } from '../../src/storage/database.ts';
import { getQuote } from '../../src/storage/quote-store.ts';
import { createAlpacaStreamSource } from '../../src/marketdata/sources/alpaca-stream-source.ts';
import { createPythHermesSource } from '../../src/marketdata/sources/pyth-hermes-source.ts';
import { createLiveQuoteService, liveQuoteDetail, liveQuoteMetrics, type LiveQuoteServiceOptions } from '../../src/marketdata/live-quote-service.ts';
import { DEMO_SYMBOLS } from '../../src/marketdata/symbol-catalog.ts';
import { metricsRegistry, trackQuoteFeed } from '../../src/observability/metrics-registry.ts';
import { memoryLogger } from './marketdata-test-helpers.ts';

/** Tuesday 15 September 2026, 10:30:10 New York: the regular session. */
const T0 = Date.UTC(2026, 8, 15, 14, 30, 10);
const S = T0 / 1000;

const pyth = (id: string, price: string, publishTime: number, conf = '1500'): FeedPrice => ({ id, price, conf, expo: -5, publishTime });

describe.each(testDatabases)('live quotes checked by a second provider ($name)', { timeout: 20_000 }, ({ open }) => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  const clock = { t: T0 };
  async function setup(over: Partial<LiveQuoteServiceOptions> = {}) {
    clock.t = T0;
    const db: Db = await open();
    cleanups.push(() => db.close());
    const alpacaServer = await startFakeAlpaca();
    cleanups.push(alpacaServer.close);
    const hermes = await startFakeHermes();
    cleanups.push(hermes.close);
    const logger = memoryLogger();
    const symbols = ['AAPL', 'MSFT'];
    const alpaca = createAlpacaStreamSource({ keyId: FAKE_ALPACA_KEY, secretKey: FAKE_ALPACA_SECRET, url: alpacaServer.url, symbols, now: () => clock.t, logger });
    const check = createPythHermesSource({ apiKey: FAKE_PYTH_KEY, url: hermes.url, symbols, feedIds: { AAPL: FEED.AAPL, MSFT: FEED.MSFT }, now: () => clock.t, logger });
    const service = createLiveQuoteService({
      db,
      symbols: DEMO_SYMBOLS.filter((s) => symbols.includes(s.symbol)),
      sources: [alpaca, check],
      staleAfterMs: 3_000,
      maxDivergenceBps: 50,
      now: () => clock.t,
      autoFlush: false,
      logger,
      ...over,
    });
    await service.start();
    cleanups.push(() => service.stop());
    const untrack = trackQuoteFeed(liveQuoteMetrics(service));
    cleanups.push(async () => untrack());
    return { db, service, logger, a: await alpacaServer.subscribedConnection(), p: await hermes.streamingConnection(), alog: tickLog(alpaca), plog: tickLog(check) };
  }

  const statusOf = async (symbol: string) => {
    const text = await metricsRegistry.getSingleMetricAsString('tokex_quote_symbol_status');
    return text.split('\n').find((l) => l.startsWith(`tokex_quote_symbol_status{symbol="${symbol}"`) && l.endsWith(' 1'))?.match(/status="([^"]+)"/)?.[1];
  };

  it('halts a symbol whose two providers disagree beyond the limit, and resumes when they agree again', async () => {
    const { db, service, logger, a, p, alog, plog } = await setup();
    a.send(frame(quote('AAPL', '229.80', '229.84', T0), quote('MSFT', '418.10', '418.16', T0)));
    p.update(pyth(FEED.AAPL, '22983000', S), pyth(FEED.MSFT, '41813000', S));
    await Promise.all([alog.count(2), plog.count(2)]);
    clock.t = T0 + 100;
    await service.flush();
    expect(service.statuses().map((s) => [s.symbol, s.status, s.divergenceBps])).toEqual([['AAPL', 'live', '0.43'], ['MSFT', 'live', '0.00']]);
    expect(await getQuote(db, 'AAPL')).toEqual({ symbol: 'AAPL', bid: '229.80', ask: '229.84', last: '229.82', timestamp: T0 });
    expect(liveQuoteDetail(service)).toEqual({
      quoteSource: 'alpaca-iex',
      quoteSourceState: 'live',
      quoteSourceError: null,
      quoteCheckSources: 'pyth-hermes=live',
      quoteCheckSourceErrors: null,
      quotesLive: 2,
      quotesHalted: '',
      haltReasons: '',
    });

    // Pyth moves to 231.00 while Alpaca stays near 229.83: 50.90 bps apart, over the 50 bps limit.
    clock.t = T0 + 1_000;
    p.update(pyth(FEED.AAPL, '23100000', S + 1), pyth(FEED.MSFT, '41813000', S));
    a.send(frame(quote('AAPL', '229.81', '229.85', T0 + 1_000)));
    await Promise.all([alog.count(3), plog.count(3)]);
    clock.t = T0 + 1_100;
    await service.flush();
    expect(service.statuses()[0]).toMatchObject({
      symbol: 'AAPL',
      status: 'diverged',
      tradable: false,
      reasons: [{ code: 'diverged', source: 'pyth-hermes', detail: 'mid 229.83 vs 231.00: 50.90 bps (limit 50)' }],
      divergenceBps: '50.90',
      quote: { source: 'alpaca-iex', bid: '229.81' },
    });
    // Nothing written: the stored quote keeps its price and its time, and ages.
    expect(await getQuote(db, 'AAPL')).toMatchObject({ bid: '229.80', timestamp: T0 });
    expect(liveQuoteDetail(service)).toMatchObject({
      quotesLive: 1,
      quotesHalted: 'AAPL=diverged',
      haltReasons: 'AAPL: pyth-hermes: mid 229.83 vs 231.00: 50.90 bps (limit 50)',
    });
    expect(await statusOf('AAPL')).toBe('diverged');
    expect(await statusOf('MSFT')).toBe('live');
    const states = await metricsRegistry.getSingleMetricAsString('tokex_quote_source_state');
    expect(states).toContain('tokex_quote_source_state{source="pyth-hermes",state="live"} 1');
    expect(states).toContain('tokex_quote_source_state{source="alpaca-iex",state="live"} 1');
    expect(logger.lines.some((l) => l.level === 'warn' && l.msg === 'live quotes: symbol halted' && (l.obj as { status: string }).status === 'diverged')).toBe(true);

    // Back within the limit: the primary's latest quote is written at the next flush.
    clock.t = T0 + 2_000;
    p.update(pyth(FEED.AAPL, '22984000', S + 2));
    await plog.count(4);
    await service.flush();
    expect(service.statuses()[0]).toMatchObject({ status: 'live', reasons: [], divergenceBps: '0.43' });
    expect(await getQuote(db, 'AAPL')).toEqual({ symbol: 'AAPL', bid: '229.81', ask: '229.85', last: '229.83', timestamp: T0 + 1_000 });
    expect(await statusOf('AAPL')).toBe('live');
  });

  it('halts a symbol whose check feed goes silent or too uncertain, though the primary ticks on', async () => {
    const { db, service, a, p, alog, plog } = await setup();
    a.send(frame(quote('AAPL', '229.80', '229.84', T0), quote('MSFT', '418.10', '418.16', T0)));
    p.update(pyth(FEED.AAPL, '22982000', S), pyth(FEED.MSFT, '41813000', S));
    await Promise.all([alog.count(2), plog.count(2)]);
    await service.flush();
    expect(service.statuses().map((s) => s.status)).toEqual(['live', 'live']);

    // Pyth's AAPL stops (Hermes repeats its old publish time); MSFT and Alpaca go on.
    clock.t = T0 + 3_001;
    a.send(frame(quote('AAPL', '229.81', '229.85', T0 + 3_000), quote('MSFT', '418.11', '418.16', T0 + 3_000)));
    p.update(pyth(FEED.AAPL, '22982000', S), pyth(FEED.MSFT, '41813000', S + 3));
    await Promise.all([alog.count(4), plog.count(3)]);
    await service.flush();
    expect(service.statuses()[0]).toMatchObject({
      symbol: 'AAPL',
      status: 'stale',
      reasons: [{ code: 'stale', source: 'pyth-hermes', detail: 'no accepted tick for 3001 ms (limit 3000)' }],
    });
    expect(await getQuote(db, 'AAPL')).toMatchObject({ bid: '229.80', timestamp: T0 });
    expect(await getQuote(db, 'MSFT')).toMatchObject({ bid: '418.11', timestamp: T0 + 3_000 });
    expect(liveQuoteDetail(service)).toMatchObject({ quotesHalted: 'AAPL=stale', haltReasons: 'AAPL: pyth-hermes: no accepted tick for 3001 ms (limit 3000)' });
    expect(await statusOf('AAPL')).toBe('stale');

    // A price whose confidence interval is 1.3 % of it is refused: still no check, still halted.
    p.update(pyth(FEED.AAPL, '22983000', S + 3, '300000'), pyth(FEED.MSFT, '41813000', S + 4));
    await plog.count(4);
    await service.flush();
    expect(service.statuses()[0].status).toBe('stale');
    const counts = await metricsRegistry.getSingleMetricAsString('tokex_quote_source_messages_total');
    expect(counts).toContain('tokex_quote_source_messages_total{source="pyth-hermes",outcome="rejected_value"} 1');
    expect(counts).toContain('tokex_quote_source_messages_total{source="pyth-hermes",outcome="duplicate"} 1');

    p.update(pyth(FEED.AAPL, '22983000', S + 3));
    await plog.count(5);
    await service.flush();
    expect(service.statuses()[0]).toMatchObject({ status: 'live', tradable: true });
    expect(await getQuote(db, 'AAPL')).toMatchObject({ bid: '229.81', timestamp: T0 + 3_000 });
  });

  it('with QUOTE_REQUIRE_ALL_SOURCES=false trades on the primary alone while the check feed is silent', async () => {
    const { db, service, a, alog } = await setup({ requireAllSources: false });
    a.send(frame(quote('AAPL', '229.80', '229.84', T0)));
    await alog.count(1);
    await service.flush();
    expect(service.statuses()[0]).toMatchObject({ symbol: 'AAPL', status: 'live', divergenceBps: undefined });
    expect(await getQuote(db, 'AAPL')).toMatchObject({ bid: '229.80', timestamp: T0 });
  });
});
