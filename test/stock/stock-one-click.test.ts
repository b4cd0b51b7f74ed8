/**
 * One Click end to end (issue 13): the EIP-712 delegation a bound wallet signs, enabled through the
 * relayer on anvil, and every `send` endpoint relayed through the One Click router, recorded for
 * the calling key and settled like a self-submitted transaction; the bad inputs each answer a
 * validation error with nothing sent. On SQLite and, with DATABASE_URL, PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getAddress, toHex, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { oneClickRouterAbi } from '../../src/chain/abi/generated/index.ts';
import { ALREADY_DELEGATED } from '../../src/stock/store/relay-request-store.ts';
import type { StockClient } from '@tokex/sdk';
import { until } from '../support/poll.ts';
import { chainClients, oneClickUsers, RELAYER, stockApiFailure as failure, relayerNonces, type OneClickUser } from '../support/one-click-users.ts';
import { stackEngines } from '../support/stack-engines.ts';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';
import { CONTRACT_MD_DELEGATE_TYPES } from '../support/contract-delegate-types.ts';

const deadlineIn = (s: number) => Math.floor(Date.now() / 1000) + s;

/** Polls a detail endpoint until it exists (the indexer reached the block) and `done` holds. */
function detail<T = any>(client: StockClient, path: string, done: (v: T) => boolean): Promise<T> {
  return until(
    () => client.request<T>('GET', path),
    (r) => r.code === 200 && done(r.data as T),
  ).then((r) => r.data as T);
}

