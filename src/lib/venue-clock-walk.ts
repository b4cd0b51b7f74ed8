/**
 * A sandbox's clock advance as the roles see it (docs/sandbox.md "Clock"), beside the clock itself
 * (venue-clock.ts): one per process, like it.
 *
 * - **Timers held.** While an advance walks, every role's own timer (`periodic` and `serialRuns` of
 *   async.ts, the stock executor's loop) skips its run: the advance runs each task at each step
 *   itself, and a run of its own between a step's clock move and the step's work saw half a step
 *   (a chain an hour behind the venue, an oracle an hour old). An advance starting waits for the
 *   timed runs under way, so none of them straddles a clock move.
 * - **The step.** The tasks read the step under way (`venueClockStep()`): where the jump goes, and
 *   whether the chain is at the step. The chain is moved only where something on it falls due (a
 *   task asks, `step.chain()`) and at the last step; in between it stands where it was.
 * - **Chain hooks.** What must be on the chain before a task that asked for it goes on: the
 *   oracle's round of the step, published on it (oracle-wiring.ts).
 * - **The advance itself**, for the sandbox's other routes (a split effective now moves the venue's
 *   clock to its moment: sandbox-corporate-actions.ts), registered by the sandbox's clock.
 */
import type { ClockStage } from './venue-clock.ts';
import { CLOCK_STAGES } from './venue-clock.ts';

/** The step of an advance under way, as its tasks read it. */
export interface ClockStep {
  /** The step's time, ms (the venue's clock stands there, give or take the time the step took). */
  at: number;
  /** Where the advance started and where it ends, ms. */
  from: number;
  to: number;
  /** The advance's last step: the chain is there, and every task runs. */
  last: boolean;
  /** A step where the New York date or the US session changed (or the last): the calendar-bound tasks run. */
  calendar: boolean;
  /** Whether the chain is at this step now. */
  onChain(): boolean;
  /**
   * Moves the chain to this step (its time, a block mined at it) unless it is there, then runs the
   * chain hooks of the stages already run at this step (the oracle's round published on it). A task
   * that reads the chain's time or sends a transaction calls it first.
   */
  chain(): Promise<void>;
}

let walks = 0;
let current: ClockStep | undefined;
const timedRuns = new Set<Promise<unknown>>();

/** Whether an advance is walking in this process now. */
export function venueClockWalking(): boolean {
  return walks > 0;
}

/** The step under way, undefined outside an advance's step. */
export function venueClockStep(): ClockStep | undefined {
  return current;
}

/**
 * One run of a role's own timer: skipped (undefined, nothing called) while an advance walks; else
 * started and tracked until it settles, so that an advance starting meanwhile waits for it.
 */
export function timedVenueRun<T>(run: () => Promise<T>): Promise<T> | undefined {
  if (walks > 0) return undefined;
  let p: Promise<T>;
  try {
    p = run();
  } catch (err) {
    p = Promise.reject(err);
  }
  timedRuns.add(p);
  const done = () => void timedRuns.delete(p);
  p.then(done, done);
  return p;
}

/**
 * Runs `walk` with the roles' timers held: from now on no timed run starts, and `walk` begins once
 * the runs under way have settled (at most `settleMs`: a run stuck on a stalled chain does not stop
 * the advance). `setStep` names the step under way for `venueClockStep()`.
 */
export async function holdTimersFor<T>(walk: (setStep: (step: ClockStep | undefined) => void) => Promise<T>, settleMs = 5_000): Promise<T> {
  walks++;
  try {
    if (timedRuns.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.allSettled([...timedRuns]),
        new Promise<void>((resolve) => (timer = setTimeout(resolve, settleMs))),
      ]);
      clearTimeout(timer);
    }
    return await walk((step) => void (current = step));
  } finally {
    current = undefined;
    walks--;
  }
}

export interface ChainHook {
  /** Run only once this stage has run at the step (a chain moved earlier in the step runs no hook). */
  stage: ClockStage;
  name: string;
  run(): Promise<unknown>;
}

const chainHooks = new Set<ChainHook>();

/** Something to put on the chain when an advance moves it to a step after `stage` ran there. Answers its removal. */
export function onVenueChainMove(hook: ChainHook): () => void {
  chainHooks.add(hook);
  return () => void chainHooks.delete(hook);
}

/** The hooks due when the chain is moved during `stage`: those of the stages before it, in stage order. */
export function venueChainHooks(during: ClockStage): ChainHook[] {
  const upTo = CLOCK_STAGES.indexOf(during);
  return [...chainHooks].filter((h) => CLOCK_STAGES.indexOf(h.stage) < upTo).sort((a, b) => CLOCK_STAGES.indexOf(a.stage) - CLOCK_STAGES.indexOf(b.stage));
}

let advancer: ((toMs: number) => Promise<unknown>) | undefined;

/** The sandbox's clock offers its advance (undefined: taken back, at the stack's stop). */
export function setVenueClockAdvancer(fn: ((toMs: number) => Promise<unknown>) | undefined): void {
  advancer = fn;
}

/**
 * Advances the venue's clock to `toMs` (nothing when it is there already) through the sandbox's
 * advance, every step's work included. False, with nothing done, where no advance can run: not a
 * sandbox, or not every role in this process.
 */
export async function advanceVenueClockTo(toMs: number): Promise<boolean> {
  if (advancer === undefined) return false;
  await advancer(toMs);
  return true;
}
