/**
 * Issue 42's "done": the Monday Trade client (./monday-client.ts, written from the public summary,
 * no venue SDK) against the whole embedded stack as `npm start` runs it (anvil, the margin vault,
 * the engine, the demo market maker), changed only in its base URL and chain id: demo wallet 0
 * (collateral deposited through the vault at deployment) creates a key with the text message,
 * enables One-Click Trade for the venue's delegate, reads instruments and funding history, opens a
 * position with a market order against the demo market maker's book, and leaves a limit order
 * resting.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import type { Hex } from 'viem';
import { until } from '../../support/poll.ts';
import { startTestStack, type TestStack } from '../../support/stock-stack.ts';
import { keyCreationMessage, MondayClient, SIDE_LONG } from './monday-client.ts';

describe('Monday Trade client against the embedded stack', () => {
  let t: TestStack;
  let wallet: PrivateKeyAccount;
  let api: MondayClient;

  beforeAll(async () => {
    t = await startTestStack({ PERP_RATE_LIMIT_PER_MIN: '6000' });
    wallet = privateKeyToAccount(t.demo.wallets[0].privateKey as Hex);
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('creates a key from the five-line message and enables One-Click Trade for the venue\'s delegate', async () => {
    const anon = new MondayClient({ baseUrl: t.perpBaseUrl!, chainId: t.demo.chainId });
    const address = wallet.address.toLowerCase();
    const nonce = `stack${Date.now()}`;
    const timestamp = String(Date.now());
    const signature = await wallet.signMessage({ message: keyCreationMessage(t.demo.chainId, address, nonce, timestamp) });
    const created = await anon.createApiKey({ chainID: t.demo.chainId, address, signature, nonce, timestamp });
    api = anon.withCredentials(created);

    const { typedData } = await api.call<{ typedData: any }>({ method: 'POST', path: 'one-click/prepare', body: JSON.stringify({ delegate: 'venue', expiresAt: Date.now() + 3_600_000 }) });
    const { EIP712Domain: _omit, ...types } = typedData.types;
    const m = typedData.message;
    const sig = await wallet.signTypedData({ domain: typedData.domain, types, primaryType: typedData.primaryType, message: { ...m, expiresAt: BigInt(m.expiresAt), nonce: BigInt(m.nonce) } });
    const status = await api.call<any>({ method: 'POST', path: 'one-click/enable', body: JSON.stringify({ message: m, signature: sig }) });
    expect(status).toMatchObject({ enabled: true, sessionAddress: m.session, expiresAt: Number(m.expiresAt) });
  });

  it('reads instruments and funding history in Monday\'s shape', async () => {
    const instruments = await api.getInstruments();
    expect(instruments.map((i) => i.instrument)).toEqual(expect.arrayContaining(['BTC/USDC', 'ETH/USDC']));
    const btc = instruments.find((i) => i.instrument === 'BTC/USDC');
    expect(btc).toMatchObject({ symbol: 'BTC-USD', expiry: 4294967295, tickSize: '0.1' });
    const funding = await api.getFundingHistory('BTC/USDC');
    expect(Array.isArray(funding)).toBe(true);
    for (const row of funding) {
      expect(row).toEqual({ timestamp: expect.any(Number), long: expect.any(String), short: expect.any(String) });
      expect(Number(row.long)).toBe(-Number(row.short));
    }
  });

  it('a market order opens a position against the demo book; a limit order below it rests', async () => {
    const book = await until(
      () => api.call<{ bids: string[][]; asks: string[][] }>({ method: 'GET', path: 'depth?symbol=BTC-USD' }),
      (d) => d.bids.length >= 1 && d.asks.length >= 1,
      60_000,
    );
    await until(() => api.call<any[]>({ method: 'GET', path: 'tickers?symbol=BTC-USD' }), (r) => r[0]?.markPrice !== null, 60_000);
    const bought = await api.placeMarketOrder({ instrument: 'BTC/USDC', size: '0.001', side: SIDE_LONG, leverage: '5', slippageBps: 100 });
    expect(bought).toMatchObject({ instrument: 'BTC/USDC', side: 'BUY', type: 'MARKET', status: 'FILLED', filledSize: '0.001', txHash: null });
    const positions = await api.call<{ rows: any[] }>({ method: 'GET', path: 'positions?symbol=BTC-USD' });
    expect(positions.rows).toEqual([expect.objectContaining({ symbol: 'BTC-USD', side: 'LONG', size: '0.001', leverage: 5 })]);

    // 2 % under the best bid, on the tick: below the book, inside the band.
    const bestBid = Number(book.bids[0][0]);
    const price = (Math.floor(bestBid * 0.98 * 10) / 10).toFixed(1);
    const resting = await api.placeLimitOrder({ instrument: 'BTC/USDC', size: '0.001', price, side: SIDE_LONG, leverage: '5' });
    expect(resting).toMatchObject({ status: 'NEW', price: String(Number(price)), remainingSize: '0.001', txHash: null });
    const open = await api.call<{ rows: any[] }>({ method: 'GET', path: 'orders/open?symbol=BTC-USD' });
    expect(open.rows.map((o) => o.orderId)).toContain(resting.orderId);
  });
});
