/**
 * The fold from engine events to history rows, fed by a real PerpEngine command stream on AAPL-USD
 * (tick 0.01, lot 0.01: 100 µUSD per tick × lot; maker fee 200 ppm, taker 500 ppm, rounded up).
 * Every expected figure below is worked out by hand in the comments, not read back from the engine.
 */
import { describe, expect, it } from 'vitest';
import type { CommandResult, EngineCommand, EngineEvent, TradeEvent } from '../engine/engine-types.ts';
import { FEE_ACCOUNT, PerpEngine } from '../engine/perp-engine.ts';
import type { PerpOrderRecord } from '../store/perp-history-store.ts';
import { perpCandleKey, type PerpCandleRecord } from '../store/perp-candle-store.ts';
import { mergeCandle, projectEvents, referencedOrderIds, type ProjectedBatch } from './event-projection.ts';

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

function run(commands: EngineCommand[]): Run {
  const engine = new PerpEngine();
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
  ...o,
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
      ({ tradeId, role, account, symbol: AAPL, orderId, side, priceTicks, sizeLots, notional, fee, realisedPnl, ts });
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
