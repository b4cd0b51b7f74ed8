/**
 * Corporate actions on the stock streams, over a real WebSocket against the stack (docs/streams.md,
 * docs/corporate-actions.md "Streams"): the public `corporateActions` channel's snapshot is
 * `GET corporate-action?symbol=`'s rows, and each change of a stored action (added `scheduled`,
 * `failed` with its reason, `scheduled` again by `tokex corporate-actions retry`, `applied` with its
 * transaction) is an update carrying the row as the route then answers it; after a restart (a new
 * epoch, seeded from the store) a holder's `operations` snapshot holds its DIVIDEND operation.
 *
 * The stack runs without its executor role, so no scheduler of its own takes the action up: the test
 * runs the real scheduler on an injected clock (the ex-date is tomorrow), first with a payer holding
 * no cash (the action fails), then with the executor's key, so each state is reached when the test
 * says and each is seen by the stream.
 */
import { execFile } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { erc20Abi, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dividendDistributorAbi } from '../../src/chain/abi/generated/index.ts';
import { EXECUTOR_ACCOUNT } from '../../src/chain/anvil-accounts.ts';
import { createChainClients } from '../../src/chain/chain-client.ts';
import { senderFor } from '../../src/chain/tx-sender.ts';
import { newYorkDate } from '../../src/marketdata/corporate-actions.ts';
import { createDividendScheduler } from '../../src/stock/corporate-actions/dividend-scheduler.ts';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';
import { openSocket, type TestSocket } from '../support/ws-client.ts';
import { testWallet } from '../support/chain-fixture.ts';

const run = promisify(execFile);
const DAY = 86_400_000;
const ROLES = ['marketdata', 'indexer', 'stock-api'] as const;
const SYMBOL = 'AAPL';

let t: TestStack;
const sockets: TestSocket[] = [];
const tomorrow = newYorkDate(Date.now() + DAY);
const actionId = `${SYMBOL}-${tomorrow}`;

beforeAll(async () => {
  t = await startTestStack({ INDEXER_POLL_MS: '100' }, { role: [...ROLES] });
}, 120_000);
afterAll(async () => {
  for (const s of sockets) s.close();
  await t?.stop();
});

async function cli(args: string[]): Promise<string> {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: t.dataDir, LOG_LEVEL: 'silent' };
  delete env.DATABASE_URL;
  delete env.DATABASE_SCHEMA;
  delete env.REDIS_URL;
  const { stdout, stderr } = await run(process.execPath, ['bin/tokex.mjs', 'corporate-actions', ...args], { env });
  expect(stderr).toBe('');
  return stdout;
}

async function open(): Promise<TestSocket> {
  const s = await openSocket(t.demo.stock.wsUrl);
  sockets.push(s);
  return s;
}

/** The route's rows: the read-only key is bound to no wallet, so no dividend carries `operations`. */
const restRows = async (): Promise<any[]> => (await t.readOnly.get<any>('/api/v1/corporate-action', { symbol: SYMBOL })).rows;
const restRow = async (): Promise<any> => (await restRows()).find((r) => r.exDate === tomorrow);

/** The real scheduler, its clock a day ahead (tomorrow's ex-date is due), paying with `privateKey`. */
function scheduler(privateKey: `0x${string}`) {
  const { publicClient } = createChainClients({ rpcUrl: t.stack.rpcUrl, chainId: t.demo.chainId });
  return createDividendScheduler({
    db: t.stack.db,
    publicClient,
    sender: senderFor({ publicClient, privateKey }),
    deployment: t.stack.deployment,
    withholdingBps: 1500,
    now: () => Date.now() + DAY,
    tickMs: 60_000,
  });
}

