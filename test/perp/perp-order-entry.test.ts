/**
 * Order entry for trading firms over real HTTP with a real engine (journal on SQLite, or PostgreSQL
 * when DATABASE_URL is set): stop and take-profit orders (UNTRIGGERED, fired by the mark, the OCO of
 * closePosition triggers), batch orders (each answered on its own, in input order, journalled in one
 * commit), signed amendments, and orders read by id and by clientOrderId in any state; with the bad
 * input the issue lists, each with its code and nothing else changed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refused } from '../support/perp-refusal.ts';
import { newTrader, perpHarnessVariants, USD, type PerpHarness, type PerpTrader } from '../support/perp-api-harness.ts';
import { until } from '../support/poll.ts';

const AAPL = 'AAPL-USD';

type Trader = PerpTrader;

describe.each(perpHarnessVariants())('perp order entry over HTTP ($name)', (variant) => {
  let h: PerpHarness;
  let alice: Trader;
  let maker: Trader;

  const trader = (deposit: bigint): Promise<Trader> => newTrader(h, deposit);
  const hash = () => h.venue!.sequencer.engine.stateHash();
  const journalBatches = () => h.venue!.sequencer.stats.batches;

  beforeAll(async () => {
    h = await variant.start({ engine: true, limit: 10_000 });
    await h.venue!.mark(AAPL, 20_000);
    alice = await trader(10_000n * USD);
    maker = await trader(100_000n * USD);
  });
  afterAll(async () => {
    await h?.stop();
  });

  it('a stop-loss and a take-profit on one position: UNTRIGGERED until the mark reaches one, which closes the position and cancels the other', async () => {
    await maker.api.placeOrder(maker.wallet, { symbol: AAPL, side: 'SELL', type: 'LIMIT', size: '2', price: '200' });
    await alice.api.placeOrder(alice.wallet, { symbol: AAPL, side: 'BUY', type: 'MARKET', size: '2' });
    const sl = await alice.api.placeOrder(alice.wallet, { symbol: AAPL, side: 'SELL', type: 'STOP_MARKET', triggerPrice: '190', closePosition: true });
    const tp = await alice.api.placeOrder(alice.wallet, { symbol: AAPL, side: 'SELL', type: 'TAKE_PROFIT_MARKET', triggerPrice: '210', closePosition: true, clientOrderId: 'tp-1' });
    expect(sl).toMatchObject({ type: 'STOP_MARKET', status: 'UNTRIGGERED', triggerPrice: '190', triggerBy: 'MARK', triggeredAt: null, closePosition: true, reduceOnly: true, size: '0', fills: [] });
    const open = await alice.api.get<{ rows: Array<{ orderId: string; status: string; triggerPrice: string | null }> }>('orders/open');
    expect(open.rows.map((o) => [o.orderId, o.status, o.triggerPrice])).toEqual([
      [tp.orderId, 'UNTRIGGERED', '210'],
      [sl.orderId, 'UNTRIGGERED', '190'],
    ]);
    expect(await alice.api.get<any>(`orders/client/tp-1`)).toMatchObject({ orderId: tp.orderId, status: 'UNTRIGGERED' });

    await maker.api.placeOrder(maker.wallet, { symbol: AAPL, side: 'BUY', type: 'LIMIT', size: '5', price: '209' });
    await h.venue!.mark(AAPL, 21_000);
    await h.venue!.settled();
    const filled = await alice.api.get<any>(`orders/${tp.orderId}`);
    expect(filled).toMatchObject({ status: 'FILLED', size: '2', filledSize: '2', avgPrice: '209', triggerPrice: '210', closePosition: true });
    expect(typeof filled.triggeredAt).toBe('number');
    expect(await alice.api.get<any>(`orders/${sl.orderId}`)).toMatchObject({ status: 'CANCELED', reason: 'POSITION_CLOSED', triggeredAt: null });
    expect((await alice.api.get<{ total: number }>('positions')).total).toBe(0);
  });

  it('refuses a stop whose trigger is already crossed, a closePosition trigger with no position, and trigger fields on a plain order', async () => {
    const before = hash();
    // The mark is 210: a sell stop at 215 would fire at once.
    expect(await refused(alice.api.placeOrder(alice.wallet, { symbol: AAPL, side: 'SELL', type: 'STOP_MARKET', size: '1', triggerPrice: '215' }))).toMatchObject({ code: 51029 });
    expect(await refused(alice.api.placeOrder(alice.wallet, { symbol: AAPL, side: 'SELL', type: 'STOP_MARKET', triggerPrice: '200', closePosition: true }))).toMatchObject({ code: 51016 });
    const plain = await refused(alice.api.post('orders/build', { symbol: AAPL, side: 'BUY', type: 'LIMIT', size: '1', price: '200', triggerPrice: '199' }));
    expect(plain).toMatchObject({ code: 10000 });
    expect(plain.msg).toMatch(/triggerPrice: only a trigger order/);
    expect(hash()).toBe(before);
  });

  it('a batch answers each order in input order, a bad signature among good ones refused alone, in one journal commit', async () => {
    const signed = [];
    for (const price of ['230', '231', '232']) {
      const { message, signature } = await alice.api.signOrder(alice.wallet, { symbol: AAPL, side: 'SELL', type: 'LIMIT', size: '1', price });
      signed.push({ message, signature });
    }
    // Alice's order signed by another wallet: refused alone.
    const foreign = await alice.api.buildOrder({ symbol: AAPL, side: 'SELL', type: 'LIMIT', size: '1', price: '234' });
    const forged = { message: foreign.typedData.message, signature: await maker.wallet.signTypedData(foreign.typedData as never) };
    const batchesBefore = journalBatches();
    const r = await alice.api.post<{ results: Array<{ code: number; msg?: string; order?: any }> }>('orders/batch', {
      orders: [signed[0], forged, signed[1], signed[2]],
    });
    expect(r.results.map((x) => x.code)).toEqual([0, 51014, 0, 0]);
    expect(r.results[1].msg).toMatch(/not signed by the wallet/);
    expect(r.results.filter((x) => x.code === 0).map((x) => x.order.price)).toEqual(['230', '231', '232']);
    expect(journalBatches() - batchesBefore).toBe(1);
    // The same batch again: each order answered as placed before, nothing placed twice.
    const again = await alice.api.post<{ results: Array<{ code: number; order?: any }> }>('orders/batch', { orders: [signed[0], signed[1]] });
    expect(again.results.map((x) => [x.code, x.order?.orderId, x.order?.duplicate])).toEqual([
      [0, r.results[0].order.orderId, true],
      [0, r.results[2].order.orderId, true],
    ]);
  });

  it('a batch of 21 and an empty batch are refused whole; orders beyond free collateral are refused one by one in order', async () => {
    const { message, signature } = await alice.api.signOrder(alice.wallet, { symbol: AAPL, side: 'SELL', type: 'LIMIT', size: '1', price: '240' });
    const one = { message, signature };
    expect(await refused(alice.api.post('orders/batch', { orders: Array(21).fill(one) }))).toMatchObject({ code: 10000, httpStatus: 400 });
    expect(await refused(alice.api.post('orders/batch', { orders: [] }))).toMatchObject({ code: 10000 });
    const poor = await trader(1_000n * USD);
    // 10x: each 10-lot buy at 190 reserves about 190 USD of margin; 1,000 USD covers five.
    const orders = [];
    for (let i = 0; i < 8; i++) {
      const o = await poor.api.signOrder(poor.wallet, { symbol: AAPL, side: 'BUY', type: 'LIMIT', size: '10', price: '190' });
      orders.push({ message: o.message, signature: o.signature });
    }
    const r = await poor.api.post<{ results: Array<{ code: number }> }>('orders/batch', { orders });
    const codes = r.results.map((x) => x.code);
    const placed = codes.filter((c) => c === 0).length;
    expect(placed).toBeGreaterThan(0);
    expect(codes).toEqual([...Array(placed).fill(0), ...Array(8 - placed).fill(51001)]);
    const account = await poor.api.request<any>('GET', 'account');
    expect(account.data.freeCollateral.startsWith('-')).toBe(false);
  });

  it('amends: a smaller size keeps the order, a new price re-queues it; refused for another account, a filled order, outside the band, a stale signature', async () => {
    const o = await alice.api.placeOrder(alice.wallet, { symbol: AAPL, side: 'SELL', type: 'LIMIT', size: '5', price: '215' });
    const sign = async (who: Trader, input: Record<string, unknown>, wallet = who.wallet) => {
      const built = await who.api.post<{ typedData: any }>('orders/amend/build', input);
      return { message: built.typedData.message, signature: await wallet.signTypedData(built.typedData) };
    };
    const smaller = await alice.api.post<any>('orders/amend', await sign(alice, { orderId: o.orderId, size: '3' }));
    expect(smaller).toMatchObject({ orderId: o.orderId, size: '3', remainingSize: '3', price: '215', status: 'NEW' });
    const moved = await alice.api.post<any>('orders/amend', await sign(alice, { orderId: o.orderId, price: '216' }));
    expect(moved).toMatchObject({ orderId: o.orderId, size: '3', price: '216', status: 'NEW' });
    expect(h.venue!.sequencer.engine.depth(AAPL)!.asks).toContainEqual([21_600, 300]);

    const before = hash();
    expect(await refused(maker.api.post('orders/amend/build', { orderId: o.orderId, size: '4' }))).toMatchObject({ code: 40003 });
    // The band is 5 % around the mark 210: a sell below 199.5 is outside it.
    expect(await refused(alice.api.post('orders/amend', await sign(alice, { orderId: o.orderId, price: '150' })))).toMatchObject({ code: 51011 });
    const expiry = Date.now() + 1_500;
    const built = await alice.api.post<{ typedData: any }>('orders/amend/build', { orderId: o.orderId, size: '4', expiry });
    const stale = { message: built.typedData.message, signature: await alice.wallet.signTypedData(built.typedData) };
    // Time must pass for the signature to go stale (sending it sooner would amend the order): until
    // the clock the server reads is past its expiry, not a guessed margin.
    await until(async () => Date.now(), (now) => now > expiry + 1, 20_000);
    expect(await refused(alice.api.post('orders/amend', stale))).toMatchObject({ code: 51012 });
    expect(hash()).toBe(before);

    const take = await maker.api.placeOrder(maker.wallet, { symbol: AAPL, side: 'BUY', type: 'LIMIT', size: '3', price: '216' });
    expect(take.status).toBe('FILLED');
    expect(await refused(alice.api.post('orders/amend/build', { orderId: o.orderId, size: '4' }))).toMatchObject({ code: 40003 });
    await h.venue!.settled();
    expect(await alice.api.get<any>(`orders/${o.orderId}`)).toMatchObject({ status: 'FILLED', price: '216', size: '3' });
  });

  it('reads an order by id or clientOrderId right after it filled: FILLED at once, not missing while the history catches up', async () => {
    await maker.api.placeOrder(maker.wallet, { symbol: AAPL, side: 'SELL', type: 'LIMIT', size: '1', price: '212' });
    const taken = await alice.api.placeOrder(alice.wallet, { symbol: AAPL, side: 'BUY', type: 'MARKET', size: '1', clientOrderId: 'read-now' });
    expect(taken.status).toBe('FILLED');
    // No wait for the projector: the read waits for it itself.
    expect(await alice.api.get<any>(`orders/${taken.orderId}`)).toMatchObject({ orderId: taken.orderId, status: 'FILLED', filledSize: '1', avgPrice: '212' });
    expect(await alice.api.get<any>('orders/client/read-now')).toMatchObject({ orderId: taken.orderId, status: 'FILLED' });
    // Another account's, just done: still not found.
    expect(await refused(maker.api.get(`orders/${taken.orderId}`))).toMatchObject({ code: 40003 });
  });

  it('reads an order by id or clientOrderId in any state, only the caller\u2019s', async () => {
    const o = await alice.api.placeOrder(alice.wallet, { symbol: AAPL, side: 'SELL', type: 'LIMIT', size: '1', price: '260', clientOrderId: 'read-1' });
    expect(await alice.api.get<any>(`orders/${o.orderId}`)).toMatchObject({ orderId: o.orderId, status: 'NEW', clientOrderId: 'read-1' });
    await alice.api.delete(`orders/${o.orderId}`);
    await h.venue!.settled();
    expect(await alice.api.get<any>('orders/client/read-1')).toMatchObject({ orderId: o.orderId, status: 'CANCELED', reason: 'USER_CANCEL' });
    expect(await refused(maker.api.get(`orders/${o.orderId}`))).toMatchObject({ code: 40003, httpStatus: 404 });
    expect(await refused(maker.api.get('orders/client/read-1'))).toMatchObject({ code: 40003 });
    expect(await refused(alice.api.get('orders/99999999'))).toMatchObject({ code: 40003 });
  });
});
