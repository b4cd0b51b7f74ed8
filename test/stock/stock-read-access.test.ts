/**
 * Read access (issue 12 §2): a key bound to a wallet reads that wallet's orders and operations,
 * whoever recorded them; the recording key still owns cancel; another wallet's ids answer 404.
 * Against the real stack (anvil, indexer, executor), on SQLite and, with DATABASE_URL, PostgreSQL
 * (with REDIS_URL, its nonce store in Redis).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, erc20Abi, http, maxUint256, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { StockClient } from '@tokex/sdk';
import { until } from '../support/poll.ts';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';
import { stackEngines } from '../support/stack-engines.ts';
import { testWallet } from '../support/chain-fixture.ts';

const engines = stackEngines('ra');

describe.each(engines)('read access by wallet ($name)', (engine) => {
  let t: TestStack;
  /** READ_ONLY, bound to wallets[0] (the demo writable key's wallet). */
  let boundReader: StockClient;
  /** READ_ONLY, no wallet. */
  let unboundReader: StockClient;
  /** WRITABLE, bound to wallets[0] too, but records nothing here. */
  let sibling: StockClient;
  /** READ_ONLY, bound to wallets[1]. */
  let stranger: StockClient;

  const chainOf = (rpc: string, id: number) => ({ id, name: 'anvil', nativeCurrency: { name: 'ETH', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [rpc] } } });

  function walletOf(i: number) {
    const w = t.demo.wallets[i];
    const chain = chainOf(t.demo.rpcUrl, t.demo.chainId);
    return {
      wallet: testWallet(w.privateKey, chain, t.demo.rpcUrl),
      pub: createPublicClient({ chain, transport: http(t.demo.rpcUrl) }),
    };
  }

  async function send(i: number, calldata: { toAddress: Address; callData: Hex }): Promise<Hex> {
    const { wallet, pub } = walletOf(i);
    const hash = await wallet.sendTransaction({ to: calldata.toAddress, data: calldata.callData });
    expect((await pub.waitForTransactionReceipt({ hash })).status).toBe('success');
    return hash;
  }

  const deadline = () => Math.floor(Date.now() / 1000) + 3600;

  async function key(permission: 'READ_ONLY' | 'WRITABLE', wallet?: number): Promise<StockClient> {
    const { key, apiSecret } = await t.stack.keys.create({
      permission,
      ipWhitelist: ['127.0.0.1', '::1'],
      chainId: t.demo.chainId,
      product: 'STOCK',
      userAddress: wallet === undefined ? null : t.demo.wallets[wallet].address,
    });
    return t.client(key.apiKey, apiSecret);
  }

  const ids = (page: { rows: Array<Record<string, string>> }, field: string) => page.rows.map((r) => r[field]);

  /** The order the demo writable key places and records, the one placed but recorded by nobody, the deposit and the stock deposit. */
  let recorded: { orderId: string; txHash: Hex };
  let unrecorded: { orderId: string; txHash: Hex };
  let cashOp: string;
  let stockOp: string;

  let env: Record<string, string> = {};
  beforeAll(async () => {
    env = engine.env();
    t = await startTestStack({ EXECUTOR_TICK_MS: '200', INDEXER_POLL_MS: '100', ...env });
    expect(t.stack.db.dialect).toBe(engine.name);
    boundReader = await key('READ_ONLY', 0);
    unboundReader = await key('READ_ONLY');
    sibling = await key('WRITABLE', 0);
    stranger = await key('READ_ONLY', 1);
    const c = t.demo.stock.contracts;
    const { wallet, pub } = walletOf(0);
    for (const token of [c.cashToken, c.stocks.AAPL]) {
      await pub.waitForTransactionReceipt({ hash: await wallet.writeContract({ address: token, abi: erc20Abi, functionName: 'approve', args: [c.stockRouter, maxUint256] }) });
    }

    const dep = await t.writable.post<any>('/api/v1/cash/deposits/calldata', { tokenAddress: c.cashToken, tokenAmount: '100' });
    cashOp = (await t.writable.post<any>('/api/v1/cash/deposits/tx', { txHash: await send(0, dep) })).operationId;
    const sdep = await t.writable.post<any>('/api/v1/stock/deposits/calldata', { tokenAddress: c.stocks.AAPL, tokenAmount: '1' });
    stockOp = (await t.writable.post<any>('/api/v1/stock/deposits/tx', { txHash: await send(0, sdep) })).operationId;

    // A limit buy far below the market stays open, so it can be cancelled.
    const limit = { symbol: 'AAPL', side: 'Buy', type: 'Limit', quantity: '1', price: '1.5', timeInForce: 'DAY', deadline: deadline() };
    const txHash = await send(0, await t.writable.post<any>('/api/v1/orders/calldata', limit));
    recorded = { orderId: (await t.writable.post<any>('/api/v1/orders/tx', { txHash })).orderId, txHash };

    // Sent from the wallet but recorded by no key: the bound keys see it once indexed.
    const other = await send(0, await t.writable.post<any>('/api/v1/orders/calldata', { ...limit, price: '1.25' }));
    const listed = await until(() => boundReader.request<any[]>('GET', '/api/v1/orders/tx/' + other), (r) => r.code === 200);
    expect(listed.data).toHaveLength(1);
    unrecorded = { orderId: listed.data![0].orderId, txHash: other };
  });
  afterAll(async () => {
    await t?.stop();
    await engine.cleanup?.(env);
  });

  describe('a READ_ONLY key bound to the wallet', () => {
    it('sees the orders of its wallet, recorded by another key or by none', async () => {
      const list = await boundReader.get<any>('/api/v1/orders');
      expect(ids(list, 'orderId')).toEqual([unrecorded.orderId, recorded.orderId]);
      expect(list.total).toBe(2);
      const detail = await boundReader.get<any>(`/api/v1/orders/${recorded.orderId}`);
      expect(detail).toEqual(await t.writable.get<any>(`/api/v1/orders/${recorded.orderId}`));
      expect(detail).toMatchObject({ orderId: recorded.orderId, txHash: recorded.txHash, state: 'open' });
      expect((await boundReader.get<any[]>(`/api/v1/orders/tx/${recorded.txHash}`)).map((o) => o.orderId)).toEqual([recorded.orderId]);
      expect((await boundReader.get<any>(`/api/v1/orders/${unrecorded.orderId}`)).orderId).toBe(unrecorded.orderId);
      // The list filters still apply.
      expect((await boundReader.get<any>('/api/v1/orders', { state: 'history' })).total).toBe(0);
      expect((await boundReader.get<any>('/api/v1/orders', { symbol: 'TSLA' })).total).toBe(0);
    });

    it('sees its wallet\'s cash and stock operations in lists and details', async () => {
      expect(ids(await boundReader.get<any>('/api/v1/cash/deposits'), 'operationId')).toEqual([cashOp]);
      expect(await boundReader.get<any>(`/api/v1/cash/deposits/${cashOp}`)).toEqual(await t.writable.get<any>(`/api/v1/cash/deposits/${cashOp}`));
      expect(ids(await boundReader.get<any>('/api/v1/stock/deposits'), 'operationId')).toEqual([stockOp]);
      expect((await boundReader.get<any>(`/api/v1/stock/deposits/${stockOp}`)).operationId).toBe(stockOp);
      // A deposit is not a withdrawal, for the bound key as for the recorder.
      expect((await boundReader.request('GET', `/api/v1/cash/withdrawals/${cashOp}`)).httpStatus).toBe(404);
      expect((await boundReader.get<any>('/api/v1/cash/withdrawals')).total).toBe(0);
    });

    it('cannot cancel: the opaque authentication answer, as for any write', async () => {
      const r = await boundReader.request('DELETE', `/api/v1/orders/${recorded.orderId}/calldata`);
      expect(r).toMatchObject({ httpStatus: 400, code: 401, errMsg: 'Unauthorized' });
      // Nothing but the opaque answer (and the server's clock, on every answer).
      expect(Object.keys(r).sort()).toEqual(['code', 'errMsg', 'httpStatus', 't', 'uuid']);
    });
  });

  describe('cancel stays with the recording key', () => {
    it('refuses a WRITABLE key of the same wallet that did not record it, and serves the recorder', async () => {
      const r = await sibling.request('DELETE', `/api/v1/orders/${recorded.orderId}/calldata`);
      expect(r).toMatchObject({ httpStatus: 400, code: 400, errMsg: 'orderId: owned by another API key (the key that recorded the order cancels it)' });
      // Nobody recorded this one, so nobody may cancel it through the API.
      expect((await t.writable.request('DELETE', `/api/v1/orders/${unrecorded.orderId}/calldata`)).code).toBe(400);
      const cancel = await t.writable.delete<any>(`/api/v1/orders/${recorded.orderId}/calldata`);
      expect(cancel).toMatchObject({ toAddress: t.demo.stock.contracts.stockRouter, value: '0' });
      expect(cancel.callData).toMatch(/^0x[0-9a-f]+$/);
    });
  });

  describe('keys that may not read the records', () => {
    it.each([
      ['an unbound READ_ONLY key', () => unboundReader],
      ['a key bound to another wallet', () => stranger],
    ])('%s gets 404 for every id and empty lists', async (_name, client) => {
      const c = client();
      for (const path of [
        `/api/v1/orders/${recorded.orderId}`,
        `/api/v1/orders/${unrecorded.orderId}`,
        `/api/v1/orders/tx/${recorded.txHash}`,
        `/api/v1/orders/tx/${unrecorded.txHash}`,
        `/api/v1/cash/deposits/${cashOp}`,
        `/api/v1/stock/deposits/${stockOp}`,
      ]) {
        const r = await c.request('GET', path);
        expect(r, path).toMatchObject({ httpStatus: 404, code: 404 });
        expect(r, path).not.toHaveProperty('data');
      }
      for (const path of ['/api/v1/orders', '/api/v1/cash/deposits', '/api/v1/stock/deposits']) {
        expect(await c.get<any>(path), path).toEqual({ total: 0, rows: [] });
      }
    });
  });
});
