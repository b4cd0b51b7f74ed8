import { afterEach, describe, expect, it } from 'vitest';
import { periodic, serialRuns } from './async.ts';
import {
  advanceVenueClockTo,
  holdTimersFor,
  onVenueChainMove,
  setVenueClockAdvancer,
  timedVenueRun,
  venueChainHooks,
  venueClockStep,
  venueClockWalking,
  type ClockStep,
} from './venue-clock-walk.ts';

const tick = () => new Promise<void>((r) => setImmediate(r));
const wait = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

describe('the roles\' timers while an advance walks', () => {
  afterEach(() => setVenueClockAdvancer(undefined));

  it('skips a timed run while a walk holds the timers, and runs it outside one', async () => {
    const ran: string[] = [];
    expect(await timedVenueRun(async () => ran.push('before'))).toBe(1);
    await holdTimersFor(async () => {
      expect(venueClockWalking()).toBe(true);
      expect(timedVenueRun(async () => ran.push('during'))).toBeUndefined();
    });
    expect(venueClockWalking()).toBe(false);
    await timedVenueRun(async () => ran.push('after'));
    expect(ran).toEqual(['before', 'after']);
  });

  it('starts the walk only once the timed runs under way have settled', async () => {
    const order: string[] = [];
    let release!: () => void;
    void timedVenueRun(async () => {
      order.push('timed run starts');
      await new Promise<void>((r) => (release = r));
      order.push('timed run ends');
    });
    const walked = holdTimersFor(async () => void order.push('walk'));
    await tick();
    expect(order).toEqual(['timed run starts']);
    release();
    await walked;
    expect(order).toEqual(['timed run starts', 'timed run ends', 'walk']);
  });

  it('does not wait longer than its bound for a run that does not settle', async () => {
    let release!: () => void;
    const stuck = timedVenueRun(() => new Promise<void>((r) => (release = r)));
    const t0 = Date.now();
    expect(await holdTimersFor(async () => 'walked', 50)).toBe('walked');
    expect(Date.now() - t0).toBeLessThan(2_000);
    release();
    await stuck;
  });

  it('names the step under way only inside the walk, and takes it back after a failed walk too', async () => {
    const step = { at: 1 } as ClockStep;
    await holdTimersFor(async (setStep) => {
      setStep(step);
      expect(venueClockStep()).toBe(step);
    });
    expect(venueClockStep()).toBeUndefined();
    await expect(holdTimersFor(async (setStep) => {
      setStep(step);
      throw new Error('step failed');
    })).rejects.toThrow('step failed');
    expect([venueClockStep(), venueClockWalking()]).toEqual([undefined, false]);
  });

  it('holds periodic and serial timed runs, never a run asked for', async () => {
    const runs: string[] = [];
    const task = periodic(5, async () => void runs.push('periodic'), () => {});
    const serial = serialRuns(async () => void runs.push('serial'), () => {});
    await holdTimersFor(async () => {
      task.start();
      serial.every(5);
      await wait(60);
      await task.runOnce();
      await serial.run();
    });
    expect(runs).toEqual(['periodic', 'serial']);
    await wait(60);
    task.stop();
    serial.cancel();
    expect(runs.filter((r) => r === 'periodic').length).toBeGreaterThan(1);
    expect(runs.filter((r) => r === 'serial').length).toBeGreaterThan(1);
  });

  it('runs the chain hooks of the stages before the one that moved the chain, in stage order', () => {
    const offs = [
      onVenueChainMove({ stage: 'funding', name: 'late', run: async () => {} }),
      onVenueChainMove({ stage: 'oracle', name: 'oracle', run: async () => {} }),
    ];
    try {
      expect(venueChainHooks('prices').map((h) => h.name)).toEqual([]);
      expect(venueChainHooks('oracle').map((h) => h.name)).toEqual([]);
      expect(venueChainHooks('marks and expiries').map((h) => h.name)).toEqual(['oracle']);
      expect(venueChainHooks('stock orders').map((h) => h.name)).toEqual(['oracle', 'late']);
    } finally {
      offs.forEach((off) => off());
    }
    expect(venueChainHooks('stock orders')).toEqual([]);
  });

  it('advances through the clock the sandbox offers, and answers false without one', async () => {
    expect(await advanceVenueClockTo(1_000)).toBe(false);
    const asked: number[] = [];
    setVenueClockAdvancer(async (ms) => void asked.push(ms));
    expect(await advanceVenueClockTo(2_000)).toBe(true);
    expect(asked).toEqual([2_000]);
  });
});
