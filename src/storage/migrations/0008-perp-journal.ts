import type { Kysely } from 'kysely';

/**
 * The perpetual engine's durable journal (docs/perp-sequencer.md). `perp_journal` holds every
 * command the sequencer applied, in the order it applied them: `seq` is that order (1, 2, … without
 * gaps), `command_id` the caller's id (unique: a resubmission answers the journalled result). Rows
 * with `code` OK are replayed on restart; refused ones are kept for idempotency and audit (they
 * changed nothing). `perp_snapshots` bounds the replay: the engine state after journal row `last_seq`.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('perp_journal')
    .addColumn('seq', 'bigint', (c) => c.primaryKey())
    .addColumn('command_id', 'text', (c) => c.notNull().unique())
    .addColumn('kind', 'text', (c) => c.notNull())
    // JSON of the command, bigints as decimal strings.
    .addColumn('command', 'text', (c) => c.notNull())
    .addColumn('ts', 'bigint', (c) => c.notNull())
    .addColumn('code', 'text', (c) => c.notNull())
    // The engine's last event seq after the command: replay checks it, catch-up starts from it.
    .addColumn('last_event_seq', 'bigint', (c) => c.notNull())
    // JSON of the answer without its events (order outcome, cancels, message).
    .addColumn('result', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('perp_snapshots')
    .addColumn('last_seq', 'bigint', (c) => c.primaryKey())
    .addColumn('state_hash', 'text', (c) => c.notNull())
    .addColumn('snapshot', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('perp_snapshots').execute();
  await db.schema.dropTable('perp_journal').execute();
}
