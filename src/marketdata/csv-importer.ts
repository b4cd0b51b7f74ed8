/**
 * Imports real OHLCV history from CSV. The whole file is validated before anything is written, so
 * a bad row leaves storage untouched; the error names the line and the column.
 */
import { ValidationError } from '../errors/app-error.ts';
import { withTransaction } from '../storage/transaction.ts';
import type { DbExecutor } from '../storage/database.ts';
import { listCandles, upsertCandles } from '../storage/candle-store.ts';
import { INTERVAL_MS, INTERVALS, type Candle, type Interval } from './market-types.ts';
import { bucketStart, compareDecimal, rollupAll } from './candle-aggregator.ts';

/** A CSV row failed validation. `field` is the column, `line` the 1-based line number in the file. */
export class CsvValidationError extends ValidationError {
  readonly line: number;
  constructor(line: number, field: string, reason: string) {
    super(field, `${reason} (line ${line})`, { detail: { line } });
    this.line = line;
  }
}

export interface ImportCandlesCsvOptions {
  db: DbExecutor;
  symbol: string;
  interval: Interval;
  csv: string;
}

const TIME_COLUMNS = ['time', 'date', 'timestamp'] as const;
const REQUIRED = ['open', 'high', 'low', 'close', 'volume'] as const;
type PriceColumn = 'open' | 'high' | 'low' | 'close';

/** Prices: plain non-negative decimals, at most 8 places (real feeds quote sub-cent prices). */
const PRICE_RE = /^(0|[1-9]\d*)(\.\d{1,8})?$/;
const VOLUME_RE = /^(0|[1-9]\d*)(\.0+)?$/;
const DIGITS_RE = /^\d+$/;
const ISO_DATE_RE = /^\d{4}-\d{2}-\d{2}$/;
// A date and time with an optional zone; without a zone the time is UTC.
const ISO_DATETIME_RE = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:?\d{2})?$/;
const SYMBOL_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$/;

/** Unix times below this are seconds, at or above it milliseconds (1e11 s is the year 5138). */
const SECONDS_LIMIT = 100_000_000_000;
const MAX_ROWS = 2_000_000;

