/**
 * The stock API's WebSocket streams on the whole stack (contract.md §C, docs/stock-api.md "Stock
 * streams"): quotes and candles as they move; after a signed `auth`, a wallet's orders, operations
 * and balances following real transactions of its own wallet (a deposit, a limit order cancelled
 * through canceling to CANCELED, a withdrawal queued then settled by the executor), each update the
 * REST body of the same thing; a resume with `since` gets exactly the updates it missed; hostile
 * frames are refused with the stock codes. SQLite; PostgreSQL with Redis too when DATABASE_URL and
 * REDIS_URL are set.
 */
import { ownerCall } from '../../src/chain/owner-actions.ts';
import { createHmac, randomUUID } from 'node:crypto';
import { createPublicClient, erc20Abi, http, maxUint256, parseUnits, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cashierAbi } from '../../src/chain/abi/generated/index.ts';
import { OPERATOR_ACCOUNT } from '../../src/chain/anvil-accounts.ts';
import { parseDecimal } from '../../src/lib/decimal.ts';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';
import { stackEngines } from '../support/stack-engines.ts';
import { openSocket, type StreamFrame, type TestSocket } from '../support/ws-client.ts';
import { testWallet } from '../support/chain-fixture.ts';

const wei = (amount: string): bigint => parseDecimal(amount, { field: 'amount', decimals: 18, positive: false });

/**
 * A REST balance as the `balances` stream carries it: its stocks' `price`s null (prices stream on
 * `quotes`; a balance update comes with a change of the wallet), and `chainId`/`productType` only
 * when the indexer role passes the stream task its venue (src/app/roles/indexer-role.ts).
 */
function restAsStreamed(rest: Record<string, any>, streamed: Record<string, any>): Record<string, any> {
  const out: Record<string, any> = { ...rest, tokenBalances: rest.tokenBalances.map((r: Record<string, unknown>) => ({ ...r, price: null })) };
  if (streamed.chainId === undefined) {
    delete out.chainId;
    delete out.productType;
  }
  return out;
}

