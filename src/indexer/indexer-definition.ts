/**
 * An indexer's definition (chain-follower.ts runs it; docs/indexer.md): its name, the contracts it
 * follows, a handler per contract and event, and optional batch hooks for bulk work. Apart from the
 * follower: an indexer's module defines itself with these alone.
 */
import type { Kysely } from 'kysely';
import type { Abi } from 'viem';
import { AppError } from '../errors/app-error.ts';
import { isIndexerName, type ChainEventRecord } from '../storage/chain-block-store.ts';
import type { DatabaseSchema, Db } from '../storage/database.ts';
import type { BlockHeader, ChainSource } from './chain-source.ts';

export interface IndexedContract {
  /** The contract's name in handler keys (`StockRouter` in `StockRouter:OrderFilled`). */
  name: string;
  abi: Abi;
  /** Every address with this ABI (the Stocks are many contracts of one kind). */
  addresses: readonly string[];
}

/** A handler's view of the batch its event belongs to. */
export interface HandlerContext<B> {
  /** The indexer's state for this batch (`hooks.createBatch`). */
  batch: B;
  /** The contract (as registered) that emitted the event. */
  contract: string;
  /**
   * Adds writes to the batch's transaction: `fn` runs against a recorder when the batch is
   * written, so it may only write (reads belong in `hooks.prepare`).
   */
  write(fn: (db: Kysely<DatabaseSchema>) => Promise<unknown>): void;
}

/**
 * Folds one event into the batch. Handlers run in chain order; a handler may set `event.entityKey`
 * (the projection entity the event feeds, stored with it) for its rollback to find.
 */
export type EventHandler<B> = (event: ChainEventRecord, ctx: HandlerContext<B>) => void | Promise<void>;

export interface BatchStart {
  indexer: string;
  db: Db;
  /** Awaits the batch being written, if any: a database read must see the batches before it. */
  settled(): Promise<void>;
}

export interface FlushContext {
  indexer: string;
  /** The last block the batch covers (its checkpoint). */
  end: BlockHeader;
  chain: ChainSource;
  confirmations: number;
  /** Records writes into the batch's transaction (the same as a handler's `write`). */
  record(fn: (db: Kysely<DatabaseSchema>) => Promise<unknown>): Promise<void>;
}

export interface RollbackContext {
  indexer: string;
  db: Db;
  chain: ChainSource;
  confirmations: number;
  /** The indexer's events in the orphaned blocks, in chain order (still stored while this runs). */
  orphaned: readonly ChainEventRecord[];
  /** The block the checkpoint moves back to (number -1: before the chain). */
  anchor: { number: number; hash: string };
  /** No stored block is canonical any more: everything is rolled back to the start. */
  reset: boolean;
  /** Timestamp (ms) of the anchor block. */
  anchorTimestamp(): Promise<number>;
}

/** The writes of a rollback, run in its transaction after the orphaned rows are deleted. */
export type RollbackWrites = (tx: Kysely<DatabaseSchema>) => Promise<void>;

/**
 * Batch hooks, for indexers whose handlers fold many events per entity: state per batch, bulk
 * reads before a range's handlers run, the batch's writes at its end.
 */
export interface IndexerHooks<B> {
  /** The state of a new batch (one database transaction). Absent: handlers see `batch` undefined. */
  createBatch?(start: BatchStart): B;
  /** Before the handlers of a range run: bulk reads, entity keys. */
  prepare?(batch: B, events: readonly ChainEventRecord[]): Promise<void>;
  /** After the batch's last range: its writes (`ctx.record`) and the reads they need. */
  flush?(batch: B, ctx: FlushContext): Promise<void>;
  /** The batch was submitted for writing (not yet committed): the next one is prepared on it. */
  submitted?(batch: B): void;
  /** The batch is committed (batches commit one at a time, in chain order): what it wrote is readable. */
  committed?(batch: B): void;
  /** A reorg's rollback is committed: what the orphaned events had written may have changed or gone. */
  rolledBack?(): void;
  /** What the indexer holds in memory may be stale: a write failed, a rollback, another writer. */
  reset?(): void;
  /**
   * A reorg: re-derive what the orphaned events touched. Reads (database, chain) happen here; the
   * returned writes run in the rollback's transaction.
   */
  rollback?(ctx: RollbackContext): Promise<RollbackWrites | undefined>;
}

export interface IndexerSpec<B> {
  /** Namespace of the indexer's rows and its checkpoint's name: lower-case letters, digits, `_`, `-`. */
  name: string;
  contracts: readonly IndexedContract[];
  hooks?: IndexerHooks<B>;
}

export interface IndexerDefinition<B> {
  readonly name: string;
  readonly contracts: readonly IndexedContract[];
  readonly hooks?: IndexerHooks<B>;
  /** Registers the handler of one event of one contract (`Contract:Event`, as in its ABI). */
  on(key: string, handler: EventHandler<B>): IndexerDefinition<B>;
  /** The handler registered for `contract`'s event `name`, if any. */
  handlerOf(contract: string, name: string): EventHandler<B> | undefined;
}

/**
 * Defines an indexer. Handlers are registered with `on`; an unknown contract or event, or a second
 * handler for one event, is refused at once (a typo must not silently index nothing).
 */
export function defineIndexer<B = undefined>(spec: IndexerSpec<B>): IndexerDefinition<B> {
  if (!isIndexerName(spec.name)) throw new AppError('INTERNAL', `indexer: invalid name ${JSON.stringify(spec.name)}`);
  const contracts = new Map<string, IndexedContract>();
  for (const c of spec.contracts) {
    if (contracts.has(c.name)) throw new AppError('INTERNAL', `indexer ${spec.name}: contract ${c.name} defined twice`);
    contracts.set(c.name, c);
  }
  const handlers = new Map<string, EventHandler<B>>();
  const def: IndexerDefinition<B> = {
    name: spec.name,
    contracts: spec.contracts,
    hooks: spec.hooks,
    on(key, handler) {
      const [contract, event, extra] = key.split(':');
      const c = contracts.get(contract);
      if (!c || extra !== undefined) throw new AppError('INTERNAL', `indexer ${spec.name}: no contract for ${key}`);
      if (!c.abi.some((item) => item.type === 'event' && item.name === event)) {
        throw new AppError('INTERNAL', `indexer ${spec.name}: ${contract} has no event ${event}`);
      }
      if (handlers.has(key)) throw new AppError('INTERNAL', `indexer ${spec.name}: ${key} has a handler already`);
      handlers.set(key, handler);
      return def;
    },
    handlerOf(contract, name) {
      return handlers.get(`${contract}:${name}`);
    },
  };
  return def;
}
