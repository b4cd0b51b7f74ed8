import { sql, type Kysely } from 'kysely';

/**
 * Withdrawals of the perpetual venue (docs/perp-api.md "Withdrawals", docs/perp-risk.md): one row
 * per withdrawal id, from the request to the vault's payment. The engine's journalled reservation
 * is the truth about the money; this row is the payment's record: the signed transactions (kept
 * before they are broadcast, so a restarted worker follows them instead of paying again), the
 * decided outcome and the status the API shows.
 *
 * Status: REQUESTED (the API's note before the engine answered; never shown, deleted on a refusal)
 * → PENDING (reserved) → SENT (a payment signed and broadcast) → COMPLETED, or FAILED with a reason.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('perp_withdrawals')
    // 0x + 64 hex: the vault's bytes32 id, keccak256 of (account, clientWithdrawalId).
    .addColumn('withdrawal_id', 'text', (c) => c.primaryKey())
    .addColumn('account', 'text', (c) => c.notNull())
    // Null only for a reservation whose API answer was lost before the row was written.
    .addColumn('client_withdrawal_id', 'text')
    // Integer string of micro-USD (= collateral-token units).
    .addColumn('amount', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().check(sql.raw(`status in ('REQUESTED', 'PENDING', 'SENT', 'COMPLETED', 'FAILED')`)))
    // Decided before the engine is told (PAID or FAILED): a restart settles what was decided.
    .addColumn('outcome', 'text', (c) => c.check(sql.raw(`outcome is null or outcome in ('PAID', 'FAILED')`)))
    .addColumn('tx_hash', 'text')
    // JSON array of {hash, raw, nonce}: every signed version of the payment, in order.
    .addColumn('tx_versions', 'text', (c) => c.notNull())
    .addColumn('block_number', 'bigint')
    .addColumn('reason', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('perp_withdrawals_account_idx').on('perp_withdrawals').columns(['account', 'created_at']).execute();
  await db.schema.createIndex('perp_withdrawals_status_idx').on('perp_withdrawals').column('status').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('perp_withdrawals').execute();
}
