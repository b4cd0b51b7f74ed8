import { describe, expect, it } from 'vitest';
import type { EngineCommand, EngineEvent, PlaceOrderAccepted, PlaceOrderCommand, TradeEvent } from './engine-types.ts';
import { toJsonSafe } from './engine-types.ts';
import { decimalToSteps, DEFAULT_INSTRUMENTS, instrumentSpec, notionalMicros, stepsToDecimal, type InstrumentConfig } from './instruments.ts';
import { FEE_ACCOUNT, PerpEngine } from './perp-engine.ts';
import { xUsdInstrument, addr } from '../../../test/support/perp-test-instrument.ts';

/** 1 tick = 1 USD, 1 lot = 1 unit: notional = price × lots × 1e6 micro-USD. */
const X = xUsdInstrument();
const A = addr('a');
const B = addr('b');
const C = addr('c');
const M = addr('d'); // a market maker
const T = addr('e'); // a taker
const usd = (d: number): bigint => BigInt(d) * 1_000_000n;

type Cmd = EngineCommand extends infer U ? (U extends EngineCommand ? Omit<U, 'id' | 'ts'> : never) : never;

function setup(instruments: InstrumentConfig[] = [X]) {
  const e = new PerpEngine({ instruments });
  let n = 0;
  const run = (c: Cmd) => e.apply({ id: `c${++n}`, ts: 1_000 + n, ...c } as EngineCommand);
  const order = (account: string, side: 'BUY' | 'SELL', sizeLots: number, priceTicks?: number, extra: Partial<PlaceOrderCommand> = {}) =>
    run({ kind: 'placeOrder', account, symbol: 'X-USD', side, type: priceTicks === undefined ? 'MARKET' : 'LIMIT', priceTicks, sizeLots, ...extra }) as PlaceOrderAccepted;
  return { e, run, order };
}

function rich(s: ReturnType<typeof setup>, ...accounts: string[]): void {
  for (const a of accounts) s.run({ kind: 'deposit', account: a, amount: usd(1_000_000) });
  s.run({ kind: 'setMarkPrice', symbol: 'X-USD', markPriceTicks: 100, indexPriceTicks: 100 });
}

const fillsOf = (r: PlaceOrderAccepted) => r.fills.map((f) => [f.makerOrderId, f.sizeLots, f.priceTicks]);
const typesOf = (events: EngineEvent[]) => events.map((e) => e.type);

describe('matching', () => {
  it('fills by price then time, each at the resting price, and rests nothing of a filled order', () => {
    const s = setup();
    rich(s, A, B, C, T);
    s.order(A, 'SELL', 5, 101); // order 1
    s.order(B, 'SELL', 5, 100); // order 2
    s.order(C, 'SELL', 3, 100); // order 3
    const r = s.order(T, 'BUY', 10, 101);
    expect(r.ok).toBe(true);
    expect(fillsOf(r)).toEqual([
      [2, 5, 100],
      [3, 3, 100],
      [1, 2, 101],
    ]);
    expect(r.order).toEqual({ orderId: 4, status: 'FILLED', sizeLots: 10, filledLots: 10, remainingLots: 0 });
    expect(s.e.depth('X-USD')).toEqual({ bids: [], asks: [[101, 3]] });
    expect(s.e.getOrder(1)).toMatchObject({ filledLots: 2, remainingLots: 3, status: 'PARTIALLY_FILLED' });
    expect(typesOf(r.events)).toEqual([
      'orderAccepted',
      'trade', 'orderDone', 'positionChanged', 'balanceChanged', // B's order 2 filled
      'trade', 'orderDone', 'positionChanged', 'balanceChanged', // C's order 3 filled
      'trade', 'positionChanged', 'balanceChanged', // A's order 1 partly filled
      'orderDone', 'positionChanged', 'balanceChanged', 'balanceChanged', // the taker, then the fee account
    ]);
  });

  it('GTC rests the remainder after partial fills', () => {
    const s = setup();
    rich(s, A, T);
    s.order(A, 'SELL', 4, 100);
    const r = s.order(T, 'BUY', 10, 100);
    expect(r.order).toEqual({ orderId: 2, status: 'PARTIALLY_FILLED', sizeLots: 10, filledLots: 4, remainingLots: 6 });
    expect(s.e.bestBidAsk('X-USD')).toEqual({ bidTicks: 100, askTicks: undefined });
    expect(r.events.find((e) => e.type === 'orderResting')).toMatchObject({ orderId: 2, priceTicks: 100, remainingLots: 6 });
  });

  it('IOC drops the remainder; an IOC or MARKET order that fills nothing is refused without a trace', () => {
    const s = setup();
    rich(s, A, T);
    s.order(A, 'SELL', 4, 100);
    const r = s.order(T, 'BUY', 10, 100, { timeInForce: 'IOC' });
    expect(r.order).toEqual({ orderId: 2, status: 'EXPIRED', sizeLots: 10, filledLots: 4, remainingLots: 0 });
    expect(r.events.find((e) => e.type === 'orderDone' && e.orderId === 2)).toMatchObject({ orderId: 2, status: 'EXPIRED', reason: 'IOC_REMAINDER', filledLots: 4, remainingLots: 6 });
    expect(s.e.depth('X-USD')).toEqual({ bids: [], asks: [] });
    const hash = s.e.stateHash();
    const seq = s.e.lastSeq;
    expect(s.order(T, 'BUY', 1, 100, { timeInForce: 'IOC' })).toMatchObject({ ok: false, code: 'NO_LIQUIDITY', events: [] });
    expect(s.order(T, 'BUY', 1)).toMatchObject({ ok: false, code: 'NO_LIQUIDITY' });
    expect(s.e.stateHash()).toBe(hash);
    expect(s.e.lastSeq).toBe(seq);
    // The refused orders consumed no id.
    expect(s.order(T, 'BUY', 1, 90).order.orderId).toBe(3);
  });

  it('FOK fills in full or changes nothing', () => {
    const s = setup();
    rich(s, A, B, T);
    s.order(A, 'SELL', 4, 100);
    s.order(B, 'SELL', 4, 102);
    const hash = s.e.stateHash();
    expect(s.order(T, 'BUY', 8, 101, { timeInForce: 'FOK' })).toMatchObject({ ok: false, code: 'FOK_NOT_FILLED', events: [] });
    expect(s.order(T, 'BUY', 9, undefined, { timeInForce: 'FOK' })).toMatchObject({ ok: false, code: 'FOK_NOT_FILLED' });
    expect(s.e.stateHash()).toBe(hash);
    const r = s.order(T, 'BUY', 8, 102, { timeInForce: 'FOK' });
    expect(fillsOf(r)).toEqual([
      [1, 4, 100],
      [2, 4, 102],
    ]);
    expect(r.order.status).toBe('FILLED');
  });

  it('POST_ONLY is refused when it would cross and rests otherwise', () => {
    const s = setup();
    rich(s, A, T);
    s.order(A, 'SELL', 4, 100);
    expect(s.order(T, 'BUY', 1, 100, { timeInForce: 'POST_ONLY' })).toMatchObject({ ok: false, code: 'POST_ONLY_WOULD_CROSS' });
    expect(s.order(T, 'BUY', 1, 99, { timeInForce: 'POST_ONLY' }).order).toMatchObject({ status: 'NEW', remainingLots: 1 });
  });
});

