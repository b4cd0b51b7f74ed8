/**
 * The perpetual API reads wallet signatures as Ethereum does, wherever it takes one (API-key
 * creation, One-Click Trade enablement, orders): the 64-byte compact form of EIP-2098 is accepted as
 * the 65-byte one is, and a high-s signature (EIP-2) is refused with 10000 naming `signature`,
 * although it recovers the same wallet — nothing is created, enabled or placed, and no nonce is spent.
 * Real HTTP, a real engine; SQLite, and PostgreSQL with Redis when configured.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import type { Hex } from 'viem';
import { orderType } from '../../src/perp/order-typed-data.ts';
import { perpDomain } from '../../src/perp/perp-key-service.ts';
import { PerpApiError, PerpClient, type PlacedOrder, type TypedDataSigner } from '@tokex/sdk';
import { HARNESS_CHAIN_ID, HARNESS_VAULT, perpHarnessVariants, USD, type PerpHarness } from '../support/perp-api-harness.ts';
import { highS, toCompact } from '../support/signature-forms.ts';

const AAPL = 'AAPL-USD';
const HIGH_S = 'signature: has a high s value (above secp256k1n/2), which Ethereum refuses (EIP-2): send the low-s form (r, n - s, the other v)';

/** The wallet, signing in another encoding of the same signature. */
function signingAs(wallet: PrivateKeyAccount, form: (sig: Hex) => Hex): TypedDataSigner {
  return { address: wallet.address, signTypedData: async (td: any) => form(await wallet.signTypedData(td)) };
}

async function refusal(p: Promise<unknown>): Promise<PerpApiError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof PerpApiError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}

function expectHighS(err: PerpApiError) {
  expect([err.httpStatus, err.code, err.message.replace(/ \(requestId .*\)$/, ''), err.data]).toEqual([400, 10000, `perp API 10000: ${HIGH_S}`, { field: 'signature' }]);
}

describe.each(perpHarnessVariants())('perp API signature forms ($name)', (variant) => {
  let h: PerpHarness;
  const domain = perpDomain(HARNESS_CHAIN_ID, HARNESS_VAULT);
  let nonce = 5_000n;

  beforeAll(async () => {
    h = await variant.start({ engine: true, limit: 10_000 });
    await h.venue!.mark(AAPL, 20_000);
  });
  afterAll(async () => {
    await h?.stop();
  });

  it('creates an API key from a compact signature, and refuses a high-s one with 10000', async () => {
    const wallet = privateKeyToAccount(generatePrivateKey());
    const refused = await refusal(PerpClient.createApiKey(h.baseUrl, signingAs(wallet, highS), { permissions: ['READ'], chainId: HARNESS_CHAIN_ID }));
    expectHighS(refused);
    const created = await PerpClient.createApiKey(h.baseUrl, signingAs(wallet, toCompact), { permissions: ['READ'], chainId: HARNESS_CHAIN_ID });
    expect(created.permissions).toEqual(['READ']);
    const client = PerpClient.forKey(h.baseUrl, created, HARNESS_CHAIN_ID);
    const keys = await client.get<Array<{ apiKey: string }>>('api-keys');
    // Only the compact signature made a key.
    expect(keys.map((k) => k.apiKey)).toEqual([created.apiKey]);
  });

  it('enables a One-Click Trade session from a compact signature, and refuses a high-s one with 10000', async () => {
    const wallet = privateKeyToAccount(generatePrivateKey());
    const { client } = await h.key({ userAddress: wallet.address, permissions: ['READ', 'TRADE'] });
    const session = privateKeyToAccount(generatePrivateKey());
    const expiresAt = Date.now() + 60 * 60_000;
    expectHighS(await refusal(client.enableOneClick(signingAs(wallet, highS), { sessionAddress: session.address, expiresAt })));
    expect(await client.getOneClick()).toMatchObject({ enabled: false });
    expect(await client.enableOneClick(signingAs(wallet, toCompact), { sessionAddress: session.address, expiresAt })).toMatchObject({
      enabled: true,
      sessionAddress: session.address,
    });
  });

  it('places an order signed in the compact form; a high-s one is refused with 10000, nothing placed and its nonce unspent', async () => {
    const wallet = privateKeyToAccount(generatePrivateKey());
    const { client } = await h.key({ userAddress: wallet.address, permissions: ['READ', 'TRADE'] });
    await h.venue!.deposit(wallet.address, 10_000n * USD);

    const message = orderType.build(domain, {
      account: wallet.address, symbol: AAPL, side: 'BUY', orderType: 'LIMIT', size: '1', price: '150', timeInForce: 'GTC', reduceOnly: false,
      clientOrderId: '', nonce: String(++nonce), expiry: String(Date.now() + 60_000),
    } as never);
    const signature = await wallet.signTypedData(message as never);
    const before = h.venue!.sequencer.engine.stateHash();
    expectHighS(await refusal(client.post('orders', { message: message.message, signature: highS(signature) })));
    expect(h.venue!.sequencer.engine.stateHash()).toBe(before);
    expect((await client.get<{ total: number }>('orders/open')).total).toBe(0);

    // The same order in the compact form: placed, under the nonce the refusal did not spend.
    const placed = await client.post<PlacedOrder>('orders', { message: message.message, signature: toCompact(signature) });
    expect(placed).toMatchObject({ status: 'NEW', duplicate: false, price: '150', size: '1' });
    // The 65-byte form of the same signature is the same order again, not a second one.
    expect(await client.post<PlacedOrder>('orders', { message: message.message, signature })).toMatchObject({ orderId: placed.orderId, duplicate: true });

    // The SDK's own flow with a compact signer.
    const viaSdk = await client.placeOrder(signingAs(wallet, toCompact), { symbol: AAPL, side: 'BUY', type: 'LIMIT', size: '1', price: '149' });
    expect(viaSdk).toMatchObject({ status: 'NEW', price: '149' });
    expect((await client.get<{ total: number }>('orders/open')).total).toBe(2);
  });
});
