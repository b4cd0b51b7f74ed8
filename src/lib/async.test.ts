import { describe, expect, it } from 'vitest';
import { serialRuns } from './async.ts';

describe('serialRuns', () => {
  it('runs one at a time in the order asked; a failed run does not stop the next; settled waits for all', async () => {
    const log: string[] = [];
    let active = 0;
    let n = 0;
    const runs = serialRuns(async () => {
      const i = ++n;
      active++;
      expect(active).toBe(1);
      log.push(`start ${i}`);
      await new Promise((r) => setImmediate(r));
      log.push(`end ${i}`);
      active--;
      if (i === 2) throw new Error('second fails');
    }, () => undefined);
    const results = await Promise.allSettled([runs.run(), runs.run(), runs.run()]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(log).toEqual(['start 1', 'end 1', 'start 2', 'end 2', 'start 3', 'end 3']);
    void runs.run();
    await runs.settled();
    expect(log.at(-1)).toBe('end 4');
  });

  it('runs on a timer until cancelled, a timed failure going to onError', async () => {
    const errors: unknown[] = [];
    let n = 0;
    let reached!: () => void;
    const three = new Promise<void>((r) => (reached = r));
    const runs = serialRuns(async () => {
      if (++n === 1) throw new Error('first fails');
      if (n === 3) reached();
    }, (err) => errors.push(err));
    runs.every(5);
    await three;
    runs.cancel();
    await runs.settled();
    const after = n;
    // Cancelled: the count no longer moves (a run is never started after cancel).
    await new Promise((r) => setTimeout(r, 30));
    expect(n).toBe(after);
    expect(errors.map((e) => (e as Error).message)).toEqual(['first fails']);
  });
});
