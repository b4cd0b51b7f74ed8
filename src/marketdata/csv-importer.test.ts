import { describe, expect, it } from 'vitest';
import { ValidationError } from '../errors/app-error.ts';
import { CsvValidationError, parseCandlesCsv, parseCsvTime } from './csv-importer.ts';

const HEADER = 'time,open,high,low,close,volume';

function failure(csv: string, interval: '1m' | '1d' = '1d'): CsvValidationError {
  try {
    parseCandlesCsv(csv, 'AAPL', interval);
  } catch (err) {
    expect(err).toBeInstanceOf(CsvValidationError);
    return err as CsvValidationError;
  }
  throw new Error('expected a validation error');
}

describe('parseCsvTime', () => {
  it('reads ISO dates, ISO date-times, Unix seconds and milliseconds', () => {
    expect(parseCsvTime('2025-03-10')).toBe(Date.UTC(2025, 2, 10));
    expect(parseCsvTime('2025-03-10T14:30:00Z')).toBe(Date.UTC(2025, 2, 10, 14, 30));
    expect(parseCsvTime('2025-03-10T14:30')).toBe(Date.UTC(2025, 2, 10, 14, 30));
    expect(parseCsvTime('2025-03-10 10:30:00-04:00')).toBe(Date.UTC(2025, 2, 10, 14, 30));
    expect(parseCsvTime('1741617000')).toBe(Date.UTC(2025, 2, 10, 14, 30));
    expect(parseCsvTime('1741617000000')).toBe(Date.UTC(2025, 2, 10, 14, 30));
    expect(parseCsvTime('2025-02-30')).toBeUndefined();
    expect(parseCsvTime('10/03/2025')).toBeUndefined();
    expect(parseCsvTime('')).toBeUndefined();
  });
});

describe('parseCandlesCsv', () => {
  it('accepts any column order and case, quoted fields, CRLF and blank lines', () => {
    const csv = '\uFEFFVolume,Close,Date,"Open",High,LOW\r\n1200,"230.10",2025-03-11,229.5,231,229.0\r\n\r\n900,229.5000,2025-03-10,228.00,230.25,227.75\r\n';
    expect(parseCandlesCsv(csv, 'AAPL', '1d')).toEqual([
      { symbol: 'AAPL', interval: '1d', openTime: Date.UTC(2025, 2, 10), open: '228.00', high: '230.25', low: '227.75', close: '229.50', volume: '900' },
      { symbol: 'AAPL', interval: '1d', openTime: Date.UTC(2025, 2, 11), open: '229.50', high: '231.00', low: '229.00', close: '230.10', volume: '1200' },
    ]);
  });

  it('keeps sub-cent precision of real prices exactly', () => {
    const [c] = parseCandlesCsv(`timestamp,open,high,low,close,volume\n1741617000,0.1234,0.125,0.12,0.1201,5.0`, 'PNY', '1m');
    expect(c).toMatchObject({ open: '0.1234', high: '0.125', low: '0.12', close: '0.1201', volume: '5' });
  });

  it('names the line and field of each error', () => {
    const cases: Array<[string, string, number, RegExp]> = [
      [`${HEADER}\n2025-03-10,229,230,228,229.5,100\n2025-03-11,229,abc,228,229.5,100`, 'high', 3, /decimal/],
      [`${HEADER}\n2025-03-10,-229,230,228,229.5,100`, 'open', 2, /decimal/],
      [`${HEADER}\n2025-03-10,229,230,228,1e3,100`, 'close', 2, /decimal/],
      [`${HEADER}\n2025-03-10,229,230,0,229.5,100`, 'low', 2, /greater than zero/],
      [`${HEADER}\n2025-03-10,229,230,228,229.5,10.5`, 'volume', 2, /whole number/],
      [`${HEADER}\n2025-03-10,229,230,228,229.5,`, 'volume', 2, /whole number/],
      [`${HEADER}\n2025-03-10,229,229.4,228,229.5,1`, 'high', 2, /max\(open, close\)/],
      [`${HEADER}\n2025-03-10,229,230,229.1,229.5,1`, 'low', 2, /min\(open, close\)/],
      [`${HEADER}\nyesterday,229,230,228,229.5,1`, 'time', 2, /ISO date/],
      [`${HEADER}\n2025-03-10T12:00:00Z,229,230,228,229.5,1`, 'time', 2, /UTC-aligned 1d/],
      [`${HEADER}\n2025-03-10,229,230,228,229.5,1\n\n2025-03-10,229,230,228,229.5,1`, 'time', 4, /duplicates line 2/],
      [`${HEADER}\n2025-03-10,229,230,228,229.5`, 'row', 2, /5 fields/],
      ['date,open,high,low,volume\n2025-03-10,1,1,1,1', 'close', 1, /missing column/],
      ['open,high,low,close,volume\n1,1,1,1,1', 'time', 1, /missing column/],
      ['time,date,open,high,low,close,volume\n1,1,1,1,1,1,1', 'date', 1, /only one of/],
    ];
    for (const [csv, field, line, reason] of cases) {
      const err = failure(csv);
      expect(err, csv).toBeInstanceOf(ValidationError);
      expect(err.code).toBe('VALIDATION');
      expect({ field: err.field, line: err.line }, csv).toEqual({ field, line });
      expect(err.message, csv).toMatch(reason);
      expect(err.message).toContain(`(line ${line})`);
      expect(err.message.startsWith(`${field}: `)).toBe(true);
    }
  });

  it('rejects an empty file and a file with only a header', () => {
    expect(() => parseCandlesCsv('', 'AAPL', '1d')).toThrow(ValidationError);
    expect(() => parseCandlesCsv(`${HEADER}\n`, 'AAPL', '1d')).toThrow(/no data rows/);
  });
});
