/**
 * `tokex … --chain` with two embedded chains (issue 39, docs/deployment.md "Several chains"), the
 * real `bin/tokex.mjs` in child processes:
 *
 * - scale-out: the test's stack runs every role with the per-chain roles of chain 31337 only
 *   (`chains: [31337]`, what `tokex start --chain 31337` passes), and a process started with
 *   `tokex start --role indexer,executor,relayer --chain 31338` on the same data and nodes runs
 *   chain 31338's and nothing of the first chain's (`tokex status` names its holder, its metrics
 *   show no role of the first chain);
 * - `tokex stock … --chain 31338` enables One Click, deposits and buys on chain 31338's venue
 *   (x-api-chain-id, that chain's node and contracts from demo.json), filled by that process's
 *   executor; chain 31337's balance is unchanged; a chain demo.json does not name is refused;
 * - `tokex status` lists each chain's roles, `--chain` one chain's; `tokex upgrade --chain` plans
 *   for that chain's own deployment record.
 */
import { spawn } from 'node:child_process';
import os from 'node:os';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createPublicClient, http, parseUnits } from 'viem';
import { until } from '../support/poll.ts';
import { senderKeysEnv, startRoleProcess, STATUS_ROLES, type RoleProcess } from '../support/role-process.ts';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';

const A = 31337;
const B = 31338;
const TIMING = { EXECUTOR_TICK_MS: '200', INDEXER_POLL_MS: '100', CASH_SETTLE_DELAY_MS: '300', STATUS_PUBLISH_MS: '200' };
let t: TestStack;
let worker: RoleProcess;
const wei = (amount: string) => parseUnits(amount, 18);

/** The environment without the runner's database and streams: the CLI reads the test's DATA_DIR. */
function baseEnv(): NodeJS.ProcessEnv {
  const { DATABASE_URL: _d, DATABASE_SCHEMA: _s, REDIS_URL: _r, EMBEDDED_CHAIN_IDS: _e, STOCK_CHAINS: _c, RPC_URL: _u, CHAIN_ID: _i, ...env } = process.env;
  return { ...env, LOG_LEVEL: 'warn', DATA_DIR: t.dataDir };
}

