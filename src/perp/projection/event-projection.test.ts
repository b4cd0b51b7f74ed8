/**
 * The fold from engine events to history rows, fed by a real PerpEngine command stream on AAPL-USD
 * (tick 0.01, lot 0.01: 100 µUSD per tick × lot; maker fee 200 ppm, taker 500 ppm, rounded up).
 * Every expected figure below is worked out by hand in the comments, not read back from the engine.
 */
import { describe, expect, it } from 'vitest';
import type { BalanceChangedEvent, CommandResult, EngineCommand, EngineEvent, TradeEvent } from '../engine/engine-types.ts';
import type { InstrumentConfig } from '../engine/instruments.ts';
import { FEE_ACCOUNT, INSURANCE_ACCOUNT, PerpEngine, POOL_ACCOUNT } from '../engine/perp-engine.ts';
import type { PerpOrderRecord } from '../store/perp-history-store.ts';
import { perpCandleKey, type PerpCandleRecord } from '../store/perp-candle-store.ts';
import { mergeCandle, projectEvents, referencedOrderIds, type ProjectedBatch } from './event-projection.ts';
import { xUsdInstrument } from '../../../test/support/perp-test-instrument.ts';

const USD = 1_000_000n;
const AAPL = 'AAPL-USD';
const A = '0x00000000000000000000000000000000000000a1';
const B = '0x00000000000000000000000000000000000000b2';
/** An hour boundary (477 222 h since the epoch): every interval's bar is easy to name. */
const H = 1_717_999_200_000;

interface Run {
  events: EngineEvent[];
  results: Map<string, CommandResult>;
}

function run(commands: EngineCommand[], instruments?: InstrumentConfig[]): Run {
  const engine = new PerpEngine(instruments === undefined ? {} : { instruments });
  const events: EngineEvent[] = [];
  const results = new Map<string, CommandResult>();
  for (const c of commands) {
    const r = engine.apply(c);
    expect(r.ok, `${c.id}: ${r.ok ? '' : r.message}`).toBe(true);
    results.set(c.id, r);
    events.push(...r.events);
  }
  return { events, results };
}

const place = (id: string, ts: number, account: string, side: 'BUY' | 'SELL', priceTicks: number, sizeLots: number, extra: Partial<EngineCommand> = {}): EngineCommand =>
  ({ kind: 'placeOrder', id, ts, account, symbol: AAPL, side, type: 'LIMIT', priceTicks, sizeLots, timeInForce: 'GTC', ...extra }) as EngineCommand;

const COMMANDS: EngineCommand[] = [
  { kind: 'deposit', id: 'dep:0xd1-3', ts: H, account: A, amount: 100_000n * USD },
  { kind: 'deposit', id: 'wire-b', ts: H, account: B, amount: 100_000n * USD },
  { kind: 'setMarkPrice', id: 'mark-1', ts: H + 1_000, symbol: AAPL, markPriceTicks: 20_000, indexPriceTicks: 19_990 },
  place('a-sell-1', H + 2_000, A, 'SELL', 20_050, 10), // order 1
  place('a-sell-2', H + 3_000, A, 'SELL', 20_080, 5), // order 2
  place('b-buy-1', H + 10_000, B, 'BUY', 20_100, 4), // order 3: 4 @ 200.50 from order 1
  place('b-buy-2', H + 70_000, B, 'BUY', 20_100, 9), // order 4: 6 @ 200.50 (order 1 done), 3 @ 200.80 from order 2
  { kind: 'cancelOrder', id: 'a-cancel-2', ts: H + 80_000, account: A, orderId: 2 },
  place('a-buy-1', H + 100_000, A, 'BUY', 20_010, 5), // order 5
  // order 6: reduce-only IOC of 20 capped to B's 13 long, 5 fill @ 200.10 from order 5, 8 expire.
  place('b-close', H + 130_000, B, 'SELL', 20_000, 20, { timeInForce: 'IOC', reduceOnly: true, clientOrderId: 'close-1' } as Partial<EngineCommand>),
  { kind: 'setMarkPrice', id: 'mark-2', ts: H + 150_000, symbol: AAPL, markPriceTicks: 20_100, indexPriceTicks: 20_090 },
  { kind: 'applyFunding', id: `funding:${AAPL}:${H + 3_600_000}`, ts: H + 3_600_000, symbol: AAPL, rateE9: 123_457n },
  { kind: 'setMarkPrice', id: 'mark-3', ts: H + 3_605_000, symbol: AAPL, markPriceTicks: 20_200, indexPriceTicks: 20_190 },
  // The fee account sweeps what it earned: 7 216 maker + 18 040 taker fees + 1 funding remainder.
  { kind: 'withdraw', id: 'fee-sweep', ts: H + 3_700_000, account: FEE_ACCOUNT, amount: 25_257n },
  { kind: 'withdraw', id: 'b-withdraw', ts: H + 3_700_000, account: B, amount: 1_000n * USD },
];

const { events: EVENTS, results: RESULTS } = run(COMMANDS);

const fills = (id: string): TradeEvent[] => (RESULTS.get(id) as { fills: TradeEvent[] }).fills;
const seqOf = (id: string, type: EngineEvent['type'], account?: string): number => {
  const e = RESULTS.get(id)!.events.find((x) => x.type === type && (account === undefined || (x as { account?: string }).account === account));
  return e!.seq;
};

const order = (o: Partial<PerpOrderRecord> & Pick<PerpOrderRecord, 'orderId'>): PerpOrderRecord => ({
  account: A, symbol: AAPL, side: 'SELL', type: 'LIMIT', timeInForce: 'GTC', priceTicks: null, sizeLots: 0, requestedSizeLots: 0,
  filledLots: 0, filledNotional: 0n, fee: 0n, status: 'NEW', reason: null, reduceOnly: false, clientOrderId: null, createdAt: 0, updatedAt: 0,
  liquidation: false, triggerPriceTicks: null, triggerBy: null, closePosition: false, triggeredAt: null, ...o,
});

