import { describe, expect, it } from 'vitest';
import { createMarketCalendar } from '../marketdata/market-calendar.ts';
import { createVenueCalendar, DEMO_SYMBOLS, withSessionFlags } from '../marketdata/symbol-catalog.ts';
import { ValidationError } from '../errors/app-error.ts';
import { checkOrderSession, parseOrder, withWorstPrice, type OrderIntent } from './order-request.ts';
import type { StockListing } from './stock-deps.ts';

const E18 = 10n ** 18n;
const listing = (symbol: string): StockListing => ({ symbol, name: symbol, underlying: symbol, exchange: 'NASDAQ', address: '0x0000000000000000000000000000000000000002', decimals: 18 });
const order = (type: OrderIntent['type'], quantity: bigint, symbol = 'AAPL') => ({ stock: listing(symbol), type, quantity });

// New York on EDT (UTC-4) from 2026-03-08; Tuesday 2026-03-10.
const ny = (day: number, hour: number, minute = 0) => Date.UTC(2026, 2, day, hour + 4, minute);
const us = createVenueCalendar(createMarketCalendar('us-sessions'), { symbols: withSessionFlags(DEMO_SYMBOLS, { SPY: { fractionable: false } }) });

function refusal(fn: () => void): { field?: string; message: string } {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ValidationError);
    return { field: (err as ValidationError).field, message: (err as Error).message };
  }
  throw new Error('accepted');
}

describe('checkOrderSession (us-sessions)', () => {
  it('accepts a market order in regular hours only, naming the session and when regular hours open', () => {
    expect(() => checkOrderSession(order('Market', 0n), us, ny(10, 9, 30))).not.toThrow();
    expect(() => checkOrderSession(order('Market', E18), us, ny(10, 15, 59))).not.toThrow();
    const rule = 'type: market orders are accepted only in regular hours (09:30–16:00 New York, 13:00 on early-close days); the market is';
    const tail = '. A limit order is accepted at any time';
    expect(refusal(() => checkOrderSession(order('Market', 0n), us, ny(10, 8)))).toEqual({
      field: 'type',
      message: `${rule} in pre-market until 2026-03-10T13:30:00Z${tail}`,
    });
    expect(refusal(() => checkOrderSession(order('Market', E18), us, ny(10, 16))).message).toBe(
      `${rule} in after-hours until 2026-03-11T00:00:00Z; regular hours open next at 2026-03-11T13:30:00Z${tail}`,
    );
    expect(refusal(() => checkOrderSession(order('Market', E18), us, ny(10, 23))).message).toBe(
      `${rule} in overnight until 2026-03-11T08:00:00Z; regular hours open next at 2026-03-11T13:30:00Z${tail}`,
    );
    // Saturday: closed until Sunday 20:00, regular hours on Monday.
    expect(refusal(() => checkOrderSession(order('Market', E18), us, ny(14, 12))).message).toBe(
      `${rule} closed until 2026-03-16T00:00:00Z; regular hours open next at 2026-03-16T13:30:00Z${tail}`,
    );
  });

  it('accepts a limit order at any time, even while closed', () => {
    for (const t of [ny(10, 8), ny(10, 12), ny(10, 18), ny(10, 23), ny(14, 12)]) expect(() => checkOrderSession(order('Limit', E18), us, t)).not.toThrow();
  });

  it('takes whole shares only of a symbol that is not fractionable', () => {
    expect(refusal(() => checkOrderSession(order('Limit', (E18 * 3n) / 2n, 'SPY'), us, ny(10, 12)))).toEqual({
      field: 'quantity',
      message: 'quantity: SPY trades whole shares only (fractionable: false): 1.5 has a fraction',
    });
    expect(() => checkOrderSession(order('Limit', 2n * E18, 'SPY'), us, ny(10, 12))).not.toThrow();
    expect(() => checkOrderSession(order('Limit', (E18 * 3n) / 2n, 'AAPL'), us, ny(10, 12))).not.toThrow();
    // A market buy is given by notional: the executor buys whole shares with it.
    expect(() => checkOrderSession(order('Market', 0n, 'SPY'), us, ny(10, 12))).not.toThrow();
  });

  it('leaves the other calendars alone', () => {
    for (const kind of ['always-open', '24x5', 'nyse'] as const) {
      const c = createVenueCalendar(createMarketCalendar(kind), { symbols: DEMO_SYMBOLS });
      expect(() => checkOrderSession(order('Market', E18), c, ny(14, 12))).not.toThrow();
    }
  });
});

