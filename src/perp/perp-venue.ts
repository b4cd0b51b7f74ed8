/**
 * What the perpetual API needs of the venue beyond storage: the engine's message interface for
 * commands (in process, or over Redis Streams when the engine runs apart), a read of the engine's
 * live state (books, accounts, positions, open orders) and the last block the perp indexer has
 * followed, for `blockInfo`.
 */
import { getBlockByHash, getCheckpoint } from '../storage/chain-block-store.ts';
import type { DbExecutor } from '../storage/database.ts';
import type { PerpEngine } from './engine/perp-engine.ts';
import type { BlockInfo } from './perp-envelope.ts';
import type { EngineGateway } from './sequencer/engine-gateway.ts';

export interface PerpVenue {
  gateway: EngineGateway;
  /** The engine state to read (the live engine, or a replica following the journal). Read-only. */
  engine(): PerpEngine;
  blockInfo(): Promise<BlockInfo | undefined>;
  /**
   * Resolves once `engine()` reflects the command journalled at `journalSeq` (a replica following
   * the journal); absent when `engine()` is the live engine, which already does.
   */
  caughtUp?(journalSeq: number | null): Promise<void>;
  /**
   * Resolves once `engine()` shows only durable commands (the live engine's sequencer readBarrier);
   * absent for a replica, which applies durable journal rows only. Reads wait for it.
   */
  readable?(): Promise<void>;
}

/** The last block the perp indexer has committed (its checkpoint), with the block's time. */
export async function indexedBlockInfo(db: DbExecutor, indexer = 'perp'): Promise<BlockInfo | undefined> {
  const cp = await getCheckpoint(db, indexer);
  if (cp === undefined) return undefined;
  const block = await getBlockByHash(db, indexer, cp.hash);
  return { number: String(cp.number), hash: cp.hash, timestamp: block?.timestamp ?? 0 };
}
