/**
 * A singleton role under its lease (src/app/leased-role.ts), in process on one SQLite file: the
 * second copy waits, takes over when the first stops, stops its work when the lease is taken from
 * it and takes it back when free again; a stop while holding returns and frees the lease.
 */
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import { afterEach, expect, it } from 'vitest';
import { leasedRole } from '../../src/app/leased-role.ts';
import type { StackContext } from '../../src/app/stack-context.ts';
import { readLease } from '../../src/storage/lease-store.ts';
import type { Db } from '../../src/storage/database.ts';
import { openTestSqlite } from '../support/test-databases.ts';
import { createRoleStatusRegistry } from '../../src/observability/role-status.ts';

// No hand-over below waits for a silence (each is a release, a changed row or the holder's own
// ended tenure), so a long TTL costs little; it keeps a holder from losing its lease to a stall
// of a busy machine (TTL/2: 1 s), which would add a stop and a start to the logs checked below.
const TTL = 2_000;
const quiet = { info() {}, warn() {}, error() {} };
let db: Db | undefined;
afterEach(async () => {
  await db?.close();
  db = undefined;
});

async function until(what: string, done: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

it('a stand-by copy takes over on a clean stop and after a lost lease, and stops promptly while holding', async () => {
  db = await openTestSqlite();
  const ctx = { db, logger: quiet, config: { leaseTtlMs: TTL }, status: createRoleStatusRegistry('test:1:00') } as unknown as StackContext;
  const log: string[] = [];
  const role = (copy: string) =>
    leasedRole('singleton', async () => {
      log.push(`${copy} started`);
      return async () => void log.push(`${copy} stopped`);
    });

  const stopA = await role('a')(ctx);
  const stopB = await role('b')(ctx);
  expect(log).toEqual(['a started']);
  expect((await readLease(db, 'role:singleton'))!.token).toBe(1n);

  // A clean stop frees the lease: the stand-by takes it at its next look, with the next token.
  await stopA();
  await until('b takes over', () => log.includes('b started'));
  expect(log).toEqual(['a started', 'a stopped', 'b started']);
  expect((await readLease(db, 'role:singleton'))!.token).toBe(2n);

  // Someone else holds the row now (token 3): b stops its work and waits again.
  await sql`update leases set holder = 'elsewhere:1:00', token = 3 where name = 'role:singleton'`.execute(db.kysely);
  await until('b stops', () => log.includes('b stopped'));
  // Freed again: b comes back, under token 4.
  await sql`update leases set holder = '' where name = 'role:singleton'`.execute(db.kysely);
  await until('b is back', () => log.filter((l) => l === 'b started').length === 2);
  expect((await readLease(db, 'role:singleton'))!.token).toBe(4n);

  await stopB();
  expect(log).toEqual(['a started', 'a stopped', 'b started', 'b stopped', 'b started', 'b stopped']);
  expect((await readLease(db, 'role:singleton'))!.holder).toBe('');
});

it('a role whose start held the event loop past TTL/2 loses its lease, says so, and in the same process takes it back by itself', async () => {
  db = await openTestSqlite();
  const errors: string[] = [];
  const logger = { ...quiet, error: (_o: unknown, msg: string) => void errors.push(msg) };
  const status = createRoleStatusRegistry('test:1:00');
  const ctx = { db, logger, config: { leaseTtlMs: TTL }, status } as unknown as StackContext;
  const log: string[] = [];
  const states: string[] = [];
  let starts = 0;
  const stop = await leasedRole('seeder', async () => {
    starts += 1;
    if (starts === 1) {
      // A long synchronous first start, as the one-transaction history seed was (issue 27).
      const until = performance.now() + TTL / 2 + 150;
      while (performance.now() < until) {
        // busy
      }
    }
    log.push(`started ${starts}`);
    states.push(status.leaseState('seeder')!);
    return async () => void log.push(`stopped ${starts}`);
  })(ctx);
  await until('the role is back', () => log.includes('started 2'));
  expect(log).toEqual(['started 1', 'stopped 1', 'started 2']);
  expect(states).toEqual(['held', 'held']);
  expect(errors).toContain('role stopped: its lease was lost; taking it back when free');
  expect(status.leaseState('seeder')).toBe('held');
  expect((await readLease(db, 'role:seeder'))!.token).toBe(2n);
  await stop();
  expect(status.leaseState('seeder')).toBe('released');
});
