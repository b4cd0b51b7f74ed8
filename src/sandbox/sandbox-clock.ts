/**
 * The sandbox's clock control (docs/sandbox.md "Clock"), after Stripe's test clocks: an advance
 * moves the whole venue's time forward and answers only once everything that fell due in the jump
 * has run, in order.
 *
 * The jump is walked in steps: every boundary of the shortest funding interval it crosses, then its
 * end. At each step the venue's clock (src/lib/venue-clock.ts) moves to the step, then every role's
 * registered task runs once, stage by stage: the simulator's prices, the oracle's round, the
 * perpetual marks (with the order and trigger expiries they drive), funding, corporate actions, the
 * stock executor. A funding interval crossed is therefore paid once, on the prices of its own end;
 * what is decided lazily from the time (sessions, One Click delegations, the vault's cap, the escape
 * hatch's operator silence) follows from the clock and the chain's time alone.
 *
 * The chain's block time moves to a step only where a task needs it there (`step.chain()`: a due
 * corporate action, stock orders to execute) and at the last step: a block and an oracle
 * publication a step were most of a long advance's time, for steps where nothing on the chain fell
 * due. The roles' own timers are held meanwhile (src/lib/venue-clock-walk.ts).
 */
import type { SandboxClockAdvance, SandboxClockState } from '@tokex/contract';
import { toChainError, type ChainPublicClient } from '../chain/chain-client.ts';
import { AppError, ConflictError } from '../errors/app-error.ts';
import fs from 'node:fs';
import type { Logger } from '../lib/logger.ts';
import { advanceVenueClock, CLOCK_STAGES, freezeVenueClock, venueClockState, venueClockStepWork, venueNow, type ClockStage } from '../lib/venue-clock.ts';
import { holdTimersFor, setVenueClockAdvancer, venueChainHooks, type ClockStep } from '../lib/venue-clock-walk.ts';

/** The file of the data directory that keeps the advances across restarts. */
export const SANDBOX_CLOCK_FILE = 'sandbox-clock.json';

export interface SandboxClockDeps {
  publicClient: ChainPublicClient;
  /** Where the advance is kept across restarts (`DATA_DIR/sandbox-clock.json`). */
  file: string;
  /**
   * Whether the chain's node keeps its time across the stack's restarts (a node of one's own,
   * RPC_URL); the embedded anvil does not, and is moved again at the start.
   */
  nodeKeepsTime: boolean;
  /** The step: the shortest funding interval of the venue (an hour by default). */
  stepMs: number;
  /**
   * What the market's calendar says at a time (its New York date and US session, say): a step where
   * it differs from the last calendar step runs the calendar-bound tasks.
   */
  calendarMark: (ms: number) => string;
  /**
   * Whether this process runs every role: the clock is one per process, so with the roles in
   * separate processes an advance would move some of them and not the others, and is refused.
   */
  allInOne: boolean;
  logger: Pick<Logger, 'info' | 'warn'>;
}

/** The advance kept in the data directory: how far the venue runs ahead of the wall clock. */
function readAdvance(file: string): number {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw err;
  }
  const advancedMs = (JSON.parse(text) as { advancedMs?: unknown }).advancedMs;
  if (!Number.isSafeInteger(advancedMs) || (advancedMs as number) < 0) throw new AppError('VALIDATION', `${file}: advancedMs is not a whole number of ms; delete the file to start on the wall clock`);
  return advancedMs as number;
}

/**
 * The sandbox's clock, with the advances of earlier runs on this data directory put back first: the
 * venue's clock moved by them, and the chain's time too when its node lost them (the embedded
 * anvil restarts on the wall clock; a node of one's own keeps its time and is left as it is).
 */
