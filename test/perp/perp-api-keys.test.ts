/**
 * Wallet-created perp API keys over real HTTP: prepare → the wallet signs the EIP-712 typed data →
 * create, and the key works; a signed creation is used once; another signer, an altered message, an
 * expired or far-future one are refused; the wallet's keys are listed without secrets, changed and
 * deleted only by keys of the same wallet.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { PerpApiError, PerpClient, type CreatedApiKey } from '@tokex/sdk';
import { createApiKeyType, perpDomain } from '../../src/perp/perp-key-service.ts';
import { HARNESS_CHAIN_ID, HARNESS_VAULT, perpHarnessVariants, type PerpHarness } from '../support/perp-api-harness.ts';

interface Prepared {
  typedData: {
    domain: Record<string, unknown>;
    types: Record<string, unknown>;
    primaryType: string;
    message: Record<string, string>;
  };
}

async function post(url: string, body: unknown): Promise<{ status: number; code: number; msg: string; data: any }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = (await res.json()) as { code: number; msg: string; data: unknown };
  return { status: res.status, code: json.code, msg: json.msg, data: json.data };
}

describe.each(perpHarnessVariants())('perp API keys created by wallets ($name)', (variant) => {
  let h: PerpHarness;
  let offset = 0;
  const now = () => Date.now() + offset;
  const alice = privateKeyToAccount(generatePrivateKey());
  const bob = privateKeyToAccount(generatePrivateKey());
  const api = (path: string) => `${h.baseUrl}/v4/public/trader/${path}`;
  const prepare = async (account: PrivateKeyAccount, body: Record<string, unknown> = {}) => {
    const r = await post(api('api-keys/prepare'), { address: account.address, label: 'bot', permissions: ['READ', 'TRADE'], ...body });
    expect(r.code, r.msg).toBe(0);
    return r.data as Prepared;
  };

  beforeAll(async () => {
    h = await variant.start({ now });
  });
  afterAll(async () => {
    await h?.stop();
  });

  it('prepares complete typed data: domain, types, a fresh nonce and an expiry minutes ahead', async () => {
    const a = await prepare(alice);
    const b = await prepare(alice);
    expect(a.typedData.domain).toEqual({ name: 'TokexPerp', version: '1', chainId: HARNESS_CHAIN_ID, verifyingContract: HARNESS_VAULT });
    expect(a.typedData.primaryType).toBe('CreateApiKey');
    expect(a.typedData.types.CreateApiKey).toEqual([
      { name: 'wallet', type: 'address' },
      { name: 'label', type: 'string' },
      { name: 'permissions', type: 'string' },
      { name: 'nonce', type: 'uint64' },
      { name: 'expiry', type: 'uint64' },
    ]);
    expect(a.typedData.types.EIP712Domain).toBeDefined();
    expect(a.typedData.message).toMatchObject({ wallet: alice.address, label: 'bot', permissions: 'READ,TRADE' });
    expect(a.typedData.message.nonce).not.toBe(b.typedData.message.nonce);
    const ahead = Number(a.typedData.message.expiry) - Date.now();
    expect(ahead).toBeGreaterThan(4 * 60_000);
    expect(ahead).toBeLessThanOrEqual(5 * 60_000 + 1_000);
    // Permissions in canonical order whatever the request's.
    expect((await prepare(alice, { permissions: ['TRANSFER', 'READ'] })).typedData.message.permissions).toBe('READ,TRANSFER');
    const bad = await post(api('api-keys/prepare'), { address: '0x1234', permissions: ['READ'] });
    expect([bad.status, bad.code, bad.data]).toEqual([400, 10000, { field: 'address' }]);
    const none = await post(api('api-keys/prepare'), { address: alice.address, permissions: [] });
    expect([none.status, none.code]).toEqual([400, 10000]);
  });

  it('creates a key from the wallet signature; the key works and the secret is answered only then', async () => {
    const { typedData } = await prepare(alice, { label: 'market maker', permissions: ['READ', 'TRADE', 'TRANSFER'] });
    const signature = await alice.signTypedData(typedData as never);
    const r = await post(api('api-keys'), { message: typedData.message, signature });
    expect(r.code, r.msg).toBe(0);
    const created = r.data as CreatedApiKey;
    expect(created).toEqual({ apiKey: expect.stringMatching(/^[0-9a-f]{32}$/), apiSecret: expect.any(String), label: 'market maker', permissions: ['READ', 'TRADE', 'TRANSFER'] });
    const client = PerpClient.forKey(h.baseUrl, created, HARNESS_CHAIN_ID);
    const list = await client.get<Array<Record<string, unknown>>>('api-keys');
    expect(list).toEqual([{ apiKey: created.apiKey, label: 'market maker', permissions: ['READ', 'TRADE', 'TRANSFER'], createdAt: expect.any(Number), updatedAt: expect.any(Number) }]);
    expect(JSON.stringify(list)).not.toContain(created.apiSecret);
    const stored = await h.keys.get(created.apiKey);
    expect(stored).toMatchObject({ api: 'perp', userAddress: alice.address.toLowerCase(), ipWhitelist: [], chainId: HARNESS_CHAIN_ID, active: true });

    // The same signed creation again: refused, and no second key appears.
    const again = await post(api('api-keys'), { message: typedData.message, signature });
    expect([again.status, again.code]).toEqual([400, 10002]);
    expect(await client.get<unknown[]>('api-keys')).toHaveLength(1);
  });

  it('the SDK helper runs the whole flow with a viem account', async () => {
    const created = await PerpClient.createApiKey(h.baseUrl, bob, { label: 'sdk', permissions: ['READ'], chainId: HARNESS_CHAIN_ID });
    expect(created.permissions).toEqual(['READ']);
    const client = PerpClient.forKey(h.baseUrl, created, HARNESS_CHAIN_ID);
    expect((await client.get<unknown[]>('instruments')).length).toBeGreaterThan(0);
    await expect(PerpClient.createApiKey(h.baseUrl, bob, { permissions: ['READ'], chainId: 1 })).rejects.toThrow(/chain 31337/);
    const err = await client.patch(`api-keys/${created.apiKey}`, { label: 'x' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PerpApiError);
    expect(err).toMatchObject({ code: 30001, httpStatus: 403, requestId: expect.stringMatching(/^[0-9a-f-]{36}$/) });
  });

  it('refuses a signature by another wallet, an altered message and another domain', async () => {
    const { typedData } = await prepare(alice);
    const byBob = await bob.signTypedData(typedData as never);
    const r1 = await post(api('api-keys'), { message: typedData.message, signature: byBob });
    expect([r1.status, r1.code, r1.data]).toEqual([400, 10000, { field: 'signature' }]);

    const signature = await alice.signTypedData(typedData as never);
    for (const altered of [
      { ...typedData.message, permissions: 'READ,TRADE,TRANSFER' },
      { ...typedData.message, label: 'other' },
      { ...typedData.message, wallet: bob.address },
      { ...typedData.message, nonce: String(BigInt(typedData.message.nonce) ^ 1n) },
    ]) {
      const r = await post(api('api-keys'), { message: altered, signature });
      expect([r.status, r.code, r.data], JSON.stringify(altered)).toEqual([400, 10000, { field: 'signature' }]);
    }
    const otherChain = await alice.signTypedData({ ...typedData, domain: { ...typedData.domain, chainId: 1 } } as never);
    expect((await post(api('api-keys'), { message: typedData.message, signature: otherChain })).code).toBe(10000);
    const malformed = await post(api('api-keys'), { message: { ...typedData.message, extra: 1 }, signature });
    expect([malformed.code, malformed.data]).toEqual([10000, { field: 'message.extra' }]);
    // After all those refusals the genuine signature still works: a failed attempt burns nothing.
    expect((await post(api('api-keys'), { message: typedData.message, signature })).code).toBe(0);
  });

  it('refuses an expired creation and one that expires too far ahead', async () => {
    const { typedData } = await prepare(alice);
    const signature = await alice.signTypedData(typedData as never);
    offset = 6 * 60_000;
    try {
      const r = await post(api('api-keys'), { message: typedData.message, signature });
      expect([r.status, r.code, r.msg]).toEqual([400, 10000, 'message.expiry: has expired; prepare a new creation']);
    } finally {
      offset = 0;
    }
    const domain = perpDomain(HARNESS_CHAIN_ID, HARNESS_VAULT);
    const far = createApiKeyType.build(domain, { ...typedData.message, nonce: '7', expiry: String(Date.now() + 3_600_000) });
    const r = await post(api('api-keys'), { message: far.message, signature: await alice.signTypedData(far as never) });
    expect([r.code, r.data]).toEqual([10000, { field: 'message.expiry' }]);
    const wrongOrder = createApiKeyType.build(domain, { ...typedData.message, nonce: '8', permissions: 'TRADE,READ' });
    const w = await post(api('api-keys'), { message: wrongOrder.message, signature: await alice.signTypedData(wrongOrder as never) });
    expect([w.code, w.data]).toEqual([10000, { field: 'message.permissions' }]);
  });

  it('lets a wallet\'s keys manage only that wallet\'s keys, never beyond their own permissions', async () => {
    const carol = privateKeyToAccount(generatePrivateKey());
    const dave = privateKeyToAccount(generatePrivateKey());
    const main = await PerpClient.createApiKey(h.baseUrl, carol, { label: 'main', permissions: ['READ', 'TRADE'] });
    const spare = await PerpClient.createApiKey(h.baseUrl, carol, { label: 'spare', permissions: ['READ'] });
    const foreign = await PerpClient.createApiKey(h.baseUrl, dave, { label: 'dave', permissions: ['READ', 'TRADE'] });
    const c = PerpClient.forKey(h.baseUrl, main, HARNESS_CHAIN_ID);
    const d = PerpClient.forKey(h.baseUrl, foreign, HARNESS_CHAIN_ID);

    expect((await c.get<Array<{ apiKey: string }>>('api-keys')).map((k) => k.apiKey)).toEqual([main.apiKey, spare.apiKey]);
    const updated = await c.patch<{ label: string; permissions: string[] }>(`api-keys/${spare.apiKey}`, { label: 'renamed', permissions: ['TRADE', 'READ'] });
    expect(updated).toMatchObject({ apiKey: spare.apiKey, label: 'renamed', permissions: ['READ', 'TRADE'] });
    const escalate = await c.request('PATCH', `api-keys/${spare.apiKey}`, { body: { permissions: ['READ', 'TRANSFER'] } });
    expect([escalate.httpStatus, escalate.code]).toEqual([403, 30001]);

    // Another wallet's key, or one that does not exist: not found, and nothing changed.
    for (const [method, body] of [['PATCH', { label: 'mine now' }], ['DELETE', undefined]] as const) {
      const r = await d.request(method, `api-keys/${spare.apiKey}`, { body });
      expect([r.httpStatus, r.code], method).toEqual([404, 40005]);
      expect((await d.request(method, 'api-keys/ffffffffffffffffffffffffffffffff', { body })).code).toBe(40005);
    }
    expect((await h.keys.get(spare.apiKey))?.label).toBe('renamed');

    expect(await c.delete(`api-keys/${spare.apiKey}`)).toEqual({ apiKey: spare.apiKey, deleted: true });
    expect((await c.get<Array<{ apiKey: string }>>('api-keys')).map((k) => k.apiKey)).toEqual([main.apiKey]);
    const gone = await PerpClient.forKey(h.baseUrl, spare, HARNESS_CHAIN_ID).request('GET', 'instruments');
    expect([gone.httpStatus, gone.code]).toEqual([401, 20002]);
    expect((await c.request('DELETE', `api-keys/${spare.apiKey}`)).code).toBe(40005);
    // A key may delete itself; it stops working at once.
    expect(await d.delete(`api-keys/${foreign.apiKey}`)).toEqual({ apiKey: foreign.apiKey, deleted: true });
    expect((await d.request('GET', 'api-keys')).code).toBe(20002);
  });
});
