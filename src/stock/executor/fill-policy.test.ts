import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMarketCalendar } from '../../marketdata/market-calendar.ts';
import {
  buyDebit,
  closeReason,
  contractFill,
  decideFill,
  maxBuyQuantity,
  OrderStatus,
  OrderType,
  Side,
  toPrice18,
  usableQuote,
  type ChainOrder,
  type DecideInput,
  type FillTotals,
  UINT128_MAX,
} from './fill-policy.ts';
import type { SymbolSessionFlags } from '../../marketdata/symbol-catalog.ts';

const E18 = 10n ** 18n;
const alwaysOpen = createMarketCalendar('always-open');
const nyse = createMarketCalendar('nyse');

// Tuesday 2026-11-24, 10:00 in New York (EST, UTC-5); the NYSE session closes at 21:00Z.
const TUE_10AM = Date.UTC(2026, 10, 24, 15, 0, 0);
const TUE_CLOSE = Date.UTC(2026, 10, 24, 21, 0, 0);

function order(over: Partial<ChainOrder> = {}): ChainOrder {
  return {
    user: '0x0000000000000000000000000000000000000001',
    stock: '0x0000000000000000000000000000000000000002',
    side: Side.Buy,
    orderType: OrderType.Market,
    status: OrderStatus.Open,
    timeInForce: 0,
    deadline: Math.floor(TUE_10AM / 1000) + 3600,
    createdAt: BigInt(Math.floor(TUE_10AM / 1000)),
    quantity: 0n,
    notional: 0n,
    price: 0n,
    filledQuantity: 0n,
    filledNotional: 0n,
    fees: 0n,
    locked: 0n,
    multiplier: 10n ** 36n,
    ...over,
  };
}

const marketBuy = (notional: bigint, over: Partial<ChainOrder> = {}) => order({ notional, locked: notional, ...over });
const marketSell = (quantity: bigint, over: Partial<ChainOrder> = {}) =>
  order({ side: Side.Sell, quantity, locked: quantity, ...over });
function limitBuy(quantity: bigint, price: bigint, feeBps: bigint, over: Partial<ChainOrder> = {}) {
  const notional = (quantity * price + E18 - 1n) / E18;
  const locked = notional + (notional * feeBps + 9_999n) / 10_000n;
  return order({ orderType: OrderType.Limit, quantity, price, notional, locked, ...over });
}
const limitSell = (quantity: bigint, price: bigint, over: Partial<ChainOrder> = {}) =>
  order({ orderType: OrderType.Limit, side: Side.Sell, quantity, price, notional: (quantity * price) / E18, locked: quantity, ...over });

const FEES = { marketFeeBps: 10, limitFeeBps: 5 };
const quote = (bid: string, ask: string, timestamp = TUE_10AM) => ({ bid, ask, timestamp });

function decide(o: ChainOrder, over: Partial<DecideInput> = {}) {
  return decideFill({ order: o, quote: quote('149.99', '150.01'), fees: FEES, now: TUE_10AM + 1_000, calendar: alwaysOpen, ...over });
}

const zero: FillTotals = { filledValue: 0n, filledNotional: 0n, fees: 0n };

describe('prices', () => {
  it('converts quote strings to exact 18-decimal prices', () => {
    expect(toPrice18('150.01')).toBe(15_001n * 10n ** 16n);
    expect(toPrice18('0.000000000000000001')).toBe(1n);
    expect(toPrice18('7')).toBe(7n * E18);
    expect(toPrice18('0')).toBeUndefined();
    expect(toPrice18('1e3')).toBeUndefined();
    expect(toPrice18('-1')).toBeUndefined();
    expect(toPrice18('1.0000000000000000001')).toBeUndefined();
  });

  it('ignores stale and malformed quotes', () => {
    expect(usableQuote(quote('1', '2', 0), 30_000)).toEqual({ bid: E18, ask: 2n * E18 });
    expect(usableQuote(quote('1', '2', 0), 30_001)).toBeUndefined();
    expect(usableQuote(quote('1', 'x', 0), 0)).toBeUndefined();
    expect(usableQuote(undefined, 0)).toBeUndefined();
  });
});

