/**
 * The `role_status` table (migration 0020): each singleton role's last published progress, one row
 * per role. Written by src/observability/status-publisher.ts, read by src/observability/readiness.ts.
 */
import type { Kysely } from 'kysely';
import { kyselyOf, type DbExecutor } from './database.ts';

// The table is this module's alone: typed here rather than in the shared schema.
interface RoleStatusTable {
  role: string;
  holder: string;
  lease_state: string;
  progress_at: string | number | bigint | null;
  detail: string;
  published_at: string | number | bigint;
}

function table(db: DbExecutor): Kysely<{ role_status: RoleStatusTable }> {
  return kyselyOf(db) as unknown as Kysely<{ role_status: RoleStatusTable }>;
}

export interface RoleStatusRow {
  role: string;
  /** The publishing process (`<host>:<pid>:<random>`, the lease holder id). */
  holder: string;
  leaseState: string;
  /** Wall-clock ms of the role's last progress; undefined before its first. */
  progressAt?: number;
  detail: Record<string, unknown>;
  /** Wall-clock ms of this row's last write: the publisher's own heartbeat. */
  publishedAt: number;
}

export async function upsertRoleStatus(db: DbExecutor, rows: readonly RoleStatusRow[]): Promise<void> {
  for (const r of rows) {
    const values = {
      holder: r.holder,
      lease_state: r.leaseState,
      progress_at: r.progressAt ?? null,
      detail: JSON.stringify(r.detail),
      published_at: r.publishedAt,
    };
    await table(db)
      .insertInto('role_status')
      .values({ role: r.role, ...values })
      .onConflict((oc) => oc.column('role').doUpdateSet(values))
      .execute();
  }
}

export async function listRoleStatus(db: DbExecutor): Promise<RoleStatusRow[]> {
  const rows = await table(db).selectFrom('role_status').selectAll().orderBy('role').execute();
  return rows.map((r) => {
    let detail: Record<string, unknown> = {};
    try {
      detail = JSON.parse(r.detail) as Record<string, unknown>;
    } catch {
      // A row written by a future version: its figures are not ours to read.
    }
    return {
      role: r.role,
      holder: r.holder,
      leaseState: r.lease_state,
      progressAt: r.progress_at === null ? undefined : Number(r.progress_at),
      detail,
      publishedAt: Number(r.published_at),
    };
  });
}

/** Updates `row.role` only while `row.holder` still owns it: a process that lost a role marks its own row, never a successor's. */
export async function markRoleStatus(db: DbExecutor, row: RoleStatusRow): Promise<void> {
  await table(db)
    .updateTable('role_status')
    .set({ lease_state: row.leaseState, progress_at: row.progressAt ?? null, detail: JSON.stringify(row.detail), published_at: row.publishedAt })
    .where('role', '=', row.role)
    .where('holder', '=', row.holder)
    .execute();
}
