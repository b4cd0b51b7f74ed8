/**
 * The SDK's order entry for trading firms against a real engine behind the real perp API (journal on
 * SQLite, or PostgreSQL and Redis when DATABASE_URL / REDIS_URL are set): trigger orders through
 * `placeOrder`, `placeBatchOrders` / `submitBatchOrders`, `amendOrder` (`buildAmend`, `signAmend`,
 * `submitAmend`), `getOrder` / `getOrderByClientId`, and the checks made before anything is sent;
 * then the same calls over the private perp stream with `PerpStreamClient` (the stream endpoint wired
 * to the API's own order service and rate limit, as the perp-api role wires it).
 */
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PerpApiError, PerpClient, PerpStreamClient, StreamOrderError, TokexValidationError, type PlacedOrder } from '@tokex/sdk';
import { HARNESS_CHAIN_ID, perpHarnessVariants, USD, type PerpHarness } from '../support/perp-api-harness.ts';
import { attachOrderStream, type OrderStream } from '../perp/perp-ws-harness.ts';

const AAPL = 'AAPL-USD';

interface Trader {
  wallet: PrivateKeyAccount;
  api: PerpClient;
  apiKey: string;
  apiSecret: string;
  /** Every request this trader's client sent: `METHOD path`. */
  sent: string[];
}

/** What a promise rejected with (fails the test when it resolved). */
async function rejection(p: Promise<unknown>): Promise<any> {
  return p.then(
    (v) => {
      throw new Error(`expected a rejection, got ${JSON.stringify(v)}`);
    },
    (e: unknown) => e,
  );
}

