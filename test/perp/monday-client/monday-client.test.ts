/**
 * Issue 42: a client written for Monday Trade's trader API (./monday-client.ts, from the summary in
 * /work/shared/spec/monday-reference.md only, no venue SDK) against the perpetual API over real
 * HTTP with a real engine behind it (sequencer journalling to SQLite, or PostgreSQL when
 * DATABASE_URL is set): key creation by a personal-sign text message, instruments, funding history,
 * a market order that opens a position, a limit order that rests; and every bad input of the issue,
 * each refused with the documented envelope and nothing traded.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { HARNESS_CHAIN_ID, perpHarnessVariants, type PerpHarness } from '../../support/perp-api-harness.ts';
import { keyCreationMessage, MondayApiError, MondayClient, PERPETUAL_EXPIRY, SIDE_LONG, SIDE_SHORT, signature, sortedBody } from './monday-client.ts';

const USD = 1_000_000n;
const BTC = 'BTC-USD';
const MINUTE = 60_000;

interface Trader {
  wallet: PrivateKeyAccount;
  api: MondayClient;
}

async function refusal(p: Promise<unknown>): Promise<MondayApiError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof MondayApiError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}

describe.each(perpHarnessVariants())('Monday Trade client against the perpetual API ($name)', (variant) => {
  let h: PerpHarness;
  // The server's and the clients' clock: real time plus an offset the last test moves forward.
  let offset = 0;
  const now = () => Date.now() + offset;
  let anon: MondayClient;
  let alice: Trader;
  let bob: Trader;
  let nonceSeq = 0;
  const hash = () => h.venue!.sequencer.engine.stateHash();

  /** The key-creation body of §2.4, signed by `signer` over `message` (the client's own by default). */
  const keyBody = async (wallet: PrivateKeyAccount, o: { signer?: PrivateKeyAccount; nonce?: string; timestamp?: number; message?: string } = {}) => {
    const address = wallet.address.toLowerCase();
    const nonce = o.nonce ?? `n${Date.now()}x${++nonceSeq}`;
    const timestamp = o.timestamp ?? now();
    const message = o.message ?? keyCreationMessage(HARNESS_CHAIN_ID, address, nonce, timestamp);
    const sig = await (o.signer ?? wallet).signMessage({ message });
    return { chainID: HARNESS_CHAIN_ID, address, signature: sig, nonce, timestamp: String(timestamp) };
  };

  const newTrader = async (deposit: bigint): Promise<Trader> => {
    const wallet = privateKeyToAccount(generatePrivateKey());
    const creds = await anon.createApiKey(await keyBody(wallet));
    if (deposit > 0n) await h.venue!.deposit(wallet.address, deposit);
    return { wallet, api: anon.withCredentials(creds) };
  };

  /** One-Click Trade for the venue's delegate, through the existing flow (prepare, wallet signs, enable). */
  const enableVenueDelegate = async (t: Trader, expiresAt: number) => {
    const { typedData } = await t.api.call<{ typedData: any }>({ method: 'POST', path: 'one-click/prepare', body: JSON.stringify({ delegate: 'venue', expiresAt }) });
    const m = typedData.message;
    const { EIP712Domain: _omit, ...types } = typedData.types;
    const sig = await t.wallet.signTypedData({
      domain: typedData.domain,
      types,
      primaryType: typedData.primaryType,
      message: { ...m, expiresAt: BigInt(m.expiresAt), nonce: BigInt(m.nonce) },
    });
    return t.api.call<any>({ method: 'POST', path: 'one-click/enable', body: JSON.stringify({ message: m, signature: sig }) });
  };

  beforeAll(async () => {
    h = await variant.start({ engine: true, limit: 120, now });
    await h.venue!.mark(BTC, 500_000);
    anon = new MondayClient({ baseUrl: `${h.baseUrl}`, chainId: HARNESS_CHAIN_ID, now });
    alice = await newTrader(100_000n * USD);
    bob = await newTrader(100_000n * USD);
    await enableVenueDelegate(alice, now() + 60 * MINUTE);
    await enableVenueDelegate(bob, now() + 60 * MINUTE);
  });
  afterAll(async () => {
    await h?.stop();
  });

  describe('key creation by the five-line text message', () => {
    it('answers apiKey and apiSecret once; the key has READ and TRADE, never TRANSFER; the venue\'s own name in line 5 is accepted too', async () => {
      const wallet = privateKeyToAccount(generatePrivateKey());
      const created = await anon.createApiKey(await keyBody(wallet));
      expect(created.apiKey).toMatch(/^.{8,}$/);
      expect(created.apiSecret).toMatch(/^.{16,}$/);
      const api = anon.withCredentials(created);
      const keys = await api.call<any[]>({ method: 'GET', path: 'api-keys' });
      expect(keys).toEqual([expect.objectContaining({ apiKey: created.apiKey, permissions: ['READ', 'TRADE'], label: 'api-key/create' })]);
      expect(JSON.stringify(keys)).not.toContain(created.apiSecret);
      // TRANSFER endpoints are refused for it.
      const w = await refusal(api.call({ method: 'POST', path: 'liquidity/add', body: JSON.stringify({ amount: '1' }) }));
      expect(w).toMatchObject({ httpStatus: 403, code: 30001 });

      const nonce = `own${Date.now()}`;
      const ts = now();
      const own = keyCreationMessage(HARNESS_CHAIN_ID, wallet.address.toLowerCase(), nonce, ts).replace('with Monday Trade API.', 'with Tokex API.');
      const second = await anon.createApiKey(await keyBody(wallet, { nonce, timestamp: ts, message: own }));
      expect(second.apiKey).not.toBe(created.apiKey);
    });

    it('refuses a message with one line changed, another wallet\'s signature, a timestamp 60 s old, a nonce used twice', async () => {
      const wallet = privateKeyToAccount(generatePrivateKey());
      const other = privateKeyToAccount(generatePrivateKey());
      const address = wallet.address.toLowerCase();

      const nonce = `c${Date.now()}`;
      const ts = now();
      const changed = keyCreationMessage(HARNESS_CHAIN_ID, address, nonce, ts).replace(`Nonce: ${nonce}`, `Nonce: ${nonce}0`);
      const lineChanged = await refusal(anon.createApiKey(await keyBody(wallet, { nonce, timestamp: ts, message: changed })));
      expect(lineChanged).toMatchObject({ httpStatus: 400, code: 10000 });
      expect(lineChanged.msg).toContain('signature: is not the personal-sign signature of the five-line key-creation message');

      const product = keyCreationMessage(HARNESS_CHAIN_ID, address, nonce, ts).replace('Monday Trade API.', 'Monday Trade API!');
      expect(await refusal(anon.createApiKey(await keyBody(wallet, { nonce, timestamp: ts, message: product })))).toMatchObject({ httpStatus: 400, code: 10000 });

      const foreign = await refusal(anon.createApiKey(await keyBody(wallet, { signer: other })));
      expect(foreign).toMatchObject({ httpStatus: 400, code: 10000 });
      expect(foreign.msg).toContain('signature');

      const stale = await refusal(anon.createApiKey(await keyBody(wallet, { timestamp: now() - 60_000 })));
      expect(stale).toMatchObject({ httpStatus: 400, code: 10000 });
      expect(stale.msg).toContain('timestamp: is outside the 45 s window');

      const wrongChain = await refusal(anon.createApiKey({ ...(await keyBody(wallet)), chainID: 143 }));
      expect(wrongChain).toMatchObject({ httpStatus: 400, code: 10000 });
      expect(wrongChain.msg).toContain(`chainID: must be ${HARNESS_CHAIN_ID}`);

      const once = await keyBody(wallet);
      await anon.createApiKey(once);
      const twice = await refusal(anon.createApiKey(once));
      expect(twice).toMatchObject({ httpStatus: 400, code: 10002 });
      expect(twice.msg).toContain('nonce: this signed key creation was already used');
      // Only the one key was created by the wallet's valid messages.
      expect((await h.keys.list({ api: 'perp', userAddress: address })).length).toBe(1);
    });
  });

  describe('market data', () => {
    it('instruments are named BASE/USDC with the venue\'s fields; ?symbol narrows; an unknown name lists the listed ones', async () => {
      const all = await alice.api.getInstruments();
      const names = all.map((i) => i.instrument);
      expect(names).toContain('BTC/USDC');
      expect(names).toContain('ETH/USDC');
      const btc = await alice.api.getInstruments('BTC/USDC');
      expect(btc).toEqual([
        expect.objectContaining({ instrument: 'BTC/USDC', expiry: PERPETUAL_EXPIRY, symbol: BTC, base: 'BTC', quote: 'USD', tickSize: '0.1', lotSize: '0.0001', maxLeverage: '50', fundingInterval: 3_600_000 }),
      ]);
      const unknown = await refusal(alice.api.getInstruments('DOGE/USDC'));
      expect(unknown).toMatchObject({ httpStatus: 404, code: 40002 });
      expect(unknown.msg).toContain('"DOGE/USDC" is not listed; listed: ');
      expect(unknown.msg).toContain('BTC/USDC');
    });

    it('funding history answers {timestamp, long, short}, long positive when longs pay', async () => {
      const at = 3_600_000 * 490_000;
      const r = await h.venue!.gateway.submit({ kind: 'applyFunding', id: `funding:${BTC}:monday-test`, ts: at, symbol: BTC, rateE9: 125_000n });
      expect(r.ok).toBe(true);
      await h.venue!.settled();
      expect(await alice.api.getFundingHistory('BTC/USDC')).toEqual([{ timestamp: at, long: '0.000125', short: '-0.000125' }]);
      const wrongChain = await refusal(alice.api.call({ method: 'GET', path: 'market/funding/history?chainId=143&symbol=BTC%2FUSDC' }));
      expect(wrongChain).toMatchObject({ httpStatus: 400, code: 10000 });
      expect(wrongChain.msg).toContain(`chainId: must be ${HARNESS_CHAIN_ID}`);
      const unknown = await refusal(alice.api.call({ method: 'GET', path: `market/funding/history?chainId=${HARNESS_CHAIN_ID}&symbol=MON%2FUSDC` }));
      expect(unknown).toMatchObject({ httpStatus: 404, code: 40002 });
      expect(unknown.msg).toContain('listed: ');
    });
  });

  describe('orders', () => {
    let ask: any;
    let bought: any;

    it('a limit order rests: numeric side 1 is a short, the answer is the venue\'s order with txHash null', async () => {
      ask = await bob.api.placeLimitOrder({ instrument: 'BTC/USDC', size: '1', price: '50010', side: SIDE_SHORT, leverage: '5' });
      expect(ask).toMatchObject({ instrument: 'BTC/USDC', symbol: BTC, side: 'SELL', type: 'LIMIT', timeInForce: 'GTC', status: 'NEW', price: '50010', size: '1', remainingSize: '1', filledSize: '0', fills: [], txHash: null });
      expect(ask.orderId).toMatch(/^[0-9]+$/);
      const open = await bob.api.call<{ total: number; rows: any[] }>({ method: 'GET', path: 'orders/open?symbol=BTC-USD' });
      expect(open.rows.map((o) => o.orderId)).toEqual([ask.orderId]);
      const book = await bob.api.call<any>({ method: 'GET', path: 'depth?symbol=BTC-USD' });
      expect(book.asks).toEqual([['50010', '1']]);
    });

    it('a market order (side 2, leverage 5, slippage 10 bps) fills against it and opens a long at the account\'s new leverage', async () => {
      const buy = await alice.api.placeMarketOrder({ instrument: 'BTC/USDC', size: '0.5', side: SIDE_LONG, leverage: '5', slippageBps: 10, referralCode: 'ABC' });
      bought = buy;
      // 0.5 × 50 010 = 25 005; taker 0.05 % = 12.5025.
      expect(buy).toMatchObject({ instrument: 'BTC/USDC', side: 'BUY', type: 'MARKET', status: 'FILLED', filledSize: '0.5', avgPrice: '50010', fee: '12.5025', txHash: null, duplicate: false });
      // The worst price: the mark 50 000 + 10 bps.
      expect(buy.price).toBe('50050');
      expect(buy.fills).toEqual([expect.objectContaining({ price: '50010', size: '0.5', role: 'TAKER', side: 'BUY' })]);
      const positions = await alice.api.call<{ total: number; rows: any[] }>({ method: 'GET', path: 'positions' });
      expect(positions.rows).toEqual([expect.objectContaining({ symbol: BTC, side: 'LONG', size: '0.5', entryPrice: '50010', leverage: 5 })]);
      const rest = await bob.api.call<any>({ method: 'GET', path: `orders/${ask.orderId}` });
      expect(rest).toMatchObject({ status: 'PARTIALLY_FILLED', remainingSize: '0.5' });
    });

    it("Monday-shaped orders are the venue's orders: both in orders/history, as the venue's own API lists them", async () => {
      // History is written by the projector: wait until it holds every durable event.
      await h.venue!.settled();
      const bobs = await bob.api.call<{ total: number; rows: any[] }>({ method: 'GET', path: 'orders/history?symbol=BTC-USD' });
      expect(bobs.rows).toEqual([
        expect.objectContaining({ orderId: ask.orderId, symbol: BTC, side: 'SELL', type: 'LIMIT', timeInForce: 'GTC', price: '50010', size: '1', filledSize: '0.5', status: 'PARTIALLY_FILLED' }),
      ]);
      const alices = await alice.api.call<{ total: number; rows: any[] }>({ method: 'GET', path: 'orders/history?symbol=BTC-USD' });
      expect(alices.rows).toEqual([expect.objectContaining({ orderId: bought.orderId, symbol: BTC, side: 'BUY', type: 'MARKET', size: '0.5', filledSize: '0.5', avgPrice: '50010', status: 'FILLED' })]);
    });

    it('slippage bounds the fill: with nothing within 10 bps of the mark, the venue\'s own refusal and nothing changes', async () => {
      // The only bid is none and the ask 50 010 is beyond a short's floor: no liquidity.
      const before = hash();
      const sell = await refusal(alice.api.placeMarketOrder({ instrument: 'BTC/USDC', size: '0.1', side: SIDE_SHORT, leverage: '5' }));
      expect(sell).toMatchObject({ httpStatus: 400, code: 51006, msg: 'no resting liquidity within the worst price and the price band' });
      expect(hash()).toBe(before);
    });

    it('an Idempotency-Key makes a retry the same order', async () => {
      const body = JSON.stringify({ instrument: 'BTC/USDC', expiry: PERPETUAL_EXPIRY, size: '0.01', price: '40000', side: SIDE_LONG, leverage: '5' });
      const first = await alice.api.call<any>({ method: 'POST', path: 'order/limit', body, headers: { 'Idempotency-Key': 'monday-retry-1' } });
      const again = await alice.api.call<any>({ method: 'POST', path: 'order/limit', body, headers: { 'Idempotency-Key': 'monday-retry-1' } });
      expect(again.orderId).toBe(first.orderId);
      expect(again.duplicate).toBe(true);
      const open = await alice.api.call<{ rows: any[] }>({ method: 'GET', path: 'orders/open' });
      expect(open.rows.filter((o) => o.price === '40000').length).toBe(1);

      // A market order retried after the mark moved: its worst price is the first request's, so the
      // retry is answered from the journal and nothing fills twice.
      const market = JSON.stringify({ instrument: 'BTC/USDC', expiry: PERPETUAL_EXPIRY, size: '0.01', side: SIDE_LONG, leverage: '5', slippageBps: 10 });
      const bought = await alice.api.call<any>({ method: 'POST', path: 'order/market', body: market, headers: { 'Idempotency-Key': 'monday-retry-2' } });
      expect(bought).toMatchObject({ status: 'FILLED', filledSize: '0.01', price: '50050', duplicate: false });
      await h.venue!.mark(BTC, 500_200);
      const retried = await alice.api.call<any>({ method: 'POST', path: 'order/market', body: market, headers: { 'Idempotency-Key': 'monday-retry-2' } });
      expect(retried).toMatchObject({ orderId: bought.orderId, filledSize: '0.01', duplicate: true });
      const other = await refusal(
        alice.api.call({ method: 'POST', path: 'order/market', body: market.replace('"0.01"', '"0.02"'), headers: { 'Idempotency-Key': 'monday-retry-2' } }),
      );
      expect(other).toMatchObject({ httpStatus: 400, code: 10002 });
      await h.venue!.mark(BTC, 500_000);
      const positions = await alice.api.call<{ rows: any[] }>({ method: 'GET', path: 'positions' });
      expect(positions.rows[0]).toMatchObject({ size: '0.51' });
    });

    it('postOnly that would take is refused by the venue\'s own rule; markPriceBufferInBps guards the limit price', async () => {
      const before = hash();
      const cross = await refusal(alice.api.placeLimitOrder({ instrument: 'BTC/USDC', size: '0.1', price: '50010', side: SIDE_LONG, leverage: '5', postOnly: true }));
      expect(cross).toMatchObject({ httpStatus: 400, code: 51003 });
      const far = await refusal(alice.api.placeLimitOrder({ instrument: 'BTC/USDC', size: '0.1', price: '50100', side: SIDE_LONG, leverage: '5', markPriceBufferInBps: 10 }));
      expect(far).toMatchObject({ httpStatus: 400, code: 51011 });
      expect(far.msg).toContain('markPriceBufferInBps');
      expect(hash()).toBe(before);
    });
  });

  describe('body signing', () => {
    const limitBody = { instrument: 'BTC/USDC', expiry: PERPETUAL_EXPIRY, size: '0.01', price: '30000', side: SIDE_LONG, leverage: '5' };

    it('accepts the raw body signed as sent as well as the sorted form; a sorted-form signature cannot be replayed', async () => {
      const raw = JSON.stringify(limitBody);
      const asSent = await alice.api.call<any>({ method: 'POST', path: 'order/limit', body: raw, signedBody: raw });
      expect(asSent).toMatchObject({ status: 'NEW', price: '30000' });

      const ts = String(now());
      const path = '/v4/public/trader/order/limit';
      const creds = (alice.api as any).opts.credentials as { apiKey: string; apiSecret: string };
      const headers = {
        'X-Api-Key': creds.apiKey,
        'X-Api-Ts': ts,
        'X-Chain-Id': String(HARNESS_CHAIN_ID),
        'X-Api-Sign': signature(creds.apiSecret, ts, 'POST', path, sortedBody(raw)),
      };
      const first = await alice.api.raw({ method: 'POST', path: 'order/limit', body: raw, headers });
      expect(first.status).toBe(200);
      const replay = await alice.api.raw({ method: 'POST', path: 'order/limit', body: raw, headers });
      expect(replay.status).toBe(401);
      expect(replay.body).toMatchObject({ code: 20007, data: {} });
    });

    it('refuses a body signed sorted but sent with an extra key, and a body signed unsorted but sent sorted', async () => {
      const before = hash();
      const signedPart = JSON.stringify(limitBody);
      const extra = await alice.api.raw({ method: 'POST', path: 'order/limit', body: JSON.stringify({ ...limitBody, postOnly: true }), signedBody: sortedBody(signedPart) });
      expect(extra.status).toBe(401);
      expect(extra.body).toMatchObject({ code: 20006 });

      const unsorted = JSON.stringify(limitBody);
      const sorted = sortedBody(unsorted);
      expect(sorted).not.toBe(unsorted);
      const swapped = await alice.api.raw({ method: 'POST', path: 'order/limit', body: sorted, signedBody: unsorted });
      expect(swapped.status).toBe(401);
      expect(swapped.body).toMatchObject({ code: 20006 });
      expect(hash()).toBe(before);
    });

    it('refuses an X-Chain-Id other than the venue\'s with the documented envelope', async () => {
      const r = await alice.api.raw({ method: 'GET', path: 'market/instruments', headers: { 'X-Chain-Id': '143' } });
      expect(r.status).toBe(401);
      expect(r.body).toMatchObject({ code: 20008, data: {} });
      expect(r.body.msg).toContain('X-Chain-Id is missing or not the chain of this service');
      expect(r.body.requestId).toEqual(expect.any(String));
    });
  });

  describe('bad orders', () => {
    const order = (o: Record<string, unknown>) => JSON.stringify({ instrument: 'BTC/USDC', expiry: PERPETUAL_EXPIRY, size: '0.01', price: '45000', side: SIDE_LONG, leverage: '5', ...o });

    it('expiry 0, side 3, size "-1" and an unlisted instrument are refused with a clear message; nothing changes', async () => {
      const before = hash();
      const expiry = await refusal(alice.api.call({ method: 'POST', path: 'order/limit', body: order({ expiry: 0 }) }));
      expect(expiry).toMatchObject({ httpStatus: 400, code: 10000 });
      expect(expiry.msg).toBe(`expiry: must be ${PERPETUAL_EXPIRY} (perpetual): the venue lists perpetuals only`);
      const side = await refusal(alice.api.call({ method: 'POST', path: 'order/market', body: order({ side: 3, price: undefined, slippageBps: 10 }) }));
      expect(side).toMatchObject({ httpStatus: 400, code: 10000 });
      expect(side.msg).toBe('side: must be 1 (short) or 2 (long)');
      const size = await refusal(alice.api.call({ method: 'POST', path: 'order/limit', body: order({ size: '-1' }) }));
      expect(size).toMatchObject({ httpStatus: 400, code: 10000 });
      expect(size.msg).toBe('size: must be a decimal string like "12.5" (no sign, exponent or spaces)');
      const unknown = await refusal(alice.api.call({ method: 'POST', path: 'order/limit', body: order({ instrument: 'MON/USDC' }) }));
      expect(unknown).toMatchObject({ httpStatus: 404, code: 40002 });
      expect(unknown.msg).toMatch(/^instrument: "MON\/USDC" is not listed; listed: .*BTC\/USDC/);
      expect(hash()).toBe(before);
    });

    it('an HMAC-only order from a key whose wallet has not enabled One-Click Trade is refused', async () => {
      const carol = await newTrader(10_000n * USD);
      const before = hash();
      const r = await refusal(carol.api.placeLimitOrder({ instrument: 'BTC/USDC', size: '0.01', price: '45000', side: SIDE_LONG, leverage: '5' }));
      expect(r).toMatchObject({ httpStatus: 400, code: 51015 });
      expect(r.msg).toContain('one-click/prepare {"delegate":"venue"');
      expect(hash()).toBe(before);
    });

    it('121 requests in a minute: the 121st is 429', async () => {
      const dave = await newTrader(0n);
      // Each request its own millisecond: an identical signature inside the window is a replay.
      let last = 0;
      const tick = () => (last = Math.max(now(), last + 1));
      const daveApi = new MondayClient({ baseUrl: h.baseUrl, chainId: HARNESS_CHAIN_ID, now: tick, credentials: (dave.api as any).opts.credentials });
      const answers: number[] = [];
      for (let batch = 0; batch < 12; batch++) {
        const rs = await Promise.all(Array.from({ length: 10 }, () => daveApi.raw({ method: 'GET', path: 'market/instruments?symbol=BTC%2FUSDC' })));
        answers.push(...rs.map((r) => r.status));
      }
      expect(answers.filter((s) => s === 200).length).toBe(120);
      const over = await daveApi.raw({ method: 'GET', path: 'market/instruments' });
      expect(over.status).toBe(429);
      expect(over.body).toMatchObject({ code: 42900 });
      expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    });

    it('after disable, and after the delegation\'s signed expiry, HMAC-only orders are refused; enabling again works at once', async () => {
      const erin = await newTrader(10_000n * USD);
      await enableVenueDelegate(erin, now() + 2 * MINUTE);
      const placed = await erin.api.placeLimitOrder({ instrument: 'BTC/USDC', size: '0.01', price: '45000', side: SIDE_LONG, leverage: '5' });
      expect(placed.status).toBe('NEW');

      await erin.api.call({ method: 'POST', path: 'one-click/disable' , body: '{}' });
      const disabled = await refusal(erin.api.placeLimitOrder({ instrument: 'BTC/USDC', size: '0.01', price: '45000', side: SIDE_LONG, leverage: '5' }));
      expect(disabled).toMatchObject({ httpStatus: 400, code: 51015 });
      expect(disabled.msg).toContain('expired or was disabled');

      // The venue's delegate signs nothing outside: it may be enabled again at once.
      const status = await enableVenueDelegate(erin, now() + 2 * MINUTE);
      expect(status.enabled).toBe(true);
      expect((await erin.api.placeLimitOrder({ instrument: 'BTC/USDC', size: '0.01', price: '45000', side: SIDE_LONG, leverage: '5' })).status).toBe('NEW');

      offset += 2 * MINUTE + 1_000;
      const before = hash();
      const expired = await refusal(erin.api.placeLimitOrder({ instrument: 'BTC/USDC', size: '0.01', price: '45000', side: SIDE_LONG, leverage: '5' }));
      expect(expired).toMatchObject({ httpStatus: 400, code: 51015 });
      expect(expired.msg).toContain('expired or was disabled');
      expect(hash()).toBe(before);
    });
  });
});
