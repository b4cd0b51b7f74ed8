/**
 * Scale-out shape: every role as its own OS process (`tokex start --role …`) against one chain and
 * one database, the API instance stateless. A deposit and a market buy go through the API process,
 * are indexed by the indexer process and filled by the executor process.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, erc20Abi, http, maxUint256, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { startAnvil, type AnvilHandle } from '../../src/chain/anvil-process.ts';
import { ANVIL_ACCOUNTS, OPERATOR_ACCOUNT } from '../../src/chain/anvil-accounts.ts';
import { PerpClient, StockClient, signPerpRequest } from '@tokex/sdk';
import type { DemoFile } from '../../src/app/demo-file.ts';
import { openDatabase } from '../../src/storage/database.ts';
import { uniqueSchemaName } from '../support/test-databases.ts';
import { openSocket, type StreamFrame } from '../support/ws-client.ts';
import { startRoleProcess, type RoleProcess } from '../support/role-process.ts';
import { until } from '../support/poll.ts';
import { testWallet } from '../support/chain-fixture.ts';
import { dropRedisKeys } from '../support/redis-keys.ts';

let anvil: AnvilHandle;
// With Redis the perp roles run apart too, each run on streams of its own.
const PERP_STREAM = process.env.REDIS_URL ? `test-roles-${process.pid}-${Date.now().toString(36)}` : undefined;
const children: ChildProcess[] = [];
let dataDir: string;
// On PostgreSQL the roles share one schema of their own: the default schema may hold another run's
// rows, and a fresh anvil replays the same transaction hashes.
const schema = process.env.DATABASE_URL ? uniqueSchemaName('roles') : undefined;

/** Each role's process by label: its banner gives the perp API's URL, its output a failure's message. */
const roles = new Map<string, RoleProcess>();

async function startRole(role: string, env: Record<string, string>, label = role): Promise<RoleProcess> {
  const p = await startRoleProcess(role, env, label);
  roles.set(label, p);
  children.push(p.child);
  return p;
}

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokex-roles-'));
  anvil = await startAnvil({ port: 0 });
  const env = {
    DATA_DIR: dataDir,
    RPC_URL: anvil.rpcUrl,
    OPERATOR_PRIVATE_KEY: OPERATOR_ACCOUNT.privateKey,
    // The executor runs in a process of its own, so it sends with a key of its own (the deployer
    // grants it operator rights); the shared operator key serves only a process running every role.
    EXECUTOR_PRIVATE_KEY: ANVIL_ACCOUNTS[8].privateKey,
    // The perp operator's address, for the deployer to make it the vault's operator; its key is the
    // perp engine process's alone (below).
    PERP_OPERATOR_ADDRESS: ANVIL_ACCOUNTS[6].address,
    DEMO_MODE: 'true',
    STOCK_API_PORT: '0',
    HISTORY_DAYS: '1',
    LOG_LEVEL: 'warn',
    EXECUTOR_TICK_MS: '200',
    INDEXER_POLL_MS: '100',
    MARKETDATA_TICK_MS: '250',
    // No process here holds an oracle publisher key, so no price feed is published: the venue runs
    // without the on-chain oracle, which 0.2.0 requires saying (fills of feedless stocks are refused
    // otherwise; docs/security.md "Feeds required for fills").
    ORACLE_TOLERANCE_BPS: '0',
    ...(schema ? { DATABASE_SCHEMA: schema } : {}),
  };
  // The first role deploys the contracts; the others reuse the recorded deployment.
  await startRole('marketdata', env);
  await Promise.all([startRole('indexer', env), startRole('executor', env), startRole('stock-api', env)]);
  if (PERP_STREAM) {
    // The perp engine in a process of its own, and a perp API apart from it: commands over Redis
    // Streams, reads from a replica of the journal in the shared database.
    // The engine process pays withdrawals from the vault with the perp operator's key
    // (src/chain/operator-roles.ts).
    const perpEnv = {
      ...env, REDIS_URL: process.env.REDIS_URL!, PERP_ENGINE_STREAM: PERP_STREAM, STREAM_PREFIX: PERP_STREAM, PERP_API_PORT: '0', PERP_MARK_INTERVAL_MS: '250',
      PERP_OPERATOR_PRIVATE_KEY: ANVIL_ACCOUNTS[6].privateKey,
    };
    await startRole('perp-engine', perpEnv);
    // Two API instances: the streams reach both through Redis, with the same seqs.
    await Promise.all([startRole('perp-api', perpEnv), startRole('perp-api', perpEnv, 'perp-api-2')]);
  }
}, 120_000);