describe('contract arithmetic', () => {
  it('rounds cost up and fee up on the running total of a buy', () => {
    const first = contractFill(zero, Side.Buy, 3n, E18 / 2n, 10n); // value 1.5e18 → cost 2
    expect(first.notional).toBe(2n);
    expect(first.fee).toBe(1n); // ceil(2 * 10 / 10000)
    const second = contractFill(first.totals, Side.Buy, 1n, E18 / 2n, 10n); // value 2e18 → total 2
    expect(second.notional).toBe(0n);
    expect(second.fee).toBe(0n);
  });

  it('rounds proceeds down for a sell and caps the fee at the notional', () => {
    const sell = contractFill(zero, Side.Sell, 3n, E18 / 2n, 10n);
    expect(sell.notional).toBe(1n);
    expect(sell.fee).toBe(1n);
  });

  it('finds the largest affordable buy exactly', () => {
    const price = 150n * E18;
    const locked = 1_000n * E18;
    const q = maxBuyQuantity(locked, price, 10n, zero);
    expect(buyDebit(zero, q, price, 10n)).toBeLessThanOrEqual(locked);
    expect(buyDebit(zero, q + 1n, price, 10n)).toBeGreaterThan(locked);
    // About 1000 / 1.001 / 150 shares.
    expect(q / 10n ** 15n).toBe(6_660n);
  });
});

