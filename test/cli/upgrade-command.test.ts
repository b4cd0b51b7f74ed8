/**
 * `tokex upgrade` as an operator runs it (docs/upgrades.md), through the compiled CLI on a data
 * directory: on a current venue it says there is nothing to do and changes nothing; on a venue
 * deployed before the proxies the dry run prints the plan and changes nothing, and `--apply` killed
 * with SIGKILL at each of its steps in turn (anvil dies with it, losing what it had not yet written)
 * finishes on the next run, balanced to the unit, with the record on this release.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parseUnits, type Abi, type Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_WALLETS, OPERATOR_ACCOUNT } from '../../src/chain/anvil-accounts.ts';
import { startAnvil } from '../../src/chain/anvil-process.ts';
import { createChainClients } from '../../src/chain/chain-client.ts';
import { readDeploymentRecord, writeDeploymentRecord, type DeploymentRecord } from '../../src/chain/deployment-file.ts';
import { buildCodeHash, VENUE_CONTRACTS, type VenueContractName } from '../../src/chain/venue-code.ts';
import { APP_VERSION } from '../../src/config/build-info.ts';
import { openDatabase } from '../../src/storage/database.ts';
import { getMeta, setMeta } from '../../src/storage/meta-store.ts';
import { readSqlitePages } from '../../src/storage/sqlite-page-size.ts';
import { deployLegacyVenue } from '../support/legacy-venue.ts';
import { testWallet } from '../support/chain-fixture.ts';

const run = promisify(execFile);
const CLI = ['bin/tokex.mjs', 'upgrade'];
const envOf = (dataDir: string) => ({ PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DATA_DIR: dataDir, LOG_LEVEL: 'silent', UPGRADE_LOG_LEVEL: process.env.UPGRADE_LOG_LEVEL ?? 'error' });

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = mkdtempSync(path.join(os.tmpdir(), 'tokex-upgrade-cli-'));
  dirs.push(d);
  return d;
}

/** A deployment record of this release (contracts with nothing to upgrade), at its place in `dataDir`. */
async function writeCurrentRecord(dataDir: string): Promise<string> {
  const file = path.join(dataDir, 'deployments', '31337.json');
  const a = (n: number) => `0x${n.toString(16).padStart(40, '0')}` as Address;
  const code = (contract: VenueContractName, i: number) => ({ contract, ...(VENUE_CONTRACTS[contract].upgradeable ? { implementation: a(100 + i) } : {}), codeHash: buildCodeHash(contract) });
  const record: DeploymentRecord = {
    chainId: 31337,
    venues: {
      stock: {
        release: APP_VERSION,
        code: { stockRouter: code('StockRouter', 1), cashier: code('Cashier', 2), oneClickRouter: code('OneClickRouter', 3), accountLens: code('AccountLens', 4), 'stocks.AAPL': code('Stock', 5) },
        blockNumber: '10',
        deployedAt: 1,
        operator: a(9),
        contracts: { stockRouter: a(1), cashier: a(2), oneClickRouter: a(3), accountLens: a(4), cashToken: a(6), stocks: { AAPL: a(5) } },
      },
    },
  };
  await writeDeploymentRecord(file, record);
  return file;
}

describe('tokex upgrade on a venue that needs nothing', () => {
  it('says so for the contracts and the database, and changes nothing', async () => {
    const dataDir = tempDir();
    const file = await writeCurrentRecord(dataDir);
    const db = await openDatabase({ sqlitePath: path.join(dataDir, 'tokex.sqlite') });
    await db.close();
    const before = { record: readFileSync(file, 'utf8'), db: statSync(path.join(dataDir, 'tokex.sqlite')).mtimeMs };
    for (const args of [[], ['--apply']]) {
      const { stdout } = await run(process.execPath, [...CLI, ...args], { env: envOf(dataDir), timeout: 120_000 });
      expect(stdout).toContain(`contracts: stock: current (release ${APP_VERSION}, this is ${APP_VERSION})`);
      expect(stdout).toContain('contracts: nothing to do');
      expect(stdout).toContain('database: nothing to do');
    }
    expect(readFileSync(file, 'utf8')).toBe(before.record);
    expect(statSync(path.join(dataDir, 'tokex.sqlite')).mtimeMs).toBe(before.db);
  }, 240_000);
});

