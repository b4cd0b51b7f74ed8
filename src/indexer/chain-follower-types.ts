/**
 * The chain follower's options and interface (chain-follower.ts, which makes one): what a role gives
 * it and what it answers, apart from the follower's workings.
 */
import type { PublicClient } from 'viem';
import type { Logger } from '../lib/logger.ts';
import type { Db } from '../storage/database.ts';

/** The deployment blocks of a venue's record (the last only, for records older than `firstBlockNumber`). */
export function deployedBlocksOf(d: { blockNumber: string; firstBlockNumber?: string }): { first: number; last: number } {
  return { first: Number(d.firstBlockNumber ?? d.blockNumber), last: Number(d.blockNumber) };
}

export interface ChainFollowerOptions {
  db: Db;
  publicClient: PublicClient;
  /** Blocks to stay behind the head. Default 0 (anvil). */
  confirmations?: number;
  /** Polling interval of `start()`'s loop, ms. Default 1000. */
  pollMs?: number;
  /**
   * Most blocks per eth_getLogs request. Default 2000. Within it the range adapts to the log
   * density, aiming at about 3000 logs per request (a few MB of JSON), and halves when a provider
   * refuses a range.
   */
  batchBlocks?: number;
  /**
   * First block to index. Default: the first block in which one of the contracts has code (binary
   * search on eth_getCode up to `deployedBlocks.last`, or the head), or `deployedBlocks.first` on a
   * node that cannot answer for old blocks (a pruned one).
   */
  startBlock?: number | bigint;
  /** The blocks of the first and the last deployment transactions, from the deployment record. */
  deployedBlocks?: { first: number | bigint; last: number | bigint };
  logger?: Logger;
  /**
   * During a catch-up, consecutive ranges share one database transaction until it holds this many
   * events (or has gathered ranges for 3 s). Default 200 000; 1 commits every range on its own.
   */
  commitEvents?: number;
  /** Called after each committed range (metrics, benchmarks). */
  onRange?: (range: { from: number; to: number; events: number }) => void;
}

/** What a domain indexer's caller chooses of its follower: the options it passes through as given. */
export type FollowerChoices = Omit<ChainFollowerOptions, 'deployedBlocks'>;

/**
 * The follower options of a domain indexer: its caller's choices, and where its venue was deployed
 * (the follower's start without a `startBlock`). What the caller left out is left to the follower's defaults.
 */
export function followerOptionsOf(choices: FollowerChoices, deployment: { blockNumber: string; firstBlockNumber?: string }): ChainFollowerOptions {
  const { db, publicClient, confirmations, pollMs, batchBlocks, startBlock, logger, commitEvents, onRange } = choices;
  return { db, publicClient, confirmations, pollMs, batchBlocks, startBlock, deployedBlocks: deployedBlocksOf(deployment), logger, commitEvents, onRange };
}

/** How `deliverBlock` reconciled a block. */
export type BlockDelivery = 'appended' | 'duplicate' | 'gap-filled' | 'reorged' | 'unconfirmed' | 'stale';

export interface ChainFollower {
  /** The indexer's name (its rows' namespace and checkpoint). */
  readonly name: string;
  /** Starts the polling loop (returns at once; progress shows in the checkpoint). */
  start(): Promise<void>;
  /** Stops the loop after the range in progress; idempotent. */
  stop(): Promise<void>;
  /** One reconciliation and catch-up to `head - confirmations`; resolves with the checkpointed block. */
  syncOnce(): Promise<{ head: bigint }>;
  /** Resolves once block `n` is indexed (driving `syncOnce` itself when the loop is not running). */
  waitForBlock(n: bigint, timeoutMs?: number): Promise<void>;
  /**
   * Looks at the chain now instead of at the next poll (a transaction this process is waiting on was
   * just mined); a nudge during a sync makes the loop sync once more straight after it.
   */
  nudge(): void;
  /**
   * Reconciles one block pushed from outside (e.g. a newHeads subscription) against the
   * checkpoint: its parent is the checkpoint → appended; already indexed → duplicate; ahead →
   * the missing blocks are fetched first (gap); on another branch → reorg.
   */
  deliverBlock(hash: string): Promise<BlockDelivery>;
  /** The stored checkpoint, or undefined before the first sync. */
  checkpoint(): Promise<{ number: bigint; hash: string } | undefined>;
  /** For readiness and metrics: the last head seen, the block indexed, and when it last made progress. */
  progress(): FollowerProgress;
}

export interface FollowerProgress {
  /** Wall-clock ms of the last sync that reached its target, or of the last batch committed on the way. */
  progressAt?: number;
  /** The chain head at the last sync (undefined before the first). */
  head?: number;
  /** The block indexed (committed) so far. */
  indexed?: number;
}