describe('market orders', () => {
  it('sweeps without a price and stops at the optional worst price', () => {
    const s = setup();
    rich(s, A, T);
    s.order(A, 'SELL', 2, 100);
    s.order(A, 'SELL', 2, 101);
    s.order(A, 'SELL', 2, 105);
    const worst = s.run({ kind: 'placeOrder', account: T, symbol: 'X-USD', side: 'BUY', type: 'MARKET', priceTicks: 101, sizeLots: 10 }) as PlaceOrderAccepted;
    expect(fillsOf(worst)).toEqual([
      [1, 2, 100],
      [2, 2, 101],
    ]);
    expect(worst.order.status).toBe('EXPIRED');
    const sweep = s.run({ kind: 'placeOrder', account: T, symbol: 'X-USD', side: 'BUY', type: 'MARKET', sizeLots: 10 }) as PlaceOrderAccepted;
    expect(fillsOf(sweep)).toEqual([[3, 2, 105]]);
    expect(sweep.events[0]).toMatchObject({ type: 'orderAccepted', orderType: 'MARKET', timeInForce: 'IOC', priceTicks: null });
  });
});

describe('self-trade prevention', () => {
  it('expires the taker when its first match is its own order', () => {
    const s = setup();
    rich(s, A, B);
    s.order(A, 'SELL', 5, 100);
    s.order(B, 'SELL', 5, 100);
    const r = s.order(A, 'BUY', 10, 101);
    expect(r.ok).toBe(true);
    expect(r.fills).toEqual([]);
    expect(r.order).toEqual({ orderId: 3, status: 'EXPIRED', sizeLots: 10, filledLots: 0, remainingLots: 0 });
    expect(r.events.find((e) => e.type === 'orderDone')).toMatchObject({ reason: 'SELF_TRADE_PREVENTION', remainingLots: 10 });
    expect(s.e.getOrder(1)?.remainingLots).toBe(5); // the resting own order is untouched
    expect(s.e.depth('X-USD')?.asks).toEqual([[100, 10]]);
  });

  it('keeps the fills before the own order and expires the rest', () => {
    const s = setup();
    rich(s, A, B);
    s.order(B, 'SELL', 3, 99);
    s.order(A, 'SELL', 5, 100);
    s.order(B, 'SELL', 5, 100);
    const r = s.order(A, 'BUY', 10, 101);
    expect(fillsOf(r)).toEqual([[1, 3, 99]]);
    expect(r.order).toMatchObject({ status: 'EXPIRED', filledLots: 3, remainingLots: 0 });
    expect(s.e.depth('X-USD')?.asks).toEqual([[100, 10]]);
  });
});

