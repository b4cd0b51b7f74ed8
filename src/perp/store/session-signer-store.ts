/**
 * One-Click Trade sessions of the perpetual API (migration 0012, docs/perp-api.md "One-Click
 * Trade"), shared by every API instance through the database, which is the only truth: the order
 * path reads the account's row by primary key for each session-signed order, so a disable answered
 * by one instance holds on every other at once.
 *
 * - `perp_sessions`: the account's current or last session (one per account; enabling replaces it).
 * - `perp_session_addresses`: per account and address, the latest expiry the address was ever
 *   authorised until. An address that is not the active session may be enabled again only once
 *   that time has passed: every order it signed before carries an expiry no later than that (the
 *   order path refuses one beyond its session), so an old signed order can never revive.
 * - `perp_session_nonces`: the nonces of signed enablements used (a signed enablement enables once).
 *
 * Addresses are stored in lower case.
 */
import type { Kysely } from 'kysely';
import { kyselyOf, type Db, type DbExecutor } from '../../storage/database.ts';
import { isUniqueViolation } from '../../storage/storage-errors.ts';
import { withTransaction } from '../../storage/transaction.ts';

/** Rows older than this past their expiry are deleted on the way (kept a day for clock skew between instances). */
const PRUNE_AFTER_MS = 24 * 60 * 60_000;

interface PerpSessionsTable {
  account: string;
  session_address: string;
  expires_at: number;
  enabled_at: number;
  disabled_at: number | null;
}

interface PerpSessionAddressesTable {
  account: string;
  session_address: string;
  authorised_until: number;
}

interface PerpSessionNoncesTable {
  account: string;
  nonce: string;
  expires_at: number;
  used_at: number;
}

/** The tables of migration 0012 (typed here; src/storage/schema.ts does not list them). */
interface SessionSchema {
  perp_sessions: PerpSessionsTable;
  perp_session_addresses: PerpSessionAddressesTable;
  perp_session_nonces: PerpSessionNoncesTable;
}

function sessionKysely(db: DbExecutor): Kysely<SessionSchema> {
  return kyselyOf(db) as unknown as Kysely<SessionSchema>;
}

export interface SessionRecord {
  account: string;
  sessionAddress: string;
  /** ms */
  expiresAt: number;
  enabledAt: number;
  disabledAt: number | null;
}

/** Whether `s` may sign for its account at `now`: not disabled, not expired. */
export function sessionActive(s: SessionRecord | undefined, now: number): s is SessionRecord {
  return s !== undefined && s.disabledAt === null && s.expiresAt > now;
}

function recordOf(r: PerpSessionsTable): SessionRecord {
  return {
    account: r.account,
    sessionAddress: r.session_address,
    expiresAt: Number(r.expires_at),
    enabledAt: Number(r.enabled_at),
    disabledAt: r.disabled_at === null ? null : Number(r.disabled_at),
  };
}

/** The account's current or last session (active or not); undefined when it never enabled one. */
export async function getSession(db: DbExecutor, account: string): Promise<SessionRecord | undefined> {
  const row = await sessionKysely(db).selectFrom('perp_sessions').selectAll().where('account', '=', account.toLowerCase()).executeTakeFirst();
  return row ? recordOf(row) : undefined;
}

export type EnableOutcome =
  | { ok: true; session: SessionRecord }
  /** The address ended before its expiry (disabled or replaced): not again until `until` has passed. */
  | { ok: false; reason: 'blocked'; until: number }
  /** The address is the active session and the new expiry is earlier than its current one. */
  | { ok: false; reason: 'shortens'; current: number }
  /** This signed enablement's nonce was used before. */
  | { ok: false; reason: 'nonce-used' };

/**
 * Makes `sessionAddress` the account's session until `expiresAt`, replacing any other, in one
 * transaction (the account's row is locked on PostgreSQL, so concurrent enables and disables of an
 * account apply one after the other). Checks, in order: the active session's address may only be
 * extended; any other address must not be authorised (by an earlier enable) until `now` or later;
 * the nonce must be fresh. Nothing is written when it answers a refusal.
 */
