/**
 * The sandbox's snapshots, revert and reset (docs/sandbox.md "Snapshots, revert and reset") on the
 * real embedded stack: a revert takes the whole venue back (the chain's balances and blocks, the
 * perpetual engine's orders and ids, the clock) on the same URLs, the snapshot stays usable, later
 * ones are dropped, a stream open across it is closed with 1012; a reset returns the seeded venue.
 */
import { createPublicClient, erc20Abi, http, type Address } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, describe, expect, it } from 'vitest';
import { PerpClient } from '@tokex/sdk';
import { openSocket, type TestSocket } from '../support/ws-client.ts';
import { until } from '../support/poll.ts';
import { useSandboxStack } from './sandbox-client.ts';

const s = useSandboxStack();
const sockets: TestSocket[] = [];
afterAll(() => {
  for (const socket of sockets) socket.close();
});

const STRANGER = '0x00000000000000000000000000000000000b0b00' as Address;

/** What a revert must take back, read from outside: the chain, the perpetual venue, the clock. */
async function venueState() {
  const pub = createPublicClient({ transport: http(s.t.demo.rpcUrl) });
  const cash = s.t.demo.stock.contracts.cashToken as Address;
  const perp = new PerpClient({ baseUrl: s.t.demo.perp!.baseUrl, apiKey: s.t.demo.perp!.keys.trader.apiKey, apiSecret: s.t.demo.perp!.keys.trader.apiSecret, chainId: s.t.demo.chainId });
  const open = await perp.getOpenOrders({ symbol: 'BTC-USD' });
  const clock = await s.sb.ok('GET', '/clock');
  return {
    strangerCash: await pub.readContract({ address: cash, abi: erc20Abi, functionName: 'balanceOf', args: [STRANGER] }),
    openOrders: open.rows.map((o) => o.orderId).sort(),
    advancedMs: clock.advancedMs as number,
  };
}

/** A resting BTC-USD bid far below the market from the demo trader; answers its order id. */
async function restingBid(): Promise<string> {
  const perp = new PerpClient({ baseUrl: s.t.demo.perp!.baseUrl, apiKey: s.t.demo.perp!.keys.trader.apiKey, apiSecret: s.t.demo.perp!.keys.trader.apiSecret, chainId: s.t.demo.chainId });
  const account = privateKeyToAccount(s.t.demo.wallets[0].privateKey);
  const placed = await perp.placeOrder(account, { symbol: 'BTC-USD', side: 'BUY', type: 'LIMIT', size: '0.01', price: '50000' });
  return placed.orderId;
}

