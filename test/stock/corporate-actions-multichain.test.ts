/**
 * Run-time corporate actions on two embedded chains (issue 39, docs/corporate-actions.md "Several
 * chains"): an action added with the real CLI (`tokex corporate-actions add`, into the first chain's
 * store) is applied on both chains, once each, each chain with a state of its own:
 *
 * - a 2:1 split of MSFT: each chain's Stock token's multiplier doubles once, at the same moment
 *   (`effectiveAt`), and the demo wallet's MSFT doubles on each chain;
 * - a dividend of AAPL: each chain's distributor is funded and the demo wallet's USDC on each chain
 *   grows by exactly its payout there;
 * - `corporate-actions list --json` and `GET corporate-action` (per `x-api-chain-id`) show each chain's
 *   state; each chain's store has its own copy with the first chain's `createdAt`;
 * - after a restart, an action added then is applied on both chains, and the earlier ones are not
 *   applied again (the multiplier stays, no second split or distribution is sent, nothing in the log);
 * - a split that fails on the second chain only (its copy marked failed before the split's moment)
 *   leaves that chain's resting order unrestated and its executor waiting on the symbol, saying so
 *   with the chain's id, while the first chain applies it; `retry` applies it there and fills resume.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, erc20Abi, http, parseUnits, type Address } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { selfSubmitOperation, selfSubmitOrder } from '@tokex/sdk';
import { stockAbi } from '../../src/chain/abi/generated/index.ts';
import { newYorkDate } from '../../src/marketdata/corporate-actions.ts';
import { getCorporateAction, markActionFailed } from '../../src/stock/corporate-actions/corporate-action-store.ts';
import { until } from '../support/poll.ts';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';
import { testWallet } from '../support/chain-fixture.ts';

const run = promisify(execFile);
const A = 31337;
const B = 31338;
const M = 10n ** 36n;
const ENV = { EMBEDDED_CHAIN_IDS: `${A},${B}`, CORPORATE_ACTIONS_TICK_MS: '200', EXECUTOR_TICK_MS: '200', INDEXER_POLL_MS: '100' };

let dataDir: string;
let t: TestStack;

/** The real CLI against this stack's data directory, with the two chains, on SQLite. */
async function tokex(args: string[]): Promise<any> {
  const { DATABASE_URL: _d, DATABASE_SCHEMA: _s, REDIS_URL: _r, ...env } = process.env;
  const { stdout } = await run(process.execPath, ['bin/tokex.mjs', ...args, '--json'], {
    env: { ...env, DATA_DIR: dataDir, EMBEDDED_CHAIN_IDS: ENV.EMBEDDED_CHAIN_IDS, LOG_LEVEL: 'silent' },
    timeout: 120_000,
  });
  return JSON.parse(stdout);
}

const chainOf = (stack: TestStack, chainId: number) => {
  const entry = stack.demo.stock.chains.find((c) => c.chainId === chainId)!;
  return { entry, pub: createPublicClient({ transport: http(entry.rpcUrl) }) };
};

/** `GET corporate-action` on `chainId` for the demo wallet. */
async function actionOn(stack: TestStack, chainId: number, symbol: string, exDate: string): Promise<any> {
  const k = stack.demo.stock.keys.writable;
  const rows = (await stack.client(k.apiKey, k.apiSecret, { chainId }).get<any>('/api/v1/corporate-action', { symbol })).rows as any[];
  return rows.find((r) => r.exDate === exDate);
}

const appliedOnBoth = (stack: TestStack, symbol: string, exDate: string) =>
  until(
    () => Promise.all([A, B].map((c) => actionOn(stack, c, symbol, exDate))),
    (rows) => rows.every((r) => r?.status === 'applied' || r?.status === 'failed'),
    150_000,
  );