const EXPECTED_ORDERS: PerpOrderRecord[] = [
  // 4 + 6 lots at 20 050 ticks: 20 050 × 10 × 100 = 20 050 000 µUSD; maker fees 1 604 + 2 406.
  order({ orderId: 1, priceTicks: 20_050, sizeLots: 10, requestedSizeLots: 10, filledLots: 10, filledNotional: 20_050_000n, fee: 4_010n, status: 'FILLED', reason: 'FILLED', createdAt: H + 2_000, updatedAt: H + 70_000 }),
  // 3 of 5 filled at 20 080: 6 024 000 µUSD, fee ⌈1 204.8⌉ = 1 205; the rest cancelled.
  order({ orderId: 2, priceTicks: 20_080, sizeLots: 5, requestedSizeLots: 5, filledLots: 3, filledNotional: 6_024_000n, fee: 1_205n, status: 'CANCELED', reason: 'USER_CANCEL', createdAt: H + 3_000, updatedAt: H + 80_000 }),
  // Taker: 8 020 000 × 500 ppm = 4 010.
  order({ orderId: 3, account: B, side: 'BUY', priceTicks: 20_100, sizeLots: 4, requestedSizeLots: 4, filledLots: 4, filledNotional: 8_020_000n, fee: 4_010n, status: 'FILLED', reason: 'FILLED', createdAt: H + 10_000, updatedAt: H + 10_000 }),
  // 12 030 000 + 6 024 000 = 18 054 000; taker fees 6 015 + 3 012.
  order({ orderId: 4, account: B, side: 'BUY', priceTicks: 20_100, sizeLots: 9, requestedSizeLots: 9, filledLots: 9, filledNotional: 18_054_000n, fee: 9_027n, status: 'FILLED', reason: 'FILLED', createdAt: H + 70_000, updatedAt: H + 70_000 }),
  // 5 × 20 010 × 100 = 10 005 000; maker fee 2 001.
  order({ orderId: 5, side: 'BUY', priceTicks: 20_010, sizeLots: 5, requestedSizeLots: 5, filledLots: 5, filledNotional: 10_005_000n, fee: 2_001n, status: 'FILLED', reason: 'FILLED', createdAt: H + 100_000, updatedAt: H + 130_000 }),
  // Capped to the 13-lot position; taker fee ⌈5 002.5⌉ = 5 003; 8 lots expire.
  order({ orderId: 6, account: B, side: 'SELL', timeInForce: 'IOC', priceTicks: 20_000, sizeLots: 13, requestedSizeLots: 20, filledLots: 5, filledNotional: 10_005_000n, fee: 5_003n, status: 'EXPIRED', reason: 'IOC_REMAINDER', reduceOnly: true, clientOrderId: 'close-1', createdAt: H + 130_000, updatedAt: H + 130_000 }),
];

const candle = (kind: PerpCandleRecord['kind'], interval: PerpCandleRecord['interval'], openTime: number, o: number, h: number, l: number, c: number, volumeLots = 0, turnover = 0n, trades = 0): PerpCandleRecord => ({
  symbol: AAPL, kind, interval, openTime, openTicks: o, highTicks: h, lowTicks: l, closeTicks: c, volumeLots, turnover, trades,
});

/** Stored rows after writing a batch over `before` (what the projector's upserts leave). */
function store(before: { orders: Map<number, PerpOrderRecord>; candles: Map<string, PerpCandleRecord> }, batch: ProjectedBatch) {
  const orders = new Map(before.orders);
  for (const o of batch.orders.values()) orders.set(o.orderId, o);
  const candles = new Map(before.candles);
  for (const [k, c] of batch.candles) candles.set(k, mergeCandle(before.candles.get(k), c));
  return { orders, candles };
}

