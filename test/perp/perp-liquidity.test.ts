/**
 * The liquidity pool, the insurance fund and the dead man's switch over real HTTP, with a real
 * engine behind the API (sequencer journalling to SQLite, or PostgreSQL when DATABASE_URL is set,
 * commands and events through their broker form) and the projector writing the history:
 *
 * - liquidity: additions mint exact shares (1 per USD into an empty pool, amount × shares ÷ equity
 *   after), positions and history exact, removal refused inside the lock-up (saying when it ends),
 *   beyond the holder's shares and beyond what the pool can pay, and paid at shares × equity ÷
 *   shares exactly once the lock-up (4 days by default) has passed; Idempotency-Key honoured;
 * - the pool's quoter: nothing without equity, two-sided POST_ONLY levels sized from equity with it,
 *   skewed by its inventory, and a restarted quoter replaces what the last one left;
 * - the insurance fund: a liquidation driven by a mark update pays its fee into the fund, and the
 *   public `insurance-fund` answers the balance and the movement exactly;
 * - `orders/cancel-all-after`: refused below 5 000 ms, armed, and fired by the first mark update at
 *   or after the deadline (the orders cancelled with reason CANCEL_AFTER), or disarmed.
 *
 * AAPL-USD: tick 0.01, lot 0.01, so a lot at P ticks is worth P × 100 µUSD; maker fee 0.02 %,
 * taker 0.05 %, IM floor 5 %, MM 2.5 %, liquidation fee 1 %. Every figure is worked out in the
 * comments.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POOL_ACCOUNT } from '../../src/perp/engine/perp-engine.ts';
import { usd } from '../../src/perp/perp-views.ts';
import { inventorySkewBps, quotesDue } from '../../src/perp/workers/market-maker-task.ts';
import { createPoolQuoterTask } from '../../src/perp/workers/pool-quoter-task.ts';
import { PerpClient, type LiquidityMove } from '@tokex/sdk';
import { refused } from '../support/perp-refusal.ts';
import { newTrader, perpHarnessVariants, USD, type PerpHarness, type PerpTrader } from '../support/perp-api-harness.ts';

const AAPL = 'AAPL-USD';
const LOCKUP = 345_600_000;

type Trader = PerpTrader;
type Permission = 'READ' | 'TRADE' | 'TRANSFER';

/** A trader of the harness, allowed TRANSFER too unless said (liquidity moves need it). */
const newLpTrader = (h: PerpHarness, deposit: bigint, permissions: Permission[] = ['READ', 'TRADE', 'TRANSFER']): Promise<Trader> => newTrader(h, deposit, permissions);

describe('quoting helpers shared by the market maker and the pool', () => {
  it('inventorySkewBps: against the inventory, in proportion, full at the maximum and no further', () => {
    expect(inventorySkewBps(0n, 1_000n, 20n)).toBe(0n);
    expect(inventorySkewBps(500n, 1_000n, 20n)).toBe(-10n);
    expect(inventorySkewBps(-500n, 1_000n, 20n)).toBe(10n);
    // −(999 × 20) / 1 000 = −19.98, truncated toward zero.
    expect(inventorySkewBps(999n, 1_000n, 20n)).toBe(-19n);
    expect(inventorySkewBps(5_000n, 1_000n, 20n)).toBe(-20n);
    expect(inventorySkewBps(-5_000n, 1_000n, 20n)).toBe(20n);
    expect(inventorySkewBps(5_000n, 0n, 20n)).toBe(0n);
  });

  it('quotesDue: never quoted, a fill, the index moved requoteBps, or old enough', () => {
    const last = { index: 20_000n, at: 1_000, restingLots: 10 };
    const open = [{ remainingLots: 10 }] as never;
    expect(quotesDue(undefined, [], 20_000n, 1_000, 5n, 30_000)).toBe(true);
    expect(quotesDue(last, open, 20_000n, 1_000, 5n, 30_000)).toBe(false);
    expect(quotesDue(last, [{ remainingLots: 9 }] as never, 20_000n, 1_000, 5n, 30_000)).toBe(true);
    // 9 ticks of 20 000 is 4.5 bps; 10 is 5.
    expect(quotesDue(last, open, 20_009n, 1_000, 5n, 30_000)).toBe(false);
    expect(quotesDue(last, open, 19_990n, 1_000, 5n, 30_000)).toBe(true);
    expect(quotesDue(last, open, 20_000n, 30_999, 5n, 30_000)).toBe(false);
    expect(quotesDue(last, open, 20_000n, 31_000, 5n, 30_000)).toBe(true);
  });
});

