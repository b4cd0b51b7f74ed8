/**
 * The start of a seeded sandbox (`SANDBOX_SEED`, docs/sandbox.md "Determinism"): the venue's seed is
 * set for the process (src/lib/seeded-random.ts), and the venue's clock frozen at a whole hour (the
 * funding step) before any role reads it.
 *
 * Why frozen: what a client sees follows from the venue's time (the simulator's prices are a
 * function of it; the perpetual marks, the market maker's quotes and the stamps follow from those),
 * so two runs agree only at the same time. A venue that runs on from its start has moved by however
 * long the start and the client took before the client froze it; one frozen as it starts has not.
 * Why a whole hour: the instant is then the same distance from the history's first minute (the
 * simulator's walk counts from there in a seeded venue: the prices at it are the seeded history's
 * last close, whatever day and second the venue started in) and from the next funding time, so an
 * advance of the same seconds crosses the same funding intervals.
 */
import fs from 'node:fs';
import { setVenueSeed } from '../lib/seeded-random.ts';
import { advanceVenueClock, freezeVenueClock, venueClockState, venueNow } from '../lib/venue-clock.ts';

/** The funding interval of every default instrument, and so the sandbox clock's step. */
export const SEEDED_ALIGN_MS = 3_600_000;

export interface SeededStart {
  /** The venue's time, frozen. */
  frozenAt: number;
  /** How far this start moved the venue's time ahead to the whole `alignMs` (less than it; 0 when left as it was). */
  alignedMs: number;
}

/** The advance kept in `DATA_DIR/sandbox-clock.json` by an earlier run (0 when none or unreadable: the clock's own start reports that file). */
function keptAdvance(file: string): number {
  try {
    const advancedMs = (JSON.parse(fs.readFileSync(file, 'utf8')) as { advancedMs?: unknown }).advancedMs;
    return Number.isSafeInteger(advancedMs) && (advancedMs as number) > 0 ? (advancedMs as number) : 0;
  } catch {
    return 0;
  }
}

/**
 * Sets the venue's seed and freezes its clock at the next whole `alignMs` (default an hour; the
 * stack passes its clock's step, the shortest funding interval), the advance an earlier run kept in
 * `clockFile` included. Call it before the sandbox's clock is made (`createSandboxClock`): that
 * moves the embedded chain to the venue's time, this step with it. A clock frozen already (a revert
 * that put a snapshot's instant back) is left where it stands. Idempotent.
 */
export function startSeededSandbox(opts: { seed: number; clockFile: string; alignMs?: number }): SeededStart {
  const alignMs = opts.alignMs ?? SEEDED_ALIGN_MS;
  if (!Number.isSafeInteger(alignMs) || alignMs <= 0 || alignMs % 60_000 !== 0) throw new RangeError(`startSeededSandbox: alignMs ${alignMs}: a whole number of minutes in ms`);
  setVenueSeed(opts.seed);
  if (venueClockState().frozenAt !== undefined) return { frozenAt: venueNow(), alignedMs: 0 };
  freezeVenueClock(true);
  const kept = keptAdvance(opts.clockFile);
  const advancedMs = venueClockState().advancedMs;
  if (kept > advancedMs) advanceVenueClock(kept - advancedMs);
  const at = venueNow();
  const alignedMs = Math.ceil(at / alignMs) * alignMs - at;
  advanceVenueClock(alignedMs);
  return { frozenAt: venueNow(), alignedMs };
}

/** The stack's stop: the process's venue has no seed any more (its clock is put back by resetVenueClock). */
export function endSeededSandbox(): void {
  setVenueSeed(undefined);
}
