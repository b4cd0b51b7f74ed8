/**
 * Orders and their fills, as projected by the stock indexer from StockRouter events
 * (docs/indexer.md). Read by the API; written only by the indexer. The key mapping is a join on
 * the placement transaction (`stock_tx_records.tx_hash = stock_orders.place_tx_hash`), so an order placed by a
 * transaction nobody recorded is still here, and belongs to a key as soon as the key records it.
 *
 * Amounts are integer strings in the smallest unit (quantity: stock units, 18 decimals; price,
 * notional, fees: mUSD, 18 decimals; locked: mUSD for a buy, the stock's base units for a sell).
 * `multiplier` is the stock's share multiplier the order's quantity, price and filled quantity are
 * stated in (1e36 before any split: base units and shares are then equal). Times are ms
 * from block timestamps; `deadline` is unix seconds.
 */
import type { Selectable } from 'kysely';
import { kyselyOf, type DbExecutor } from '../../storage/database.ts';
import { bulkInsertRecords, chunked, type BulkTable } from '../../storage/bulk-sql.ts';
import { listPage } from '../../storage/list-query.ts';
import { whereRecordedOrOwned } from './tx-record-store.ts';
import type { OrderFillsTable, OrdersTable } from '../../storage/schema.ts';

export type OrderSide = 'Buy' | 'Sell';
export type OrderType = 'Market' | 'Limit';
export type OrderStatus = 'Open' | 'Canceling' | 'Filled' | 'Canceled' | 'Expired' | 'Rejected';

export const OPEN_ORDER_STATUSES: readonly OrderStatus[] = ['Open', 'Canceling'];
export const FINAL_ORDER_STATUSES: readonly OrderStatus[] = ['Filled', 'Canceled', 'Expired', 'Rejected'];

export interface OrderRecord {
  /** Decimal string of the on-chain order id. */
  orderId: string;
  userAddress: string;
  stockAddress: string;
  side: OrderSide;
  orderType: OrderType;
  status: OrderStatus;
  /** `DAY` (the only value the router accepts). */
  timeInForce: string;
  /** Unix seconds. */
  deadline: number;
  quantity: string;
  notional: string;
  price: string;
  locked: string;
  filledQuantity: string;
  filledNotional: string;
  fees: string;
  placeTxHash: string;
  cancelTxHash: string | null;
  closeTxHash: string | null;
  createdAt: number;
  updatedAt: number;
  closedAt: number | null;
  /** Block of the placement. */
  blockNumber: number;
  /** The stock's share multiplier the shares above are stated in (decimal string, 1e36 = no split). */
  multiplier: string;
}

export interface FillRecord {
  orderId: string;
  txHash: string;
  blockNumber: number;
  logIndex: number;
  quantity: string;
  price: string;
  notional: string;
  fee: string;
  timestamp: number;
}

/** An order as the indexer folds it: the record plus what orders it among orders of one block. */
export interface OrderState extends OrderRecord {
  placeLogIndex: number;
}

export interface OrderListQuery {
  apiKey: string;
  /** The key's bound wallet: its orders are listed too, whoever recorded them (read access). */
  userAddress?: string;
  stockAddress?: string;
  /** `open`: Open or Canceling; `history`: a final status. */
  state?: 'open' | 'history';
  status?: OrderStatus;
  /** Inclusive bounds on createdAt (ms). */
  startTime?: number;
  endTime?: number;
  offset: number;
  limit: number;
}

function fromRow(r: Selectable<OrdersTable>): OrderRecord {
  return {
    orderId: r.order_id,
    userAddress: r.user_address,
    stockAddress: r.stock_address,
    side: r.side as OrderSide,
    orderType: r.order_type as OrderType,
    status: r.status as OrderStatus,
    timeInForce: r.time_in_force,
    deadline: Number(r.deadline),
    quantity: r.quantity,
    notional: r.notional,
    price: r.price,
    locked: r.locked,
    filledQuantity: r.filled_quantity,
    filledNotional: r.filled_notional,
    fees: r.fees,
    placeTxHash: r.place_tx_hash,
    cancelTxHash: r.cancel_tx_hash,
    closeTxHash: r.close_tx_hash,
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
    closedAt: r.closed_at === null ? null : Number(r.closed_at),
    blockNumber: Number(r.block_number),
    multiplier: r.multiplier,
  };
}

