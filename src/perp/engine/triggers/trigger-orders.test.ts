import { describe, expect, it } from 'vitest';
import type { AmendAccepted, EngineCommand, EngineEvent, PlaceOrderAccepted, PlaceOrderCommand, Rejected } from '../engine-types.ts';
import { PerpEngine } from '../perp-engine.ts';
import { xUsdInstrument, addr } from '../../../../test/support/perp-test-instrument.ts';

/** 1 tick = 1 USD, 1 lot = 1 unit. Band 10 % so that fired orders can be refused by it. */
const X = xUsdInstrument({ priceBandPpm: 100_000 });
const A = addr('a');
const M = addr('d');
const T = addr('e');
const usd = (d: number): bigint => BigInt(d) * 1_000_000n;

type Cmd = EngineCommand extends infer U ? (U extends EngineCommand ? Omit<U, 'id' | 'ts'> : never) : never;

function setup() {
  const e = new PerpEngine({ instruments: [X] });
  let n = 0;
  const run = (c: Cmd) => e.apply({ id: `c${++n}`, ts: 1_000 + n, ...c } as EngineCommand);
  const order = (account: string, side: 'BUY' | 'SELL', sizeLots: number, priceTicks?: number, extra: Partial<PlaceOrderCommand> = {}) =>
    run({ kind: 'placeOrder', account, symbol: 'X-USD', side, type: priceTicks === undefined ? 'MARKET' : 'LIMIT', priceTicks, sizeLots, ...extra }) as PlaceOrderAccepted;
  const trigger = (account: string, side: 'BUY' | 'SELL', type: PlaceOrderCommand['type'], triggerPriceTicks: number, extra: Partial<PlaceOrderCommand> = {}) =>
    run({ kind: 'placeOrder', account, symbol: 'X-USD', side, type, triggerPriceTicks, sizeLots: 1, ...extra }) as PlaceOrderAccepted | Rejected;
  const mark = (ticks: number) => run({ kind: 'setMarkPrice', symbol: 'X-USD', markPriceTicks: ticks, indexPriceTicks: ticks });
  for (const a of [A, M, T]) run({ kind: 'deposit', account: a, amount: usd(1_000_000) });
  mark(100);
  return { e, run, order, trigger, mark };
}

const ofType = <T extends EngineEvent['type']>(events: EngineEvent[], type: T) => events.filter((x): x is Extract<EngineEvent, { type: T }> => x.type === type);

