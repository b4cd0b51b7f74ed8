/**
 * The mark price of a perpetual (docs/perp-pricing.md): what positions are valued at for margin,
 * PnL and funding. It follows Hyperliquid's construction — a median of three estimates, one of them
 * anchored to the index — with a band around the index on top, so that a thin book alone cannot
 * drag it far:
 *
 *   basis EMA  e ← e + (mid − index − e) · Δt / (Δt + τ)          (τ = 150 s by default)
 *   mark       = clamp( median(index + e, mid, last), index · (1 ± band) )
 *
 * where `mid` is the book's mid (or the index when a side is empty) and `last` the last trade (or
 * the index before the first). Prices are integer ticks (bigint); the EMA keeps micro-ticks so
 * small bases accumulate. Pure and deterministic: the caller passes the time.
 */
import { floorDiv, PPM } from '../engine/fixed-point.ts';

/** Micro-ticks per tick: the EMA's resolution. */
const MICRO = 1_000_000n;

export interface MarkPriceSettings {
  /** The EMA's time constant τ in ms. Default 150 s. */
  emaTauMs?: number;
  /** The largest distance of the mark from the index, in ppm. Default 50,000 (5 %). */
  bandPpm?: bigint;
}

/** The state a mark-price tracker keeps between samples. */
export interface BasisEma {
  /** The EMA of (mid − index), in micro-ticks. */
  microTicks: bigint;
  /** When it was last updated (ms); undefined before the first sample. */
  at: number | undefined;
}

export const EMPTY_BASIS: BasisEma = Object.freeze({ microTicks: 0n, at: undefined });

export interface MarkInputs {
  indexTicks: bigint;
  bestBidTicks?: bigint;
  bestAskTicks?: bigint;
  lastTradeTicks?: bigint;
  ts: number;
}

export interface MarkResult {
  markTicks: bigint;
  midTicks: bigint;
  basis: BasisEma;
}

/** The book's mid, rounded down; the index when either side is empty. */
export function bookMid(i: Pick<MarkInputs, 'indexTicks' | 'bestBidTicks' | 'bestAskTicks'>): bigint {
  if (i.bestBidTicks === undefined || i.bestAskTicks === undefined) return i.indexTicks;
  return floorDiv(i.bestBidTicks + i.bestAskTicks, 2n);
}

/** Moves the basis EMA to `ts` with the sample (mid − index); the first sample sets it outright. */
export function updateBasis(prev: BasisEma, basisTicks: bigint, ts: number, tauMs: number): BasisEma {
  const sample = basisTicks * MICRO;
  if (prev.at === undefined) return { microTicks: sample, at: ts };
  const dt = BigInt(Math.max(0, ts - prev.at));
  if (dt === 0n) return prev;
  const step = floorDiv((sample - prev.microTicks) * dt, dt + BigInt(tauMs));
  return { microTicks: prev.microTicks + step, at: ts };
}

function median3(a: bigint, b: bigint, c: bigint): bigint {
  if (a > b) [a, b] = [b, a];
  if (b > c) [b, c] = [c, b];
  return a > b ? a : b;
}

/** One mark-price step: the new EMA state and the mark at `inputs.ts`. */
export function markPrice(prev: BasisEma, inputs: MarkInputs, settings: MarkPriceSettings = {}): MarkResult {
  const tau = settings.emaTauMs ?? 150_000;
  const band = settings.bandPpm ?? 50_000n;
  const index = inputs.indexTicks;
  const mid = bookMid(inputs);
  const basis = updateBasis(prev, mid - index, inputs.ts, tau);
  const anchored = index + floorDiv(basis.microTicks, MICRO);
  const last = inputs.lastTradeTicks ?? index;
  let mark = median3(anchored, mid, last);
  const lo = index - (index * band) / PPM;
  const hi = index + (index * band) / PPM;
  if (mark < lo) mark = lo;
  if (mark > hi) mark = hi;
  if (mark < 1n) mark = 1n;
  return { markTicks: mark, midTicks: mid, basis };
}