describe('decideFill', () => {
  it('does nothing with a final order', () => {
    expect(decide(marketBuy(E18, { status: OrderStatus.Filled }))).toEqual({ reason: 'not-open' });
    expect(decide(marketBuy(E18, { status: OrderStatus.None }))).toEqual({ reason: 'not-open' });
  });

  it('closes a canceling order as Canceled without a fill, even when the quote crosses', () => {
    const o = limitBuy(E18, 200n * E18, 5n, { status: OrderStatus.Canceling });
    expect(decide(o)).toEqual({ close: OrderStatus.Canceled, reason: 'cancel-requested' });
  });

  it('expires an order whose deadline passed', () => {
    const o = limitBuy(E18, 100n * E18, 5n);
    const fresh = quote('149.99', '150.01', o.deadline * 1000);
    expect(decide(o, { now: o.deadline * 1000, quote: fresh })).toEqual({ reason: 'limit-not-reached' });
    expect(decide(o, { now: o.deadline * 1000 + 1, quote: fresh })).toEqual({ close: OrderStatus.Expired, reason: 'deadline-passed' });
  });

  it('expires a DAY order at the close of its session (nyse)', () => {
    const o = limitBuy(E18, 100n * E18, 5n, { deadline: Math.floor(TUE_10AM / 1000) + 86_400 * 10 });
    const q = quote('149.99', '150.01', TUE_CLOSE - 10_000);
    expect(decide(o, { calendar: nyse, now: TUE_CLOSE - 1, quote: q })).toEqual({ reason: 'limit-not-reached' });
    expect(decide(o, { calendar: nyse, now: TUE_CLOSE, quote: q })).toEqual({ close: OrderStatus.Expired, reason: 'session-closed' });
  });

  it('waits while the market is closed and expires at the next session close', () => {
    // Saturday 2026-11-28 12:00 New York: closed; its DAY session is Monday's.
    const saturday = Date.UTC(2026, 10, 28, 17, 0, 0);
    const mondayClose = Date.UTC(2026, 10, 30, 21, 0, 0);
    const o = marketBuy(1_000n * E18, { createdAt: BigInt(saturday / 1000), deadline: saturday / 1000 + 30 * 86_400 });
    expect(decide(o, { calendar: nyse, now: saturday + 1_000, quote: quote('1', '2', saturday) })).toEqual({ reason: 'market-closed' });
    const monday = decide(o, { calendar: nyse, now: mondayClose - 60_000, quote: quote('149.99', '150.01', mondayClose - 60_000) });
    expect(monday.fill?.price).toBe(toPrice18('150.01'));
    expect(decide(o, { calendar: nyse, now: mondayClose, quote: quote('1', '2', mondayClose) }).close).toBe(OrderStatus.Expired);
  });

  it('waits for a quote, then rejects after the timeout', () => {
    const o = marketBuy(1_000n * E18);
    const created = TUE_10AM;
    expect(decide(o, { quote: undefined, now: created + 59_999 })).toEqual({ reason: 'awaiting-quote' });
    expect(decide(o, { quote: undefined, now: created + 60_000 })).toEqual({ close: OrderStatus.Rejected, reason: 'no-quote' });
    // A stale quote counts as none; the wait runs from when the quotes stopped, if later.
    expect(decide(o, { quote: quote('1', '2', created - 60_000), now: created + 70_000, noQuoteSince: created + 20_000 })).toEqual({
      reason: 'awaiting-quote',
    });
    expect(decide(o, { quote: undefined, now: created + 5_000, noQuoteTimeoutMs: 5_000 }).close).toBe(OrderStatus.Rejected);
  });

  it('fills a market buy at the ask for the most its lock pays, and closes it Filled', () => {
    const locked = 1_000n * E18;
    const d = decide(marketBuy(locked));
    const ask = toPrice18('150.01')!;
    expect(d.reason).toBe('market-buy');
    expect(d.close).toBe(OrderStatus.Filled);
    expect(d.fill!.price).toBe(ask);
    expect(buyDebit(zero, d.fill!.quantity, ask, 10n)).toBeLessThanOrEqual(locked);
    expect(buyDebit(zero, d.fill!.quantity + 1n, ask, 10n)).toBeGreaterThan(locked);
  });

  it('rejects a market buy whose notional cannot buy one unit', () => {
    // One unit (1e-18 share) at 150.01 costs ceil(150.01) = 151 wei plus a 1 wei fee (rounded up).
    expect(decide(marketBuy(151n))).toEqual({ close: OrderStatus.Rejected, reason: 'notional-too-small' });
    expect(decide(marketBuy(152n)).fill).toEqual({ quantity: 1n, price: toPrice18('150.01') });
  });

  it('closes a partly filled market buy whose rest buys nothing as Filled', () => {
    const o = marketBuy(E18, { filledQuantity: 5n, filledNotional: 900n, fees: 1n, locked: 10n });
    expect(decide(o)).toEqual({ close: OrderStatus.Filled, reason: 'lock-exhausted' });
  });

  it('caps a fill at the max fill quantity and leaves the order open', () => {
    const d = decide(marketBuy(1_000n * E18), { maxFillQuantity: E18 });
    expect(d).toEqual({ fill: { quantity: E18, price: toPrice18('150.01') }, reason: 'market-buy' });
    const s = decide(marketSell(3n * E18, { filledQuantity: 2n * E18 }), { maxFillQuantity: 2n * E18 });
    expect(s).toEqual({ fill: { quantity: E18, price: toPrice18('149.99') }, close: OrderStatus.Filled, reason: 'market-sell' });
  });

  it('fills a market sell whole at the bid', () => {
    expect(decide(marketSell(3n * E18))).toEqual({
      fill: { quantity: 3n * E18, price: toPrice18('149.99') },
      close: OrderStatus.Filled,
      reason: 'market-sell',
    });
  });

  it('fills a limit buy at the ask only when the ask is at or below the limit', () => {
    const below = limitBuy(2n * E18, toPrice18('150.00')!, 5n);
    expect(decide(below)).toEqual({ reason: 'limit-not-reached' });
    const at = limitBuy(2n * E18, toPrice18('150.01')!, 5n);
    expect(decide(at)).toEqual({ fill: { quantity: 2n * E18, price: toPrice18('150.01') }, close: OrderStatus.Filled, reason: 'limit-buy' });
    const above = limitBuy(2n * E18, 200n * E18, 5n);
    expect(decide(above).fill).toEqual({ quantity: 2n * E18, price: toPrice18('150.01') });
  });

  it('fills what the lock covers when the fee rose since a limit buy was placed', () => {
    const o = limitBuy(10n * E18, 150n * E18, 5n); // locked with 5 bps
    const d = decide(o, { quote: quote('149', '150'), fees: { marketFeeBps: 10, limitFeeBps: 1_000 } });
    expect(d.close).toBe(OrderStatus.Filled);
    expect(d.reason).toBe('lock-exhausted');
    expect(d.fill!.quantity).toBeLessThan(10n * E18);
    expect(buyDebit(zero, d.fill!.quantity, 150n * E18, 1_000n)).toBeLessThanOrEqual(o.locked);
  });

  it('says why it rejects or expires an order, and nothing for any other decision', () => {
    // A limit buy of the smallest unit locked 150 wei + 1 wei at 5 bps; the fee rose to 100 %.
    const o = limitBuy(1n, 150n * E18, 5n);
    const input: DecideInput = { order: o, quote: quote('149', '150'), fees: { marketFeeBps: 10, limitFeeBps: 10_000 }, now: TUE_10AM + 1_000, calendar: alwaysOpen };
    const d = decideFill(input);
    expect(d).toEqual({ close: OrderStatus.Rejected, reason: 'lock-exhausted' });
    expect(closeReason(input, d, 'AAPL')).toBe(
      'the 0.000000000000000151 mUSD locked no longer pays for the smallest unit of AAPL at 150 plus the current 10000 bps fee (the fee rose after the order was placed)',
    );
    const filled = { order: marketBuy(E18), quote: quote('149.99', '150.01'), fees: FEES, now: TUE_10AM + 1_000, calendar: alwaysOpen };
    expect(closeReason(filled, decideFill(filled), 'AAPL')).toBeUndefined();
    const canceling = { ...filled, order: limitBuy(E18, 100n * E18, 5n, { status: OrderStatus.Canceling }) };
    expect(closeReason(canceling, decideFill(canceling), 'AAPL')).toBeUndefined();
  });

  it('fills a limit sell at the bid only when the bid is at or above the limit', () => {
    expect(decide(limitSell(E18, toPrice18('150')!))).toEqual({ reason: 'limit-not-reached' });
    expect(decide(limitSell(E18, toPrice18('149.99')!))).toEqual({
      fill: { quantity: E18, price: toPrice18('149.99') },
      close: OrderStatus.Filled,
      reason: 'limit-sell',
    });
    expect(decide(limitSell(3n * E18, 100n * E18, { filledQuantity: E18 }), { maxFillQuantity: E18 })).toEqual({
      fill: { quantity: E18, price: toPrice18('149.99') },
      reason: 'limit-sell',
    });
  });
});

