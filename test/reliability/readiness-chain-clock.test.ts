/**
 * The chain's clock against the wall clock (docs/operations.md, "The chain's clock"), on a real
 * anvil whose clock the test moves: a few seconds ahead leaves the stock API ready; 220 s ahead (as
 * Hardhat's node ran after a deployment burst) makes every fresh oracle answer too old for the
 * StockRouter's `maxAge`, so the stock API's `/readyz` answers 503 naming the skew with both times
 * and the bound, the executor shows `blocked` with that reason, `tokex status` says the stock venue
 * cannot fill and exits 1, the skew is on /metrics, and the perp API (which needs no oracle fill)
 * stays ready. A market buy placed before the jump (held by a guardian pause in its own block, so
 * that the executor reaches it only once the clock is ahead) is REJECTED because the oracle is too
 * old, and counted on /metrics as `tokex_executor_rejections_total{reason="oracle_stale"}`.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { createPublicClient, defineChain, erc20Abi, http, maxUint256, parseGwei, type Address, type Hex } from 'viem';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { stockRouterAbi } from '../../src/chain/abi/generated/index.ts';
import { GUARDIAN_ACCOUNT } from '../../src/chain/anvil-accounts.ts';
import type { AnvilHandle } from '../../src/chain/anvil-process.ts';
import { testWallet } from '../support/chain-fixture.ts';
import { startStackOnOwnAnvil, type TestStack } from '../support/stock-stack.ts';
import { until } from '../support/poll.ts';

let anvil: AnvilHandle;
let t: TestStack;

interface ChainClock {
  chainTime: number;
  block: number;
  readAt: number;
  skewMs: number;
  oracleMaxAgeS: number;
  oracleAgeMarginS: number;
  hubMaxClockSkewS: number;
}

interface Role {
  role: string;
  state: string;
  reason?: string;
  clock?: { check: string; chainTime: number; wallTime: number; skewMs: number; limitS: number };
  detail?: { clockSkewS?: number; chainClock?: ChainClock };
}

interface Probe {
  status: number;
  body: { code: number; errMsg?: string; data: { status: string; roles: Role[] } };
}

async function probe(base: string): Promise<Probe> {
  const res = await fetch(`${base}/readyz`);
  return { status: res.status, body: (await res.json()) as Probe['body'] };
}

const executorOf = (p: Probe): Role => p.body.data.roles.find((r) => r.role === 'executor')!;
const iso = (ms: number) => new Date(ms).toISOString();

/** The sentence readiness shows for a lead past the oracle's age, from the reading's own figures. */
const aheadReason = (c: { chainTime: number; wallTime: number; skewMs: number }, block: number) =>
  `chain clock ${Math.round(c.skewMs / 1000)} s ahead (chain ${iso(c.chainTime)} at block ${block}, wall ${iso(c.wallTime)}); ` +
  "stock fills are refused past the oracle's 180 s age (maxAge); the executor allows at most 165 s ahead: the oracle's age less its 15 s margin";

