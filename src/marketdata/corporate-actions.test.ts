import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../errors/app-error.ts';
import {
  createCorporateActionBook,
  DEFAULT_CORPORATE_ACTIONS_PATH,
  loadCorporateActions,
  parseCorporateActions,
} from './corporate-actions.ts';
import { DEMO_SYMBOLS } from './symbol-catalog.ts';

describe('the demo file', () => {
  it('loads, validates and lists newest first, filterable by symbol', async () => {
    const book = await loadCorporateActions();
    const all = book.list();
    expect(all.length).toBeGreaterThanOrEqual(5);
    const symbols = new Set(DEMO_SYMBOLS.map((s) => s.symbol));
    for (const a of all) expect(symbols.has(a.symbol)).toBe(true);
    const dates = all.map((a) => a.exDate);
    expect([...dates].sort().reverse()).toEqual(dates);
    expect(book.list('NVDA')).toContainEqual({ symbol: 'NVDA', type: 'SPLIT', exDate: '2024-06-10', ratio: '10:1' });
    expect(book.list('nvda')).toEqual(book.list('NVDA'));
    expect(book.list('AAPL').every((a) => a.symbol === 'AAPL')).toBe(true);
    expect(book.list('ZZZZ')).toEqual([]);
    expect(all.some((a) => a.type === 'DIVIDEND' && a.currency === 'USD')).toBe(true);
    expect(DEFAULT_CORPORATE_ACTIONS_PATH.endsWith(join('config', 'corporate-actions.json'))).toBe(true);
  });

  it('hands out copies: a caller cannot change the book', async () => {
    const book = await loadCorporateActions();
    const first = book.list()[0];
    first.symbol = 'HACK';
    expect(book.list()[0].symbol).not.toBe('HACK');
  });
});

describe('parseCorporateActions', () => {
  it('accepts splits and dividends, defaulting the currency', () => {
    expect(
      parseCorporateActions({
        actions: [
          { symbol: 'AAPL', type: 'DIVIDEND', exDate: '2025-05-12', amount: '0.26' },
          { symbol: 'TSLA', type: 'SPLIT', exDate: '2022-08-25', ratio: '3:1' },
          { symbol: 'XYZ', type: 'SPLIT', exDate: '2023-01-03', ratio: '1:10' },
        ],
      }),
    ).toEqual([
      { symbol: 'AAPL', type: 'DIVIDEND', exDate: '2025-05-12', amount: '0.26', currency: 'USD' },
      { symbol: 'TSLA', type: 'SPLIT', exDate: '2022-08-25', ratio: '3:1' },
      { symbol: 'XYZ', type: 'SPLIT', exDate: '2023-01-03', ratio: '1:10' },
    ]);
  });

  it('names the entry and field of each mistake', () => {
    const cases: Array<[unknown, string]> = [
      [{}, 'corporateActions'],
      [[42], 'corporateActions[0]'],
      [[{ symbol: 'aapl', type: 'SPLIT', exDate: '2020-08-31', ratio: '4:1' }], 'corporateActions[0].symbol'],
      [[{ symbol: 'AAPL', type: 'MERGER', exDate: '2020-08-31' }], 'corporateActions[0].type'],
      [[{ symbol: 'AAPL', type: 'SPLIT', exDate: '2020-02-30', ratio: '4:1' }], 'corporateActions[0].exDate'],
      [[{ symbol: 'AAPL', type: 'SPLIT', exDate: '2020-08-31' }], 'corporateActions[0].ratio'],
      [[{ symbol: 'AAPL', type: 'SPLIT', exDate: '2020-08-31', ratio: '4' }], 'corporateActions[0].ratio'],
      [[{ symbol: 'AAPL', type: 'SPLIT', exDate: '2020-08-31', ratio: '2:2' }], 'corporateActions[0].ratio'],
      [[{ symbol: 'AAPL', type: 'SPLIT', exDate: '2020-08-31', ratio: '4:1', amount: '1' }], 'corporateActions[0].amount'],
      [[{ symbol: 'AAPL', type: 'DIVIDEND', exDate: '2020-08-31' }], 'corporateActions[0].amount'],
      [[{ symbol: 'AAPL', type: 'DIVIDEND', exDate: '2020-08-31', amount: 0.25 }], 'corporateActions[0].amount'],
      [[{ symbol: 'AAPL', type: 'DIVIDEND', exDate: '2020-08-31', amount: '0' }], 'corporateActions[0].amount'],
      [[{ symbol: 'AAPL', type: 'DIVIDEND', exDate: '2020-08-31', amount: '0.25', currency: 'usd' }], 'corporateActions[0].currency'],
      [[{ symbol: 'AAPL', type: 'DIVIDEND', exDate: '2020-08-31', amount: '0.25', ratio: '2:1' }], 'corporateActions[0].ratio'],
      [[{ symbol: 'AAPL', type: 'DIVIDEND', exDate: '2020-08-31', amount: '0.25', payDate: 'x' }], 'corporateActions[0].payDate'],
    ];
    for (const [json, field] of cases) {
      let caught: unknown;
      try {
        parseCorporateActions(json);
      } catch (err) {
        caught = err;
      }
      expect(caught, JSON.stringify(json)).toBeInstanceOf(ValidationError);
      expect((caught as ValidationError).field, JSON.stringify(json)).toBe(field);
    }
  });

  it('orders by ex-date, newest first, then symbol', () => {
    const book = createCorporateActionBook([
      { symbol: 'B', type: 'SPLIT', exDate: '2024-01-02', ratio: '2:1' },
      { symbol: 'A', type: 'SPLIT', exDate: '2024-01-02', ratio: '2:1' },
      { symbol: 'C', type: 'SPLIT', exDate: '2025-01-02', ratio: '2:1' },
    ]);
    expect(book.list().map((a) => a.symbol)).toEqual(['C', 'A', 'B']);
  });
});

describe('loadCorporateActions', () => {
  it('reads another file and reports its path on errors', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tokex-ca-'));
    const good = join(dir, 'good.json');
    writeFileSync(good, JSON.stringify([{ symbol: 'SPY', type: 'DIVIDEND', exDate: '2024-12-20', amount: '1.966' }]));
    expect((await loadCorporateActions(good)).list()).toEqual([
      { symbol: 'SPY', type: 'DIVIDEND', exDate: '2024-12-20', amount: '1.966', currency: 'USD' },
    ]);
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify([{ symbol: 'SPY', type: 'DIVIDEND', exDate: '2024-13-01', amount: '1' }]));
    await expect(loadCorporateActions(bad)).rejects.toThrow(`corporateActions[0].exDate: must be a date YYYY-MM-DD (in ${bad})`);
    const broken = join(dir, 'broken.json');
    writeFileSync(broken, '[{');
    await expect(loadCorporateActions(broken)).rejects.toThrow(/not valid JSON/);
    await expect(loadCorporateActions(join(dir, 'missing.json'))).rejects.toThrow(/cannot read/);
  });
});