describe('projectEvents', () => {
  const batch = projectEvents(EVENTS, new Map(), FEE_ACCOUNT);

  it('folds orders: filled lots, notional and fee per fill, then the final status and reason', () => {
    expect([...batch.orders.values()].sort((a, b) => a.orderId - b.orderId)).toEqual(EXPECTED_ORDERS);
    expect(batch.lastSeq).toBe(EVENTS.at(-1)!.seq);
  });

  it('a partly filled resting order is PARTIALLY_FILLED until its orderDone', () => {
    const upToFirstFill = EVENTS.filter((e) => e.seq <= fills('b-buy-1')[0].seq);
    const o1 = projectEvents(upToFirstFill, new Map(), FEE_ACCOUNT).orders.get(1)!;
    expect(o1).toEqual({ ...EXPECTED_ORDERS[0], filledLots: 4, filledNotional: 8_020_000n, fee: 1_604n, status: 'PARTIALLY_FILLED', reason: null, updatedAt: H + 10_000 });
  });

  it('writes two trade rows per fill, maker first, each with its own side, fee and realised PnL', () => {
    const [f1] = fills('b-buy-1');
    const [f2, f3] = fills('b-buy-2');
    const [f4] = fills('b-close');
    const t = (tradeId: number, role: 'MAKER' | 'TAKER', account: string, orderId: number, side: 'BUY' | 'SELL', priceTicks: number, sizeLots: number, notional: bigint, fee: bigint, realisedPnl: bigint, ts: number) =>
      ({ tradeId, role, account, symbol: AAPL, orderId, side, priceTicks, sizeLots, notional, fee, realisedPnl, ts, liquidation: false });
    expect(batch.trades).toEqual([
      t(f1.seq, 'MAKER', A, 1, 'SELL', 20_050, 4, 8_020_000n, 1_604n, 0n, H + 10_000),
      t(f1.seq, 'TAKER', B, 3, 'BUY', 20_050, 4, 8_020_000n, 4_010n, 0n, H + 10_000),
      t(f2.seq, 'MAKER', A, 1, 'SELL', 20_050, 6, 12_030_000n, 2_406n, 0n, H + 70_000),
      t(f2.seq, 'TAKER', B, 4, 'BUY', 20_050, 6, 12_030_000n, 6_015n, 0n, H + 70_000),
      t(f3.seq, 'MAKER', A, 2, 'SELL', 20_080, 3, 6_024_000n, 1_205n, 0n, H + 70_000),
      t(f3.seq, 'TAKER', B, 4, 'BUY', 20_080, 3, 6_024_000n, 3_012n, 0n, H + 70_000),
      // Both held 13 lots with entry cost 8 020 000 + 12 030 000 + 6 024 000 = 26 074 000.
      // A (short) releases ⌊26 074 000 × 5 / 13⌋ = 10 028 461: PnL 10 028 461 − 10 005 000 = 23 461.
      // B (long) releases ⌈…⌉ = 10 028 462: PnL 10 005 000 − 10 028 462 = −23 462.
      t(f4.seq, 'MAKER', A, 5, 'BUY', 20_010, 5, 10_005_000n, 2_001n, 23_461n, H + 130_000),
      t(f4.seq, 'TAKER', B, 6, 'SELL', 20_010, 5, 10_005_000n, 5_003n, -23_462n, H + 130_000),
    ]);
  });

  it('transactions: deposits (ref: the tx hash of a vault deposit), fees negative, realised PnL, funding, withdrawals; nothing of the fee account', () => {
    const [f1] = fills('b-buy-1');
    const [f2, f3] = fills('b-buy-2');
    const [f4] = fills('b-close');
    const fundingSeqA = seqOf(`funding:${AAPL}:${H + 3_600_000}`, 'fundingPayment', A);
    const fundingSeqB = seqOf(`funding:${AAPL}:${H + 3_600_000}`, 'fundingPayment', B);
    const tx = (txId: string, account: string, type: string, symbol: string | null, amount: bigint, ref: string, ts: number) => ({ txId, account, type, symbol, amount, ref, ts });
    expect(batch.transactions).toEqual([
      tx(`${seqOf('dep:0xd1-3', 'balanceChanged')}:DEPOSIT`, A, 'DEPOSIT', null, 100_000n * USD, '0xd1', H),
      tx(`${seqOf('wire-b', 'balanceChanged')}:DEPOSIT`, B, 'DEPOSIT', null, 100_000n * USD, 'wire-b', H),
      tx(`${f1.seq}:FEE:M`, A, 'FEE', AAPL, -1_604n, '1', H + 10_000),
      tx(`${f1.seq}:FEE:T`, B, 'FEE', AAPL, -4_010n, '3', H + 10_000),
      tx(`${f2.seq}:FEE:M`, A, 'FEE', AAPL, -2_406n, '1', H + 70_000),
      tx(`${f2.seq}:FEE:T`, B, 'FEE', AAPL, -6_015n, '4', H + 70_000),
      tx(`${f3.seq}:FEE:M`, A, 'FEE', AAPL, -1_205n, '2', H + 70_000),
      tx(`${f3.seq}:FEE:T`, B, 'FEE', AAPL, -3_012n, '4', H + 70_000),
      tx(`${f4.seq}:FEE:M`, A, 'FEE', AAPL, -2_001n, '5', H + 130_000),
      tx(`${f4.seq}:REALISED_PNL:M`, A, 'REALISED_PNL', AAPL, 23_461n, '5', H + 130_000),
      tx(`${f4.seq}:FEE:T`, B, 'FEE', AAPL, -5_003n, '6', H + 130_000),
      tx(`${f4.seq}:REALISED_PNL:T`, B, 'REALISED_PNL', AAPL, -23_462n, '6', H + 130_000),
      // 8 lots × 20 100 ticks × 100 µUSD × 123 457e-9 = 1 985.188 56: the long B pays ⌈⌉ = 1 986, the
      // short A receives ⌊⌋ = 1 985 (account order), the 1 left goes to the fee account.
      tx(`${fundingSeqA}:FUNDING`, A, 'FUNDING', AAPL, 1_985n, String(H + 3_600_000), H + 3_600_000),
      tx(`${fundingSeqB}:FUNDING`, B, 'FUNDING', AAPL, -1_986n, String(H + 3_600_000), H + 3_600_000),
      tx(`${seqOf('b-withdraw', 'balanceChanged')}:WITHDRAWAL`, B, 'WITHDRAWAL', null, -1_000n * USD, 'b-withdraw', H + 3_700_000),
    ]);
    // The fee account had fee, funding and withdraw balance changes: none is a transaction.
    expect(EVENTS.filter((e) => e.type === 'balanceChanged' && e.account === FEE_ACCOUNT).map((e) => (e as { reason: string }).reason)).toEqual([
      'fee', 'fee', 'fee', 'funding', 'withdraw',
    ]);
    expect(batch.transactions.some((t) => t.account === FEE_ACCOUNT)).toBe(false);
  });

  it('funding rates: one row per fundingApplied, at the mark', () => {
    expect(batch.fundingRates).toEqual([{ symbol: AAPL, fundingTime: H + 3_600_000, rateE9: 123_457n, markPriceTicks: 20_100 }]);
  });

  it('candles: trades in every interval (OHLC, lots, turnover, count); marks and indices without volume', () => {
    const c = batch.candles;
    const get = (kind: PerpCandleRecord['kind'], interval: PerpCandleRecord['interval'], openTime: number) => c.get(perpCandleKey({ symbol: AAPL, kind, interval, openTime }));
    const trade1m = [...c.values()].filter((x) => x.kind === 'trade' && x.interval === '1m').sort((a, b) => a.openTime - b.openTime);
    expect(trade1m).toEqual([
      candle('trade', '1m', H, 20_050, 20_050, 20_050, 20_050, 4, 8_020_000n, 1),
      // 6 @ 20 050 then 3 @ 20 080: 12 030 000 + 6 024 000.
      candle('trade', '1m', H + 60_000, 20_050, 20_080, 20_050, 20_080, 9, 18_054_000n, 2),
      candle('trade', '1m', H + 120_000, 20_010, 20_010, 20_010, 20_010, 5, 10_005_000n, 1),
    ]);
    const hour = candle('trade', '1h', H, 20_050, 20_080, 20_010, 20_010, 18, 36_079_000n, 4);
    expect(get('trade', '1h', H)).toEqual(hour);
    // Every longer bar holds the same four fills.
    expect(get('trade', '5m', H)).toEqual({ ...hour, interval: '5m' });
    expect(get('trade', '15m', H)).toEqual({ ...hour, interval: '15m' });
    expect(get('trade', '4h', 1_717_992_000_000)).toEqual({ ...hour, interval: '4h', openTime: 1_717_992_000_000 });
    expect(get('trade', '1d', 1_717_977_600_000)).toEqual({ ...hour, interval: '1d', openTime: 1_717_977_600_000 });

    // Marks 20 000 (H+1 s), 20 100 (H+150 s), 20 200 (next hour); indices 10 ticks below each.
    expect(get('mark', '1m', H)).toEqual(candle('mark', '1m', H, 20_000, 20_000, 20_000, 20_000));
    expect(get('mark', '1m', H + 120_000)).toEqual(candle('mark', '1m', H + 120_000, 20_100, 20_100, 20_100, 20_100));
    expect(get('mark', '1h', H)).toEqual(candle('mark', '1h', H, 20_000, 20_100, 20_000, 20_100));
    expect(get('mark', '1h', H + 3_600_000)).toEqual(candle('mark', '1h', H + 3_600_000, 20_200, 20_200, 20_200, 20_200));
    expect(get('mark', '4h', 1_717_992_000_000)).toEqual(candle('mark', '4h', 1_717_992_000_000, 20_000, 20_200, 20_000, 20_200));
    expect(get('index', '1h', H)).toEqual(candle('index', '1h', H, 19_990, 20_090, 19_990, 20_090));
    expect(get('index', '1h', H + 3_600_000)).toEqual(candle('index', '1h', H + 3_600_000, 20_190, 20_190, 20_190, 20_190));
    expect(get('index', '1d', 1_717_977_600_000)).toEqual(candle('index', '1d', 1_717_977_600_000, 19_990, 20_190, 19_990, 20_190));

    // trade: 3 × 1m + one each of 5m, 15m, 1h, 4h, 1d; mark and index: 3 × 1m, 2 × 5m, 2 × 15m, 2 × 1h, 4h, 1d.
    const count = (kind: string) => [...c.values()].filter((x) => x.kind === kind).length;
    expect([count('trade'), count('mark'), count('index'), c.size]).toEqual([8, 11, 11, 30]);
  });

  it('referencedOrderIds: the orders a batch changes without creating them', () => {
    const later = EVENTS.filter((e) => e.seq > fills('b-buy-1')[0].seq);
    // Order 1 (partly filled before) and 2 (resting) fill later, 3 gets its orderDone (the event after
    // its fill); 4–6 are created in the batch.
    expect(referencedOrderIds(later).sort()).toEqual([1, 2, 3]);
    expect(referencedOrderIds(EVENTS)).toEqual([]);
  });

  it('an order neither known nor created in the batch is skipped (history before projection began)', () => {
    const later = EVENTS.filter((e) => e.seq > fills('b-buy-1')[0].seq);
    const b = projectEvents(later, new Map(), FEE_ACCOUNT);
    expect([...b.orders.keys()].sort()).toEqual([4, 5, 6]);
    // The trades and their fees are still recorded.
    expect(b.trades.filter((t) => t.orderId === 1).map((t) => t.sizeLots)).toEqual([6]);
  });

  it('split into two batches at every event, with stored orders (known) and candles merged, gives the one-batch rows', () => {
    const one = store({ orders: new Map(), candles: new Map() }, batch);
    for (let cut = 1; cut < EVENTS.length; cut++) {
      const first = projectEvents(EVENTS.slice(0, cut), new Map(), FEE_ACCOUNT);
      const stored = store({ orders: new Map(), candles: new Map() }, first);
      const rest = EVENTS.slice(cut);
      // As the projector does: load only the referenced orders from what is stored.
      const known = new Map(referencedOrderIds(rest).flatMap((id) => (stored.orders.has(id) ? [[id, stored.orders.get(id)!] as const] : [])));
      const second = projectEvents(rest, known, FEE_ACCOUNT);
      const two = store(stored, second);
      expect(second.lastSeq, `cut ${cut}`).toBe(batch.lastSeq);
      expect([...two.orders.values()].sort((a, b) => a.orderId - b.orderId), `cut ${cut}`).toEqual(EXPECTED_ORDERS);
      expect(new Map([...two.candles].sort()), `cut ${cut}`).toEqual(new Map([...one.candles].sort()));
      expect([...first.trades, ...second.trades], `cut ${cut}`).toEqual(batch.trades);
      expect([...first.transactions, ...second.transactions], `cut ${cut}`).toEqual(batch.transactions);
      expect([...first.fundingRates, ...second.fundingRates], `cut ${cut}`).toEqual(batch.fundingRates);
      // The stored row given as `known` is copied, never changed in place.
      if (cut === fills('b-buy-1')[0].seq) expect(stored.orders.get(1)!.filledLots).toBe(4);
    }
  });

  it('mergeCandle: keeps the stored open, takes the later close, widens high/low and sums volume', () => {
    const stored = candle('trade', '1m', H, 100, 120, 90, 110, 3, 30_000n, 2);
    const later = candle('trade', '1m', H, 105, 130, 95, 101, 4, 40_000n, 1);
    expect(mergeCandle(stored, later)).toEqual(candle('trade', '1m', H, 100, 130, 90, 101, 7, 70_000n, 3));
    expect(mergeCandle(undefined, later)).toBe(later);
  });
});