describe('reduce-only', () => {
  it('is refused without a position to reduce and capped to the position', () => {
    const s = setup();
    rich(s, A, M);
    expect(s.order(A, 'SELL', 1, 100, { reduceOnly: true })).toMatchObject({ ok: false, code: 'REDUCE_ONLY_WOULD_INCREASE' });
    s.order(M, 'SELL', 5, 100);
    s.order(A, 'BUY', 5);
    expect(s.order(A, 'BUY', 1, 90, { reduceOnly: true })).toMatchObject({ ok: false, code: 'REDUCE_ONLY_WOULD_INCREASE' });
    s.order(M, 'BUY', 20, 99);
    const r = s.order(A, 'SELL', 8, undefined, { reduceOnly: true });
    expect(r.events[0]).toMatchObject({ type: 'orderAccepted', sizeLots: 5, requestedSizeLots: 8, reduceOnly: true });
    expect(fillsOf(r)).toEqual([[3, 5, 99]]);
    expect(r.order).toMatchObject({ status: 'FILLED', sizeLots: 5, filledLots: 5 });
    expect(s.e.getAccount(A)?.positions[0].sizeLots).toBe(0);
  });

  it('a resting reduce-only order that can no longer reduce is cancelled when reached, not traded', () => {
    const s = setup();
    rich(s, A, M, T);
    s.order(M, 'SELL', 5, 100);
    s.order(A, 'BUY', 5); // A long 5
    const ro = s.order(A, 'SELL', 5, 110, { reduceOnly: true }); // order 3 rests
    expect(ro.order.status).toBe('NEW');
    s.order(M, 'BUY', 5, 99);
    s.order(A, 'SELL', 5); // A flat through another order
    s.order(M, 'SELL', 2, 110); // behind A's reduce-only order at 110
    const r = s.order(T, 'BUY', 3, 110);
    expect(fillsOf(r)).toEqual([[6, 2, 110]]);
    expect(r.events.find((e) => e.type === 'orderDone' && e.orderId === ro.order.orderId)).toMatchObject({ status: 'EXPIRED', reason: 'REDUCE_ONLY', filledLots: 0, remainingLots: 5 });
    expect(s.e.getOrder(ro.order.orderId)).toBeUndefined();
    expect(s.e.getAccount(A)?.reserved).toBe(0n);
    expect(r.order).toMatchObject({ status: 'PARTIALLY_FILLED', remainingLots: 1 });
  });

  it('a resting reduce-only order fills only what is left of the position and then ends', () => {
    const s = setup();
    rich(s, A, M, T);
    s.order(M, 'SELL', 5, 100);
    s.order(A, 'BUY', 5); // long 5
    s.order(A, 'SELL', 4, 105, { reduceOnly: true }); // order 3
    s.order(A, 'SELL', 4, 106, { reduceOnly: true }); // order 4
    const r = s.order(T, 'BUY', 10, 106);
    expect(fillsOf(r)).toEqual([
      [3, 4, 105],
      [4, 1, 106],
    ]);
    expect(r.events.find((e) => e.type === 'orderDone' && e.orderId === 4)).toMatchObject({ reason: 'REDUCE_ONLY', filledLots: 1, remainingLots: 3 });
    expect(s.e.getAccount(A)?.positions[0].sizeLots).toBe(0);
  });
});

describe('clientOrderId', () => {
  it('answers a repeat with the first result and places nothing', () => {
    const s = setup();
    rich(s, A, B);
    const first = s.order(A, 'BUY', 2, 99, { clientOrderId: 'k1' });
    const seq = s.e.lastSeq;
    const again = s.order(A, 'BUY', 7, 98, { clientOrderId: 'k1' });
    expect(again).toEqual({ ok: true, code: 'OK', events: [], fills: [], duplicate: true, order: first.order });
    expect(s.e.lastSeq).toBe(seq);
    expect(s.e.openOrders(A).map((o) => o.orderId)).toEqual([first.order.orderId]);
    // Per account: another account may use the same key.
    expect(s.order(B, 'BUY', 1, 99, { clientOrderId: 'k1' }).duplicate).toBe(false);
    // A refused order leaves the key free.
    expect(s.order(A, 'SELL', 1, 99, { clientOrderId: 'k2', timeInForce: 'POST_ONLY' })).toMatchObject({ ok: false, code: 'POST_ONLY_WOULD_CROSS' });
    expect(s.order(A, 'SELL', 1, 101, { clientOrderId: 'k2' }).duplicate).toBe(false);
  });
});

describe('cancel', () => {
  it('cancels own open orders by id, in batches and all at once, releasing reserves', () => {
    const s = setup([X, { ...X, symbol: 'Y-USD' }]);
    rich(s, A, B);
    const o1 = s.order(A, 'BUY', 1, 90).order.orderId;
    const o2 = s.order(A, 'BUY', 1, 91).order.orderId;
    const o3 = s.run({ kind: 'placeOrder', account: A, symbol: 'Y-USD', side: 'SELL', type: 'LIMIT', priceTicks: 120, sizeLots: 1 }) as PlaceOrderAccepted;
    const o4 = s.order(B, 'BUY', 1, 92).order.orderId;
    const c = s.run({ kind: 'cancelOrder', account: A, orderId: o1 });
    expect(c).toMatchObject({ ok: true });
    expect(c.events).toEqual([
      { seq: expect.any(Number), ts: expect.any(Number), commandId: expect.any(String), type: 'orderDone', orderId: o1, account: A, symbol: 'X-USD', status: 'CANCELED', reason: 'USER_CANCEL', filledLots: 0, remainingLots: 1 },
    ]);
    expect(s.run({ kind: 'cancelOrder', account: A, orderId: o1 })).toMatchObject({ ok: false, code: 'ORDER_NOT_OPEN' });
    expect(s.run({ kind: 'cancelOrder', account: A, orderId: 999 })).toMatchObject({ ok: false, code: 'ORDER_NOT_FOUND' });
    expect(s.run({ kind: 'cancelOrder', account: A, orderId: o4 })).toMatchObject({ ok: false, code: 'ORDER_NOT_FOUND' });
    const batch = s.run({ kind: 'cancelOrders', account: A, orderIds: [o2, o4, o1, -1] });
    expect(batch).toMatchObject({ ok: true, cancels: [
      { orderId: o2, code: 'OK' },
      { orderId: o4, code: 'ORDER_NOT_FOUND' },
      { orderId: o1, code: 'ORDER_NOT_OPEN' },
      { orderId: -1, code: 'INVALID' },
    ] });
    s.order(A, 'BUY', 1, 93);
    expect(s.run({ kind: 'cancelAll', account: A, symbol: 'Y-USD' })).toMatchObject({ ok: true, canceledOrderIds: [o3.order.orderId] });
    expect(s.run({ kind: 'cancelAll', account: A })).toMatchObject({ ok: true, canceledOrderIds: [5] });
    expect(s.e.getAccount(A)?.reserved).toBe(0n);
    expect(s.e.openOrders(B).map((o) => o.orderId)).toEqual([o4]);
  });
});