function tokex(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['bin/tokex.mjs', ...args], { env: { ...baseEnv(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  return new Promise((resolve) => {
    child.stdout.on('data', (d) => (stdout += String(d)));
    child.stderr.on('data', (d) => (stderr += String(d)));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

async function json(args: string[]): Promise<any> {
  const r = await tokex([...args, '--json']);
  expect(r.stderr, args.join(' ')).toBe('');
  expect(r.code, args.join(' ')).toBe(0);
  return JSON.parse(r.stdout);
}

/** A balance answer without its quotes (`price`), which move between two reads. */
function withoutPrices(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutPrices);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(Object.entries(v).filter(([k]) => k !== 'price').map(([k, x]) => [k, withoutPrices(x)]));
}

beforeAll(async () => {
  t = await startTestStack({ ...TIMING, EMBEDDED_CHAIN_IDS: `${A},${B}` }, { chains: [A] });
  const [first, second] = t.demo.stock.chains;
  // The second process reaches the same two chains as nodes (the test stack's anvils) and shares its data directory.
  worker = await startRoleProcess(
    'indexer,executor,relayer',
    {
      ...baseEnv(),
      ...TIMING,
      ...senderKeysEnv(),
      STOCK_CHAINS: `${A},${B}`,
      RPC_URL: first.rpcUrl,
      [`RPC_URL_${B}`]: second.rpcUrl,
      // The test stack's SQLite and its in-process streams, whatever the runner's environment names
      // (startRoleProcess starts from it; an empty value is unset).
      DATABASE_URL: '',
      DATABASE_SCHEMA: '',
      REDIS_URL: '',
      // As the embedded chains are configured: no timelock delay, the demo's settings.
      TIMELOCK_DELAY_S: '0',
      DEMO_MODE: 'true',
    },
    `chain ${B} worker`,
    ['--chain', String(B)],
  );
}, 240_000);

afterAll(async () => {
  await worker?.kill('SIGTERM');
  await t?.stop();
});

it('a process started with --role and --chain runs that chain\'s roles and none of the first chain\'s; tokex status shows each chain\'s, --chain one', async () => {
  expect(worker.output()).toContain(`per chain  indexer, executor and relayer of chain ${B} only (--chain)`);
  const chainsEnv = { EMBEDDED_CHAIN_IDS: `${A},${B}` };
  const report = await until(async () => {
    const r = await tokex(['status', '--json'], chainsEnv);
    return { code: r.code, body: JSON.parse(r.stdout || '{}') };
  }, (r) => r.code === 0, 60_000);
  const lines = (roles: Array<{ role: string; state: string; lease: string; holder: string }>) => roles.map((r) => [r.role, r.state, r.lease]);
  expect(report.body).toMatchObject({ ok: true, chainId: A });
  expect(lines(report.body.roles)).toEqual(STATUS_ROLES.map((role) => [role, 'fresh', 'held']));
  // The first chain's roles are this test process's; chain B's the worker's.
  for (const r of report.body.roles) expect(r.holder).toMatch(new RegExp(`^${os.hostname()}:${process.pid}:`));
  expect(report.body.chains).toHaveLength(1);
  expect(report.body.chains[0]).toMatchObject({ chainId: B, ok: true });
  expect(lines(report.body.chains[0].roles)).toEqual([
    ['indexer', 'fresh', 'held'],
    ['executor', 'fresh', 'held'],
    ['relayer', 'fresh', 'held'],
  ]);
  for (const r of report.body.chains[0].roles) expect(r.holder).toMatch(new RegExp(`^${os.hostname()}:${worker.child.pid}:`));

  // The worker runs no role of the first chain: its metrics have the second chain's leases only.
  const metricsUrl = /metrics\s+(http:\/\/\S+)/.exec(worker.output())![1];
  const metrics = await (await fetch(metricsUrl)).text();
  expect(metrics.split('\n').filter((l) => l.startsWith('tokex_role_lease_state{'))).toEqual([]);
  for (const role of ['indexer', 'executor', 'relayer']) expect(metrics).toContain(`tokex_chain_role_lease_held{chain_id="${B}",role="${role}"} 1`);
  // And chain B's indexer lag, by chain id; no first-chain indexer, so no tokex_indexer_lag_blocks.
  expect(metrics).toMatch(new RegExp(`^tokex_chain_indexer_lag_blocks\\{chain_id="${B}"\\} \\d`, 'm'));
  expect(metrics.split('\n').filter((l) => l.startsWith('tokex_indexer_lag_blocks{'))).toEqual([]);

  const one = await tokex(['status', '--chain', String(B), '--json'], chainsEnv);
  expect(one.code).toBe(0);
  const only = JSON.parse(one.stdout);
  expect(only).toMatchObject({ ok: true, chainId: B });
  expect(only.chains).toBeUndefined();
  expect(only.roles.map((r: { role: string }) => r.role)).toEqual(['indexer', 'executor', 'relayer']);
}, 120_000);

it('stock --chain 31338: One Click, a deposit and a buy land on chain 31338\'s venue only; a chain demo.json does not name is refused with the ones it does', async () => {
  const user = t.demo.stock.keys.writable.userAddress;
  const onA = t.client(t.demo.stock.keys.writable.apiKey, t.demo.stock.keys.writable.apiSecret, { chainId: A });
  const onB = t.client(t.demo.stock.keys.writable.apiKey, t.demo.stock.keys.writable.apiSecret, { chainId: B });
  const balanceA0 = await onA.get<any>(`/api/v1/users/${user}/balance`);
  const balanceB0 = await onB.get<any>(`/api/v1/users/${user}/balance`);
  const aapl = (b: any) => wei(b.tokenBalances.find((x: { symbol: string }) => x.symbol === 'AAPL').exchangeBalance);

  const on = ['--chain', String(B)];
  expect(await json(['stock', 'oneclick', ...on])).toMatchObject({ status: 'enable', delegationStatus: 'enabled' });
  // One Click is enabled on chain B only.
  expect((await onA.getOneClickStatus()).delegationStatus).not.toBe('enabled');
  expect((await onB.getOneClickStatus()).delegationStatus).toBe('enabled');
  expect(await json(['stock', 'deposit', '300', ...on])).toMatchObject({ operationStatus: 'completed', kind: 'deposit', tokenAmount: '300' });
  const bought = await json(['stock', 'buy', 'AAPL', '--notional', '100', ...on]);
  expect(bought).toMatchObject({ state: 'history', side: 'Buy', history: { status: 'FILLED' } });

  // Settled on chain B's node, unknown to chain A's.
  const [first, second] = t.demo.stock.chains;
  expect((await createPublicClient({ transport: http(second.rpcUrl) }).getTransactionReceipt({ hash: bought.txHash })).status).toBe('success');
  await expect(createPublicClient({ transport: http(first.rpcUrl) }).getTransactionReceipt({ hash: bought.txHash })).rejects.toThrow();

  const balanceB1 = await onB.get<any>(`/api/v1/users/${user}/balance`);
  expect(aapl(balanceB1) - aapl(balanceB0)).toBe(wei(bought.history.filledQuantity));
  expect(withoutPrices(await json(['stock', 'balance', ...on]))).toEqual(withoutPrices(balanceB1));
  // Nothing moved on chain A.
  expect(withoutPrices(await onA.get<any>(`/api/v1/users/${user}/balance`))).toEqual(withoutPrices(balanceA0));
  expect((await onA.get<any>(`/api/v1/orders/${bought.orderId}`).catch(() => undefined))?.txHash).not.toBe(bought.txHash);

  const unknown = await tokex(['stock', 'balance', '--chain', '5']);
  expect(unknown).toEqual({ code: 1, stdout: '', stderr: `error: --chain: chain 5 is not served by this stack; demo.json names ${A}, ${B}\n` });
}, 180_000);

it('upgrade --chain 31338 plans for that chain\'s own deployment record and database', async () => {
  const r = await tokex(['upgrade', '--chain', String(B)], { EMBEDDED_CHAIN_IDS: `${A},${B}` });
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  const out = r.stdout.split('\n');
  expect(out[0]).toMatch(new RegExp(`^tokex \\S+: upgrade plan \\(dry run: nothing is changed; --apply carries it out\\) on chain ${B}$`));
  // Chain B's record holds the stock venue only (the perpetual venue is the first chain's).
  expect(out.filter((l) => l.startsWith('contracts: ')).map((l) => l.replace(/ \(release .*$/, ''))).toEqual(['contracts: stock: current', 'contracts: nothing to do']);
  expect(out).toContain('database: nothing to do');
  expect(out).toContain(`other chains: ${A} (each with its own contracts and database: tokex upgrade --chain <id>)`);
}, 60_000);