// ------------------------------------------------------------------------------------------------
// Liquidations (docs/perp-risk.md), on the instrument of src/perp/engine/risk/liquidation.test.ts:
// X-USD, 1 tick = 1 USD, 1 lot = 1 unit (1 000 000 µUSD per tick × lot), IM 5 %, MM 2.5 %, maker
// 0.02 %, taker 0.05 %, liquidation fee 0.5 %, no price band. Figures worked by hand below.

const X = xUsdInstrument({ markStaleMs: 0, indexStaleMs: 30_000, liquidationFeePpm: 5_000 });
const XS = 'X-USD';
const M = '0x00000000000000000000000000000000000000d4';
const M2 = '0x00000000000000000000000000000000000000e5';
const LP = '0x00000000000000000000000000000000000000f6';
const T = 1_718_000_000_000;

const xLimit = (id: string, ts: number, account: string, side: 'BUY' | 'SELL', priceTicks: number, sizeLots: number, extra: Partial<EngineCommand> = {}): EngineCommand =>
  ({ kind: 'placeOrder', id, ts, account, symbol: XS, side, type: 'LIMIT', priceTicks, sizeLots, timeInForce: 'GTC', ...extra }) as EngineCommand;
const xMark = (id: string, ts: number, ticks: number): EngineCommand => ({ kind: 'setMarkPrice', id, ts, symbol: XS, markPriceTicks: ticks, indexPriceTicks: ticks, indexTs: ts });
const deposit = (id: string, ts: number, account: string, dollars: bigint): EngineCommand => ({ kind: 'deposit', id, ts, account, amount: dollars * USD });

