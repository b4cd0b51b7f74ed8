/**
 * The venue's business clock (docs/sandbox.md "Clock"): the time orders, funding, expiries,
 * corporate actions, sessions and quotes are stamped and decided on. It is the wall clock, except in
 * a sandbox whose clock was advanced or frozen: then it runs `advancedMs` ahead of the wall clock,
 * or stands still at `frozenAt`.
 *
 * One per process, not one per stack: every role of the all-in-one stack must agree on what time
 * it is, and threading one object through every task's options would leave a default somewhere
 * that disagrees. Only the sandbox moves it (forward only: nothing stamped is ever in the future),
 * and a stack's stop puts it back, so a later stack in the same process starts on the wall clock.
 *
 * What stays on the wall clock on purpose: leases and timeouts (a jump must not expire a lease),
 * metrics and logs, and the request-signing windows of both APIs (clients sign with their own
 * clocks; docs/sandbox.md says how a test reads the venue's time).
 */

export interface VenueClockState {
  /** How far the sandbox has moved the venue (and its chain) ahead of the wall clock, in ms (0 unless advanced). */
  advancedMs: number;
  /** Set while the clock stands still: the venue's time until it is advanced or unfrozen. */
  frozenAt?: number;
}

let state: VenueClockState = { advancedMs: 0 };

/** The venue's time now, in ms since the epoch. */
export function venueNow(): number {
  return state.frozenAt ?? Date.now() + state.advancedMs;
}

/**
 * The time the venue's chain should show now: the wall clock plus every advance, frozen or not
 * (a chain's blocks keep their own time; the sandbox moves it with each advance, docs/sandbox.md).
 * What is compared with block times (the chain clock's skew, the oracle's publication times) reads this.
 */
export function venueChainNow(): number {
  return Date.now() + state.advancedMs;
}

/** The clock's state (a copy). */
export function venueClockState(): VenueClockState {
  return { ...state };
}

/**
 * Moves the venue's time forward by `ms`, frozen or not. Never backward: a negative or fractional
 * step is a programming error here (the sandbox's route checks what a client sends).
 */
export function advanceVenueClock(ms: number): void {
  if (!Number.isSafeInteger(ms) || ms < 0) throw new RangeError(`advanceVenueClock: ${ms}: a whole number of ms, at least 0`);
  state = state.frozenAt === undefined ? { advancedMs: state.advancedMs + ms } : { advancedMs: state.advancedMs + ms, frozenAt: state.frozenAt + ms };
}

/**
 * Stops the venue's time at its present value (`frozen` true), or lets it run again (false): it
 * then goes on from the chain's time (wall clock plus every advance), which kept running meanwhile,
 * so the venue and its chain agree again.
 */
export function freezeVenueClock(frozen: boolean): void {
  if (frozen && state.frozenAt === undefined) state = { advancedMs: state.advancedMs, frozenAt: venueNow() };
  else if (!frozen) state = { advancedMs: state.advancedMs };
}

/** Back to the wall clock: at a stack's stop, and in tests (the roles take their step work off themselves). */
export function resetVenueClock(): void {
  state = { advancedMs: 0 };
}

/**
 * Puts the clock back to a state read earlier: the sandbox's revert, which returns the whole venue
 * to a snapshot, its time included (a frozen instant before now, too: what was stamped after it is gone).
 */
export function restoreVenueClock(saved: VenueClockState): void {
  state = saved.frozenAt === undefined ? { advancedMs: saved.advancedMs } : { advancedMs: saved.advancedMs, frozenAt: saved.frozenAt };
}

/**
 * What runs at each step of a sandbox's advance (docs/sandbox.md "What an advance runs"), in this
 * order: each stage sees what the earlier ones did at the same instant (a funding payment on the
 * mark just set, a dividend on the quote just made).
 */
export const CLOCK_STAGES = ['prices', 'oracle', 'marks and expiries', 'funding', 'corporate actions', 'stock orders'] as const;
export type ClockStage = (typeof CLOCK_STAGES)[number];

export interface ClockStepWork {
  stage: ClockStage;
  /** Who runs it (a role, a chain): in the advance's answer. */
  name: string;
  /** One run of the task at the venue's time now; resolves once its effects are written. */
  run(): Promise<unknown>;
  /**
   * `calendar`: the task works by the market's calendar (the stock executor, corporate actions)
   * and runs only at the steps where the New York date or the US session changed, and at the
   * last; by default at every step.
   */
  every?: 'step' | 'calendar';
}

const stepWork = new Set<ClockStepWork>();

/**
 * A role's periodic task, to be run at each step of an advance (the task also runs on its own
 * timer as before). Answers the function that takes it off again, for the role's stop.
 */
export function onVenueClockStep(work: ClockStepWork): () => void {
  stepWork.add(work);
  return () => void stepWork.delete(work);
}

/** The work registered now, in stage order (registration order within a stage). */
export function venueClockStepWork(): ClockStepWork[] {
  return [...stepWork].sort((a, b) => CLOCK_STAGES.indexOf(a.stage) - CLOCK_STAGES.indexOf(b.stage));
}