describe('margin admission', () => {
  it('admits a resting order exactly up to its reserve (initial margin at max(price, mark) + loss against the mark + maker fee)', () => {
    const s = setup();
    s.run({ kind: 'setMarkPrice', symbol: 'X-USD', markPriceTicks: 100, indexPriceTicks: 100 });
    // leverage 10 → 10 % IM: per lot 10_000_000 + maker fee ⌈100e6 × 200 ppm⌉ = 20_000.
    s.run({ kind: 'deposit', account: A, amount: 100_200_000n });
    s.run({ kind: 'deposit', account: B, amount: 100_199_999n });
    expect(s.order(A, 'BUY', 10, 100).ok).toBe(true);
    expect(s.e.marginSummary(A)).toMatchObject({ orderReserve: 100_200_000n, freeCollateral: 0n });
    expect(s.order(B, 'BUY', 10, 100)).toMatchObject({ ok: false, code: 'INSUFFICIENT_MARGIN' });
    // Above the mark: IM at 105 (10_500_000) + loss 5 × 1e6 + fee 21_000 per lot.
    s.run({ kind: 'deposit', account: C, amount: 15_521_000n });
    expect(s.order(C, 'BUY', 1, 105).events.find((e) => e.type === 'orderResting')).toMatchObject({ reserved: 15_521_000n });
    expect(s.e.marginSummary(C)?.freeCollateral).toBe(0n);
  });

  it('admits a taker on its exact post-trade free collateral', () => {
    const s = setup();
    rich(s, M);
    s.order(M, 'SELL', 20, 100);
    // 10 lots at 100: taker fee 500_000, IM 100_000_000 at the mark 100, no unrealised PnL.
    s.run({ kind: 'deposit', account: A, amount: 100_500_000n });
    s.run({ kind: 'deposit', account: B, amount: 100_499_999n });
    const hash = s.e.stateHash();
    expect(s.order(B, 'BUY', 10)).toMatchObject({ ok: false, code: 'INSUFFICIENT_MARGIN' });
    expect(s.e.stateHash()).toBe(hash);
    expect(s.order(A, 'BUY', 10).order.status).toBe('FILLED');
    expect(s.e.marginSummary(A)).toMatchObject({ collateral: 100_000_000n, crossInitialMargin: 100_000_000n, freeCollateral: 0n });
  });

  it('lets an account under water reduce but not add risk', () => {
    const s = setup();
    rich(s, M);
    s.order(M, 'SELL', 10, 100);
    s.run({ kind: 'deposit', account: A, amount: 100_500_000n });
    s.order(A, 'BUY', 10);
    s.run({ kind: 'setMarkPrice', symbol: 'X-USD', markPriceTicks: 95, indexPriceTicks: 95 });
    // collateral 100e6, uPnL −50e6, IM 95e6.
    expect(s.e.marginSummary(A)?.freeCollateral).toBe(-45_000_000n);
    expect(s.order(A, 'BUY', 1, 90)).toMatchObject({ ok: false, code: 'INSUFFICIENT_MARGIN' });
    s.order(M, 'BUY', 10, 95);
    const r = s.order(A, 'SELL', 10, undefined, { reduceOnly: true });
    expect(r.fills[0]).toMatchObject({ priceTicks: 95, sizeLots: 10, takerRealisedPnl: -50_000_000n, takerFee: 475_000n });
    expect(s.e.marginSummary(A)).toMatchObject({ collateral: 49_525_000n, freeCollateral: 49_525_000n });
  });

  it('withdraws up to the withdrawable amount, which leaves out unrealised profit', () => {
    const s = setup();
    rich(s, M);
    s.order(M, 'SELL', 10, 100);
    s.run({ kind: 'deposit', account: A, amount: usd(200) });
    s.order(A, 'BUY', 1); // fee 50_000, IM 10_000_000
    s.run({ kind: 'setMarkPrice', symbol: 'X-USD', markPriceTicks: 120, indexPriceTicks: 120 });
    // collateral 199_950_000, uPnL +20e6 (not withdrawable), IM 12e6.
    expect(s.e.marginSummary(A)).toMatchObject({ freeCollateral: 207_950_000n, withdrawable: 187_950_000n });
    expect(s.run({ kind: 'withdraw', account: A, amount: 187_950_001n })).toMatchObject({ ok: false, code: 'INSUFFICIENT_BALANCE' });
    const w = s.run({ kind: 'withdraw', account: A, amount: 187_950_000n });
    expect(w.events).toMatchObject([{ type: 'balanceChanged', collateral: 12_000_000n, delta: -187_950_000n, reason: 'withdraw' }]);
    expect(s.run({ kind: 'withdraw', account: B, amount: 1n })).toMatchObject({ ok: false, code: 'UNKNOWN_ACCOUNT' });
  });
});

