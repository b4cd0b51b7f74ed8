/**
 * What the perpetual API needs of the venue beyond storage: the engine's message interface for
 * commands (in process, or over Redis Streams when the engine runs apart), a read of the engine's
 * live state (books, accounts, positions, open orders) and the last block the perp indexer has
 * followed, for `blockInfo`.
 */
import { getBlockByHash, getCheckpoint } from '../storage/chain-block-store.ts';
import type { DbExecutor } from '../storage/database.ts';
import { getMeta } from '../storage/meta-store.ts';
import { PROJECTION_CURSOR_KEY } from './projection/projection-write.ts';
import type { PerpEngine } from './engine/perp-engine.ts';
import type { BlockInfo } from './perp-envelope.ts';
import type { EngineGateway } from './sequencer/engine-gateway.ts';
import type { JournalReplica } from './sequencer/journal-replica.ts';
import type { OrderNonceClaimer } from './store/order-nonce-store.ts';

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
   * A replica's venue: notes that this process answered the command journalled at `journalSeq`
   * without waiting for the replica to apply it (an order placed, answered from the engine's reply
   * alone). `settled` makes what this process does next wait for it.
   */
  acknowledged?(journalSeq: number | null): void;
  /**
   * A replica's venue: resolves once `engine()` shows every command this process has answered.
   * Every request but an order placement waits for it (its HTTP hook, the stream's cancel and
   * amend), so a read or a cancel after an answered order sees that order, as `caughtUp` after
   * each order made sure before, without a journal read on every placement's path.
   */
  settled?(): Promise<void>;
  /**
   * Resolves once `engine()` shows only durable commands (the live engine's sequencer readBarrier);
   * absent for a replica, which applies durable journal rows only. Reads wait for it.
   */
  readable?(): Promise<void>;
  /**
   * Resolves once the history tables (the projector's: orders/history, trades, transactions,
   * liquidity moves) hold every event `engine()` shows, or after `HISTORY_WAIT_MS` at most. The
   * account's lists wait for it, so a list read after an acknowledged order shows that order
   * (docs/perp-api.md "History"). Absent: lists are read as they stand.
   */
  historyCaughtUp?(): Promise<void>;
  /**
   * Claims order nonces in the journal's own commits (the engine in this process, and no perp API in
   * another: `createJournalNonceLedger`). Absent: the API claims them in commits of its own.
   */
  nonces?: OrderNonceClaimer;
}

/**
 * The venue of the perp-engine role of this process as it is now: `current()` at each call, so a
 * perp API started beside the engine follows it when the role loses its lease and takes it back
 * (a new sequencer and engine). Holding the first venue, the API answered every order with 50002
 * after such a restart, its sequencer stopped, until the process restarted. While the role has no
 * engine (on stand-by), calls fail with `unavailable()`.
 */
export function followingPerpVenue(current: () => PerpVenue | undefined, unavailable: () => Error): PerpVenue {
  const venue = (): PerpVenue => {
    const v = current();
    if (v === undefined) throw unavailable();
    return v;
  };
  return {
    gateway: {
      submit: async (cmd, claim) => venue().gateway.submit(cmd, claim),
      async submitMany(cmds, claims) {
        const g = venue().gateway;
        if (g.submitMany) return g.submitMany(cmds, claims);
        const out = [];
        for (const [i, c] of cmds.entries()) out.push(await g.submit(c, claims?.[i]));
        return out;
      },
      claimsNonces: () => current()?.gateway.claimsNonces?.() === true,
      subscribe: (fromSeq, listener, onError) => venue().gateway.subscribe(fromSeq, listener, onError),
    },
    engine: () => venue().engine(),
    blockInfo: async () => venue().blockInfo(),
    caughtUp: async (seq) => venue().caughtUp?.(seq),
    readable: async () => venue().readable?.(),
    historyCaughtUp: async () => venue().historyCaughtUp?.(),
    // The ledger is the process's, one for every tenure of the engine role: taken as it is now.
    ...(current()?.nonces ? { nonces: { claim: async (rec) => (venue().nonces ?? unavailableClaims(unavailable)).claim(rec) } } : {}),
  };
}

/**
 * The venue of a perp API whose engine runs in another process: commands through `gateway`, reads
 * from `replica`, which follows the journal in the shared database. Placements are answered without
 * waiting for the replica (`acknowledged`); everything else waits until the replica holds every
 * command this process answered (`settled`), and any caller may wait for a given row (`caughtUp`).
 */
export function replicaVenue(opts: { gateway: EngineGateway; replica: JournalReplica; db: DbExecutor; /** Where the projection's cursor is; default `db`. */ historyDb?: DbExecutor }): PerpVenue {
  const { gateway, replica, db } = opts;
  const historyDb = opts.historyDb ?? db;
  /** The highest journal row of a command this process answered. */
  let answered = 0;
  const note = (seq: number | null) => {
    if (seq !== null && seq > answered) answered = seq;
  };
  return {
    gateway,
    engine: () => replica.engine(),
    blockInfo: () => indexedBlockInfo(db),
    caughtUp: (seq) => {
      note(seq);
      return replica.caughtUp(seq);
    },
    acknowledged: note,
    settled: () => replica.caughtUp(answered),
    historyCaughtUp: async () => void (await waitForProjectedSeq(historyDb, replica.engine().lastSeq)),
  };
}

/** A venue that lost its ledger (cannot happen within one process's configuration): no claim answered. */
function unavailableClaims(unavailable: () => Error): OrderNonceClaimer {
  return { claim: async () => { throw unavailable(); } };
}

/** The longest a list read waits for the projection before it answers what is there. */
export const HISTORY_WAIT_MS = 2_000;

/**
 * `historyCaughtUp` for an API whose engine view is a replica in this process and whose projector
 * runs in another: polls the projection's cursor in the shared database until it reaches the
 * replica's last event (every `pollMs`), for at most HISTORY_WAIT_MS.
 */
export async function waitForProjectedSeq(db: DbExecutor, seq: number, opts: { pollMs?: number; timeoutMs?: number } = {}): Promise<boolean> {
  const until = Date.now() + (opts.timeoutMs ?? HISTORY_WAIT_MS);
  for (;;) {
    if (Number((await getMeta(db, PROJECTION_CURSOR_KEY)) ?? '0') >= seq) return true;
    if (Date.now() >= until) return false;
    await new Promise((r) => setTimeout(r, opts.pollMs ?? 10));
  }
}

/** `caughtUp(seq)` of the projector in this process, for at most HISTORY_WAIT_MS. */
export function projectorCaughtUp(caughtUp: (seq: number) => Promise<void>, seq: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([caughtUp(seq), new Promise<void>((r) => (timer = setTimeout(r, HISTORY_WAIT_MS)))]).finally(() => clearTimeout(timer));
}

/** The last block the perp indexer has committed (its checkpoint), with the block's time. */
export async function indexedBlockInfo(db: DbExecutor, indexer = 'perp'): Promise<BlockInfo | undefined> {
  const cp = await getCheckpoint(db, indexer);
  if (cp === undefined) return undefined;
  const block = await getBlockByHash(db, indexer, cp.hash);
  return { number: String(cp.number), hash: cp.hash, timestamp: block?.timestamp ?? 0 };
}