export async function enableSession(
  db: Db,
  rec: {
    account: string;
    sessionAddress: string;
    expiresAt: number;
    nonce: string;
    now: number;
    /**
     * The address signs nothing outside the venue (the venue's own delegate, one-click-service.ts):
     * no signed order of it can revive, so it may be enabled again at once after a disable.
     */
    reusable?: boolean;
  },
): Promise<EnableOutcome> {
  const account = rec.account.toLowerCase();
  const address = rec.sessionAddress.toLowerCase();
  const { now } = rec;
  try {
    return await withTransaction(db, async (tx) => {
      const k = sessionKysely(tx);
      let q = k.selectFrom('perp_sessions').selectAll().where('account', '=', account);
      if (db.dialect === 'postgres') q = q.forUpdate();
      const found = await q.executeTakeFirst();
      const current = found ? recordOf(found) : undefined;
      if (sessionActive(current, now) && current.sessionAddress === address) {
        if (rec.expiresAt < current.expiresAt) return { ok: false, reason: 'shortens', current: current.expiresAt } as const;
      } else if (rec.reusable !== true) {
        const past = await k
          .selectFrom('perp_session_addresses')
          .select('authorised_until')
          .where('account', '=', account)
          .where('session_address', '=', address)
          .executeTakeFirst();
        if (past && Number(past.authorised_until) >= now) return { ok: false, reason: 'blocked', until: Number(past.authorised_until) } as const;
      }

      // An enablement whose expiry has passed is refused before it gets here, and an address whose
      // authorisation ended long ago blocks nothing: neither row is needed any more.
      await k.deleteFrom('perp_session_nonces').where('expires_at', '<', now - PRUNE_AFTER_MS).execute();
      await k.deleteFrom('perp_session_addresses').where('authorised_until', '<', now - PRUNE_AFTER_MS).execute();
      await k.insertInto('perp_session_nonces').values({ account, nonce: rec.nonce, expires_at: rec.expiresAt, used_at: now }).execute();

      await k
        .insertInto('perp_session_addresses')
        .values({ account, session_address: address, authorised_until: rec.expiresAt })
        .onConflict((oc) =>
          oc.columns(['account', 'session_address']).doUpdateSet((eb) => ({
            authorised_until: eb
              .case()
              .when(eb.ref('excluded.authorised_until'), '>', eb.ref('perp_session_addresses.authorised_until'))
              .then(eb.ref('excluded.authorised_until'))
              .else(eb.ref('perp_session_addresses.authorised_until'))
              .end(),
          })),
        )
        .execute();

      const row: PerpSessionsTable = { account, session_address: address, expires_at: rec.expiresAt, enabled_at: now, disabled_at: null };
      await k
        .insertInto('perp_sessions')
        .values(row)
        .onConflict((oc) => oc.column('account').doUpdateSet({ session_address: address, expires_at: rec.expiresAt, enabled_at: now, disabled_at: null }))
        .execute();
      return { ok: true, session: recordOf(row) } as const;
    });
  } catch (err) {
    // Two enables racing with one signed message: the second's nonce insert fails the transaction.
    if (isUniqueViolation(err)) return { ok: false, reason: 'nonce-used' };
    throw err;
  }
}

/**
 * Ends the account's active session at `now` (idempotent: an expired, disabled or absent session
 * is left as it is). Answers the account's session as it stands afterwards.
 */
export async function disableSession(db: DbExecutor, account: string, now: number): Promise<SessionRecord | undefined> {
  const a = account.toLowerCase();
  const k = sessionKysely(db);
  await k
    .updateTable('perp_sessions')
    .set({ disabled_at: now })
    .where('account', '=', a)
    .where('disabled_at', 'is', null)
    .where('expires_at', '>', now)
    .execute();
  return getSession(db, a);
}