describe.each(stackEngines('oc'))('One Click ($name)', (engine) => {
  let t: TestStack;
  let env: Record<string, string>;
  let alice: OneClickUser;
  let bob: OneClickUser;
  let carol: OneClickUser;
  let readOnly: StockClient;
  let unbound: StockClient;
  let c: TestStack['demo']['stock']['contracts'];
  let pub: ReturnType<typeof chainClients>['pub'];

  const relayerNonce = () => pub.getTransactionCount({ address: RELAYER, blockTag: 'pending' });
  const delegateOf = (user: Address) =>
    pub.readContract({ address: c.oneClickRouter, abi: oneClickRouterAbi, functionName: 'delegateOf', args: [user] });
  const relayRows = async () => Number((await t.stack.db.kysely.selectFrom('stock_relay_requests').select((e) => e.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

  beforeAll(async () => {
    env = engine.env();
    t = await startTestStack({ ...env, EXECUTOR_TICK_MS: '200', CASH_SETTLE_DELAY_MS: '300', INDEXER_POLL_MS: '100' });
    expect(t.stack.db.dialect).toBe(engine.name);
    c = t.demo.stock.contracts;
    pub = chainClients(t).pub;
    [alice, bob, carol] = await oneClickUsers(t, `oc-${engine.name}`, 3);
    readOnly = t.readOnly;
    const made = await t.stack.keys.create({ permission: 'WRITABLE', ipWhitelist: ['127.0.0.1', '::1'], chainId: t.demo.chainId, product: 'STOCK' });
    unbound = t.client(made.key.apiKey, made.apiSecret);
  }, 120_000);
  afterAll(async () => {
    await t?.stop();
    await engine.cleanup?.(env);
  });

  describe('delegation', () => {
    it('prepare answers the complete EIP-712 payload of contract.md for the bound wallet', async () => {
      const deadline = deadlineIn(600);
      const p = await alice.client.post<any>('/api/v1/1ct/prepare', { deadline });
      expect(p).toEqual({
        delegatee: RELAYER,
        nonce: 0,
        deadline,
        signPayload: {
          domain: { name: 'OneClickRouter', version: '1', chainId: t.demo.chainId, verifyingContract: getAddress(c.oneClickRouter) },
          types: CONTRACT_MD_DELEGATE_TYPES,
          primaryType: 'Delegate',
          message: { user: alice.address, delegatee: RELAYER, nonce: '0', deadline },
        },
      });
      expect(await alice.client.get('/api/v1/1ct/status')).toEqual({ status: 'disabled', delegationStatus: 'disabled', delegatee: RELAYER });
    });

    it('refuses a signature by another wallet, an expired deadline and an altered payload; nothing is sent', async () => {
      const before = await relayerNonce();
      const deadline = deadlineIn(600);
      const { signPayload } = await alice.client.post<any>('/api/v1/1ct/prepare', { deadline });

      const byBob = await bob.account.signTypedData(signPayload);
      const wrong = await failure(alice.client.post('/api/v1/1ct/enable', { signature: byBob, deadline }));
      expect([wrong.httpStatus, wrong.code]).toEqual([400, 400]);
      expect(wrong.message).toContain(`signature: recovers to ${bob.address}, not signPayload.message.user ${alice.address.toLowerCase()}`);

      const past = deadlineIn(-5);
      const stale = await alice.client.post<any>('/api/v1/1ct/prepare', { deadline: deadlineIn(60) });
      const expiredSig = await alice.account.signTypedData({ ...stale.signPayload, message: { ...stale.signPayload.message, deadline: past } });
      const expired = await failure(alice.client.post('/api/v1/1ct/enable', { signature: expiredSig, deadline: past }));
      expect(expired.message).toContain('deadline: expired: must be in the future');

      // The wallet signed a payload whose delegatee was changed after prepare.
      const altered = await alice.account.signTypedData({ ...signPayload, message: { ...signPayload.message, delegatee: bob.address } });
      const alteredErr = await failure(alice.client.post('/api/v1/1ct/enable', { signature: altered, deadline }));
      expect(alteredErr.message).toContain('signed by another wallet or over a payload altered after 1ct/prepare');

      expect(await alice.client.get('/api/v1/1ct/status')).toEqual({ status: 'disabled', delegationStatus: 'disabled', delegatee: RELAYER });
      expect(await delegateOf(alice.address)).toBe('0x0000000000000000000000000000000000000000');
      expect(await relayerNonce()).toBe(before);
    });

    it('a send before enabling, or from a key with no bound wallet, is refused with nothing sent', async () => {
      const before = await relayerNonce();
      const rows = await relayRows();
      const notEnabled = await failure(alice.client.post('/api/v1/cash/deposits/send', { tokenAddress: c.cashToken, tokenAmount: '10' }));
      expect([notEnabled.httpStatus, notEnabled.code]).toEqual([400, 400]);
      expect(notEnabled.message).toContain(`oneClick: not enabled for ${alice.address.toLowerCase()}`);
      const noWallet = await failure(unbound.post('/api/v1/orders/send', { symbol: 'AAPL', side: 'Buy', type: 'Market', notional: '10', deadline: deadlineIn(600) }));
      expect(noWallet.message).toContain('apiKey: has no bound userAddress');
      const noWalletStatus = await failure(unbound.get('/api/v1/1ct/status'));
      expect(noWalletStatus.message).toContain('apiKey: has no bound userAddress');
      expect(await relayerNonce()).toBe(before);
      expect(await relayRows()).toBe(rows);
    });

    it('enables with the wallet\'s signature; the router records the relayer as delegatee', async () => {
      const r = await alice.client.enableOneClick(alice.account);
      expect(r).toMatchObject({ status: 'enable', delegationStatus: 'enabled', delegatee: RELAYER });
      const receipt = await pub.getTransactionReceipt({ hash: r.txHash as Hex });
      expect(receipt.status).toBe('success');
      expect(receipt.to).toBe(c.oneClickRouter.toLowerCase());
      expect(await delegateOf(alice.address)).toBe(RELAYER);
      expect(await alice.client.get('/api/v1/1ct/status')).toEqual({ status: 'enable', delegationStatus: 'enabled', delegatee: RELAYER });
    });

    it('a signature used once is refused when replayed; disable ends the delegation', async () => {
      const deadline = deadlineIn(600);
      const { signPayload } = await carol.client.post<any>('/api/v1/1ct/prepare', { deadline });
      const signature = await carol.account.signTypedData(signPayload);
      expect(await carol.client.post('/api/v1/1ct/enable', { signature, deadline })).toMatchObject({ status: 'enable', delegationStatus: 'enabled' });
      const off = await carol.client.post<any>('/api/v1/1ct/disable');
      expect(off).toMatchObject({ status: 'disabled', delegationStatus: 'disabled', delegatee: RELAYER });
      expect((await pub.getTransactionReceipt({ hash: off.txHash })).status).toBe('success');
      const replay = await failure(carol.client.post('/api/v1/1ct/enable', { signature, deadline }));
      expect(replay.message).toContain('signature: already used: delegation nonce 0 was consumed');
      expect(await carol.client.get('/api/v1/1ct/status')).toEqual({ status: 'disabled', delegationStatus: 'disabled', delegatee: RELAYER });
      // Disabling again sends the refusal again (a delegation signed meanwhile must die with it).
      const again = await carol.client.post<any>('/api/v1/1ct/disable');
      expect(again).toMatchObject({ status: 'disabled', delegationStatus: 'disabled', delegatee: RELAYER });
      expect((await pub.getTransactionReceipt({ hash: again.txHash })).status).toBe('success');
      const after = await failure(carol.client.post('/api/v1/cash/deposits/send', { tokenAddress: c.cashToken, tokenAmount: '10' }));
      expect(after.message).toContain('oneClick: not enabled');
    });

    it('a READ_ONLY key gets the opaque 401 on every One Click write', async () => {
      for (const [path, body] of [
        ['/api/v1/1ct/prepare', { deadline: deadlineIn(600) }],
        ['/api/v1/1ct/enable', { signature: '0x' + '11'.repeat(65), deadline: deadlineIn(600) }],
        ['/api/v1/1ct/disable', undefined],
        ['/api/v1/orders/send', { symbol: 'AAPL', side: 'Buy', type: 'Market', notional: '10', deadline: deadlineIn(600) }],
        ['/api/v1/cash/deposits/send', { tokenAddress: c.cashToken, tokenAmount: '1' }],
      ] as const) {
        const res = await readOnly.request('POST', path, { body });
        expect([res.httpStatus, res.code, res.errMsg, res.data]).toEqual([400, 401, 'Unauthorized', undefined]);
      }
      const del = await readOnly.request('DELETE', '/api/v1/orders/1/send');
      expect([del.httpStatus, del.code]).toEqual([400, 401]);
    });
  });

  describe('issue 43: disable invalidates, a fixed 30-day expiry, a lost race', () => {
    let users: OneClickUser[];
    const submitDirect = (u: OneClickUser, by: OneClickUser, deadline: number, signature: Hex) =>
      pub.simulateContract({ account: by.account, address: c.oneClickRouter, abi: oneClickRouterAbi, functionName: 'delegateBySig', args: [u.address, RELAYER, deadline, signature] });
    const relayRow = (txHash: Hex) => t.stack.db.kysely.selectFrom('stock_relay_requests').selectAll().where('tx_hash', '=', txHash).executeTakeFirstOrThrow();

    beforeAll(async () => {
      users = await oneClickUsers(t, `oc43-${engine.name}`, 4);
    }, 60_000);

    it('1ct/disable kills a delegation signed after prepare and never enabled: nobody can submit it afterwards', async () => {
      const [u, other] = users;
      const deadline = deadlineIn(600);
      const prepared = await u.client.post<any>('/api/v1/1ct/prepare', { deadline });
      const signature = await u.account.signTypedData(prepared.signPayload);
      // Before disable anyone could submit it (the finding of issue 43).
      await submitDirect(u, other, deadline, signature);
      const off = await u.client.post<any>('/api/v1/1ct/disable');
      expect(off).toMatchObject({ status: 'disabled', delegationStatus: 'disabled', delegatee: RELAYER });
      expect((await pub.getTransactionReceipt({ hash: off.txHash })).status).toBe('success');
      // Another account's submission of the signed delegation reverts, in simulation and on chain.
      await expect(submitDirect(u, other, deadline, signature)).rejects.toThrow(/InvalidSigner/);
      const { walletOf } = chainClients(t);
      const hash = await walletOf(other.account).writeContract({ address: c.oneClickRouter, abi: oneClickRouterAbi, functionName: 'delegateBySig', args: [u.address, RELAYER, deadline, signature], gas: 300_000n });
      expect((await pub.waitForTransactionReceipt({ hash })).status).toBe('reverted');
      expect(await delegateOf(u.address)).toBe('0x0000000000000000000000000000000000000000');
      // Through the API too.
      const viaApi = await failure(u.client.post('/api/v1/1ct/enable', { signature, deadline }));
      expect(viaApi.message).toContain('signature: already used: delegation nonce 0 was consumed or cancelled (1ct/disable)');
      expect(await u.client.get('/api/v1/1ct/status')).toEqual({ status: 'disabled', delegationStatus: 'disabled', delegatee: RELAYER });
      // A new prepare signs the next nonce, and enabling works again.
      const next = await u.client.post<any>('/api/v1/1ct/prepare', { deadline });
      expect(next.nonce).toBe(1);
      expect(await u.client.post('/api/v1/1ct/enable', { signature: await u.account.signTypedData(next.signPayload), deadline })).toMatchObject({ status: 'enable', delegationStatus: 'enabled' });
      expect(await delegateOf(u.address)).toBe(RELAYER);
    });

    it('the signed payload is the spec\'s Delegate (no lifetime); the delegation ends 30 days after it is recorded on chain', async () => {
      const u = users[1];
      const deadline = deadlineIn(600);
      // The spec's shapes only: 1ct/prepare {deadline}, 1ct/enable {signature, deadline}.
      const extra = await failure(u.client.post('/api/v1/1ct/prepare', { deadline, lifetime: 3_600 }));
      expect([extra.httpStatus, extra.code]).toEqual([400, 400]);
      const prepared = await u.client.post<any>('/api/v1/1ct/prepare', { deadline });
      expect(Object.keys(prepared).sort()).toEqual(['deadline', 'delegatee', 'nonce', 'signPayload']);
      expect(Object.keys(prepared.signPayload.message).sort()).toEqual(['deadline', 'delegatee', 'nonce', 'user']);
      const signature = await u.account.signTypedData(prepared.signPayload);
      const on = await u.client.post<any>('/api/v1/1ct/enable', { signature, deadline });
      expect(on).toMatchObject({ status: 'enable', delegationStatus: 'enabled' });
      const receipt = await pub.getTransactionReceipt({ hash: on.txHash });
      const minedAt = (await pub.getBlock({ blockNumber: receipt.blockNumber })).timestamp;
      expect(await pub.readContract({ address: c.oneClickRouter, abi: oneClickRouterAbi, functionName: 'delegationExpiresAt', args: [u.address] })).toBe(minedAt + 30n * 86_400n);
      expect(await pub.readContract({ address: c.oneClickRouter, abi: oneClickRouterAbi, functionName: 'activeDelegateOf', args: [u.address] })).toEqual([RELAYER, minedAt + 30n * 86_400n]);
    });

    it('a relayer that loses the race to its own signature (mined first by another account) answers enabled, not failed', async () => {
      const [, , u, thief] = users;
      const deadline = deadlineIn(600);
      const prepared = await u.client.post<any>('/api/v1/1ct/prepare', { deadline });
      const signature = await u.account.signTypedData(prepared.signPayload);
      const before = await relayerNonce();
      await pub.request({ method: 'evm_setAutomine' as never, params: [false] as never });
      let answer: Promise<any> | undefined;
      try {
        answer = u.client.post<any>('/api/v1/1ct/enable', { signature, deadline });
        answer.catch(() => undefined);
        // The relayer's transaction is in the pool; the same signature goes in ahead of it (a higher tip).
        await until(() => relayerNonce(), (n) => n > before);
        const { walletOf } = chainClients(t);
        await walletOf(thief.account).writeContract({
          address: c.oneClickRouter, abi: oneClickRouterAbi, functionName: 'delegateBySig', args: [u.address, RELAYER, deadline, signature],
          gas: 300_000n, maxPriorityFeePerGas: 100_000_000_000n, maxFeePerGas: 200_000_000_000n,
        });
        await pub.request({ method: 'evm_mine' as never, params: [] as never });
      } finally {
        await pub.request({ method: 'evm_setAutomine' as never, params: [true] as never });
      }
      const out = await answer!;
      expect(out).toMatchObject({ status: 'enable', delegationStatus: 'enabled', delegatee: RELAYER, txHash: null });
      expect(await delegateOf(u.address)).toBe(RELAYER);
      // The relayer's own transaction did revert; it is recorded as the delegation holding, with the note.
      const row = await t.stack.db.kysely.selectFrom('stock_relay_requests').selectAll().where('request_id', '=', out.requestId).executeTakeFirstOrThrow();
      expect([row.status, row.error]).toEqual(['mined', ALREADY_DELEGATED]);
      expect((await pub.getTransactionReceipt({ hash: row.tx_hash as Hex })).status).toBe('reverted');
      expect((await relayRow(row.tx_hash as Hex)).kind).toBe('delegate');
    });
  });

  describe('sends', () => {
    it('deposits cash for the bound wallet, recorded for the key and completed', async () => {
      const out = await alice.client.post<any>('/api/v1/cash/deposits/send', { tokenAddress: c.cashToken, tokenAmount: '500' });
      expect(out.status).toBe('mined');
      expect(out.operationId).toBe(`${out.txHash}-0`);
      expect(out.operationIds).toEqual([out.operationId]);
      const tx = await pub.getTransaction({ hash: out.txHash });
      expect([tx.from.toLowerCase(), tx.to?.toLowerCase()]).toEqual([RELAYER.toLowerCase(), c.oneClickRouter.toLowerCase()]);
      // No gasLimit given: the node's estimate on the state the API saw, times 1.5 rounded up.
      const estimate = await pub.estimateGas({ account: RELAYER, to: c.oneClickRouter, data: tx.input, blockNumber: tx.blockNumber! - 1n });
      expect(tx.gas).toBe((estimate * 3n + 1n) / 2n);
      const op = await detail(alice.client, `/api/v1/cash/deposits/${out.operationId}`, (o) => o.operationStatus === 'completed');
      expect(op).toMatchObject({ userAddress: alice.address.toLowerCase(), tokenAmount: '500', mUsdAmount: '500' });
      const list = await alice.client.get<any>('/api/v1/cash/deposits');
      expect(list.rows.map((r: any) => r.operationId)).toContain(out.operationId);
      const balance = await alice.client.get<any>(`/api/v1/users/${alice.address}/balance`);
      expect(balance.mUsdDetail.available).toBe('500');
    });

    it('places a market order that the executor settles; it shows in the key\'s orders', async () => {
      const out = await alice.client.post<any>('/api/v1/orders/send', { symbol: 'AAPL', side: 'Buy', type: 'Market', notional: '100', deadline: deadlineIn(600) });
      expect(out).toMatchObject({ status: 'mined', orderIds: [out.orderId] });
      const order = await detail(alice.client, `/api/v1/orders/${out.orderId}`, (o) => o.state === 'history');
      expect(order.history.status).toBe('FILLED');
      expect(order.userAddress ?? alice.address.toLowerCase()).toBe(alice.address.toLowerCase());
      const mine = await alice.client.get<any>('/api/v1/orders');
      expect(mine.rows.map((o: any) => o.orderId)).toContain(out.orderId);
      const byTx = await alice.client.get<any[]>(`/api/v1/orders/tx/${out.txHash}`);
      expect(byTx.map((o) => o.orderId)).toEqual([out.orderId]);
    });

    it('places a limit order and cancels it by One Click; another key\'s cancel is 404 with nothing sent', async () => {
      const placed = await alice.client.post<any>('/api/v1/orders/send', {
        symbol: 'AAPL', side: 'Buy', type: 'Limit', quantity: '1', price: '1', timeInForce: 'DAY', deadline: deadlineIn(3600),
      });
      await until(() => alice.client.request<any>('GET', `/api/v1/orders/${placed.orderId}`), (r) => r.code === 200 && r.data.state === 'open');
      const before = await relayerNonce();
      const foreign = await bob.client.request('DELETE', `/api/v1/orders/${placed.orderId}/send`);
      expect([foreign.httpStatus, foreign.code]).toEqual([404, 404]);
      expect(await relayerNonce()).toBe(before);
      const cancelled = await alice.client.delete<any>(`/api/v1/orders/${placed.orderId}/send`);
      expect(cancelled).toMatchObject({ status: 'mined', orderId: placed.orderId });
      const order = await detail(alice.client, `/api/v1/orders/${placed.orderId}`, (o) => o.state === 'history');
      expect(order.history.status).toBe('CANCELED');
    });

    it('a send retried under its Idempotency-Key answers the first transaction; the key with another request is 409', async () => {
      const path = '/api/v1/cash/deposits/send';
      const body = { tokenAddress: c.cashToken, tokenAmount: '3' };
      const key = `dep-${engine.name}-${Date.now()}`;
      const before = await relayerNonce();
      const first = await alice.client.post<any>(path, body, { idempotencyKey: key });
      expect(first).toMatchObject({ status: 'mined', operationIds: [first.operationId] });
      // The retry (a lost answer, a timeout) is the same request: the same transaction, nothing sent.
      expect(await alice.client.post<any>(path, body, { idempotencyKey: key })).toEqual(first);
      expect(await relayerNonce()).toBe(before + 1);
      const reused = await failure(alice.client.post(path, { ...body, tokenAmount: '4' }, { idempotencyKey: key }));
      expect(reused.code).toBe(409);
      // Two attempts at once under a new key: one of them queues, both answer its transaction.
      const [a, b] = await Promise.all([0, 1].map(() => alice.client.post<any>(path, body, { idempotencyKey: `${key}-2` })));
      expect(b.requestId).toBe(a.requestId);
      expect(b.txHash).toBe(a.txHash);
      expect(await relayerNonce()).toBe(before + 2);
      // The SDK names each send itself: two calls are two sends.
      await alice.client.sendCashDeposit(body);
      await alice.client.sendCashDeposit(body);
      expect(await relayerNonce()).toBe(before + 4);
      const signed = alice.client.sign('POST', path, { body, idempotencyKey: 'not a key' });
      const bad = await (await fetch(signed.url, { method: 'POST', headers: signed.headers, body: signed.body })).json();
      expect(bad.code).toBe(400);
      expect(bad.errMsg).toContain('idempotency-key');
    });

    it('withdraws cash, and deposits and withdraws stock, each completing', async () => {
      const w = await alice.client.post<any>('/api/v1/cash/withdrawals/send', { tokenAddress: c.cashToken, tokenAmount: '50' });
      await detail(alice.client, `/api/v1/cash/withdrawals/${w.operationId}`, (o) => o.operationStatus === 'completed');
      const aapl = c.stocks.AAPL as Address;
      const held = await until(
        () => alice.client.get<any>(`/api/v1/users/${alice.address}/balance`),
        (b) => Number(b.tokenBalances.find((x: any) => x.symbol === 'AAPL')?.exchangeBalance ?? 0) > 0,
      );
      const exchange = held.tokenBalances.find((x: any) => x.symbol === 'AAPL').exchangeBalance as string;
      const sw = await alice.client.post<any>('/api/v1/stock/withdrawals/send', { tokenAddress: aapl, tokenAmount: exchange });
      const swOp = await detail(alice.client, `/api/v1/stock/withdrawals/${sw.operationId}`, (o) => o.operationStatus === 'completed');
      expect(swOp.tokenAmount).toBe(exchange);
      // Depositing stock needs the wallet's allowance: refused with nothing sent until it approves.
      const noAllowance = await failure(alice.client.post('/api/v1/stock/deposits/send', { tokenAddress: aapl, tokenAmount: exchange }));
      expect(noAllowance.message).toContain("exceeds the bound wallet's AAPL allowance");
      const { walletOf } = chainClients(t);
      await pub.waitForTransactionReceipt({
        hash: await walletOf(alice.account).writeContract({
          address: aapl,
          abi: [{ type: 'function', name: 'approve', stateMutability: 'nonpayable', inputs: [{ name: 's', type: 'address' }, { name: 'a', type: 'uint256' }], outputs: [{ type: 'bool' }] }],
          functionName: 'approve',
          args: [c.stockRouter, 2n ** 255n],
        }),
      });
      const sd = await alice.client.post<any>('/api/v1/stock/deposits/send', { tokenAddress: aapl, tokenAmount: exchange });
      await detail(alice.client, `/api/v1/stock/deposits/${sd.operationId}`, (o) => o.operationStatus === 'completed');
    });

    it('deposits and buys in one transaction', async () => {
      const out = await alice.client.post<any>('/api/v1/orders/with-deposit/send', {
        symbol: 'AAPL', side: 'Buy', type: 'Market', notional: '20', tokenAddress: c.cashToken, deadline: deadlineIn(600),
      });
      expect(out.status).toBe('mined');
      const order = await detail(alice.client, `/api/v1/orders/${out.orderId}`, (o) => o.state === 'history');
      expect(order.history.status).toBe('FILLED');
    });

    it('refuses a deposit the bound wallet has not approved, with nothing sent', async () => {
      const dave = privateKeyToAccount(toHex(0xda7e, { size: 32 }));
      const { key, apiSecret } = await t.stack.keys.create({ permission: 'WRITABLE', ipWhitelist: ['127.0.0.1'], chainId: t.demo.chainId, product: 'STOCK', userAddress: dave.address });
      const d = t.client(key.apiKey, apiSecret);
      await d.enableOneClick(dave);
      const before = await relayerNonce();
      const err = await failure(d.post('/api/v1/cash/deposits/send', { tokenAddress: c.cashToken, tokenAmount: '5' }));
      expect(err.message).toContain(`tokenAmount: exceeds the bound wallet's USDC allowance to the spender ${c.stockRouter}`);
      expect(await relayerNonce()).toBe(before);
    });

    it('takes the user from the key only: another userAddress in the body is refused', async () => {
      const err = await failure(alice.client.post('/api/v1/cash/withdrawals/send', { userAddress: bob.address, tokenAddress: c.cashToken, tokenAmount: '1' }));
      expect(err.message).toContain(`userAddress: must be the key's bound wallet ${alice.address.toLowerCase()} or left out`);
    });

    it('a send whose transaction reverts says so with its txHash; nothing is recorded', async () => {
      const rows = await t.stack.db.kysely.selectFrom('stock_tx_records').select('tx_hash').execute();
      const err = await failure(alice.client.post('/api/v1/orders/send', { symbol: 'AAPL', side: 'Buy', type: 'Market', notional: '5', deadline: deadlineIn(600), gasLimit: 60_000 }));
      expect([err.httpStatus, err.code]).toEqual([400, 400]);
      const data = err.data as { txHash: Hex; status: string; reason: string };
      expect(data.status).toBe('reverted');
      expect(err.message).toMatch(/^stock API 400: transaction reverted on chain \(out of gas: the call needs about \d+ gas and the gasLimit was 60000\); txHash 0x[0-9a-f]{64} /);
      expect(err.message).toContain(data.txHash);
      const receipt = await pub.getTransactionReceipt({ hash: data.txHash });
      expect(receipt.status).toBe('reverted');
      expect((await pub.getTransaction({ hash: data.txHash })).gas).toBe(60_000n);
      const after = await t.stack.db.kysely.selectFrom('stock_tx_records').select('tx_hash').execute();
      expect(after).toEqual(rows);
      const byTx = await alice.client.request('GET', `/api/v1/orders/tx/${data.txHash}`);
      expect(byTx.code).toBe(404);
    });

    it('a gasLimit below the intrinsic gas, or not an integer, is refused before anything is queued', async () => {
      const rows = await relayRows();
      const low = await failure(alice.client.post('/api/v1/cash/deposits/send', { tokenAddress: c.cashToken, tokenAmount: '1', gasLimit: 21_000 }));
      expect(low.message).toMatch(/^stock API 400: gasLimit: below the transaction's intrinsic gas \d+/);
      const bad = await failure(alice.client.post('/api/v1/cash/deposits/send', { tokenAddress: c.cashToken, tokenAmount: '1', gasLimit: '1e6' }));
      expect(bad.message).toContain('gasLimit: must be a positive integer');
      expect(await relayRows()).toBe(rows);
    });

    it('a relayer that cannot pay for gas: a clear 503, nothing recorded; afterwards the nonces run on without a gap', async () => {
      const balance = await pub.getBalance({ address: RELAYER });
      const before = await relayerNonce();
      const rows = await relayRows();
      await pub.request({ method: 'anvil_setBalance' as never, params: [RELAYER, '0x1'] as never });
      try {
        const res = await alice.client.request('POST', '/api/v1/cash/deposits/send', { body: { tokenAddress: c.cashToken, tokenAmount: '1' } });
        expect([res.httpStatus, res.code]).toEqual([503, 503]);
        expect(res.errMsg).toBe('relayer: cannot pay for gas (its ETH balance is too low); nothing was sent');
        expect(await relayRows()).toBe(rows);
      } finally {
        await pub.request({ method: 'anvil_setBalance' as never, params: [RELAYER, toHex(balance)] as never });
      }
      const out = await alice.client.post<any>('/api/v1/cash/deposits/send', { tokenAddress: c.cashToken, tokenAmount: '1' });
      expect((await pub.getTransaction({ hash: out.txHash })).nonce).toBe(before);
    });
  });

  describe('README example', () => {
    it('runs examples/one-click.ts: enable, deposit, settled buy, cancelled limit, withdrawal; the wallet sends nothing after enabling', async () => {
      const { execFile } = await import('node:child_process');
      const { promisify } = await import('node:util');
      const wallet = t.demo.wallets[0].address as Address;
      const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'examples/one-click.ts'], { env: { ...process.env, DATA_DIR: t.dataDir } });
      // `status` is Anchored's `enable` (examples/one-click.ts prints it), `delegationStatus` tokex's `enabled`.
      expect(stdout).toMatch(new RegExp(`one click (enable|enabled): delegatee ${RELAYER}`));
      expect(stdout).toMatch(/deposit 0x[0-9a-f]{64}-0: completed, 1000\.00 mUSD/);
      expect(stdout).toMatch(/order \d+: FILLED [\d.]+ AAPL at [\d.]+, fees [\d.]+/);
      expect(stdout).toMatch(/order \d+: CANCELED/);
      expect(stdout).toMatch(/withdrawal 0x[0-9a-f]{64}-0: completed, 100\.00 USDC/);
      expect(stdout).toContain('transactions sent by the wallet since enabling: 0');
      expect(await delegateOf(wallet)).toBe(RELAYER);
    }, 60_000);
  });

  describe('concurrency', () => {
    it('20 users send at once: every transaction lands, with consecutive relayer nonces', async () => {
      const users = await oneClickUsers(t, `oc20-${engine.name}`, 20, '100');
      for (const u of users) await u.client.enableOneClick(u.account);
      const first = await relayerNonce();
      const outs = await Promise.all(users.map((u) => u.client.post<any>('/api/v1/cash/deposits/send', { tokenAddress: c.cashToken, tokenAmount: '25' })));
      expect(outs.every((o) => o.status === 'mined')).toBe(true);
      expect(await relayerNonces(t, outs.map((o) => o.txHash))).toEqual(Array.from({ length: 20 }, (_, i) => first + i));
      for (const [i, u] of users.entries()) {
        const op = await detail(u.client, `/api/v1/cash/deposits/${outs[i].operationId}`, (o) => o.operationStatus === 'completed');
        expect(op.userAddress).toBe(u.address.toLowerCase());
      }
      const balances = await Promise.all(users.map((u) => u.client.get<any>(`/api/v1/users/${u.address}/balance`)));
      expect(balances.map((b) => b.mUsdDetail.available)).toEqual(users.map(() => '25'));
    }, 120_000);
  });
});
