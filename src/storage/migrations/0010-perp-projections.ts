import { sql, type Kysely } from 'kysely';

/**
 * The perpetual venue's read side (docs/perp-api.md): the engine's events projected into tables
 * the API pages through (orders, fills, account transactions, funding rates, candles), the nonces
 * of signed orders, and the vault transactions the API relayed (approve and deposit).
 *
 * Prices are integer ticks and sizes integer lots of the instrument (the API converts them with the
 * instrument's steps); money is an integer string of micro-USD (the collateral's 6 decimals); times
 * are milliseconds.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('perp_orders')
    .addColumn('order_id', 'bigint', (c) => c.primaryKey())
    .addColumn('account', 'text', (c) => c.notNull())
    .addColumn('symbol', 'text', (c) => c.notNull())
    .addColumn('side', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('time_in_force', 'text', (c) => c.notNull())
    .addColumn('price_ticks', 'bigint')
    .addColumn('size_lots', 'bigint', (c) => c.notNull())
    .addColumn('requested_size_lots', 'bigint', (c) => c.notNull())
    .addColumn('filled_lots', 'bigint', (c) => c.notNull())
    .addColumn('filled_notional', 'text', (c) => c.notNull())
    .addColumn('fee', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('reason', 'text')
    .addColumn('reduce_only', 'integer', (c) => c.notNull())
    .addColumn('client_order_id', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('perp_orders_account_idx').on('perp_orders').columns(['account', 'created_at']).execute();
  await db.schema.createIndex('perp_orders_status_idx').on('perp_orders').columns(['account', 'status']).execute();

  // One row per side of a fill: the maker's and the taker's (self-trades never happen).
  await db.schema
    .createTable('perp_trades')
    .addColumn('trade_id', 'bigint', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull().check(sql.raw(`role in ('MAKER', 'TAKER')`)))
    .addColumn('account', 'text', (c) => c.notNull())
    .addColumn('symbol', 'text', (c) => c.notNull())
    .addColumn('order_id', 'bigint', (c) => c.notNull())
    .addColumn('side', 'text', (c) => c.notNull())
    .addColumn('price_ticks', 'bigint', (c) => c.notNull())
    .addColumn('size_lots', 'bigint', (c) => c.notNull())
    .addColumn('notional', 'text', (c) => c.notNull())
    .addColumn('fee', 'text', (c) => c.notNull())
    .addColumn('realised_pnl', 'text', (c) => c.notNull())
    .addColumn('ts', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('perp_trades_pk', ['trade_id', 'role'])
    .execute();
  await db.schema.createIndex('perp_trades_account_idx').on('perp_trades').columns(['account', 'ts']).execute();
  await db.schema.createIndex('perp_trades_order_idx').on('perp_trades').column('order_id').execute();

  // Money in and out of an account: deposits, withdrawals, fees, realised PnL, funding.
  await db.schema
    .createTable('perp_transactions')
    .addColumn('tx_id', 'text', (c) => c.primaryKey())
    .addColumn('account', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('symbol', 'text')
    .addColumn('amount', 'text', (c) => c.notNull())
    .addColumn('ref', 'text')
    .addColumn('ts', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('perp_transactions_account_idx').on('perp_transactions').columns(['account', 'ts']).execute();

  await db.schema
    .createTable('perp_funding_rates')
    .addColumn('symbol', 'text', (c) => c.notNull())
    .addColumn('funding_time', 'bigint', (c) => c.notNull())
    // Signed rate in units of 1e-9 per interval.
    .addColumn('rate_e9', 'text', (c) => c.notNull())
    .addColumn('mark_price_ticks', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('perp_funding_rates_pk', ['symbol', 'funding_time'])
    .execute();

  // Candles of the instrument's own trades, of its mark and of its index.
  await db.schema
    .createTable('perp_candles')
    .addColumn('symbol', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull().check(sql.raw(`kind in ('trade', 'mark', 'index')`)))
    .addColumn('interval', 'text', (c) => c.notNull())
    .addColumn('open_time', 'bigint', (c) => c.notNull())
    .addColumn('open_ticks', 'bigint', (c) => c.notNull())
    .addColumn('high_ticks', 'bigint', (c) => c.notNull())
    .addColumn('low_ticks', 'bigint', (c) => c.notNull())
    .addColumn('close_ticks', 'bigint', (c) => c.notNull())
    .addColumn('volume_lots', 'bigint', (c) => c.notNull())
    .addColumn('turnover', 'text', (c) => c.notNull())
    .addColumn('trades', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('perp_candles_pk', ['symbol', 'kind', 'interval', 'open_time'])
    .execute();

  // Nonces of signed orders: each usable once per account; the order hash answers a retry.
  await db.schema
    .createTable('perp_order_nonces')
    .addColumn('account', 'text', (c) => c.notNull())
    .addColumn('nonce', 'text', (c) => c.notNull())
    .addColumn('order_hash', 'text', (c) => c.notNull())
    .addColumn('expiry', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('perp_order_nonces_pk', ['account', 'nonce'])
    .execute();
  await db.schema.createIndex('perp_order_nonces_expiry_idx').on('perp_order_nonces').column('expiry').execute();

  // Wallet-signed vault transactions (approve, deposit) the API broadcast and follows.
  await db.schema
    .createTable('perp_vault_txs')
    .addColumn('tx_hash', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull().check(sql.raw(`kind in ('approve', 'deposit')`)))
    .addColumn('account', 'text', (c) => c.notNull())
    // Integer string, collateral-token units.
    .addColumn('amount', 'text', (c) => c.notNull())
    .addColumn('api_key', 'text', (c) => c.notNull())
    .addColumn('nonce', 'bigint', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('block_number', 'bigint')
    .addColumn('submitted_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('perp_vault_txs_account_idx').on('perp_vault_txs').columns(['account', 'submitted_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['perp_vault_txs', 'perp_order_nonces', 'perp_candles', 'perp_funding_rates', 'perp_transactions', 'perp_trades', 'perp_orders']) {
    await db.schema.dropTable(t).execute();
  }
}
