/**
 * `tokex marketdata import`: loads real OHLCV history from a CSV file into the candle store.
 * `tokex marketdata set-price`: pins (or releases) the simulated price of one underlying in the
 * database the running stack uses; its simulator follows from its next tick (src/marketdata/price-pins.ts).
 */
import fs from 'node:fs';
import { Command, Option } from 'commander';
import { loadConfig } from '../config/app-config.ts';
import { INTERVALS, type Interval } from '../marketdata/market-types.ts';
import { importCandlesCsv } from '../marketdata/csv-importer.ts';
import { releasePricePin, setPricePin, type PricePin } from '../marketdata/price-pins.ts';
import { ValidationError } from '../errors/app-error.ts';
import { openAppDatabase } from '../app/storage-wiring.ts';
import type { DbExecutor } from '../storage/database.ts';

/** What `set-price` did, as `--json` prints it. */
export type SetPriceResult =
  | { symbol: string; pinned: true; price: string; setAt: number }
  | { symbol: string; pinned: false; released: boolean; price: string | null };

/**
 * The action of `tokex marketdata set-price`: `price` pins, `release` releases (exactly one of
 * them). Refusals are ValidationErrors naming the field (`symbol`, `price`).
 */
export async function runSetPrice(db: DbExecutor, o: { symbol: string; price?: string; release?: boolean; now?: number }): Promise<SetPriceResult> {
  if (o.release && o.price !== undefined) throw new ValidationError('price', 'give either --price or --release, not both');
  if (o.release) {
    const { symbol, released } = await releasePricePin(db, { symbol: o.symbol });
    return { symbol, pinned: false, released: released !== undefined, price: released?.price ?? null };
  }
  if (o.price === undefined) throw new ValidationError('price', 'required: --price <decimal> pins the price, --release releases it');
  const pin: PricePin = await setPricePin(db, { symbol: o.symbol, price: o.price, now: o.now });
  return { symbol: pin.symbol, pinned: true, price: pin.price, setAt: pin.setAt };
}

function describeSetPrice(r: SetPriceResult): string {
  if (r.pinned) return `${r.symbol} pinned at ${r.price}: the simulator quotes it from its next tick until --release`;
  return r.released
    ? `${r.symbol} released at ${r.price}: the simulator walks on from there (its random walk from ${r.price}, not back to the price before the pin; \`tokex demo reset\` with the stack stopped restores the seeded demo)`
    : `${r.symbol} was not pinned: nothing to release`;
}

export function marketDataCommand(): Command {
  const md = new Command('marketdata').description('market-data maintenance');
  md.command('import')
    .description('import OHLCV candles from a CSV file (columns time|date|timestamp, open, high, low, close, volume)')
    .requiredOption('--symbol <symbol>', 'stock symbol, e.g. AAPL')
    .addOption(new Option('--interval <interval>', 'candle interval of the file').choices([...INTERVALS]).default('1d'))
    .requiredOption('--file <path>', 'CSV file')
    .action(async (o) => {
      if (!fs.existsSync(o.file)) throw new ValidationError('--file', `no such file: ${o.file}`);
      const db = await openAppDatabase(loadConfig());
      try {
        const csv = fs.readFileSync(o.file, 'utf8');
        const { imported } = await importCandlesCsv({ db, symbol: String(o.symbol).toUpperCase(), interval: o.interval as Interval, csv });
        process.stdout.write(`imported ${imported} ${o.interval} candles for ${String(o.symbol).toUpperCase()}\n`);
      } finally {
        await db.close();
      }
    });
  md.command('set-price')
    .description('pin the simulated price of an underlying (e.g. BTC, AAPL) from the simulator\'s next tick, or release it')
    .requiredOption('--symbol <symbol>', 'underlying the simulator quotes, e.g. BTC (the index of BTC-USD) or AAPL')
    .option('--price <price>', 'the price to quote, a positive decimal with at most two places')
    .option('--release', 'release the pin: the random walk continues from the pinned price')
    .option('--json', 'machine-readable output')
    .action(async (o) => {
      const db = await openAppDatabase(loadConfig());
      try {
        const result = await runSetPrice(db, { symbol: String(o.symbol), price: o.price as string | undefined, release: Boolean(o.release) });
        process.stdout.write(o.json ? `${JSON.stringify(result)}\n` : `${describeSetPrice(result)}\n`);
      } finally {
        await db.close();
      }
    });
  return md;
}
