import { describe, expect, it } from 'vitest';
import { ValidationError } from '../errors/app-error.ts';
import { mergeCorporateActions, newYorkDate, newYorkDayStart, parseCorporateActions, validateNewCorporateAction } from './corporate-actions.ts';

// 2026-11-25 15:00 UTC = 10:00 in New York (EST, UTC−5).
const NOW = Date.parse('2026-11-25T15:00:00Z');
const ctx = { isListed: (s: string) => ['AAPL', 'MSFT'].includes(s), now: NOW, existing: [{ symbol: 'MSFT', exDate: '2026-12-01' }] };

function refusal(raw: unknown): { field: string; message: string } {
  try {
    validateNewCorporateAction(raw, ctx);
  } catch (err) {
    expect(err).toBeInstanceOf(ValidationError);
    return { field: (err as ValidationError).field, message: (err as Error).message };
  }
  throw new Error(`accepted ${JSON.stringify(raw)}`);
}

describe('New York dates', () => {
  it('dates an instant by the New York calendar and starts a day at its midnight there', () => {
    expect(newYorkDate(Date.parse('2026-11-26T04:59:59Z'))).toBe('2026-11-25');
    expect(newYorkDate(Date.parse('2026-11-26T05:00:00Z'))).toBe('2026-11-26');
    expect(newYorkDayStart('2026-11-26')).toBe(Date.parse('2026-11-26T05:00:00Z'));
    // Summer time: UTC−4.
    expect(newYorkDayStart('2026-07-01')).toBe(Date.parse('2026-07-01T04:00:00Z'));
    expect(() => newYorkDayStart('2026-02-30')).toThrow(RangeError);
  });
});

describe('validateNewCorporateAction', () => {
  it('accepts a dividend today or later, with a record date not before the ex-date', () => {
    expect(validateNewCorporateAction({ symbol: 'AAPL', type: 'DIVIDEND', exDate: '2026-11-25', amount: '0.26' }, ctx)).toEqual({
      symbol: 'AAPL',
      type: 'DIVIDEND',
      exDate: '2026-11-25',
      amount: '0.26',
      currency: 'USD',
    });
    expect(validateNewCorporateAction({ symbol: 'MSFT', type: 'DIVIDEND', exDate: '2026-12-02', recordDate: '2026-12-03', amount: '0.83' }, ctx).recordDate).toBe('2026-12-03');
  });

  it('refuses an unknown symbol, a past ex-date and a second action on a symbol\'s date, naming the field', () => {
    expect(refusal({ symbol: 'ZZZZ', type: 'DIVIDEND', exDate: '2026-12-01', amount: '1' })).toEqual({ field: 'symbol', message: 'symbol: "ZZZZ" is not listed' });
    expect(refusal({ symbol: 'AAPL', type: 'DIVIDEND', exDate: '2026-11-24', amount: '1' })).toEqual({
      field: 'exDate',
      message: 'exDate: 2026-11-24 is in the past (today in New York is 2026-11-25)',
    });
    expect(refusal({ symbol: 'MSFT', type: 'SPLIT', exDate: '2026-12-01', ratio: '2:1' })).toEqual({
      field: 'exDate',
      message: 'exDate: MSFT already has a corporate action on 2026-12-01',
    });
    expect(refusal({ symbol: 'AAPL', type: 'DIVIDEND', exDate: '2026-12-01', recordDate: '2026-11-30', amount: '1' }).field).toBe('recordDate');
    expect(refusal({ symbol: 'AAPL', type: 'DIVIDEND', exDate: '2026-12-01', amount: '-1' }).field).toBe('amount');
    expect(refusal({ symbol: 'AAPL', type: 'DIVIDEND', exDate: '12/01/2026', amount: '1' }).field).toBe('exDate');
  });
});

describe('the file', () => {
  it('refuses two actions of one symbol on one date, naming the entry', () => {
    expect(() =>
      parseCorporateActions([
        { symbol: 'AAPL', type: 'DIVIDEND', exDate: '2026-12-01', amount: '0.26' },
        { symbol: 'MSFT', type: 'DIVIDEND', exDate: '2026-12-01', amount: '0.83' },
        { symbol: 'AAPL', type: 'SPLIT', exDate: '2026-12-01', ratio: '4:1' },
      ]),
    ).toThrow('corporateActions[2].exDate: AAPL already has a corporate action on 2026-12-01');
    expect(parseCorporateActions([{ symbol: 'AAPL', type: 'DIVIDEND', exDate: '2026-12-01', recordDate: '2026-12-02', amount: '0.26' }])[0].recordDate).toBe('2026-12-02');
  });
});

describe('mergeCorporateActions', () => {
  it('shows stored states over the file, and file actions before the venue as applied without a transaction', () => {
    const file = [
      { symbol: 'AAPL', type: 'DIVIDEND' as const, exDate: '2025-05-12', amount: '0.26', currency: 'USD' },
      { symbol: 'AAPL', type: 'DIVIDEND' as const, exDate: '2026-12-10', amount: '0.27', currency: 'USD' },
      { symbol: 'MSFT', type: 'DIVIDEND' as const, exDate: '2026-12-11', amount: '0.9', currency: 'USD' },
    ];
    const stored = [{ symbol: 'MSFT', type: 'DIVIDEND' as const, exDate: '2026-12-11', amount: '0.9', currency: 'USD', status: 'applied' as const, txHash: '0xabc' }];
    expect(mergeCorporateActions(file, stored, '2026-11-25').map((a) => [a.symbol, a.exDate, a.status, a.txHash])).toEqual([
      ['MSFT', '2026-12-11', 'applied', '0xabc'],
      ['AAPL', '2026-12-10', 'scheduled', null],
      ['AAPL', '2025-05-12', 'applied', null],
    ]);
  });
});
