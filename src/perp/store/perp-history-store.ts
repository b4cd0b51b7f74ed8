/**
 * The perpetual engine's history as the projector writes it (migration 0010) and the API pages
 * through it: orders, fills (one row per side), money movements of accounts and funding rates.
 * Prices are ticks and sizes lots of the instrument; money is micro-USD as integer strings; times
 * are ms. Lists answer `{ total, rows }`, newest first, as every list of the two APIs does.
 *
 * Writes are idempotent (upserts and insert-or-ignore keyed by engine ids and event seqs), so a
 * batch replayed after a crash between its rows and its cursor changes nothing.
 */
import { sql, type Selectable } from 'kysely';
import { bulkInsert, chunked, type BulkTable } from '../../storage/bulk-sql.ts';
import { kyselyOf, type DbExecutor } from '../../storage/database.ts';
import { listPage, newestFirst, type TimeRange } from '../../storage/list-query.ts';
import type { OrderStatus, OrderType, TriggerBy } from '@tokex/contract';
import type { PerpFundingRatesTable, PerpOrdersTable, PerpTradesTable, PerpTransactionsTable } from '../../storage/schema.ts';

export interface Page {
  /** Rows to skip. */
  offset: number;
  limit: number;
}

export type { TimeRange };

// ------------------------------------------------------------------------------------- orders

export type PerpOrderStatus = OrderStatus;
export const FINAL_ORDER_STATUSES: readonly PerpOrderStatus[] = ['FILLED', 'CANCELED', 'EXPIRED'];

export interface PerpOrderRecord {
  orderId: number;
  account: string;
  symbol: string;
  side: 'BUY' | 'SELL';
  type: OrderType;
  timeInForce: string;
  priceTicks: number | null;
  sizeLots: number;
  requestedSizeLots: number;
  filledLots: number;
  /** Σ price × size × unit of the fills (micro-USD). */
  filledNotional: bigint;
  fee: bigint;
  status: PerpOrderStatus;
  reason: string | null;
  reduceOnly: boolean;
  clientOrderId: string | null;
  createdAt: number;
  updatedAt: number;
  /** The engine's own order closing the account's position in a liquidation (an IOC, reduce-only). */
  liquidation: boolean;
  /** Trigger orders: the trigger price, the price watched, closePosition, and when it fired (else null). */
  triggerPriceTicks: number | null;
  triggerBy: TriggerBy | null;
  closePosition: boolean;
  triggeredAt: number | null;
}

const ORDER_COLUMNS = [
  'order_id', 'account', 'symbol', 'side', 'type', 'time_in_force', 'price_ticks', 'size_lots', 'requested_size_lots', 'filled_lots',
  'filled_notional', 'fee', 'status', 'reason', 'reduce_only', 'client_order_id', 'created_at', 'updated_at', 'liquidation',
  'trigger_price_ticks', 'trigger_by', 'close_position', 'triggered_at',
] as const;

const ORDER_UPSERT: BulkTable = {
  table: 'perp_orders',
  columns: ORDER_COLUMNS,
  // An amendment changes price and size; a trigger firing its size (closePosition) and triggered_at.
  onConflict: { columns: ['order_id'], update: ['price_ticks', 'size_lots', 'filled_lots', 'filled_notional', 'fee', 'status', 'reason', 'updated_at', 'triggered_at'] },
};

function orderFromRow(r: Selectable<PerpOrdersTable>): PerpOrderRecord {
  return {
    orderId: Number(r.order_id),
    account: r.account,
    symbol: r.symbol,
    side: r.side as PerpOrderRecord['side'],
    type: r.type as PerpOrderRecord['type'],
    timeInForce: r.time_in_force,
    priceTicks: r.price_ticks === null ? null : Number(r.price_ticks),
    sizeLots: Number(r.size_lots),
    requestedSizeLots: Number(r.requested_size_lots),
    filledLots: Number(r.filled_lots),
    filledNotional: BigInt(r.filled_notional),
    fee: BigInt(r.fee),
    status: r.status as PerpOrderStatus,
    reason: r.reason,
    reduceOnly: Number(r.reduce_only) === 1,
    clientOrderId: r.client_order_id,
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
    liquidation: Number(r.liquidation) === 1,
    triggerPriceTicks: r.trigger_price_ticks === null ? null : Number(r.trigger_price_ticks),
    triggerBy: r.trigger_by as TriggerBy | null,
    closePosition: Number(r.close_position) === 1,
    triggeredAt: r.triggered_at === null ? null : Number(r.triggered_at),
  };
}

