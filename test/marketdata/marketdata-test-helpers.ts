import { sql } from 'kysely';
import { afterEach } from 'vitest';
import type { Db } from '../../src/storage/database.ts';
import { listCandles } from '../../src/storage/candle-store.ts';
import type { Candle, Interval } from '../../src/marketdata/market-types.ts';
import type { MarketDataSource } from '../../src/marketdata/gbm-source.ts';
import type { SymbolSpec } from '../../src/marketdata/symbol-catalog.ts';
import { createMarketDataService, type MarketDataService } from '../../src/marketdata/market-data-service.ts';

export const MINUTE = 60_000;
export const DAY = 86_400_000;

/** Every stored candle of one symbol and interval, ascending. */
export function allCandles(db: Db, symbol: string, interval: Interval): Promise<Candle[]> {
  return listCandles(db, { symbol, interval, startTime: 0, limit: 1_000_000 });
}

/** The 1m history a source produces from `from` through the minute of `now` (the last one cut at `now`). */
export function expectedMinutes(source: MarketDataSource, spec: SymbolSpec, from: number, now: number, startPrice = source.startPrice(spec)): Candle[] {
  const out: Candle[] = [];
  let prev = startPrice;
  const current = Math.floor(now / MINUTE) * MINUTE;
  for (let m = from; m < current; m += MINUTE) {
    const c = source.minuteCandle(spec, m, prev);
    out.push(c);
    prev = c.close;
  }
  out.push(source.tick(spec, now, prev).candle);
  return out;
}

/** Makes every write to `table` fail until the returned function is called: a real storage error, no mock. */
export async function breakWrites(db: Db, table: 'quotes' | 'candles'): Promise<() => Promise<void>> {
  const name = `md_test_fail_${table}`;
  if (db.dialect === 'sqlite') {
    await sql.raw(`create trigger ${name} before insert on ${table} begin select raise(abort, 'injected failure'); end`).execute(db.kysely);
    return async () => {
      await sql.raw(`drop trigger ${name}`).execute(db.kysely);
    };
  }
  await sql.raw(`create function ${name}() returns trigger language plpgsql as $$ begin raise exception 'injected failure'; end $$`).execute(db.kysely);
  await sql.raw(`create trigger ${name} before insert on ${table} for each row execute function ${name}()`).execute(db.kysely);
  return async () => {
    await sql.raw(`drop trigger ${name} on ${table}`).execute(db.kysely);
    await sql.raw(`drop function ${name}()`).execute(db.kysely);
  };
}

export interface LogLine {
  level: 'info' | 'warn' | 'error';
  obj: unknown;
  msg?: string;
}

/** A logger that keeps its lines for assertions. */
export function memoryLogger(): { lines: LogLine[]; info: (o: unknown, m?: string) => void; warn: (o: unknown, m?: string) => void; error: (o: unknown, m?: string) => void } {
  const lines: LogLine[] = [];
  return {
    lines,
    info: (obj, msg) => void lines.push({ level: 'info', obj, msg }),
    warn: (obj, msg) => void lines.push({ level: 'warn', obj, msg }),
    error: (obj, msg) => void lines.push({ level: 'error', obj, msg }),
  };
}

/**
 * Deep equality of long candle lists without vitest's per-element diffing (tens of thousands of
 * rows): reports the first differing row.
 */
export function firstCandleDifference(actual: readonly Candle[], expected: readonly Candle[]): string | undefined {
  const n = Math.max(actual.length, expected.length);
  for (let i = 0; i < n; i++) {
    const a = JSON.stringify(actual[i] && canonical(actual[i]));
    const e = JSON.stringify(expected[i] && canonical(expected[i]));
    if (a !== e) return `row ${i} of ${actual.length} (expected ${expected.length}): ${a} != ${e}`;
  }
  return undefined;
}

function canonical(c: Candle): unknown[] {
  return [c.symbol, c.interval, c.openTime, c.open, c.high, c.low, c.close, c.volume];
}

/** Problems of a 1m series: a missing minute, or an open that is not the previous close. */
export function continuityProblems(minutes: readonly Candle[]): string[] {
  const problems: string[] = [];
  for (let i = 1; i < minutes.length && problems.length < 5; i++) {
    if (minutes[i].openTime - minutes[i - 1].openTime !== MINUTE) problems.push(`gap before ${minutes[i].openTime}`);
    if (minutes[i].open !== minutes[i - 1].close) problems.push(`open != previous close at ${minutes[i].openTime}`);
  }
  return problems;
}

/**
 * For a suite over one kind of test database (`open`): the databases and market-data services its
 * tests open, all closed after each test, the services first (they write to the databases).
 * `fakeClockService` ticks only when told, at the time `clock.t` says.
 */
export function useMarketDataServices(open: () => Promise<Db>, symbols: readonly SymbolSpec[]) {
  const dbs: Db[] = [];
  const services: MarketDataService[] = [];
  afterEach(async () => {
    await Promise.all(services.splice(0).map((s) => s.stop()));
    await Promise.all(dbs.splice(0).map((db) => db.close()));
  });
  const keep = (service: MarketDataService): MarketDataService => {
    services.push(service);
    return service;
  };
  return {
    keep,
    openDb: async (): Promise<Db> => {
      const db = await open();
      dbs.push(db);
      return db;
    },
    fakeClockService: (db: Db, clock: { t: number }, extra: Partial<Parameters<typeof createMarketDataService>[0]> = {}) =>
      keep(createMarketDataService({ db, symbols: [...symbols], seed: 42, historyDays: 1, now: () => clock.t, autoTick: false, ...extra })),
  };
}
