import { describe, expect, it } from 'vitest';
import { liquidationPriceTicks } from './liquidation-price.ts';

// BTC-USD: unit 10 µUSD per tick × lot (tick 0.1, lot 0.0001), MM 1 %.
const unit = 10n;
const mmr = 10_000n;

describe('liquidation price', () => {
  it('a long of 1 BTC (10 000 lots) entered at 50 000 with 5 000 USD backing: (E − b) / (s·u·(1 − m)), rounded up', () => {
    const entry = 10_000n * 500_000n * unit; // 50 000 USD in µUSD
    const p = liquidationPriceTicks({ sizeLots: 10_000, entryNotional: entry, unitMicros: unit, mmrPpm: mmr, backing: 5_000_000_000n })!;
    // (50 000 − 5 000) / 0.99 = 45 454.5454… USD = 454 545.45… ticks → 454 546
    expect(p).toBe(454_546n);
    // At that price the account is at or below maintenance; one tick above it is not.
    const equity = (ticks: bigint) => 5_000_000_000n + 10_000n * ticks * unit - entry;
    const mm = (ticks: bigint) => (10_000n * ticks * unit * mmr + 999_999n) / 1_000_000n;
    expect(equity(p - 1n) < mm(p - 1n)).toBe(true);
    expect(equity(p + 1n) >= mm(p + 1n)).toBe(true);
  });

  it('a short of 1 BTC entered at 50 000 with 5 000 USD backing: (E + b) / (|s|·u·(1 + m)), rounded down', () => {
    const entry = 10_000n * 500_000n * unit;
    const p = liquidationPriceTicks({ sizeLots: -10_000, entryNotional: entry, unitMicros: unit, mmrPpm: mmr, backing: 5_000_000_000n })!;
    // 55 000 / 1.01 = 54 455.4455… USD = 544 554.45… ticks → 544 554
    expect(p).toBe(544_554n);
  });

  it('a long backed by more than its entry cost has no liquidation price; flat has none', () => {
    expect(liquidationPriceTicks({ sizeLots: 10, entryNotional: 1_000n, unitMicros: unit, mmrPpm: mmr, backing: 2_000n })).toBeUndefined();
    expect(liquidationPriceTicks({ sizeLots: 0, entryNotional: 0n, unitMicros: unit, mmrPpm: mmr, backing: 0n })).toBeUndefined();
  });
});
