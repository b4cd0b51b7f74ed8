/**
 * One-Click Trade on the perpetual API over real HTTP, with a real engine behind it (SQLite, and
 * PostgreSQL when DATABASE_URL is set): the wallet enables a session signer with its EIP-712
 * signature, and orders the session key signs are placed and fill (orders, orders/fill,
 * positions/close); and every refusal: an enablement signed by anyone but the wallet, a
 * session-signed order after expiry, after disable, for another account, or beyond the session's
 * expiry, an early re-enable of a disabled address (an old signed order never revives), an API key
 * created with the session key's signature, the permissions. The server's clock is the test's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createMemoryNonceStore } from '../../src/auth/nonce-store.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { enableSessionType, MAX_SESSION_TTL_MS } from '../../src/perp/one-click-service.ts';
import { buildPerpApi } from '../../src/perp/perp-api.ts';
import { indexedBlockInfo } from '../../src/perp/perp-venue.ts';
import { orderType } from '../../src/perp/order-typed-data.ts';
import { perpDomain } from '../../src/perp/perp-key-service.ts';
import { PerpClient, type OneClickStatus, type PlacedOrder, type SessionSigner, type TypedDataSigner } from '@tokex/sdk';
import { refused } from '../support/perp-refusal.ts';
import { HARNESS_CHAIN_ID, HARNESS_VAULT, newTrader, perpHarnessVariants, USD, type PerpHarness, type PerpTrader } from '../support/perp-api-harness.ts';

const AAPL = 'AAPL-USD';
const HOUR = 60 * 60_000;

type Trader = PerpTrader;

describe.each(perpHarnessVariants())('perp One-Click Trade ($name)', (variant) => {
  let h: PerpHarness;
  let alice: Trader;
  let bob: Trader;
  let carol: Trader;
  // The server's and the clients' clock: frozen, moved by the tests (forward only).
  let clock = Date.now();
  const now = () => clock;
  const domain = perpDomain(HARNESS_CHAIN_ID, HARNESS_VAULT);
  let nonce = 0n;

  const trader = (deposit: bigint): Promise<Trader> => newTrader(h, deposit);
  /** An order message built and signed here, to send what a client (or an attacker) could send. */
  const signLocal = async (signer: TypedDataSigner, fields: Record<string, unknown> & { account: string }) => {
    const message = {
      symbol: AAPL, side: 'BUY', orderType: 'LIMIT', size: '1', price: '150', timeInForce: 'GTC', reduceOnly: false, clientOrderId: '',
      nonce: String(BigInt(clock) * 1000n + ++nonce), expiry: String(clock + 60_000), ...fields,
    };
    const typed = orderType.build(domain, message);
    return { message: typed.message, signature: await signer.signTypedData(typed) };
  };
  /** A signed EnableSession message, built here (a client may build it itself). */
  const signEnable = async (signer: TypedDataSigner, m: { account: string; session: string; expiresAt: number }) => {
    const typed = enableSessionType.build(domain, { ...m, expiresAt: String(m.expiresAt), nonce: String(BigInt(clock) * 1000n + ++nonce) });
    return { message: typed.message, signature: await signer.signTypedData(typed) };
  };
  const status = (api: PerpClient) => api.getOneClick();
  const engineHash = () => h.venue!.sequencer.engine.stateHash();

  beforeAll(async () => {
    h = await variant.start({ engine: true, limit: 10_000, now });
    await h.venue!.mark(AAPL, 20_000);
    alice = await trader(10_000n * USD);
    bob = await trader(10_000n * USD);
    carol = await trader(1_000n * USD);
  });
  afterAll(async () => {
    await h?.stop();
  });

  let session: SessionSigner;

  it('prepare answers the EnableSession typed data in the orders\' domain; GET shows nothing enabled yet', async () => {
    expect(await status(alice.api)).toEqual({ enabled: false, sessionAddress: null, expiresAt: null, enabledAt: null });
    session = PerpClient.newSessionSigner(clock + 2 * HOUR);
    const { typedData } = await alice.api.prepareOneClick({ sessionAddress: session.address.toLowerCase(), expiresAt: session.expiresAt });
    expect(typedData.domain).toEqual({ name: 'TokexPerp', version: '1', chainId: HARNESS_CHAIN_ID, verifyingContract: HARNESS_VAULT });
    expect(typedData.primaryType).toBe('EnableSession');
    expect(typedData.types.EnableSession).toEqual([
      { name: 'account', type: 'address' },
      { name: 'session', type: 'address' },
      { name: 'expiresAt', type: 'uint64' },
      { name: 'nonce', type: 'uint64' },
    ]);
    expect(typedData.message).toEqual({ account: alice.wallet.address, session: session.address, expiresAt: String(session.expiresAt), nonce: expect.stringMatching(/^[0-9]+$/) });
    // Nothing is stored by a prepare.
    expect((await status(alice.api)).enabled).toBe(false);
  });

  it('enable with the wallet\'s signature: GET shows exactly enabled, sessionAddress, expiresAt, enabledAt; other accounts are untouched', async () => {
    const enabled = await alice.api.enableOneClick(alice.wallet, { sessionAddress: session.address, expiresAt: session.expiresAt });
    const expected: OneClickStatus = { enabled: true, sessionAddress: session.address, expiresAt: session.expiresAt, enabledAt: clock };
    expect(enabled).toEqual(expected);
    const shown = await status(alice.api);
    expect(shown).toEqual(expected);
    expect(Object.keys(shown).sort()).toEqual(['enabled', 'enabledAt', 'expiresAt', 'sessionAddress']);
    expect(await status(bob.api)).toEqual({ enabled: false, sessionAddress: null, expiresAt: null, enabledAt: null });
  });

  it('orders signed by the session key are placed and fill: orders, orders/fill and positions/close', async () => {
    const ask = await bob.api.placeOrder(bob.wallet, { symbol: AAPL, side: 'SELL', type: 'LIMIT', size: '3', price: '200.5' });
    const buy = await alice.api.placeOrder(session, { symbol: AAPL, side: 'BUY', type: 'MARKET', size: '1' });
    expect(buy).toMatchObject({ status: 'FILLED', filledSize: '1', avgPrice: '200.5', duplicate: false });
    expect(buy.fills).toEqual([expect.objectContaining({ price: '200.5', size: '1', role: 'TAKER', side: 'BUY' })]);

    const ioc = await alice.api.signOrder(session, { symbol: AAPL, side: 'BUY', type: 'LIMIT', size: '1', price: '201', timeInForce: 'IOC' });
    // The SDK keeps a session-signed order's expiry within the session.
    expect(Number(ioc.message.expiry)).toBe(clock + 10 * 60_000);
    const fill = await alice.api.post<PlacedOrder>('orders/fill', { message: ioc.message, signature: ioc.signature });
    expect(fill).toMatchObject({ status: 'FILLED', filledSize: '1', avgPrice: '200.5' });
    // The same signed order again is the same order (its nonce is claimed): nothing more fills.
    const again = await alice.api.post<PlacedOrder>('orders/fill', { message: ioc.message, signature: ioc.signature });
    expect(again).toMatchObject({ orderId: fill.orderId, duplicate: true, filledSize: '1' });

    expect((await alice.api.get<{ rows: any[] }>('positions')).rows[0]).toMatchObject({ symbol: AAPL, side: 'LONG', size: '2' });
    await bob.api.placeOrder(bob.wallet, { symbol: AAPL, side: 'BUY', type: 'LIMIT', size: '2', price: '199.5' });
    const closed = await alice.api.closePosition<PlacedOrder>(session, { symbol: AAPL });
    expect(closed).toMatchObject({ status: 'FILLED', side: 'SELL', filledSize: '2', avgPrice: '199.5', reduceOnly: true });
    expect((await alice.api.get<{ total: number }>('positions')).total).toBe(0);
    await bob.api.delete(`orders/${ask.orderId}`);
  });

  it('an order expiring exactly with the session is accepted, one a millisecond later is refused (10000 message.expiry)', async () => {
    const at = await signLocal(session, { account: alice.wallet.address, expiry: String(session.expiresAt) });
    const resting = await alice.api.post<PlacedOrder>('orders', at);
    expect(resting).toMatchObject({ status: 'NEW', price: '150' });
    await alice.api.delete(`orders/${resting.orderId}`);
    const before = engineHash();
    const beyond = await signLocal(session, { account: alice.wallet.address, expiry: String(session.expiresAt + 1) });
    const r = await refused(alice.api.post('orders', beyond));
    expect(r).toMatchObject({ code: 10000, httpStatus: 400 });
    expect(r.msg).toContain("message.expiry: must not be after the session signer's expiresAt");
    expect(engineHash()).toBe(before);
  });

  it('the session key signs for its account only: another account\'s order is refused (51014, or 10000 through the wrong key)', async () => {
    const before = engineHash();
    const forCarol = await signLocal(session, { account: carol.wallet.address });
    expect(await refused(carol.api.post('orders', forCarol))).toMatchObject({ code: 51014, httpStatus: 400 });
    const viaAlice = await refused(alice.api.post('orders', forCarol));
    expect(viaAlice).toMatchObject({ code: 10000 });
    expect(viaAlice.msg).toContain('message.account');
    // Another key entirely (never enabled) for alice: 51014.
    const stranger = privateKeyToAccount(generatePrivateKey());
    expect(await refused(alice.api.post('orders', await signLocal(stranger, { account: alice.wallet.address })))).toMatchObject({ code: 51014 });
    expect(engineHash()).toBe(before);
  });

  it('an enablement signed by anyone but the wallet is refused (10000 signature): the session key, another wallet, an altered message', async () => {
    const next = privateKeyToAccount(generatePrivateKey());
    const m = { account: alice.wallet.address, session: next.address, expiresAt: clock + HOUR };
    for (const signer of [session, carol.wallet, next]) {
      const r = await refused(alice.api.post('one-click/enable', await signEnable(signer, m)));
      expect(r).toMatchObject({ code: 10000, httpStatus: 400 });
      expect(r.msg).toContain('signature: is not signed by message.account');
    }
    const signed = await signEnable(alice.wallet, m);
    const altered = await refused(alice.api.post('one-click/enable', { ...signed, message: { ...signed.message, expiresAt: String(clock + 2 * HOUR) } }));
    expect(altered).toMatchObject({ code: 10000 });
    expect(altered.msg).toContain('signature');
    // Signed by its own wallet, but sent with another wallet's key: 10000 message.account.
    const carolsOwn = await signEnable(carol.wallet, { account: carol.wallet.address, session: next.address, expiresAt: clock + HOUR });
    expect((await refused(alice.api.post('one-click/enable', carolsOwn))).msg).toContain('message.account: must be the wallet of the API key');
    expect(await status(alice.api)).toMatchObject({ enabled: true, sessionAddress: session.address });
    expect((await status(carol.api)).enabled).toBe(false);
  });

  it('other enable refusals: expiry in the past or beyond 30 days, the wallet itself as session, a signed enablement used twice, shortening the active session', async () => {
    const other = privateKeyToAccount(generatePrivateKey()).address;
    const field = async (p: Promise<unknown>) => {
      const r = await refused(p);
      expect(r.code).toBe(10000);
      return r.msg;
    };
    expect(await field(alice.api.prepareOneClick({ sessionAddress: other, expiresAt: clock }))).toContain('expiresAt: must be a time in ms in the future');
    expect(await field(alice.api.prepareOneClick({ sessionAddress: other, expiresAt: clock + MAX_SESSION_TTL_MS + 1 }))).toContain('expiresAt: must be at most 30 days ahead');
    expect((await alice.api.prepareOneClick({ sessionAddress: other, expiresAt: clock + MAX_SESSION_TTL_MS })).typedData.message.expiresAt).toBe(String(clock + MAX_SESSION_TTL_MS));
    expect(await field(alice.api.prepareOneClick({ sessionAddress: alice.wallet.address, expiresAt: clock + HOUR }))).toContain('sessionAddress: must be another key than the wallet itself');
    expect(await field(alice.api.post('one-click/enable', await signEnable(alice.wallet, { account: alice.wallet.address, session: other, expiresAt: clock - 1 })))).toContain('message.expiresAt');
    expect(await field(alice.api.post('one-click/prepare', { sessionAddress: 'nope', expiresAt: clock + HOUR }))).toContain('sessionAddress');

    // Extending the active session is an enable of the same address with a later expiry; the
    // signed enablement then cannot be used again, and the session cannot be shortened.
    const extended = await signEnable(alice.wallet, { account: alice.wallet.address, session: session.address, expiresAt: session.expiresAt + HOUR });
    expect(await alice.api.post('one-click/enable', extended)).toEqual({ enabled: true, sessionAddress: session.address, expiresAt: session.expiresAt + HOUR, enabledAt: clock });
    const twice = await refused(alice.api.post('one-click/enable', extended));
    expect(twice).toMatchObject({ code: 10002 });
    expect(twice.msg).toContain('message.nonce');
    const shorter = await refused(alice.api.post('one-click/enable', await signEnable(alice.wallet, { account: alice.wallet.address, session: session.address, expiresAt: session.expiresAt })));
    expect(shorter).toMatchObject({ code: 10002 });
    expect(shorter.msg).toContain('can only be extended');
    // Put it back as the other tests expect it (an extension of the same length is allowed).
    expect((await status(alice.api)).expiresAt).toBe(session.expiresAt + HOUR);
    session = PerpClient.newSessionSigner(session.expiresAt + HOUR, session.privateKey);
  });

  it('a session key cannot create API keys for the wallet: POST api-keys with its signature is refused', async () => {
    // The session key claims the wallet's address; its signature recovers to itself.
    const impostor: TypedDataSigner = { address: alice.wallet.address, signTypedData: (t) => session.signTypedData(t) };
    const r = await refused(PerpClient.createApiKey(h.baseUrl, impostor, { label: 'x', permissions: ['READ', 'TRADE', 'TRANSFER'] }));
    expect(r).toMatchObject({ code: 10000, httpStatus: 400 });
    expect(r.msg).toContain('signature: is not signed by message.wallet');
    expect((await h.keys.list({ api: 'perp', userAddress: alice.wallet.address.toLowerCase() })).length).toBe(1);
  });

  it('a session key has no path to withdrawals or liquidity: they take the API key with TRANSFER only, never an order signature', async () => {
    const before = engineHash();
    const signed = await signLocal(session, { account: alice.wallet.address });
    // The trading key a One-Click integration holds: no TRANSFER.
    expect(await refused(alice.api.post('account/withdrawals', { amount: '10', clientWithdrawalId: 'w-session', ...signed }))).toMatchObject({ code: 30001, httpStatus: 403 });
    expect(await refused(alice.api.post('liquidity/add', { amount: '10', ...signed }))).toMatchObject({ code: 30001, httpStatus: 403 });
    // A TRANSFER key does not take a session's signature as authority either: the field is refused.
    const transfer = (await h.key({ userAddress: alice.wallet.address, permissions: ['READ', 'TRANSFER'] })).client;
    expect(await refused(transfer.post('account/withdrawals', { amount: '10', clientWithdrawalId: 'w-session', ...signed }))).toMatchObject({ code: 10000, httpStatus: 400 });
    expect(await refused(transfer.post('liquidity/add', { amount: '10', ...signed }))).toMatchObject({ code: 10000, httpStatus: 400 });
    expect(engineHash()).toBe(before);
  });

  it('permissions: prepare, enable and disable need TRADE, GET needs READ; a key bound to no wallet cannot use it', async () => {
    const readOnly = (await h.key({ userAddress: alice.wallet.address, permissions: ['READ'] })).client;
    expect((await readOnly.getOneClick()).enabled).toBe(true);
    const other = privateKeyToAccount(generatePrivateKey()).address;
    expect(await refused(readOnly.prepareOneClick({ sessionAddress: other, expiresAt: clock + HOUR }))).toMatchObject({ code: 30001, httpStatus: 403 });
    expect(await refused(readOnly.post('one-click/enable', await signEnable(alice.wallet, { account: alice.wallet.address, session: other, expiresAt: clock + HOUR })))).toMatchObject({ code: 30001 });
    expect(await refused(readOnly.disableOneClick())).toMatchObject({ code: 30001 });
    const tradeOnly = (await h.key({ userAddress: alice.wallet.address, permissions: ['TRADE'] })).client;
    expect(await refused(tradeOnly.getOneClick())).toMatchObject({ code: 30001, httpStatus: 403 });
    const unbound = (await h.key({ userAddress: null })).client;
    expect(await refused(unbound.getOneClick())).toMatchObject({ code: 30001, httpStatus: 403 });
    expect((await status(alice.api)).enabled).toBe(true);
  });

  it('after disable: session-signed orders are refused (51015); disable is idempotent; the address cannot be enabled again before its old expiry, so an old signed order never revives', async () => {
    const old = await alice.api.signOrder(session, { symbol: AAPL, side: 'BUY', type: 'LIMIT', size: '1', price: '150', expiry: session.expiresAt });
    const disabled = await alice.api.disableOneClick();
    const expected: OneClickStatus = { enabled: false, sessionAddress: session.address, expiresAt: session.expiresAt, enabledAt: expect.any(Number) as unknown as number };
    expect(disabled).toEqual(expected);
    expect(await alice.api.disableOneClick()).toEqual(disabled);
    expect(await status(alice.api)).toEqual(disabled);
    const before = engineHash();
    expect(await refused(alice.api.post('orders', { message: old.message, signature: old.signature }))).toMatchObject({ code: 51015, httpStatus: 400 });

    const early = await refused(alice.api.enableOneClick(alice.wallet, { sessionAddress: session.address, expiresAt: session.expiresAt + HOUR }));
    expect(early).toMatchObject({ code: 10002, httpStatus: 400 });
    expect(early.msg).toContain(`cannot be enabled again until ${session.expiresAt} has passed`);

    // A new session replaces nothing active and works; the old key is now just another signer (51014).
    const fresh = PerpClient.newSessionSigner(clock + 30 * HOUR);
    expect((await alice.api.enableOneClick(alice.wallet, { sessionAddress: fresh.address, expiresAt: fresh.expiresAt })).enabled).toBe(true);
    expect(await refused(alice.api.post('orders', { message: old.message, signature: old.signature }))).toMatchObject({ code: 51014 });
    expect(engineHash()).toBe(before);

    // Once the old expiry has passed the address may be enabled again (replacing `fresh`, which is
    // then blocked in turn), and the old signed order has expired with it.
    clock = session.expiresAt;
    expect(await refused(alice.api.enableOneClick(alice.wallet, { sessionAddress: session.address, expiresAt: clock + HOUR }))).toMatchObject({ code: 10002 });
    clock = session.expiresAt + 1;
    const again = await alice.api.enableOneClick(alice.wallet, { sessionAddress: session.address, expiresAt: clock + HOUR });
    expect(again).toEqual({ enabled: true, sessionAddress: session.address, expiresAt: clock + HOUR, enabledAt: clock });
    expect(await refused(alice.api.post('orders', { message: old.message, signature: old.signature }))).toMatchObject({ code: 51012 });
    expect(await refused(alice.api.enableOneClick(alice.wallet, { sessionAddress: fresh.address, expiresAt: fresh.expiresAt }))).toMatchObject({ code: 10002 });
    expect(engineHash()).toBe(before);
  });

  it('a disable answered by one API instance holds on another at once (the database is the truth); disable takes no body or {}', async () => {
    // A second instance over the same database and engine, as several API processes run.
    const nonces = createMemoryNonceStore();
    const second = await buildPerpApi({
      chainId: HARNESS_CHAIN_ID, db: h.db, keys: h.keys, nonces, rateLimit: { limit: 10_000 }, logger: createLogger({ level: 'silent' }),
      bodyLimitBytes: 65_536, marginVault: HARNESS_VAULT, now,
      venue: { gateway: h.venue!.gateway, engine: () => h.venue!.sequencer.engine, blockInfo: () => indexedBlockInfo(h.db) },
    });
    try {
      const url = await second.listen({ host: '127.0.0.1', port: 0 });
      const { apiKey, apiSecret } = await h.key({ userAddress: alice.wallet.address, permissions: ['READ', 'TRADE'] });
      const other = new PerpClient({ baseUrl: url, apiKey, apiSecret, chainId: HARNESS_CHAIN_ID, now });
      const s2 = PerpClient.newSessionSigner(clock + HOUR);
      await alice.api.enableOneClick(alice.wallet, { sessionAddress: s2.address, expiresAt: s2.expiresAt });
      const placed = await other.placeOrder(s2, { symbol: AAPL, side: 'BUY', type: 'LIMIT', size: '1', price: '150' });
      expect(placed.status).toBe('NEW');
      await alice.api.delete(`orders/${placed.orderId}`);
      const signed = await signLocal(s2, { account: alice.wallet.address });
      expect(await refused(other.post('one-click/disable', { reason: 'x' }))).toMatchObject({ code: 10000 });
      expect((await other.post<OneClickStatus>('one-click/disable', {})).enabled).toBe(false);
      expect(await refused(alice.api.post('orders', signed))).toMatchObject({ code: 51015 });
      expect(await refused(other.post('orders', signed))).toMatchObject({ code: 51015 });
    } finally {
      await second.close();
      await nonces.close();
    }
  });

  it('after expiry: session-signed orders are refused (51015) and GET shows enabled false', async () => {
    const short = PerpClient.newSessionSigner(clock + 60_000);
    await alice.api.enableOneClick(alice.wallet, { sessionAddress: short.address, expiresAt: short.expiresAt });
    const signed = await signLocal(short, { account: alice.wallet.address, expiry: String(short.expiresAt) });
    clock = short.expiresAt;
    expect((await status(alice.api)).enabled).toBe(false);
    const before = engineHash();
    expect(await refused(alice.api.post('orders', signed))).toMatchObject({ code: 51015 });
    expect(await status(alice.api)).toEqual({ enabled: false, sessionAddress: short.address, expiresAt: short.expiresAt, enabledAt: short.expiresAt - 60_000 });
    // Disabling an expired session changes nothing.
    expect(await alice.api.disableOneClick()).toEqual(await status(alice.api));
    // The wallet itself still signs.
    const own = await alice.api.placeOrder(alice.wallet, { symbol: AAPL, side: 'BUY', type: 'LIMIT', size: '1', price: '150' });
    expect(own.status).toBe('NEW');
    expect(engineHash()).not.toBe(before);
  });
});
