import { describe, expect, it } from 'vitest';
import { priceFreshness } from './perp-views.ts';

const spec = { indexStaleMs: 30_000, markStaleMs: 60_000 };
const prices = (markTs: number, indexTs: number) => ({ markPriceTicks: 600_000, indexPriceTicks: 600_010, markTs, indexTs });

describe('priceFreshness: the ages tickers and the mark stream show', () => {
  it('is fresh up to the index limit and the mark limit, stale one millisecond past either', () => {
    const t = 1_000_000;
    expect(priceFreshness(spec, prices(t - 60_000, t - 30_000), t)).toEqual({ markTime: t - 60_000, indexTime: t - 30_000, stale: false });
    // The mark task's heartbeat keeps the mark fresh; the index is its quote's time, five minutes old: a dead feed.
    expect(priceFreshness(spec, prices(t - 1_000, t - 30_001), t)).toEqual({ markTime: t - 1_000, indexTime: t - 30_001, stale: true });
    expect(priceFreshness(spec, prices(t - 60_001, t), t)).toEqual({ markTime: t - 60_001, indexTime: t, stale: true });
  });

  it('is stale with no mark or index yet, and ignores the mark age when the instrument turns the check off', () => {
    expect(priceFreshness(spec, { markPriceTicks: 0, indexPriceTicks: 0, markTs: 0, indexTs: 0 }, 5)).toEqual({ markTime: null, indexTime: null, stale: true });
    expect(priceFreshness({ indexStaleMs: 30_000, markStaleMs: 0 }, prices(0 + 1, 10_000_000), 10_000_000).stale).toBe(false);
  });
});