describe("a market order's worst price", () => {
  const listing: StockListing = { symbol: 'AAPL', name: 'Apple Inc.', underlying: 'AAPL', exchange: 'NASDAQ', address: '0x00000000000000000000000000000000000000aa', decimals: 18 } as StockListing;
  const stocks = { bySymbol: (s: string) => (s === 'AAPL' ? listing : undefined), byAddress: () => undefined } as never;
  const E18 = 10n ** 18n;
  const quote = { bid: 19_990n * E18 / 100n, ask: 20_001n * E18 / 100n }; // 199.90 / 200.01
  const market = (body: Record<string, unknown>) => parseOrder({ symbol: 'AAPL', type: 'Market', deadline: 4_000_000_000, ...body } as never, stocks, 1_000);

  it('is the ask raised (a buy) or the bid lowered (a sell) by 50 bps, rounded against the fill', () => {
    // 200.01 × 1.005 = 201.01005; 199.90 × 0.995 = 198.9005.
    expect(withWorstPrice(market({ side: 'Buy', notional: '10' }), quote).worstPrice).toBe(20_101_005n * E18 / 100_000n);
    expect(withWorstPrice(market({ side: 'Sell', quantity: '1' }), quote).worstPrice).toBe(1_989_005n * E18 / 10_000n);
    // A wei-level ask rounds up, a wei-level bid down.
    expect(withWorstPrice(market({ side: 'Buy', notional: '10', slippageBps: 1 }), { bid: 1n, ask: 3n }).worstPrice).toBe(4n);
    expect(withWorstPrice(market({ side: 'Sell', quantity: '1', slippageBps: 1 }), { bid: 3n, ask: 4n }).worstPrice).toBe(2n);
    expect(withWorstPrice(market({ side: 'Buy', notional: '10', slippageBps: 0 }), quote).worstPrice).toBe(quote.ask);
  });

  it("takes the body's own worst price as given, and refuses it (or slippageBps) where it does not belong", () => {
    expect(withWorstPrice(market({ side: 'Buy', notional: '10', worstPrice: '205.5' }), undefined).worstPrice).toBe(2055n * E18 / 10n);
    const limit = { symbol: 'AAPL', side: 'Buy', type: 'Limit', quantity: '1', price: '200', timeInForce: 'DAY', deadline: 4_000_000_000 };
    expect(() => parseOrder({ ...limit, worstPrice: '205' } as never, stocks, 1_000)).toThrow(/worstPrice: not allowed for a limit order/);
    expect(() => parseOrder({ ...limit, slippageBps: 10 } as never, stocks, 1_000)).toThrow(/slippageBps: not allowed for a limit order/);
    expect(() => market({ side: 'Buy', notional: '10', worstPrice: '205', slippageBps: 10 })).toThrow(/slippageBps: not allowed with worstPrice/);
    expect(() => market({ side: 'Buy', notional: '10', slippageBps: 1001 })).toThrow(/slippageBps: must be an integer from 0 to 1000/);
  });

  it('needs a quote when the body gives none', () => {
    expect(() => withWorstPrice(market({ side: 'Buy', notional: '10' }), undefined)).toThrow(ValidationError);
    expect(() => withWorstPrice(market({ side: 'Buy', notional: '10' }), undefined)).toThrow(/worstPrice: required now: there is no fresh quote of AAPL/);
  });
});
