/**
 * Weighted rate limits of the perpetual API (docs/perp-api.md "Rate limits"): a request carrying
 * n orders or ids weighs requestWeight(n) = 1 + ⌊n / 10⌋ units of its key's budget, every other
 * request 1, and the X-RateLimit headers count units. Order messages over the stream spend the same
 * key budget with the same weights (one store: the API's own checker, Redis-backed in the +redis
 * variants), and past it both answer 42900.
 */
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PerpClient } from '@tokex/sdk';
import { requestWeight } from '@tokex/contract';
import { perpDomain } from '../../src/perp/perp-key-service.ts';
import { orderType } from '../../src/perp/order-typed-data.ts';
import { HARNESS_CHAIN_ID, HARNESS_VAULT, perpHarnessVariants, USD, type PerpHarness } from '../support/perp-api-harness.ts';
import { attachOrderStream, sendOrder, type OrderStream, type StreamKey } from './perp-ws-harness.ts';

const AAPL = 'AAPL-USD';
const LIMIT = 60;

interface Trader extends StreamKey {
  wallet: PrivateKeyAccount;
  api: PerpClient;
}

describe.each(perpHarnessVariants())('perp rate-limit weights ($name)', (variant) => {
  let h: PerpHarness;
  let ws: OrderStream;
  const domain = perpDomain(HARNESS_CHAIN_ID, HARNESS_VAULT);
  let nonce = BigInt(Date.now()) * 1000n;

  const trader = async (): Promise<Trader> => {
    const wallet = privateKeyToAccount(generatePrivateKey());
    const { client, apiKey, apiSecret } = await h.key({ userAddress: wallet.address, permissions: ['READ', 'TRADE'] });
    await h.venue!.deposit(wallet.address, 100_000n * USD);
    return { wallet, api: client, apiKey, apiSecret };
  };
  const sign = async (t: Trader, price: string) => {
    const message = {
      account: t.wallet.address, symbol: AAPL, side: 'BUY', orderType: 'LIMIT', size: '1', price, timeInForce: 'GTC', reduceOnly: false, clientOrderId: '',
      nonce: String(++nonce), expiry: String(Date.now() + 60_000),
    };
    const typed = orderType.build(domain, message);
    return { message: typed.message as Record<string, unknown>, signature: await t.wallet.signTypedData(typed as never) };
  };
  const signMany = (t: Trader, n: number) => Promise.all(Array.from({ length: n }, (_, i) => sign(t, String(100 + i))));
  const ids = (n: number) => Array.from({ length: n }, (_, i) => String(900_000 + i));
  /** Units left in the key's window, as the answer's headers say (the request itself weighing `weight`). */
  const remaining = async (t: Trader, method: string, path: string, body?: unknown) => {
    const r = await t.api.request(method, path, body === undefined ? {} : { body });
    expect(r.rateLimit, `${method} ${path}`).toBeDefined();
    expect(r.rateLimit!.limit).toBe(LIMIT);
    return { left: r.rateLimit!.remaining, code: r.code, data: r.data as any };
  };

  beforeAll(async () => {
    h = await variant.start({ engine: true, limit: LIMIT });
    await h.venue!.mark(AAPL, 20_000);
    ws = await attachOrderStream(h);
  });
  afterAll(async () => {
    await ws?.stop();
    await h?.stop();
  });

  it('the documented weights: an order 1, a batch of 20 orders 3, a batch cancel of 100 ids 11, by symbol 1', async () => {
    expect([1, 9, 10, 20, 100].map(requestWeight)).toEqual([1, 1, 2, 3, 11]);
    const t = await trader();
    const start = await remaining(t, 'GET', 'account');
    expect(start.left).toBe(LIMIT - 1);

    const single = await remaining(t, 'POST', 'orders', await sign(t, '150'));
    expect(single).toMatchObject({ code: 0, left: start.left - 1 });

    const batch = await remaining(t, 'POST', 'orders/batch', { orders: await signMany(t, 20) });
    expect(batch.code).toBe(0);
    expect(batch.data.results.every((r: { code: number }) => r.code === 0)).toBe(true);
    expect(batch.left).toBe(single.left - 3);

    const byIds = await remaining(t, 'POST', 'orders/batch-cancel', { orderIds: ids(100) });
    expect(byIds.code).toBe(0);
    expect(byIds.left).toBe(batch.left - 11);

    const bySymbol = await remaining(t, 'POST', 'orders/batch-cancel', { symbol: AAPL });
    expect(bySymbol.code).toBe(0);
    expect(bySymbol.data.canceled).toHaveLength(21);
    expect(bySymbol.left).toBe(byIds.left - 1);

    // A body its schema refuses weighs what it carries, at most as the longest allowed list.
    const tooLong = await remaining(t, 'POST', 'orders/batch-cancel', { orderIds: ids(500) });
    expect(tooLong).toMatchObject({ code: 10000, left: bySymbol.left - requestWeight(100) });
    const notJson = await t.api.request('POST', 'orders/batch', { body: '{"orders": [' });
    expect(notJson).toMatchObject({ code: 10000, rateLimit: { remaining: tooLong.left - 1 } });
  });

  it('stream order messages spend the same key budget as REST, with the same weights', async () => {
    const t = await trader();
    const s = await ws.authed(t);
    const before = await remaining(t, 'GET', 'account');
    // A cancel of an order that does not exist: refused, and counted, as over REST.
    expect(await sendOrder(s, 'cancel', { orderId: '999999' })).toMatchObject({ code: 40003 });
    const afterCancel = await remaining(t, 'GET', 'account');
    expect(afterCancel.left).toBe(before.left - 2);

    const batch = await sendOrder(s, 'batch', { orders: await signMany(t, 12) });
    expect(batch).toMatchObject({ code: 0 });
    const afterBatch = await remaining(t, 'GET', 'account');
    expect(afterBatch.left).toBe(afterCancel.left - requestWeight(12) - 1);

    expect(await sendOrder(s, 'place', await sign(t, '150'))).toMatchObject({ code: 0 });
    expect((await remaining(t, 'GET', 'account')).left).toBe(afterBatch.left - 2);
  });

  it('past the budget: RATE_LIMITED results (with retryAfter) in arrival order, then REST 429 too; the connection stays', async () => {
    const t = await trader();
    const s = await ws.authed(t);
    // 5 × 11 units over REST: 5 left.
    for (let i = 0; i < 5; i++) await remaining(t, 'POST', 'orders/batch-cancel', { orderIds: ids(100) });
    const frames = Array.from({ length: 8 }, (_, i) => ({ op: 'order', id: `f${i}`, action: 'cancel', body: { orderId: '999999' } }));
    for (const f of frames) s.send(f);
    const results = await Promise.all(frames.map((f) => s.next((r) => r.type === 'result' && r.id === f.id)));
    expect(results.map((r) => r.code)).toEqual([40003, 40003, 40003, 40003, 40003, 42900, 42900, 42900]);
    expect(results[5]).toMatchObject({ msg: 'Too many requests', data: { retryAfter: expect.any(Number) } });
    expect(results[5].data.retryAfter).toBeGreaterThanOrEqual(1);
    expect(results[5].data.retryAfter).toBeLessThanOrEqual(60);

    const rest = await t.api.request('GET', 'account');
    expect(rest).toMatchObject({ httpStatus: 429, code: 42900, rateLimit: { remaining: 0 } });
    s.send({ op: 'ping', id: 'alive' });
    await s.next((f) => f.type === 'pong' && f.id === 'alive');
    // Another key's budget is its own.
    const other = await trader();
    expect(await sendOrder(await ws.authed(other), 'cancel', { orderId: '999999' })).toMatchObject({ code: 40003 });
  });
});