/** Runs it until the action leaves `waiting` (the indexer may not have every holder yet). */
async function runUntilSettled(s: ReturnType<typeof scheduler>): Promise<'applied' | 'failed'> {
  for (let i = 0; i < 100; i++) {
    const r = await s.runOnce();
    if (r.applied.includes(actionId)) return 'applied';
    if (r.failed.includes(actionId)) return 'failed';
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error(`${actionId} still waiting`);
}

describe('the corporateActions channel and DIVIDEND operations in the operations snapshot', () => {
  it('snapshot = GET rows; added, failed (reason), scheduled again, applied (txHash): each an update with the row GET then answers', async () => {
    const s = await open();
    s.send({ op: 'subscribe', id: 'ca', channel: 'corporateActions', symbol: SYMBOL });
    const snap = await s.next((f) => f.type === 'subscribed' && f.id === 'ca');
    const before = await restRows();
    expect(before.length).toBeGreaterThan(0);
    expect(snap).toEqual({ type: 'subscribed', id: 'ca', channel: 'corporateActions', symbol: SYMBOL, seq: snap.seq, data: before });

    /** This action's updates from `from` on; every update of the stream follows the last one's seq. */
    const mine = (from: number) => s.frames.slice(from).filter((f) => f.type === 'update' && f.data.exDate === tomorrow);
    const nextOf = (from: number, status: string) => s.next((f) => f.type === 'update' && f.data.exDate === tomorrow && f.data.status === status, { from });

    // Added by the CLI: a `scheduled` row, nothing computed yet.
    let mark = s.frames.length;
    await cli(['add', '--symbol', SYMBOL, '--dividend', '0.01', '--ex-date', tomorrow, '--json']);
    const added = await nextOf(mark, 'scheduled');
    expect(added).toEqual({ type: 'update', channel: 'corporateActions', symbol: SYMBOL, seq: snap.seq! + 1, data: await restRow() });
    expect(added.data).toMatchObject({ symbol: SYMBOL, type: 'DIVIDEND', exDate: tomorrow, amount: '0.01', status: 'scheduled', txHash: null, reason: null, dividend: null });

    // A payer without the cash: holders of record taken (totals), then failed naming both amounts.
    mark = s.frames.length;
    // Its key is made here; it never sends (the run fails before any send).
    const broke = generatePrivateKey();
    expect(await runUntilSettled(scheduler(broke))).toBe('failed');
    const failed = await nextOf(mark, 'failed');
    expect(failed.data).toEqual(await restRow());
    const payer = privateKeyToAccount(broke).address.toLowerCase();
    expect(failed.data.reason).toMatch(new RegExp(`^the paying wallet ${payer} holds 0 of the cash token; the dividend needs \\d+(\\.\\d+)?$`));
    expect(failed.data.txHash).toBeNull();
    expect(failed.data.dividend).toMatchObject({ withholdingBps: 1500, distributionId: null });
    for (const f of mine(mark).slice(0, -1)) expect(f.data).toMatchObject({ status: 'scheduled', txHash: null });

    // `retry`: scheduled again, the reason gone, the totals kept.
    mark = s.frames.length;
    await cli(['retry', actionId, '--json']);
    const again = await nextOf(mark, 'scheduled');
    expect(again.data).toEqual(await restRow());
    expect(again.data).toMatchObject({ status: 'scheduled', reason: null, txHash: null, dividend: failed.data.dividend });

    // The executor's key (an operator of the distributor) with the cash: funded, pushed, applied.
    const { publicClient } = createChainClients({ rpcUrl: t.stack.rpcUrl, chainId: t.demo.chainId });
    const distributor = t.stack.deployment.contracts.dividendDistributor as Address;
    expect(await publicClient.readContract({ address: distributor, abi: dividendDistributorAbi, functionName: 'isOperator', args: [EXECUTOR_ACCOUNT.address] })).toBe(true);
    await fund(EXECUTOR_ACCOUNT.address as Address, BigInt(Math.round(Number(again.data.dividend.netAmount) * 1e6)) + 1n);
    mark = s.frames.length;
    expect(await runUntilSettled(scheduler(EXECUTOR_ACCOUNT.privateKey))).toBe('applied');
    const applied = await nextOf(mark, 'applied');
    const row = await restRow();
    expect(applied.data).toEqual(row);
    expect(row.txHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(row.dividend.distributionId).not.toBeNull();
    // Before it, at most the funded row (the transaction known, still scheduled), as it stood.
    for (const f of mine(mark).slice(0, -1)) expect(f.data).toMatchObject({ status: 'scheduled', reason: null });

    // One stream: every update one seq after the one before, nothing else on it.
    const updates = s.frames.filter((f) => f.type === 'update');
    expect(updates.map((f) => f.seq)).toEqual(updates.map((_, i) => snap.seq! + 1 + i));
    expect(updates.every((f) => f.channel === 'corporateActions' && f.symbol === SYMBOL && f.data.exDate === tomorrow)).toBe(true);

    // A subscriber now gets the rows as GET answers them.
    const late = await open();
    late.send({ op: 'subscribe', id: 'ca2', channel: 'corporateActions', symbol: SYMBOL });
    expect((await late.next((f) => f.type === 'subscribed')).data).toEqual(await restRows());
  }, 120_000);

  it('after a restart (a new epoch from the store): the holder\'s operations snapshot holds its DIVIDEND operation, the channel its applied row', async () => {
    const holder = t.demo.wallets[0].address.toLowerCase();
    // The writable key is bound to wallets[0]: its DIVIDEND operations come with the rows.
    const [op] = (await t.writable.get<any>('/api/v1/corporate-action', { symbol: SYMBOL })).rows.find((r: any) => r.exDate === tomorrow).operations;
    expect(op).toMatchObject({ operationType: 'DIVIDEND', operationStatus: 'completed', userAddress: holder, symbol: SYMBOL });
    expect(op.txHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(Number(op.amount)).toBeGreaterThan(0);

    const dataDir = t.dataDir;
    await t.stop();
    t = await startTestStack({ INDEXER_POLL_MS: '100' }, { role: [...ROLES], dataDir });

    const s = await open();
    const key = t.demo.stock.keys.writable;
    const ts = Date.now();
    const nonce = randomUUID();
    s.send({ op: 'auth', id: 'auth', apiKey: key.apiKey, ts, nonce, sign: createHmac('sha256', key.apiSecret).update(['GET', '/api/v1/ws', String(ts), nonce, ''].join('\n')).digest('hex') });
    expect(await s.next((f) => f.type === 'authenticated')).toMatchObject({ account: holder });
    s.send({ op: 'subscribe', id: 'ops', channel: 'operations' });
    const ops = await s.next((f) => f.type === 'subscribed' && f.id === 'ops');
    // The wallet has no cash or stock operation of its own: its one operation is the dividend.
    expect(ops.data).toEqual([op]);

    s.send({ op: 'subscribe', id: 'ca', channel: 'corporateActions', symbol: SYMBOL });
    const snap = await s.next((f) => f.type === 'subscribed' && f.id === 'ca');
    const rows = await restRows();
    expect(snap.data).toEqual(rows);
    expect(rows.find((r) => r.exDate === tomorrow)).toMatchObject({ status: 'applied', txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
  }, 180_000);
});

/** Tops `to` up to `amount` of the cash token from a demo wallet that is not AAPL's first holder. */
async function fund(to: Address, amount: bigint): Promise<void> {
  const { chain, publicClient } = createChainClients({ rpcUrl: t.stack.rpcUrl, chainId: t.demo.chainId });
  const cash = t.stack.deployment.contracts.cashToken as Address;
  const has = await publicClient.readContract({ address: cash, abi: erc20Abi, functionName: 'balanceOf', args: [to] });
  if (has >= amount) return;
  const wallet = testWallet(t.demo.wallets[3].privateKey as `0x${string}`, chain, t.stack.rpcUrl);
  const hash = await wallet.writeContract({ address: cash, abi: erc20Abi, functionName: 'transfer', args: [to, amount - has], chain, account: wallet.account });
  expect((await publicClient.waitForTransactionReceipt({ hash })).status).toBe('success');
}
