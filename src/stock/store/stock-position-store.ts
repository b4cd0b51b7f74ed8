/**
 * Stock positions indexed from Stock contract state: for every (user, stock) an indexed event
 * touched, the indexer reads the Stock's balances (wallet ERC-20 balance, free exchange balance
 * `stockBalance`, `lockedStockBalance`) at the block it checkpoints, in the same database
 * transaction as that block's events. Amounts are integer strings in stock units (18 decimals).
 */
import type { Selectable } from 'kysely';
import { kyselyOf, type DbExecutor } from '../../storage/database.ts';
import { bulkInsert, type BulkTable } from '../../storage/bulk-sql.ts';
import type { PositionsTable } from '../../storage/schema.ts';

export interface PositionRecord {
  userAddress: string;
  stockAddress: string;
  walletBalance: string;
  /** Free exchange balance (Stock.stockBalance). */
  exchangeBalance: string;
  /** Exchange balance locked by open sell orders. */
  lockedBalance: string;
  /** Block whose state these balances are. */
  blockNumber: number;
  /** Timestamp (ms) of that block. */
  updatedAt: number;
}

function fromRow(r: Selectable<PositionsTable>): PositionRecord {
  return {
    userAddress: r.user_address,
    stockAddress: r.stock_address,
    walletBalance: r.wallet_balance,
    exchangeBalance: r.exchange_balance,
    lockedBalance: r.locked_balance,
    blockNumber: Number(r.block_number),
    updatedAt: Number(r.updated_at),
  };
}

/** The user's positions with any non-zero balance, by stock address. */
export async function listPositions(db: DbExecutor, userAddress: string): Promise<PositionRecord[]> {
  const rows = await kyselyOf(db)
    .selectFrom('stock_positions')
    .selectAll()
    .where('user_address', '=', userAddress.toLowerCase())
    .where((eb) => eb.or([eb('wallet_balance', '!=', '0'), eb('exchange_balance', '!=', '0'), eb('locked_balance', '!=', '0')]))
    .orderBy('stock_address')
    .execute();
  return rows.map(fromRow);
}

export async function getPosition(db: DbExecutor, userAddress: string, stockAddress: string): Promise<PositionRecord | undefined> {
  const row = await kyselyOf(db)
    .selectFrom('stock_positions')
    .selectAll()
    .where('user_address', '=', userAddress.toLowerCase())
    .where('stock_address', '=', stockAddress.toLowerCase())
    .executeTakeFirst();
  return row ? fromRow(row) : undefined;
}

const POSITION_COLUMNS = [
  'user_address',
  'stock_address',
  'wallet_balance',
  'exchange_balance',
  'locked_balance',
  'block_number',
  'updated_at',
] as const;

const POSITION_UPSERT: BulkTable = {
  table: 'stock_positions',
  columns: POSITION_COLUMNS,
  onConflict: { columns: ['user_address', 'stock_address'], update: POSITION_COLUMNS.slice(2) },
};

/** Indexer write: one entry per (user, stock). */
export async function upsertPositions(db: DbExecutor, positions: readonly PositionRecord[]): Promise<void> {
  await bulkInsert(
    db,
    POSITION_UPSERT,
    positions.map((p) => [
      p.userAddress,
      p.stockAddress,
      p.walletBalance,
      p.exchangeBalance,
      p.lockedBalance,
      p.blockNumber,
      p.updatedAt,
    ]),
  );
}

/** Every address the indexer has seen hold `stockAddress` (a row per (user, stock) ever touched). */
export async function listHoldersOfStock(db: DbExecutor, stockAddress: string): Promise<string[]> {
  const rows = await kyselyOf(db).selectFrom('stock_positions').select('user_address').where('stock_address', '=', stockAddress.toLowerCase()).execute();
  return rows.map((r) => r.user_address);
}
