import { describe, expect, it } from 'vitest';
import { DEFAULT_INSTRUMENTS } from '../instruments.ts';
import { PerpEngine } from '../perp-engine.ts';
import { CLOSED_MARKET_BAND_FACTOR, effectiveBandPpm } from './price-band.ts';

const AAPL = DEFAULT_INSTRUMENTS.find((i) => i.symbol === 'AAPL-USD')!;
const BUYER = `0x${'1'.repeat(40)}`;
const SELLER = `0x${'2'.repeat(40)}`;

function engineAt(markTicks: number, marketOpen?: boolean): PerpEngine {
  const e = new PerpEngine({ instruments: [AAPL] });
  e.deposit({ kind: 'deposit', id: 'd1', ts: 1, account: BUYER, amount: 1_000_000_000_000n });
  e.deposit({ kind: 'deposit', id: 'd2', ts: 1, account: SELLER, amount: 1_000_000_000_000n });
  e.setMarkPrice({ kind: 'setMarkPrice', id: 'm0', ts: 2, symbol: 'AAPL-USD', markPriceTicks: markTicks, indexPriceTicks: markTicks, ...(marketOpen === undefined ? {} : { marketOpen }) });
  return e;
}

const buy = (e: PerpEngine, id: string, priceTicks: number) =>
  e.placeOrder({ kind: 'placeOrder', id, ts: 3, account: BUYER, symbol: 'AAPL-USD', side: 'BUY', type: 'LIMIT', priceTicks, sizeLots: 1 });

describe('the closed-market band', () => {
  it('doubles the band while the market is closed', () => {
    expect(CLOSED_MARKET_BAND_FACTOR).toBe(2);
    expect(effectiveBandPpm(50_000, true)).toBe(50_000);
    expect(effectiveBandPpm(50_000, false)).toBe(100_000);
    expect(effectiveBandPpm(0, false)).toBe(0);
    expect(effectiveBandPpm(600_000, false)).toBe(900_000);
  });

  it('open: a buy above mark + 5 % is refused; closed (marketOpen: false): up to mark + 10 %', () => {
    const open = engineAt(20_000);
    expect(open.marketOpen('AAPL-USD')).toBe(true);
    expect(buy(open, 'a', 21_000)).toMatchObject({ ok: true });
    expect(buy(open, 'b', 21_001)).toMatchObject({ ok: false, code: 'PRICE_OUT_OF_RANGE', detail: { priceBand: { highTicks: 21_000, bandPpm: 50_000 } } });

    const closed = engineAt(20_000, false);
    expect(closed.marketOpen('AAPL-USD')).toBe(false);
    expect(buy(closed, 'a', 22_000)).toMatchObject({ ok: true });
    expect(buy(closed, 'b', 22_001)).toMatchObject({ ok: false, code: 'PRICE_OUT_OF_RANGE', detail: { priceBand: { lowTicks: 18_000, highTicks: 22_000, bandPpm: 100_000 } } });
    // The flag is state: snapshotted, and cleared by the next mark of an open market.
    const restored = PerpEngine.fromSnapshot(closed.snapshot());
    expect(restored.stateHash()).toBe(closed.stateHash());
    expect(restored.marketOpen('AAPL-USD')).toBe(false);
    const r = closed.setMarkPrice({ kind: 'setMarkPrice', id: 'm1', ts: 4, symbol: 'AAPL-USD', markPriceTicks: 20_000, indexPriceTicks: 20_000 });
    expect(r.events[0]).not.toHaveProperty('marketOpen');
    expect(buy(closed, 'c', 21_001)).toMatchObject({ ok: false, code: 'PRICE_OUT_OF_RANGE' });
  });

  it('a market order reaches the wider band only while closed', () => {
    for (const [marketOpen, filled] of [[true, 0], [false, 5]] as const) {
      const e = engineAt(20_000, marketOpen);
      e.placeOrder({ kind: 'placeOrder', id: 's', ts: 3, account: SELLER, symbol: 'AAPL-USD', side: 'SELL', type: 'LIMIT', priceTicks: 21_500, sizeLots: 5 });
      const r = e.placeOrder({ kind: 'placeOrder', id: 'b', ts: 4, account: BUYER, symbol: 'AAPL-USD', side: 'BUY', type: 'MARKET', sizeLots: 5 });
      expect(r.ok ? r.order.filledLots : 0).toBe(filled);
    }
  });

  it('the markPrice event says when the market is closed', () => {
    const e = engineAt(20_000);
    const r = e.setMarkPrice({ kind: 'setMarkPrice', id: 'm1', ts: 5, symbol: 'AAPL-USD', markPriceTicks: 20_010, indexPriceTicks: 20_000, marketOpen: false });
    expect(r.events[0]).toMatchObject({ type: 'markPrice', marketOpen: false });
    expect(e.setMarkPrice({ kind: 'setMarkPrice', id: 'm2', ts: 6, symbol: 'AAPL-USD', markPriceTicks: 20_010, indexPriceTicks: 20_000, marketOpen: 'no' as never })).toMatchObject({ ok: false, code: 'INVALID' });
  });
});
