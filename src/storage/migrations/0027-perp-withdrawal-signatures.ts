import type { Kysely } from 'kysely';

/**
 * A withdrawal carries the wallet's EIP-712 signature (docs/security.md "Perpetual operator key"):
 * the margin vault pays only against it, so the payment task needs it long after the request.
 * Rows written before 0.2.0 have none; such a withdrawal can no longer be paid by the vault and fails
 * with its reserve returned to the account (docs/upgrades.md).
 */
export async function up(db: Kysely<any>): Promise<void> {
  // 0x + 130 hex: the canonical 65-byte signature the API verified.
  await db.schema.alterTable('perp_withdrawals').addColumn('signature', 'text').execute();
  // Unix seconds after which the vault refuses the request.
  await db.schema.alterTable('perp_withdrawals').addColumn('deadline', 'bigint').execute();
  // Who is paid (the account's own wallet unless it signed another).
  await db.schema.alterTable('perp_withdrawals').addColumn('recipient', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('perp_withdrawals').dropColumn('recipient').execute();
  await db.schema.alterTable('perp_withdrawals').dropColumn('deadline').execute();
  await db.schema.alterTable('perp_withdrawals').dropColumn('signature').execute();
}