/** A ($1 000, leverage 20) buys 190 at 100 from the asks of `sellers` (each deposited first), the mark at 100. */
const longAt100 = (sellers: ReadonlyArray<{ id: string; account: string; dollars: bigint; lots: number }>): EngineCommand[] => [
  ...sellers.map((m) => deposit(`${m.id}-dep`, T, m.account, m.dollars)),
  deposit('a-dep', T, A, 1_000n),
  { kind: 'setLeverage', id: 'a-lev', ts: T + 1_000, account: A, symbol: XS, leverage: 20 },
  xMark('mark-100', T + 2_000, 100),
  ...sellers.map((m) => xLimit(`${m.id}-ask`, T + 3_000, m.account, 'SELL', 100, m.lots)),
  xLimit('a-buy', T + 4_000, A, 'BUY', 100, 190),
];

/** A: $1 000, leverage 20, long 190 at 100 (order 2) from M's ask (order 1); taker fee 9.5, maker 3.8. */
const LONG_AT_100: EngineCommand[] = longAt100([{ id: 'm', account: M, dollars: 1_000_000n, lots: 190 }]);

const xOrder = (o: Partial<PerpOrderRecord> & Pick<PerpOrderRecord, 'orderId'>): PerpOrderRecord => order({ symbol: XS, ...o });
const xTrade = (tradeId: number, role: 'MAKER' | 'TAKER', account: string, orderId: number, side: 'BUY' | 'SELL', priceTicks: number, sizeLots: number, fee: bigint, realisedPnl: bigint, ts: number, liquidation = false) =>
  ({ tradeId, role, account, symbol: XS, orderId, side, priceTicks, sizeLots, notional: BigInt(priceTicks * sizeLots) * USD, fee, realisedPnl, ts, liquidation });
const txRow = (txId: string, account: string, type: string, symbol: string | null, amount: bigint, ref: string, ts: number) => ({ txId, account, type, symbol, amount, ref, ts });
const seqIn = (r: Run, id: string, pick: (e: EngineEvent) => boolean): number => {
  const hit = r.results.get(id)!.events.filter(pick);
  expect(hit, `${id}: one event`).toHaveLength(1);
  return hit[0].seq;
};

