/**
 * Funding of a perpetual (docs/perp-pricing.md), Binance's formula scaled to the interval:
 *
 *   impact bid / ask  the average price at which a market order of the impact notional would fill
 *                     against the bids / the asks
 *   premium sample    P = (max(0, impactBid − index) − max(0, index − impactAsk)) / index
 *   premium           P̄ = the mean of the samples taken over the interval (every few seconds)
 *   rate              F = P̄ + clamp(I − P̄, −C, +C), then clamped to ±cap
 *
 * with the interest I = 0.01 %, C = 0.05 % and the cap 0.75 % per 8 hours, each scaled linearly to
 * the instrument's funding interval. A positive rate means longs pay shorts. Rates are signed
 * integers in units of 1e-9 (`rateE9`, what the engine's `applyFunding` takes); prices are ticks.
 * Divisions truncate toward zero, so neither side is favoured by rounding; the engine rounds the
 * payments themselves in the venue's favour.
 */
import { RATE_E9 } from '../engine/fixed-point.ts';

const EIGHT_HOURS_MS = 8n * 3_600_000n;

export interface FundingSettings {
  /** Interest per 8 hours in 1e-9 units. Default 100,000 (0.01 %). */
  interestPer8hE9?: bigint;
  /** The bound on (interest − premium) per 8 hours. Default 500,000 (0.05 %). */
  clampPer8hE9?: bigint;
  /** The largest |rate| per 8 hours. Default 7,500,000 (0.75 %). */
  capPer8hE9?: bigint;
}

/** One side of a book as the engine's `depth` answers it: [priceTicks, sizeLots], best first. */
export type BookSide = ReadonlyArray<readonly [number, number]>;

/**
 * The average price (ticks) at which `impactNotionalMicros` would fill against `levels`: rounded
 * down for the bids (what a seller gets), up for the asks (what a buyer pays). When the side holds
 * less than the impact notional, the average over all of it; undefined when it is empty.
 */
export function impactPrice(levels: BookSide, unitMicros: bigint, impactNotionalMicros: bigint, side: 'bid' | 'ask'): bigint | undefined {
  let notional = 0n;
  let lots = 0n;
  for (const [price, size] of levels) {
    const p = BigInt(price);
    const levelNotional = p * BigInt(size) * unitMicros;
    if (notional + levelNotional >= impactNotionalMicros) {
      // Part of this level completes the impact notional (whole lots, rounded up).
      const rest = impactNotionalMicros - notional;
      const per = p * unitMicros;
      const take = (rest + per - 1n) / per;
      notional += take * per;
      lots += take;
      break;
    }
    notional += levelNotional;
    lots += BigInt(size);
  }
  if (lots === 0n) return undefined;
  const denominator = lots * unitMicros;
  return side === 'bid' ? notional / denominator : (notional + denominator - 1n) / denominator;
}

/** One premium sample in 1e-9 units; 0 for a side that is empty. */
export function premiumSample(index: bigint, impactBid: bigint | undefined, impactAsk: bigint | undefined): bigint {
  if (index <= 0n) return 0n;
  const over = impactBid !== undefined && impactBid > index ? impactBid - index : 0n;
  const under = impactAsk !== undefined && impactAsk < index ? index - impactAsk : 0n;
  return ((over - under) * RATE_E9) / index;
}

function scaled(per8h: bigint, intervalMs: number): bigint {
  return (per8h * BigInt(intervalMs)) / EIGHT_HOURS_MS;
}

function clamp(v: bigint, lo: bigint, hi: bigint): bigint {
  return v < lo ? lo : v > hi ? hi : v;
}

/** The funding rate of an interval from its premium samples (none: the interest alone). */
export function fundingRate(samples: readonly bigint[], intervalMs: number, settings: FundingSettings = {}): { rateE9: bigint; premiumE9: bigint } {
  const interest = scaled(settings.interestPer8hE9 ?? 100_000n, intervalMs);
  const c = scaled(settings.clampPer8hE9 ?? 500_000n, intervalMs);
  const cap = scaled(settings.capPer8hE9 ?? 7_500_000n, intervalMs);
  const premium = samples.length === 0 ? 0n : samples.reduce((a, b) => a + b, 0n) / BigInt(samples.length);
  const rate = clamp(premium + clamp(interest - premium, -c, c), -cap, cap);
  return { rateE9: rate, premiumE9: premium };
}