describe.each(perpHarnessVariants())('the liquidity pool over HTTP ($name)', (variant) => {
  let h: PerpHarness;
  /** The API's and its clients' clock: moved past the lock-up by the last tests. */
  let offset = 0;
  const now = () => Date.now() + offset;
  let lp1: Trader;
  let lp2: Trader;
  let taker: Trader;
  let noTransfer: Trader;
  const engine = () => h.venue!.sequencer.engine;
  const hash = () => engine().stateHash();
  const poolQuotes = () => engine().openOrders(POOL_ACCOUNT, AAPL).map((o) => [o.side, o.priceTicks, o.sizeLots, o.timeInForce, o.type]);
  // Visible skew: full (100 bps) at an inventory of 1 % of equity.
  const quoter = () =>
    createPoolQuoterTask({ gateway: h.venue!.gateway, engine, now, levels: 3, halfSpreadBps: 10, stepBps: 10, levelEquityBps: 50, skewBps: 100, maxInventoryEquityBps: 100 });
  let adds: { lp1: LiquidityMove; lp2: LiquidityMove };

  beforeAll(async () => {
    h = await variant.start({ engine: true, limit: 10_000, now });
    await h.venue!.mark(AAPL, 20_000);
    lp1 = await newLpTrader(h, 200_000n * USD);
    lp2 = await newLpTrader(h, 100_000n * USD);
    taker = await newLpTrader(h, 50_000n * USD, ['READ', 'TRADE']);
    noTransfer = await newLpTrader(h, 1_000n * USD, ['READ', 'TRADE']);
  });
  afterAll(async () => {
    await h?.stop();
  });

  it('the pool quotes nothing while it has no shares', async () => {
    expect(engine().pool()).toEqual({ equity: 0n, collateral: 0n, totalShares: 0n, holders: 0 });
    await quoter().runOnce();
    expect(poolQuotes()).toEqual([]);
    expect(engine().depth(AAPL, 10)).toEqual({ bids: [], asks: [] });
  });

  it('an addition mints 1 share per USD into the empty pool, pro rata after; positions, history and balances exact', async () => {
    const a1 = await lp1.api.addLiquidity('100000');
    expect(a1).toEqual({ action: 'ADD', amount: '100000', shares: '100000', lockedUntil: a1.ts + LOCKUP, ts: a1.ts });
    // Equity 100 000, 100 000 shares: 50 000.5 USD mint 50 000.5 × 100 000 ÷ 100 000.
    const a2 = await lp2.api.addLiquidity('50000.5');
    expect(a2).toEqual({ action: 'ADD', amount: '50000.5', shares: '50000.5', lockedUntil: a2.ts + LOCKUP, ts: a2.ts });
    adds = { lp1: a1, lp2: a2 };

    expect(await lp1.api.liquidityPositions()).toEqual({
      shares: '100000', value: '100000', netDeposited: '100000', pnl: '0', lockedUntil: a1.lockedUntil, poolEquity: '150000.5', totalShares: '150000.5',
    });
    expect(await taker.api.liquidityPositions()).toEqual({
      shares: '0', value: '0', netDeposited: '0', pnl: '0', lockedUntil: null, poolEquity: '150000.5', totalShares: '150000.5',
    });
    // The collateral left the account: 200 000 − 100 000.
    expect(await lp1.api.get('account')).toMatchObject({ balance: '100000', withdrawable: '100000' });
    expect(engine().pool()).toEqual({ equity: 150_000_500_000n, collateral: 150_000_500_000n, totalShares: 150_000_500_000n, holders: 2 });

    await h.venue!.settled();
    const history = await lp2.api.liquidityHistory();
    expect(history).toEqual({
      total: 1,
      rows: [{
        id: expect.stringMatching(/^[1-9][0-9]*$/), action: 'ADD', amount: '50000.5', shares: '50000.5', holderShares: '50000.5',
        totalShares: '150000.5', poolEquity: '150000.5', lockedUntil: a2.lockedUntil, ts: a2.ts,
      }],
    });
    expect((await lp1.api.liquidityHistory()).rows.map((r: any) => [r.action, r.amount, r.totalShares, r.poolEquity])).toEqual([['ADD', '100000', '100000', '100000']]);
    // The time range filters.
    expect((await lp1.api.liquidityHistory({ startTime: a1.ts + 1 })).total).toBe(0);
    expect((await lp1.api.liquidityHistory({ startTime: a1.ts, endTime: a1.ts })).total).toBe(1);
  });

  it('refusals: no TRANSFER permission, more than withdrawable, malformed amounts, removal inside the lock-up or beyond the shares; nothing changes', async () => {
    const before = hash();
    expect(await refused(noTransfer.api.addLiquidity('10'))).toMatchObject({ code: 30001, httpStatus: 403 });
    expect(await refused(noTransfer.api.removeLiquidity('10'))).toMatchObject({ code: 30001, httpStatus: 403 });
    // READ is enough to look.
    expect(await noTransfer.api.liquidityPositions()).toMatchObject({ shares: '0' });

    const tooMuch = await refused(lp1.api.addLiquidity('100000.000001'));
    expect(tooMuch).toMatchObject({ code: 51002, httpStatus: 400, msg: expect.stringContaining('amount: more than the 100000 USD the account can withdraw') });
    for (const amount of ['0', '1.0000001', '-5', '1e3']) expect(await refused(lp1.api.addLiquidity(amount))).toMatchObject({ code: 10000 });
    expect((await refused(lp1.api.addLiquidity('0'))).msg).toContain('amount: must be greater than zero');

    // Inside the lock-up: refused with its end, in the message and in data.
    const locked = await lp1.api.request<any>('POST', 'liquidity/remove', { body: { shares: '100' } });
    expect(locked).toMatchObject({ code: 51023, httpStatus: 400, data: { lockedUntil: adds.lp1.lockedUntil } });
    expect(locked.msg).toBe(`shares: locked until ${new Date(adds.lp1.lockedUntil).toISOString()} (${adds.lp1.lockedUntil} ms), counted from the latest addition`);
    expect(await refused(lp1.api.removeLiquidity('100000.000001'))).toMatchObject({ code: 51024, msg: expect.stringContaining('shares: more than the 100000 the account holds') });
    // An account that never deposited holds none either.
    const stranger = await newLpTrader(h, 0n);
    expect(await refused(stranger.api.removeLiquidity('1'))).toMatchObject({ code: 51024, msg: expect.stringContaining('shares: more than the 0 the account holds') });
    expect(await refused(noTransfer.api.post('liquidity/remove', { shares: '1.5', extra: 1 }))).toMatchObject({ code: 30001 });
    expect(hash()).toBe(before);
  });

  it('the pool quotes both sides from its equity, a restarted quoter replaces what the last one left, and it skews against its inventory', async () => {
    const first = quoter();
    await first.runOnce();
    // Level notional 0.5 % of 150 000.5 = 750.0025 USD. Bids ⌊20 000 × (1 − 10, 20, 30 bps)⌋ = 19 980,
    // 19 960, 19 940; asks ⌈20 000 × (1 + …)⌉ = 20 020, 20 040, 20 060. Lots ⌊750 002 500 ÷ (price × 100)⌋:
    // 375.38 → 375, 375.75 → 375, 376.13 → 376; 374.63 → 374, 374.25 → 374, 373.88 → 373.
    const ladder = [
      ['BUY', 19_980, 375, 'POST_ONLY', 'LIMIT'], ['SELL', 20_020, 374, 'POST_ONLY', 'LIMIT'],
      ['BUY', 19_960, 375, 'POST_ONLY', 'LIMIT'], ['SELL', 20_040, 374, 'POST_ONLY', 'LIMIT'],
      ['BUY', 19_940, 376, 'POST_ONLY', 'LIMIT'], ['SELL', 20_060, 373, 'POST_ONLY', 'LIMIT'],
    ];
    expect(poolQuotes().sort()).toEqual([...ladder].sort());
    // No index on the other books: nothing there.
    for (const s of ['BTC-USD', 'ETH-USD', 'TSLA-USD', 'NVDA-USD']) expect(engine().openOrders(POOL_ACCOUNT, s)).toEqual([]);
    const firstIds = engine().openOrders(POOL_ACCOUNT, AAPL).map((o) => o.orderId);

    // A quoter started afresh (a restart) cancels every level it finds and quotes again.
    await quoter().runOnce();
    const secondIds = engine().openOrders(POOL_ACCOUNT, AAPL).map((o) => o.orderId);
    expect(poolQuotes().sort()).toEqual([...ladder].sort());
    expect(secondIds.filter((id) => firstIds.includes(id))).toEqual([]);
    expect(secondIds).toHaveLength(6);

    // A taker sells 3.75 into the best bid: the pool buys 375 lots at 199.80 (749.25 USD, maker fee
    // 0.14985), so its equity is 150 000.5 − 0.14985 + 375 × 100 × (20 000 − 19 980) µUSD = 150 001.10015.
    await h.venue!.mark(AAPL, 20_000);
    const sold = await taker.api.placeOrder<any>(taker.wallet, { symbol: AAPL, side: 'SELL', type: 'MARKET', size: '3.75' });
    expect(sold).toMatchObject({ status: 'FILLED', avgPrice: '199.8', filledSize: '3.75' });
    expect(engine().pool()).toMatchObject({ equity: 150_001_100_150n, totalShares: 150_000_500_000n });

    // One of its levels filled: the next round requotes. Level 0.5 % of the new equity = 750.0055005
    // → 750 005 500 µUSD; inventory 375 × 20 000 × 100 = 750 USD against a full skew at 1 % of equity
    // (1 500.011001): −⌊750 × 100 ÷ 1 500.011001⌋ = −49 bps. Bids ⌊20 000 × (1 − (10, 20, 30 + 49) bps)⌋
    // = 19 882, 19 862, 19 842; asks ⌈20 000 × (1 + (10, 20, 30 − 49) bps)⌉ = 19 922, 19 942, 19 962;
    // lots ⌊750 005 500 ÷ (price × 100)⌋ = 377, 377, 377 and 376, 376, 375.
    await first.runOnce();
    expect(poolQuotes().sort()).toEqual([
      ['BUY', 19_882, 377, 'POST_ONLY', 'LIMIT'], ['SELL', 19_922, 376, 'POST_ONLY', 'LIMIT'],
      ['BUY', 19_862, 377, 'POST_ONLY', 'LIMIT'], ['SELL', 19_942, 376, 'POST_ONLY', 'LIMIT'],
      ['BUY', 19_842, 377, 'POST_ONLY', 'LIMIT'], ['SELL', 19_962, 375, 'POST_ONLY', 'LIMIT'],
    ].sort());
  });

  it('an addition after the pool made money mints amount × shares ÷ equity, rounded down; values follow', async () => {
    // 1 000 USD × 150 000.5 shares ÷ 150 001.10015 USD = 999.9959990293… → 999.995999 shares.
    const a = await lp2.api.addLiquidity('1000');
    expect(a).toEqual({ action: 'ADD', amount: '1000', shares: '999.995999', lockedUntil: a.ts + LOCKUP, ts: a.ts });
    adds.lp2 = a;
    // Equity 151 001.10015, shares 151 000.495999: lp1's 100 000 are worth 100 000.400098686 → 100 000.400098.
    expect(await lp1.api.liquidityPositions()).toEqual({
      shares: '100000', value: '100000.400098', netDeposited: '100000', pnl: '0.400098', lockedUntil: adds.lp1.lockedUntil,
      poolEquity: '151001.10015', totalShares: '151000.495999',
    });
    // The latest addition moved lp2's lock-up.
    expect(await lp2.api.liquidityPositions()).toMatchObject({ shares: '51000.495999', netDeposited: '51000.5', lockedUntil: a.lockedUntil });
  });

  it('after the lock-up a removal pays shares × equity ÷ shares exactly; the last holder cannot take what the pool\'s margin needs', async () => {
    offset = LOCKUP + 60_000;
    // 30 000 × 151 001.10015 ÷ 151 000.495999 = 30 000.1200296… → 30 000.120029 USD.
    const r1 = await lp1.api.removeLiquidity('30000');
    expect(r1).toEqual({ action: 'REMOVE', amount: '30000.120029', shares: '30000', lockedUntil: adds.lp1.lockedUntil, ts: r1.ts });
    // 200 000 − 100 000 + 30 000.120029.
    expect(await lp1.api.get('account')).toMatchObject({ balance: '130000.120029' });
    // Equity 121 000.980121, shares 121 000.495999: 70 000 shares are worth 70 000.280069430… → 70 000.280069.
    expect(await lp1.api.liquidityPositions()).toEqual({
      shares: '70000', value: '70000.280069', netDeposited: '69999.879971', pnl: '0.400098', lockedUntil: adds.lp1.lockedUntil,
      poolEquity: '121000.980121', totalShares: '121000.495999',
    });
    const r2 = await lp1.api.removeLiquidity('70000');
    expect(r2).toMatchObject({ action: 'REMOVE', amount: '70000.280069', shares: '70000' });
    expect(await lp1.api.liquidityPositions()).toEqual({
      shares: '0', value: '0', netDeposited: '0', pnl: '0', lockedUntil: null, poolEquity: '51000.700052', totalShares: '51000.495999',
    });

    // lp2 holds every share now, worth the whole equity; the pool's position and orders need margin.
    const before = hash();
    const most = engine().marginSummary(POOL_ACCOUNT)!.withdrawable;
    expect(most < 51_000_700_052n).toBe(true);
    const all = await lp2.api.request<any>('POST', 'liquidity/remove', { body: { shares: '51000.495999' } });
    expect(all).toMatchObject({ code: 51025, data: { maxAmount: usd(most) } });
    expect(all.msg).toBe(`shares: the pool can pay out at most ${usd(most)} USD now without falling below the initial margin of its positions and orders`);
    expect(hash()).toBe(before);

    await h.venue!.settled();
    const history = await lp1.api.liquidityHistory();
    expect(history.rows.map((r: any) => [r.action, r.amount, r.shares, r.holderShares, r.totalShares, r.poolEquity, r.ts])).toEqual([
      ['REMOVE', '70000.280069', '70000', '0', '51000.495999', '51000.700052', r2.ts],
      ['REMOVE', '30000.120029', '30000', '70000', '121000.495999', '121000.980121', r1.ts],
      ['ADD', '100000', '100000', '100000', '100000', '100000', adds.lp1.ts],
    ]);
    expect((await lp1.api.liquidityHistory({ limit: 1, page: 2 })).rows.map((r: any) => r.amount)).toEqual(['30000.120029']);
  });
});