afterAll(async () => {
  for (const c of children) c.kill('SIGTERM');
  await Promise.all(children.map((c) => (c.exitCode !== null ? undefined : new Promise((r) => c.once('exit', r)))));
  await anvil?.stop();
  if (PERP_STREAM) await dropRedisKeys(process.env.REDIS_URL!, `${PERP_STREAM}:`).catch(() => undefined);
  if (schema) {
    const db = await openDatabase({ url: process.env.DATABASE_URL, schema, migrate: false });
    await db.kysely.schema.dropSchema(schema).ifExists().cascade().execute();
    await db.close();
  }
});

describe('roles as separate processes', () => {
  if (PERP_STREAM) {
    it('a perp API apart from the engine: signed orders over Redis Streams, reads from the journal replica', async () => {
      const demo = JSON.parse(fs.readFileSync(path.join(dataDir, 'demo.json'), 'utf8')) as DemoFile;
      const perpBaseUrl = roles.get('perp-api')!.baseUrl('perp');
      const wallet = privateKeyToAccount(demo.wallets[0].privateKey);
      const key = await PerpClient.createApiKey(perpBaseUrl, wallet, { label: 'roles', permissions: ['READ', 'TRADE'], chainId: demo.chainId });
      const perp = PerpClient.forKey(perpBaseUrl, key, demo.chainId);
      // The demo deposit, indexed by the indexer process and credited by the engine process.
      const until = async <T>(read: () => Promise<T>, done: (v: T) => boolean): Promise<T> => {
        for (let i = 0; i < 120; i++) {
          const v = await read();
          if (done(v)) return v;
          await new Promise((r) => setTimeout(r, 250));
        }
        throw new Error('timed out');
      };
      await until(() => perp.get<any>('account'), (a) => a.balance === '10000');
      // The engine process's market maker quotes around the index the marketdata process writes.
      const book = await until(() => perp.get<any>('depth', { symbol: 'AAPL-USD' }), (d) => d.asks.length > 0);
      const order = await perp.placeOrder<any>(wallet, { symbol: 'AAPL-USD', side: 'BUY', type: 'LIMIT', size: '1', price: book.asks[0][0], timeInForce: 'IOC' });
      expect(order).toMatchObject({ status: 'FILLED', filledSize: '1', avgPrice: book.asks[0][0] });
      // Read right after the answer, from the replica: the answer waited for it.
      const positions = await perp.get<any>('positions', { symbol: 'AAPL-USD' });
      expect(positions.rows[0]).toMatchObject({ side: 'LONG', size: '1', entryPrice: book.asks[0][0] });
      const history = await until(() => perp.get<any>('orders/history'), (h) => h.total > 0);
      expect(history.rows[0]).toMatchObject({ orderId: order.orderId, status: 'FILLED' });
    }, 60_000);
  }

  if (PERP_STREAM) {
    it('two perp API instances stream the same book with the same seqs and the same data', async () => {
      const wsUrl = (label: string) => roles.get(label)!.baseUrl('perp').replace(/^http/, 'ws');
      const [a, b] = await Promise.all([openSocket(`${wsUrl('perp-api')}/v4/public/ws`), openSocket(`${wsUrl('perp-api-2')}/v4/public/ws`)]);
      try {
        for (const s of [a, b]) s.send({ op: 'subscribe', id: 'm', channel: 'mark', symbol: 'AAPL-USD' });
        const [snapA, snapB] = await Promise.all([a.next((f) => f.type === 'subscribed'), b.next((f) => f.type === 'subscribed')]);
        // Both see the next few marks (one each 250 ms): the same seq carries the same data on both.
        const last = Math.max(snapA.seq!, snapB.seq!) + 4;
        await Promise.all([a.next((f) => f.type === 'update' && f.seq === last), b.next((f) => f.type === 'update' && f.seq === last)]);
        const bySeq = (frames: StreamFrame[]) => new Map(frames.filter((f) => f.type === 'update').map((f) => [f.seq!, JSON.stringify(f.data)]));
        const ma = bySeq(a.frames);
        const mb = bySeq(b.frames);
        for (let seq = Math.max(snapA.seq!, snapB.seq!) + 1; seq <= last; seq++) {
          expect(ma.get(seq)).toBeDefined();
          expect(ma.get(seq)).toBe(mb.get(seq));
        }
        for (const [s, snap] of [[a, snapA], [b, snapB]] as const) {
          const seqs = s.frames.filter((f) => f.type === 'update').map((f) => f.seq!);
          expect(seqs).toEqual(seqs.map((_, i) => snap.seq! + 1 + i));
        }
      } finally {
        a.close();
        b.close();
      }
    }, 60_000);
  }

  if (PERP_STREAM) {
    it('across two perp API instances: a signature is used once, a key has one rate limit, 100 withdrawals race for one balance', async () => {
      const demo = JSON.parse(fs.readFileSync(path.join(dataDir, 'demo.json'), 'utf8')) as DemoFile;
      const urlOf = (label: string) => roles.get(label)!.baseUrl('perp');
      const urls = [urlOf('perp-api'), urlOf('perp-api-2')];
      const poll = async <T>(read: () => Promise<T>, done: (v: T) => boolean): Promise<T> => {
        for (let i = 0; i < 100; i++) {
          const v = await read();
          if (done(v)) return v;
          await new Promise((r) => setTimeout(r, 500));
        }
        throw new Error(`timed out: ${JSON.stringify(await read()).slice(0, 1500)}`);
      };

      // A signature answered by one instance is a replay on the other (one nonce store in Redis).
      const wallet = privateKeyToAccount(demo.wallets[3].privateKey);
      const key = await PerpClient.createApiKey(urls[0], wallet, { label: 'races', permissions: ['READ', 'TRADE', 'TRANSFER'], chainId: demo.chainId });
      const ts = String(Date.now());
      const requestPath = '/v4/public/trader/account';
      const headers = { 'X-Api-Key': key.apiKey, 'X-Api-Ts': ts, 'X-Api-Sign': signPerpRequest(key.apiSecret, { ts, method: 'GET', requestPath, body: '' }), 'X-Chain-Id': String(demo.chainId) };
      const first = await fetch(urls[0] + requestPath, { headers });
      expect(first.status).toBe(200);
      const replay = await fetch(urls[1] + requestPath, { headers });
      expect([replay.status, (await replay.json()).code]).toEqual([401, 20007]);

      // One key, one limit: a burst of 300 across both instances is let through exactly 120 times.
      const reader = privateKeyToAccount(demo.wallets[2].privateKey);
      const readKey = await PerpClient.createApiKey(urls[1], reader, { label: 'burst', permissions: ['READ'], chainId: demo.chainId });
      const burst = await Promise.all(
        Array.from({ length: 300 }, (_, i) => {
          const t = String(Date.now() + i);
          const h = { 'X-Api-Key': readKey.apiKey, 'X-Api-Ts': t, 'X-Api-Sign': signPerpRequest(readKey.apiSecret, { ts: t, method: 'GET', requestPath, body: '' }), 'X-Chain-Id': String(demo.chainId) };
          return fetch(urls[i % 2] + requestPath, { headers: h }).then((r) => r.status);
        }),
      );
      expect([burst.filter((x) => x === 200).length, burst.filter((x) => x === 429).length]).toEqual([120, 180]);

      // 100 withdrawals of 15 against 1,000 of collateral, alternating instances, all at once: the
      // engine admits exactly floor(1000 / 15) = 66, refuses the rest, and the vault pays 990.
      // Two more keys of the same wallet send them, so no key meets its own 120 a minute.
      const on = urls.map((u) => PerpClient.forKey(u, key, demo.chainId));
      await on[0].depositCollateral(wallet, '1000', { timeoutMs: 60_000 });
      const senders = await Promise.all(
        [0, 1].map(async (i) => PerpClient.forKey(urls[i], await PerpClient.createApiKey(urls[i], wallet, { label: `race ${i}`, permissions: ['READ', 'TRANSFER'], chainId: demo.chainId }), demo.chainId)),
      );
      const settled = await Promise.allSettled(Array.from({ length: 100 }, (_, i) => senders[i % 2].withdraw(wallet, { amount: '15', clientWithdrawalId: `race-${i}` }, { retries: 0 })));
      const refusals = settled.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => (r.reason as { code?: number }).code);
      expect(settled.filter((r) => r.status === 'fulfilled')).toHaveLength(66);
      expect(refusals).toEqual(Array(34).fill(51002));
      const account = await poll(() => on[1].get<any>('account'), (a) => a.withdrawn === '990').catch(async (err) => {
        const w = await on[0].listWithdrawals({ limit: 3 });
        throw new Error(`${(err as Error).message}\nwithdrawals: ${JSON.stringify(w.rows)}\nengine: ${(roles.get('perp-engine')?.output() ?? '').slice(-3000)}`);
      });
      expect(account).toMatchObject({ balance: '10', withdrawn: '990', deposited: '1000' });
      const paid = await poll(() => on[0].listWithdrawals({ limit: 100 }), (p) => p.rows.filter((w) => w.status === 'COMPLETED').length === 66);
      expect(new Set(paid.rows.map((w) => w.txHash)).size).toBe(66);
    }, 120_000);
  }

  it('stops cleanly on SIGTERM and otherwise serves the whole flow across processes', async () => {
    const demo = JSON.parse(fs.readFileSync(path.join(dataDir, 'demo.json'), 'utf8')) as DemoFile;
    const api = new StockClient({ baseUrl: demo.stock.baseUrl, chainId: demo.chainId, ...demo.stock.keys.writable });
    const chain = { id: demo.chainId, name: 'anvil', nativeCurrency: { name: 'ETH', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [demo.rpcUrl] } } };
    const wallet = testWallet(demo.wallets[0].privateKey, chain, demo.rpcUrl);
    const pub = createPublicClient({ chain, transport: http(demo.rpcUrl) });
    const sendTx = async (cd: { toAddress: Address; callData: Hex }) => {
      const hash = await wallet.sendTransaction({ to: cd.toAddress, data: cd.callData });
      await pub.waitForTransactionReceipt({ hash });
      return hash;
    };
    const c = demo.stock.contracts;
    await pub.waitForTransactionReceipt({ hash: await wallet.writeContract({ address: c.cashToken, abi: erc20Abi, functionName: 'approve', args: [c.stockRouter, maxUint256] }) });
    const dep = await api.post<any>('/api/v1/cash/deposits/calldata', { tokenAddress: c.cashToken, tokenAmount: '400' });
    const rec = await api.post<any>('/api/v1/cash/deposits/tx', { txHash: await sendTx(dep) });
    expect(rec).toMatchObject({ indexed: true, operationStatus: 'completed' });

    // The API process has no simulator: its quotes come from storage, written by the marketdata
    // process as it ticks, so a later read carries a later quote (it moves; no age figure).
    const quote = await api.get<any>('/api/v1/prices/MSFT');
    await until(() => api.get<any>('/api/v1/prices/MSFT'), (q) => q.timestamp > quote.timestamp, 30_000);

    const cd = await api.post<any>('/api/v1/orders/calldata', { symbol: 'MSFT', side: 'Buy', type: 'Market', notional: '300', deadline: Math.floor(Date.now() / 1000) + 600 });
    const { orderId } = await api.post<any>('/api/v1/orders/tx', { txHash: await sendTx(cd) });
    let order: any;
    for (let i = 0; i < 100; i++) {
      order = await api.get<any>(`/api/v1/orders/${orderId}`);
      if (order.state === 'history') break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(order.history.status).toBe('FILLED');
    expect(order.history.filledQuantity).toMatch(/^(?!0$)\d+(\.\d+)?$/);
    if (schema) {
      // The roles really shared the PostgreSQL schema they were given.
      const db = await openDatabase({ url: process.env.DATABASE_URL, schema, migrate: false });
      try {
        const row = await db.kysely.selectFrom('stock_orders').select('order_id').where('order_id', '=', orderId).executeTakeFirst();
        expect(row?.order_id).toBe(orderId);
      } finally {
        await db.close();
      }
    }

    for (const child of children) child.kill('SIGTERM');
    const codes = await Promise.all(children.map((ch) => (ch.exitCode !== null ? ch.exitCode : new Promise((r) => ch.once('exit', (code) => r(code))))));
    expect(codes).toEqual(children.map(() => 0));
  }, 60_000);
});