function status(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'silent', DATA_DIR: t.dataDir };
  delete env.DATABASE_URL;
  return new Promise((resolve) => {
    execFile(process.execPath, ['bin/tokex.mjs', 'status', ...args], { env }, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

const client = () => createPublicClient({ transport: http(anvil.rpcUrl) });

/** Moves anvil's clock `seconds` ahead of where it stands and mines a block there; answers that block's number and timestamp. */
async function moveClock(seconds: number): Promise<{ number: number; timestamp: number }> {
  const c = client();
  await c.request({ method: 'evm_increaseTime' as never, params: [seconds] as never });
  await c.request({ method: 'evm_mine' as never, params: [] as never });
  const b = await c.getBlock({ blockTag: 'latest' });
  return { number: Number(b.number), timestamp: Number(b.timestamp) };
}

/** The timestamp (s) anvil gave block `n`. */
const timestampOf = async (n: number) => Number((await client().getBlock({ blockNumber: BigInt(n) })).timestamp);

/** The executor's rejections of one rule, as the stack's /metrics serves them (a counter: read as differences). */
async function rejections(reason: string): Promise<number> {
  const body = await (await fetch(t.stack.metricsUrl!)).text();
  const v = new RegExp(`^tokex_executor_rejections_total\\{reason="${reason}"\\} (\\S+)$`, 'm').exec(body)?.[1];
  if (v === undefined) throw new Error(`no tokex_executor_rejections_total{reason="${reason}"} on /metrics`);
  return Number(v);
}

beforeAll(async () => {
  // The guardian's pause holds the test's order (with RPC_URL the router has none unless named); a
  // refused oracle rejects an order after 3 s instead of the default 60 s.
  ({ anvil, t } = await startStackOnOwnAnvil({ STATUS_PUBLISH_MS: '250', METRICS_PORT: '0', GUARDIAN_ADDRESS: GUARDIAN_ACCOUNT.address, EXECUTOR_NO_QUOTE_TIMEOUT_MS: '3000' }));
});

afterAll(async () => {
  await t?.stop();
  await anvil?.stop();
});

it('stays ready a few seconds ahead; 220 s ahead it names the skew, both times and the oracle bound, and the stock venue cannot fill', async () => {
  const stockBase = new URL(t.stack.stockBaseUrl!).origin;
  const perpBase = t.perpBaseUrl!;
  const ready = await until(() => probe(stockBase), (p) => p.status === 200 && executorOf(p).detail?.chainClock !== undefined, 60_000);
  // The bounds as the chain states them: the router's maxAge (3 × the 60 s heartbeat), the hub's constant.
  expect(executorOf(ready).detail!.chainClock).toMatchObject({ oracleMaxAgeS: 180, oracleAgeMarginS: 15, hubMaxClockSkewS: 60 });

  // A few seconds ahead: read, published, and still ready.
  const small = await moveClock(3);
  const smallRead = await until(() => probe(stockBase), (p) => (executorOf(p).detail?.chainClock?.block ?? 0) >= small.number, 20_000);
  expect(smallRead.status).toBe(200);
  expect(smallRead.body.data.status).toBe('ready');
  const s = executorOf(smallRead);
  expect(s.state).toBe('fresh');
  expect(s.reason).toBeUndefined();
  const sc = s.detail!.chainClock!;
  // The reading is the block's own stamp against this host's clock at the read, to the millisecond.
  expect(sc.chainTime).toBe((await timestampOf(sc.block)) * 1000);
  expect(sc.skewMs).toBe(sc.chainTime - sc.readAt);
  expect(sc.skewMs).toBeGreaterThan(0);
  expect(sc.skewMs).toBeLessThanOrEqual(3_000);
  expect(s.detail!.clockSkewS).toBe(Math.round(sc.skewMs / 1000));

  // A market buy of the demo wallet and the guardian's pause, mined in one block (the buy first): the
  // executor, which decides nothing while the venue is paused, reaches the order only after the jump.
  const chain = defineChain({ id: t.demo.chainId, name: 'anvil', nativeCurrency: { name: 'ETH', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [anvil.rpcUrl] } } });
  const router = t.demo.stock.contracts.stockRouter as Address;
  const guardian = testWallet(GUARDIAN_ACCOUNT.privateKey, chain, anvil.rpcUrl);
  const buyer = testWallet(t.demo.wallets[0]!.privateKey as Hex, chain, anvil.rpcUrl);
  // With its deposit in the same call (on RPC_URL the demo wallets hold their USDC in the wallet).
  await client().waitForTransactionReceipt({ hash: await buyer.writeContract({ address: t.demo.stock.contracts.cashToken as Address, abi: erc20Abi, functionName: 'approve', args: [router, maxUint256] }) });
  const cd = await t.writable.post<{ toAddress: Address; callData: Hex }>('/api/v1/orders/with-deposit/calldata', {
    symbol: 'AAPL', side: 'Buy', type: 'Market', notional: '100', tokenAmount: '100', deadline: Math.floor(Date.now() / 1000) + 3600,
  });
  await client().request({ method: 'evm_setAutomine' as never, params: [false] as never });
  let held: [Hex, Hex];
  try {
    held = [
      await buyer.sendTransaction({ to: cd.toAddress, data: cd.callData, maxPriorityFeePerGas: parseGwei('5') }),
      await guardian.writeContract({ address: router, abi: stockRouterAbi, functionName: 'pause', maxPriorityFeePerGas: parseGwei('1') }),
    ];
    await client().request({ method: 'evm_mine' as never, params: [] as never });
  } finally {
    await client().request({ method: 'evm_setAutomine' as never, params: [true] as never });
  }
  const [placed, paused] = await Promise.all(held.map((hash) => client().waitForTransactionReceipt({ hash })));
  expect([placed!.status, paused!.status]).toEqual(['success', 'success']);
  expect(placed!.blockNumber).toBe(paused!.blockNumber);
  const { orderId } = await t.writable.post<{ orderId: string }>('/api/v1/orders/tx', { txHash: held[0] });

  // 220 s further: past what the oracle's age allows.
  const before = Date.now();
  const big = await moveClock(220);
  expect(big.timestamp * 1000 - before).toBeGreaterThan(165_000);
  const down = await until(() => probe(stockBase), (p) => p.status === 503 && (executorOf(p).detail?.chainClock?.block ?? 0) >= big.number, 20_000);
  const e = executorOf(down);
  const c = e.detail!.chainClock!;
  expect(c.chainTime).toBe((await timestampOf(c.block)) * 1000);
  expect(c.readAt).toBeGreaterThanOrEqual(before);
  expect(c.readAt).toBeLessThanOrEqual(Date.now());
  expect(c.skewMs).toBe(c.chainTime - c.readAt);
  expect(e.state).toBe('blocked');
  expect(e.clock).toEqual({ check: 'oracle-max-age', chainTime: c.chainTime, wallTime: c.readAt, skewMs: c.skewMs, limitS: 165 });
  expect(e.reason).toBe(aheadReason(e.clock!, c.block));
  expect(down.body).toMatchObject({ code: 503, errMsg: `not ready: executor blocked: ${e.reason}`, data: { status: 'not_ready' } });
  // Only the executor: every other role still makes progress.
  expect(down.body.data.roles.map((r) => [r.role, r.state])).toEqual([
    ['marketdata', 'fresh'],
    ['indexer', 'fresh'],
    ['executor', 'blocked'],
    ['relayer', 'fresh'],
  ]);
  // The perpetual venue fills nothing through the oracle check: it stays ready.
  expect((await probe(perpBase)).status).toBe(200);

  // tokex status, as an operator runs it: the executor blocked, the venue's reason, exit code 1.
  const json = await status(['--json']);
  expect(json.code).toBe(1);
  const report = JSON.parse(json.stdout) as { ok: boolean; roles: Array<{ role: string; state: string; reason?: string; detail?: { chainClock?: ChainClock } }> };
  expect(report.ok).toBe(false);
  expect(report.roles.map((r) => [r.role, r.state])).toEqual([
    ['marketdata', 'fresh'],
    ['indexer', 'fresh'],
    ['perp-indexer', 'fresh'],
    ['executor', 'blocked'],
    ['relayer', 'fresh'],
    ['perp-engine', 'fresh'],
    ['projector', 'fresh'],
  ]);
  const jc = report.roles.find((r) => r.role === 'executor')!.detail!.chainClock!;
  expect(report.roles.find((r) => r.role === 'executor')!.reason).toBe(aheadReason({ chainTime: jc.chainTime, wallTime: jc.readAt, skewMs: jc.skewMs }, jc.block));

  const text = await status([]);
  expect(text.code).toBe(1);
  const lines = text.stdout.trimEnd().split('\n');
  expect(lines.find((l) => l.startsWith('executor '))).toMatch(/^executor\s+blocked\s/);
  expect(lines[lines.length - 2]).toBe(`1 of 7 roles not fresh: executor blocked (stale after 15 s); from ${path.join(t.dataDir, 'tokex.sqlite')}`);
  // The venue's line: the reason with the figures of the reading this run judged.
  const m = /^the stock venue cannot fill: chain clock (\d+) s ahead \(chain (\S+) at block (\d+), wall (\S+)\); /.exec(lines[lines.length - 1]);
  expect(m, lines[lines.length - 1]).not.toBeNull();
  const [chainIso, block, wallIso] = [m![2], Number(m![3]), m![4]];
  expect(Date.parse(chainIso)).toBe((await timestampOf(block)) * 1000);
  expect(lines[lines.length - 1]).toBe(
    `the stock venue cannot fill: ${aheadReason({ chainTime: Date.parse(chainIso), wallTime: Date.parse(wallIso), skewMs: Date.parse(chainIso) - Date.parse(wallIso) }, block)}`,
  );

  // The skew on /metrics, in seconds, as the executor's role last read it.
  const scrape = await until(
    async () => {
      const body = await (await fetch(t.stack.metricsUrl!)).text();
      return /^tokex_chain_clock_skew_seconds\{chain_id="31337"\} (\S+)$/m.exec(body)?.[1];
    },
    (v) => v !== undefined && Number(v) > 165,
  );
  expect(Number(scrape)).toBeLessThan(224);

  // The pause lifted, the executor reaches the held buy: every answer the oracle has is older than
  // its age allows at the chain's time, so the order waits the 3 s and is REJECTED, saying why, and
  // the rejection is counted by its rule.
  const stale = await rejections('oracle_stale');
  const otherRules = async () => Promise.all(['oracle_deviation', 'oracle_invalid', 'no_quote'].map(rejections));
  const othersBefore = await otherRules();
  await client().waitForTransactionReceipt({ hash: await guardian.writeContract({ address: router, abi: stockRouterAbi, functionName: 'unpause' }) });
  const order = await until(
    () => t.writable.get<{ state: string; history?: { status: string; filledQuantity: string; reason?: string } }>(`/api/v1/orders/${orderId}`),
    (o) => o.state === 'history',
    90_000,
  );
  expect(order.history).toMatchObject({
    status: 'REJECTED',
    filledQuantity: '0',
    reason: "the on-chain oracle of AAPL was older than 180 s for 3 s, so no fill could be checked against it",
  });
  expect(await until(() => rejections('oracle_stale'), (v) => v === stale + 1)).toBe(stale + 1);
  expect(await otherRules()).toEqual(othersBefore);
}, 180_000);