describe('fees, PnL and rounding', () => {
  it('rounds fees up on the default BTC instrument', () => {
    const e = new PerpEngine();
    let n = 0;
    const run = (c: Cmd) => e.apply({ id: `b${++n}`, ts: n, ...c } as EngineCommand);
    run({ kind: 'deposit', account: A, amount: usd(100_000) });
    run({ kind: 'deposit', account: B, amount: usd(100_000) });
    run({ kind: 'setMarkPrice', symbol: 'BTC-USD', markPriceTicks: 500_000, indexPriceTicks: 500_000 });
    run({ kind: 'placeOrder', account: A, symbol: 'BTC-USD', side: 'SELL', type: 'LIMIT', priceTicks: 500_010, sizeLots: 100 });
    const r = run({ kind: 'placeOrder', account: B, symbol: 'BTC-USD', side: 'BUY', type: 'MARKET', sizeLots: 40 }) as PlaceOrderAccepted;
    // 0.004 BTC at 50 001 USD = 200.004 USD: maker 0.02 % = 40_000.8 → 40_001; taker 0.05 % = 100_002.
    expect(r.fills[0]).toMatchObject({ notional: 200_004_000n, makerFee: 40_001n, takerFee: 100_002n });
    expect(e.getAccount(FEE_ACCOUNT)).toMatchObject({ collateral: 140_003n, feesReceived: 140_003n });
  });

  it('realises PnL rounded down on partial closes and exactly over the whole position', () => {
    const s = setup([{ ...X, makerFeeRatePpm: 0, takerFeeRatePpm: 0 }]);
    rich(s, T, M);
    s.order(M, 'SELL', 1, 100);
    s.order(M, 'SELL', 2, 101);
    s.order(T, 'BUY', 3); // T long 3 at cost 302e6, M short 3 at 302e6
    expect(s.e.getAccount(T)?.positions[0]).toMatchObject({ sizeLots: 3, entryNotional: 302_000_000n });
    s.order(M, 'BUY', 1, 102);
    const r1 = s.order(T, 'SELL', 1);
    // Long closes 1/3: cost share ⌈100_666_666.67⌉; short: ⌊100_666_666.67⌋.
    expect(r1.fills[0]).toMatchObject({ takerRealisedPnl: 1_333_333n, makerRealisedPnl: -1_333_334n });
    expect(s.e.getAccount(T)?.positions[0].entryNotional).toBe(201_333_333n);
    expect(s.e.getAccount(M)?.positions[0].entryNotional).toBe(201_333_334n);
    s.order(M, 'BUY', 2, 102);
    const r2 = s.order(T, 'SELL', 2);
    expect(r2.fills[0]).toMatchObject({ takerRealisedPnl: 2_666_667n, makerRealisedPnl: -2_666_666n });
    expect(s.e.getAccount(T)).toMatchObject({ realisedPnl: 4_000_000n, collateral: usd(1_000_000) + 4_000_000n });
    expect(s.e.getAccount(M)).toMatchObject({ realisedPnl: -4_000_000n });
  });

  it('flips a position through zero: closes at the old cost, opens the rest at the fill price', () => {
    const s = setup([{ ...X, makerFeeRatePpm: 0, takerFeeRatePpm: 0 }]);
    rich(s, T, M);
    s.order(M, 'SELL', 2, 100);
    s.order(T, 'BUY', 2);
    s.order(M, 'BUY', 5, 110);
    const r = s.order(T, 'SELL', 5);
    expect(r.fills[0]).toMatchObject({ takerRealisedPnl: 20_000_000n, makerRealisedPnl: -20_000_000n });
    expect(s.e.getAccount(T)?.positions[0]).toMatchObject({ sizeLots: -3, entryNotional: 330_000_000n });
    expect(s.e.getAccount(M)?.positions[0]).toMatchObject({ sizeLots: 3, entryNotional: 330_000_000n });
  });
});

describe('funding', () => {
  it('moves payments at the mark, payers rounded up, receivers down, the remainder to the fee account', () => {
    const s = setup([{ ...X, makerFeeRatePpm: 0, takerFeeRatePpm: 0 }]);
    rich(s, A, B, C);
    s.run({ kind: 'setMarkPrice', symbol: 'X-USD', markPriceTicks: 101, indexPriceTicks: 101 });
    s.order(B, 'SELL', 3, 101);
    s.order(A, 'BUY', 1);
    s.order(C, 'BUY', 2);
    const before = [A, B, C].map((a) => s.e.getAccount(a)!.collateral);
    const r = s.run({ kind: 'applyFunding', symbol: 'X-USD', rateE9: 333n });
    // 101e6 × 333e-9 = 33.633 per lot: A pays ⌈33.633⌉ = 34, C ⌈67.266⌉ = 68, B receives ⌊100.899⌋ = 100.
    expect(r.events.flatMap((e) => (e.type === 'fundingPayment' ? [[e.account, e.amount]] : []))).toEqual([
      [A, -34n],
      [B, 100n],
      [C, -68n],
    ]);
    expect(r.events.at(-1)).toMatchObject({ type: 'fundingApplied', paid: 102n, received: 100n, remainder: 2n });
    expect([A, B, C].map((a, i) => s.e.getAccount(a)!.collateral - before[i])).toEqual([-34n, 100n, -68n]);
    expect(s.e.getAccount(FEE_ACCOUNT)).toMatchObject({ collateral: 2n, funding: 2n });
    // A negative rate: shorts pay.
    const neg = s.run({ kind: 'applyFunding', symbol: 'X-USD', rateE9: -333n });
    expect(neg.events.flatMap((e) => (e.type === 'fundingPayment' ? [e.amount] : []))).toEqual([33n, -101n, 67n]);
    expect(s.e.prices('X-USD')).toMatchObject({ lastFundingRateE9: -333n });
  });
});

