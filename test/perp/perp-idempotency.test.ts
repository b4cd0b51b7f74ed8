/**
 * Idempotency of the key-authorised perpetual calls over real HTTP, with a real engine behind the
 * API (sequencer journalling to SQLite, or PostgreSQL when DATABASE_URL is set, commands through
 * their broker form): a margin move, a leverage change, a cancel and a batch cancel sent twice with
 * one Idempotency-Key are applied once and answered twice alike; the same key with another request
 * is 10002 with nothing changed; without a key each request is new; a journal write that fails
 * answers 50002 with `data.outcome: "unknown"`, and the retry with the key is applied exactly once.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { createApiKeyService } from '../../src/auth/api-key-service.ts';
import { createMemoryNonceStore } from '../../src/auth/nonce-store.ts';
import { createSecretBox } from '../../src/auth/secret-box.ts';
import { createLogger } from '../../src/lib/logger.ts';
import type { EngineCommand } from '../../src/perp/engine/engine-types.ts';
import { AppError } from '../../src/errors/app-error.ts';
import { commandIdFor, idempotencyKeyOf, withUnknownOutcome } from '../../src/perp/idempotency.ts';
import { buildPerpApi } from '../../src/perp/perp-api.ts';
import { replicaVenue } from '../../src/perp/perp-venue.ts';
import { perpDomain } from '../../src/perp/perp-key-service.ts';
import { orderType } from '../../src/perp/order-typed-data.ts';
import { NONCE_RETENTION_MS, createOrderNonceClaimer } from '../../src/perp/store/order-nonce-store.ts';
import { kyselyOf } from '../../src/storage/database.ts';
import { createJournalReplica } from '../../src/perp/sequencer/journal-replica.ts';
import { EngineSequencer } from '../../src/perp/sequencer/engine-sequencer.ts';
import { createRedisGateway, perpStreams, serveEngineOverRedis } from '../../src/perp/sequencer/redis-stream-transport.ts';
import { appendJournal, findJournalByCommandIds, readJournalAfter } from '../../src/perp/store/engine-journal-store.ts';
import { PerpClient, type PerpResponse } from '@tokex/sdk';
import { refused } from '../support/perp-refusal.ts';
import { HARNESS_CHAIN_ID, HARNESS_VAULT, newTrader, perpHarnessVariants, USD, type PerpHarness, type PerpTrader } from '../support/perp-api-harness.ts';
import { testDatabases } from '../support/test-databases.ts';
import { until } from '../support/poll.ts';

const AAPL = 'AAPL-USD';

type Trader = PerpTrader;

const newKey = (label: string) => `${label}-${randomBytes(6).toString('hex')}`;

describe('idempotency helpers', () => {
  const account = `0x${'ab'.repeat(20)}`;

  it('commandIdFor: deterministic with a key, scoped by endpoint and account, within the 128-character ids; fresh without one', () => {
    expect(commandIdFor('margin', account, 'k-1')).toBe(`margin:${account}:k-1`);
    expect(commandIdFor('margin', account, 'k-1')).toBe(commandIdFor('margin', account, 'k-1'));
    expect(commandIdFor('leverage', account, 'k-1')).not.toBe(commandIdFor('margin', account, 'k-1'));
    expect(commandIdFor('margin', `0x${'cd'.repeat(20)}`, 'k-1')).not.toBe(commandIdFor('margin', account, 'k-1'));
    expect(commandIdFor('a'.repeat(20), account, '~'.repeat(64))).toHaveLength(128);
    const fresh = commandIdFor('margin', account, undefined);
    expect(fresh).toMatch(/^margin:[0-9a-f-]{36}$/);
    expect(commandIdFor('margin', account, undefined)).not.toBe(fresh);
    // The engine workers' own prefixes, and malformed scopes or accounts, are programming errors.
    for (const scope of ['dep', 'rev', 'ord', 'mark', 'funding', 'Margin', 'a'.repeat(21), '', 'a:b']) expect(() => commandIdFor(scope, account, 'k')).toThrow(/scope/);
    expect(() => commandIdFor('margin', account.toUpperCase().replace('0X', '0x'), 'k')).toThrow(/account/);
    expect(() => commandIdFor('margin', account, 'a b')).toThrow(/idempotency-key/);
  });

  it('idempotencyKeyOf: absent, valid, and every malformed form (a repeated header arrives joined with ", ")', () => {
    expect(idempotencyKeyOf({})).toBeUndefined();
    expect(idempotencyKeyOf({ 'idempotency-key': 'f47ac10b-58cc-4372-a567-0e02b2c3d479' })).toBe('f47ac10b-58cc-4372-a567-0e02b2c3d479');
    expect(idempotencyKeyOf({ 'idempotency-key': '!~'.repeat(32) })).toBe('!~'.repeat(32));
    for (const bad of ['', 'a, b', 'x'.repeat(65), 'tab\t', 'é']) {
      expect(() => idempotencyKeyOf({ 'idempotency-key': bad })).toThrow(/idempotency-key: must be 1 to 64 visible ASCII characters/);
    }
    expect(() => idempotencyKeyOf({ 'idempotency-key': ['a', 'b'] })).toThrow(/idempotency-key/);
  });

  it('withUnknownOutcome: a 50002 or a transport failure of the submit says outcome unknown; an engine fault stays what it is', () => {
    expect(withUnknownOutcome(new AppError('STORAGE_UNAVAILABLE', 'no reply'), true)).toMatchObject({ code: 'STORAGE_UNAVAILABLE', message: 'no reply', data: { outcome: 'unknown' } });
    expect(withUnknownOutcome(new Error('ECONNRESET'), false)).toMatchObject({ code: 'STORAGE_UNAVAILABLE', retryable: true, data: { outcome: 'unknown' } });
    const fault = new AppError('INTERNAL', 'perp engine: internal error');
    expect(withUnknownOutcome(fault, true)).toBe(fault);
  });
});

describe.each(perpHarnessVariants())('perp idempotency over HTTP ($name)', (variant) => {
  let h: PerpHarness;
  let alice: Trader;
  let bob: Trader;

  const trader = (deposit: bigint): Promise<Trader> => newTrader(h, deposit);
  const hash = () => h.venue!.sequencer.engine.stateHash();
  const send = <T = any>(t: Trader, method: string, path: string, body: unknown, idempotencyKey?: string): Promise<PerpResponse<T>> =>
    t.api.request<T>(method, path, { body, ...(idempotencyKey !== undefined ? { idempotencyKey } : {}) });
  const isolatedMargin = (t: Trader) => h.venue!.sequencer.engine.getAccount(t.account)!.positions.find((p) => p.symbol === AAPL)!.isolatedMargin;
  const journalled = async (id: string) => (await findJournalByCommandIds(h.db, [id])).length;
  /** Makes the sequencer's next journal write fail: another writer takes the seq it will write. */
  const breakNextJournalWrite = async () => {
    const s = h.venue!.sequencer;
    await appendJournal(h.db, [
      {
        seq: s.nextSeq, commandId: `foreign-${randomBytes(6).toString('hex')}`, kind: 'withdraw', command: '{}', ts: 0, code: 'INVALID',
        lastEventSeq: s.engine.lastSeq, result: '{"ok":false,"code":"INVALID","message":"x"}',
      },
    ]);
  };
  const recovered = async () => {
    await until(async () => h.venue!.sequencer.state, (s) => s === 'running', 20_000);
    expect(h.venue!.sequencer.state).toBe('running');
  };

  beforeAll(async () => {
    h = await variant.start({ engine: true, limit: 10_000 });
    await h.venue!.mark(AAPL, 20_000);
    alice = await trader(10_000n * USD);
    bob = await trader(10_000n * USD);
    // Alice holds an isolated long of 10 AAPL at 200: initial margin 10 × 200 / 10 = 200 USD.
    expect((await send(alice, 'POST', 'positions/adjust', { symbol: AAPL, leverage: 10, marginMode: 'isolated' })).code).toBe(0);
    await bob.api.placeOrder(bob.wallet, { symbol: AAPL, side: 'SELL', type: 'LIMIT', size: '10', price: '200' });
    expect(await alice.api.placeOrder(alice.wallet, { symbol: AAPL, side: 'BUY', type: 'MARKET', size: '10' })).toMatchObject({ status: 'FILLED', filledSize: '10' });
    expect(isolatedMargin(alice)).toBe(200n * USD);
  });
  afterAll(async () => {
    await h?.stop();
  });

  it('two different requests racing under one key: one is applied, the other is 10002', async () => {
    const key = newKey('race');
    const answers = await Promise.all([
      send(alice, 'POST', 'positions/margin', { symbol: AAPL, amount: '1' }, key),
      send(alice, 'POST', 'positions/margin', { symbol: AAPL, amount: '2' }, key),
    ]);
    expect(answers.map((a) => a.code).sort()).toEqual([0, 10002]);
    const won = answers.find((a) => a.code === 0)!.data as { margin: string };
    expect(isolatedMargin(alice)).toBe(BigInt(Number(won.margin)) * USD);
    expect(['201', '202']).toContain(won.margin);
    // Back to 200 for the tests after this one.
    expect((await send(alice, 'POST', 'positions/margin', { symbol: AAPL, amount: won.margin === '201' ? '-1' : '-2' })).code).toBe(0);
    expect(isolatedMargin(alice)).toBe(200n * USD);
  });

  it('margin: the same key twice moves the margin once and answers alike; another amount under it is 10002; without a key, twice', async () => {
    const key = newKey('margin');
    const first = await send(alice, 'POST', 'positions/margin', { symbol: AAPL, amount: '5' }, key);
    expect(first).toMatchObject({ httpStatus: 200, code: 0, data: { symbol: AAPL, marginMode: 'isolated', margin: '205' } });
    const second = await send(alice, 'POST', 'positions/margin', { symbol: AAPL, amount: '5' }, key);
    expect(second.code).toBe(0);
    expect(second.data).toEqual(first.data);
    expect(second.requestId).not.toBe(first.requestId);
    expect(isolatedMargin(alice)).toBe(205n * USD);
    expect(await journalled(`margin:${alice.account}:${key}`)).toBe(1);
    // The same amount written otherwise is the same request.
    expect((await send(alice, 'POST', 'positions/margin', { symbol: AAPL, amount: '5.000' }, key)).data).toEqual(first.data);

    const before = hash();
    const other = await send(alice, 'POST', 'positions/margin', { symbol: AAPL, amount: '6' }, key);
    expect(other).toMatchObject({ httpStatus: 400, code: 10002, data: {} });
    expect(other.msg).toContain('Idempotency-Key: already used by another request');
    const removing = await send(alice, 'POST', 'positions/margin', { symbol: AAPL, amount: '-5' }, key);
    expect(removing.code).toBe(10002);
    expect(hash()).toBe(before);
    expect(isolatedMargin(alice)).toBe(205n * USD);

    // Without a key every request is new: applied twice.
    expect((await send(alice, 'POST', 'positions/margin', { symbol: AAPL, amount: '5' })).code).toBe(0);
    expect((await send(alice, 'POST', 'positions/margin', { symbol: AAPL, amount: '5' })).code).toBe(0);
    expect(isolatedMargin(alice)).toBe(215n * USD);

    // A refusal is the answer of its key for ever, even once the request could pass.
    const refusedKey = newKey('margin-refused');
    const tooMuch = await send(alice, 'POST', 'positions/margin', { symbol: AAPL, amount: '-100' }, refusedKey);
    expect(tooMuch.code).toBe(51001);
    expect((await send(alice, 'POST', 'positions/margin', { symbol: AAPL, amount: '-100' }, refusedKey)).code).toBe(51001);
    expect(isolatedMargin(alice)).toBe(215n * USD);
  });

  it('leverage: the same key twice is one change answered alike; another leverage under it is 10002; keys are per account; without a key, two changes', async () => {
    const key = newKey('leverage');
    const from = h.venue!.sequencer.nextSeq;
    const first = await send(bob, 'POST', 'positions/adjust', { symbol: 'BTC-USD', leverage: 5 }, key);
    expect(first).toMatchObject({ code: 0, data: { symbol: 'BTC-USD', leverage: 5, marginMode: 'cross' } });
    const second = await send(bob, 'POST', 'positions/adjust', { symbol: 'BTC-USD', leverage: 5 }, key);
    expect(second.data).toEqual(first.data);
    const rows = await readJournalAfter(h.db, from - 1);
    expect(rows.map((r) => r.commandId)).toEqual([`leverage:${bob.account}:${key}`]);

    const before = hash();
    expect((await send(bob, 'POST', 'positions/adjust', { symbol: 'BTC-USD', leverage: 4 }, key)).code).toBe(10002);
    expect((await send(bob, 'POST', 'positions/adjust', { symbol: 'BTC-USD', leverage: 5, marginMode: 'cross' }, key)).code).toBe(10002);
    expect((await send(bob, 'POST', 'positions/adjust', { symbol: 'ETH-USD', leverage: 5 }, key)).code).toBe(10002);
    expect(hash()).toBe(before);
    expect(h.venue!.sequencer.engine.getAccount(bob.account)!.positions.find((p) => p.symbol === 'BTC-USD')!.leverage).toBe(5);

    // Another account's request under the same key is its own.
    const other = await send(alice, 'POST', 'positions/adjust', { symbol: 'BTC-USD', leverage: 3 }, key);
    expect(other).toMatchObject({ code: 0, data: { leverage: 3 } });

    const plain = h.venue!.sequencer.nextSeq;
    expect((await send(bob, 'POST', 'positions/adjust', { symbol: 'BTC-USD', leverage: 6 })).code).toBe(0);
    expect((await send(bob, 'POST', 'positions/adjust', { symbol: 'BTC-USD', leverage: 6 })).code).toBe(0);
    const applied = await readJournalAfter(h.db, plain - 1);
    expect(applied.map((r) => [r.kind, r.code])).toEqual([['setLeverage', 'OK'], ['setLeverage', 'OK']]);
    expect(applied.every((r) => /^leverage:[0-9a-f-]{36}$/.test(r.commandId))).toBe(true);
  });

  it('cancel: the same key twice cancels once and answers the cancelled order twice alike; another order under it is 10002; without a key the second is a new request', async () => {
    const order = await bob.api.placeOrder(bob.wallet, { symbol: AAPL, side: 'SELL', type: 'LIMIT', size: '1', price: '250' });
    const keep = await bob.api.placeOrder(bob.wallet, { symbol: AAPL, side: 'SELL', type: 'LIMIT', size: '1', price: '251' });
    const key = newKey('cancel');
    const first = await send(bob, 'DELETE', `orders/${order.orderId}`, undefined, key);
    expect(first).toMatchObject({ code: 0, data: { orderId: order.orderId, status: 'CANCELED', reason: 'USER_CANCEL', remainingSize: '0', size: '1', price: '250' } });
    // The order is done now: the retry is answered the cancel, not "not open".
    const second = await send(bob, 'DELETE', `orders/${order.orderId}`, undefined, key);
    expect(second.code).toBe(0);
    expect(second.data).toEqual(first.data);
    await h.venue!.settled();
    expect((await send(bob, 'DELETE', `orders/${order.orderId}`, undefined, key)).data).toEqual(first.data);
    expect(await journalled(`cancel:${bob.account}:${key}`)).toBe(1);

    const before = hash();
    const other = await send(bob, 'DELETE', `orders/${keep.orderId}`, undefined, key);
    expect(other.code).toBe(10002);
    expect(hash()).toBe(before);
    expect(h.venue!.sequencer.engine.getOrder(Number(keep.orderId))).toMatchObject({ status: 'NEW' });

    // Without a key the second cancel is a request of its own, refused: the order is done.
    expect((await send(bob, 'DELETE', `orders/${keep.orderId}`, undefined)).code).toBe(0);
    expect((await send(bob, 'DELETE', `orders/${keep.orderId}`, undefined)).code).toBe(51007);
  });

  it('batch-cancel: the same key twice cancels once and answers alike; another body under it is 10002; without a key the second cancels nothing', async () => {
    const a = await bob.api.placeOrder(bob.wallet, { symbol: AAPL, side: 'SELL', type: 'LIMIT', size: '1', price: '260' });
    const b = await bob.api.placeOrder(bob.wallet, { symbol: AAPL, side: 'SELL', type: 'LIMIT', size: '1', price: '261' });
    const key = newKey('batch');
    const body = { orderIds: [a.orderId, b.orderId, 'x1'] };
    const first = await send(bob, 'POST', 'orders/batch-cancel', body, key);
    expect(first).toMatchObject({ code: 0, data: { canceled: [a.orderId, b.orderId], failed: [{ orderId: 'x1', code: 'ORDER_NOT_FOUND', msg: 'no such order for this account' }] } });
    const second = await send(bob, 'POST', 'orders/batch-cancel', body, key);
    expect(second.data).toEqual(first.data);
    expect(await journalled(`batch-cancel:${bob.account}:${key}`)).toBe(1);

    const c = await bob.api.placeOrder(bob.wallet, { symbol: AAPL, side: 'SELL', type: 'LIMIT', size: '1', price: '262' });
    const before = hash();
    expect((await send(bob, 'POST', 'orders/batch-cancel', { symbol: AAPL }, key)).code).toBe(10002);
    expect((await send(bob, 'POST', 'orders/batch-cancel', { orderIds: [c.orderId] }, key)).code).toBe(10002);
    expect(hash()).toBe(before);

    // By symbol, with a key of its own: once.
    const bySymbol = newKey('batch-symbol');
    const all = await send(bob, 'POST', 'orders/batch-cancel', { symbol: AAPL }, bySymbol);
    expect(all.data).toEqual({ canceled: [c.orderId], failed: [] });
    expect((await send(bob, 'POST', 'orders/batch-cancel', { symbol: AAPL }, bySymbol)).data).toEqual(all.data);

    // Without a key the second request is new: nothing is left to cancel.
    const d = await bob.api.placeOrder(bob.wallet, { symbol: AAPL, side: 'SELL', type: 'LIMIT', size: '1', price: '263' });
    expect((await send(bob, 'POST', 'orders/batch-cancel', { orderIds: [d.orderId] })).data).toEqual({ canceled: [d.orderId], failed: [] });
    const again = await send<{ canceled: string[]; failed: Array<{ orderId: string }> }>(bob, 'POST', 'orders/batch-cancel', { orderIds: [d.orderId] });
    expect(again.data!.canceled).toEqual([]);
    expect(again.data!.failed.map((f) => f.orderId)).toEqual([d.orderId]);
  });

  it('refuses a malformed key with 10000 naming it, before anything is applied', async () => {
    const before = hash();
    for (const bad of ['has space', 'x'.repeat(65), 'clé']) {
      const r = await refused(alice.api.call('POST', 'positions/margin', { body: { symbol: AAPL, amount: '1' }, idempotencyKey: bad }));
      expect(r).toMatchObject({ code: 10000, httpStatus: 400 });
      expect(r.msg).toContain('idempotency-key');
    }
    expect(hash()).toBe(before);
    expect(isolatedMargin(alice)).toBe(215n * USD);
  });

  it('a journal write that fails answers 50002 with outcome "unknown"; the retry with the key is applied exactly once', async () => {
    const key = newKey('unknown');
    await breakNextJournalWrite();
    const lost = await send(alice, 'POST', 'positions/margin', { symbol: AAPL, amount: '7' }, key);
    expect(lost).toMatchObject({ httpStatus: 503, code: 50002, data: { outcome: 'unknown' } });
    expect((lost.data as { retry: string }).retry).toContain('same Idempotency-Key');
    await recovered();
    // The failed batch left nothing: the engine was rebuilt from the journal.
    expect(isolatedMargin(alice)).toBe(215n * USD);
    const retry = await send(alice, 'POST', 'positions/margin', { symbol: AAPL, amount: '7' }, key);
    expect(retry).toMatchObject({ code: 0, data: { margin: '222' } });
    expect((await send(alice, 'POST', 'positions/margin', { symbol: AAPL, amount: '7' }, key)).data).toEqual(retry.data);
    expect(isolatedMargin(alice)).toBe(222n * USD);

    // Without a key the answer says so too, and what to do instead.
    await breakNextJournalWrite();
    const keyless = await send(alice, 'POST', 'positions/margin', { symbol: AAPL, amount: '1' });
    expect(keyless).toMatchObject({ code: 50002, data: { outcome: 'unknown' } });
    expect((keyless.data as { retry: string }).retry).toContain('read the state');
    await recovered();
    expect(isolatedMargin(alice)).toBe(222n * USD);
  });

  it('the SDK sends a key of its own and retries with it after an unknown outcome: applied once', async () => {
    await breakNextJournalWrite();
    const position = await alice.api.adjustMargin<{ margin: string }>({ symbol: AAPL, amount: '3' }, { retries: 3, retryDelayMs: 100 });
    expect(position.margin).toBe('225');
    expect(isolatedMargin(alice)).toBe(225n * USD);
    const journal = await readJournalAfter(h.db, 0, 100_000);
    const margins = journal.filter((r) => r.kind === 'adjustMargin' && JSON.parse(r.command).amount === '3000000');
    expect(margins).toHaveLength(1);
    expect(margins[0].commandId).toMatch(new RegExp(`^margin:${alice.account}:[0-9a-f-]{36}$`));

    // Named by the caller: a second call with that key is the first one's answer.
    const key = newKey('sdk');
    const once = await bob.api.setLeverage({ symbol: 'ETH-USD', leverage: 7 }, { idempotencyKey: key });
    expect(await bob.api.setLeverage({ symbol: 'ETH-USD', leverage: 7 }, { idempotencyKey: key })).toEqual(once);
    expect(await refused(bob.api.setLeverage({ symbol: 'ETH-USD', leverage: 8 }, { idempotencyKey: key }))).toMatchObject({ code: 10002 });
    const order = await bob.api.placeOrder(bob.wallet, { symbol: AAPL, side: 'SELL', type: 'LIMIT', size: '1', price: '270' });
    expect(await bob.api.cancelOrder(order.orderId)).toMatchObject({ orderId: order.orderId, status: 'CANCELED' });
    expect(await bob.api.batchCancel({ symbol: AAPL })).toEqual({ canceled: [], failed: [] });
  });
});

