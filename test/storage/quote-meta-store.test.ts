import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Quote } from '../../src/marketdata/market-types.ts';
import type { Db } from '../../src/storage/database.ts';
import { getMeta, setMeta } from '../../src/storage/meta-store.ts';
import { getQuote, listQuotes, upsertQuotes } from '../../src/storage/quote-store.ts';
import { testDatabases, useFreshDatabase } from '../support/test-databases.ts';

describe.each(testDatabases)('quote-store and meta-store ($name)', ({ open }) => {
  let db: Db;
  useFreshDatabase(open, (d) => (db = d));

  const aapl: Quote = {
    symbol: 'AAPL',
    bid: '189.123456789012345678',
    ask: '189.223456789012345678',
    last: '189.17',
    timestamp: 1_700_000_000_123,
  };
  const tsla: Quote = { symbol: 'TSLA', bid: '0.000000000000000001', ask: '99999999999999999999.99', last: '250', timestamp: 1 };

  it('round-trips exact decimal strings and ms timestamps', async () => {
    await upsertQuotes(db, [tsla, aapl]);
    expect(await getQuote(db, 'AAPL')).toEqual(aapl);
    expect(await getQuote(db, 'TSLA')).toEqual(tsla);
    expect(await listQuotes(db)).toEqual([aapl, tsla]);
    expect(await getQuote(db, 'MSFT')).toBeUndefined();
  });

  it('replaces a symbol on upsert, last entry winning within one call', async () => {
    await upsertQuotes(db, [aapl]);
    const newer = { ...aapl, bid: '190', ask: '190.5', last: '190.25', timestamp: aapl.timestamp + 1000 };
    const newest = { ...newer, last: '190.3' };
    await upsertQuotes(db, [newer, tsla, newest]);
    expect(await listQuotes(db)).toEqual([newest, tsla]);
    await upsertQuotes(db, []);
    expect(await listQuotes(db)).toHaveLength(2);
  });

  it('stores many quotes in one call', async () => {
    const many = Array.from({ length: 2_500 }, (_, i) => ({ ...aapl, symbol: `S${String(i).padStart(5, '0')}`, timestamp: i }));
    await upsertQuotes(db, many);
    const all = await listQuotes(db);
    expect(all).toHaveLength(2_500);
    expect(all[2_499]).toEqual(many[2_499]);
  });

  it('gets and sets meta values, overwriting', async () => {
    expect(await getMeta(db, 'missing')).toBeUndefined();
    await setMeta(db, 'indexer.block', '123');
    await setMeta(db, 'empty', '');
    expect(await getMeta(db, 'indexer.block')).toBe('123');
    await setMeta(db, 'indexer.block', '124');
    expect(await getMeta(db, 'indexer.block')).toBe('124');
    expect(await getMeta(db, 'empty')).toBe('');
  });
});
