/**
 * The stock projections from event records. Two paths compute the same thing:
 * - append (`StockBatch`, driven by the chain follower: `prepare` per range, then the handlers
 *   registered per event in stock-indexer.ts call its folds): each touched entity's new events are
 *   folded onto its stored row (the row *is* the fold of its earlier events), so catch-up never
 *   re-reads old events;
 * - re-projection (`reprojectEntities`): after a rollback, each touched entity is re-folded from all
 *   its remaining events; an entity with none left is deleted.
 * Folding is associative over chain order, so both give identical rows (a test checks it).
 */
import type { Deployment } from '../../chain/deploy-contracts.ts';
import type { ChainEventRecord } from '../../storage/chain-block-store.ts';
import { listEventsOfEntities } from '../../storage/chain-block-store.ts';
import type { DbExecutor } from '../../storage/database.ts';
import {
  deleteCashOperations,
  deleteStockOperations,
  findQueuedCashOperations,
  loadCashOperationStates,
  upsertCashOperationStates,
  upsertStockOperationStates,
  type CashOperationRecord,
  type CashOperationState,
  type OperationKind,
  type StockOperationRecord,
  type StockOperationState,
} from '../store/stock-operation-store.ts';
import { loadCloseReasons } from '../store/order-reason-store.ts';
import {
  deleteFillsOfOrders,
  deleteOrders,
  insertFills,
  listFillsOfOrders,
  loadOpenOrderStatesOfStock,
  loadOrderStates,
  upsertOrderStates,
  type FillRecord,
  type OrderRecord,
  type OrderState,
} from '../store/stock-order-store.ts';
import { applyCashEvent, cashEntityKey, CASH_CREATE_EVENTS, CASH_SETTLE_EVENTS, queueKey, reduceCashOperation, settleQueueOf } from './cash-handler.ts';
import { operationIdOf } from '../operation-id.ts';
import { applyOrderEvent, closedStatusOf, fillOf, ORDER_EVENT_NAMES, orderEntityKey, orderIdOf, reduceOrder } from './order-handler.ts';
import { listHoldersOfStock } from '../store/stock-position-store.ts';
import { restateShares } from '../corporate-actions/split-math.ts';
import { applyStockEvent, collectPositionTouches, reduceStockOperation, stockEntityKey, STOCK_OPERATION_EVENTS, type PositionTouches } from './stock-handler.ts';

export type ContractKind = 'router' | 'cashier' | 'stock' | 'oneClick';

/** Lower-case address → which contract of the deployment it is. */
export function contractKinds(deployment: Deployment): Map<string, ContractKind> {
  const c = deployment.contracts;
  const kinds = new Map<string, ContractKind>();
  kinds.set(c.stockRouter.toLowerCase(), 'router');
  kinds.set(c.cashier.toLowerCase(), 'cashier');
  kinds.set(c.oneClickRouter.toLowerCase(), 'oneClick');
  for (const s of Object.values(c.stocks)) kinds.set(s.toLowerCase(), 'stock');
  return kinds;
}

/** A Map that forgets its least recently used entries beyond `limit`. */
class LruMap<K, V> {
  private readonly map = new Map<K, V>();
  constructor(private readonly limit: number) {}
  get(key: K): V | undefined {
    const v = this.map.get(key);
    if (v !== undefined) {
      this.map.delete(key);
      this.map.set(key, v);
    }
    return v;
  }
  set(key: K, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.limit) this.map.delete(this.map.keys().next().value as K);
  }
  delete(key: K): void {
    this.map.delete(key);
  }
  clear(): void {
    this.map.clear();
  }
}

/**
 * The state of entities that can still change (open orders, queued cash operations), as this
 * indexer last wrote it (committed, or submitted and not yet committed). The indexer is the only
 * writer of the projections, so the cache is exact as long as it is cleared when a write fails, on
 * a rollback, or when another writer moved the checkpoint. It spares the catch-up a database read
 * per range for the orders it placed a few ranges earlier, and lets the next batch be prepared
 * while the previous one is written.
 */
