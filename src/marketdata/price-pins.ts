/**
 * Price pins: `tokex marketdata set-price` holds the simulated price of one underlying at a fixed
 * value (to play a crash or a spike) until it is released. The CLI is another process than the
 * simulator, so a pin lives in storage: one meta row per pinned symbol, `marketdata.pin.<SYMBOL>`
 * → `{"version":1,"price":"60000.00","setAt":<ms>}`; a release deletes the row. The market-data
 * service reads its symbols' rows (primary-key lookups) at every tick and follows them from that
 * tick on (market-data-service.ts), and a backfill after downtime honours a pin from `setAt` on
 * (history-seeder.ts).
 *
 * Only symbols the simulator quotes can be pinned: the catalog's (`SIMULATED_SYMBOLS`), in a
 * database whose history the built-in simulator made. A symbol known only from imported candles
 * is refused, as is one the catalog does not know.
 */
import { ValidationError } from '../errors/app-error.ts';
import { kyselyOf, type DbExecutor } from '../storage/database.ts';
import { getMeta } from '../storage/meta-store.ts';
import { getQuote } from '../storage/quote-store.ts';
import { SIMULATED_SYMBOLS, type SymbolSpec } from './symbol-catalog.ts';
import { HISTORY_META_KEY } from './history-seeder.ts';
import { centsToString } from './gbm-source.ts';
import type { PricePin } from './market-types.ts';
import { venueNow } from '../lib/venue-clock.ts';

export const PRICE_PIN_KEY_PREFIX = 'marketdata.pin.';

/** The name the built-in simulator gives its history (`MarketDataSource.name` of gbm-source.ts). */
const SIMULATOR_SOURCE = 'gbm';

// The shape lives with the market-data types, which the history seeder imports too.
export type { PricePin } from './market-types.ts';

/** The cap keeps a price in whole cents far inside the exact range of a JS number. */
const MAX_PRICE_CENTS = 100_000_000_000_000n; // 1 000 000 000 000.00

export const pinKey = (symbol: string): string => `${PRICE_PIN_KEY_PREFIX}${symbol}`;

/**
 * A pin price from user input: a positive plain decimal with at most two places (the simulator
 * quotes whole cents), as the two-decimal string quotes carry ("60000" → "60000.00").
 */
export function parsePinPrice(input: unknown): string {
  const text = typeof input === 'string' ? input.trim() : typeof input === 'number' ? String(input) : '';
  const m = /^(\d+)(?:\.(\d+))?$/.exec(text);
  if (!m) throw new ValidationError('price', `must be a positive decimal such as 60000 or 229.87 (got ${JSON.stringify(String(input ?? ''))})`);
  const frac = (m[2] ?? '').replace(/0+$/, '');
  if (frac.length > 2) throw new ValidationError('price', `at most two decimal places, the simulator quotes whole cents (got ${text})`);
  const cents = BigInt(m[1]) * 100n + BigInt(frac.padEnd(2, '0'));
  if (cents <= 0n) throw new ValidationError('price', `must be a positive decimal (got ${text})`);
  if (cents > MAX_PRICE_CENTS) throw new ValidationError('price', `at most ${centsToString(Number(MAX_PRICE_CENTS))} (got ${text})`);
  return centsToString(Number(cents));
}

/**
 * The catalog entry of a symbol whose quotes the simulator makes, or a ValidationError (field
 * `symbol`) saying why it cannot be pinned: unknown, its prices imported, or the stored history
 * made by another source than the simulator.
 */
export async function simulatedSymbol(db: DbExecutor, input: string, catalog: readonly SymbolSpec[] = SIMULATED_SYMBOLS): Promise<SymbolSpec> {
  const symbol = String(input ?? '').trim().toUpperCase();
  const spec = catalog.find((s) => s.symbol === symbol);
  if (spec === undefined) {
    if (symbol !== '' && (await hasStoredPrices(db, symbol))) {
      throw new ValidationError('symbol', `${symbol} is not simulated: its prices come from imported history, which a pin cannot move`);
    }
    const perpHint = symbol.includes('-') ? ` (use the underlying, e.g. ${symbol.slice(0, symbol.indexOf('-'))})` : '';
    throw new ValidationError('symbol', `unknown symbol ${JSON.stringify(symbol)}${perpHint}; simulated: ${catalog.map((s) => s.symbol).join(', ')}`);
  }
  const source = historySource(await getMeta(db, HISTORY_META_KEY));
  if (source !== undefined && source !== SIMULATOR_SOURCE) {
    throw new ValidationError('symbol', `${symbol} is quoted from the "${source}" source, not the simulator: its price cannot be pinned`);
  }
  return spec;
}

function historySource(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  try {
    const source = (JSON.parse(text) as { source?: unknown }).source;
    return typeof source === 'string' ? source : undefined;
  } catch {
    return undefined;
  }
}

async function hasStoredPrices(db: DbExecutor, symbol: string): Promise<boolean> {
  if ((await getQuote(db, symbol)) !== undefined) return true;
  const row = await kyselyOf(db).selectFrom('candles').select('symbol').where('symbol', '=', symbol).limit(1).executeTakeFirst();
  return row !== undefined;
}

function parsePin(symbol: string, text: string): PricePin | undefined {
  try {
    const r = JSON.parse(text) as { price?: unknown; setAt?: unknown };
    if (typeof r.price !== 'string' || typeof r.setAt !== 'number') return undefined;
    return { symbol, price: parsePinPrice(r.price), setAt: r.setAt };
  } catch {
    // A row that is not a pin pins nothing: the simulator must not stop on a hand-edited row.
    return undefined;
  }
}

/** Pins `symbol` (checked with `simulatedSymbol`) at `price` (checked with `parsePinPrice`), replacing any pin it had. */
export async function setPricePin(db: DbExecutor, input: { symbol: string; price: string; now?: number }): Promise<PricePin> {
  const price = parsePinPrice(input.price);
  const { symbol } = await simulatedSymbol(db, input.symbol);
  const pin: PricePin = { symbol, price, setAt: input.now ?? venueNow() };
  const value = JSON.stringify({ version: 1, price, setAt: pin.setAt });
  await kyselyOf(db)
    .insertInto('meta')
    .values({ key: pinKey(symbol), value })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value }))
    .execute();
  return pin;
}

/** Releases the pin of `symbol` (checked with `simulatedSymbol`); answers the pin it removed, if there was one. */
export async function releasePricePin(db: DbExecutor, input: { symbol: string }): Promise<{ symbol: string; released: PricePin | undefined }> {
  const { symbol } = await simulatedSymbol(db, input.symbol);
  const key = pinKey(symbol);
  const rows = await kyselyOf(db).deleteFrom('meta').where('key', '=', key).returning('value').execute();
  const released = rows.length > 0 ? parsePin(symbol, rows[0].value) : undefined;
  return { symbol, released };
}

/** The pins in force among `symbols` (one indexed read; the simulator calls it every tick). */
export async function readPricePins(db: DbExecutor, symbols: readonly string[]): Promise<Map<string, PricePin>> {
  const pins = new Map<string, PricePin>();
  if (symbols.length === 0) return pins;
  const rows = await kyselyOf(db).selectFrom('meta').select(['key', 'value']).where('key', 'in', symbols.map(pinKey)).execute();
  for (const row of rows) {
    const symbol = row.key.slice(PRICE_PIN_KEY_PREFIX.length);
    const pin = parsePin(symbol, row.value);
    if (pin) pins.set(symbol, pin);
  }
  return pins;
}