// ---------------------------------------------------------------------- properties

const priceArb = fc.bigInt({ min: 1n, max: 10n ** 24n }); // up to 1,000,000 USD per share
const bpsArb = fc.integer({ min: 0, max: 1_000 });

describe('fill never exceeds the lock (property)', () => {
  it('a market buy fill fits the lock under the contract rounding, and is the largest that does', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: 10n ** 27n }), priceArb, bpsArb, (locked, price, bps) => {
        const d = decideFill({
          order: marketBuy(locked),
          quote: { bid: '1', ask: fmt(price), timestamp: TUE_10AM },
          fees: { marketFeeBps: bps, limitFeeBps: 0 },
          now: TUE_10AM,
          calendar: alwaysOpen,
        });
        if (!d.fill) {
          expect(d).toEqual({ close: OrderStatus.Rejected, reason: 'notional-too-small' });
          expect(buyDebit(zero, 1n, price, BigInt(bps))).toBeGreaterThan(locked);
          return;
        }
        expect(buyDebit(zero, d.fill.quantity, price, BigInt(bps))).toBeLessThanOrEqual(locked);
        // Fill quantities are uint128: the cap is the only thing that may stop short of the lock.
        if (d.fill.quantity < UINT128_MAX) expect(buyDebit(zero, d.fill.quantity + 1n, price, BigInt(bps))).toBeGreaterThan(locked);
      }),
      { numRuns: 2_000 },
    );
  });

  it('after earlier fills, a market buy fill still fits whatever the hidden exact fill value is', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 10n ** 15n, max: 10n ** 24n }),
        fc.array(fc.tuple(fc.bigInt({ min: 1n, max: 10n ** 19n }), priceArb), { minLength: 1, maxLength: 4 }),
        priceArb,
        bpsArb,
        fc.boolean(),
        (notional, earlier, price, bps, exact) => {
          // Play earlier fills through the contract model, skipping those the lock would refuse.
          let totals = zero;
          let locked = notional;
          let filledQuantity = 0n;
          for (const [q, p] of earlier) {
            const f = contractFill(totals, Side.Buy, q, p, BigInt(bps));
            if (f.notional + f.fee > locked) continue;
            totals = f.totals;
            locked -= f.notional + f.fee;
            filledQuantity += q;
          }
          const o = marketBuy(notional, { filledQuantity, filledNotional: totals.filledNotional, fees: totals.fees, locked });
          const d = decideFill({
            order: o,
            quote: { bid: '1', ask: fmt(price), timestamp: TUE_10AM },
            fees: { marketFeeBps: bps, limitFeeBps: 0 },
            now: TUE_10AM,
            calendar: alwaysOpen,
            filledValue: exact ? totals.filledValue : undefined,
          });
          if (d.fill) {
            const real = contractFill(totals, Side.Buy, d.fill.quantity, price, BigInt(bps));
            expect(real.notional + real.fee).toBeLessThanOrEqual(locked);
            if (exact && d.fill.quantity < UINT128_MAX) expect(buyDebit(totals, d.fill.quantity + 1n, price, BigInt(bps))).toBeGreaterThan(locked);
          }
        },
      ),
      { numRuns: 1_500 },
    );
  });

  it('a limit buy filled in capped steps at prices within its limit always fits and completes', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 1n, max: 10n ** 21n }),
        priceArb,
        bpsArb,
        fc.array(fc.tuple(fc.bigInt({ min: 1n, max: 10n ** 20n }), fc.integer({ min: 0, max: 10_000 })), { minLength: 1, maxLength: 8 }),
        (quantity, limit, bps, steps) => {
          let o = limitBuy(quantity, limit, BigInt(bps));
          let totals = zero;
          for (let i = 0; ; i++) {
            const [cap, discount] = steps[i % steps.length];
            const price = limit - (limit * BigInt(discount)) / 20_000n || 1n; // at or below the limit
            const d = decideFill({
              order: o,
              quote: { bid: '1', ask: fmt(price), timestamp: TUE_10AM },
              fees: { marketFeeBps: 0, limitFeeBps: bps },
              now: TUE_10AM,
              calendar: alwaysOpen,
              maxFillQuantity: i >= steps.length ? undefined : cap,
              filledValue: totals.filledValue,
            });
            expect(d.fill).toBeDefined();
            const f = contractFill(totals, Side.Buy, d.fill!.quantity, d.fill!.price, BigInt(bps));
            expect(f.notional + f.fee).toBeLessThanOrEqual(o.locked);
            totals = f.totals;
            o = {
              ...o,
              filledQuantity: o.filledQuantity + d.fill!.quantity,
              filledNotional: totals.filledNotional,
              fees: totals.fees,
              locked: o.locked - f.notional - f.fee,
            };
            if (d.close !== undefined) {
              expect(d.close).toBe(OrderStatus.Filled);
              expect(d.reason).toBe('limit-buy');
              expect(o.filledQuantity).toBe(quantity);
              break;
            }
          }
        },
      ),
      { numRuns: 1_000 },
    );
  });
});