export async function upsertOrders(db: DbExecutor, orders: readonly PerpOrderRecord[]): Promise<void> {
  await bulkInsert(
    db,
    ORDER_UPSERT,
    orders.map((o) => [
      o.orderId, o.account, o.symbol, o.side, o.type, o.timeInForce, o.priceTicks, o.sizeLots, o.requestedSizeLots, o.filledLots,
      o.filledNotional.toString(), o.fee.toString(), o.status, o.reason, o.reduceOnly ? 1 : 0, o.clientOrderId, o.createdAt, o.updatedAt,
      o.liquidation ? 1 : 0, o.triggerPriceTicks, o.triggerBy, o.closePosition ? 1 : 0, o.triggeredAt,
    ]),
  );
}

export async function getOrdersByIds(db: DbExecutor, ids: readonly number[]): Promise<PerpOrderRecord[]> {
  const out: PerpOrderRecord[] = [];
  for (const part of chunked([...new Set(ids)])) {
    const rows = await kyselyOf(db).selectFrom('perp_orders').selectAll().where('order_id', 'in', part).execute();
    for (const r of rows) out.push(orderFromRow(r));
  }
  return out;
}

/** The account's order with that clientOrderId (the engine keeps them unique per account). */
export async function getOrderByClientId(db: DbExecutor, account: string, clientOrderId: string): Promise<PerpOrderRecord | undefined> {
  const row = await kyselyOf(db).selectFrom('perp_orders').selectAll().where('account', '=', account).where('client_order_id', '=', clientOrderId).executeTakeFirst();
  return row === undefined ? undefined : orderFromRow(row);
}

export async function getOrder(db: DbExecutor, orderId: number): Promise<PerpOrderRecord | undefined> {
  const row = await kyselyOf(db).selectFrom('perp_orders').selectAll().where('order_id', '=', orderId).executeTakeFirst();
  return row ? orderFromRow(row) : undefined;
}

export async function listOrders(
  db: DbExecutor,
  q: Page & TimeRange & { account: string; symbol?: string; statuses?: readonly PerpOrderStatus[] },
): Promise<{ total: number; rows: PerpOrderRecord[] }> {
  const base = kyselyOf(db).selectFrom('perp_orders').where('account', '=', q.account.toLowerCase());
  const spec = { filters: [['symbol', q.symbol], ['status', q.statuses]], time: 'created_at', newestFirst: ['created_at', 'order_id'] } as const;
  return listPage(base, spec, q, orderFromRow);
}

// ------------------------------------------------------------------------------------- trades

export interface PerpTradeRecord {
  /** The engine event seq of the fill. */
  tradeId: number;
  role: 'MAKER' | 'TAKER';
  account: string;
  symbol: string;
  orderId: number;
  side: 'BUY' | 'SELL';
  priceTicks: number;
  sizeLots: number;
  notional: bigint;
  fee: bigint;
  realisedPnl: bigint;
  ts: number;
  /** The liquidated account's side of a liquidation order's fill (the taker's); false for the maker. */
  liquidation: boolean;
}

const TRADE_INSERT: BulkTable = {
  table: 'perp_trades',
  columns: ['trade_id', 'role', 'account', 'symbol', 'order_id', 'side', 'price_ticks', 'size_lots', 'notional', 'fee', 'realised_pnl', 'ts', 'liquidation'],
  onConflict: { columns: ['trade_id', 'role'], update: 'nothing' },
};

function tradeFromRow(r: Selectable<PerpTradesTable>): PerpTradeRecord {
  return {
    tradeId: Number(r.trade_id),
    role: r.role as PerpTradeRecord['role'],
    account: r.account,
    symbol: r.symbol,
    orderId: Number(r.order_id),
    side: r.side as PerpTradeRecord['side'],
    priceTicks: Number(r.price_ticks),
    sizeLots: Number(r.size_lots),
    notional: BigInt(r.notional),
    fee: BigInt(r.fee),
    realisedPnl: BigInt(r.realised_pnl),
    ts: Number(r.ts),
    liquidation: Number(r.liquidation) === 1,
  };
}

