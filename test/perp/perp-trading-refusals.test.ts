/**
 * Every refusal of the trading endpoints the issue lists, over real HTTP with a real engine behind
 * the API: each answers its documented code, and nothing changes (the engine's state hash is the
 * same before and after, and no order appears).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { perpDomain } from '../../src/perp/perp-key-service.ts';
import { orderType } from '../../src/perp/order-typed-data.ts';
import type { PerpClient, PlacedOrder } from '@tokex/sdk';
import { refused } from '../support/perp-refusal.ts';
import { HARNESS_CHAIN_ID, HARNESS_VAULT, perpHarnessVariants, USD, type PerpHarness } from '../support/perp-api-harness.ts';

const AAPL = 'AAPL-USD';

interface Trader {
  wallet: PrivateKeyAccount;
  api: PerpClient;
}

describe.each(perpHarnessVariants())('perp trading refusals ($name)', (variant) => {
  let h: PerpHarness;
  let maker: Trader;
  let bob: Trader;
  let poor: Trader;
  let reader: Trader;
  let restingAsk: PlacedOrder;
  const domain = perpDomain(HARNESS_CHAIN_ID, HARNESS_VAULT);
  let nonce = 1_000n;

  const trader = async (deposit: bigint, permissions: Array<'READ' | 'TRADE' | 'TRANSFER'> = ['READ', 'TRADE'], wallet = privateKeyToAccount(generatePrivateKey())): Promise<Trader> => {
    const { client } = await h.key({ userAddress: wallet.address, permissions });
    if (deposit > 0n) await h.venue!.deposit(wallet.address, deposit);
    return { wallet, api: client };
  };
  /** A signed order built here, so that a test can send what a client could send. */
  const signed = async (signer: PrivateKeyAccount, fields: Record<string, unknown>) => {
    const message = {
      symbol: AAPL, side: 'BUY', orderType: 'LIMIT', size: '1', price: '199', timeInForce: 'GTC', reduceOnly: false, clientOrderId: '',
      nonce: String(++nonce), expiry: String(Date.now() + 60_000), ...fields,
    };
    const typed = orderType.build(domain, message);
    return { message: typed.message, signature: await signer.signTypedData(typed as never) };
  };
  const state = () => h.venue!.sequencer.engine.stateHash();
  /** The envelope's `msg` alone, without the SDK's `perp API <code>:` and request id around it. */
  const msgOf = (r: { msg: string }) => r.msg.replace(/^perp API \d+: /, '').replace(/ \(requestId [^)]*\)$/, '');
  /** `call` is refused with `code`, and the engine's state is what it was. */
  const refusedUnchanged = async (call: () => Promise<unknown>, code: number, msg?: string) => {
    const before = state();
    const r = await refused(call());
    expect(r.code, r.msg).toBe(code);
    if (msg !== undefined) expect(r.msg).toContain(msg);
    expect(state()).toBe(before);
    return r;
  };

  beforeAll(async () => {
    h = await variant.start({ engine: true, limit: 10_000 });
    await h.venue!.mark(AAPL, 20_000);
    maker = await trader(100_000n * USD);
    bob = await trader(10_000n * USD);
    poor = await trader(100n * USD);
    reader = await trader(0n, ['READ']);
    restingAsk = await maker.api.placeOrder(maker.wallet, { symbol: AAPL, side: 'SELL', type: 'LIMIT', size: '6', price: '200.5' });
  });
  afterAll(async () => {
    await h?.stop();
  });

  it('a price off the tick: 51011, from the build and from a signed message', async () => {
    const r = await refusedUnchanged(() => bob.api.post('orders/build', { symbol: AAPL, side: 'BUY', type: 'LIMIT', size: '1', price: '199.001' }), 51011);
    expect(msgOf(r)).toBe('price: 199.001 is off the tick: not a multiple of the tick size 0.01');
    const signedOff = await refusedUnchanged(async () => bob.api.post('orders', await signed(bob.wallet, { account: bob.wallet.address, price: '199.005' })), 51011);
    expect(msgOf(signedOff)).toBe('price: 199.005 is off the tick: not a multiple of the tick size 0.01');
  });

  it('a limit price beyond the band around the mark: 51011 naming the edge and the band in prices', async () => {
    // The mark is 200 and the band ±5 %: buys up to 210, sells down to 190.
    const buy = await refusedUnchanged(() => bob.api.placeOrder(bob.wallet, { symbol: AAPL, side: 'BUY', type: 'LIMIT', size: '1', price: '210.01' }), 51011);
    expect(msgOf(buy)).toBe('price: 210.01 is above the price band: a BUY is accepted up to 210 (the band is 190 to 210, the mark 200 ± 5 %)');
    const sell = await refusedUnchanged(() => bob.api.placeOrder(bob.wallet, { symbol: AAPL, side: 'SELL', type: 'LIMIT', size: '1', price: '189.99' }), 51011);
    expect(msgOf(sell)).toBe('price: 189.99 is below the price band: a SELL is accepted down to 190 (the band is 190 to 210, the mark 200 ± 5 %)');
    // A passive price far from the mark is not beyond the band: it rests, as the README says.
    const passive = await bob.api.placeOrder<PlacedOrder>(bob.wallet, { symbol: AAPL, side: 'BUY', type: 'LIMIT', size: '1', price: '100' });
    expect(passive.status).toBe('NEW');
    await bob.api.delete(`orders/${passive.orderId}`);
  });

  it('a size off the lot or under the minimum: 51010', async () => {
    await refusedUnchanged(async () => bob.api.post('orders', await signed(bob.wallet, { account: bob.wallet.address, size: '1.005' })), 51010, 'lot size 0.01');
    // BTC-USD: at least 10 lots of 0.0001.
    await refusedUnchanged(() => bob.api.post('orders/build', { symbol: 'BTC-USD', side: 'BUY', type: 'LIMIT', size: '0.0005', price: '50000' }), 51010);
  });

  it('leverage above the maximum: 51009', async () => {
    await refusedUnchanged(() => bob.api.post('positions/adjust', { symbol: AAPL, leverage: 21 }), 51009);
  });

  it('too little free collateral: 51001', async () => {
    // 100 × 199 = 19 900 USD at 10× needs 1 990 of margin; the account holds 100.
    await refusedUnchanged(() => poor.api.placeOrder(poor.wallet, { symbol: AAPL, side: 'BUY', type: 'LIMIT', size: '100', price: '199' }), 51001);
  });

  it('a reduce-only order that would open or grow a position: 51004', async () => {
    await refusedUnchanged(() => bob.api.placeOrder(bob.wallet, { symbol: AAPL, side: 'SELL', type: 'LIMIT', size: '1', price: '250', reduceOnly: true }), 51004);
  });

  it('a POST_ONLY order that would cross: 51003', async () => {
    await refusedUnchanged(() => bob.api.placeOrder(bob.wallet, { symbol: AAPL, side: 'BUY', type: 'LIMIT', size: '1', price: '200.5', timeInForce: 'POST_ONLY' }), 51003);
  });

  it('a FOK that cannot fill whole: 51005', async () => {
    await refusedUnchanged(() => bob.api.placeOrder(bob.wallet, { symbol: AAPL, side: 'BUY', type: 'LIMIT', size: '7', price: '201', timeInForce: 'FOK' }), 51005);
  });

  it('an expired signed order: 51012', async () => {
    await refusedUnchanged(async () => bob.api.post('orders', await signed(bob.wallet, { account: bob.wallet.address, expiry: String(Date.now() - 1) })), 51012);
  });

  it('a signature of another wallet, or over an altered message: 51014', async () => {
    const mallory = privateKeyToAccount(generatePrivateKey());
    await refusedUnchanged(async () => bob.api.post('orders', await signed(mallory, { account: bob.wallet.address })), 51014);
    const good = await signed(bob.wallet, { account: bob.wallet.address });
    await refusedUnchanged(() => bob.api.post('orders', { ...good, message: { ...good.message, size: '2' } }), 51014);
  });

  it('a message for another account than the key\'s wallet: 10000', async () => {
    await refusedUnchanged(async () => bob.api.post('orders', await signed(maker.wallet, { account: maker.wallet.address })), 10000, 'message.account');
  });

  it('the same signed order twice is one order; another order with a used nonce: 51013', async () => {
    const order = await signed(bob.wallet, { account: bob.wallet.address, price: '150', nonce: '777' });
    const first = await bob.api.post<PlacedOrder>('orders', order);
    expect(first).toMatchObject({ status: 'NEW', duplicate: false });
    const again = await bob.api.post<PlacedOrder>('orders', order);
    expect(again).toMatchObject({ orderId: first.orderId, status: 'NEW', duplicate: true });
    expect((await bob.api.get<{ total: number }>('orders/open')).total).toBe(1);
    await refusedUnchanged(async () => bob.api.post('orders', await signed(bob.wallet, { account: bob.wallet.address, price: '151', nonce: '777' })), 51013);
    await bob.api.delete(`orders/${first.orderId}`);
  });

  it('a duplicate clientOrderId answers the first order and places no second', async () => {
    const first = await bob.api.placeOrder(bob.wallet, { symbol: AAPL, side: 'BUY', type: 'LIMIT', size: '1', price: '150', clientOrderId: 'my-order-1' });
    const before = state();
    const second = await bob.api.placeOrder(bob.wallet, { symbol: AAPL, side: 'BUY', type: 'LIMIT', size: '3', price: '140', clientOrderId: 'my-order-1' });
    expect(second).toMatchObject({ orderId: first.orderId, clientOrderId: 'my-order-1', price: '150', size: '1', duplicate: true });
    expect(state()).toBe(before);
    expect((await bob.api.get<{ total: number }>('orders/open')).total).toBe(1);
    await bob.api.delete(`orders/${first.orderId}`);
  });

  it("a cancel of another account's order: 40003, the order still open", async () => {
    await refusedUnchanged(() => bob.api.delete(`orders/${restingAsk.orderId}`), 40003);
    expect((await maker.api.get<{ rows: Array<{ orderId: string }> }>('orders/open')).rows.map((o) => o.orderId)).toContain(restingAsk.orderId);
  });

  it('removing more isolated margin than is free: 51001; without an isolated position: 51016', async () => {
    await refusedUnchanged(() => bob.api.post('positions/margin', { symbol: AAPL, amount: '-1' }), 51016);
    await bob.api.post('positions/adjust', { symbol: AAPL, leverage: 10, marginMode: 'isolated' });
    const buy = await bob.api.placeOrder(bob.wallet, { symbol: AAPL, side: 'BUY', type: 'MARKET', size: '2' });
    expect(buy.status).toBe('FILLED');
    const position = (await bob.api.get<{ rows: any[] }>('positions')).rows[0];
    // 2 × 200.50 × 10 % = 40.10 moved into the position.
    expect(position).toMatchObject({ marginMode: 'isolated', margin: '40.1', size: '2' });
    await refusedUnchanged(() => bob.api.post('positions/margin', { symbol: AAPL, amount: '-40' }), 51001);
    const added = await bob.api.post<any>('positions/margin', { symbol: AAPL, amount: '10' });
    expect(added.margin).toBe('50.1');
    // Removable: 50.10 − 1 (the loss at the mark) − 40 (IM at the mark) = 9.10.
    await refusedUnchanged(() => bob.api.post('positions/margin', { symbol: AAPL, amount: '-9.11' }), 51001, 'not enough free margin');
    const removed = await bob.api.post<any>('positions/margin', { symbol: AAPL, amount: '-9.1' });
    expect(removed.margin).toBe('41');
    await refusedUnchanged(() => bob.api.post('positions/margin', { symbol: AAPL, amount: '1.0000001' }), 10000, 'amount');
  });

  it('an unknown symbol: 40002', async () => {
    const r = await refusedUnchanged(() => bob.api.post('orders/build', { symbol: 'DOGE-USD', side: 'BUY', type: 'LIMIT', size: '1', price: '1' }), 40002);
    expect(msgOf(r)).toBe('symbol: "DOGE-USD" is not listed');
    await refusedUnchanged(async () => bob.api.post('orders', await signed(bob.wallet, { account: bob.wallet.address, symbol: 'DOGE-USD' })), 40002);
    await refusedUnchanged(() => bob.api.get('depth', { symbol: 'DOGE-USD' }), 40002);
    await refusedUnchanged(() => bob.api.get('positions', { symbol: 'DOGE-USD' }), 40002);
  });

  it('a READ key placing or cancelling: 403 with 30001', async () => {
    const order = await signed(reader.wallet, { account: reader.wallet.address });
    const r = await refusedUnchanged(() => reader.api.post('orders', order), 30001);
    expect(r.httpStatus).toBe(403);
    await refusedUnchanged(() => reader.api.delete(`orders/${restingAsk.orderId}`), 30001);
    await refusedUnchanged(() => reader.api.post('orders/batch-cancel', { symbol: AAPL }), 30001);
    await refusedUnchanged(() => reader.api.post('positions/adjust', { symbol: AAPL, leverage: 2 }), 30001);
  });

  it('malformed bodies: 10000 naming the field, nothing placed', async () => {
    await refusedUnchanged(() => bob.api.post('orders', { message: { account: bob.wallet.address }, signature: '0x' + '11'.repeat(65) }), 10000, 'message.symbol');
    await refusedUnchanged(() => bob.api.post('orders', { message: {}, signature: 'nope' }), 10000, 'signature');
    await refusedUnchanged(() => bob.api.post('orders/build', { symbol: AAPL, side: 'BUY', type: 'LIMIT', size: '-1', price: '1' }), 10000, 'size');
    await refusedUnchanged(() => bob.api.post('orders/build', { symbol: AAPL, side: 'BUY', type: 'LIMIT', size: '1' }), 10000, 'price');
    await refusedUnchanged(() => bob.api.post('orders/build', { symbol: AAPL, side: 'BUY', type: 'MARKET', size: '1', timeInForce: 'GTC' }), 10000, 'timeInForce');
  });
});
