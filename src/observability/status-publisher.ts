/**
 * Writes this process's role samples (role-status.ts) to the `role_status` table every
 * `intervalMs`, where every API's `/readyz` and `tokex status` read them. A role this process runs
 * overwrites its row; a role whose lease this process lost or released only marks its own row (a
 * new holder's row is never overwritten by the old one).
 */
import type { Logger } from '../lib/logger.ts';
import type { DbExecutor } from '../storage/database.ts';
import { withTransaction } from '../storage/transaction.ts';
import { markRoleStatus, upsertRoleStatus, type RoleStatusRow } from '../storage/role-status-store.ts';
import type { RoleSnapshot, RoleStatusRegistry } from './role-status.ts';

export interface StatusPublisher {
  /** One write now (also what the timer does). */
  publishOnce(): Promise<void>;
  stop(): Promise<void>;
}

export function rowOf(s: RoleSnapshot, holder: string, now: number): RoleStatusRow {
  return {
    role: s.role,
    holder,
    leaseState: s.leaseState,
    progressAt: s.progressAt,
    detail: { ...s.detail, ...(s.subjects ? { subjects: s.subjects } : {}) },
    publishedAt: now,
  };
}

export function startStatusPublisher(opts: { db: DbExecutor; registry: RoleStatusRegistry; intervalMs: number; logger: Pick<Logger, 'warn'> }): StatusPublisher {
  const { db, registry, logger } = opts;
  let running: Promise<void> | undefined;
  let failing = false;
  const publishOnce = async () => {
    const now = Date.now();
    const snap = registry.snapshot();
    if (snap.length === 0) return;
    const held = snap.filter((s) => s.leaseState === 'held').map((s) => rowOf(s, registry.holder, now));
    const other = snap.filter((s) => s.leaseState !== 'held').map((s) => rowOf(s, registry.holder, now));
    // Not durable: a row lost to a machine crash is written again in `intervalMs`.
    await withTransaction(db, async (tx) => {
      await upsertRoleStatus(tx, held);
      for (const r of other) await markRoleStatus(tx, r);
    }, { durable: false });
  };
  const tick = () => {
    if (running) return;
    running = publishOnce()
      .then(() => {
        if (failing) logger.warn('role status: publishing again');
        failing = false;
      })
      .catch((err) => {
        // Once per outage: readiness elsewhere shows the roles' age growing meanwhile.
        if (!failing) logger.warn({ err: (err as Error).message }, 'role status: could not publish; retrying');
        failing = true;
      })
      .finally(() => (running = undefined));
  };
  const timer = setInterval(tick, opts.intervalMs);
  timer.unref();
  tick();
  return {
    publishOnce,
    async stop() {
      clearInterval(timer);
      await running;
      // The last word of a clean stop: the roles' lease states (released) as they are now.
      await publishOnce().catch(() => undefined);
    },
  };
}
