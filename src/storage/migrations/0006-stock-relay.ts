import { sql, type Kysely } from 'kysely';

/**
 * The One Click relay journal (docs/one-click.md): every transaction the relayer sends for a
 * delegated user, from the API's request to its receipt. A request is `queued` until the relayer
 * signs it; the signed bytes are stored (`sent`) before they are broadcast, so that a relayer
 * restarted at any moment re-broadcasts the same transaction instead of sending the call again
 * with a new nonce; then `mined`, `reverted` or `failed` (never broadcast, or dropped).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('stock_relay_requests')
    .addColumn('request_id', 'text', (c) => c.primaryKey())
    .addColumn('api_key', 'text', (c) => c.notNull())
    .addColumn('user_address', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('to_address', 'text', (c) => c.notNull())
    .addColumn('calldata', 'text', (c) => c.notNull())
    .addColumn('gas_limit', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().check(sqlIn('status', ['queued', 'sent', 'mined', 'reverted', 'failed'])))
    .addColumn('nonce', 'bigint')
    .addColumn('tx_hash', 'text')
    // JSON array of every signed version ({hash, raw, nonce}): the first and each fee replacement.
    .addColumn('tx_versions', 'text')
    .addColumn('block_number', 'bigint')
    .addColumn('gas_used', 'text')
    // JSON {orderIds, operationIds} read off the receipt.
    .addColumn('result', 'text')
    .addColumn('error', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  // The relayer's two questions: what is queued (oldest first), and what was signed and not resolved.
  await db.schema.createIndex('stock_relay_requests_status_idx').on('stock_relay_requests').columns(['status', 'created_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('stock_relay_requests').execute();
}

function sqlIn(column: string, values: readonly string[]) {
  // A literal list: the values are constants of this file, never input.
  return sql.raw(`${column} in (${values.map((v) => `'${v}'`).join(', ')})`);
}