function stateFromRow(r: Selectable<OrdersTable>): OrderState {
  return { ...fromRow(r), placeLogIndex: Number(r.place_log_index) };
}

function fillFromRow(r: Selectable<OrderFillsTable>): FillRecord {
  return {
    orderId: r.order_id,
    txHash: r.tx_hash,
    blockNumber: Number(r.block_number),
    logIndex: Number(r.log_index),
    quantity: r.quantity,
    price: r.price,
    notional: r.notional,
    fee: r.fee,
    timestamp: Number(r.timestamp),
  };
}

export async function getOrder(db: DbExecutor, orderId: string): Promise<OrderRecord | undefined> {
  const row = await kyselyOf(db).selectFrom('stock_orders').selectAll().where('order_id', '=', orderId).executeTakeFirst();
  return row ? fromRow(row) : undefined;
}

/** The order's fills in chain order. */
export async function listOrderFills(db: DbExecutor, orderId: string): Promise<FillRecord[]> {
  const rows = await kyselyOf(db)
    .selectFrom('stock_order_fills')
    .selectAll()
    .where('order_id', '=', orderId)
    .orderBy('block_number')
    .orderBy('log_index')
    .execute();
  return rows.map(fillFromRow);
}

/** Orders placed by transaction `txHash` (one, unless a contract placed several), by order id. */
export async function listOrdersByTx(db: DbExecutor, txHash: string): Promise<OrderRecord[]> {
  const rows = await kyselyOf(db).selectFrom('stock_orders').selectAll().where('place_tx_hash', '=', txHash.toLowerCase()).execute();
  return rows.map(fromRow).sort((a, b) => compareIds(a.orderId, b.orderId));
}

function compareIds(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}

/**
 * Orders whose placement transaction `apiKey` recorded, plus, with `userAddress`, every order of
 * that wallet; newest first.
 */
export async function listOrdersForApiKey(db: DbExecutor, q: OrderListQuery): Promise<{ total: number; rows: OrderRecord[] }> {
  const base = whereRecordedOrOwned(kyselyOf(db).selectFrom('stock_orders as o'), { tx: 'o.place_tx_hash', user: 'o.user_address' }, q);
  const spec = {
    filters: [
      ['o.stock_address', q.stockAddress?.toLowerCase()],
      ['o.status', q.state === 'open' ? OPEN_ORDER_STATUSES : q.state === 'history' ? FINAL_ORDER_STATUSES : undefined],
      ['o.status', q.status],
    ],
    time: 'o.created_at',
    newestFirst: ['o.created_at', 'o.block_number', 'o.place_log_index'],
  } as const;
  return listPage(base, spec, q, fromRow);
}

/** The API key that recorded the order's placement transaction, if any. */
export async function getOrderOwner(db: DbExecutor, orderId: string): Promise<string | undefined> {
  const row = await kyselyOf(db)
    .selectFrom('stock_orders as o')
    .innerJoin('stock_tx_records as t', 't.tx_hash', 'o.place_tx_hash')
    .select('t.api_key')
    .where('o.order_id', '=', orderId)
    .executeTakeFirst();
  return row?.api_key;
}

// ------------------------------------------------------------- indexer writes

const ORDER_COLUMNS = [
  'order_id',
  'user_address',
  'stock_address',
  'side',
  'order_type',
  'status',
  'time_in_force',
  'deadline',
  'quantity',
  'notional',
  'price',
  'locked',
  'filled_quantity',
  'filled_notional',
  'fees',
  'place_tx_hash',
  'cancel_tx_hash',
  'close_tx_hash',
  'created_at',
  'updated_at',
  'closed_at',
  'block_number',
  'place_log_index',
  'multiplier',
] as const;

const ORDER_UPSERT: BulkTable = {
  table: 'stock_orders',
  columns: ORDER_COLUMNS,
  onConflict: { columns: ['order_id'], update: ORDER_COLUMNS.slice(1) },
};

/**
 * What events after the placement change. Appending only ever changes these (the placement fields
 * of a stored order are final on its branch); updating fewer columns spares index maintenance.
 */