describe.each(perpHarnessVariants())('the insurance fund and the dead man\'s switch over HTTP ($name)', (variant) => {
  let h: PerpHarness;
  let alice: Trader;
  let bob: Trader;
  let carol: Trader;
  let dave: Trader;
  const engine = () => h.venue!.sequencer.engine;
  let n = 0;
  const mark = async (ticks: number, ts: number) => {
    const r = await h.venue!.gateway.submit({ kind: 'setMarkPrice', id: `mark:test-${++n}-${ts}`, ts, symbol: AAPL, markPriceTicks: ticks, indexPriceTicks: ticks });
    expect(r.ok).toBe(true);
  };

  beforeAll(async () => {
    h = await variant.start({ engine: true, limit: 10_000 });
    await h.venue!.mark(AAPL, 20_000);
    alice = await newLpTrader(h, 10_000n * USD);
    bob = await newLpTrader(h, 10_000n * USD);
    carol = await newLpTrader(h, 100n * USD);
    dave = await newLpTrader(h, 1_000n * USD);
  });
  afterAll(async () => {
    await h?.stop();
  });

  it('GET insurance-fund needs no key and starts empty', async () => {
    expect(await PerpClient.insuranceFund(h.baseUrl)).toEqual({
      balance: '0', feesReceived: '0', badDebtPaid: '0', openBadDebt: 0, openBadDebtAccounts: [], movements: { total: 0, rows: [] },
    });
  });

  it('a liquidation through the book pays its fee into the fund: the balance and the movement exact', async () => {
    // Carol buys 4 at 200 with 100 USD (taker fee 0.4): collateral 99.6. Bob bids 4 at 178.
    await alice.api.placeOrder(alice.wallet, { symbol: AAPL, side: 'SELL', type: 'LIMIT', size: '4', price: '200' });
    expect(await carol.api.placeOrder<any>(carol.wallet, { symbol: AAPL, side: 'BUY', type: 'LIMIT', size: '4', price: '200' })).toMatchObject({ status: 'FILLED', fee: '0.4' });
    await bob.api.placeOrder(bob.wallet, { symbol: AAPL, side: 'BUY', type: 'LIMIT', size: '4', price: '178' });

    // Mark 179: equity 99.6 + 4 × (179 − 200) = 15.6 < MM 2.5 % × 716 = 17.9, and ≥ ⅔ MM (11.93): the
    // book closes it with an IOC bounded by Pb = 179 − 15.6 ÷ 4 = 175.10. It fills 4 at Bob's 178
    // (712 USD); fee min(1 % × 712, 712 − 4 × 175.10) = min(7.12, 11.6) = 7.12 to the fund.
    await mark(17_900, Date.now());
    expect(engine().getAccount(carol.account)!.positions.find((p) => p.symbol === AAPL)?.sizeLots ?? 0).toBe(0);
    // 99.6 − 88 realised − 7.12.
    expect(engine().getAccount(carol.account)!.collateral).toBe(4_480_000n);
    expect(engine().insuranceFund()).toEqual({ balance: 7_120_000n, feesReceived: 7_120_000n, badDebtPaid: 0n, openBadDebt: [] });

    await h.venue!.settled();
    const fund = await PerpClient.insuranceFund<any>(h.baseUrl);
    expect(fund).toEqual({
      balance: '7.12', feesReceived: '7.12', badDebtPaid: '0', openBadDebt: 0, openBadDebtAccounts: [],
      movements: { total: 1, rows: [{ id: expect.stringMatching(/^[1-9][0-9]*$/), reason: 'liquidationFee', account: carol.account, delta: '7.12', balance: '7.12', ts: expect.any(Number) }] },
    });
    // Paged like every list; a signed request is served too.
    expect((await PerpClient.insuranceFund<any>(h.baseUrl, { page: 2 })).movements).toEqual({ total: 1, rows: [] });
    expect((await dave.api.get<any>('insurance-fund')).balance).toBe('7.12');
  });

  it('cancel-all-after: below 5 000 ms refused naming timeoutMs; armed, it cancels the orders at the first mark update from the deadline', async () => {
    for (const timeoutMs of [4_999, 1, 86_400_001, -1]) {
      const r = await dave.api.request<any>('POST', 'orders/cancel-all-after', { body: { timeoutMs } });
      expect(r).toMatchObject({ code: 10000, httpStatus: 400, data: { field: 'timeoutMs' } });
      expect(r.msg).toBe('timeoutMs: must be 0 (disarm) or from 5000 to 86400000 ms');
    }
    expect(engine().cancelAfterDeadline(dave.account)).toBe(0);

    const order = await dave.api.placeOrder<any>(dave.wallet, { symbol: AAPL, side: 'BUY', type: 'LIMIT', size: '1', price: '150' });
    const armed = await dave.api.cancelAllAfter(5_000);
    expect(armed).toEqual({ armed: true, deadline: engine().cancelAfterDeadline(dave.account), timeoutMs: 5_000 });
    const deadline = armed.deadline!;
    expect(Math.abs(deadline - 5_000 - Date.now())).toBeLessThan(5_000);

    // A mark a millisecond before the deadline leaves it; the first at the deadline fires it.
    await mark(17_900, deadline - 1);
    expect((await dave.api.get<any>('orders/open')).total).toBe(1);
    await mark(17_900, deadline);
    expect((await dave.api.get<any>('orders/open')).total).toBe(0);
    expect(engine().cancelAfterDeadline(dave.account)).toBe(0);
    await h.venue!.settled();
    expect((await dave.api.get<any>('orders/history', { status: 'CANCELED' })).rows).toEqual([
      expect.objectContaining({ orderId: order.orderId, status: 'CANCELED', reason: 'CANCEL_AFTER', updatedAt: deadline }),
    ]);
  });

  it('cancel-all-after 0 disarms: the orders stay; re-arming moves the deadline', async () => {
    const order = await dave.api.placeOrder<any>(dave.wallet, { symbol: AAPL, side: 'BUY', type: 'LIMIT', size: '1', price: '151' });
    const a = await dave.api.cancelAllAfter(60_000);
    const b = await dave.api.cancelAllAfter(120_000);
    expect(b.deadline! - a.deadline!).toBeGreaterThanOrEqual(60_000);
    expect(engine().cancelAfterDeadline(dave.account)).toBe(b.deadline);
    expect(await dave.api.cancelAllAfter(0)).toEqual({ armed: false, deadline: null, timeoutMs: 0 });
    expect(engine().cancelAfterDeadline(dave.account)).toBe(0);
    await mark(17_900, b.deadline! + 1);
    expect((await dave.api.get<any>('orders/open')).rows.map((o: any) => o.orderId)).toEqual([order.orderId]);
    // TRADE is needed; a retry with the same Idempotency-Key is answered alike.
    const reader = await newLpTrader(h, 0n, ['READ']);
    expect(await refused(reader.api.cancelAllAfter(5_000))).toMatchObject({ code: 30001, httpStatus: 403 });
    const key = `dms-${Date.now()}`;
    const first = await dave.api.cancelAllAfter(10_000, { idempotencyKey: key });
    expect(await dave.api.cancelAllAfter(10_000, { idempotencyKey: key })).toEqual(first);
    expect(engine().cancelAfterDeadline(dave.account)).toBe(first.deadline);
    // An account that never deposited has no switch to arm.
    const stranger = await newLpTrader(h, 0n, ['READ', 'TRADE']);
    expect(await refused(stranger.api.cancelAllAfter(5_000))).toMatchObject({ code: 51018, httpStatus: 400 });
  });

  it('Idempotency-Key on liquidity/add: the same addition twice is applied once and answered alike; the key with another amount is 10002', async () => {
    const key = `add-${Date.now()}`;
    const first = await dave.api.addLiquidity('10', { idempotencyKey: key });
    const again = await dave.api.addLiquidity('10.000000', { idempotencyKey: key });
    expect(again).toEqual(first);
    expect(first).toMatchObject({ action: 'ADD', amount: '10', shares: '10' });
    expect(engine().lpPosition(dave.account)).toMatchObject({ shares: 10_000_000n, netDeposited: 10_000_000n });
    const before = engine().stateHash();
    expect(await refused(dave.api.addLiquidity('11', { idempotencyKey: key }))).toMatchObject({ code: 10002 });
    expect(engine().stateHash()).toBe(before);
    // Without a key, each request is new.
    await dave.api.request('POST', 'liquidity/add', { body: { amount: '1' } });
    await dave.api.request('POST', 'liquidity/add', { body: { amount: '1' } });
    expect(engine().lpPosition(dave.account)!.shares).toBe(12_000_000n);
  });
});