/** Splits one CSV line; double-quoted fields may hold commas and doubled quotes. */
function splitCsvLine(line: string): string[] {
  if (!line.includes('"')) return line.split(',').map((f) => f.trim());
  const out: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (quoted) {
      if (ch === '"' && line[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      out.push(field.trim());
      field = '';
    } else field += ch;
  }
  out.push(field.trim());
  return out;
}

export function parseCsvTime(value: string): number | undefined {
  if (DIGITS_RE.test(value)) {
    const n = Number(value);
    if (!Number.isSafeInteger(n)) return undefined;
    return n < SECONDS_LIMIT ? n * 1000 : n;
  }
  if (ISO_DATE_RE.test(value)) {
    const ms = Date.parse(`${value}T00:00:00Z`);
    return Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== value ? undefined : ms;
  }
  if (ISO_DATETIME_RE.test(value)) {
    let text = value.replace(' ', 'T');
    if (!/(Z|[+-]\d{2}:?\d{2})$/.test(text)) text += 'Z';
    const ms = Date.parse(text);
    return Number.isNaN(ms) ? undefined : ms;
  }
  return undefined;
}

/** Trailing zeros go, but prices keep at least the two places they are quoted with. */
function normalisePrice(value: string): string {
  const [whole, frac = ''] = value.split('.');
  const trimmed = frac.replace(/0+$/, '');
  return `${whole}.${trimmed.padEnd(2, '0')}`;
}

/** Parses and validates the CSV into 1m…1d candles of `symbol`, ascending; throws CsvValidationError. */
export function parseCandlesCsv(csv: string, symbol: string, interval: Interval): Candle[] {
  const lines = csv.replace(/^\uFEFF/, '').split(/\r?\n/);
  const headerIndex = lines.findIndex((l) => l.trim() !== '');
  if (headerIndex < 0) throw new ValidationError('csv', 'empty: expected a header row and at least one data row');
  const header = splitCsvLine(lines[headerIndex]).map((h) => h.toLowerCase());
  const headerLine = headerIndex + 1;

  const seen = new Set<string>();
  for (const h of header) {
    if (seen.has(h)) throw new CsvValidationError(headerLine, h, 'column appears twice');
    seen.add(h);
  }
  const timeColumns = TIME_COLUMNS.filter((c) => seen.has(c));
  if (timeColumns.length === 0) throw new CsvValidationError(headerLine, 'time', 'missing column (time, date or timestamp)');
  if (timeColumns.length > 1) throw new CsvValidationError(headerLine, timeColumns[1], `only one of time, date, timestamp (found ${timeColumns.join(', ')})`);
  for (const c of REQUIRED) if (!seen.has(c)) throw new CsvValidationError(headerLine, c, 'missing column');
  const timeName = timeColumns[0];
  const col = (name: string): number => header.indexOf(name);
  const timeIdx = col(timeName);
  const idx = { open: col('open'), high: col('high'), low: col('low'), close: col('close'), volume: col('volume') };

  const step = INTERVAL_MS[interval];
  const candles: Candle[] = [];
  const times = new Map<number, number>();
  for (let i = headerIndex + 1; i < lines.length; i++) {
    const raw = lines[i];
    if (raw.trim() === '') continue;
    const line = i + 1;
    const fields = splitCsvLine(raw);
    if (fields.length !== header.length) {
      throw new CsvValidationError(line, 'row', `has ${fields.length} fields, the header has ${header.length}`);
    }
    if (candles.length >= MAX_ROWS) throw new CsvValidationError(line, 'row', `more than ${MAX_ROWS} rows`);

    const timeText = fields[timeIdx];
    const openTime = parseCsvTime(timeText);
    if (openTime === undefined) {
      throw new CsvValidationError(line, timeName, 'must be an ISO date, an ISO date-time, or Unix seconds or milliseconds');
    }
    if (openTime % step !== 0) throw new CsvValidationError(line, timeName, `not the start of a UTC-aligned ${interval} bucket`);
    const earlier = times.get(openTime);
    if (earlier !== undefined) throw new CsvValidationError(line, timeName, `duplicates line ${earlier}`);
    times.set(openTime, line);

    const price = {} as Record<PriceColumn, string>;
    for (const name of ['open', 'high', 'low', 'close'] as const) {
      const v = fields[idx[name]];
      if (!PRICE_RE.test(v)) throw new CsvValidationError(line, name, 'must be a decimal string like "229.87" (at most 8 places)');
      if (/^0(\.0+)?$/.test(v)) throw new CsvValidationError(line, name, 'must be greater than zero');
      price[name] = normalisePrice(v);
    }
    const volumeText = fields[idx.volume];
    if (!VOLUME_RE.test(volumeText)) throw new CsvValidationError(line, 'volume', 'must be a whole number of shares');

    if (compareDecimal(price.high, price.open) < 0 || compareDecimal(price.high, price.close) < 0) {
      throw new CsvValidationError(line, 'high', 'must be at least max(open, close)');
    }
    if (compareDecimal(price.low, price.open) > 0 || compareDecimal(price.low, price.close) > 0) {
      throw new CsvValidationError(line, 'low', 'must be at most min(open, close)');
    }
    candles.push({ symbol, interval, openTime, ...price, volume: volumeText.split('.')[0] });
  }
  if (candles.length === 0) throw new ValidationError('csv', 'no data rows');
  return candles.sort((a, b) => a.openTime - b.openTime);
}

/**
 * Stores the CSV's candles (replacing bars already stored at the same times). A 1m import also
 * rebuilds every higher interval over the imported span, from all 1m candles stored there.
 */
export async function importCandlesCsv(opts: ImportCandlesCsvOptions): Promise<{ imported: number }> {
  const { db, symbol, interval } = opts;
  if (typeof symbol !== 'string' || !SYMBOL_RE.test(symbol)) throw new ValidationError('symbol', 'must be a ticker like "AAPL"');
  if (!(INTERVALS as readonly string[]).includes(interval)) throw new ValidationError('interval', `must be one of ${INTERVALS.join(', ')}`);
  const candles = parseCandlesCsv(opts.csv, symbol, interval);

  await withTransaction(db, async (tx) => {
    await upsertCandles(tx, candles);
    if (interval !== '1m') return;
    // Day buckets contain every other bucket, so the stored 1m candles of the imported days are
    // all that any touched aggregate is made of.
    const from = bucketStart(candles[0].openTime, '1d');
    const to = bucketStart(candles[candles.length - 1].openTime, '1d') + INTERVAL_MS['1d'] - 1;
    const minutes: Candle[] = [];
    for (let start = from; start <= to; ) {
      const page = await listCandles(tx, { symbol, interval: '1m', startTime: start, endTime: to, limit: 50_000 });
      minutes.push(...page);
      if (page.length < 50_000) break;
      start = page[page.length - 1].openTime + 1;
    }
    await upsertCandles(tx, rollupAll(minutes));
  });
  return { imported: candles.length };
}
