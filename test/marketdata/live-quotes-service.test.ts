/**
 * The live quote service (src/marketdata/live-quote-service.ts) fed by the Alpaca stream source
 * over a real socket from a local server speaking Alpaca's protocol, writing real databases
 * (SQLite, and PostgreSQL when DATABASE_URL is set). The service and the source share a fake
 * clock, so ages are exact; the test waits on the source's ticks, never on sleeps.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { testDatabases } from '../support/test-databases.ts';
import { FAKE_ALPACA_KEY, FAKE_ALPACA_SECRET, frame, quote, startFakeAlpaca, tickLog, trade, type FakeAlpaca } from '../support/alpaca-fake-server.ts';
import type { Db } from '../../src/storage/database.ts';
import { getQuote } from '../../src/storage/quote-store.ts';
import { listCandles } from '../../src/storage/candle-store.ts';
import { createAlpacaStreamSource } from '../../src/marketdata/sources/alpaca-stream-source.ts';
import { createLiveQuoteService, liveQuoteDetail, liveQuoteMetrics, type LiveQuoteServiceOptions } from '../../src/marketdata/live-quote-service.ts';
import { createMarketCalendar } from '../../src/marketdata/market-calendar.ts';
import { createVenueCalendar, DEMO_SYMBOLS, withSessionFlags } from '../../src/marketdata/symbol-catalog.ts';
import type { Quote } from '../../src/marketdata/market-types.ts';
import { metricsRegistry, trackQuoteFeed } from '../../src/observability/metrics-registry.ts';
import { breakWrites, memoryLogger } from './marketdata-test-helpers.ts';

const MINUTE = 60_000;
/** Tuesday 15 September 2026, 10:30:10 New York: the regular session. */
const T0 = Date.UTC(2026, 8, 15, 14, 30, 10);
const AAPL = DEMO_SYMBOLS.find((s) => s.symbol === 'AAPL')!;
const MSFT = DEMO_SYMBOLS.find((s) => s.symbol === 'MSFT')!;


