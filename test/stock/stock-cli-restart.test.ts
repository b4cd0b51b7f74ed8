/**
 * Operator paths over real processes: the `tokex keys` CLI against the running stack's database,
 * and a restart that reuses the deployed contracts and data.
 */
import { ownerCall } from '../../src/chain/owner-actions.ts';
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, http, parseUnits } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { cashierAbi, cashTokenAbi, stockRouterAbi } from '../../src/chain/abi/generated/index.ts';
import { DEMO_TAKER_ACCOUNT, EXECUTOR_ACCOUNT, MARKET_MAKER_ACCOUNT, OPERATOR_ACCOUNT } from '../../src/chain/anvil-accounts.ts';
import { startAnvil } from '../../src/chain/anvil-process.ts';
import { listCollateralEvents } from '../../src/perp/store/collateral-event-store.ts';
import { until } from '../support/poll.ts';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';
import { testWallet } from '../support/chain-fixture.ts';

const run = promisify(execFile);
let t: TestStack;

beforeAll(async () => {
  t = await startTestStack();
});
afterAll(async () => {
  await t?.stop();
});

async function cli(args: string[]): Promise<string> {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: t.dataDir, LOG_LEVEL: 'silent' };
  delete env.DATABASE_URL;
  const { stdout } = await run(process.execPath, ['bin/tokex.mjs', ...args], { env });
  return stdout;
}

describe('tokex keys CLI', () => {
  it('creates, lists, updates and revokes keys that the running API honours', async () => {
    const created = JSON.parse(await cli(['keys', 'create', '--permission', 'READ_ONLY', '--ip', '127.0.0.1,::1', '--label', 'cli test', '--json']));
    expect(created.permission).toBe('READ_ONLY');
    expect(created.apiSecret).toMatch(/^[A-Za-z0-9_-]{40,}$/);
    const client = t.client(created.apiKey, created.apiSecret);
    expect((await client.request('GET', '/api/v1/symbols')).code).toBe(200);

    const listed = await cli(['keys', 'list', '--json']);
    expect(listed).not.toContain(created.apiSecret);
    expect(listed).not.toContain('secretCiphertext');
    const row = (JSON.parse(listed) as any[]).find((k) => k.apiKey === created.apiKey);
    expect(row).toMatchObject({ label: 'cli test', active: true, ipWhitelist: ['127.0.0.1', '::1'] });

    await cli(['keys', 'update', created.apiKey, '--ip', '10.1.1.1', '--json']);
    expect((await client.request('GET', '/api/v1/symbols')).code).toBe(401);
    await cli(['keys', 'update', created.apiKey, '--ip', '127.0.0.1', '--ip', '::1']);
    expect((await client.request('GET', '/api/v1/symbols')).code).toBe(200);

    await cli(['keys', 'revoke', created.apiKey]);
    expect((await client.request('GET', '/api/v1/symbols')).code).toBe(401);
  });

  it('creates perp keys with a permission set, which the stock API refuses', async () => {
    const perp = JSON.parse(await cli(['keys', 'create', '--api', 'perp', '--permission', 'TRADE', '--permission', 'READ', '--ip', '127.0.0.1,::1', '--user-address', t.demo.wallets[0].address, '--json']));
    expect(perp).toMatchObject({ api: 'perp', permissions: ['READ', 'TRADE'], product: '', userAddress: t.demo.wallets[0].address.toLowerCase(), active: true });
    expect(perp).not.toHaveProperty('permission');
    expect((await t.client(perp.apiKey, perp.apiSecret).request('GET', '/api/v1/symbols')).code).toBe(401);
    const listed = JSON.parse(await cli(['keys', 'list', '--api', 'perp', '--json'])) as any[];
    // Beside demo.json's perp trader key, which the stack created at start.
    expect(listed.map((k) => k.apiKey)).toEqual([t.demo.perp!.keys.trader.apiKey, perp.apiKey]);
    const updated = JSON.parse(await cli(['keys', 'update', perp.apiKey, '--permission', 'TRANSFER', '--json']));
    expect(updated.permissions).toEqual(['TRANSFER']);
    await expect(cli(['keys', 'update', perp.apiKey, '--permission', 'WRITABLE'])).rejects.toMatchObject({ stderr: expect.stringContaining('permissions: perp keys take any of READ, TRADE, TRANSFER') });
    await expect(cli(['keys', 'create', '--permission', 'TRADE'])).rejects.toMatchObject({ stderr: expect.stringContaining('permissions: stock keys take one of READ_ONLY, WRITABLE') });
  });

  it('refuses an invalid whitelist entry with a message naming the field', async () => {
    await expect(cli(['keys', 'create', '--ip', 'not-an-ip'])).rejects.toMatchObject({ stderr: expect.stringContaining('ipWhitelist: not an IP address') });
  });
});