export async function createSandboxClock(deps: SandboxClockDeps) {
  const { logger, stepMs } = deps;
  const kept = readAdvance(deps.file);
  if (kept > venueClockState().advancedMs) advanceVenueClock(kept - venueClockState().advancedMs);
  /**
   * The venue's chains (the first, then each other one as its venue starts: docs/deployment.md,
   * "Several chains"), each with the whole seconds it has been moved, against `advancedMs`.
   */
  const chains: Array<{ publicClient: ChainPublicClient; movedS: number }> = [];
  if (await addChain(deps.publicClient, deps.nodeKeepsTime)) logger.info({ advancedMs: kept }, 'sandbox clock: the advances of earlier runs put back');
  /** One advance at a time: a second waits for the first, then walks from where it ended. */
  let queue: Promise<unknown> = Promise.resolve();

  const state = (): SandboxClockState => {
    const s = venueClockState();
    return { now: venueNow(), frozen: s.frozenAt !== undefined, advancedMs: s.advancedMs };
  };

  /**
   * A chain the venue's clock moves from now on. An embedded anvil starts on the wall clock again
   * (its state file keeps the blocks, not the time offset): moved to the venue's time and mined there
   * before any role reads it. Answers whether it was moved. (Function statements: hoisted, so the
   * start above can add the first chain with them.)
   */
  async function addChain(publicClient: ChainPublicClient, nodeKeepsTime: boolean): Promise<boolean> {
    const chain = { publicClient, movedS: nodeKeepsTime ? Math.floor(venueClockState().advancedMs / 1000) : 0 };
    chains.push(chain);
    if (chain.movedS * 1000 >= venueClockState().advancedMs - 999) return false;
    await moveOne(chain);
    return true;
  }

  /** Every chain's time moved by what the venue's clock was, and a block mined at it on each. */
  async function moveChain(): Promise<void> {
    await Promise.all(chains.map(moveOne));
  }

  async function moveOne(chain: (typeof chains)[number]): Promise<void> {
    const rpc = (method: string, params: unknown[]) => chain.publicClient.request({ method: method as never, params: params as never });
    const due = Math.floor(venueClockState().advancedMs / 1000) - chain.movedS;
    try {
      if (due > 0) await rpc('evm_increaseTime', [due]);
      chain.movedS += Math.max(due, 0);
      await rpc('evm_mine', []);
    } catch (cause) {
      const err = toChainError(cause);
      throw new ConflictError(`clock: the chain's node refused to move its time (evm_increaseTime, evm_mine: an anvil or Hardhat node is needed): ${err.message}`, { cause });
    }
  }

  async function walk(from: number, to: number): Promise<SandboxClockAdvance> {
    const runs = new Map<string, { stage: string; name: string; runs: number; failed: number; ms: number }>();
    const row = (stage: string, name: string) => {
      const key = `${stage}\u0000${name}`;
      let r = runs.get(key);
      if (!r) runs.set(key, (r = { stage, name, runs: 0, failed: 0, ms: 0 }));
      return r;
    };
    let chainMs = 0;
    let steps = 0;
    let mark = deps.calendarMark(from);
    await holdTimersFor(async (setStep) => {
      for (let at = (Math.floor(from / stepMs) + 1) * stepMs; ; at += stepMs) {
        const stepAt = Math.min(at, to);
        // Time runs on while a step works (unless frozen): a step already passed is not moved back to.
        advanceVenueClock(Math.max(0, stepAt - venueNow()));
        const last = stepAt >= to;
        // The calendar-bound tasks only where the date or the session changed, and at the end: an
        // hour of a session changes nothing for them, and they are most of a step's cost.
        const calendar = last || deps.calendarMark(stepAt) !== mark;
        if (calendar) mark = deps.calendarMark(stepAt);
        let onChain = false;
        /** The stage running: the chain hooks of the stages before it run when a task moves the chain. */
        let during: ClockStage = CLOCK_STAGES[0];
        const toChain = async (): Promise<void> => {
          if (onChain) return;
          const moving = performance.now();
          await moveChain();
          chainMs += performance.now() - moving;
          onChain = true;
          // What the stages run so far at this step would have put on the chain: the oracle's round.
          for (const hook of venueChainHooks(during)) {
            const r = row(hook.stage, hook.name);
            r.runs++;
            const started = performance.now();
            try {
              await hook.run();
            } catch (err) {
              r.failed++;
              logger.warn({ err, task: hook.name, at: stepAt }, 'sandbox clock: a task failed at a step of the advance');
            }
            r.ms += performance.now() - started;
          }
        };
        const step: ClockStep = { at: stepAt, from, to, last, calendar, onChain: () => onChain, chain: toChain };
        setStep(step);
        // The last step on the chain before any task: the advance ends with the chain at its time,
        // the oracle published there and every task run on it.
        if (last) await toChain();
        for (const work of venueClockStepWork()) {
          if (work.every === 'calendar' && !calendar) continue;
          during = work.stage;
          const r = row(work.stage, work.name);
          r.runs++;
          const started = performance.now();
          try {
            await work.run();
          } catch (err) {
            r.failed++;
            logger.warn({ err, task: work.name, at: stepAt }, 'sandbox clock: a task failed at a step of the advance');
          }
          r.ms += performance.now() - started;
        }
        setStep(undefined);
        steps++;
        if (last) break;
      }
    });
    // Kept before the answer (a rename: never half a file), so a restart resumes at the venue's time.
    const tmp = `${deps.file}.tmp`;
    fs.writeFileSync(tmp, `${JSON.stringify({ advancedMs: venueClockState().advancedMs })}\n`);
    fs.renameSync(tmp, deps.file);
    const block = await deps.publicClient.getBlock({ blockTag: 'latest' });
    const s = state();
    logger.info({ from, to, steps }, 'sandbox: clock advanced');
    return {
      from, to, now: s.now, frozen: s.frozen, steps, stepMs, chainTime: Number(block.timestamp), chainMs: Math.round(chainMs),
      ran: [...runs.values()].map((r) => ({ ...r, ms: Math.round(r.ms) })),
    };
  }

  /** One advance at a time: where it goes is decided once the advances before it are done (undefined: nowhere). */
  const queued = <T>(jump: () => { from: number; to: number } | undefined, idle: T): Promise<SandboxClockAdvance | T> => {
    const run = queue.then((): Promise<SandboxClockAdvance | T> | T => {
      const j = jump();
      return j === undefined ? idle : walk(j.from, j.to);
    });
    queue = run.catch(() => undefined);
    return run;
  };

  const notAllInOne = () =>
    new ConflictError('clock: the venue\'s clock is one per process, and this one does not run every role (the engine, the executor or the simulator may be elsewhere); use the all-in-one stack (npm start, or tokex start --role all)');

  const clock = {
    clock: state,

    /**
     * Another chain of the venue, moved with the first from now on (and now, to the venue's time,
     * unless its node kept the time it was moved to: a node of one's own). Waits for an advance
     * under way, so the chain joins between two advances.
     */
    addChain(publicClient: ChainPublicClient, nodeKeepsTime: boolean): Promise<void> {
      const run = queue.then(() => addChain(publicClient, nodeKeepsTime)).then(() => undefined);
      queue = run.catch(() => undefined);
      return run;
    },

    advance(seconds: number): Promise<SandboxClockAdvance> {
      if (!deps.allInOne) return Promise.reject(notAllInOne());
      return queued(() => {
        const from = venueNow();
        return { from, to: from + seconds * 1000 };
      }, undefined as never);
    },

    /**
     * Advances to the venue's time `toMs` in whole seconds, as an advance does (the sandbox's own
     * routes: a split's moment); undefined, nothing moved, when the venue is there already.
     */
    advanceTo(toMs: number): Promise<SandboxClockAdvance | undefined> {
      if (!deps.allInOne) return Promise.reject(notAllInOne());
      return queued(() => {
        const from = venueNow();
        const seconds = Math.ceil((toMs - from) / 1000);
        return seconds > 0 ? { from, to: from + seconds * 1000 } : undefined;
      }, undefined);
    },

    freeze(frozen: boolean): SandboxClockState {
      if (!deps.allInOne) throw notAllInOne();
      freezeVenueClock(frozen);
      logger.info({ frozen }, frozen ? 'sandbox: clock frozen' : 'sandbox: clock running');
      return state();
    },
  };
  // The sandbox's other routes move the clock through it (a split effective now: its moment); a
  // process without every role has none (nor one a stack before it in the process left).
  setVenueClockAdvancer(deps.allInOne ? (toMs) => clock.advanceTo(toMs) : undefined);
  return clock;
}

export type SandboxClock = Awaited<ReturnType<typeof createSandboxClock>>;