describe('trigger orders', () => {
  it('rest UNTRIGGERED off the book, fire once on the mark that reaches them, and trade as the order they carry', () => {
    const s = setup();
    s.order(M, 'BUY', 10, 95); // liquidity for the stop to sell into
    s.order(T, 'SELL', 3, 100);
    s.order(A, 'BUY', 3); // A long 3 at 100
    const stop = s.trigger(A, 'SELL', 'STOP_MARKET', 96, { sizeLots: 3, reduceOnly: true }) as PlaceOrderAccepted;
    expect(stop.order).toEqual({ orderId: 4, status: 'UNTRIGGERED', sizeLots: 3, filledLots: 0, remainingLots: 3 });
    expect(s.e.depth('X-USD')).toEqual({ bids: [[95, 10]], asks: [] });
    expect(s.e.getOrder(4)).toMatchObject({ status: 'UNTRIGGERED', trigger: { priceTicks: 96, by: 'MARK', closePosition: false } });

    expect(ofType(s.mark(97).events, 'orderTriggered')).toEqual([]);
    const fired = s.mark(96).events;
    expect(ofType(fired, 'orderTriggered')).toMatchObject([{ orderId: 4, triggerPriceTicks: 96, firedAtTicks: 96, sizeLots: 3 }]);
    expect(ofType(fired, 'trade').map((t) => [t.takerOrderId, t.sizeLots, t.priceTicks])).toEqual([[4, 3, 95]]);
    expect(ofType(fired, 'orderDone')).toMatchObject([{ orderId: 4, status: 'FILLED' }]);
    expect(s.e.getAccount(A)!.positions[0].sizeLots).toBe(0);
    // Once: a later mark below it fires nothing.
    expect(ofType(s.mark(90).events, 'orderTriggered')).toEqual([]);
    expect(s.e.waitingTriggers('X-USD')).toBe(0);
  });

  it('refuses a trigger the watched price has already reached, and one without a price to watch', () => {
    const s = setup();
    expect(s.trigger(A, 'SELL', 'STOP_MARKET', 100)).toMatchObject({ ok: false, code: 'TRIGGER_WOULD_FIRE' });
    expect(s.trigger(A, 'BUY', 'STOP_MARKET', 99)).toMatchObject({ ok: false, code: 'TRIGGER_WOULD_FIRE' });
    expect(s.trigger(A, 'SELL', 'TAKE_PROFIT_MARKET', 99)).toMatchObject({ ok: false, code: 'TRIGGER_WOULD_FIRE' });
    expect(s.trigger(A, 'BUY', 'STOP_MARKET', 101, { triggerBy: 'LAST' })).toMatchObject({ ok: false, code: 'NO_TRIGGER_PRICE' });
    expect(s.trigger(A, 'SELL', 'STOP_LIMIT', 90)).toMatchObject({ ok: false, code: 'INVALID' }); // no limit price
    expect(s.trigger(A, 'SELL', 'STOP_MARKET', 90, { closePosition: true })).toMatchObject({ ok: false, code: 'POSITION_NOT_OPEN' });
  });

  it('reserves margin for a trigger that can open exposure, and nothing for a reduce-only one', () => {
    const s = setup();
    const before = s.e.marginSummary(A)!.orderReserve;
    expect(before).toBe(0n);
    s.trigger(A, 'BUY', 'STOP_LIMIT', 105, { sizeLots: 10, priceTicks: 106 });
    // As a resting buy of 10 at 106 with the mark at 100: the 6-tick gap, 10 % IM (the default 10x) at 106, the maker fee.
    const perLot = usd(6) + (106n * 1_000_000n * 100_000n) / 1_000_000n + (106n * 1_000_000n * 200n) / 1_000_000n;
    expect(s.e.marginSummary(A)!.orderReserve).toBe(perLot * 10n);
    s.order(M, 'SELL', 2, 101);
    s.order(A, 'BUY', 2); // long 2
    s.trigger(A, 'SELL', 'STOP_MARKET', 90, { sizeLots: 2, reduceOnly: true });
    expect(s.e.marginSummary(A)!.orderReserve).toBe(perLot * 10n);
  });

  it('closePosition triggers close what is held when they fire and cancel each other when the position closes (OCO)', () => {
    const s = setup();
    s.order(M, 'SELL', 5, 101);
    s.order(A, 'BUY', 5); // A long 5 at 101
    const tp = s.trigger(A, 'SELL', 'TAKE_PROFIT_MARKET', 108, { closePosition: true, sizeLots: 0 }) as PlaceOrderAccepted;
    const sl = s.trigger(A, 'SELL', 'STOP_MARKET', 92, { closePosition: true, sizeLots: 0 }) as PlaceOrderAccepted;
    expect(tp.order.status).toBe('UNTRIGGERED');
    s.order(M, 'BUY', 20, 107);
    const fired = s.mark(108).events;
    expect(ofType(fired, 'orderTriggered')).toMatchObject([{ orderId: tp.order.orderId, sizeLots: 5 }]);
    expect(ofType(fired, 'orderDone').map((d) => [d.orderId, d.status, d.reason])).toEqual([
      [tp.order.orderId, 'FILLED', 'FILLED'],
      [sl.order.orderId, 'CANCELED', 'POSITION_CLOSED'],
    ]);
    expect(s.e.openOrders(A)).toEqual([]);
  });

  it('cancels closePosition triggers when the position is closed by an ordinary order too', () => {
    const s = setup();
    s.order(M, 'SELL', 5, 101);
    s.order(A, 'BUY', 5);
    const sl = s.trigger(A, 'SELL', 'STOP_MARKET', 92, { closePosition: true, sizeLots: 0 }) as PlaceOrderAccepted;
    s.order(M, 'BUY', 5, 100);
    const close = s.order(A, 'SELL', 5);
    expect(ofType(close.events, 'orderDone').map((d) => [d.orderId, d.reason])).toContainEqual([sl.order.orderId, 'POSITION_CLOSED']);
    expect(s.e.waitingTriggers('X-USD')).toBe(0);
  });

  it('ends a fired order EXPIRED with the reason it could not enter: outside the band, nothing to take', () => {
    const s = setup();
    // A buy stop-limit whose limit is beyond the band once it fires at 101 (band 10 %: highest buy 111).
    const far = s.trigger(A, 'BUY', 'STOP_LIMIT', 101, { priceTicks: 120, sizeLots: 1 }) as PlaceOrderAccepted;
    const market = s.trigger(T, 'BUY', 'STOP_MARKET', 101, { sizeLots: 1 }) as PlaceOrderAccepted;
    const fired = s.mark(101).events;
    expect(ofType(fired, 'orderDone').map((d) => [d.orderId, d.status, d.reason])).toEqual([
      [far.order.orderId, 'EXPIRED', 'PRICE_BAND'],
      [market.order.orderId, 'EXPIRED', 'IOC_REMAINDER'],
    ]);
    expect(s.e.marginSummary(A)!.orderReserve).toBe(0n);
  });

  it('fires LAST triggers on the trades of any command, and a STOP_LIMIT rests as a limit order', () => {
    const s = setup();
    s.order(M, 'SELL', 1, 100);
    s.order(T, 'BUY', 1); // last trade 100
    const stop = s.trigger(A, 'BUY', 'STOP_LIMIT', 103, { priceTicks: 104, sizeLots: 2, triggerBy: 'LAST' }) as PlaceOrderAccepted;
    s.order(M, 'SELL', 1, 103);
    const r = s.order(T, 'BUY', 1); // trades at 103: the stop fires in the same command
    expect(ofType(r.events, 'orderTriggered')).toMatchObject([{ orderId: stop.order.orderId, triggerBy: 'LAST', firedAtTicks: 103 }]);
    expect(ofType(r.events, 'orderResting')).toMatchObject([{ orderId: stop.order.orderId, priceTicks: 104, remainingLots: 2 }]);
    expect(s.e.getOrder(stop.order.orderId)).toMatchObject({ status: 'NEW', priceTicks: 104, remainingLots: 2 });
  });

  it('are cancelled like any open order, and survive a snapshot to the same state hash', () => {
    const s = setup();
    s.order(M, 'SELL', 2, 101);
    s.order(A, 'BUY', 2);
    s.trigger(A, 'SELL', 'STOP_MARKET', 90, { closePosition: true, sizeLots: 0 });
    const b = s.trigger(A, 'BUY', 'TAKE_PROFIT_LIMIT', 95, { priceTicks: 95, sizeLots: 1, triggerBy: 'MARK' }) as PlaceOrderAccepted;
    const copy = PerpEngine.fromSnapshot(s.e.snapshot());
    expect(copy.stateHash()).toBe(s.e.stateHash());
    expect(copy.waitingTriggers('X-USD')).toBe(2);
    expect(s.run({ kind: 'cancelOrder', account: A, orderId: b.order.orderId })).toMatchObject({ ok: true });
    expect(s.e.waitingTriggers('X-USD')).toBe(1);
    // The copy fires the same as the original would.
    const fired = copy.apply({ id: 'm', ts: 5_000, kind: 'setMarkPrice', symbol: 'X-USD', markPriceTicks: 95, indexPriceTicks: 95 });
    expect(ofType(fired.events, 'orderTriggered').map((t) => t.orderId)).toEqual([b.order.orderId]);
  });
});

