/**
 * The chain indexer of the stock domain (docs/indexer.md): its contracts (StockRouter, Cashier,
 * every Stock, OneClickRouter) and handlers, registered with the generic chain follower
 * (src/indexer/chain-follower.ts), which fetches, stores every log as a decoded event, reconciles
 * reorgs and moves the checkpoint. The handlers fold order, cash and stock-operation events onto
 * the projections (`StockBatch`, projector.ts); at the end of each batch the touched positions are
 * read from contract state and everything is written with the batch's events and checkpoint. On a
 * reorg the entities the orphaned events touched are re-folded from the events left.
 *
 * With `onCommitted` (the stock streams' feed), each batch also hands over, once committed, the
 * rows it wrote as it wrote them (`StockIndexUpdates`), as dYdX's ender handlers return their
 * WebSocket events with their writes: the streams publish them without reading them back.
 */
import { parseAbi, type PublicClient } from 'viem';
import { cashierAbi, oneClickRouterAbi, stockAbi, stockRouterAbi } from '../../chain/abi/generated/index.ts';
import type { Deployment } from '../../chain/deploy-contracts.ts';
import {
  createChainFollower,
  defineIndexer,
  followerOptionsOf,
  type ChainFollower,
  type EventHandler,
  type IndexerDefinition,
} from '../../indexer/chain-follower.ts';
import type { Logger } from '../../lib/logger.ts';
import type { Db } from '../../storage/database.ts';
import { upsertCashOperationStates, upsertStockOperationStates } from '../store/stock-operation-store.ts';
import { insertFills, upsertOrderStates } from '../store/stock-order-store.ts';
import { upsertPositions } from '../store/stock-position-store.ts';
import { CASH_CREATE_EVENTS, CASH_SETTLE_EVENTS } from './cash-handler.ts';
import { ORDER_EVENT_NAMES } from './order-handler.ts';
import { readPositions, zeroPositions } from './position-reader.ts';
import { contractKinds, ProjectionCache, reprojectEntities, StockBatch, touchesOf, type StockIndexUpdates } from './projector.ts';
import { STOCK_OPERATION_EVENTS } from './stock-handler.ts';

export type { BlockDelivery } from '../../indexer/chain-follower.ts';
export type { OrderUpdate, StockIndexUpdates } from './projector.ts';

export interface StockIndexerOptions {
  db: Db;
  publicClient: PublicClient;
  deployment: Deployment;
  /** Blocks to stay behind the head (INDEXER_CONFIRMATIONS). Default 0 (anvil). */
  confirmations?: number;
  /** Polling interval of `start()`'s loop, ms. Default 1000. */
  pollMs?: number;
  /** Most blocks per eth_getLogs request. Default 2000 (the range adapts to the log density within it). */
  batchBlocks?: number;
  /** First block to index. Default: the block the deployment's first contract was created in. */
  startBlock?: number | bigint;
  logger?: Logger;
  /** Indexer name: its checkpoint and the namespace of its blocks and events. Default `stock`. */
  name?: string;
  /**
   * During a catch-up, consecutive ranges share one database transaction until it holds this many
   * events (or has gathered ranges for 3 s). Default 200 000; 1 commits every range on its own.
   */
  commitEvents?: number;
  /** Called after each committed range (metrics, benchmarks). */
  onRange?: (range: { from: number; to: number; events: number }) => void;
  /**
   * Called after each committed batch (with the rows it wrote) and rollback (the stock streams'
   * feed). Given, the batches gather what the rows' views need (fills, close reasons).
   */
  onCommitted?: (change: StockIndexChange) => void;
}

/**
 * What a committed batch changed: the orders and operations it wrote, as written, and the wallets
 * whose orders, operations or positions moved; or, after a reorg's rollback, `rolledBack` and no
 * updates (the rows the orphaned events wrote were re-derived or deleted: anything of theirs may
 * have changed, which only a new snapshot can say).
 */
export interface StockIndexChange {
  updates: StockIndexUpdates;
  /** Lower case. */
  wallets: string[];
  rolledBack?: boolean;
}

function changeOf(batch: StockBatch): StockIndexChange {
  const updates = batch.updates();
  const wallets = new Set<string>();
  for (const u of updates.orders) wallets.add(u.order.userAddress.toLowerCase());
  for (const r of [...updates.cash, ...updates.stock]) wallets.add(r.userAddress.toLowerCase());
  for (const user of batch.positionTouches().keys()) wallets.add(user.toLowerCase());
  return { updates, wallets: [...wallets] };
}

export type StockIndexer = ChainFollower;

/**
 * The StockRouter's events as releases before splits emitted them (374f31d): `OrderPlaced` without
 * the multiplier, `OrderFilled` without the lock left and the multiplier. Decoded under the same
 * names, so an indexer of this release folds a data directory's backlog of such events (before a
 * migration moves the venue) as their own release did.
 */