/**
 * The deployment with the engine in another process: the API sends its commands over Redis Streams
 * and reads a journal replica. One reply may reach every waiter of an id there, so this is where
 * the check of the journalled command after the answer matters.
 */
describe.skipIf(!process.env.REDIS_URL)('perp idempotency with the engine apart (Redis Streams, journal replica)', () => {
  it('a keyed margin move is applied once and answered alike; racing requests under one key: one applied, one 10002; a lost journal write says outcome unknown', { timeout: 30_000 }, async () => {
    const url = process.env.REDIS_URL!;
    const prefix = `t:idem:${randomBytes(4).toString('hex')}`;
    const db = await testDatabases[testDatabases.length - 1].open();
    const sequencer = new EngineSequencer({ db });
    await sequencer.start();
    // The engine claims the order nonces the API sends with each order (protocol 2), as the perp-engine role's does.
    const server = await serveEngineOverRedis(sequencer, new Redis(url), { ...perpStreams(prefix), blockMs: 50, nonces: createOrderNonceClaimer(db, { retentionMs: NONCE_RETENTION_MS }) });
    const gateway = createRedisGateway(new Redis(url), { ...perpStreams(prefix), replyStream: `${prefix}:replies`, blockMs: 50 });
    const replica = createJournalReplica({ db, pollMs: 50 });
    await replica.start();
    const keys = createApiKeyService({ db, secretBox: createSecretBox(randomBytes(32)), cacheTtlMs: 0 });
    const nonces = createMemoryNonceStore();
    const app = await buildPerpApi({
      chainId: HARNESS_CHAIN_ID, db, keys, nonces, rateLimit: { limit: 10_000 }, logger: createLogger({ level: 'silent' }), bodyLimitBytes: 65_536, marginVault: HARNESS_VAULT,
      venue: replicaVenue({ gateway, replica, db }),
    });
    const baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
    const admin = new Redis(url);
    try {
      const ok = async (cmd: EngineCommand) => expect((await sequencer.submit(cmd)).code).toBe('OK');
      const client = async (wallet: PrivateKeyAccount) => {
        const { key, apiSecret } = await keys.create({ api: 'perp', permissions: ['READ', 'TRADE'], ipWhitelist: [], chainId: HARNESS_CHAIN_ID, userAddress: wallet.address, expiresAt: null, label: 'test' });
        await ok({ kind: 'deposit', id: `dep:t-${randomBytes(6).toString('hex')}`, ts: Date.now(), account: wallet.address.toLowerCase(), amount: 10_000n * USD });
        return new PerpClient({ baseUrl, apiKey: key.apiKey, apiSecret, chainId: HARNESS_CHAIN_ID });
      };
      await ok({ kind: 'setMarkPrice', id: 'mark-1', ts: Date.now(), symbol: AAPL, markPriceTicks: 20_000, indexPriceTicks: 20_000 });
      const aliceWallet = privateKeyToAccount(generatePrivateKey());
      const bobWallet = privateKeyToAccount(generatePrivateKey());
      const alice = await client(aliceWallet);
      const bob = await client(bobWallet);
      const account = aliceWallet.address.toLowerCase();
      const margin = () => sequencer.engine.getAccount(account)!.positions.find((p) => p.symbol === AAPL)!.isolatedMargin;
      await alice.setLeverage({ symbol: AAPL, leverage: 10, marginMode: 'isolated' });
      await bob.placeOrder(bobWallet, { symbol: AAPL, side: 'SELL', type: 'LIMIT', size: '10', price: '200' });
      await alice.placeOrder(aliceWallet, { symbol: AAPL, side: 'BUY', type: 'MARKET', size: '10' });
      expect(margin()).toBe(200n * USD);

      // The engine has answered: the API now sends each order's nonce claim with it, and the
      // engine refuses a second order under a used nonce in the words the API's own claim uses.
      expect(gateway.claimsNonces!()).toBe(true);
      const domain = perpDomain(HARNESS_CHAIN_ID, HARNESS_VAULT);
      const signed = async (price: string) => {
        const typed = orderType.build(domain, {
          account: bobWallet.address, symbol: AAPL, side: 'SELL', orderType: 'LIMIT', size: '1', price, timeInForce: 'GTC', reduceOnly: false, clientOrderId: '', nonce: '424242', expiry: String(Date.now() + 60_000),
        });
        return { message: typed.message as Record<string, unknown>, signature: await bobWallet.signTypedData(typed as never) };
      };
      const once = await signed('250');
      const rested = await bob.request<{ orderId: string; duplicate: boolean }>('POST', 'orders', { body: once });
      expect(rested).toMatchObject({ code: 0, data: { duplicate: false } });
      expect(await bob.request('POST', 'orders', { body: await signed('251') })).toMatchObject({ httpStatus: 400, code: 51013, msg: 'message.nonce: already used by another order of this account' });
      expect(await bob.request('POST', 'orders', { body: once })).toMatchObject({ code: 0, data: { orderId: rested.data!.orderId, duplicate: true } });
      const nonceRows = await kyselyOf(db).selectFrom('perp_order_nonces').select(['nonce']).where('account', '=', bobWallet.address.toLowerCase()).where('nonce', '=', '424242').execute();
      expect(nonceRows).toHaveLength(1);
      // Made by the engine: all three orders went with the claim (protocol 2), the API wrote none.
      const sent = (await admin.xrange(`${prefix}:commands`, '-', '+')).map(([, f]) => JSON.parse(f[1]) as { v?: number; claim?: { nonce: string } });
      expect(sent.filter((m) => m.claim?.nonce === '424242').map((m) => m.v)).toEqual([2, 2, 2]);

      const key = newKey('apart');
      const first = await alice.request('POST', 'positions/margin', { body: { symbol: AAPL, amount: '5' }, idempotencyKey: key });
      expect(first).toMatchObject({ code: 0, data: { margin: '205' } });
      const second = await alice.request('POST', 'positions/margin', { body: { symbol: AAPL, amount: '5' }, idempotencyKey: key });
      expect(second.data).toEqual(first.data);
      expect(margin()).toBe(205n * USD);

      const race = newKey('apart-race');
      const answers = await Promise.all(
        ['1', '2'].map((amount) => alice.request('POST', 'positions/margin', { body: { symbol: AAPL, amount }, idempotencyKey: race })),
      );
      expect(answers.map((a) => a.code).sort()).toEqual([0, 10002]);
      expect([206n * USD, 207n * USD]).toContain(margin());
      const settled = margin();

      await appendJournal(db, [
        { seq: sequencer.nextSeq, commandId: 'foreign-apart', kind: 'withdraw', command: '{}', ts: 0, code: 'INVALID', lastEventSeq: sequencer.engine.lastSeq, result: '{"ok":false,"code":"INVALID","message":"x"}' },
      ]);
      const lostKey = newKey('apart-lost');
      const lost = await alice.request('POST', 'positions/margin', { body: { symbol: AAPL, amount: '3' }, idempotencyKey: lostKey });
      expect(lost).toMatchObject({ httpStatus: 503, code: 50002, data: { outcome: 'unknown' } });
      await until(async () => sequencer.state, (s) => s === 'running', 20_000);
      const retried = await alice.request('POST', 'positions/margin', { body: { symbol: AAPL, amount: '3' }, idempotencyKey: lostKey });
      expect(retried.code).toBe(0);
      expect(margin()).toBe(settled + 3n * USD);
    } finally {
      await app.close();
      await gateway.close();
      await server.stop();
      await replica.stop();
      await sequencer.stop();
      await nonces.close();
      await admin.del(`${prefix}:commands`, `${prefix}:events`, `${prefix}:replies`);
      admin.disconnect();
      await db.close();
    }
  });
});
