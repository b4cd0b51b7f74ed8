/** `tokex marketdata import`: loads real OHLCV history from a CSV file into the candle store. */
import fs from 'node:fs';
import { Command, Option } from 'commander';
import { loadConfig } from '../config/app-config.ts';
import { INTERVALS, type Interval } from '../marketdata/market-types.ts';
import { importCandlesCsv } from '../marketdata/csv-importer.ts';
import { openAppDatabase } from '../app/storage-wiring.ts';

export function marketDataCommand(): Command {
  const md = new Command('marketdata').description('market-data maintenance');
  md.command('import')
    .description('import OHLCV candles from a CSV file (columns time|date|timestamp, open, high, low, close, volume)')
    .requiredOption('--symbol <symbol>', 'stock symbol, e.g. AAPL')
    .addOption(new Option('--interval <interval>', 'candle interval of the file').choices([...INTERVALS]).default('1d'))
    .requiredOption('--file <path>', 'CSV file')
    .action(async (o) => {
      const db = await openAppDatabase(loadConfig());
      try {
        const csv = fs.readFileSync(o.file, 'utf8');
        const { imported } = await importCandlesCsv({ db, symbol: String(o.symbol).toUpperCase(), interval: o.interval as Interval, csv });
        process.stdout.write(`imported ${imported} ${o.interval} candles for ${String(o.symbol).toUpperCase()}\n`);
      } finally {
        await db.close();
      }
    });
  return md;
}
