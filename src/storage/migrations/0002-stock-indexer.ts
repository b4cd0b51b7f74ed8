import { sql, type Kysely } from 'kysely';

/**
 * The stock indexer's tables (docs/indexer.md): the record of on-chain facts (`chain_blocks`,
 * `chain_events`, `indexer_checkpoints`), the projections derived from it (`orders`,
 * `order_fills`, `cash_operations`, `stock_operations`, `positions`) and the API's own records
 * (`tx_records`, `calldata_requests`), which reorg handling never touches.
 *
 * Amounts are TEXT integer strings in the token's smallest unit; block numbers and times are
 * BIGINT (times in ms from the block timestamp); hashes and addresses are lower-case 0x text.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('chain_blocks')
    .addColumn('hash', 'text', (c) => c.primaryKey())
    .addColumn('number', 'bigint', (c) => c.notNull())
    // Null for a block known only from its logs (eth_getLogs carries no parent hash).
    .addColumn('parent_hash', 'text')
    .addColumn('timestamp', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('chain_blocks_number_idx').on('chain_blocks').column('number').execute();

  await db.schema
    .createTable('chain_events')
    .addColumn('block_hash', 'text', (c) => c.notNull())
    .addColumn('block_number', 'bigint', (c) => c.notNull())
    .addColumn('block_timestamp', 'bigint', (c) => c.notNull())
    .addColumn('tx_hash', 'text', (c) => c.notNull())
    .addColumn('log_index', 'integer', (c) => c.notNull())
    .addColumn('ordinal', 'integer', (c) => c.notNull())
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('event_name', 'text', (c) => c.notNull())
    .addColumn('args', 'text', (c) => c.notNull())
    .addColumn('entity_key', 'text')
    .addPrimaryKeyConstraint('chain_events_pk', ['block_hash', 'log_index'])
    .execute();
  // Indexes are kept to what reorg handling needs, since each costs on every insert of a catch-up:
  // orphaned events are found through their blocks (the primary key starts with block_hash), and
  // the events left of an entity through entity_key.
  await db.schema.createIndex('chain_events_entity_idx').on('chain_events').column('entity_key').execute();

  await db.schema
    .createTable('indexer_checkpoints')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('block_number', 'bigint', (c) => c.notNull())
    .addColumn('block_hash', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('orders')
    .addColumn('order_id', 'text', (c) => c.primaryKey())
    .addColumn('user_address', 'text', (c) => c.notNull())
    .addColumn('stock_address', 'text', (c) => c.notNull())
    .addColumn('side', 'text', (c) => c.notNull())
    .addColumn('order_type', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('time_in_force', 'text', (c) => c.notNull())
    .addColumn('deadline', 'bigint', (c) => c.notNull())
    .addColumn('quantity', 'text', (c) => c.notNull())
    .addColumn('notional', 'text', (c) => c.notNull())
    .addColumn('price', 'text', (c) => c.notNull())
    .addColumn('locked', 'text', (c) => c.notNull())
    .addColumn('filled_quantity', 'text', (c) => c.notNull())
    .addColumn('filled_notional', 'text', (c) => c.notNull())
    .addColumn('fees', 'text', (c) => c.notNull())
    .addColumn('place_tx_hash', 'text', (c) => c.notNull())
    .addColumn('cancel_tx_hash', 'text')
    .addColumn('close_tx_hash', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('closed_at', 'bigint')
    .addColumn('block_number', 'bigint', (c) => c.notNull())
    .addColumn('place_log_index', 'integer', (c) => c.notNull())
    .addCheckConstraint('orders_side_ck', sql`side in ('Buy', 'Sell')`)
    .addCheckConstraint('orders_type_ck', sql`order_type in ('Market', 'Limit')`)
    .addCheckConstraint(
      'orders_status_ck',
      sql`status in ('Open', 'Canceling', 'Filled', 'Canceled', 'Expired', 'Rejected')`,
    )
    .execute();
  // The API reaches orders by id or through the placement transaction (the key mapping joins on it).
  await db.schema.createIndex('orders_place_tx_idx').on('orders').column('place_tx_hash').execute();

  await db.schema
    .createTable('order_fills')
    .addColumn('order_id', 'text', (c) => c.notNull())
    .addColumn('tx_hash', 'text', (c) => c.notNull())
    .addColumn('block_number', 'bigint', (c) => c.notNull())
    .addColumn('log_index', 'integer', (c) => c.notNull())
    .addColumn('quantity', 'text', (c) => c.notNull())
    .addColumn('price', 'text', (c) => c.notNull())
    .addColumn('notional', 'text', (c) => c.notNull())
    .addColumn('fee', 'text', (c) => c.notNull())
    .addColumn('timestamp', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('order_fills_pk', ['tx_hash', 'log_index'])
    .execute();
  await db.schema.createIndex('order_fills_order_idx').on('order_fills').column('order_id').execute();

  await db.schema
    .createTable('cash_operations')
    .addColumn('operation_id', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('user_address', 'text', (c) => c.notNull())
    .addColumn('token_address', 'text', (c) => c.notNull())
    .addColumn('token_amount', 'text', (c) => c.notNull())
    .addColumn('musd_amount', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('instant', 'integer', (c) => c.notNull())
    .addColumn('queue_id', 'text')
    .addColumn('tx_hash', 'text', (c) => c.notNull())
    .addColumn('settle_tx_hash', 'text')
    .addColumn('block_number', 'bigint', (c) => c.notNull())
    .addColumn('log_index', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('completed_at', 'bigint')
    .addColumn('steps', 'text', (c) => c.notNull())
    .addCheckConstraint('cash_operations_kind_ck', sql`kind in ('deposit', 'withdrawal')`)
    .addCheckConstraint('cash_operations_status_ck', sql`status in ('processing', 'completed', 'failed')`)
    .addCheckConstraint('cash_operations_instant_ck', sql`instant in (0, 1)`)
    .execute();
  await db.schema.createIndex('cash_operations_tx_idx').on('cash_operations').column('tx_hash').execute();
  await db.schema.createIndex('cash_operations_queue_idx').on('cash_operations').columns(['kind', 'queue_id']).execute();

  await db.schema
    .createTable('stock_operations')
    .addColumn('operation_id', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('user_address', 'text', (c) => c.notNull())
    .addColumn('stock_address', 'text', (c) => c.notNull())
    .addColumn('amount', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('tx_hash', 'text', (c) => c.notNull())
    .addColumn('block_number', 'bigint', (c) => c.notNull())
    .addColumn('log_index', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addCheckConstraint('stock_operations_kind_ck', sql`kind in ('deposit', 'withdrawal')`)
    .addCheckConstraint('stock_operations_status_ck', sql`status in ('processing', 'completed', 'failed')`)
    .execute();
  await db.schema.createIndex('stock_operations_tx_idx').on('stock_operations').column('tx_hash').execute();

  await db.schema
    .createTable('positions')
    .addColumn('user_address', 'text', (c) => c.notNull())
    .addColumn('stock_address', 'text', (c) => c.notNull())
    .addColumn('wallet_balance', 'text', (c) => c.notNull())
    .addColumn('exchange_balance', 'text', (c) => c.notNull())
    .addColumn('locked_balance', 'text', (c) => c.notNull())
    .addColumn('block_number', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('positions_pk', ['user_address', 'stock_address'])
    .execute();

  await db.schema
    .createTable('tx_records')
    .addColumn('tx_hash', 'text', (c) => c.primaryKey())
    .addColumn('api_key', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('recorded_at', 'bigint', (c) => c.notNull())
    .addCheckConstraint(
      'tx_records_kind_ck',
      sql`kind in ('order', 'cash-deposit', 'cash-withdrawal', 'stock-deposit', 'stock-withdrawal')`,
    )
    .execute();
  await db.schema.createIndex('tx_records_api_key_idx').on('tx_records').column('api_key').execute();

  await db.schema
    .createTable('calldata_requests')
    .addColumn('calldata_hash', 'text', (c) => c.primaryKey())
    .addColumn('api_key', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of [
    'calldata_requests',
    'tx_records',
    'positions',
    'stock_operations',
    'cash_operations',
    'order_fills',
    'orders',
    'indexer_checkpoints',
    'chain_events',
    'chain_blocks',
  ]) {
    await db.schema.dropTable(table).execute();
  }
}