export async function insertTrades(db: DbExecutor, trades: readonly PerpTradeRecord[]): Promise<void> {
  await bulkInsert(
    db,
    TRADE_INSERT,
    trades.map((t) => [
      t.tradeId, t.role, t.account, t.symbol, t.orderId, t.side, t.priceTicks, t.sizeLots, t.notional.toString(), t.fee.toString(),
      t.realisedPnl.toString(), t.ts, t.liquidation ? 1 : 0,
    ]),
  );
}

const TRADES_NEWEST_FIRST = { time: 'ts', newestFirst: ['ts', 'trade_id'] } as const;

export async function listTrades(
  db: DbExecutor,
  q: Page & TimeRange & { account: string; symbol?: string; orderId?: number },
): Promise<{ total: number; rows: PerpTradeRecord[] }> {
  const base = kyselyOf(db).selectFrom('perp_trades').where('account', '=', q.account.toLowerCase());
  return listPage(base, { filters: [['symbol', q.symbol], ['order_id', q.orderId]], ...TRADES_NEWEST_FIRST }, q, tradeFromRow);
}

/**
 * The instrument's public trade list: one row per fill, the taker's (its side is the trade's side),
 * newest first (migration 0016 indexes it).
 */
export async function listMarketTrades(db: DbExecutor, q: Page & TimeRange & { symbol: string }): Promise<{ total: number; rows: PerpTradeRecord[] }> {
  const base = kyselyOf(db).selectFrom('perp_trades').where('symbol', '=', q.symbol).where('role', '=', 'TAKER');
  return listPage(base, TRADES_NEWEST_FIRST, q, tradeFromRow);
}

// ------------------------------------------------------------------------------- transactions

/**
 * What moved an account's money (docs/perp-api.md "Account and history"; the engine's balance
 * reasons map to these in event-projection.ts):
 * - DEPOSIT, WITHDRAWAL (a withdrawal reserved, or collateral taken back), WITHDRAWAL_RELEASE (a
 *   failed withdrawal's reservation returned);
 * - FEE (trading fees, negative), REALISED_PNL (of a fill), FUNDING;
 * - LIQUIDATION_FEE (negative, to the insurance fund), LIQUIDATION (a position taken over by the
 *   liquidity pool: its realised PnL), ADL (a position closed by auto-deleveraging: its realised PnL),
 *   BAD_DEBT (the insurance fund covering a negative balance, positive);
 * - LIQUIDITY_ADD (negative: collateral into the pool), LIQUIDITY_REMOVE (positive);
 * - OTHER: a movement this version does not know (logged once).
 */
export type PerpTransactionType =
  | 'DEPOSIT'
  | 'WITHDRAWAL'
  | 'WITHDRAWAL_RELEASE'
  | 'FEE'
  | 'REALISED_PNL'
  | 'FUNDING'
  | 'LIQUIDATION_FEE'
  | 'LIQUIDATION'
  | 'ADL'
  | 'BAD_DEBT'
  | 'LIQUIDITY_ADD'
  | 'LIQUIDITY_REMOVE'
  | 'OTHER';
export const PERP_TRANSACTION_TYPES: readonly PerpTransactionType[] = [
  'DEPOSIT', 'WITHDRAWAL', 'WITHDRAWAL_RELEASE', 'FEE', 'REALISED_PNL', 'FUNDING', 'LIQUIDATION_FEE', 'LIQUIDATION', 'ADL', 'BAD_DEBT',
  'LIQUIDITY_ADD', 'LIQUIDITY_REMOVE', 'OTHER',
];

export interface PerpTransactionRecord {
  /** `${eventSeq}:${type}`: unique per movement. */
  txId: string;
  account: string;
  type: PerpTransactionType;
  symbol: string | null;
  /** Signed micro-USD: positive credits the account. */
  amount: bigint;
  ref: string | null;
  ts: number;
}

const TRANSACTION_INSERT: BulkTable = {
  table: 'perp_transactions',
  columns: ['tx_id', 'account', 'type', 'symbol', 'amount', 'ref', 'ts'],
  onConflict: { columns: ['tx_id'], update: 'nothing' },
};

function transactionFromRow(r: Selectable<PerpTransactionsTable>): PerpTransactionRecord {
  return {
    txId: r.tx_id,
    account: r.account,
    type: r.type as PerpTransactionType,
    symbol: r.symbol,
    amount: BigInt(r.amount),
    ref: r.ref,
    ts: Number(r.ts),
  };
}

