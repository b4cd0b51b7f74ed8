import { describe, expect, it } from 'vitest';
import type { RoleStatusRow } from '../storage/role-status-store.ts';
import { awaitRolesFresh } from './await-roles-fresh.ts';

/** A clock the sleeps move, and a table the publisher fills once `reportsAt` is reached. */
function fakeStack(reportsAt: Record<string, number>) {
  let t = 1_000_000;
  const table = new Map<string, RoleStatusRow>();
  let publishes = 0;
  return {
    now: () => t,
    sleep: async (ms: number) => void (t += ms),
    publishes: () => publishes,
    publish: async () => {
      publishes++;
      for (const [role, at] of Object.entries(reportsAt)) {
        if (t >= at) table.set(role, { role, holder: 'h', leaseState: 'held', progressAt: t, detail: {}, publishedAt: t });
      }
    },
    read: async () => [...table.values()],
  };
}

describe('awaitRolesFresh', () => {
  it('returns as soon as every role has published fresh, publishing each round rather than waiting for the timer', async () => {
    const s = fakeStack({ marketdata: 1_000_000, executor: 1_000_300 });
    const left = await awaitRolesFresh({ roles: ['marketdata', 'executor'], publish: s.publish, read: s.read, staleMs: 15_000, timeoutMs: 20_000, now: s.now, sleep: s.sleep });
    expect(left).toBe('');
    expect(s.now()).toBe(1_000_300);
    expect(s.publishes()).toBe(4);
  });

  it('names what is still not fresh at the deadline, and stops waiting there', async () => {
    const s = fakeStack({ marketdata: 1_000_000 });
    const left = await awaitRolesFresh({ roles: ['marketdata', 'executor'], publish: s.publish, read: s.read, staleMs: 15_000, timeoutMs: 2_000, now: s.now, sleep: s.sleep });
    expect(left).toBe('executor has never reported');
    expect(s.now()).toBe(1_002_000);
  });

  it('takes a failing read as one more round, and says so if it never recovers', async () => {
    const s = fakeStack({});
    const left = await awaitRolesFresh({ roles: ['relayer'], publish: s.publish, read: () => Promise.reject(new Error('locked')), staleMs: 15_000, timeoutMs: 500, now: s.now, sleep: s.sleep });
    expect(left).toBe('role status unreadable');
  });

  it('waits for nothing when the process does not run the whole stack', async () => {
    const s = fakeStack({});
    expect(await awaitRolesFresh({ roles: [], publish: s.publish, read: s.read, staleMs: 15_000, timeoutMs: 20_000, now: s.now, sleep: s.sleep })).toBe('');
    expect(s.publishes()).toBe(0);
  });
});