describe.each(stackEngines('stock_streams'))('stock streams ($name)', (engine) => {
  let t: TestStack;
  let env: Record<string, string>;
  /** A READ_ONLY key bound to wallets[0]: it may read the wallet's private streams. */
  let readKey: { apiKey: string; apiSecret: string };
  const sockets: TestSocket[] = [];
  const open = async () => {
    const s = await openSocket(t.demo.stock.wsUrl);
    sockets.push(s);
    return s;
  };
  const signed = (key: { apiKey: string; apiSecret: string }, o: { nonce?: string; ts?: number; secret?: string; id?: string } = {}) => {
    const nonce = o.nonce ?? randomUUID();
    const ts = o.ts ?? Date.now();
    return {
      op: 'auth',
      id: o.id ?? 'auth',
      apiKey: key.apiKey,
      ts,
      nonce,
      sign: createHmac('sha256', o.secret ?? key.apiSecret).update(['GET', '/api/v1/ws', String(ts), nonce, ''].join('\n')).digest('hex'),
    };
  };
  const writableKey = () => t.demo.stock.keys.writable;
  /** An authenticated socket subscribed to the private channels (with `since` per channel for a resume). */
  async function privateSocket(key: { apiKey: string; apiSecret: string }, since: Record<string, number> = {}) {
    const s = await open();
    s.send(signed(key));
    expect(await s.next((f) => f.type === 'authenticated')).toMatchObject({ account: user().toLowerCase() });
    const subscribed: Record<string, StreamFrame> = {};
    for (const channel of ['orders', 'operations', 'balances']) {
      s.send({ op: 'subscribe', id: channel, channel, ...(since[channel] !== undefined ? { since: since[channel] } : {}) });
      subscribed[channel] = await s.next((f) => f.type === 'subscribed' && f.id === channel);
    }
    return { s, subscribed };
  }
  const updates = (s: TestSocket, channel: string) => s.frames.filter((f) => f.type === 'update' && f.channel === channel);
  /**
   * A cancelled order's updates: one per indexed batch that changed it, seq + 1 each: open, then
   * canceling, then closed CANCELED (canceling and the close arrive as one update, the closed order,
   * when the indexer committed both blocks in one batch).
   */
  function expectLifecycle(frames: StreamFrame[], baseSeq: number, orderId: string) {
    expect(frames.map((f) => f.seq)).toEqual(frames.map((_, i) => baseSeq + 1 + i));
    expect(frames.every((f) => f.data.orderId === orderId)).toBe(true);
    const states = frames.map((f) => f.data.state);
    expect(states).toEqual(states.length === 3 ? ['open', 'canceling', 'history'] : ['open', 'history']);
    expect(frames[frames.length - 1].data.history.status).toBe('CANCELED');
  }

  const user = () => t.demo.wallets[0].address as Address;
  const chain = () => ({ id: t.demo.chainId, name: 'anvil', nativeCurrency: { name: 'ETH', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [t.demo.rpcUrl] } } });
  const pub = () => createPublicClient({ chain: chain(), transport: http(t.demo.rpcUrl) });
  const walletClient = (privateKey: Hex) => testWallet(privateKey, chain(), t.demo.rpcUrl);
  async function send(calldata: { toAddress: Address; callData: Hex }, wallet = 0): Promise<Hex> {
    const hash = await walletClient(t.demo.wallets[wallet].privateKey).sendTransaction({ to: calldata.toAddress, data: calldata.callData });
    expect((await pub().waitForTransactionReceipt({ hash })).status).toBe('success');
    return hash;
  }
  const deadline = () => Math.floor(Date.now() / 1000) + 3600;

  beforeAll(async () => {
    env = engine.env();
    t = await startTestStack({ ...env, EXECUTOR_TICK_MS: '200', CASH_SETTLE_DELAY_MS: '300', INDEXER_POLL_MS: '100' });
    const { key, apiSecret } = await t.stack.keys.create({ permission: 'READ_ONLY', ipWhitelist: ['127.0.0.1', '::1'], chainId: t.demo.chainId, product: 'STOCK', userAddress: user() });
    readKey = { apiKey: key.apiKey, apiSecret };
    for (const w of [0, 1]) {
      const hash = await walletClient(t.demo.wallets[w].privateKey).writeContract({ address: t.demo.stock.contracts.cashToken, abi: erc20Abi, functionName: 'approve', args: [t.demo.stock.contracts.stockRouter, maxUint256] });
      await pub().waitForTransactionReceipt({ hash });
    }
  });
  afterAll(async () => {
    for (const s of sockets) s.close();
    await t?.stop();
    await engine.cleanup?.(env);
  });

  it('quotes: a snapshot as REST answers it, then every change with seq + 1 and moving prices', async () => {
    const s = await open();
    s.send({ op: 'subscribe', id: 'q', channel: 'quotes', symbol: 'AAPL' });
    const snap = await s.next((f) => f.type === 'subscribed');
    expect(snap).toMatchObject({ id: 'q', channel: 'quotes', symbol: 'AAPL', data: { symbol: 'AAPL', marketStatus: 'open', token: { address: t.demo.stock.contracts.stocks.AAPL, decimals: 18 } } });
    // A price that moved: updates arrive one seq after another.
    const moved = await s.next((f) => f.type === 'update' && f.data.last !== snap.data.last);
    const seen = s.frames.filter((f) => f.type === 'update');
    expect(seen.map((f) => f.seq)).toEqual(seen.map((_, i) => snap.seq! + 1 + i));
    expect(seen.every((f) => f.channel === 'quotes' && f.symbol === 'AAPL')).toBe(true);
    expect(moved.data.timestamp).toBeGreaterThan(snap.data.timestamp);
    // The REST quote of a tick the stream carried is the streamed object, field for field.
    for (let attempt = 0; ; attempt++) {
      const rest = await t.readOnly.get<{ timestamp: number }>('/api/v1/prices/AAPL');
      const from = s.frames.findIndex((f) => f.type !== 'error' && f.data?.timestamp >= rest.timestamp);
      const same = await s.next((f) => f.data?.timestamp >= rest.timestamp, { from: from === -1 ? 0 : from });
      if (same.data.timestamp === rest.timestamp) {
        expect(same.data).toEqual(rest);
        break;
      }
      if (attempt > 10) throw new Error('no streamed quote matched a REST quote');
    }
  });

  it('klines: the current candle as the history rows, then its changes', async () => {
    const s = await open();
    s.send({ op: 'subscribe', id: 'k', channel: 'klines:1m', symbol: 'AAPL' });
    const snap = await s.next((f) => f.type === 'subscribed' && f.id === 'k');
    const rest = await t.readOnly.get<{ candles: Array<Record<string, unknown>> }>('/api/v1/prices/AAPL/history', { interval: '1m', endTime: Math.floor(Date.now() / 1000), limit: 1 });
    expect(Object.keys(snap.data).sort()).toEqual(Object.keys(rest.candles[0]).sort());
    expect(snap.data.closeTime).toBe(snap.data.openTime + 59_999);
    expect(rest.candles[0].openTime).toBeGreaterThanOrEqual(snap.data.openTime);
    const u = await s.next((f) => f.type === 'update' && f.channel === 'klines:1m');
    expect(u.seq).toBe(snap.seq! + 1);
    expect(u.data.openTime).toBeGreaterThanOrEqual(snap.data.openTime);
    expect(JSON.stringify(u.data)).not.toBe(JSON.stringify(snap.data));
  });

  it('klines:3m and klines:1w: the current bar as the history rolls it up', async () => {
    const s = await open();
    for (const interval of ['3m', '1w'] as const) {
      s.send({ op: 'subscribe', id: interval, channel: `klines:${interval}`, symbol: 'AAPL' });
      const snap = await s.next((f) => f.type === 'subscribed' && f.id === interval);
      const rest = await t.readOnly.get<{ candles: Array<Record<string, any>> }>('/api/v1/prices/AAPL/history', { interval, endTime: Math.floor(Date.now() / 1000), limit: 1, adjustment: 'raw' });
      const bar = rest.candles[0];
      const length = interval === '3m' ? 180_000 : 7 * 86_400_000;
      expect(snap.data.closeTime - snap.data.openTime, interval).toBe(length - 1);
      // The same bar (or the next, when one began between the two reads): same open time, same open.
      expect(bar.openTime - snap.data.openTime === 0 || bar.openTime - snap.data.openTime === length, interval).toBe(true);
      if (bar.openTime === snap.data.openTime) expect(snap.data.exact.open, interval).toBe(bar.exact.open);
      if (interval === '1w') expect(new Date(snap.data.openTime).getUTCDay()).toBe(1);
      else expect(snap.data.openTime % 180_000).toBe(0);
    }
  });

  it('a key bound to no wallet streams the orders and operations it recorded, as REST lists them for it', async () => {
    const { key, apiSecret } = await t.stack.keys.create({ permission: 'WRITABLE', ipWhitelist: ['127.0.0.1', '::1'], chainId: t.demo.chainId, product: 'STOCK' });
    const recorder = t.client(key.apiKey, apiSecret);
    const s = await open();
    s.send(signed({ apiKey: key.apiKey, apiSecret }));
    expect(await s.next((f) => f.type === 'authenticated')).toMatchObject({ account: `key:${key.apiKey}` });
    const snaps: Record<string, StreamFrame> = {};
    for (const channel of ['orders', 'operations', 'balances']) {
      s.send({ op: 'subscribe', id: channel, channel });
      snaps[channel] = await s.next((f) => f.type === 'subscribed' && f.id === channel);
    }
    expect([snaps.orders.data, snaps.operations.data, snaps.balances.data]).toEqual([[], [], null]);
    const c = t.demo.stock.contracts;

    // wallets[1] sends what the key built. The key records it once it is indexed (its wallet's stream
    // shows it): its rows reach the key's streams when the recording does.
    const w1 = await t.stack.keys.create({ permission: 'READ_ONLY', ipWhitelist: ['127.0.0.1', '::1'], chainId: t.demo.chainId, product: 'STOCK', userAddress: t.demo.wallets[1].address });
    const wallet1 = await open();
    wallet1.send(signed({ apiKey: w1.key.apiKey, apiSecret: w1.apiSecret }));
    await wallet1.next((f) => f.type === 'authenticated');
    wallet1.send({ op: 'subscribe', id: 'ops', channel: 'operations' });
    await wallet1.next((f) => f.type === 'subscribed');
    const dep = await recorder.post<{ toAddress: Address; callData: Hex }>('/api/v1/cash/deposits/calldata', { tokenAddress: c.cashToken, tokenAmount: '20' });
    const depHash = await send(dep, 1);
    await wallet1.next((f) => f.type === 'update' && f.data.txHash === depHash);
    const depRec = await recorder.post<{ operationId: string }>('/api/v1/cash/deposits/tx', { txHash: depHash });
    const op = await s.next((f) => f.channel === 'operations' && f.type === 'update');
    expect(op.data).toEqual(await recorder.get(`/api/v1/cash/deposits/${depRec.operationId}`));
    expect(op.data).toMatchObject({ txHash: depHash, userAddress: t.demo.wallets[1].address.toLowerCase(), operationStatus: 'completed' });

    const place = await recorder.post<{ toAddress: Address; callData: Hex }>('/api/v1/orders/calldata', {
      userAddress: t.demo.wallets[1].address, symbol: 'AAPL', side: 'Buy', type: 'Limit', quantity: '1', price: '1.5', timeInForce: 'DAY', deadline: deadline(),
    });
    const placeHash = await send(place, 1);
    const placed = await recorder.post<{ orderId: string }>('/api/v1/orders/tx', { txHash: placeHash });
    const opened = await s.next((f) => f.channel === 'orders' && f.type === 'update' && f.data.orderId === placed.orderId);
    expect(opened.data).toEqual(await recorder.get(`/api/v1/orders/${placed.orderId}`));
    await send(await recorder.delete<{ toAddress: Address; callData: Hex }>(`/api/v1/orders/${placed.orderId}/calldata`), 1);
    const closed = await s.next((f) => f.channel === 'orders' && f.data?.state === 'history');
    expect(closed.data).toEqual(await recorder.get(`/api/v1/orders/${placed.orderId}`));
    expectLifecycle(updates(s, 'orders'), snaps.orders.seq!, placed.orderId);
    expect(updates(s, 'operations').map((f) => f.seq! - snaps.operations.seq!)).toEqual([1]);
    // It has no wallet: no balances.
    expect(updates(s, 'balances')).toEqual([]);
  });

  it("a wallet's orders, operations and balances follow its transactions exactly; a resume gets exactly what it missed", async () => {
    // Observer: a READ_ONLY key, connected throughout.
    const a = await privateSocket(readKey);
    const bal0 = a.subscribed.balances.data ?? (await a.s.next((f) => f.channel === 'balances' && f.type === 'update')).data;
    const rest0 = await t.writable.get<Record<string, any>>(`/api/v1/users/${user()}/balance`);
    expect(bal0).toEqual(restAsStreamed(rest0, bal0));
    expect(a.subscribed.orders.data).toEqual([]);
    // The resuming client: its snapshot seqs, then it goes away.
    const b = await privateSocket(writableKey());
    const since = { orders: b.subscribed.orders.seq!, operations: b.subscribed.operations.seq!, balances: b.subscribed.balances.seq! };
    b.s.close();
    await b.s.closed;
    const c = t.demo.stock.contracts;

    // 1. An instant deposit: one operation update, completed, and the balances after it.
    const dep = await t.writable.post<{ toAddress: Address; callData: Hex }>('/api/v1/cash/deposits/calldata', { tokenAddress: c.cashToken, tokenAmount: '250' });
    const depHash = await send(dep);
    const depOp = await a.s.next((f) => f.channel === 'operations' && f.type === 'update' && f.data.txHash === depHash);
    expect(depOp.data).toMatchObject({ operationStatus: 'completed', kind: 'deposit', tokenAmount: '250', mUsdAmount: '250', instant: true });
    expect(depOp.data).toEqual(await t.writable.get(`/api/v1/cash/deposits/${depOp.data.operationId}`));
    const bal1 = await a.s.next((f) => f.channel === 'balances' && f.type === 'update' && f.data.mUsdDetail.available !== bal0.mUsdDetail.available);
    expect(wei(bal1.data.mUsdDetail.available) - wei(bal0.mUsdDetail.available)).toBe(wei('250'));

    // 2. A limit buy far below the market: open (2 × 1.25 locked with the 5 bps fee), then cancelled.
    const place = await t.writable.post<{ toAddress: Address; callData: Hex }>('/api/v1/orders/calldata', { symbol: 'AAPL', side: 'Buy', type: 'Limit', quantity: '2', price: '1.25', timeInForce: 'DAY', deadline: deadline() });
    const placeHash = await send(place);
    // Recorded by the key, which then may cancel it.
    await t.writable.post('/api/v1/orders/tx', { txHash: placeHash });
    const opened = await a.s.next((f) => f.channel === 'orders' && f.type === 'update' && f.data.txHash === placeHash);
    const orderId: string = opened.data.orderId;
    expect(opened.data).toMatchObject({ state: 'open', side: 'Buy', type: 'Limit', quantity: '2', price: '1.25', openOrder: { status: 'OPEN', lockedAmount: '2.50125' } });
    expect(opened.data).toEqual(await t.writable.get(`/api/v1/orders/${orderId}`));
    const locked = await a.s.next((f) => f.channel === 'balances' && f.type === 'update' && f.data.mUsdDetail.locked !== bal1.data.mUsdDetail.locked);
    expect(wei(locked.data.mUsdDetail.locked) - wei(bal1.data.mUsdDetail.locked)).toBe(wei('2.50125'));
    await send(await t.writable.delete<{ toAddress: Address; callData: Hex }>(`/api/v1/orders/${orderId}/calldata`));
    const closed = await a.s.next((f) => f.channel === 'orders' && f.type === 'update' && f.data.orderId === orderId && f.data.state === 'history');
    expect(closed.data.history).toMatchObject({ status: 'CANCELED', filledQuantity: '0' });
    expect(closed.data).toEqual(await t.writable.get(`/api/v1/orders/${orderId}`));
    const orderUpdates = updates(a.s, 'orders');
    expectLifecycle(orderUpdates, a.subscribed.orders.seq!, orderId);

    // 3. A withdrawal beyond the Cashier's buffer: queued (processing), then settled by the executor.
    const operator = walletClient(OPERATOR_ACCOUNT.privateKey);
    // An owner change: through the venue's timelock (delay 0 on the embedded chain).
    expect(await ownerCall({ publicClient: pub() as never, wallet: operator as never, target: c.cashier, abi: cashierAbi, functionName: 'setWithdrawBuffer', args: [c.cashToken, parseUnits('10', 6)] })).toMatchObject({ done: true, via: 'timelock' });
    const wd = await t.writable.post<{ toAddress: Address; callData: Hex }>('/api/v1/cash/withdrawals/calldata', { tokenAddress: c.cashToken, tokenAmount: '50' });
    const wdHash = await send(wd);
    const done = await a.s.next((f) => f.channel === 'operations' && f.type === 'update' && f.data.txHash === wdHash && f.data.operationStatus === 'completed');
    expect(done.data.settleTxHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(done.data).toEqual(await t.writable.get(`/api/v1/cash/withdrawals/${done.data.operationId}`));
    const opUpdates = updates(a.s, 'operations');
    expect(opUpdates.map((f) => [f.seq, f.data.txHash, f.data.operationStatus])).toEqual([
      [a.subscribed.operations.seq! + 1, depHash, 'completed'],
      [a.subscribed.operations.seq! + 2, wdHash, 'processing'],
      [a.subscribed.operations.seq! + 3, wdHash, 'completed'],
    ]);
    // The balances end where REST has them.
    const restEnd = await t.writable.get<Record<string, any>>(`/api/v1/users/${user()}/balance`);
    const balEnd = await a.s.next((f) => f.channel === 'balances' && f.type === 'update' && JSON.stringify(f.data) === JSON.stringify(restAsStreamed(restEnd, f.data)));
    expect(balEnd.data.mUsdDetail.locked).toBe(bal1.data.mUsdDetail.locked);
    const balUpdates = updates(a.s, 'balances');
    expect(balUpdates.map((f) => f.seq)).toEqual(balUpdates.map((_, i) => a.subscribed.balances.seq! + 1 + i));

    // A new subscriber's snapshots: the cancelled order has left; the last operation updates, newest first.
    const fresh = await privateSocket(readKey);
    expect(fresh.subscribed.orders).toMatchObject({ seq: orderUpdates[orderUpdates.length - 1].seq, data: [] });
    expect(fresh.subscribed.operations.seq).toBe(opUpdates[2].seq);
    expect(fresh.subscribed.operations.data).toEqual(opUpdates.map((f) => f.data).reverse());
    expect(fresh.subscribed.balances.data).toEqual(balUpdates[balUpdates.length - 1].data);

    // The resume: exactly the updates the observer got after the resumer's snapshot, then live.
    const r = await privateSocket(writableKey(), since);
    for (const channel of ['orders', 'operations', 'balances'] as const) {
      expect(r.subscribed[channel]).toMatchObject({ seq: since[channel], resumed: true });
      expect(r.subscribed[channel].data).toBeUndefined();
      const missed = updates(a.s, channel).filter((f) => f.seq! > since[channel]);
      expect(missed.length).toBeGreaterThan(0);
      const last = missed[missed.length - 1].seq!;
      await r.s.next((f) => f.type === 'update' && f.channel === channel && f.seq === last);
      expect(updates(r.s, channel).filter((f) => f.seq! <= last)).toEqual(missed);
    }
    const dep2 = await t.writable.post<{ toAddress: Address; callData: Hex }>('/api/v1/cash/deposits/calldata', { tokenAddress: c.cashToken, tokenAmount: '1' });
    const dep2Hash = await send(dep2);
    const live = await r.s.next((f) => f.channel === 'operations' && f.type === 'update' && f.data.txHash === dep2Hash);
    expect(live.seq).toBe(opUpdates[2].seq! + 1);
    expect(await a.s.next((f) => f.channel === 'operations' && f.seq === live.seq)).toEqual(live);

    // A reorg drops that deposit's block: a new epoch, seeded from the rolled-back projections.
    const restarted = (f: StreamFrame) => f.type === 'error' && f.code === 410 && f.channel === 'operations';
    await pub().request({ method: 'anvil_reorg', params: [1, []] } as never);
    expect(await a.s.next(restarted)).toMatchObject({ msg: expect.stringMatching(/subscribe again/) });
    await r.s.next(restarted);
    const after = await privateSocket(readKey);
    const ops = after.subscribed.operations;
    expect(ops.seq).toBeGreaterThan(live.seq! + 1_000);
    // Each operation once, in its current state, most recently changed first; the dropped one is gone.
    expect(ops.data).toEqual([done.data, depOp.data]);
    expect(after.subscribed.orders.data).toEqual([]);
    expect(after.subscribed.balances.data).toEqual(restAsStreamed(await t.writable.get(`/api/v1/users/${user()}/balance`), after.subscribed.balances.data));
    expect(after.subscribed.balances.data).toEqual(restAsStreamed(restEnd, after.subscribed.balances.data));
  });

  it('refuses bad input with the stock codes, never saying which auth check failed', async () => {
    const s = await open();
    const error = async (msg: unknown, id?: string) => {
      const from = s.frames.length;
      s.send(msg);
      return s.next((f) => f.type === 'error' && (id === undefined || f.id === id), { from });
    };
    const unauthorized = (id: string) => ({ type: 'error', id, code: 401, msg: 'Unauthorized' });
    expect(await error('garbage')).toMatchObject({ code: 400 });
    expect(await error({ op: 'subscribe', id: 'c', channel: 'depth', symbol: 'AAPL' }, 'c')).toMatchObject({ code: 400 });
    expect(await error({ op: 'subscribe', id: 'k', channel: 'klines:7m', symbol: 'AAPL' }, 'k')).toMatchObject({ code: 400 });
    expect(await error({ op: 'subscribe', id: 'n', channel: 'quotes' }, 'n')).toMatchObject({ code: 400 });
    expect(await error({ op: 'subscribe', id: 'y', channel: 'quotes', symbol: 'NOPE' }, 'y')).toMatchObject({ code: 404 });
    expect(await error({ op: 'subscribe', id: 'p', channel: 'orders' }, 'p')).toMatchObject({ code: 401 });
    expect(await error(signed(writableKey(), { id: 'bad', secret: 'wrong-secret' }), 'bad')).toEqual(unauthorized('bad'));
    expect(await error(signed(writableKey(), { id: 'old', ts: Date.now() - 60_000 }), 'old')).toEqual(unauthorized('old'));
    const nonce = randomUUID();
    const other = await open();
    other.send(signed(writableKey(), { nonce }));
    await other.next((f) => f.type === 'authenticated');
    expect(await error(signed(writableKey(), { id: 'replay', nonce }), 'replay')).toEqual(unauthorized('replay'));
    // A since the stream never reached: subscribe again without it.
    other.send({ op: 'subscribe', id: 'far', channel: 'orders', since: Number.MAX_SAFE_INTEGER });
    expect(await other.next((f) => f.type === 'error' && f.id === 'far')).toMatchObject({ code: 410 });
    other.send({ op: 'subscribe', id: 'pub', channel: 'quotes', symbol: 'AAPL', since: 1 });
    expect(await other.next((f) => f.type === 'error' && f.id === 'pub')).toMatchObject({ code: 400 });
    expect(JSON.stringify([...s.frames, ...other.frames])).not.toContain(writableKey().apiSecret);
    // Every refused auth was logged with its cause, for the operator.
    expect(t.logs.filter((l) => l.includes('stream auth refused')).length).toBeGreaterThanOrEqual(3);
  });
});