describe('isolated margin and leverage', () => {
  it('moves initial margin into the position, adds and removes it within limits, and returns it on close', () => {
    const s = setup();
    rich(s, M);
    s.run({ kind: 'deposit', account: A, amount: usd(1000) });
    expect(s.run({ kind: 'setLeverage', account: A, symbol: 'X-USD', leverage: 5, marginMode: 'isolated' }).events).toMatchObject([
      { type: 'leverageChanged', leverage: 5, marginMode: 'isolated' },
    ]);
    s.order(M, 'SELL', 2, 100);
    s.order(A, 'BUY', 2); // notional 200e6: 20 % into the position, fee 100_000
    expect(s.e.getAccount(A)).toMatchObject({ collateral: 959_900_000n, positions: [{ sizeLots: 2, isolatedMargin: 40_000_000n, marginMode: 'isolated' }] });
    expect(s.run({ kind: 'adjustMargin', account: A, symbol: 'X-USD', amount: 10_000_000n }).ok).toBe(true);
    expect(s.run({ kind: 'adjustMargin', account: A, symbol: 'X-USD', amount: -10_000_001n })).toMatchObject({ ok: false, code: 'INSUFFICIENT_MARGIN' });
    expect(s.run({ kind: 'adjustMargin', account: A, symbol: 'X-USD', amount: -10_000_000n }).events).toMatchObject([
      { type: 'positionChanged', isolatedMargin: 40_000_000n },
      { type: 'balanceChanged', collateral: 959_900_000n, delta: 10_000_000n, reason: 'margin' },
    ]);
    expect(s.run({ kind: 'setLeverage', account: A, symbol: 'X-USD', leverage: 5, marginMode: 'cross' })).toMatchObject({ ok: false, code: 'MARGIN_MODE_LOCKED' });
    expect(s.run({ kind: 'setLeverage', account: A, symbol: 'X-USD', leverage: 4 })).toMatchObject({ ok: false, code: 'INSUFFICIENT_MARGIN' });
    s.run({ kind: 'setMarkPrice', symbol: 'X-USD', markPriceTicks: 90, indexPriceTicks: 90 });
    expect(s.e.marginSummary(A)).toMatchObject({ equity: 959_900_000n + 40_000_000n - 20_000_000n, freeCollateral: 959_900_000n });
    s.order(M, 'BUY', 2, 95);
    s.order(A, 'SELL', 2, undefined, { reduceOnly: true }); // realised −10e6, margin 40e6 back, fee 95_000
    expect(s.e.getAccount(A)).toMatchObject({ collateral: 989_805_000n, positions: [{ sizeLots: 0, isolatedMargin: 0n }] });
    expect(s.run({ kind: 'adjustMargin', account: A, symbol: 'X-USD', amount: 1n })).toMatchObject({ ok: false, code: 'POSITION_NOT_OPEN' });
    expect(s.run({ kind: 'setLeverage', account: A, symbol: 'X-USD', leverage: 5, marginMode: 'cross' }).ok).toBe(true);
  });

  it('checks leverage bounds and re-reserves open orders at the new leverage', () => {
    const s = setup();
    s.run({ kind: 'setMarkPrice', symbol: 'X-USD', markPriceTicks: 100, indexPriceTicks: 100 });
    s.run({ kind: 'deposit', account: A, amount: 100_200_000n });
    s.order(A, 'BUY', 10, 100);
    expect(s.run({ kind: 'setLeverage', account: A, symbol: 'X-USD', leverage: 21 })).toMatchObject({ ok: false, code: 'LEVERAGE_EXCEEDED' });
    expect(s.run({ kind: 'setLeverage', account: A, symbol: 'X-USD', leverage: 0 })).toMatchObject({ ok: false, code: 'INVALID' });
    expect(s.run({ kind: 'setLeverage', account: A, symbol: 'X-USD', leverage: 1.5 })).toMatchObject({ ok: false, code: 'INVALID' });
    expect(s.run({ kind: 'setLeverage', account: A, symbol: 'X-USD', leverage: 20 }).ok).toBe(true);
    expect(s.e.getAccount(A)?.reserved).toBe(50_200_000n); // 5 % IM + fee per lot
    expect(s.run({ kind: 'setLeverage', account: A, symbol: 'X-USD', leverage: 5 })).toMatchObject({ ok: false, code: 'INSUFFICIENT_MARGIN' });
    expect(s.e.getAccount(A)?.reserved).toBe(50_200_000n);
    expect(s.run({ kind: 'setLeverage', account: A, symbol: 'X-USD', leverage: 10 }).ok).toBe(true);
    expect(s.e.marginSummary(A)?.freeCollateral).toBe(0n);
    expect(s.run({ kind: 'setLeverage', account: B, symbol: 'X-USD', leverage: 10 })).toMatchObject({ ok: false, code: 'UNKNOWN_ACCOUNT' });
  });
});