export class ProjectionCache {
  readonly orders: LruMap<string, OrderState>;
  /** All fills of the cached orders (kept when the batches collect stream updates). */
  readonly fills: LruMap<string, readonly FillRecord[]>;
  readonly cash: LruMap<string, CashOperationState>;
  /** `kind:queueId` → operation id of a pending queued operation. */
  readonly queues: LruMap<string, string>;
  constructor(limit = 100_000) {
    this.orders = new LruMap(limit);
    this.fills = new LruMap(limit);
    this.cash = new LruMap(limit);
    this.queues = new LruMap(limit);
  }
  clear(): void {
    this.orders.clear();
    this.fills.clear();
    this.cash.clear();
    this.queues.clear();
  }
  /**
   * Once the projection is submitted for writing: the next batch is prepared from it before it is
   * committed. If the write fails the indexer clears the cache.
   */
  remember(p: AppendProjection): void {
    for (const o of p.orders) {
      const fills = p.orderFills?.get(o.orderId);
      if (o.status === 'Open' || o.status === 'Canceling') {
        this.orders.set(o.orderId, o);
        if (fills) this.fills.set(o.orderId, fills);
        else this.fills.delete(o.orderId);
      } else {
        this.orders.delete(o.orderId);
        this.fills.delete(o.orderId);
      }
    }
    for (const c of p.cash) {
      if (c.status === 'processing' && c.queueId !== null) {
        this.cash.set(c.operationId, c);
        this.queues.set(queueKey(c.kind, c.queueId), c.operationId);
      } else {
        this.cash.delete(c.operationId);
        if (c.queueId !== null) this.queues.delete(queueKey(c.kind, c.queueId));
      }
    }
  }
}

export interface AppendProjection {
  orders: OrderState[];
  fills: FillRecord[];
  cash: CashOperationState[];
  stockOps: StockOperationState[];
  touches: PositionTouches;
  /** When the batch collects stream updates: every fill of each order in `orders`, chain order. */
  orderFills?: ReadonlyMap<string, readonly FillRecord[]>;
}

/**
 * An order as a batch wrote it, with the rest of what its view (`GET orders/{orderId}`) shows: all
 * its fills, and the executor's reason when the batch closed it REJECTED or EXPIRED.
 */
export interface OrderUpdate {
  order: OrderRecord;
  /** Chain order: the stored ones, then the batch's. */
  fills: readonly FillRecord[];
  reason: string | null;
}

/** The rows a batch wrote, as it wrote them: what the stock streams publish (each rendered by its REST view). */
export interface StockIndexUpdates {
  orders: OrderUpdate[];
  cash: CashOperationRecord[];
  stock: StockOperationRecord[];
}

/**
 * The stock indexer's state for one batch (one database transaction) of consecutive new blocks.
 * Per range, `prepare` assigns entity keys (so events can be written at once) and loads the stored
 * rows of entities that began earlier; then the handlers registered per event fold each event
 * (`foldOrder`, `foldCash`, `foldStockOperation`, `touchPositions`). Entity states stay in memory
 * until `result()`. Reads the database but never writes.
 *
 * With `streams`, it also gathers what the stock streams show of the rows it writes and cannot fold
 * from the batch's events alone, so that `updates()` renders without reading them back: the fills
 * an order already had (from the cache, else read with its stored state) and the executor's
 * reason for an order closed REJECTED or EXPIRED (written by the executor before it sent the close).
 */
export class StockBatch {
  private readonly orders = new Map<string, OrderState>();
  private readonly cash = new Map<string, CashOperationState>();
  private readonly stockOps = new Map<string, StockOperationState>();
  private readonly queued = new Map<string, string>();
  private readonly touchedOrders = new Set<string>();
  private readonly touchedCash = new Set<string>();
  /** Entities whose stored state was looked up (found or not). */
  private readonly looked = new Set<string>();
  private readonly fills: FillRecord[] = [];
  private readonly touches: PositionTouches = new Map();
  private readonly orderStock = (id: string) => this.orders.get(id)?.stockAddress;
  /** With `streams`: the stored fills of the orders that began before the batch. */
  private readonly priorFills = new Map<string, readonly FillRecord[]>();
  /** With `streams`: the executor's reasons of the orders the batch closes Rejected or Expired. */
  private readonly reasons = new Map<string, string>();
  /** Per stock that splits in the batch: every address the indexer has seen hold it. */
  private readonly splitHolders = new Map<string, readonly string[]>();

