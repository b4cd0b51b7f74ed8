/**
 * Trading on the perpetual venue over real HTTP, with a real engine behind the API (sequencer
 * journalling to SQLite, or PostgreSQL when DATABASE_URL is set, commands and events through their
 * broker form): signed orders placed, filled, cancelled and closed, exact fills, fees, positions and
 * balances, the history the projector writes; and every refusal the issue lists, each with its code
 * and nothing changed (the engine's state hash is the same before and after).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PrivateKeyAccount } from 'viem/accounts';
import { perpDomain } from '../../src/perp/perp-key-service.ts';
import { orderType } from '../../src/perp/order-typed-data.ts';
import type { PlacedOrder } from '@tokex/sdk';
import { refused } from '../support/perp-refusal.ts';
import { HARNESS_CHAIN_ID, HARNESS_VAULT, newTrader, perpHarnessVariants, USD, type PerpHarness, type PerpTrader } from '../support/perp-api-harness.ts';

const AAPL = 'AAPL-USD';

type Trader = PerpTrader;

describe.each(perpHarnessVariants())('perp trading over HTTP ($name)', (variant) => {
  let h: PerpHarness;
  let alice: Trader;
  let bob: Trader;
  let carol: Trader;
  const domain = perpDomain(HARNESS_CHAIN_ID, HARNESS_VAULT);

  const trader = (deposit: bigint, permissions?: Array<'READ' | 'TRADE' | 'TRANSFER'>): Promise<Trader> => newTrader(h, deposit, permissions);
  /** A message built and signed here (not by orders/build), to send what a client could send. */
  const signLocal = async (signer: PrivateKeyAccount, fields: Partial<Record<string, unknown>> & { account: string }) => {
    const message = {
      symbol: AAPL, side: 'BUY', orderType: 'LIMIT', size: '1', price: '199', timeInForce: 'GTC', reduceOnly: false, clientOrderId: '',
      nonce: String(BigInt(Date.now()) * 1000n + BigInt(Math.floor(Math.random() * 1000))), expiry: String(Date.now() + 60_000), ...fields,
    };
    const typed = orderType.build(domain, message);
    return { message: typed.message, signature: await signer.signTypedData(typed as never) };
  };
  const hash = () => h.venue!.sequencer.engine.stateHash();

  beforeAll(async () => {
    h = await variant.start({ engine: true, limit: 10_000 });
    await h.venue!.mark(AAPL, 20_000);
    alice = await trader(10_000n * USD);
    bob = await trader(10_000n * USD);
    carol = await trader(100n * USD);
  });
  afterAll(async () => {
    await h?.stop();
  });

  it('a resting limit order, a market order that fills part of it at its price, and the fees, positions and balances that follow', async () => {
    const ask = await alice.api.placeOrder(alice.wallet, { symbol: AAPL, side: 'SELL', type: 'LIMIT', size: '10', price: '200.5' });
    expect(ask).toMatchObject({ symbol: AAPL, side: 'SELL', type: 'LIMIT', timeInForce: 'GTC', status: 'NEW', size: '10', filledSize: '0', remainingSize: '10', price: '200.5', fills: [], duplicate: false });
    const open = await alice.api.get<{ total: number; rows: Array<{ orderId: string; price: string; status: string }> }>('orders/open');
    expect(open.total).toBe(1);
    expect(open.rows[0]).toMatchObject({ orderId: ask.orderId, price: '200.5', status: 'NEW' });

    const buy = await bob.api.placeOrder(bob.wallet, { symbol: AAPL, side: 'BUY', type: 'MARKET', size: '4' });
    // 4 × 200.50 = 802 USD; taker 0.05 % = 0.401, maker 0.02 % = 0.1604.
    expect(buy).toMatchObject({ status: 'FILLED', size: '4', filledSize: '4', remainingSize: '0', avgPrice: '200.5', fee: '0.401', timeInForce: 'IOC', price: null });
    expect(buy.fills).toEqual([expect.objectContaining({ price: '200.5', size: '4', fee: '0.401', notional: '802', role: 'TAKER', side: 'BUY', orderId: buy.orderId })]);

    const bobPositions = await bob.api.get<{ total: number; rows: any[] }>('positions');
    expect(bobPositions.total).toBe(1);
    expect(bobPositions.rows[0]).toMatchObject({ symbol: AAPL, side: 'LONG', size: '4', entryPrice: '200.5', markPrice: '200', notional: '800', unrealisedPnl: '-2', realisedPnl: '0', leverage: 10, marginMode: 'cross', margin: '80', maintenanceMargin: '20' });
    const alicePositions = await alice.api.get<{ rows: any[] }>('positions');
    expect(alicePositions.rows[0]).toMatchObject({ side: 'SHORT', size: '4', entryPrice: '200.5', unrealisedPnl: '2' });

    const account = await bob.api.request<any>('GET', 'account');
    expect(account.data).toMatchObject({ balance: '9999.599', equity: '9997.599', unrealisedPnl: '-2', deposited: '10000', fees: '0.401', positionMargin: '80', maintenanceMargin: '20', liquidatable: false });
    // free = 9 999.599 − 2 − 80 (IM at the mark).
    expect(account.data.freeCollateral).toBe('9917.599');
    expect(account.data.withdrawable).toBe('9917.599');

    await h.venue!.settled();
    const trades = await alice.api.get<{ total: number; rows: any[] }>('trades');
    expect(trades.total).toBe(1);
    expect(trades.rows[0]).toMatchObject({ orderId: ask.orderId, role: 'MAKER', side: 'SELL', price: '200.5', size: '4', fee: '0.1604', realisedPnl: '0' });
    const txs = await bob.api.get<{ total: number; rows: any[] }>('account/transactions');
    expect(txs.rows.map((t) => [t.type, t.amount])).toEqual([
      ['FEE', '-0.401'],
      ['DEPOSIT', '10000'],
    ]);
    const history = await alice.api.get<{ rows: any[] }>('orders/history');
    expect(history.rows[0]).toMatchObject({ orderId: ask.orderId, status: 'PARTIALLY_FILLED', filledSize: '4', remainingSize: '6', avgPrice: '200.5', fee: '0.1604' });
  });

  it('cancels an open order of the account; another account cannot', async () => {
    const order = await alice.api.placeOrder(alice.wallet, { symbol: AAPL, side: 'SELL', type: 'LIMIT', size: '1', price: '210' });
    const before = hash();
    expect(await refused(bob.api.delete(`orders/${order.orderId}`))).toMatchObject({ code: 40003, httpStatus: 404 });
    expect(await refused(bob.api.delete('orders/999999'))).toMatchObject({ code: 40003 });
    expect(hash()).toBe(before);
    const canceled = await alice.api.delete<any>(`orders/${order.orderId}`);
    expect(canceled).toMatchObject({ orderId: order.orderId, status: 'CANCELED', reason: 'USER_CANCEL', remainingSize: '0' });
    expect(await refused(alice.api.delete(`orders/${order.orderId}`))).toMatchObject({ code: 51007 });
    await h.venue!.settled();
    const history = await alice.api.get<{ rows: any[] }>('orders/history', { status: 'CANCELED' });
    expect(history.rows.map((o) => o.orderId)).toContain(order.orderId);
  });

  it('batch-cancels by ids (others reported, not cancelled) and all of a symbol', async () => {
    const a = await alice.api.placeOrder(alice.wallet, { symbol: AAPL, side: 'SELL', type: 'LIMIT', size: '1', price: '220' });
    const b = await alice.api.placeOrder(alice.wallet, { symbol: AAPL, side: 'SELL', type: 'LIMIT', size: '1', price: '221' });
    const c = await bob.api.placeOrder(bob.wallet, { symbol: AAPL, side: 'BUY', type: 'LIMIT', size: '1', price: '150' });
    const r = await alice.api.post<any>('orders/batch-cancel', { orderIds: [a.orderId, c.orderId, 'x1'] });
    expect(r.canceled).toEqual([a.orderId]);
    expect(r.failed).toEqual([
      { orderId: 'x1', code: 'ORDER_NOT_FOUND', msg: 'no such order for this account' },
      { orderId: c.orderId, code: 'ORDER_NOT_FOUND', msg: 'no such order for this account' },
    ]);
    const all = await alice.api.post<any>('orders/batch-cancel', { symbol: AAPL });
    expect(all.canceled).toContain(b.orderId);
    expect((await alice.api.get<any>('orders/open', { symbol: AAPL })).total).toBe(0);
    expect((await bob.api.get<any>('orders/open')).rows.map((o: any) => o.orderId)).toEqual([c.orderId]);
    await bob.api.delete(`orders/${c.orderId}`);
    expect(await refused(alice.api.post('orders/batch-cancel', {}))).toMatchObject({ code: 10000 });
  });

  it('orders/fill takes liquidity up to a worst price and rests nothing; positions/close closes with a reduce-only order', async () => {
    await alice.api.placeOrder(alice.wallet, { symbol: AAPL, side: 'SELL', type: 'LIMIT', size: '6', price: '200.5' });
    await alice.api.placeOrder(alice.wallet, { symbol: AAPL, side: 'SELL', type: 'LIMIT', size: '2', price: '201' });
    const fill = await (async () => {
      const { message, signature } = await bob.api.signOrder(bob.wallet, { symbol: AAPL, side: 'BUY', type: 'LIMIT', size: '5', price: '201', timeInForce: 'IOC' });
      return bob.api.post<PlacedOrder>('orders/fill', { message, signature });
    })();
    // 6 at 200.50, then 2 at 201: the 5 lots all fill at the better price; nothing rests.
    expect(fill).toMatchObject({ status: 'FILLED', filledSize: '5', avgPrice: '200.5' });
    const { message: gtc, signature: gtcSig } = await bob.api.signOrder(bob.wallet, { symbol: AAPL, side: 'BUY', type: 'LIMIT', size: '1', price: '190' });
    const notIoc = await refused(bob.api.post('orders/fill', { message: gtc, signature: gtcSig }));
    expect(notIoc).toMatchObject({ code: 10000 });
    expect(notIoc.msg).toContain('message.timeInForce: must be IOC or FOK for a fill');

    expect((await bob.api.get<{ rows: any[] }>('positions')).rows[0]).toMatchObject({ side: 'LONG', size: '9', entryPrice: '200.5' });
    await alice.api.placeOrder(alice.wallet, { symbol: AAPL, side: 'BUY', type: 'LIMIT', size: '10', price: '199' });
    const part = await bob.api.closePosition<PlacedOrder>(bob.wallet, { symbol: AAPL, size: '3' });
    // 3 sold at 199: 597 USD, the released entry cost 3/9 of 1 804.5 = 601.5, so −4.5 realised; fee 0.2985.
    expect(part).toMatchObject({ status: 'FILLED', side: 'SELL', filledSize: '3', avgPrice: '199', fee: '0.2985', reduceOnly: true });
    expect(part.fills).toEqual([expect.objectContaining({ realisedPnl: '-4.5' })]);
    expect((await bob.api.get<{ rows: any[] }>('positions')).rows[0]).toMatchObject({ side: 'LONG', size: '6', entryPrice: '200.5', realisedPnl: '-4.5' });
    const rest = await bob.api.closePosition<PlacedOrder>(bob.wallet, { symbol: AAPL });
    expect(rest).toMatchObject({ status: 'FILLED', filledSize: '6' });
    expect((await bob.api.get<{ total: number }>('positions')).total).toBe(0);
    const again = await bob.api.signOrder(bob.wallet, { symbol: AAPL, side: 'SELL', type: 'MARKET', size: '1', reduceOnly: true });
    expect(await refused(bob.api.post('positions/close', { message: again.message, signature: again.signature }))).toMatchObject({ code: 51016 });
    const notReduce = await bob.api.signOrder(bob.wallet, { symbol: AAPL, side: 'SELL', type: 'MARKET', size: '1' });
    const r = await refused(bob.api.post('positions/close', { message: notReduce.message, signature: notReduce.signature }));
    expect(r).toMatchObject({ code: 10000 });
    expect(r.msg).toContain('message.reduceOnly');
    await h.venue!.settled();
    const pnl = await bob.api.get<{ rows: any[] }>('account/transactions', { type: 'REALISED_PNL' });
    expect(pnl.rows.map((t) => t.amount)).toEqual(['-9', '-4.5']);
  });
});