describe('restart', () => {
  it('reuses the deployed contracts, chain state, keys and history', async () => {
    const before = t.demo;
    const w = before.wallets[2];
    const chain = { id: before.chainId, name: 'anvil', nativeCurrency: { name: 'ETH', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [before.rpcUrl] } } };
    const wallet = testWallet(w.privateKey, chain, before.rpcUrl);
    const pub = createPublicClient({ chain, transport: http(before.rpcUrl) });
    const hash = await wallet.writeContract({ address: before.stock.contracts.cashToken, abi: cashTokenAbi, functionName: 'approve', args: [before.stock.contracts.stockRouter, parseUnits('123.45', 6)] });
    await pub.waitForTransactionReceipt({ hash });
    const history = await t.readOnly.get<any>('/api/v1/prices/SPY/history', { interval: '1h', endTime: Math.floor(Date.now() / 1000), limit: 1000 });

    await t.stop();
    t = await startTestStack({}, { dataDir: t.dataDir });

    expect(t.demo.stock.contracts).toEqual(before.stock.contracts);
    expect(t.demo.stock.keys).toEqual(before.stock.keys);
    // The perp venue too: its vault over the stock venue's cash token, and the demo wallet's deposit
    // indexed once, at the first start.
    expect(before.perp?.contracts?.collateralToken).toBe(before.stock.contracts.cashToken);
    // The same venue and demo key; the API listens on a fresh port (port 0).
    expect({ contracts: t.demo.perp?.contracts, keys: t.demo.perp?.keys }).toEqual({ contracts: before.perp?.contracts, keys: before.perp?.keys });
    expect(t.logs.some((l) => l.includes('"msg":"deploying venue"'))).toBe(false);
    const deposits = await until(
      () => listCollateralEvents(t.stack.db, { kind: 'deposit' }),
      (rows) => rows.length > 2,
    );
    // Newest first: the demo taker's and market maker's collateral, then wallets[0]'s.
    expect(deposits.map((d) => [d.account, d.amount])).toEqual([
      [DEMO_TAKER_ACCOUNT.address.toLowerCase(), parseUnits('100000', 6).toString()],
      [MARKET_MAKER_ACCOUNT.address.toLowerCase(), parseUnits('1000000', 6).toString()],
      [before.wallets[0].address.toLowerCase(), parseUnits('10000', 6).toString()],
    ]);
    const b = await t.readOnly.get<any>(`/api/v1/users/${w.address}/balance`, { spenderAddress: before.stock.contracts.stockRouter });
    expect(b.cashTokenBalances[0].walletAllowance).toBe('123.45');
    const again = await t.readOnly.get<any>('/api/v1/prices/SPY/history', { interval: '1h', endTime: Math.floor(Date.now() / 1000), limit: 1000 });
    // Same candles for the hours both runs cover: history is kept, not regenerated.
    const firstBefore = history.candles[0];
    expect(again.candles.find((c: any) => c.openTime === firstBefore.openTime)).toEqual(firstBefore);
  });

  it('the embedded executor signs with an operator account of its own, not the deployer\'s', async () => {
    const d = t.stack.deployment;
    expect(d.operator).toBe(OPERATOR_ACCOUNT.address);
    const pub = createPublicClient({ transport: http(t.demo.rpcUrl) });
    // The executor's key is an operator, the deployer's is not (issue 60: keys hold exactly their roles).
    for (const [account, operator] of [[OPERATOR_ACCOUNT.address, false], [EXECUTOR_ACCOUNT.address, true]] as const) {
      expect(await pub.readContract({ address: d.contracts.stockRouter, abi: stockRouterAbi, functionName: 'isOperator', args: [account] })).toBe(operator);
      expect(await pub.readContract({ address: d.contracts.cashier, abi: cashierAbi, functionName: 'isOperator', args: [account] })).toBe(operator);
    }
    expect(t.logs.some((l) => l.includes('"msg":"executor: running"') && l.includes(`"operator":"${EXECUTOR_ACCOUNT.address}"`))).toBe(true);
  });

  it('migrates a pre-venue deployment record and grants the executor on a deployment that lacks it', async () => {
    const file = path.join(t.dataDir, 'deployments', '31337.json');
    const recorded = JSON.parse(fs.readFileSync(file, 'utf8'));
    expect(Object.keys(recorded)).toEqual(['chainId', 'venues']);
    const d = t.stack.deployment;
    await t.stop();

    // As an older version left it: the flat record, and a deployment whose only operator is the deployer.
    const anvil = await startAnvil({ stateFile: path.join(t.dataDir, 'anvil-state.json') });
    try {
      const chain = { id: d.chainId, name: 'anvil', nativeCurrency: { name: 'ETH', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [anvil.rpcUrl] } } };
      const owner = testWallet(OPERATOR_ACCOUNT.privateKey, chain, anvil.rpcUrl);
      const pub = createPublicClient({ chain, transport: http(anvil.rpcUrl) });
      // The venue's timelock owns the contracts (delay 0 on the embedded chain): the revocation goes through it.
      for (const [address, abi] of [[d.contracts.stockRouter, stockRouterAbi], [d.contracts.cashier, cashierAbi]] as const) {
        const r = await ownerCall({ publicClient: pub as never, wallet: owner as never, target: address, abi, functionName: 'setOperator', args: [EXECUTOR_ACCOUNT.address, false] });
        expect(r.done).toBe(true);
      }
      expect(await pub.readContract({ address: d.contracts.stockRouter, abi: stockRouterAbi, functionName: 'isOperator', args: [EXECUTOR_ACCOUNT.address] })).toBe(false);
    } finally {
      await anvil.stop();
    }
    fs.writeFileSync(file, JSON.stringify({ chainId: d.chainId, ...recorded.venues.stock }));

    t = await startTestStack({}, { dataDir: t.dataDir });
    expect(t.stack.deployment).toEqual(d);
    // The flat record knew the stock venue only: the stock venue is kept, the perp venue deployed anew.
    const migrated = JSON.parse(fs.readFileSync(file, 'utf8'));
    expect(migrated.venues.stock).toEqual(recorded.venues.stock);
    expect(Object.keys(migrated.venues).sort()).toEqual(['perp', 'stock']);
    expect(migrated.venues.perp.contracts.marginVault).not.toBe(recorded.venues.perp.contracts.marginVault);
    expect(t.logs.filter((l) => l.includes('"msg":"deploying venue"')).map((l) => JSON.parse(l).venue)).toEqual(['perp']);
    expect(t.logs.some((l) => l.includes('"msg":"executor made an operator of the stock venue"'))).toBe(true);
    const now = createPublicClient({ transport: http(t.demo.rpcUrl) });
    expect(await now.readContract({ address: d.contracts.stockRouter, abi: stockRouterAbi, functionName: 'isOperator', args: [EXECUTOR_ACCOUNT.address] })).toBe(true);
    expect(await now.readContract({ address: d.contracts.cashier, abi: cashierAbi, functionName: 'isOperator', args: [EXECUTOR_ACCOUNT.address] })).toBe(true);
  });
});