describe('amend', () => {
  it('keeps the queue place for a smaller size at the same price, and re-queues on a new price', () => {
    const s = setup();
    const a = s.order(A, 'SELL', 5, 101);
    s.order(M, 'SELL', 5, 101);
    const cut = s.run({ kind: 'amendOrder', account: A, orderId: a.order.orderId, sizeLots: 3 }) as AmendAccepted;
    expect(cut.order).toEqual({ orderId: a.order.orderId, status: 'NEW', sizeLots: 3, filledLots: 0, remainingLots: 3 });
    expect(ofType(cut.events, 'orderAmended')).toMatchObject([{ keptPriority: true, sizeLots: 3 }]);
    const taker = s.order(T, 'BUY', 3);
    expect(taker.fills.map((f) => f.makerOrderId)).toEqual([a.order.orderId]);

    const b = s.order(A, 'SELL', 4, 102);
    s.order(M, 'SELL', 4, 102);
    const grow = s.run({ kind: 'amendOrder', account: A, orderId: b.order.orderId, sizeLots: 5 }) as AmendAccepted;
    expect(ofType(grow.events, 'orderAmended')).toMatchObject([{ keptPriority: false }]);
    // Re-queued behind M's order at 102, placed after it (M's at 101 goes first by price).
    expect(s.order(T, 'BUY', 14).fills.map((f) => [f.makerOrderId, f.sizeLots])).toEqual([
      [a.order.orderId + 1, 5],
      [b.order.orderId + 1, 4],
      [b.order.orderId, 5],
    ]);
  });

  it('trades as a taker when the new price crosses, and refuses what breaks the rules', () => {
    const s = setup();
    s.order(M, 'SELL', 2, 103);
    const a = s.order(A, 'BUY', 3, 100);
    const cross = s.run({ kind: 'amendOrder', account: A, orderId: a.order.orderId, priceTicks: 103 }) as AmendAccepted;
    expect(cross.fills.map((f) => [f.takerOrderId, f.sizeLots, f.priceTicks])).toEqual([[a.order.orderId, 2, 103]]);
    expect(cross.order).toMatchObject({ status: 'PARTIALLY_FILLED', filledLots: 2, remainingLots: 1 });
    const id = a.order.orderId;
    expect(s.run({ kind: 'amendOrder', account: M, orderId: id, sizeLots: 4 })).toMatchObject({ ok: false, code: 'ORDER_NOT_FOUND' });
    expect(s.run({ kind: 'amendOrder', account: A, orderId: id, sizeLots: 2 })).toMatchObject({ ok: false, code: 'ORDER_NOT_AMENDABLE' });
    expect(s.run({ kind: 'amendOrder', account: A, orderId: id, priceTicks: 200 })).toMatchObject({ ok: false, code: 'PRICE_OUT_OF_RANGE' });
    expect(s.run({ kind: 'amendOrder', account: A, orderId: id, priceTicks: 103, sizeLots: 3 })).toMatchObject({ ok: false, code: 'ORDER_NOT_AMENDABLE' });
    s.run({ kind: 'cancelOrder', account: A, orderId: id });
    expect(s.run({ kind: 'amendOrder', account: A, orderId: id, sizeLots: 5 })).toMatchObject({ ok: false, code: 'ORDER_NOT_OPEN' });
    const trig = s.trigger(A, 'BUY', 'STOP_MARKET', 110) as PlaceOrderAccepted;
    expect(s.run({ kind: 'amendOrder', account: A, orderId: trig.order.orderId, sizeLots: 2 })).toMatchObject({ ok: false, code: 'ORDER_NOT_AMENDABLE' });
  });
});
