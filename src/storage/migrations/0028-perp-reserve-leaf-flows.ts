import type { Kysely } from 'kysely';

/**
 * A reserves leaf commits the account's vault flows as the engine knew them at the snapshot (the
 * deposits credited, the payments confirmed): the MarginVault's escape hatch pays a leaf plus what
 * it took from the account since, less what it paid since (docs/security.md, "Perpetual vault escape
 * hatch"). Leaves of epochs built before 0.2.0 have neither (NULL) and keep their four-field hash.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('perp_reserve_leaves').addColumn('deposited', 'text').execute();
  await db.schema.alterTable('perp_reserve_leaves').addColumn('withdrawn', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('perp_reserve_leaves').dropColumn('withdrawn').execute();
  await db.schema.alterTable('perp_reserve_leaves').dropColumn('deposited').execute();
}