describe('validation', () => {
  it('answers bad input with a code and never throws', () => {
    const s = setup();
    rich(s, A);
    const bad: unknown[] = [
      null, 42, {}, { kind: 'nope', id: 'x', ts: 1 },
      { kind: 'deposit', id: 'x', ts: 1, account: A, amount: 5 },
      { kind: 'deposit', id: 'x', ts: 1, account: A, amount: -5n },
      { kind: 'deposit', id: 'x', ts: -1, account: A, amount: 5n },
      { kind: 'deposit', id: '', ts: 1, account: A, amount: 5n },
      { kind: 'deposit', id: 'x', ts: 1, account: 'alice', amount: 5n },
      { kind: 'placeOrder', id: 'x', ts: 1, account: A, symbol: 'X-USD', side: 'UP', type: 'LIMIT', priceTicks: 1, sizeLots: 1 },
      { kind: 'placeOrder', id: 'x', ts: 1, account: A, symbol: 'X-USD', side: 'BUY', type: 'STOP', priceTicks: 1, sizeLots: 1 },
      { kind: 'placeOrder', id: 'x', ts: 1, account: A, symbol: 'X-USD', side: 'BUY', type: 'LIMIT', sizeLots: 1 },
      { kind: 'placeOrder', id: 'x', ts: 1, account: A, symbol: 'X-USD', side: 'BUY', type: 'LIMIT', priceTicks: 1.5, sizeLots: 1 },
      { kind: 'placeOrder', id: 'x', ts: 1, account: A, symbol: 'X-USD', side: 'BUY', type: 'LIMIT', priceTicks: 1, sizeLots: '1' },
      { kind: 'placeOrder', id: 'x', ts: 1, account: A, symbol: 'X-USD', side: 'BUY', type: 'MARKET', sizeLots: 1, timeInForce: 'GTC' },
      { kind: 'placeOrder', id: 'x', ts: 1, account: A, symbol: 'X-USD', side: 'BUY', type: 'LIMIT', priceTicks: 1, sizeLots: 1, reduceOnly: 'yes' },
      { kind: 'placeOrder', id: 'x', ts: 1, account: A, symbol: 'X-USD', side: 'BUY', type: 'LIMIT', priceTicks: 1, sizeLots: 1, clientOrderId: 7 },
      { kind: 'cancelOrders', id: 'x', ts: 1, account: A, orderIds: [] },
      { kind: 'applyFunding', id: 'x', ts: 1, symbol: 'X-USD', rateE9: 1 },
      { kind: 'applyFunding', id: 'x', ts: 1, symbol: 'X-USD', rateE9: 100_000_001n },
      { kind: 'adjustMargin', id: 'x', ts: 1, account: A, symbol: 'X-USD', amount: 0n },
    ];
    const hash = s.e.stateHash();
    for (const cmd of bad) expect(s.e.apply(cmd as EngineCommand)).toMatchObject({ ok: false, code: 'INVALID', events: [] });
    const order = { kind: 'placeOrder', account: A, symbol: 'X-USD', side: 'BUY', type: 'LIMIT', priceTicks: 100, sizeLots: 1 } as const;
    expect(s.run({ ...order, account: FEE_ACCOUNT })).toMatchObject({ code: 'ACCOUNT_RESERVED' });
    expect(s.run({ ...order, symbol: 'Z-USD' })).toMatchObject({ code: 'UNKNOWN_SYMBOL' });
    expect(s.run({ ...order, account: B })).toMatchObject({ code: 'UNKNOWN_ACCOUNT' });
    expect(s.run({ ...order, sizeLots: 0 })).toMatchObject({ code: 'SIZE_OUT_OF_RANGE' });
    expect(s.run({ ...order, sizeLots: 1_000_001 })).toMatchObject({ code: 'SIZE_OUT_OF_RANGE' });
    expect(s.run({ ...order, priceTicks: 0 })).toMatchObject({ code: 'PRICE_OUT_OF_RANGE' });
    expect(s.run({ ...order, priceTicks: 1_000_001 })).toMatchObject({ code: 'PRICE_OUT_OF_RANGE' });
    expect(s.run({ ...order, expiresAtMs: 5 })).toMatchObject({ code: 'ORDER_EXPIRED' });
    expect(s.run({ kind: 'setMarkPrice', symbol: 'X-USD', markPriceTicks: 0, indexPriceTicks: 1 })).toMatchObject({ code: 'PRICE_OUT_OF_RANGE' });
    expect(s.e.stateHash()).toBe(hash);
  });

  it('refuses limit prices that cross beyond the band around the mark, and lets passive ones rest', () => {
    const s = setup([{ ...X, priceBandPpm: 100_000 }]);
    rich(s, A);
    // The refusal carries the band as it stood, for the API to name its edges in prices.
    expect(s.order(A, 'BUY', 1, 111)).toMatchObject({
      ok: false, code: 'PRICE_OUT_OF_RANGE', detail: { priceBand: { side: 'BUY', priceTicks: 111, lowTicks: 90, highTicks: 110, markTicks: 100, bandPpm: 100_000 } },
    });
    expect(s.order(A, 'SELL', 1, 89)).toMatchObject({
      ok: false, code: 'PRICE_OUT_OF_RANGE', detail: { priceBand: { side: 'SELL', priceTicks: 89, lowTicks: 90, highTicks: 110, markTicks: 100, bandPpm: 100_000 } },
    });
    expect(s.order(A, 'BUY', 1, 110).ok).toBe(true);
    // Far from the mark on the passive side: it cannot trade beyond the band, so it may rest.
    expect(s.order(A, 'BUY', 1, 50).ok).toBe(true);
    expect(s.order(A, 'SELL', 1, 150).ok).toBe(true);
  });
});

describe('events', () => {
  it('number every event from 1 without gaps, skip nothing for refusals and stamp each with its command', () => {
    const s = setup();
    const all: EngineEvent[] = [];
    const push = (r: { events: EngineEvent[] }) => all.push(...r.events);
    push(s.run({ kind: 'deposit', account: A, amount: usd(10_000) }));
    push(s.run({ kind: 'deposit', account: B, amount: usd(10_000) }));
    push(s.order(A, 'BUY', 3, 100, { clientOrderId: 'x' }));
    push(s.order(B, 'BUY', 3, 100, { timeInForce: 'POST_ONLY' }));
    push(s.order(B, 'SELL', 5, 100));
    push(s.order(A, 'BUY', 5, 100, { clientOrderId: 'x' }));
    expect(all.map((e) => e.seq)).toEqual(all.map((_, i) => i + 1));
    expect(s.e.lastSeq).toBe(all.length);
    const trade = all.find((e): e is TradeEvent => e.type === 'trade')!;
    expect(trade).toMatchObject({ commandId: 'c5', ts: 1005, makerOrderId: 1, takerOrderId: 3, makerAccount: A, takerAccount: B, priceTicks: 100, sizeLots: 3, takerSide: 'SELL' });
  });
});

