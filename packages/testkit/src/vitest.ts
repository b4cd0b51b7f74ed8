/**
 * `useVenue()` for a Vitest file: one venue for the file, started in `beforeAll` (then `setup`, then a
 * snapshot), reverted to that snapshot before each test but the first, stopped in `afterAll`. A
 * file (or describe) with one test to run takes no snapshot: nothing would go back to it.
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
  /** The snapshot taken after `setup`, which each test starts from (none with a single test to run). */
  readonly snapshotId: string | undefined;
  /** Wall ms of each revert so far. */
  readonly revertMs: readonly number[];
}

interface SuiteLike {
  type?: string;
  mode?: string;
  tasks?: SuiteLike[];
}

/** The tests of a suite that will run (not skipped, filtered out or todo). */
function testsToRun(task: SuiteLike): number {
  if (task.mode === 'skip' || task.mode === 'todo') return 0;
  if (Array.isArray(task.tasks)) return task.tasks.reduce((n, t) => n + testsToRun(t), 0);
  return task.type === 'test' ? 1 : 0;
}

export function useVenue(opts: UseVenueOptions = {}): VenueContext {
  const { setup, revertBeforeEach = true, revertTimeoutMs = 120_000, ...start } = opts;
  let venue: Venue | undefined;
  let snapshotId: string | undefined;
  let fresh = false;
  const revertMs: number[] = [];

  // Vitest 4 reads the hook's parameters: a destructured context first, the suite second.
  // eslint-disable-next-line no-empty-pattern
  beforeAll(async ({}, suite: Readonly<SuiteLike>) => {
    venue = await startVenue(start);
    if (setup) await setup(venue);
    // A snapshot costs a restart: taken only when a second test will need to go back to it.
    if (revertBeforeEach && (suite?.tasks === undefined || testsToRun(suite) > 1)) snapshotId = await venue.snapshot();
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