function fmt(price: bigint): string {
  const whole = price / E18;
  const frac = price % E18;
  return frac === 0n ? whole.toString() : `${whole}.${frac.toString().padStart(18, '0').replace(/0+$/, '')}`;
}

describe('decideFill under us-sessions (docs/executor.md, "Sessions")', () => {
  const us = createMarketCalendar('us-sessions');
  // Week of Thanksgiving 2026 (EST, UTC-5): Tuesday 11-24 and Wednesday 11-25 are full days,
  // Thursday 11-26 a holiday, Friday 11-27 an early close (regular to 13:00, after-hours to 17:00).
  const at = (day: number, hour: number, minute = 0) => Date.UTC(2026, 10, day, hour + 5, minute); // New York wall time → UTC
  const created = (ms: number) => ({ createdAt: BigInt(Math.floor(ms / 1000)), deadline: Math.floor(ms / 1000) + 30 * 86_400 });
  const ALL: SymbolSessionFlags = { overnightTradable: true, fractionable: true, fractionalEhEnabled: true };
  const usDecide = (o: ChainOrder, now: number, over: Partial<DecideInput> = {}) =>
    decideFill({ order: o, quote: quote('149.99', '150.01', now), fees: FEES, now, calendar: us, sessionFlags: ALL, ...over });
  const input = (o: ChainOrder, now: number, over: Partial<DecideInput> = {}): DecideInput => ({
    order: o,
    quote: quote('149.99', '150.01', now),
    fees: FEES,
    now,
    calendar: us,
    sessionFlags: ALL,
    ...over,
  });

  it('fills a market order in the regular session and rejects one found outside it, with the reason', () => {
    const regular = at(24, 10);
    expect(usDecide(marketBuy(1_000n * E18, created(regular)), regular + 1_000)).toMatchObject({ close: OrderStatus.Filled, reason: 'market-buy' });
    // Self-submitted in the pre-market (the API refuses it): rejected, never filled at the pre-market quote.
    const pre = at(24, 8);
    const o = marketSell(E18, created(pre));
    const i = input(o, pre + 1_000);
    const d = decideFill(i);
    expect(d).toEqual({ close: OrderStatus.Rejected, reason: 'market-outside-regular' });
    expect(closeReason(i, d, 'AAPL')).toBe(
      'market orders execute only in the regular session (09:30–16:00 New York, 13:00 on early-close days): the market was in pre-market at 2026-11-24T13:00:01Z, when the executor reached the order (a limit order rests until its sessions)',
    );
    // On a Saturday too, rather than waiting for Monday.
    const saturday = at(28, 12);
    expect(usDecide(marketBuy(E18, created(saturday)), saturday + 1_000)).toEqual({ close: OrderStatus.Rejected, reason: 'market-outside-regular' });
  });

  it("expires a market order at its trading day's regular close", () => {
    const o = marketBuy(1_000n * E18, created(at(24, 15, 59)));
    const close = at(24, 16);
    expect(usDecide(o, close - 1, { quote: undefined })).toEqual({ reason: 'awaiting-quote' });
    const i = input(o, close, { quote: undefined });
    expect(decideFill(i)).toEqual({ close: OrderStatus.Expired, reason: 'session-closed' });
    expect(closeReason(i, decideFill(i), 'AAPL')).toBe(
      "expired at its trading day's regular close (2026-11-24T21:00:00Z): a market order executes only in regular hours, so its DAY ends there",
    );
  });

  it('fills a limit order in every session its symbol trades in, and waits through the others', () => {
    const limit = limitBuy(E18, 151n * E18, 5n, created(at(23, 21))); // Monday 21:00: Tuesday's overnight
    for (const [name, now] of [['overnight', at(24, 2)], ['pre-market', at(24, 5)], ['regular', at(24, 12)], ['after-hours', at(24, 19, 59)]] as const) {
      expect(usDecide(limit, now), name).toMatchObject({ close: OrderStatus.Filled, reason: 'limit-buy' });
    }
    const noOvernight = { ...ALL, overnightTradable: false };
    expect(usDecide(limit, at(24, 2), { sessionFlags: noOvernight })).toEqual({ reason: 'session-not-allowed' });
    expect(usDecide(limit, at(24, 4), { sessionFlags: noOvernight })).toMatchObject({ close: OrderStatus.Filled });
    // Closed: the weekend.
    const weekend = limitBuy(E18, 151n * E18, 5n, created(at(28, 12)));
    expect(usDecide(weekend, at(28, 12, 1))).toEqual({ reason: 'market-closed' });
  });

  it('expires a DAY limit order when its trading day\'s after-hours close, 17:00 on an early-close day', () => {
    const tuesday = limitBuy(E18, 100n * E18, 5n, created(at(24, 21))); // Tuesday 21:00: Wednesday's overnight
    expect(usDecide(tuesday, at(25, 19, 59))).toEqual({ reason: 'limit-not-reached' });
    const i = input(tuesday, at(25, 20));
    expect(decideFill(i)).toEqual({ close: OrderStatus.Expired, reason: 'session-closed' });
    expect(closeReason(i, decideFill(i), 'AAPL')).toBe(
      "expired at the end of its trading day (2026-11-26T01:00:00Z): a DAY order lives until its trading day's after-hours session closes",
    );
    // Placed on Thanksgiving: Friday's order, which waits, fills in Friday's short after-hours and ends at 17:00.
    const holiday = limitBuy(E18, 151n * E18, 5n, created(at(26, 12)));
    expect(usDecide(holiday, at(26, 12, 1))).toEqual({ reason: 'market-closed' });
    expect(usDecide(holiday, at(27, 16, 30))).toMatchObject({ close: OrderStatus.Filled });
    expect(usDecide(holiday, at(27, 17))).toEqual({ close: OrderStatus.Expired, reason: 'session-closed' });
  });

  it('keeps a fractional order to regular hours when the symbol has no fractions in extended hours', () => {
    const noFractionsEh = { ...ALL, fractionalEhEnabled: false };
    const half = (E18 * 3n) / 2n;
    // Placed in the after-hours: its DAY is the next trading day's regular session.
    const o = limitBuy(half, 151n * E18, 5n, created(at(24, 17)));
    expect(usDecide(o, at(24, 17, 1), { sessionFlags: noFractionsEh })).toEqual({ reason: 'session-not-allowed' });
    expect(usDecide(o, at(25, 8), { sessionFlags: noFractionsEh })).toEqual({ reason: 'session-not-allowed' });
    expect(usDecide(o, at(25, 9, 30), { sessionFlags: noFractionsEh })).toMatchObject({ fill: { quantity: half }, close: OrderStatus.Filled });
    const i = input(o, at(25, 16), { sessionFlags: noFractionsEh });
    expect(decideFill(i)).toEqual({ close: OrderStatus.Expired, reason: 'session-closed' });
    expect(closeReason(i, decideFill(i), 'TSLA')).toBe(
      "expired at its trading day's regular close (2026-11-25T21:00:00Z): a fractional order of TSLA executes only in regular hours (fractionalEhEnabled: false), so its DAY ends there",
    );
    // A whole-share order of the same symbol trades in every session.
    expect(usDecide(limitBuy(2n * E18, 151n * E18, 5n, created(at(24, 17))), at(24, 17, 1), { sessionFlags: noFractionsEh })).toMatchObject({ close: OrderStatus.Filled });
  });

  it('trades whole shares only for a symbol that is not fractionable', () => {
    const whole = { overnightTradable: true, fractionable: false, fractionalEhEnabled: false };
    const now = at(24, 10);
    const fraction = input(limitSell((E18 * 5n) / 2n, 100n * E18, created(now - 1_000)), now, { sessionFlags: whole });
    expect(decideFill(fraction)).toEqual({ close: OrderStatus.Rejected, reason: 'not-fractionable' });
    expect(closeReason(fraction, decideFill(fraction), 'TSLA')).toBe('TSLA trades whole shares only (fractionable: false): the quantity 2.5 has a fraction');
    // A market buy of 1000 mUSD at 150.01 + 10 bps buys 6 whole shares; the rest of the lock is released.
    expect(usDecide(marketBuy(1_000n * E18, created(now - 1_000)), now, { sessionFlags: whole })).toEqual({
      fill: { quantity: 6n * E18, price: toPrice18('150.01') },
      close: OrderStatus.Filled,
      reason: 'market-buy',
    });
    const small = input(marketBuy(100n * E18, created(now - 1_000)), now, { sessionFlags: whole });
    expect(decideFill(small)).toEqual({ close: OrderStatus.Rejected, reason: 'notional-too-small' });
    expect(closeReason(small, decideFill(small), 'TSLA')).toBe(
      'notional too small: 100 mUSD does not buy one whole share of TSLA (fractionable: false) at the ask 150.01 plus the 10 bps fee',
    );
    // A liquidity cap is rounded to whole shares, one at least.
    expect(usDecide(marketSell(5n * E18, created(now - 1_000)), now, { sessionFlags: whole, maxFillQuantity: E18 / 2n })).toMatchObject({ fill: { quantity: E18 } });
    expect(usDecide(marketSell(5n * E18, created(now - 1_000)), now, { sessionFlags: whole, maxFillQuantity: (E18 * 5n) / 2n })).toMatchObject({ fill: { quantity: 2n * E18 } });
  });

  it('leaves the other calendars as they were: a pre-market market order fills under always-open and 24x5', () => {
    const pre = at(24, 8);
    expect(usDecide(marketBuy(1_000n * E18, created(pre)), pre + 1_000, { calendar: alwaysOpen })).toMatchObject({ close: OrderStatus.Filled });
    expect(usDecide(marketBuy(1_000n * E18, created(pre)), pre + 1_000, { calendar: createMarketCalendar('24x5') })).toMatchObject({ close: OrderStatus.Filled });
    expect(usDecide(marketBuy(1_000n * E18, created(pre)), pre + 1_000, { calendar: nyse })).toEqual({ reason: 'market-closed' });
  });
});