const ORDER_APPEND_UPSERT: BulkTable = {
  table: 'stock_orders',
  columns: ORDER_COLUMNS,
  onConflict: {
    columns: ['order_id'],
    // quantity, price and multiplier change when a split restates an open order.
    update: ['status', 'locked', 'filled_quantity', 'filled_notional', 'fees', 'cancel_tx_hash', 'close_tx_hash', 'updated_at', 'closed_at', 'quantity', 'price', 'multiplier'],
  },
};

const FILL_INSERT: BulkTable = {
  table: 'stock_order_fills',
  columns: ['order_id', 'tx_hash', 'block_number', 'log_index', 'quantity', 'price', 'notional', 'fee', 'timestamp'],
  onConflict: { columns: ['tx_hash', 'log_index'], update: 'nothing' },
};

/**
 * Inserts or replaces orders (the indexer's fold results), one entry per order id. `appendOnly`:
 * the caller guarantees that stored orders keep their placement fields (appending new blocks), so
 * only the fields later events change are rewritten.
 */
export async function upsertOrderStates(db: DbExecutor, orders: readonly OrderState[], opts: { appendOnly?: boolean } = {}): Promise<void> {
  await bulkInsertRecords(db, opts.appendOnly ? ORDER_APPEND_UPSERT : ORDER_UPSERT, orders);
}

export async function insertFills(db: DbExecutor, fills: readonly FillRecord[]): Promise<void> {
  await bulkInsertRecords(db, FILL_INSERT, fills);
}

/** The stored fold state of the open orders (Open or Canceling) of `stockAddress`. */
export async function loadOpenOrderStatesOfStock(db: DbExecutor, stockAddress: string): Promise<Map<string, OrderState>> {
  const rows = await kyselyOf(db)
    .selectFrom('stock_orders')
    .selectAll()
    .where('stock_address', '=', stockAddress.toLowerCase())
    .where('status', 'in', OPEN_ORDER_STATUSES)
    .execute();
  return new Map(rows.map((r) => [r.order_id, stateFromRow(r)]));
}

/** The stored fold state of these orders (those that exist). */
export async function loadOrderStates(db: DbExecutor, orderIds: readonly string[]): Promise<Map<string, OrderState>> {
  const out = new Map<string, OrderState>();
  for (const ids of chunked(orderIds)) {
    const rows = await kyselyOf(db).selectFrom('stock_orders').selectAll().where('order_id', 'in', ids).execute();
    for (const r of rows) out.set(r.order_id, stateFromRow(r));
  }
  return out;
}

/** Removes orders and all their fills (a re-projection rewrites the fills of the orders it keeps). */
export async function deleteOrders(db: DbExecutor, orderIds: readonly string[]): Promise<void> {
  for (const ids of chunked(orderIds)) {
    await kyselyOf(db).deleteFrom('stock_orders').where('order_id', 'in', ids).execute();
  }
}

export async function deleteFillsOfOrders(db: DbExecutor, orderIds: readonly string[]): Promise<void> {
  for (const ids of chunked(orderIds)) {
    await kyselyOf(db).deleteFrom('stock_order_fills').where('order_id', 'in', ids).execute();
  }
}

/** The fills of these orders, each order's in chain order (the stock streams read changed orders in bulk). */
export async function listFillsOfOrders(db: DbExecutor, orderIds: readonly string[]): Promise<Map<string, FillRecord[]>> {
  const out = new Map<string, FillRecord[]>();
  for (const ids of chunked(orderIds)) {
    const rows = await kyselyOf(db)
      .selectFrom('stock_order_fills')
      .selectAll()
      .where('order_id', 'in', ids)
      .orderBy('block_number')
      .orderBy('log_index')
      .execute();
    for (const r of rows) {
      const f = fillFromRow(r);
      const list = out.get(f.orderId);
      if (list) list.push(f);
      else out.set(f.orderId, [f]);
    }
  }
  return out;
}

/** Every order still open or canceling (the stock streams' seed), with the fills of none. */
export async function listLiveOrders(db: DbExecutor): Promise<OrderRecord[]> {
  const rows = await kyselyOf(db).selectFrom('stock_orders').selectAll().where('status', 'in', ['Open', 'Canceling']).execute();
  return rows.map(fromRow);
}

/** The wallets that ever placed an order. */
export async function listOrderWallets(db: DbExecutor): Promise<string[]> {
  const rows = await kyselyOf(db).selectFrom('stock_orders').select('user_address').distinct().execute();
  return rows.map((r) => r.user_address.toLowerCase());
}