describe('run-time corporate actions on two embedded chains', () => {
  const today = newYorkDate(Date.now());
  const wallet = () => t.demo.wallets[0].address as Address;
  const msftOn = (c: number) => chainOf(t, c).entry.contracts.stocks.MSFT as Address;
  const read = (c: number, address: Address, functionName: 'multiplier' | 'totalSupply') => chainOf(t, c).pub.readContract({ address, abi: stockAbi, functionName });
  const balanceOf = (c: number, token: Address, who: Address) => chainOf(t, c).pub.readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [who] });

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokex-ca-multichain-'));
    t = await startTestStack(ENV, { dataDir });
  }, 300_000);
  afterAll(async () => {
    await t?.stop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('applies a split and a dividend added at run time on both chains, once each, with each chain\'s own state', async () => {
    expect(t.demo.stock.chains.map((c) => c.chainId)).toEqual([A, B]);
    const usdc = (c: number) => chainOf(t, c).entry.contracts.cashToken as Address;
    const before = await Promise.all(
      [A, B].map(async (c) => ({ multiplier: await read(c, msftOn(c), 'multiplier'), msft: await balanceOf(c, msftOn(c), wallet()), usdc: await balanceOf(c, usdc(c), wallet()) })),
    );
    for (const b of before) {
      expect(b.multiplier).toBe(M);
      expect(b.msft).toBeGreaterThan(0n);
    }

    const split = await tokex(['corporate-actions', 'add', '--symbol', 'MSFT', '--split', '2:1', '--ex-date', today]);
    expect(split).toMatchObject({ actionId: `MSFT-${today}`, status: 'scheduled' });
    const dividend = await tokex(['corporate-actions', 'add', '--symbol', 'AAPL', '--dividend', '0.25', '--ex-date', today]);
    expect(dividend).toMatchObject({ actionId: `AAPL-${today}`, status: 'scheduled' });
    // Stored once, in the first chain's store: the second chain takes it up into its own.
    const source = await getCorporateAction(t.stack.chains[0].db, `MSFT-${today}`);
    expect(source?.source).toBe('cli');

    const [divA, divB] = await appliedOnBoth(t, 'AAPL', today);
    const [splitA, splitB] = await appliedOnBoth(t, 'MSFT', today);
    for (const r of [divA, divB, splitA, splitB]) expect([r.status, r.reason]).toEqual(['applied', null]);
    // Each chain's own transaction.
    expect(splitA.txHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(splitB.txHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect((await chainOf(t, A).pub.getTransactionReceipt({ hash: splitA.txHash })).status).toBe('success');
    expect((await chainOf(t, B).pub.getTransactionReceipt({ hash: splitB.txHash })).status).toBe('success');
    // The same moment on both chains: the copy keeps the first chain's createdAt.
    expect(splitB.effectiveAt).toBe(splitA.effectiveAt);
    const copy = await getCorporateAction(t.stack.chains[1].db, `MSFT-${today}`);
    expect(copy).toMatchObject({ source: 'cli', status: 'applied', createdAt: source!.createdAt, stockAddress: msftOn(B).toLowerCase(), txHash: splitB.txHash });

    // On chain: each multiplier doubled once; the wallet's MSFT doubled on each chain.
    for (const [i, c] of [A, B].entries()) {
      expect(await read(c, msftOn(c), 'multiplier')).toBe(2n * M);
      expect(await balanceOf(c, msftOn(c), wallet())).toBe(before[i].msft * 2n);
    }

    // The dividend: each chain paid its holders of record; the wallet's USDC grew by its payout there.
    for (const [i, [c, row]] of ([[A, divA], [B, divB]] as const).entries()) {
      expect(row.dividend.holders).toBeGreaterThan(0);
      const op = row.operations.find((o: any) => o.userAddress.toLowerCase() === wallet().toLowerCase());
      expect(op).toMatchObject({ operationType: 'DIVIDEND', operationStatus: 'completed' });
      expect(await balanceOf(c, usdc(c), wallet())).toBe(before[i].usdc + parseUnits(op.amount, 6));
    }
    expect(divA.txHash).not.toBe(divB.txHash);

    // The CLI lists each action once per chain, with its chain's state.
    const listed = (await tokex(['corporate-actions', 'list', '--symbol', 'MSFT'])) as any[];
    expect(listed.filter((r) => r.exDate === today).map((r) => [r.chainId, r.status, r.txHash])).toEqual([
      [A, 'applied', splitA.txHash],
      [B, 'applied', splitB.txHash],
    ]);
  }, 300_000);

  it('after a restart applies a new action on both chains and none of the earlier ones again', async () => {
    await t.stop();
    t = await startTestStack(ENV, { dataDir });
    const tsla = await tokex(['corporate-actions', 'add', '--symbol', 'TSLA', '--dividend', '0.1', '--ex-date', today]);
    expect(tsla.status).toBe('scheduled');
    const [a, b] = await appliedOnBoth(t, 'TSLA', today);
    expect([a.status, b.status]).toEqual(['applied', 'applied']);
    // Both chains' schedulers ran since the restart; the split and the first dividend stayed as they were.
    for (const c of [A, B]) {
      expect(await read(c, msftOn(c), 'multiplier')).toBe(2n * M);
      expect((await actionOn(t, c, 'MSFT', today)).status).toBe('applied');
      expect((await actionOn(t, c, 'AAPL', today)).status).toBe('applied');
    }
    const again = t.logs.filter((l) => (l.includes(`MSFT-${today}`) || l.includes(`AAPL-${today}`)) && /split: applied|distribution funded|taken up/.test(l));
    expect(again).toEqual([]);
    expect(t.logs.filter((l) => l.includes(`TSLA-${today}`) && l.includes('taken up')).length).toBe(1);
  }, 300_000);

  it('a split failed on the second chain only pauses that symbol there, says so with the chain, and applies once retried', async () => {
    const id = `NVDA-${today}`;
    const k = t.demo.stock.keys.writable;
    // A resting sell of one NVDA on each chain, far above the market.
    const orders: Record<number, string> = {};
    for (const c of [A, B]) {
      const { entry } = chainOf(t, c);
      const chain = { id: c, name: `anvil-${c}`, nativeCurrency: { name: 'ETH', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [entry.rpcUrl] } } };
      const w = testWallet(t.demo.wallets[0].privateKey, chain, entry.rpcUrl);
      const reader = createPublicClient({ chain, transport: http(entry.rpcUrl) });
      const api = t.client(k.apiKey, k.apiSecret, { chainId: c });
      await selfSubmitOperation(api, w, reader, 'stockDeposit', { tokenAddress: entry.contracts.stocks.NVDA, tokenAmount: '1' }, { timeoutMs: 60_000 });
      const price = Number((await api.getPrice('NVDA')).last);
      const order = await selfSubmitOrder(api, w, reader, { symbol: 'NVDA', side: 'Sell', type: 'Limit', quantity: '1', price: (Math.ceil(price * 3 * 100) / 100).toFixed(2), timeInForce: 'DAY', deadline: Math.floor(Date.now() / 1000) + 86_400 }, { until: 'open', timeoutMs: 60_000 });
      orders[c] = order.orderId;
    }
    await tokex(['corporate-actions', 'add', '--symbol', 'NVDA', '--split', '2:1', '--ex-date', today]);
    // The second chain takes it up, then fails it before its moment (at least 5 s after it was added).
    const copy = await until(() => getCorporateAction(t.stack.chains[1].db, id), (c) => c !== undefined, 4_000);
    expect(copy!.status).toBe('scheduled');
    await markActionFailed(t.stack.chains[1].db, id, 'test: chain 31338 refused the split', Date.now());

    const [a, b] = await appliedOnBoth(t, 'NVDA', today);
    expect([a.status, b.status, b.reason]).toEqual(['applied', 'failed', 'test: chain 31338 refused the split']);
    const nvda = (c: number) => chainOf(t, c).entry.contracts.stocks.NVDA as Address;
    expect(await read(A, nvda(A), 'multiplier')).toBe(2n * M);
    expect(await read(B, nvda(B), 'multiplier')).toBe(M);
    const orderOn = (c: number) => t.client(k.apiKey, k.apiSecret, { chainId: c }).getOrder(orders[c]);
    await until(() => orderOn(A), (o) => o.quantity === '2', 30_000);
    expect((await orderOn(B)).quantity).toBe('1');
    // The second chain's executor waits on NVDA and says so, with its chain's id.
    const waits = (chainId: number, what: RegExp) => t.logs.filter((l) => what.test(l) && l.includes('"symbol":"NVDA"') && l.includes(`"chainId":${chainId}`));
    await until(async () => waits(B, /different sides of a split; fills wait/).length, (n) => n === 1, 30_000);
    expect(waits(B, /agree on the split again/)).toEqual([]);

    const retried = await tokex(['corporate-actions', 'retry', id]);
    expect(retried).toEqual({ actionId: id, status: 'scheduled', chainIds: [B] });
    const again = await until(() => actionOn(t, B, 'NVDA', today), (r) => r.status === 'applied', 60_000);
    expect(again.txHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await read(B, nvda(B), 'multiplier')).toBe(2n * M);
    expect(await read(A, nvda(A), 'multiplier')).toBe(2n * M);
    await until(() => orderOn(B), (o) => o.quantity === '2', 30_000);
    await until(async () => waits(B, /agree on the split again/).length, (n) => n === 1, 30_000);
  }, 300_000);
});