describe('the oracle check', () => {
  // Feed answer 150.00000000, written 10 s before the chain read; tolerance 1%, max age 180 s.
  const chainTime = Math.floor(TUE_10AM / 1000);
  const oracle = (answer: bigint, updatedAt = chainTime - 10) => ({ reading: { answer, decimals: 8, updatedAt, chainTime }, toleranceBps: 100, maxAgeS: 180 });

  it('lets a fill within the tolerance through unchanged', () => {
    const plain = decide(marketBuy(1_000n * E18));
    expect(decide(marketBuy(1_000n * E18), { oracle: oracle(15_000_000_000n) })).toEqual(plain);
  });

  it('holds a fill the feed refuses — too far, too old, no answer — and rejects it after the no-quote timeout', () => {
    const o = marketBuy(1_000n * E18);
    expect(decide(o, { oracle: oracle(14_800_000_000n) })).toEqual({ reason: 'oracle-deviation' }); // ask 150.01 is 1.36% above 148
    expect(decide(o, { oracle: oracle(15_000_000_000n, chainTime - 170) })).toEqual({ reason: 'oracle-stale' }); // 170 s + 15 s margin > 180 s
    expect(decide(o, { oracle: { toleranceBps: 0, maxAgeS: 0 } })).toEqual({ reason: 'oracle-invalid' });
    expect(decide(o, { oracle: oracle(0n) })).toEqual({ reason: 'oracle-invalid' });
    // Blocked since the order's creation: rejected once the timeout has passed.
    const blocked = { oracle: oracle(14_800_000_000n), oracleBlockedSince: TUE_10AM, noQuoteTimeoutMs: 60_000 };
    expect(decide(o, { ...blocked, now: TUE_10AM + 59_999, quote: quote('149.99', '150.01', TUE_10AM + 59_999) })).toEqual({ reason: 'oracle-deviation' });
    const rejected = decide(o, { ...blocked, now: TUE_10AM + 60_000, quote: quote('149.99', '150.01', TUE_10AM + 60_000) });
    expect(rejected).toEqual({ close: OrderStatus.Rejected, reason: 'oracle-deviation' });
    const input: DecideInput = { order: o, quote: quote('149.99', '150.01', TUE_10AM + 60_000), fees: FEES, now: TUE_10AM + 60_000, calendar: alwaysOpen, ...blocked };
    expect(closeReason(input, rejected, 'AAPL')).toBe("the price 150.01 for AAPL strayed from its on-chain oracle's 148 by more than 100 bps for 60 s");
  });

  it('checks the sell side at the bid, and leaves closes alone', () => {
    const sell = marketSell(2n * E18);
    // bid 149.99 vs 151.5: 0.997% below — inside; vs 151.6: 1.06% — outside.
    expect(decide(sell, { oracle: oracle(15_150_000_000n) }).fill?.price).toBe(14_999n * 10n ** 16n);
    expect(decide(sell, { oracle: oracle(15_160_000_000n) })).toEqual({ reason: 'oracle-deviation' });
    const canceling = limitSell(E18, 150n * E18, { status: OrderStatus.Canceling });
    expect(decide(canceling, { oracle: oracle(1n) })).toEqual({ close: OrderStatus.Canceled, reason: 'cancel-requested' });
  });
});