describe.each(testDatabases)('live quote service ($name)', { timeout: 20_000 }, ({ open }) => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  const clock = { t: T0 };
  async function setup(over: Partial<LiveQuoteServiceOptions> = {}, symbols = ['AAPL', 'MSFT'], startAt = T0) {
    clock.t = startAt;
    const db: Db = await open();
    cleanups.push(() => db.close());
    const server: FakeAlpaca = await startFakeAlpaca();
    cleanups.push(server.close);
    const logger = memoryLogger();
    const source = createAlpacaStreamSource({
      keyId: FAKE_ALPACA_KEY,
      secretKey: FAKE_ALPACA_SECRET,
      url: server.url,
      symbols,
      initialBackoffMs: 20,
      maxBackoffMs: 200,
      random: () => 0.5,
      now: () => clock.t,
      logger,
    });
    const service = createLiveQuoteService({
      db,
      symbols: DEMO_SYMBOLS.filter((s) => symbols.includes(s.symbol)),
      sources: [source],
      staleAfterMs: 3_000,
      now: () => clock.t,
      autoFlush: false,
      logger,
      ...over,
    });
    const published: Quote[] = [];
    service.onQuote((q) => published.push(q));
    await service.start();
    cleanups.push(() => service.stop());
    const log = tickLog(source);
    const conn = await server.subscribedConnection();
    return { db, server, source, service, conn, log, logger, published };
  }

  const stored = (db: Db, symbol: string) => getQuote(db, symbol);
  const candles = (db: Db, symbol: string, interval: '1m' | '5m' | '1h' | '1d') => listCandles(db, { symbol, interval, startTime: 0, limit: 100 });

  it('writes the guard-accepted quotes with the exact prices, once a flush, and builds 1m candles and their aggregates from quotes and trades', async () => {
    const { db, service, conn, log, published } = await setup();
    expect(service.statuses().map((s) => [s.symbol, s.status])).toEqual([['AAPL', 'no-data'], ['MSFT', 'no-data']]);
    expect(await stored(db, 'AAPL')).toBeUndefined();

    clock.t = T0 + 7;
    conn.send(
      frame(
        quote('AAPL', '229.8', '229.85', T0 + 1, 689_322),
        trade('AAPL', '229.83', T0 + 2, 1, 100),
        quote('AAPL', '229.81', '229.85', T0 + 3),
        quote('MSFT', '418.1', '418.12345678', T0 + 4),
        quote('AAPL', '229.81', '229.85', T0 + 3), // a repeat: dropped by the source
        quote('AAPL', '229.7', '229.85', T0 + 2), // older than the last: dropped
        '{"T":"q","S":"AAPL"}', // malformed
        quote('AAPL', '0', '229.85', T0 + 5), // an empty bid side
      ),
    );
    await log.count(3);
    // Nothing reaches storage between flushes, however fast the source ticks.
    expect(await stored(db, 'AAPL')).toBeUndefined();
    clock.t = T0 + 500;
    await service.flush();
    // Its own time (the provider's, earlier than its receipt), its exact digits.
    expect(await stored(db, 'AAPL')).toEqual({ symbol: 'AAPL', bid: '229.81', ask: '229.85', last: '229.83', timestamp: T0 + 3 });
    expect(await stored(db, 'MSFT')).toEqual({ symbol: 'MSFT', bid: '418.10', ask: '418.12345678', last: '418.11172839', timestamp: T0 + 4 });
    expect(service.getQuote('AAPL')).toEqual(await stored(db, 'AAPL'));
    expect(published.map((q) => q.symbol)).toEqual(['AAPL', 'MSFT']);
    expect(service.counters()).toEqual({ 'alpaca-iex': { accepted: 4, duplicate: 1, outOfOrder: 1, malformed: 1, rejectedValue: 1, ignored: 0 } });

    const minute = Math.floor(T0 / MINUTE) * MINUTE;
    // Points: the mid 229.825 (no trade yet), the trade 229.83 (100 shares), then `last` 229.83.
    const first = { symbol: 'AAPL', openTime: minute, open: '229.825', high: '229.83', low: '229.825', close: '229.83', volume: '100' };
    expect(await candles(db, 'AAPL', '1m')).toEqual([{ ...first, interval: '1m' }]);
    expect(await candles(db, 'AAPL', '1h')).toEqual([{ ...first, interval: '1h', openTime: Math.floor(T0 / 3_600_000) * 3_600_000 }]);

    // A flush with nothing new writes nothing new and tells no listener.
    clock.t = T0 + 1_500;
    await service.flush();
    expect(published).toHaveLength(2);
    expect((await stored(db, 'AAPL'))!.timestamp).toBe(T0 + 3);

    // The next minute: the first candle is finished, a new one opens, the 5m candle spans both.
    clock.t = minute + MINUTE + 5;
    conn.send(frame(trade('AAPL', '229.60', minute + 59_000, 2, 250), quote('AAPL', '229.5', '229.55', minute + MINUTE + 1)));
    await log.count(4);
    // A trade of the previous minute that arrives after it has ended adds its shares to the candle
    // in progress; its price is the next quote's `last`, at that quote's time.
    conn.send(frame(trade('AAPL', '229.58', minute + 59_500, 3, 40)));
    conn.send(frame(quote('AAPL', '229.52', '229.56', minute + MINUTE + 2)));
    await log.count(5);
    clock.t = minute + MINUTE + 500;
    await service.flush();
    expect(await candles(db, 'AAPL', '1m')).toEqual([
      { ...first, interval: '1m', low: '229.60', close: '229.60', volume: '350' },
      { symbol: 'AAPL', interval: '1m', openTime: minute + MINUTE, open: '229.60', high: '229.60', low: '229.58', close: '229.58', volume: '40' },
    ]);
    const fiveMinute = Math.floor(T0 / 300_000) * 300_000;
    expect(await candles(db, 'AAPL', '5m')).toEqual([
      { symbol: 'AAPL', interval: '5m', openTime: fiveMinute, open: '229.825', high: '229.83', low: '229.58', close: '229.58', volume: '390' },
    ]);
    expect(await stored(db, 'AAPL')).toEqual({ symbol: 'AAPL', bid: '229.52', ask: '229.56', last: '229.58', timestamp: minute + MINUTE + 2 });
  });

  it('halts a symbol after a gap: its stored quote stops refreshing, status, readiness detail and metric say stale, and it recovers', async () => {
    const { db, service, conn, log, logger } = await setup({ recoverAfterMs: 1_000 });
    const untrack = trackQuoteFeed(liveQuoteMetrics(service));
    cleanups.push(async () => untrack());
    const statusOf = async (symbol: string) => {
      const text = await metricsRegistry.getSingleMetricAsString('tokex_quote_symbol_status');
      const line = text.split('\n').find((l) => l.startsWith(`tokex_quote_symbol_status{symbol="${symbol}"`) && l.endsWith(' 1'));
      return line?.match(/status="([^"]+)"/)?.[1];
    };

    clock.t = T0;
    conn.send(frame(quote('AAPL', '229.80', '229.84', T0), quote('MSFT', '418.10', '418.16', T0)));
    await log.count(2);
    // The first quote ends `no-data`: live 1 s later (QUOTE_RECOVER_AFTER_MS here).
    clock.t = T0 + 100;
    await service.flush();
    expect(await statusOf('AAPL')).toBe('no-data');
    expect(await stored(db, 'AAPL')).toBeUndefined();
    clock.t = T0 + 1_000;
    await service.flush();
    expect(await statusOf('AAPL')).toBe('live');
    const before = await stored(db, 'AAPL');
    expect(before).toMatchObject({ bid: '229.80', timestamp: T0 });

    // MSFT keeps ticking; AAPL goes silent past the 3 s limit.
    clock.t = T0 + 2_000;
    conn.send(frame(quote('MSFT', '418.11', '418.16', T0 + 2_000)));
    await log.count(3);
    clock.t = T0 + 3_001;
    await service.flush();
    expect(service.statuses().map((s) => [s.symbol, s.status, s.tradable])).toEqual([['AAPL', 'stale', false], ['MSFT', 'live', true]]);
    expect(await stored(db, 'AAPL')).toEqual(before);
    expect((await stored(db, 'MSFT'))!.timestamp).toBe(T0 + 2_000);
    expect(await statusOf('AAPL')).toBe('stale');
    expect(await statusOf('MSFT')).toBe('live');
    expect(liveQuoteDetail(service)).toEqual({
      quoteSource: 'alpaca-iex',
      quoteSourceState: 'live',
      quoteSourceError: null,
      quotesLive: 1,
      quotesHalted: 'AAPL=stale',
      haltReasons: 'AAPL: no accepted tick for 3001 ms (limit 3000)',
    });
    expect(logger.lines.some((l) => l.level === 'warn' && l.msg === 'live quotes: symbol halted' && (l.obj as { symbol: string }).symbol === 'AAPL')).toBe(true);

    // A quote again: the halt ends only after 1 s clear; until then nothing is written.
    clock.t = T0 + 3_500;
    conn.send(frame(quote('AAPL', '229.90', '229.94', T0 + 3_500)));
    await log.count(4);
    clock.t = T0 + 3_600;
    await service.flush();
    expect(service.statuses()[0]).toMatchObject({ symbol: 'AAPL', status: 'stale', reasons: [{ code: 'recovering' }] });
    expect(await stored(db, 'AAPL')).toEqual(before);
    clock.t = T0 + 4_500;
    await service.flush();
    expect(service.statuses()[0]).toMatchObject({ symbol: 'AAPL', status: 'live', tradable: true });
    expect(await stored(db, 'AAPL')).toEqual({ symbol: 'AAPL', bid: '229.90', ask: '229.94', last: '229.92', timestamp: T0 + 3_500 });
    expect(await statusOf('AAPL')).toBe('live');
    expect(liveQuoteDetail(service)).toMatchObject({ quotesLive: 2, quotesHalted: '', haltReasons: '' });
    const counters = await metricsRegistry.getSingleMetricAsString('tokex_quote_source_messages_total');
    expect(counters).toContain('tokex_quote_source_messages_total{source="alpaca-iex",outcome="accepted"} 4');
  });

  it('raises no stale alarm while the symbol\'s session is closed, and keeps its last quote fresh in time, as the simulator does', async () => {
    // Saturday 19 September 2026, 12:00 New York: closed under us-sessions. NVDA does not trade overnight.
    const saturday = Date.UTC(2026, 8, 19, 16, 0, 0);
    const specs = withSessionFlags(DEMO_SYMBOLS, { NVDA: { overnightTradable: false } });
    const calendar = createVenueCalendar(createMarketCalendar('us-sessions'), { symbols: specs });
    const { db, service, conn, log } = await setup({ calendar, symbols: specs.filter((s) => ['AAPL', 'NVDA'].includes(s.symbol)) }, ['AAPL', 'NVDA'], saturday);
    clock.t = saturday;
    conn.send(frame(quote('AAPL', '229.80', '229.84', saturday - 10), quote('NVDA', '131.20', '131.30', saturday - 10)));
    await log.count(2);
    clock.t = saturday + 600_000;
    await service.flush();
    expect(service.statuses().map((s) => s.status)).toEqual(['live', 'live']);
    expect(await stored(db, 'AAPL')).toEqual({ symbol: 'AAPL', bid: '229.80', ask: '229.84', last: '229.82', timestamp: saturday + 600_000 });
    // No candle for a closed minute.
    expect(await candles(db, 'AAPL', '1m')).toEqual([]);

    // Tuesday 22 September 2026, 02:00 New York: overnight. AAPL trades in it and is stale without
    // quotes; NVDA does not, so no alarm for it and its quote stands.
    clock.t = Date.UTC(2026, 8, 22, 6, 0, 0);
    await service.flush();
    expect(service.statuses().map((s) => [s.symbol, s.status])).toEqual([['AAPL', 'stale'], ['NVDA', 'live']]);
    expect((await stored(db, 'AAPL'))!.timestamp).toBe(saturday + 600_000);
    expect((await stored(db, 'NVDA'))!.timestamp).toBe(clock.t);
  });

  it('keeps what a failed write carried pending and writes it when storage is back; a restart continues the minute\'s candle', async () => {
    const { db, service, conn, log, logger } = await setup();
    clock.t = T0;
    conn.send(frame(quote('AAPL', '229.80', '229.84', T0)));
    await log.count(1);
    const repair = await breakWrites(db, 'candles');
    await service.flush();
    expect(await stored(db, 'AAPL')).toBeUndefined(); // one transaction: the quote did not land either
    expect(logger.lines.filter((l) => l.msg === 'live quotes: write failed; retrying next flush')).toHaveLength(1);
    await service.flush();
    expect(logger.lines.filter((l) => l.msg === 'live quotes: write failed; retrying next flush')).toHaveLength(1);
    await repair();
    clock.t = T0 + 200;
    await service.flush();
    expect(await stored(db, 'AAPL')).toMatchObject({ bid: '229.80', timestamp: T0 });
    expect(await candles(db, 'AAPL', '1m')).toMatchObject([{ open: '229.82', close: '229.82' }]);
    await service.stop();

    // A second service on the same database within the same minute goes on from the stored candle.
    const server2 = await startFakeAlpaca();
    cleanups.push(server2.close);
    const source2 = createAlpacaStreamSource({ keyId: FAKE_ALPACA_KEY, secretKey: FAKE_ALPACA_SECRET, url: server2.url, symbols: ['AAPL'], now: () => clock.t });
    const again = createLiveQuoteService({ db, symbols: [AAPL], sources: [source2], staleAfterMs: 3_000, now: () => clock.t, autoFlush: false });
    await again.start();
    cleanups.push(() => again.stop());
    expect(again.getQuote('AAPL')).toMatchObject({ bid: '229.80', timestamp: T0 }); // read back, before any tick
    const log2 = tickLog(source2);
    clock.t = T0 + 1_000;
    (await server2.subscribedConnection()).send(frame(quote('AAPL', '229.90', '229.96', T0 + 1_000)));
    await log2.count(1);
    await again.flush();
    const minute = Math.floor(T0 / MINUTE) * MINUTE;
    expect(await candles(db, 'AAPL', '1m')).toEqual([{ symbol: 'AAPL', interval: '1m', openTime: minute, open: '229.82', high: '229.93', low: '229.82', close: '229.93', volume: '0' }]);
    expect(await candles(db, 'AAPL', '1d')).toMatchObject([{ open: '229.82', high: '229.93', close: '229.93' }]);
  });
});

describe('live quote service options', () => {
  it('refuses a service without a source and a malformed stale limit', () => {
    expect(() => createLiveQuoteService({ db: undefined as never, symbols: [MSFT], sources: [], staleAfterMs: 1 })).toThrow('at least one source');
    const source = createAlpacaStreamSource({ keyId: 'k', secretKey: 's', symbols: ['MSFT'] });
    expect(() => createLiveQuoteService({ db: undefined as never, symbols: [MSFT], sources: [source], staleAfterMs: 0 })).toThrow('QUOTE_STALE_AFTER_MS: must be a positive integer');
  });
});