  /**
   * @param beforeRead awaited before any database read: batches are written while the next one is
   *   prepared, and a read must see the batches before it.
   */
  constructor(
    private readonly db: DbExecutor,
    private readonly kinds: ReadonlyMap<string, ContractKind>,
    private readonly cache?: ProjectionCache,
    private readonly beforeRead: () => Promise<void> = async () => {},
    private readonly opts: { streams?: boolean } = {},
  ) {}

  /** Assigns entity keys to a range's `events` (chain order, after every range before) and loads what they fold onto. */
  async prepare(events: readonly ChainEventRecord[]): Promise<void> {
    const { kinds, cache } = this;
    // 1. Entity keys. Settlements refer to a queue id: queued in this batch, cached, or stored.
    const unresolved: ChainEventRecord[] = [];
    for (const ev of events) {
      const kind = kinds.get(ev.address);
      if (kind === 'router') {
        if (ORDER_EVENT_NAMES.has(ev.name)) ev.entityKey = orderEntityKey(orderIdOf(ev));
      } else if (kind === 'cashier') {
        if (CASH_CREATE_EVENTS.has(ev.name)) {
          const opId = operationIdOf(ev.txHash, ev.ordinal);
          ev.entityKey = cashEntityKey(opId);
          if (ev.name === 'DepositQueued') this.queued.set(queueKey('deposit', String(ev.args.queueId)), opId);
          else if (ev.name === 'WithdrawalQueued') this.queued.set(queueKey('withdrawal', String(ev.args.queueId)), opId);
        } else if (CASH_SETTLE_EVENTS.has(ev.name)) {
          const q = settleQueueOf(ev);
          const key = queueKey(q.kind, q.queueId);
          const opId = this.queued.get(key) ?? cache?.queues.get(key);
          if (opId) ev.entityKey = cashEntityKey(opId);
          else unresolved.push(ev);
        }
      } else if (kind === 'stock') {
        if (STOCK_OPERATION_EVENTS.has(ev.name)) ev.entityKey = stockEntityKey(operationIdOf(ev.txHash, ev.ordinal));
      }
    }
    if (unresolved.length > 0) await this.resolveSettlements(unresolved);
    await this.prepareSplits(events);

    // 2. Stored state of entities that began before this batch.
    const streams = this.opts.streams === true;
    const orderIds: string[] = [];
    const fillIds: string[] = [];
    const cashIds: string[] = [];
    const closing: Array<{ orderId: string; status: string }> = [];
    for (const ev of events) {
      const key = ev.entityKey;
      if (streams && key !== null && key.charCodeAt(0) === 111 /* o */) {
        const status = closedStatusOf(ev);
        if (status === 'Rejected' || status === 'Expired') closing.push({ orderId: key.slice(2), status });
      }
      if (key === null || this.looked.has(key)) continue;
      this.looked.add(key);
      const id = key.slice(2);
      if (key.charCodeAt(0) === 111 /* o */ && ev.name !== 'OrderPlaced') {
        const cached = cache?.orders.get(id);
        if (cached) this.orders.set(id, cached);
        else orderIds.push(id);
        if (streams) {
          const fills = cached ? cache?.fills.get(id) : undefined;
          if (fills) this.priorFills.set(id, fills);
          else fillIds.push(id);
        }
      } else if (key.charCodeAt(0) === 99 /* c */ && CASH_SETTLE_EVENTS.has(ev.name)) {
        const cached = cache?.cash.get(id);
        if (cached) this.cash.set(id, cached);
        else cashIds.push(id);
      }
    }
    if (orderIds.length > 0 || fillIds.length > 0 || cashIds.length > 0) await this.beforeRead();
    if (orderIds.length > 0) for (const [id, o] of await loadOrderStates(this.db, orderIds)) this.orders.set(id, o);
    if (fillIds.length > 0) for (const [id, f] of await listFillsOfOrders(this.db, fillIds)) this.priorFills.set(id, f);
    if (cashIds.length > 0) for (const [id, c] of await loadCashOperationStates(this.db, cashIds)) this.cash.set(id, c);
    // Not a projection row: the executor's table, written before the close was sent, so no batch waits.
    if (closing.length > 0) for (const [id, reason] of await loadCloseReasons(this.db, closing)) this.reasons.set(id, reason);
  }

  /** A StockRouter order event onto its order (and the positions it changes). */
  foldOrder(ev: ChainEventRecord): void {
    const key = ev.entityKey;
    if (key !== null) {
      const id = key.slice(2);
      const next = applyOrderEvent(this.orders.get(id), ev);
      if (next) {
        this.orders.set(id, next);
        this.touchedOrders.add(id);
        if (ev.name === 'OrderFilled') this.fills.push(fillOf(ev));
      }
    }
    this.touchPositions(ev);
  }

