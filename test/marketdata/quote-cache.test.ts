import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { testDatabases } from '../support/test-databases.ts';
import { until } from '../support/poll.ts';
import type { Db } from '../../src/storage/database.ts';
import { upsertQuotes } from '../../src/storage/quote-store.ts';
import { DEMO_SYMBOLS } from '../../src/marketdata/symbol-catalog.ts';
import { createMarketDataService } from '../../src/marketdata/market-data-service.ts';
import { createQuoteCache, type QuoteCache } from '../../src/marketdata/quote-cache.ts';
import { memoryLogger } from './marketdata-test-helpers.ts';

describe.each(testDatabases)('quote cache ($name)', ({ open }) => {
  const dbs: Db[] = [];
  const caches: QuoteCache[] = [];
  afterEach(async () => {
    await Promise.all(caches.splice(0).map((c) => c.stop()));
    await Promise.all(dbs.splice(0).map((db) => db.close()));
  });

  it("serves the simulator's quotes read through storage", async () => {
    const db = await open();
    dbs.push(db);
    const clock = { t: Date.UTC(2025, 2, 12, 15, 0, 5) };
    const service = createMarketDataService({ db, symbols: DEMO_SYMBOLS, seed: 3, historyDays: 1, now: () => clock.t, autoTick: false });
    const cache = createQuoteCache({ db, refreshMs: 25 });
    caches.push(cache);
    await cache.start();
    expect(cache.getQuote('AAPL')).toBeUndefined();
    expect(cache.listQuotes()).toEqual([]);

    await service.start();
    clock.t += 1_000;
    await service.tick();
    await cache.refresh();
    const bySymbol = (a: { symbol: string }, b: { symbol: string }) => (a.symbol < b.symbol ? -1 : 1);
    expect([...cache.listQuotes()].sort(bySymbol)).toEqual([...service.listQuotes()].sort(bySymbol));
    expect(cache.listQuotes().length).toBe(DEMO_SYMBOLS.length);
    for (const spec of DEMO_SYMBOLS) expect(cache.getQuote(spec.symbol)).toEqual(service.getQuote(spec.symbol));

    // The timer picks up the next tick without an explicit refresh.
    clock.t += 1_000;
    await service.tick();
    const wanted = service.getQuote('TSLA')!;
    await until(async () => cache.getQuote('TSLA')?.timestamp, (ts) => ts === wanted.timestamp, 20_000);
    expect(cache.getQuote('TSLA')).toEqual(wanted);
    await service.stop();
  });

  it('keeps serving the last quotes while a refresh fails', async () => {
    const db = await open();
    dbs.push(db);
    await upsertQuotes(db, [{ symbol: 'AAPL', bid: '229.82', ask: '229.92', last: '229.87', timestamp: 1 }]);
    const logger = memoryLogger();
    const cache = createQuoteCache({ db, refreshMs: 20, logger });
    caches.push(cache);
    await cache.start();
    expect(cache.getQuote('AAPL')).toMatchObject({ last: '229.87' });

    // A read failure: the table is renamed away for a moment.
    await sql.raw('alter table quotes rename to quotes_away').execute(db.kysely);
    await expect(cache.refresh()).rejects.toThrow();
    // The timer's first failed refresh says so, once.
    const errors = () => logger.lines.filter((l) => l.level === 'error').length;
    await until(async () => errors(), (n) => n >= 1, 20_000);
    // A fixed wait on purpose: five more refresh periods, to show the failures that follow add no
    // second error line (nothing to poll for) while the last quotes are still served.
    await new Promise((r) => setTimeout(r, 5 * 20));
    expect(cache.getQuote('AAPL')).toMatchObject({ last: '229.87' });
    expect(errors()).toBe(1);
    await sql.raw('alter table quotes_away rename to quotes').execute(db.kysely);
    await upsertQuotes(db, [{ symbol: 'AAPL', bid: '230.00', ask: '230.10', last: '230.05', timestamp: 2 }]);
    await until(async () => cache.getQuote('AAPL')?.timestamp, (ts) => ts === 2, 20_000);
    expect(cache.getQuote('AAPL')).toEqual({ symbol: 'AAPL', bid: '230.00', ask: '230.10', last: '230.05', timestamp: 2 });
  });
});