describe('projectEvents: a liquidation through the book', () => {
  // After A's long: A's reduce-only take-profit (order 3), M's bid of 300 at 96 (order 4), B's bid of 5
  // at 90 (order 5) under a 5 s dead man's switch. Mark 97 at the deadline: equity 990.5 − 190 × 3 =
  // 420.5 < MM 2.5 % × 18 430 = 460.75 and above ⅔ MM: the book path. Bankruptcy 97 − 420.5 / 190 →
  // 95 (a long's rounded up). The liquidation order (6) sells 190 at M's 96.
  const LIQ_AT = T + 16_000;
  const BOOK: EngineCommand[] = [
    ...LONG_AT_100,
    deposit('b-dep', T + 5_000, B, 10_000n),
    xLimit('a-take-profit', T + 6_000, A, 'SELL', 150, 10, { reduceOnly: true } as Partial<EngineCommand>),
    xLimit('m-bid', T + 7_000, M, 'BUY', 96, 300),
    xLimit('b-bid', T + 8_000, B, 'BUY', 90, 5),
    { kind: 'cancelAllAfter', id: 'b-switch', ts: T + 11_000, account: B, timeoutMs: 5_000 },
    xMark('mark-97', LIQ_AT, 97),
  ];
  const r = run(BOOK, [X]);
  const batch = projectEvents(r.events, new Map(), FEE_ACCOUNT);
  const liqFill = r.results.get('mark-97')!.events.find((e): e is TradeEvent => e.type === 'trade')!;
  const entryFill = (r.results.get('a-buy') as { fills: TradeEvent[] }).fills[0];

  const EXPECTED: PerpOrderRecord[] = [
    // 190 × 100 = 19 000 USD; maker fee 0.02 % = 3.8.
    xOrder({ orderId: 1, account: M, priceTicks: 100, sizeLots: 190, requestedSizeLots: 190, filledLots: 190, filledNotional: 19_000n * USD, fee: 3_800_000n, status: 'FILLED', reason: 'FILLED', createdAt: T + 3_000, updatedAt: T + 4_000 }),
    // Taker fee 0.05 % of 19 000 = 9.5.
    xOrder({ orderId: 2, side: 'BUY', priceTicks: 100, sizeLots: 190, requestedSizeLots: 190, filledLots: 190, filledNotional: 19_000n * USD, fee: 9_500_000n, status: 'FILLED', reason: 'FILLED', createdAt: T + 4_000, updatedAt: T + 4_000 }),
    xOrder({ orderId: 3, priceTicks: 150, sizeLots: 10, requestedSizeLots: 10, reduceOnly: true, status: 'CANCELED', reason: 'LIQUIDATION', createdAt: T + 6_000, updatedAt: LIQ_AT }),
    // 190 of 300 bought from the liquidation at 96: 18 240 USD, maker fee 3.648; still resting.
    xOrder({ orderId: 4, account: M, side: 'BUY', priceTicks: 96, sizeLots: 300, requestedSizeLots: 300, filledLots: 190, filledNotional: 18_240n * USD, fee: 3_648_000n, status: 'PARTIALLY_FILLED', createdAt: T + 7_000, updatedAt: LIQ_AT }),
    xOrder({ orderId: 5, account: B, side: 'BUY', priceTicks: 90, sizeLots: 5, requestedSizeLots: 5, status: 'CANCELED', reason: 'CANCEL_AFTER', createdAt: T + 8_000, updatedAt: LIQ_AT }),
    // The engine's order: LIMIT IOC reduce-only at the bankruptcy price, no taker fee.
    xOrder({ orderId: 6, timeInForce: 'IOC', priceTicks: 95, sizeLots: 190, requestedSizeLots: 190, filledLots: 190, filledNotional: 18_240n * USD, fee: 0n, status: 'FILLED', reason: 'FILLED', reduceOnly: true, createdAt: LIQ_AT, updatedAt: LIQ_AT, liquidation: true }),
  ];

  it('orders: the liquidation order marked, the account\'s open order cancelled for the liquidation, another cancelled by the dead man\'s switch', () => {
    expect([...batch.orders.values()].sort((a, b) => a.orderId - b.orderId)).toEqual(EXPECTED);
  });

  it('trades: the liquidation order\'s fill is the liquidated account\'s trade, marked on its (taker) side, with its realised loss and no fee', () => {
    expect(batch.trades).toEqual([
      xTrade(entryFill.seq, 'MAKER', M, 1, 'SELL', 100, 190, 3_800_000n, 0n, T + 4_000),
      xTrade(entryFill.seq, 'TAKER', A, 2, 'BUY', 100, 190, 9_500_000n, 0n, T + 4_000),
      // M closes its short of 190 at 100 at 96: +760; A its long at 96: 18 240 − 19 000 = −760.
      xTrade(liqFill.seq, 'MAKER', M, 4, 'BUY', 96, 190, 3_648_000n, 760n * USD, LIQ_AT),
      xTrade(liqFill.seq, 'TAKER', A, 6, 'SELL', 96, 190, 0n, -760n * USD, LIQ_AT, true),
    ]);
  });

  it('transactions: the realised loss of the close and the liquidation fee min(0.5 % × 18 240, surplus 190 × (96 − 95)) = 91.2, naming the order', () => {
    const feeSeq = seqIn(r, 'mark-97', (e) => e.type === 'liquidation');
    expect(batch.transactions).toEqual([
      txRow(`${seqIn(r, 'm-dep', (e) => e.type === 'balanceChanged')}:DEPOSIT`, M, 'DEPOSIT', null, 1_000_000n * USD, 'm-dep', T),
      txRow(`${seqIn(r, 'a-dep', (e) => e.type === 'balanceChanged')}:DEPOSIT`, A, 'DEPOSIT', null, 1_000n * USD, 'a-dep', T),
      txRow(`${entryFill.seq}:FEE:M`, M, 'FEE', XS, -3_800_000n, '1', T + 4_000),
      txRow(`${entryFill.seq}:FEE:T`, A, 'FEE', XS, -9_500_000n, '2', T + 4_000),
      txRow(`${seqIn(r, 'b-dep', (e) => e.type === 'balanceChanged')}:DEPOSIT`, B, 'DEPOSIT', null, 10_000n * USD, 'b-dep', T + 5_000),
      txRow(`${liqFill.seq}:FEE:M`, M, 'FEE', XS, -3_648_000n, '4', LIQ_AT),
      txRow(`${liqFill.seq}:REALISED_PNL:M`, M, 'REALISED_PNL', XS, 760n * USD, '4', LIQ_AT),
      txRow(`${liqFill.seq}:REALISED_PNL:T`, A, 'REALISED_PNL', XS, -760n * USD, '6', LIQ_AT),
      txRow(`${feeSeq}:LIQUIDATION_FEE`, A, 'LIQUIDATION_FEE', XS, -91_200_000n, '6', LIQ_AT),
    ]);
    // A's movements add up to its balance: 1 000 − 9.5 − 760 − 91.2 = 139.3.
    expect(batch.transactions.filter((t) => t.account === A).reduce((s, t) => s + t.amount, 0n)).toBe(139_300_000n);
    // The insurance fund got the fee (a balanceChanged of its own): the venue's, not a transaction.
    expect(r.events.some((e) => e.type === 'balanceChanged' && e.account === INSURANCE_ACCOUNT && e.reason === 'liquidationFee' && e.delta === 91_200_000n)).toBe(true);
  });

  it('split into two batches at every event gives the same rows (the stored liquidation order marks its later fill)', () => {
    for (let cut = 1; cut < r.events.length; cut++) {
      const first = projectEvents(r.events.slice(0, cut), new Map(), FEE_ACCOUNT);
      const stored = new Map(first.orders);
      const rest = r.events.slice(cut);
      const known = new Map(referencedOrderIds(rest).flatMap((id) => (stored.has(id) ? [[id, stored.get(id)!] as const] : [])));
      const second = projectEvents(rest, known, FEE_ACCOUNT);
      for (const o of second.orders.values()) stored.set(o.orderId, o);
      expect([...stored.values()].sort((a, b) => a.orderId - b.orderId), `cut ${cut}`).toEqual(EXPECTED);
      expect([...first.trades, ...second.trades], `cut ${cut}`).toEqual(batch.trades);
      expect([...first.transactions, ...second.transactions], `cut ${cut}`).toEqual(batch.transactions);
    }
  });

  it('events of types it does not know change nothing; a balance reason it does not know is an OTHER transaction, reported', () => {
    const last = r.events.at(-1)!;
    const strange = [
      { type: 'instrumentConfigured', seq: last.seq + 1, ts: LIQ_AT, commandId: 'list', symbol: XS, config: X, added: false },
      { type: 'somethingNew', seq: last.seq + 2, ts: LIQ_AT, commandId: 'new', account: A, delta: 5n },
      { type: 'balanceChanged', seq: last.seq + 3, ts: LIQ_AT, commandId: 'rebate-1', account: A, collateral: 139_800_000n, delta: 500_000n, reason: 'rebate' },
      { type: 'balanceChanged', seq: last.seq + 4, ts: LIQ_AT, commandId: 'rebate-2', account: A, collateral: 140_300_000n, delta: 500_000n, reason: 'rebate' },
    ] as unknown as EngineEvent[];
    const unknown: string[] = [];
    const b = projectEvents(strange, new Map(), FEE_ACCOUNT, (reason) => unknown.push(reason));
    expect(b.lastSeq).toBe(last.seq + 4);
    expect([b.orders.size, b.trades.length, b.fundingRates.length, b.candles.size]).toEqual([0, 0, 0, 0]);
    expect(b.transactions).toEqual([
      txRow(`${last.seq + 3}:OTHER`, A, 'OTHER', null, 500_000n, 'rebate-1', LIQ_AT),
      txRow(`${last.seq + 4}:OTHER`, A, 'OTHER', null, 500_000n, 'rebate-2', LIQ_AT),
    ]);
    expect(unknown).toEqual(['rebate', 'rebate']);
  });
});