export async function insertTransactions(db: DbExecutor, txs: readonly PerpTransactionRecord[]): Promise<void> {
  await bulkInsert(
    db,
    TRANSACTION_INSERT,
    txs.map((t) => [t.txId, t.account, t.type, t.symbol, t.amount.toString(), t.ref, t.ts]),
  );
}

export async function listTransactions(
  db: DbExecutor,
  q: Page & TimeRange & { account: string; types?: readonly PerpTransactionType[]; symbol?: string },
): Promise<{ total: number; rows: PerpTransactionRecord[] }> {
  const base = kyselyOf(db).selectFrom('perp_transactions').where('account', '=', q.account.toLowerCase());
  const spec = { filters: [['type', q.types], ['symbol', q.symbol]], time: 'ts', newestFirst: ['ts', 'tx_id'] } as const;
  return listPage(base, spec, q, transactionFromRow);
}

/**
 * The balance after each of `rows` (a page of listTransactions, newest first), by txId: the sum of
 * the account's movements up to and including the row, in the list's order (ts, then tx_id, as the
 * database compares them) whatever the page's filters, so that of two consecutive movements the
 * later one's balance is the earlier one's plus its amount. For an account without isolated
 * positions that is its `balance` after the movement (docs/perp-api.md: the movements add up to
 * it); margin moved into an isolated position is not a movement, so it is still counted.
 *
 * Two reads: the sum of what is older than the page's oldest row (exact: integer arithmetic in
 * the database, as text), and the rows the page spans. The sum reads the account's whole history
 * (its index on account, ts).
 */
export async function transactionBalancesAfter(db: DbExecutor, account: string, rows: readonly PerpTransactionRecord[]): Promise<Map<string, bigint>> {
  const out = new Map<string, bigint>();
  if (rows.length === 0) return out;
  const newest = rows[0];
  const oldest = rows[rows.length - 1];
  const k = kyselyOf(db);
  const mine = k.selectFrom('perp_transactions').where('account', '=', account.toLowerCase());
  const before = await mine
    .select(sql<string | null>`cast(sum(cast(amount as bigint)) as text)`.as('total'))
    .where((eb) => eb.or([eb('ts', '<', oldest.ts), eb.and([eb('ts', '=', oldest.ts), eb('tx_id', '<', oldest.txId)])]))
    .executeTakeFirst();
  const span = await mine
    .select(['tx_id', 'amount'])
    .where((eb) => eb.or([eb('ts', '>', oldest.ts), eb.and([eb('ts', '=', oldest.ts), eb('tx_id', '>=', oldest.txId)])]))
    .where((eb) => eb.or([eb('ts', '<', newest.ts), eb.and([eb('ts', '=', newest.ts), eb('tx_id', '<=', newest.txId)])]))
    .orderBy('ts')
    .orderBy('tx_id')
    .execute();
  let balance = BigInt(before?.total ?? '0');
  for (const r of span) {
    balance += BigInt(r.amount);
    out.set(r.tx_id, balance);
  }
  return out;
}

// ------------------------------------------------------------------------------ funding rates

export interface FundingRateRecord {
  symbol: string;
  fundingTime: number;
  rateE9: bigint;
  markPriceTicks: number;
}

const FUNDING_INSERT: BulkTable = {
  table: 'perp_funding_rates',
  columns: ['symbol', 'funding_time', 'rate_e9', 'mark_price_ticks'],
  onConflict: { columns: ['symbol', 'funding_time'], update: 'nothing' },
};

function fundingFromRow(r: Selectable<PerpFundingRatesTable>): FundingRateRecord {
  return { symbol: r.symbol, fundingTime: Number(r.funding_time), rateE9: BigInt(r.rate_e9), markPriceTicks: Number(r.mark_price_ticks) };
}

export async function insertFundingRates(db: DbExecutor, rates: readonly FundingRateRecord[]): Promise<void> {
  await bulkInsert(db, FUNDING_INSERT, rates.map((r) => [r.symbol, r.fundingTime, r.rateE9.toString(), r.markPriceTicks]));
}

/** Newest first; `limit` rows at most. */
export async function listFundingRates(db: DbExecutor, q: TimeRange & { symbol: string; limit: number }): Promise<FundingRateRecord[]> {
  const base = kyselyOf(db).selectFrom('perp_funding_rates').where('symbol', '=', q.symbol);
  const rows = await newestFirst(base, { time: 'funding_time', newestFirst: ['funding_time'] }, q).limit(q.limit).execute();
  return rows.map(fundingFromRow);
}
