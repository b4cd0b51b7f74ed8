/**
 * A perp API whose engine runs apart reads a journal replica (perp-venue.ts `replicaVenue`). An
 * order placement is answered from the engine's reply without reading the replica (no journal read
 * on a placement's path); every request after it that reads (REST's GETs, a cancel, a stream
 * amendment) first waits until the replica holds every command this process answered, so it still
 * sees the order. The replica here polls once an hour: only those waits move it. (A cancel needs no
 * such wait: it sends an order the replica lacks to the engine, which owns the answer.)
 */
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PerpClient } from '@tokex/sdk';
import { perpDomain } from '../../src/perp/perp-key-service.ts';
import { amendOrderType } from '../../src/perp/order-typed-data.ts';
import { HARNESS_CHAIN_ID, HARNESS_VAULT, perpHarnessVariants, USD, type PerpHarness } from '../support/perp-api-harness.ts';
import type { StreamFrame } from '../support/ws-client.ts';
import { attachOrderStream, sendOrder, signedOrder, type OrderStream, type StreamKey } from './perp-ws-harness.ts';

const AAPL = 'AAPL-USD';

interface Trader extends StreamKey {
  wallet: PrivateKeyAccount;
  api: PerpClient;
}

describe.each(perpHarnessVariants())('a perp API reading a journal replica ($name)', (variant) => {
  let h: PerpHarness;
  let ws: OrderStream;
  let bob: Trader;
  const domain = perpDomain(HARNESS_CHAIN_ID, HARNESS_VAULT);
  let nonce = BigInt(Date.now()) * 1000n;

  const sign = (t: Trader, fields: Partial<Record<string, unknown>> = {}) => signedOrder(t.wallet, ++nonce, fields);
  /** Built here, not by POST orders/amend/build: that request would itself wait for the replica. */
  const signAmend = async (t: Trader, orderId: string, price: string) => {
    const typed = amendOrderType.build(domain, { account: t.wallet.address, orderId: BigInt(orderId), price, size: '', nonce: ++nonce, expiry: BigInt(Date.now() + 60_000) });
    return { message: typed.message as Record<string, unknown>, signature: await t.wallet.signTypedData(typed as never) };
  };
  const ok = (f: StreamFrame) => {
    expect(f, JSON.stringify(f)).toMatchObject({ type: 'result', code: 0, msg: 'ok' });
    return f.data as Record<string, string>;
  };
  const inReplica = (orderId: string) => h.replica!.engine().getOrder(Number(orderId));

  beforeAll(async () => {
    h = await variant.start({ engine: true, limit: 10_000, replicaPollMs: 3_600_000 });
    await h.venue!.mark(AAPL, 20_000);
    ws = await attachOrderStream(h);
    const wallet = privateKeyToAccount(generatePrivateKey());
    const { client, apiKey, apiSecret } = await h.key({ userAddress: wallet.address, permissions: ['READ', 'TRADE'] });
    await h.venue!.deposit(wallet.address, 10_000n * USD);
    bob = { wallet, api: client, apiKey, apiSecret };
  });
  afterAll(async () => {
    await ws?.stop();
    await h?.stop();
  });

  it('REST: an order and a batch are answered without reading the replica; the next GET waits until it holds them', async () => {
    const seq = h.replica!.journalSeq;
    const placed = await bob.api.submitOrder<Record<string, string>>(await sign(bob, { price: '140', clientOrderId: 'replica-1' }));
    expect(placed).toMatchObject({ status: 'NEW', price: '140', clientOrderId: 'replica-1', duplicate: false });
    const batch = await bob.api.request<{ results: Array<{ code: number; order: Record<string, string> }> }>('POST', 'orders/batch', {
      body: { orders: [await sign(bob, { price: '139' }), await sign(bob, { price: '138' })] },
    });
    expect(batch.data!.results.map((r) => [r.code, r.order.status, r.order.price])).toEqual([[0, 'NEW', '139'], [0, 'NEW', '138']]);
    expect(h.replica!.journalSeq).toBe(seq);
    expect(inReplica(placed.orderId)).toBeUndefined();

    const open = await bob.api.get<{ rows: Array<{ orderId: string; price: string }> }>('orders/open');
    expect(open.rows.map((o) => o.price).sort()).toEqual(['138', '139', '140']);
    expect(inReplica(placed.orderId)).toMatchObject({ priceTicks: 14_000, account: bob.wallet.address.toLowerCase() });
    expect(h.replica!.journalSeq).toBeGreaterThan(seq);
  });

  it('the stream: a place is answered without the replica; an amendment right after it waits for the replica and finds the order', async () => {
    const s = await ws.authed(bob);
    const placed = ok(await sendOrder(s, 'place', await sign(bob, { price: '141', size: '2' })));
    expect(placed).toMatchObject({ status: 'NEW', price: '141' });
    expect(inReplica(placed.orderId)).toBeUndefined();
    const amended = ok(await sendOrder(s, 'amend', await signAmend(bob, placed.orderId, '142')));
    expect(amended).toMatchObject({ orderId: placed.orderId, price: '142', size: '2', status: 'NEW' });
  });

  it('REST: a repeated placement, answered as the order stands, waits for the replica', async () => {
    const signed = await sign(bob, { price: '143' });
    const placed = await bob.api.submitOrder<Record<string, string>>(signed);
    expect(inReplica(placed.orderId)).toBeUndefined();
    const again = await bob.api.submitOrder<Record<string, string>>(signed);
    expect(again).toMatchObject({ orderId: placed.orderId, duplicate: true, status: 'NEW', price: '143' });
    expect(inReplica(placed.orderId)).toMatchObject({ priceTicks: 14_300 });
  });
});