describe('projectEvents: backstop, bad debt, ADL, withdrawals and liquidity', () => {
  const reasonsOf = (r: Run) => new Set(r.events.filter((e): e is BalanceChangedEvent => e.type === 'balanceChanged').map((e) => e.reason));
  const rowsOf = (r: Run, account: string) => projectEvents(r.events, new Map(), FEE_ACCOUNT).transactions.filter((t) => t.account === account);

  it('the pool takes the position at the bankruptcy price (LIQUIDATION: the realised loss); liquidity added and removed; withdrawals reserved, released and paid', () => {
    const r = run([
      ...LONG_AT_100,
      deposit('lp-dep', T + 5_000, LP, 100_000n),
      { kind: 'addLiquidity', id: 'lp-add', ts: T + 6_000, account: LP, amount: 100_000n * USD, lockupMs: 0 },
      // Mark 96: equity 990.5 − 760 = 230.5 < ⅔ × MM 456 = 304: the pool takes 190 at 96 − 230.5 / 190 → 95.
      xMark('mark-96', T + 7_000, 96),
      // Pool equity 100 000 + 190 × (96 − 95) on 100 000 shares: 1 000 shares pay 1 001.9.
      { kind: 'removeLiquidity', id: 'lp-remove', ts: T + 8_000, account: LP, shares: 1_000n * USD },
      { kind: 'requestWithdrawal', id: 'a-w1', ts: T + 9_000, account: A, withdrawalId: 'w1', amount: 40n * USD },
      { kind: 'settleWithdrawal', id: 'a-w1-failed', ts: T + 10_000, withdrawalId: 'w1', outcome: 'FAILED' },
      { kind: 'requestWithdrawal', id: 'a-w2', ts: T + 11_000, account: A, withdrawalId: 'w2', amount: 10n * USD },
      { kind: 'settleWithdrawal', id: 'a-w2-paid', ts: T + 12_000, withdrawalId: 'w2', outcome: 'PAID' },
    ], [X]);
    expect(r.results.get('mark-96')!.events.find((e) => e.type === 'liquidation')).toMatchObject({ method: 'BACKSTOP', closedLots: 190, bankruptcyPriceTicks: 95, fee: 0n });
    const bal = (id: string, account: string) => seqIn(r, id, (e) => e.type === 'balanceChanged' && e.account === account);
    const wd = (id: string) => seqIn(r, id, (e) => e.type === 'withdrawal');
    expect(rowsOf(r, A)).toEqual([
      txRow(`${bal('a-dep', A)}:DEPOSIT`, A, 'DEPOSIT', null, 1_000n * USD, 'a-dep', T),
      txRow(`${(r.results.get('a-buy') as { fills: TradeEvent[] }).fills[0].seq}:FEE:T`, A, 'FEE', XS, -9_500_000n, '2', T + 4_000),
      // Taken at 95: 190 × (95 − 100) = −950 realised.
      txRow(`${bal('mark-96', A)}:LIQUIDATION`, A, 'LIQUIDATION', null, -950n * USD, 'mark-96', T + 7_000),
      txRow(`${wd('a-w1')}:WITHDRAWAL`, A, 'WITHDRAWAL', null, -40n * USD, 'w1', T + 9_000),
      txRow(`${wd('a-w1-failed')}:WITHDRAWAL_RELEASE`, A, 'WITHDRAWAL_RELEASE', null, 40n * USD, 'w1', T + 10_000),
      txRow(`${wd('a-w2')}:WITHDRAWAL`, A, 'WITHDRAWAL', null, -10n * USD, 'w2', T + 11_000),
    ]);
    expect(rowsOf(r, LP)).toEqual([
      txRow(`${bal('lp-dep', LP)}:DEPOSIT`, LP, 'DEPOSIT', null, 100_000n * USD, 'lp-dep', T + 5_000),
      txRow(`${bal('lp-add', LP)}:LIQUIDITY_ADD`, LP, 'LIQUIDITY_ADD', null, -100_000n * USD, 'lp-add', T + 6_000),
      txRow(`${bal('lp-remove', LP)}:LIQUIDITY_REMOVE`, LP, 'LIQUIDITY_REMOVE', null, 1_001_900_000n, 'lp-remove', T + 8_000),
    ]);
    // The pool's side: the mirror of the holder's liquidity rows (left out), and a takeover that opened
    // its long at 95 realising nothing (no row).
    expect(rowsOf(r, POOL_ACCOUNT)).toEqual([]);
    expect([...reasonsOf(r)].sort()).toEqual(['deposit', 'fee', 'liquidation', 'liquidity', 'trade', 'withdrawalReserve']);
    // No trade: the takeover has no order.
    expect(projectEvents(r.events, new Map(), FEE_ACCOUNT).trades.filter((t) => t.ts === T + 7_000)).toEqual([]);
  });

  it('a bankrupt account: the pool takes it at the mark and the insurance fund covers the negative balance (BAD_DEBT)', () => {
    const r = run([
      ...LONG_AT_100,
      deposit('lp-dep', T + 5_000, LP, 100_000n),
      { kind: 'addLiquidity', id: 'lp-add', ts: T + 6_000, account: LP, amount: 50_000n * USD, lockupMs: 0 },
      deposit('fund-dep', T + 6_500, INSURANCE_ACCOUNT, 10_000n),
      // Gap to 90: equity 990.5 − 1 900 = −909.5; the fund holds 10 000: the pool takes 190 at 90.
      xMark('mark-90', T + 7_000, 90),
    ], [X]);
    const bal = (reason: string) => seqIn(r, 'mark-90', (e) => e.type === 'balanceChanged' && e.account === A && e.reason === reason);
    expect(rowsOf(r, A).slice(2)).toEqual([
      txRow(`${bal('liquidation')}:LIQUIDATION`, A, 'LIQUIDATION', null, -1_900n * USD, 'mark-90', T + 7_000),
      txRow(`${bal('badDebt')}:BAD_DEBT`, A, 'BAD_DEBT', null, 909_500_000n, 'mark-90', T + 7_000),
    ]);
    // 1 000 − 9.5 − 1 900 + 909.5 = 0.
    expect(rowsOf(r, A).reduce((s, t) => s + t.amount, 0n)).toBe(0n);
    // The fund's deposit and payment are the venue's.
    expect(rowsOf(r, INSURANCE_ACCOUNT)).toEqual([]);
  });

  it('ADL closes the bankrupt long against the ranked shorts at the bankruptcy price: an ADL row for each side, its realised PnL', () => {
    const r = run([
      ...longAt100([
        { id: 'm', account: M, dollars: 1_000_000n, lots: 100 },
        { id: 'm2', account: M2, dollars: 5_000n, lots: 90 },
      ]),
      // Gap to 80: equity 990.5 − 3 800 < 0, no fund, no pool: ADL at 80 + 2 809.5 / 190 → 95.
      xMark('mark-80', T + 5_000, 80),
    ], [X]);
    const liquidationEvents: EngineEvent[] = r.results.get('mark-80')!.events;
    const adl = liquidationEvents.filter((e): e is BalanceChangedEvent => e.type === 'balanceChanged' && e.reason === 'adl');
    const row = (i: number, amount: bigint) => txRow(`${adl[i].seq}:ADL`, adl[i].account, 'ADL', null, amount, 'mark-80', T + 5_000);
    const rows = projectEvents(r.events, new Map(), FEE_ACCOUNT).transactions.filter((t) => t.type === 'ADL');
    // M2 ranks first (9 000 entry on ~6 800 equity): A's 90 at 95 against M2's short at 100: A −450,
    // M2 +450; then 100 against M: A −500, M +500.
    expect(adl.map((e) => e.account)).toEqual([A, M2, A, M]);
    expect(rows).toEqual([row(0, -450n * USD), row(1, 450n * USD), row(2, -500n * USD), row(3, 500n * USD)]);
    // A: 1 000 − 9.5 taker fees − 950 = 40.5.
    expect(rowsOf(r, A).reduce((s, t) => s + t.amount, 0n)).toBe(40_500_000n);
  });
});