  /**
   * A split of a Stock (`MultiplierChanged`): every open order of the stock is restated in the new
   * multiplier, as the router's `getOrder` now shows it, and every holder's balances are re-read.
   * The event belongs to no entity: a reorg that drops it leaves the restated orders as they are
   * until their next event (which carries the multiplier in force) or a re-projection.
   */
  applySplit(ev: ChainEventRecord): void {
    if (ev.name !== 'MultiplierChanged') return;
    const multiplier = BigInt(ev.args.newMultiplier as string);
    for (const [id, o] of this.orders) {
      if (o.stockAddress.toLowerCase() !== ev.address || (o.status !== 'Open' && o.status !== 'Canceling')) continue;
      const restated = restateShares(o, multiplier);
      if (restated === o) continue;
      this.orders.set(id, { ...restated, updatedAt: ev.timestamp });
      this.touchedOrders.add(id);
    }
    for (const user of this.splitHolders.get(ev.address) ?? []) {
      let stocks = this.touches.get(user);
      if (!stocks) this.touches.set(user, (stocks = new Set()));
      stocks.add(ev.address);
    }
  }

  /** Loads what a range's splits restate: the stocks' open orders and their holders. */
  private async prepareSplits(events: readonly ChainEventRecord[]): Promise<void> {
    const stocks = new Set<string>();
    for (const ev of events) if (ev.name === 'MultiplierChanged' && this.kinds.get(ev.address) === 'stock') stocks.add(ev.address);
    if (stocks.size === 0) return;
    await this.beforeRead();
    for (const stock of stocks) {
      for (const [id, stored] of await loadOpenOrderStatesOfStock(this.db, stock)) {
        // The batch's own state of an order (earlier ranges) is newer than the stored row.
        if (this.orders.has(id)) continue;
        this.orders.set(id, this.cache?.orders.get(id) ?? stored);
        this.looked.add(orderEntityKey(id));
        if (this.opts.streams && !this.priorFills.has(id)) {
          const fills = this.cache?.fills.get(id) ?? (await listFillsOfOrders(this.db, [id])).get(id) ?? [];
          this.priorFills.set(id, fills);
        }
      }
      this.splitHolders.set(stock, await listHoldersOfStock(this.db, stock));
    }
  }

  /** A Cashier event onto its cash operation (a settlement of an operation never seen has no key). */
  foldCash(ev: ChainEventRecord): void {
    const key = ev.entityKey;
    if (key === null) return;
    const id = key.slice(2);
    const next = applyCashEvent(this.cash.get(id), ev);
    if (next) {
      this.cash.set(id, next);
      this.touchedCash.add(id);
    }
  }

  /** A Stock exchange deposit or withdrawal (and the position it changes). */
  foldStockOperation(ev: ChainEventRecord): void {
    const key = ev.entityKey;
    if (key !== null) {
      const id = key.slice(2);
      const next = applyStockEvent(this.stockOps.get(id), ev);
      if (next) this.stockOps.set(id, next);
    }
    this.touchPositions(ev);
  }

  /** Records the (user, stock) pairs whose balances `ev` may have changed. */
  touchPositions(ev: ChainEventRecord): void {
    collectPositionTouches(ev, this.kinds.get(ev.address), this.orderStock, this.touches);
  }

  private async resolveSettlements(unresolved: readonly ChainEventRecord[]): Promise<void> {
    await this.beforeRead();
    const byKind = new Map<OperationKind, Set<string>>();
    for (const ev of unresolved) {
      const q = settleQueueOf(ev);
      let ids = byKind.get(q.kind);
      if (!ids) byKind.set(q.kind, (ids = new Set()));
      ids.add(q.queueId);
    }
    const found = new Map<string, string>();
    for (const [kind, ids] of byKind) {
      for (const [queueId, opId] of await findQueuedCashOperations(this.db, kind, [...ids])) found.set(queueKey(kind, queueId), opId);
    }
    for (const ev of unresolved) {
      const q = settleQueueOf(ev);
      const opId = found.get(queueKey(q.kind, q.queueId));
      // Queued before the indexer's start block: nothing to complete; the event is still recorded.
      if (opId) ev.entityKey = cashEntityKey(opId);
    }
  }

