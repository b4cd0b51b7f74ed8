/**
 * `useVenue()` for a Vitest file: one venue for the file, started in `beforeAll` (then `setup`, then a
 * snapshot), reverted to that snapshot before each test but the first, stopped in `afterAll`.
 *
 *   const ctx = useVenue({ setup: async (v) => { await v.fund(addr, 'USDC', '1000'); } });
 *   it('…', async () => { await ctx.venue.prices.set('BTC', '70000'); … });
 */
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { startVenue, type StartVenueOptions, type Venue } from './venue.ts';

export interface UseVenueOptions extends StartVenueOptions {
  /** Runs once after the start, before the snapshot every test begins from. */
  setup?: (venue: Venue) => Promise<void>;
  /** `false`: no snapshot and no revert, the tests share one venue in turn (faster; each test leaves its state). Default true. */
  revertBeforeEach?: boolean;
  /** Timeout of the start (beforeAll), default 240 s; of a revert (beforeEach), default 120 s. */
  startTimeoutMs?: number;
  revertTimeoutMs?: number;
}

export interface VenueContext {
  /** The file's venue (throws before `beforeAll` has run). */
  readonly venue: Venue;
  /** The snapshot taken after `setup`, which each test starts from. */
  readonly snapshotId: string | undefined;
  /** Wall ms of each revert so far. */
  readonly revertMs: readonly number[];
}

export function useVenue(opts: UseVenueOptions = {}): VenueContext {
  const { setup, revertBeforeEach = true, revertTimeoutMs = 120_000, ...start } = opts;
  let venue: Venue | undefined;
  let snapshotId: string | undefined;
  let fresh = false;
  const revertMs: number[] = [];

  beforeAll(async () => {
    venue = await startVenue(start);
    if (setup) await setup(venue);
    if (revertBeforeEach) snapshotId = await venue.snapshot();
    fresh = true;
  }, (start.startTimeoutMs ?? 240_000) + 60_000);

  beforeEach(async () => {
    // The first test starts from the snapshot as it stands: no revert needed.
    if (fresh || !venue || snapshotId === undefined) {
      fresh = false;
      return;
    }
    const t0 = Date.now();
    await venue.revert(snapshotId);
    revertMs.push(Date.now() - t0);
  }, revertTimeoutMs);

  afterAll(async () => {
    await venue?.stop();
  }, 60_000);

  return {
    get venue() {
      if (!venue) throw new Error('@tokex/testkit: the venue is not started yet (use it inside a test or a hook after useVenue)');
      return venue;
    },
    get snapshotId() {
      return snapshotId;
    },
    revertMs,
  };
}