export const LEGACY_ROUTER_EVENTS = parseAbi([
  'event OrderPlaced(uint256 indexed orderId, address indexed user, address indexed stock, uint8 side, uint8 orderType, uint256 quantity, uint256 notional, uint256 price, uint8 timeInForce, uint32 deadline, uint256 locked)',
  'event OrderFilled(uint256 indexed orderId, address indexed user, uint256 quantity, uint256 price, uint256 notional, uint256 fee)',
]);

/** The stock contracts and their handlers, for the chain follower. */
export function defineStockIndexer(
  deployment: Deployment,
  opts: { name?: string; logger?: Logger; onCommitted?: (change: StockIndexChange) => void } = {},
): IndexerDefinition<StockBatch> {
  const c = deployment.contracts;
  const kinds = contractKinds(deployment);
  const cache = new ProjectionCache();
  const accountLens = c.accountLens;

  const indexer = defineIndexer<StockBatch>({
    name: opts.name ?? 'stock',
    contracts: [
      { name: 'StockRouter', abi: [...stockRouterAbi, ...LEGACY_ROUTER_EVENTS], addresses: [c.stockRouter] },
      { name: 'Cashier', abi: cashierAbi, addresses: [c.cashier] },
      { name: 'Stock', abi: stockAbi, addresses: Object.values(c.stocks) },
      { name: 'OneClickRouter', abi: oneClickRouterAbi, addresses: [c.oneClickRouter] },
    ],
    hooks: {
      createBatch: ({ db, settled }) => new StockBatch(db, kinds, cache, settled, { streams: opts.onCommitted !== undefined }),
      prepare: (batch, events) => batch.prepare(events),
      async flush(batch, ctx) {
        const positions = await readPositions({ chain: ctx.chain, accountLens, confirmations: ctx.confirmations, log: opts.logger }, batch.positionTouches(), ctx.end, ctx.end.timestamp);
        const projection = batch.result();
        await ctx.record(async (r) => {
          await upsertOrderStates(r, projection.orders, { appendOnly: true });
          await insertFills(r, projection.fills);
          await upsertCashOperationStates(r, projection.cash);
          await upsertStockOperationStates(r, projection.stockOps);
          await upsertPositions(r, positions);
        });
      },
      submitted: (batch) => cache.remember(batch.result()),
      committed: opts.onCommitted ? (batch) => opts.onCommitted!(changeOf(batch)) : undefined,
      rolledBack: opts.onCommitted ? () => opts.onCommitted!({ updates: { orders: [], cash: [], stock: [] }, wallets: [], rolledBack: true }) : undefined,
      reset: () => cache.clear(),
      async rollback(ctx) {
        const keys = [...new Set(ctx.orphaned.map((e) => e.entityKey).filter((k): k is string => k !== null))];
        const touches = await touchesOf(ctx.db, ctx.orphaned, kinds);
        // State at the ancestor; before the first indexed block there is none of ours to read.
        const positions =
          ctx.reset || ctx.anchor.number < 0
            ? zeroPositions(touches, ctx.anchor.number)
            : await readPositions({ chain: ctx.chain, accountLens, confirmations: ctx.confirmations, log: opts.logger }, touches, ctx.anchor, await ctx.anchorTimestamp());
        return async (tx) => {
          await reprojectEntities(tx, ctx.indexer, keys);
          await upsertPositions(tx, positions);
        };
      },
    },
  });

  const order: EventHandler<StockBatch> = (ev, { batch }) => batch.foldOrder(ev);
  for (const event of ORDER_EVENT_NAMES) indexer.on(`StockRouter:${event}`, order);
  const cash: EventHandler<StockBatch> = (ev, { batch }) => batch.foldCash(ev);
  for (const event of [...CASH_CREATE_EVENTS, ...CASH_SETTLE_EVENTS]) indexer.on(`Cashier:${event}`, cash);
  const stockOperation: EventHandler<StockBatch> = (ev, { batch }) => batch.foldStockOperation(ev);
  for (const event of STOCK_OPERATION_EVENTS) indexer.on(`Stock:${event}`, stockOperation);
  // Wallet transfers, mint and burn included, change positions without an operation.
  indexer.on('Stock:Transfer', (ev, { batch }) => batch.touchPositions(ev));
  // A split restates the stock's open orders and re-reads every holder's balances.
  indexer.on('Stock:MultiplierChanged', (ev, { batch }) => batch.applySplit(ev));
  // OneClickRouter events are recorded (chain_events) and fold into nothing of their own.
  return indexer;
}

/** The stock domain's indexer, running on its own chain follower. */
export function createStockIndexer(opts: StockIndexerOptions): StockIndexer {
  const { deployment } = opts;
  return createChainFollower(defineStockIndexer(deployment, { name: opts.name, logger: opts.logger, onCommitted: opts.onCommitted }), followerOptionsOf(opts, deployment));
}