describe.each(perpHarnessVariants())('SDK order entry against a real engine ($name)', (variant) => {
  let h: PerpHarness;
  let ws: OrderStream;
  let alice: Trader;
  let maker: Trader;
  const streams: PerpStreamClient[] = [];

  const trader = async (deposit: bigint, permissions: Array<'READ' | 'TRADE'> = ['READ', 'TRADE']): Promise<Trader> => {
    const wallet = privateKeyToAccount(generatePrivateKey());
    const { apiKey, apiSecret } = await h.key({ userAddress: wallet.address, permissions });
    if (deposit > 0n) await h.venue!.deposit(wallet.address, deposit);
    const sent: string[] = [];
    const counting: typeof fetch = (input, init) => {
      sent.push(`${init?.method ?? 'GET'} ${new URL(String(input)).pathname.replace('/v4/public/trader/', '')}`);
      return fetch(input, init);
    };
    return { wallet, apiKey, apiSecret, sent, api: new PerpClient({ baseUrl: h.baseUrl, apiKey, apiSecret, chainId: HARNESS_CHAIN_ID, fetch: counting }) };
  };
  const stream = (t: Pick<Trader, 'apiKey' | 'apiSecret'>, opts: { orderTimeoutMs?: number } = {}) => {
    const s = new PerpStreamClient({ url: ws.url, apiKey: t.apiKey, apiSecret: t.apiSecret, ...opts });
    streams.push(s);
    return s;
  };

  beforeAll(async () => {
    h = await variant.start({ engine: true, limit: 10_000 });
    await h.venue!.mark(AAPL, 20_000);
    ws = await attachOrderStream(h);
    alice = await trader(10_000n * USD);
    maker = await trader(100_000n * USD);
  });
  afterAll(async () => {
    await Promise.all(streams.map((s) => s.close()));
    await ws?.stop();
    await h?.stop();
  });

  it('trigger orders through placeOrder: UNTRIGGERED with their trigger fields, read back by id and by clientOrderId', async () => {
    await maker.api.placeOrder(maker.wallet, { symbol: AAPL, side: 'SELL', type: 'LIMIT', size: '2', price: '200' });
    expect((await alice.api.placeOrder(alice.wallet, { symbol: AAPL, side: 'BUY', type: 'MARKET', size: '2' })).status).toBe('FILLED');

    const sl = await alice.api.placeOrder(alice.wallet, { symbol: AAPL, side: 'SELL', type: 'STOP_MARKET', triggerPrice: '190', closePosition: true, clientOrderId: 'sdk-sl' });
    expect(sl).toMatchObject({ type: 'STOP_MARKET', status: 'UNTRIGGERED', triggerPrice: '190', triggerBy: 'MARK', triggeredAt: null, closePosition: true, reduceOnly: true, size: '0', fills: [] });
    const tp = await alice.api.placeOrder(alice.wallet, {
      symbol: AAPL, side: 'SELL', type: 'TAKE_PROFIT_LIMIT', size: '1', price: '209.5', triggerPrice: '210', triggerBy: 'LAST', reduceOnly: true,
    });
    expect(tp).toMatchObject({ type: 'TAKE_PROFIT_LIMIT', status: 'UNTRIGGERED', price: '209.5', triggerPrice: '210', triggerBy: 'LAST', closePosition: false, size: '1' });

    const byId = await alice.api.getOrder(sl.orderId);
    expect(byId).toMatchObject({ orderId: sl.orderId, clientOrderId: 'sdk-sl', status: 'UNTRIGGERED', triggerPrice: '190', closePosition: true, liquidation: false });
    expect(await alice.api.getOrderByClientId('sdk-sl')).toEqual(byId);
    const missing = await rejection(alice.api.getOrder('99999999'));
    expect(missing).toBeInstanceOf(PerpApiError);
    expect(missing.code).toBe(40003);
    // Another account's order is not found either.
    expect((await rejection(maker.api.getOrderByClientId('sdk-sl'))).code).toBe(40003);

    // A trigger that has not fired cannot be amended: its trigger is part of what was signed.
    expect((await rejection(alice.api.amendOrder(alice.wallet, { orderId: tp.orderId, size: '0.5' }))).code).toBe(51031);

    await alice.api.batchCancel({ symbol: AAPL });
    await h.venue!.settled();
    expect((await alice.api.getOrder(sl.orderId)).status).toBe('CANCELED');
  });

  it('refuses, before anything but the instruments is read, trigger orders the venue would refuse for their shape', async () => {
    const before = alice.sent.length;
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ type: 'STOP_MARKET', size: '1', triggerPrice: '190.005' }, 'triggerPrice'],
      [{ type: 'STOP_MARKET', size: '1' }, 'triggerPrice'],
      [{ type: 'STOP_MARKET', size: '1', triggerPrice: '190', triggerBy: 'INDEX' }, 'triggerBy'],
      [{ type: 'STOP_LIMIT', size: '1', triggerPrice: '190' }, 'price'],
      [{ type: 'TAKE_PROFIT_LIMIT', size: '1', price: '209.999', triggerPrice: '210' }, 'price'],
      [{ type: 'STOP_MARKET', size: '1', triggerPrice: '190', closePosition: true }, 'size'],
      [{ type: 'STOP_MARKET', size: '', triggerPrice: '190', closePosition: true }, 'size'],
      [{ type: 'LIMIT', size: '1', price: '190', triggerPrice: '189' }, 'triggerPrice'],
      [{ type: 'LIMIT', size: '1', price: '190', closePosition: true }, 'closePosition'],
      [{ type: 'STOP_MARKET', size: '1', triggerPrice: '190', timeInForce: 'GTC' }, 'timeInForce'],
      [{ type: 'STOP_MARKET', size: '1', triggerPrice: '0' }, 'triggerPrice'],
    ];
    for (const [fields, field] of cases) {
      const err = await rejection(alice.api.placeOrder(alice.wallet, { symbol: AAPL, side: 'SELL', ...fields } as never));
      expect(err, JSON.stringify(fields)).toBeInstanceOf(TokexValidationError);
      expect(err.field, JSON.stringify(fields)).toBe(field);
    }
    expect(alice.sent.slice(before).filter((r) => r !== 'GET instruments')).toEqual([]);
  });

  it('placeBatchOrders signs each order and places them in one batch, answered in input order; a bad order stops it before the batch is sent', async () => {
    const start = alice.sent.length;
    const r = await alice.api.placeBatchOrders(alice.wallet, [
      { symbol: AAPL, side: 'SELL', type: 'LIMIT', size: '1', price: '230' },
      { symbol: AAPL, side: 'SELL', type: 'LIMIT', size: '1', price: '231', clientOrderId: 'sdk-batch-2' },
      { symbol: AAPL, side: 'BUY', type: 'STOP_MARKET', size: '1', triggerPrice: '250' },
    ]);
    expect(r.results.map((x) => [x.code, x.order?.status, x.order?.price ?? null])).toEqual([
      [0, 'NEW', '230'],
      [0, 'NEW', '231'],
      [0, 'UNTRIGGERED', null],
    ]);
    expect(alice.sent.slice(start).filter((s) => s.startsWith('POST'))).toEqual(['POST orders/build', 'POST orders/build', 'POST orders/build', 'POST orders/batch']);
    expect((await alice.api.getOrderByClientId('sdk-batch-2')).orderId).toBe(r.results[1].order!.orderId);

    const before = alice.sent.length;
    const bad = await rejection(
      alice.api.placeBatchOrders(alice.wallet, [
        { symbol: AAPL, side: 'SELL', type: 'LIMIT', size: '1', price: '232' },
        { symbol: AAPL, side: 'SELL', type: 'LIMIT', size: '1', price: '232.001' },
      ]),
    );
    expect(bad).toBeInstanceOf(TokexValidationError);
    expect(bad.field).toBe('orders[1].price');
    expect((await rejection(alice.api.placeBatchOrders(alice.wallet, []))).field).toBe('orders');
    const one = { symbol: AAPL, side: 'SELL' as const, type: 'LIMIT' as const, size: '1', price: '233' };
    expect((await rejection(alice.api.placeBatchOrders(alice.wallet, Array(21).fill(one)))).message).toBe('orders: must hold 1 to 20 signed orders, not 21');
    expect(alice.sent.slice(before).filter((s) => s === 'POST orders/batch')).toEqual([]);
    await alice.api.batchCancel({ symbol: AAPL });
  });

  it('submitBatchOrders takes signOrder\u2019s answers as they are, and the same batch again answers each order as placed before', async () => {
    const a = await alice.api.signOrder(alice.wallet, { symbol: AAPL, side: 'SELL', type: 'LIMIT', size: '1', price: '235' });
    const b = await alice.api.signOrder(alice.wallet, { symbol: AAPL, side: 'SELL', type: 'LIMIT', size: '1', price: '236' });
    // A signature over another wallet's order, refused alone.
    const foreign = await alice.api.buildOrder({ symbol: AAPL, side: 'SELL', type: 'LIMIT', size: '1', price: '237' });
    const forged = { message: foreign.typedData.message, signature: await maker.wallet.signTypedData(foreign.typedData as never) };
    const first = await alice.api.submitBatchOrders([a, forged, b]);
    expect(first.results.map((x) => x.code)).toEqual([0, 51014, 0]);
    expect(first.results[1].msg).toMatch(/not signed by the wallet/);
    const again = await alice.api.submitBatchOrders([a, b]);
    expect(again.results.map((x) => [x.code, x.order?.orderId, x.order?.duplicate])).toEqual([
      [0, first.results[0].order!.orderId, true],
      [0, first.results[2].order!.orderId, true],
    ]);
    await alice.api.batchCancel({ symbol: AAPL });
  });

  it('amendOrder: a smaller size keeps the order, a new price moves it; a signed amendment sent twice is applied once; checks before sending', async () => {
    const o = await alice.api.placeOrder(alice.wallet, { symbol: AAPL, side: 'SELL', type: 'LIMIT', size: '5', price: '215' });
    const smaller = await alice.api.amendOrder(alice.wallet, { orderId: o.orderId, size: '3' });
    expect(smaller).toMatchObject({ orderId: o.orderId, size: '3', remainingSize: '3', price: '215', status: 'NEW', duplicate: false });

    const signed = await alice.api.signAmend(alice.wallet, { orderId: o.orderId, price: '216' });
    expect(signed.amendHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(signed.message).toMatchObject({ orderId: o.orderId, price: '216', size: '' });
    const moved = await alice.api.submitAmend(signed);
    expect(moved).toMatchObject({ orderId: o.orderId, size: '3', price: '216', status: 'NEW', duplicate: false });
    const twice = await alice.api.submitAmend(signed);
    expect(twice).toMatchObject({ orderId: o.orderId, price: '216', duplicate: true });
    expect(h.venue!.sequencer.engine.depth(AAPL)!.asks).toContainEqual([21_600, 300]);

    const before = alice.sent.length;
    for (const [input, field] of [
      [{ orderId: o.orderId }, 'price'],
      [{ orderId: 'x', size: '1' }, 'orderId'],
      [{ orderId: o.orderId, size: '-1' }, 'size'],
      [{ orderId: o.orderId, price: '0' }, 'price'],
    ] as const) {
      const err = await rejection(alice.api.amendOrder(alice.wallet, input as never));
      expect(err, JSON.stringify(input)).toBeInstanceOf(TokexValidationError);
      expect(err.field).toBe(field);
    }
    expect(alice.sent.slice(before)).toEqual([]);
    // The server's own checks: the band (5 % around the mark 200), another account's order.
    expect((await rejection(alice.api.amendOrder(alice.wallet, { orderId: o.orderId, price: '150' }))).code).toBe(51011);
    expect((await rejection(maker.api.buildAmend({ orderId: o.orderId, size: '1' }))).code).toBe(40003);

    await alice.api.cancelOrder(o.orderId);
    await h.venue!.settled();
    expect(await alice.api.getOrder(o.orderId)).toMatchObject({ status: 'CANCELED', price: '216', size: '3' });
  });

  describe('over the stream (PerpStreamClient)', () => {
    it('place, batch, amend and cancel answer exactly what REST answers', async () => {
      const s = stream(alice);
      const placed = await s.placeOrder(await alice.api.signOrder(alice.wallet, { symbol: AAPL, side: 'SELL', type: 'LIMIT', size: '2', price: '240', clientOrderId: 'sdk-ws-1' }));
      expect(placed).toMatchObject({ status: 'NEW', price: '240', size: '2', clientOrderId: 'sdk-ws-1', duplicate: false, fills: [] });
      expect((await alice.api.getOrderByClientId('sdk-ws-1')).orderId).toBe(placed.orderId);

      const batch = await s.placeBatch([
        await alice.api.signOrder(alice.wallet, { symbol: AAPL, side: 'SELL', type: 'LIMIT', size: '1', price: '241' }),
        await alice.api.signOrder(alice.wallet, { symbol: AAPL, side: 'BUY', type: 'STOP_LIMIT', size: '1', price: '251', triggerPrice: '250' }),
      ]);
      expect(batch.results.map((r) => [r.code, r.order?.status])).toEqual([
        [0, 'NEW'],
        [0, 'UNTRIGGERED'],
      ]);

      const amended = await s.amendOrder(await alice.api.signAmend(alice.wallet, { orderId: placed.orderId, size: '1' }));
      expect(amended).toMatchObject({ orderId: placed.orderId, size: '1', remainingSize: '1', price: '240', status: 'NEW' });

      const canceled = await s.cancelOrder(placed.orderId, { idempotencyKey: 'sdk-ws-cancel-1' });
      expect(canceled).toMatchObject({ orderId: placed.orderId, status: 'CANCELED', reason: 'USER_CANCEL' });
      // The same key answers the first cancel, over the stream and over REST alike, at once: the retry
      // answers the order from the history once it holds the cancel, so never the pre-amend size.
      expect(await s.cancelOrder(placed.orderId, { idempotencyKey: 'sdk-ws-cancel-1' })).toEqual(canceled);
      expect(await alice.api.cancelOrder(placed.orderId, { idempotencyKey: 'sdk-ws-cancel-1' })).toEqual(canceled);

      // A refusal: the code and words REST answers for the same call.
      const rest = await rejection(alice.api.cancelOrder(placed.orderId, { retries: 0 }));
      const over = await rejection(s.cancelOrder(placed.orderId));
      expect(over).toBeInstanceOf(StreamOrderError);
      expect([over.code, over.msg, over.sent, over.action]).toEqual([rest.code, rest.msg, true, 'cancel']);
      await alice.api.batchCancel({ symbol: AAPL });
    });

    it('a body the route refuses is 10000 naming the field; a key without TRADE 30001; a refused auth rejects with its code, nothing sent', async () => {
      const s = stream(alice);
      const bad = await rejection(s.sendOrder('place', { message: {}, signature: 'nope' }));
      expect(bad).toBeInstanceOf(StreamOrderError);
      expect(bad.code).toBe(10000);
      expect(bad.data.field).toEqual(expect.stringContaining('signature'));

      const reader = await trader(0n, ['READ']);
      const ro = await rejection(stream(reader).placeOrder(await alice.api.signOrder(alice.wallet, { symbol: AAPL, side: 'SELL', type: 'LIMIT', size: '1', price: '245' })));
      expect([ro.code, ro.sent]).toEqual([30001, true]);

      const wrong = await rejection(stream({ apiKey: alice.apiKey, apiSecret: 'not-the-secret' }).cancelOrder('1'));
      expect(wrong).toBeInstanceOf(StreamOrderError);
      expect(wrong.code).toBeGreaterThanOrEqual(20001);
      expect(wrong.code).toBeLessThanOrEqual(20008);
      expect(wrong.sent).toBe(false);
      expect(wrong.message).not.toContain('not-the-secret');
    });

    it('orders sent at once are applied and answered in the order they were sent, each matched to its own call', async () => {
      const s = stream(alice);
      const signed = [];
      for (const price of ['260', '261', '262', '263']) signed.push(await alice.api.signOrder(alice.wallet, { symbol: AAPL, side: 'SELL', type: 'LIMIT', size: '1', price }));
      const answers: PlacedOrder[] = await Promise.all(signed.map((o) => s.placeOrder(o)));
      expect(answers.map((a) => a.price)).toEqual(['260', '261', '262', '263']);
      const ids = answers.map((a) => BigInt(a.orderId));
      expect([...ids].sort((x, y) => (x < y ? -1 : 1))).toEqual(ids);
      await alice.api.batchCancel({ symbol: AAPL });
    });
  });
});