describe('tokex upgrade on a SQLite file with 64 KiB pages (releases before 4 KiB pages)', () => {
  it('the dry run names the rewrite and changes nothing; --apply rewrites the pages with every row; then nothing is left to do', async () => {
    const dataDir = tempDir();
    await writeCurrentRecord(dataDir);
    const sqlitePath = path.join(dataDir, 'tokex.sqlite');
    const db = await openDatabase({ sqlitePath, pageSize: 65_536 });
    await setMeta(db, 'perp:projection:cursor', '4242');
    await db.close();
    const mtime = statSync(sqlitePath).mtimeMs;

    const dry = (await run(process.execPath, CLI, { env: envOf(dataDir), timeout: 120_000 })).stdout.split('\n');
    const pagesLine = /^database: pages of 65536 bytes, this release writes 4096 \(the order path's commits write a fraction of the bytes\): the file is rewritten \(VACUUM, \d+\.\d MiB copied, the stack stopped\)$/;
    expect(dry.filter((l) => l.startsWith('database: '))).toEqual([expect.stringMatching(pagesLine)]);
    expect(statSync(sqlitePath).mtimeMs).toBe(mtime);
    expect(readSqlitePages(sqlitePath)?.pageSize).toBe(65_536);

    const applied = (await run(process.execPath, [...CLI, '--apply'], { env: envOf(dataDir), timeout: 120_000 })).stdout.split('\n');
    expect(applied.filter((l) => l.startsWith('database: '))).toEqual([expect.stringMatching(pagesLine), 'database: pages rewritten, 65536 → 4096 bytes']);
    expect(readSqlitePages(sqlitePath)?.pageSize).toBe(4096);
    const after = await openDatabase({ sqlitePath });
    try {
      expect(await getMeta(after, 'perp:projection:cursor')).toBe('4242');
    } finally {
      await after.close();
    }

    const again = (await run(process.execPath, [...CLI, '--apply'], { env: envOf(dataDir), timeout: 120_000 })).stdout.split('\n');
    expect(again.filter((l) => l.startsWith('database: '))).toEqual(['database: nothing to do']);
  }, 240_000);
});

describe('tokex upgrade on a venue deployed before the proxies', () => {
  let dataDir: string;
  let file: string;
  let legacy: DeploymentRecord;
  const alice = DEMO_WALLETS[0];

  beforeAll(async () => {
    dataDir = tempDir();
    file = path.join(dataDir, 'deployments', '31337.json');
    // The data directory of a 0.1.0 venue: anvil's state file, the record, a user with cash and an open order.
    const anvil = await startAnvil({ chainId: 31337, stateFile: path.join(dataDir, 'anvil-state.json') });
    try {
      const { publicClient, walletClient, chain } = createChainClients({ rpcUrl: anvil.rpcUrl, chainId: 31337, operatorPrivateKey: OPERATOR_ACCOUNT.privateKey, pollingIntervalMs: 20 });
      const venue = await deployLegacyVenue({ commit: '374f31d', publicClient, walletClient: walletClient!, symbols: [{ symbol: 'AAPL', name: 'Apple Inc.' }], demoWallets: [alice.address] });
      legacy = venue.record;
      const user = testWallet(alice.privateKey, chain, anvil.rpcUrl);
      const c = legacy.venues.stock.contracts as Record<string, Address> & { stocks: Record<string, Address> };
      const send = async (to: Address, abi: Abi, functionName: string, args: readonly unknown[]) => {
        const hash = await user.writeContract({ address: to, abi, functionName, args, account: user.account, chain, gas: 1_000_000n } as never);
        expect((await publicClient.waitForTransactionReceipt({ hash })).status).toBe('success');
      };
      await send(c.cashToken, venue.artifacts.CashToken.abi, 'approve', [c.stockRouter, parseUnits('1000', 6)]);
      await send(c.stockRouter, venue.artifacts.StockRouter.abi, 'deposit', [c.cashToken, parseUnits('1000', 6)]);
      await send(c.stockRouter, venue.artifacts.StockRouter.abi, 'placeLimitOrder', [c.stocks.AAPL, 0, parseUnits('2', 18), parseUnits('100', 18), 0, Math.floor(Date.now() / 1000) + 3000]);
      await writeDeploymentRecord(file, legacy);
    } finally {
      await anvil.stop();
    }
  }, 240_000);

  it('the dry run prints the migration and changes nothing', async () => {
    const record = readFileSync(file, 'utf8');
    const { stdout } = await run(process.execPath, CLI, { env: envOf(dataDir), timeout: 120_000 });
    expect(stdout).toContain('dry run: nothing is changed');
    expect(stdout).toContain('contracts: stock: deployed before 0.2.0 without proxies');
    expect(stdout).toContain('contracts: perp: deployed before 0.2.0 without proxies');
    expect(stdout).toContain('open stock orders are cancelled (reason MIGRATED, locks returned)');
    expect(readFileSync(file, 'utf8')).toBe(record);
  }, 120_000);

  it('--apply killed with SIGKILL at each step in turn finishes on the next run, balanced, and a last run has nothing to do', async () => {
    const applyUntil = (steps: number) =>
      new Promise<{ lines: string[]; killed: boolean; code: number | null; hung?: boolean }>((resolve) => {
        const child = spawn(process.execPath, [...CLI, '--apply'], { env: envOf(dataDir), stdio: ['ignore', 'pipe', 'pipe'] });
        const lines: string[] = [];
        let killed = false;
        let hung = false;
        // A run that does not finish in two minutes is a failure of its own, with what it printed.
        const watchdog = setTimeout(() => {
          hung = true;
          child.kill('SIGKILL');
        }, 40_000);
        let buf = '';
        child.stdout.on('data', (chunk: Buffer) => {
          buf += chunk.toString();
          const parts = buf.split('\n');
          buf = parts.pop() ?? '';
          for (const line of parts) {
            lines.push(line);
            // A step done: the process dies right after it, with whatever anvil had not written.
            if (!killed && /^contracts: (stock|perp|database|reconciled|record)/.test(line) && lines.filter((l) => /^contracts: (stock|perp|database|reconciled|record)/.test(l)).length >= steps) {
              killed = true;
              child.kill('SIGKILL');
            }
          }
        });
        child.stderr.on('data', (chunk: Buffer) => lines.push(`stderr: ${chunk.toString().trim()}`));
        // Killed only if the signal is what ended it: on a loaded machine the run may finish and
        // exit before the SIGKILL sent on its last step arrives (CI met this), and it then counts
        // as the run that finished.
        child.on('exit', (code, signal) => {
          clearTimeout(watchdog);
          resolve({ lines, killed: killed && signal === 'SIGKILL' && !hung, code, hung });
        });
      });
    let finished: string[] | undefined;
    let kills = 0;
    for (let step = 1; step < 40 && !finished; step++) {
      const r = await applyUntil(step);
      expect(r.hung, `run ${step} did not finish:\n${r.lines.join('\n')}`).toBe(false);
      if (r.killed) {
        kills++;
        continue;
      }
      expect(r.code, r.lines.join('\n')).toBe(0);
      finished = r.lines;
    }
    expect(kills).toBeGreaterThanOrEqual(3);
    expect(finished!.some((l) => l.startsWith('contracts: record: ') || l.includes('says release')), finished!.join('\n')).toBe(true);
    const saved = (await readDeploymentRecord(file))!.record;
    expect(saved.venues.stock.release).toBe(APP_VERSION);
    expect(saved.venues.perp.release).toBe(APP_VERSION);
    expect(saved.venues.stock.retired?.[0].contracts.stockRouter).toBe(legacy.venues.stock.contracts.stockRouter);
    const journal = JSON.parse(readFileSync(path.join(dataDir, 'deployments', '31337.migration.json'), 'utf8')) as { reconciliation: Array<{ ok: boolean }> };
    expect(journal.reconciliation.every((r) => r.ok)).toBe(true);
    const { stdout } = await run(process.execPath, [...CLI, '--apply'], { env: envOf(dataDir), timeout: 120_000 });
    expect(stdout).toContain('contracts: nothing to do');
    // Alice's cash (1000 deposited, 200.1 of it locked by the open order) is all free, on the new Cashier.
    const anvil = await startAnvil({ chainId: 31337, stateFile: path.join(dataDir, 'anvil-state.json') });
    try {
      const { publicClient } = createChainClients({ rpcUrl: anvil.rpcUrl, chainId: 31337 });
      const cashier = saved.venues.stock.contracts.cashier as Address;
      const abi = VENUE_CONTRACTS.Cashier.abi;
      expect(await publicClient.readContract({ address: cashier, abi, functionName: 'balanceOf', args: [alice.address] })).toBe(parseUnits('1000', 18));
      expect(await publicClient.readContract({ address: cashier, abi, functionName: 'lockedOf', args: [alice.address] })).toBe(0n);
    } finally {
      await anvil.stop();
    }
  }, 900_000);
});