describe('snapshot and restore', () => {
  function busy() {
    const s = setup([X, { ...X, symbol: 'Y-USD' }]);
    rich(s, A, B, C, M);
    s.run({ kind: 'setLeverage', account: C, symbol: 'X-USD', leverage: 4, marginMode: 'isolated' });
    s.order(M, 'SELL', 5, 101);
    s.order(M, 'SELL', 5, 101);
    s.order(A, 'SELL', 5, 101);
    s.order(B, 'BUY', 4, 99, { clientOrderId: 'b1' });
    s.order(C, 'BUY', 7); // isolated long through two makers
    s.order(A, 'BUY', 2, 98);
    s.order(A, 'SELL', 1, 102, { reduceOnly: false });
    s.run({ kind: 'applyFunding', symbol: 'X-USD', rateE9: 12_345n });
    return s;
  }

  it('restores exactly: same hash, same later events, JSON-safe form', () => {
    const live = busy();
    const snap = live.e.snapshot();
    const json = JSON.parse(JSON.stringify(snap));
    expect(json).toEqual(snap);
    const restored = PerpEngine.fromSnapshot(json);
    expect(restored.stateHash()).toBe(live.e.stateHash());
    let n = 100;
    const later: Cmd[] = [
      { kind: 'placeOrder', account: B, symbol: 'X-USD', side: 'BUY', type: 'LIMIT', priceTicks: 101, sizeLots: 6, clientOrderId: 'b2' },
      { kind: 'placeOrder', account: B, symbol: 'X-USD', side: 'BUY', type: 'LIMIT', priceTicks: 99, sizeLots: 1, clientOrderId: 'b1' },
      { kind: 'cancelAll', account: A },
      { kind: 'applyFunding', symbol: 'X-USD', rateE9: -7n },
      { kind: 'adjustMargin', account: C, symbol: 'X-USD', amount: 5n },
    ];
    for (const c of later) {
      const cmd = { id: `l${++n}`, ts: 9_000 + n, ...c } as EngineCommand;
      expect(toJsonSafe(restored.apply(cmd))).toEqual(toJsonSafe(live.e.apply(cmd)));
    }
    expect(restored.stateHash()).toBe(live.e.stateHash());
    // The FIFO of a level survives: M's two orders at 101 were behind nothing and A's behind them.
    expect(restored.openOrders(A).length).toBe(0);
  });

  it('keeps time priority inside a level across a restore', () => {
    const s = setup();
    rich(s, A, B, C, T);
    s.order(A, 'SELL', 1, 100);
    s.order(B, 'SELL', 1, 100);
    s.order(C, 'SELL', 1, 100);
    s.run({ kind: 'cancelOrder', account: A, orderId: 1 });
    s.order(A, 'SELL', 1, 100);
    const r = PerpEngine.fromSnapshot(s.e.snapshot());
    const fill = r.apply({ kind: 'placeOrder', id: 'z', ts: 5, account: T, symbol: 'X-USD', side: 'BUY', type: 'MARKET', sizeLots: 3 }) as PlaceOrderAccepted;
    expect(fill.fills.map((f) => f.makerOrderId)).toEqual([2, 3, 4]);
  });

  it('refuses a snapshot that is not self-consistent', () => {
    const snap = busy().e.snapshot();
    const bad = structuredClone(snap);
    bad.accounts[0].reserved = '1';
    expect(() => PerpEngine.fromSnapshot(bad)).toThrow(/reserve/);
    expect(() => PerpEngine.fromSnapshot({ ...snap, version: 1 } as never)).toThrow(/version/);
  });
});

describe('instruments', () => {
  it('ships the default instruments with exact units', () => {
    expect(DEFAULT_INSTRUMENTS.map((i) => i.symbol)).toEqual(['BTC-USD', 'ETH-USD', 'AAPL-USD', 'TSLA-USD', 'NVDA-USD']);
    expect(DEFAULT_INSTRUMENTS.map((i) => instrumentSpec(i).unitMicros)).toEqual([10n, 10n, 100n, 100n, 100n]);
  });

  it('refuses a configuration whose tick × lot is not a whole micro-USD', () => {
    expect(() => instrumentSpec({ ...X, tickSize: '0.001', lotSize: '0.0001' })).toThrow(/whole number/);
    expect(() => instrumentSpec({ ...X, maintenanceMarginRatioPpm: 60_000 })).toThrow(/maintenance/);
    expect(() => new PerpEngine({ instruments: [X, X] })).toThrow(/twice/);
  });
});

describe('decimal conversion for the API', () => {
  it('turns prices and sizes into whole ticks and lots, refusing anything off the step', () => {
    const btc = instrumentSpec(DEFAULT_INSTRUMENTS[0]);
    expect(decimalToSteps('50000.1', btc.tickSize)).toBe(500_001);
    expect(decimalToSteps('50000', btc.tickSize)).toBe(500_000);
    expect(decimalToSteps('50000.15', btc.tickSize)).toBeNull();
    expect(decimalToSteps('0.0015', btc.lotSize)).toBe(15);
    expect(decimalToSteps('0.00015', btc.lotSize)).toBeNull();
    expect(decimalToSteps('-1', btc.lotSize)).toBeNull();
    expect(decimalToSteps('1e3', btc.lotSize)).toBeNull();
    expect(decimalToSteps('99999999999999999999', '1')).toBeNull();
    expect(stepsToDecimal(500_001, btc.tickSize)).toBe('50000.1');
    expect(stepsToDecimal(500_000, btc.tickSize)).toBe('50000');
    expect(stepsToDecimal(15, btc.lotSize)).toBe('0.0015');
    expect(stepsToDecimal(-3, '0.25')).toBe('-0.75');
    expect(notionalMicros(btc, 500_010, 40)).toBe(200_004_000n);
  });
});
