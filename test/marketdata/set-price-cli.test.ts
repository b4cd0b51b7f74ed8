/**
 * `tokex marketdata set-price` as a separate process against the SQLite file of a DATA_DIR that a
 * running market-data service (real clock, its own timer) writes: the service picks the pin up at
 * one of its next ticks, and the release lets the price walk again from the pin.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { until } from '../support/poll.ts';
import { openDatabase, type Db } from '../../src/storage/database.ts';
import { getQuote } from '../../src/storage/quote-store.ts';
import { PERP_INDEX_SYMBOLS } from '../../src/marketdata/symbol-catalog.ts';
import { toCents } from '../../src/marketdata/gbm-source.ts';
import { createMarketDataService, type MarketDataService } from '../../src/marketdata/market-data-service.ts';

const REPO = join(import.meta.dirname, '..', '..');
const BTC = PERP_INDEX_SYMBOLS.find((s) => s.symbol === 'BTC')!;

interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs bin/tokex.mjs with `args`, on the SQLite database of `dataDir` only (no DATABASE_URL). */
function tokex(dataDir: string, args: string[]): Promise<CliRun> {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent' };
  delete env.DATABASE_URL;
  delete env.DATABASE_SCHEMA;
  return new Promise((resolve) => {
    execFile(process.execPath, [join(REPO, 'bin', 'tokex.mjs'), ...args], { cwd: REPO, env, timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : -1;
      resolve({ code, stdout, stderr });
    });
  });
}

describe('tokex marketdata set-price (child process, SQLite DATA_DIR)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'tokex-set-price-'));
  let db: Db | undefined;
  let service: MarketDataService | undefined;
  afterAll(async () => {
    await service?.stop();
    await db?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('pins BTC in the running service from one of its next ticks, refuses with one line, and releases', { timeout: 60_000 }, async () => {
    db = await openDatabase({ sqlitePath: join(dataDir, 'tokex.sqlite') });
    service = createMarketDataService({ db, symbols: [BTC], seed: 42, historyDays: 1, tickMs: 100 });
    await service.start();
    const md = service;
    expect(md.getQuote('BTC')!.last).not.toBe('60000.00');

    // The pin and two refusals, as three processes at once (each start of the CLI takes a second or two).
    const refusals = [
      [['--symbol', 'DOGE', '--price', '1'], 'error: symbol: unknown symbol "DOGE"; simulated: AAPL, TSLA, NVDA, MSFT, SPY, BTC, ETH\n'],
      [['--symbol', 'BTC', '--price', '-3'], 'error: price: must be a positive decimal such as 60000 or 229.87 (got "-3")\n'],
    ] as const;
    const [set, ...refused] = await Promise.all([
      tokex(dataDir, ['marketdata', 'set-price', '--symbol', 'BTC', '--price', '60000', '--json']),
      ...refusals.map(([args]) => tokex(dataDir, ['marketdata', 'set-price', ...args, '--json'])),
    ]);
    expect(set.stderr).toBe('');
    expect(set.code).toBe(0);
    const out = JSON.parse(set.stdout) as { symbol: string; pinned: boolean; price: string; setAt: number };
    expect(out).toMatchObject({ symbol: 'BTC', pinned: true, price: '60000.00' });
    expect(Number.isSafeInteger(out.setAt)).toBe(true);
    // A refusal: a non-zero exit and one line on stderr, nothing on stdout.
    refusals.forEach(([, message], i) => {
      expect(refused[i].code).toBe(1);
      expect(refused[i].stdout).toBe('');
      expect(refused[i].stderr).toBe(message);
    });

    const pinned = await until(async () => md.getQuote('BTC')!, (q) => q.last === '60000.00', 10_000);
    expect(pinned).toMatchObject({ bid: '59994.00', ask: '60006.00' });
    // And it stays there, in memory and in the stored quote every other process reads.
    const later = await until(async () => md.getQuote('BTC')!, (q) => q.timestamp >= pinned.timestamp + 300, 10_000);
    expect(later.last).toBe('60000.00');
    expect((await until(() => getQuote(db!, 'BTC'), (q) => q !== undefined && q.timestamp >= pinned.timestamp))!.last).toBe('60000.00');

    const released = await tokex(dataDir, ['marketdata', 'set-price', '--symbol', 'btc', '--release']);
    expect(released.code).toBe(0);
    expect(released.stdout).toBe('BTC released at 60000.00: the simulator walks on from there (its random walk from 60000.00, not back to the price before the pin; `tokex demo reset` with the stack stopped restores the seeded demo)\n');
    // The walk moves again (a second's step of BTC is a few dollars), starting from the pin.
    const moved = await until(async () => md.getQuote('BTC')!, (q) => q.last !== '60000.00', 10_000);
    expect(Math.abs(toCents(moved.last) - 6_000_000)).toBeLessThan(60_000);
  });
});