describe('sandbox snapshots', () => {
  it('a revert takes the chain, the perpetual engine and the clock back, on the same URLs; the snapshot is usable again', async () => {
    const urls = { stock: s.t.demo.stock.baseUrl, perp: s.t.demo.perp!.baseUrl };
    // The stack's start does not wait for the perpetual engine's lease: read once it answers.
    const before = (await until(() => venueState().catch(() => undefined), (v) => v !== undefined, 60_000))!;
    const snap = await s.sb.ok('POST', '/snapshots');
    expect(snap.id).toBe('snap-1');
    expect(await s.sb.ok('GET', '/snapshots')).toEqual({ snapshots: [{ id: 'snap-1', createdAt: snap.createdAt }] });

    // After the snapshot: a mint on chain, an order in the engine, an hour of the clock.
    const minted = await s.sb.ok('POST', '/fund', { address: STRANGER, asset: 'USDC', amount: '1000' });
    const orderId = await restingBid();
    await s.sb.ok('POST', '/clock/advance', { seconds: 3600 });
    const moved = await venueState();
    expect(moved.strangerCash).toBe(before.strangerCash + 1_000_000_000n);
    expect(moved.openOrders).toContain(orderId);
    // An advance moves to its end while time runs on: within the time the advance took of an hour.
    expect(moved.advancedMs).toBeGreaterThan(3_500_000);
    expect(moved.advancedMs).toBeLessThanOrEqual(3_600_000);

    const reverted = await s.sb.ok('POST', '/snapshots/snap-1/revert');
    console.log(`snapshot ${snap.ms} ms, revert ${reverted.ms} ms`);
    expect(reverted).toMatchObject({ id: 'snap-1', dropped: [], clock: { frozen: false, advancedMs: 0 } });
    // The same URLs answer, at once: the answer came once the venue ran again.
    expect(s.t.demo.stock.baseUrl).toBe(urls.stock);
    const back = await venueState();
    expect(back.strangerCash).toBe(before.strangerCash);
    expect(back.openOrders).not.toContain(orderId);
    expect(back.advancedMs).toBe(0);
    // The mint's transaction is gone from the chain, not paid back (the block count says nothing:
    // the venue started again mines its own blocks at once).
    const pub = createPublicClient({ transport: http(s.t.demo.rpcUrl) });
    await expect(pub.getTransactionReceipt({ hash: minted.txHash })).rejects.toThrow(/could not be found/);

    // Usable again: the same change, the same revert, the same state.
    await s.sb.ok('POST', '/fund', { address: STRANGER, asset: 'USDC', amount: '7' });
    await s.sb.ok('POST', '/snapshots/snap-1/revert');
    expect((await venueState()).strangerCash).toBe(before.strangerCash);
  });

  it('a revert drops the snapshots taken after it; delete forgets one; an unknown id is a 404', async () => {
    const second = await s.sb.ok('POST', '/snapshots');
    expect(second.id).toBe('snap-2');
    const reverted = await s.sb.ok('POST', '/snapshots/snap-1/revert');
    expect(reverted.dropped).toEqual(['snap-2']);
    const gone = await s.sb.call('POST', '/snapshots/snap-2/revert');
    expect([gone.status, gone.json.code, gone.json.errMsg]).toEqual([404, 404, 'snapshot snap-2: not found']);

    const third = await s.sb.ok('POST', '/snapshots');
    expect(await s.sb.ok('DELETE', `/snapshots/${third.id}`)).toEqual({ id: third.id, deleted: true });
    expect((await s.sb.ok('GET', '/snapshots')).snapshots.map((x: { id: string }) => x.id)).toEqual(['snap-1']);
    expect((await s.sb.call('DELETE', `/snapshots/${third.id}`)).status).toBe(404);
  });

  it('a stream open across a revert is closed with 1012 "service restart", and a new connection flows', async () => {
    const socket = await openSocket(s.t.demo.perp!.wsUrl);
    sockets.push(socket);
    socket.send({ op: 'subscribe', id: 'before', channel: 'tickers', symbol: 'BTC-USD' });
    await socket.next((f) => f.type === 'subscribed' && f.id === 'before');
    await s.sb.ok('POST', '/snapshots/snap-1/revert');
    expect(await socket.closed).toEqual({ code: 1012, reason: 'service restart' });

    const again = await openSocket(s.t.demo.perp!.wsUrl);
    sockets.push(again);
    again.send({ op: 'subscribe', id: 'after', channel: 'tickers', symbol: 'BTC-USD' });
    await again.next((f) => f.type === 'subscribed' && f.id === 'after');
    expect(await again.next((f) => f.channel === 'tickers' && f.symbol === 'BTC-USD' && f.type === 'update')).toMatchObject({ type: 'update' });
  });

  it('a frozen clock is frozen again at the snapshot\'s instant after a revert', async () => {
    const frozen = await s.sb.ok('POST', '/clock/freeze', { frozen: true });
    const snap = await s.sb.ok('POST', '/snapshots');
    await s.sb.ok('POST', '/clock/advance', { seconds: 600 });
    const reverted = await s.sb.ok('POST', `/snapshots/${snap.id}/revert`);
    expect(reverted.clock).toEqual({ now: frozen.now, frozen: true, advancedMs: 0 });
    expect(await s.sb.ok('GET', '/clock')).toEqual({ now: frozen.now, frozen: true, advancedMs: 0 });
    await s.sb.ok('POST', '/clock/freeze', { frozen: false });
  });

  it('reset returns the seeded venue and drops every snapshot', async () => {
    await s.sb.ok('POST', '/fund', { address: STRANGER, asset: 'USDC', amount: '5' });
    await s.sb.ok('POST', '/clock/advance', { seconds: 7200 });
    const reset = await s.sb.ok('POST', '/reset');
    expect(reset).toMatchObject({ reset: true, clock: { frozen: false, advancedMs: 0 } });
    expect(reset.dropped.length).toBeGreaterThan(0);
    expect(await s.sb.ok('GET', '/snapshots')).toEqual({ snapshots: [] });
    const seeded = await venueState();
    expect(seeded.strangerCash).toBe(0n);
    expect(seeded.openOrders).toEqual([]);
    // The seeded venue trades: its market maker quotes BTC-USD again.
    const perp = new PerpClient({ baseUrl: s.t.demo.perp!.baseUrl, apiKey: s.t.demo.perp!.keys.trader.apiKey, apiSecret: s.t.demo.perp!.keys.trader.apiSecret, chainId: s.t.demo.chainId });
    await until(() => perp.getDepth({ symbol: 'BTC-USD' }), (d) => d.bids.length > 0 && d.asks.length > 0, 60_000);
  });
});