describe('npm start', () => {
  /**
   * Runs `npm start`, sends SIGTERM to npm alone (as a process manager or `timeout` does) once
   * `when` matches what the stack has printed, and returns everything printed, npm's exit code, and
   * whether anvil outlived it.
   */
  async function sigtermNpmStart(when: (out: string) => boolean): Promise<{ out: string; code: number | null; anvilAlive: boolean }> {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokex-npm-start-'));
    const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, STOCK_API_PORT: '0', PERP_API_PORT: '0', HISTORY_DAYS: '1', LOG_LEVEL: 'info' };
    delete env.DATABASE_URL;
    delete env.RPC_URL;
    const npm = spawn('npm', ['start'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      let out = '';
      const exited = new Promise<number | null>((r) => npm.once('exit', (code) => r(code)));
      await new Promise<void>((resolve, reject) => {
        npm.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          if (when(out)) resolve();
        });
        npm.stderr.on('data', (d: Buffer) => (out += d.toString()));
        void exited.then((code) => reject(new Error(`npm start exited with ${code}: ${out.slice(-2000)}`)));
      });
      const anvilPid = Number(/"pid":(\d+),"port":\d+,"rpcUrl"/.exec(out)?.[1]);
      expect(anvilPid).toBeGreaterThan(0);

      npm.kill('SIGTERM');
      const code = await exited;
      const alive = () => {
        try {
          process.kill(anvilPid, 0);
          return true;
        } catch {
          return false;
        }
      };
      for (let i = 0; i < 100 && alive(); i++) await new Promise((r) => setTimeout(r, 100));
      // The stack's own process (npm's child) writes its last line as it exits, which may be after
      // npm has: wait for the pipe to close (every writer gone), not for a fixed time.
      await new Promise((r) => (npm.stdout.readableEnded ? r(undefined) : npm.stdout.once('end', r)));
      return { out, code, anvilAlive: alive() };
    } finally {
      if (npm.exitCode === null) npm.kill('SIGKILL');
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }

  it('stops the whole stack, anvil included, when only npm receives SIGTERM', async () => {
    const { out, code, anvilAlive } = await sigtermNpmStart((o) => o.includes('Ctrl-C to stop'));
    expect(anvilAlive).toBe(false);
    // npm exits as its child did: 0 only if the stack ran its shutdown, not if the signal killed it.
    expect(code).toBe(0);
    expect(out).toContain('"signal":"SIGTERM","msg":"stopping"');
    expect(out).toContain('"msg":"stopped"');
  }, 60_000);

  it('stops cleanly when SIGTERM arrives while the stack is still starting', async () => {
    // Anvil is up, the contracts not yet deployed: the signal lands in the middle of startStack.
    const { out, code, anvilAlive } = await sigtermNpmStart((o) => o.includes('"msg":"anvil started"'));
    expect(anvilAlive).toBe(false);
    expect(code).toBe(0);
    expect(out).toContain('"signal":"SIGTERM","msg":"stopping once the stack has started"');
    expect(out).toContain('"msg":"stopped"');
    // It stops instead of announcing itself as running.
    expect(out).not.toContain('Ctrl-C to stop');
  }, 60_000);
});
