/**
 * The `leases` table (migration 0018): each change is one compare-and-set statement, so two
 * processes racing for a lease on SQLite or PostgreSQL cannot both win. The timing rules (when to
 * renew, when a waiter may take over, when a holder must stop) live in src/storage/lease-keeper.ts.
 */
import type { Kysely } from 'kysely';
import { kyselyOf, type DbExecutor } from './database.ts';

// The table is this module's alone: typed here rather than in the shared schema.
interface LeasesTable {
  name: string;
  holder: string;
  token: string | number | bigint;
  beat: string | number | bigint;
  acquired_at: string | number | bigint;
  renewed_at: string | number | bigint;
}

function leases(db: DbExecutor): Kysely<{ leases: LeasesTable }> {
  return kyselyOf(db) as unknown as Kysely<{ leases: LeasesTable }>;
}

export interface LeaseRow {
  name: string;
  /** Empty when released. */
  holder: string;
  /** The fencing token: one more at every change of holder. */
  token: bigint;
  /** Raised by the holder at every renewal. */
  beat: bigint;
  acquiredAt: number;
  renewedAt: number;
}

export async function readLease(db: DbExecutor, name: string): Promise<LeaseRow | undefined> {
  const row = await leases(db).selectFrom('leases').selectAll().where('name', '=', name).executeTakeFirst();
  return row && {
    name: row.name,
    holder: row.holder,
    token: BigInt(row.token),
    beat: BigInt(row.beat),
    acquiredAt: Number(row.acquired_at),
    renewedAt: Number(row.renewed_at),
  };
}

/** Takes a lease no one ever held: token 1. False when the row exists already. */
export async function insertLease(db: DbExecutor, name: string, holder: string, now: number): Promise<boolean> {
  const res = await leases(db)
    .insertInto('leases')
    .values({ name, holder, token: '1', beat: '0', acquired_at: now, renewed_at: now })
    .onConflict((oc) => oc.column('name').doNothing())
    .executeTakeFirst();
  return Number(res.numInsertedOrUpdatedRows ?? 0n) === 1;
}

/**
 * Takes the lease over from the holder seen as `seen` (token and beat unchanged since): the token
 * goes up by one. Undefined when the row changed meanwhile (the holder renewed, or another waiter won).
 */
export async function takeOverLease(db: DbExecutor, name: string, holder: string, seen: Pick<LeaseRow, 'token' | 'beat'>, now: number): Promise<bigint | undefined> {
  const token = seen.token + 1n;
  const res = await leases(db)
    .updateTable('leases')
    .set({ holder, token: token.toString(), beat: '0', acquired_at: now, renewed_at: now })
    .where('name', '=', name)
    .where('token', '=', seen.token.toString())
    .where('beat', '=', seen.beat.toString())
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1 ? token : undefined;
}

/** One renewal: false when the lease is no longer `holder`'s under `token`. */
export async function renewLease(db: DbExecutor, name: string, holder: string, token: bigint, now: number): Promise<boolean> {
  const res = await leases(db)
    .updateTable('leases')
    .set((eb) => ({ beat: eb('beat', '+', 1), renewed_at: now }))
    .where('name', '=', name)
    .where('holder', '=', holder)
    .where('token', '=', token.toString())
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/** A clean stop: the lease is left free, so a waiter takes it at its next look instead of after a TTL. */
export async function releaseLease(db: DbExecutor, name: string, holder: string, token: bigint, now: number): Promise<boolean> {
  const res = await leases(db)
    .updateTable('leases')
    .set((eb) => ({ holder: '', beat: eb('beat', '+', 1), renewed_at: now }))
    .where('name', '=', name)
    .where('holder', '=', holder)
    .where('token', '=', token.toString())
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}