// ------------------------------------------------------------------------------------------------
// The liquidity pool and the insurance fund: `liquidity` and `insurance` events, one row each, on
// AAPL-USD (100 µUSD per tick × lot; liquidation fee 1 %).

describe('projectEvents: liquidity moves and insurance-fund moves', () => {
  const LP = '0x00000000000000000000000000000000000000c3';
  const SELLER = '0x00000000000000000000000000000000000000d4';
  const BIDDER = '0x00000000000000000000000000000000000000e5';
  const BUYER = '0x00000000000000000000000000000000000000f6';
  const engine = new PerpEngine();
  const events: EngineEvent[] = [];
  const results = new Map<string, CommandResult>();
  const commands: EngineCommand[] = [
    { kind: 'deposit', id: 'lp-dep', ts: H, account: LP, amount: 10_000n * USD },
    { kind: 'deposit', id: 's-dep', ts: H, account: SELLER, amount: 10_000n * USD },
    { kind: 'deposit', id: 'bid-dep', ts: H, account: BIDDER, amount: 10_000n * USD },
    { kind: 'deposit', id: 'buy-dep', ts: H, account: BUYER, amount: 100n * USD },
    { kind: 'setMarkPrice', id: 'mark-200', ts: H, symbol: AAPL, markPriceTicks: 20_000, indexPriceTicks: 20_000 },
    // 1 000 USD into the empty pool: 1 000 shares, locked 60 s.
    { kind: 'addLiquidity', id: 'lp-add', ts: H + 1_000, account: LP, amount: 1_000n * USD, lockupMs: 60_000 },
    place('s-ask', H + 2_000, SELLER, 'SELL', 20_000, 400),
    place('b-buy', H + 3_000, BUYER, 'BUY', 20_000, 400),
    place('bid-178', H + 4_000, BIDDER, 'BUY', 17_800, 400),
    // Mark 179: the buyer (equity 99.6 − 84 = 15.6 < MM 17.9) is closed through the book at 178
    // (712 USD); fee min(1 % × 712, 712 − 4 × 175.10) = 7.12 into the fund.
    { kind: 'setMarkPrice', id: 'mark-179', ts: H + 5_000, symbol: AAPL, markPriceTicks: 17_900, indexPriceTicks: 17_900 },
    // After the lock-up: 400 shares × 1 000 ÷ 1 000 = 400 USD.
    { kind: 'removeLiquidity', id: 'lp-remove', ts: H + 61_000, account: LP, shares: 400n * USD },
  ];
  for (const c of commands) {
    const r = engine.apply(c);
    if (!r.ok) throw new Error(`${c.id}: ${r.message}`);
    results.set(c.id, r);
    events.push(...r.events);
  }
  const seq = (id: string, type: EngineEvent['type']) => results.get(id)!.events.find((e) => e.type === type)!.seq;

  it('one liquidity row per addition and removal, with the holder\'s and the pool\'s figures after it', () => {
    const batch = projectEvents(events, new Map(), FEE_ACCOUNT);
    expect(batch.liquidityMoves).toEqual([
      {
        seq: seq('lp-add', 'liquidity'), account: LP, action: 'ADD', amount: 1_000n * USD, shares: 1_000n * USD, holderShares: 1_000n * USD,
        totalShares: 1_000n * USD, poolEquity: 1_000n * USD, lockedUntil: H + 61_000, ts: H + 1_000,
      },
      {
        seq: seq('lp-remove', 'liquidity'), account: LP, action: 'REMOVE', amount: 400n * USD, shares: 400n * USD, holderShares: 600n * USD,
        totalShares: 600n * USD, poolEquity: 600n * USD, lockedUntil: H + 61_000, ts: H + 61_000,
      },
    ]);
  });

  it('one insurance row per movement of the fund: the liquidation fee, with the balance after', () => {
    const batch = projectEvents(events, new Map(), FEE_ACCOUNT);
    expect(batch.insuranceMoves).toEqual([
      { seq: seq('mark-179', 'insurance'), reason: 'liquidationFee', account: BUYER, delta: 7_120_000n, balance: 7_120_000n, ts: H + 5_000 },
    ]);
    // Split anywhere, the two batches hold the same rows.
    for (let cut = 1; cut < events.length; cut++) {
      const first = projectEvents(events.slice(0, cut), new Map(), FEE_ACCOUNT);
      const second = projectEvents(events.slice(cut), new Map(), FEE_ACCOUNT);
      expect([...first.liquidityMoves, ...second.liquidityMoves]).toEqual(batch.liquidityMoves);
      expect([...first.insuranceMoves, ...second.insuranceMoves]).toEqual(batch.insuranceMoves);
    }
  });
});