  /** The position touches so far (for reading balances before `result()`). */
  positionTouches(): PositionTouches {
    return this.touches;
  }

  result(): AppendProjection {
    const orders = [...this.touchedOrders].map((id) => this.orders.get(id) as OrderState);
    return {
      orders,
      fills: this.fills,
      cash: [...this.touchedCash].map((id) => this.cash.get(id) as CashOperationState),
      stockOps: [...this.stockOps.values()],
      touches: this.touches,
      ...(this.opts.streams ? { orderFills: this.allFills() } : {}),
    };
  }

  /** Every fill of each touched order: those it had before the batch, then the batch's. */
  private allFills(): Map<string, readonly FillRecord[]> {
    const out = new Map<string, FillRecord[]>();
    for (const id of this.touchedOrders) out.set(id, [...(this.priorFills.get(id) ?? [])]);
    for (const f of this.fills) out.get(f.orderId)?.push(f);
    return out;
  }

  /** The stream updates of the rows `result()` writes (only for a batch made with `streams`). */
  updates(): StockIndexUpdates {
    if (!this.opts.streams) throw new Error('StockBatch: made without `streams`, it has no stream updates');
    const p = this.result();
    return {
      orders: p.orders.map((order) => ({
        order,
        fills: p.orderFills?.get(order.orderId) ?? [],
        reason: order.status === 'Rejected' || order.status === 'Expired' || order.status === 'Canceled' ? (this.reasons.get(order.orderId) ?? null) : null,
      })),
      cash: p.cash,
      stock: p.stockOps,
    };
  }
}

/** The position touches of stored events (the orphaned ones of a rollback). */
export async function touchesOf(
  db: DbExecutor,
  events: readonly ChainEventRecord[],
  kinds: ReadonlyMap<string, ContractKind>,
): Promise<PositionTouches> {
  const ids = new Set<string>();
  for (const ev of events) if (ev.name === 'OrderFilled' || ev.name === 'OrderClosed') ids.add(orderIdOf(ev));
  const orders = ids.size > 0 ? await loadOrderStates(db, [...ids]) : new Map<string, OrderState>();
  const touches: PositionTouches = new Map();
  for (const ev of events) collectPositionTouches(ev, kinds.get(ev.address), (id) => orders.get(id)?.stockAddress, touches);
  return touches;
}

/**
 * Re-derives the projections of `entityKeys` from their stored events (after a rollback deleted
 * some): rows are rewritten, fills replaced, and rows with no events left deleted.
 */
export async function reprojectEntities(db: DbExecutor, indexer: string, entityKeys: readonly string[]): Promise<void> {
  if (entityKeys.length === 0) return;
  const events = await listEventsOfEntities(db, indexer, entityKeys);
  const byKey = new Map<string, ChainEventRecord[]>();
  for (const key of entityKeys) byKey.set(key, []);
  for (const ev of events) byKey.get(ev.entityKey as string)?.push(ev);

  const orderIds: string[] = [];
  const orderRows: OrderState[] = [];
  const fills: FillRecord[] = [];
  const deadOrders: string[] = [];
  const cashRows: CashOperationState[] = [];
  const deadCash: string[] = [];
  const stockRows: StockOperationState[] = [];
  const deadStock: string[] = [];
  for (const [key, evs] of byKey) {
    const id = key.slice(2);
    if (key.startsWith('o:')) {
      orderIds.push(id);
      const { order, fills: f } = reduceOrder(evs);
      if (order) {
        orderRows.push(order);
        fills.push(...f);
      } else deadOrders.push(id);
    } else if (key.startsWith('c:')) {
      const op = reduceCashOperation(evs);
      if (op) cashRows.push(op);
      else deadCash.push(id);
    } else if (key.startsWith('s:')) {
      const op = reduceStockOperation(evs);
      if (op) stockRows.push(op);
      else deadStock.push(id);
    }
  }
  await deleteFillsOfOrders(db, orderIds);
  await deleteOrders(db, deadOrders);
  await upsertOrderStates(db, orderRows);
  await insertFills(db, fills);
  await deleteCashOperations(db, deadCash);
  await upsertCashOperationStates(db, cashRows);
  await deleteStockOperations(db, deadStock);
  await upsertStockOperationStates(db, stockRows);
}
