/**
 * The chain indexer of the stock domain (docs/indexer.md). It follows the chain `confirmations`
 * blocks behind the head, stores every log of the deployment's StockRouter, Cashier, Stocks and
 * OneClickRouter as a decoded event, derives the order / cash / stock-operation / position
 * projections from them, and moves a checkpoint (block number + hash) in the same database
 * transaction. Reconciliation is by parent hash: the next range must start on the checkpointed
 * block's hash; when it does not, the indexer walks back to the common ancestor, rolls the orphaned
 * blocks' events back and re-derives what they touched, then indexes the new branch.
 *
 * Chain and storage failures never escape the polling loop: they are logged and retried with
 * backoff. `syncOnce` (for tests and tools) does throw them.
 */
import { pino } from 'pino';
import type { CompiledQuery } from 'kysely';
import type { PublicClient } from 'viem';
import type { Deployment } from '../../chain/deploy-contracts.ts';
import { AppError, ChainUnavailableError, ConflictError, isAppError } from '../../errors/app-error.ts';
import type { Logger } from '../../lib/logger.ts';
import {
  deleteBlocksAbove,
  getCheckpoint,
  initCheckpoint,
  insertBlocks,
  insertEvents,
  listBlocksDescending,
  listEventsAbove,
  moveCheckpoint,
  type ChainBlockRecord,
  type ChainEventRecord,
  type Checkpoint,
} from '../../storage/chain-block-store.ts';
import { createBatchWriter } from '../../storage/batch-writer.ts';
import type { Db } from '../../storage/database.ts';
import { getMeta, setMeta } from '../../storage/meta-store.ts';
import { upsertCashOperationStates, upsertStockOperationStates } from '../store/stock-operation-store.ts';
import { insertFills, upsertOrderStates } from '../store/stock-order-store.ts';
import { upsertPositions, type PositionRecord } from '../store/stock-position-store.ts';
import { withTransaction } from '../../storage/transaction.ts';
import { createWriteRecorder } from '../../storage/write-recorder.ts';
import { createChainSource, type BlockHeader, type ChainSource } from '../../indexer/chain-source.ts';
import type { RawLog } from '../../indexer/event-decoder.ts';
import { BatchProjector, contractKinds, decodeLogs, ProjectionCache, reprojectEntities, touchesOf } from './projector.ts';
import type { PositionTouches } from './stock-handler.ts';

export interface StockIndexerOptions {
  db: Db;
  publicClient: PublicClient;
  deployment: Deployment;
  /** Blocks to stay behind the head (INDEXER_CONFIRMATIONS). Default 0 (anvil). */
  confirmations?: number;
  /** Polling interval of `start()`'s loop, ms. Default 1000. */
  pollMs?: number;
  /**
   * Most blocks per eth_getLogs request. Default 2000. Within it the range adapts to the log
   * density, aiming at about 3000 logs per request (a few MB of JSON), and halves when a provider
   * refuses a range.
   */
  batchBlocks?: number;
  /** First block to index. Default: the block the deployment's first contract was created in. */
  startBlock?: number | bigint;
  logger?: Logger;
  /** Checkpoint name; one per indexed deployment in a database. Default `stock`. */
  name?: string;
  /**
   * During a catch-up, consecutive ranges share one database transaction until it holds this many
   * events (or has gathered ranges for 3 s). Default 200 000; 1 commits every range on its own.
   */
  commitEvents?: number;
  /** Called after each committed range (metrics, benchmarks). */
  onRange?: (range: { from: number; to: number; events: number }) => void;
}

/** How `deliverBlock` reconciled a block. */
export type BlockDelivery = 'appended' | 'duplicate' | 'gap-filled' | 'reorged' | 'unconfirmed' | 'stale';

export interface StockIndexer {
  /** Starts the polling loop (returns at once; progress shows in the checkpoint). */
  start(): Promise<void>;
  /** Stops the loop after the range in progress; idempotent. */
  stop(): Promise<void>;
  /** One reconciliation and catch-up to `head - confirmations`; resolves with the checkpointed block. */
  syncOnce(): Promise<{ head: bigint }>;
  /** Resolves once block `n` is indexed (driving `syncOnce` itself when the loop is not running). */
  waitForBlock(n: bigint, timeoutMs?: number): Promise<void>;
  /**
   * Reconciles one block pushed from outside (e.g. a newHeads subscription) against the
   * checkpoint: its parent is the checkpoint → appended; already indexed → duplicate; ahead →
   * the missing blocks are fetched first (gap); on another branch → reorg.
   */
  deliverBlock(hash: string): Promise<BlockDelivery>;
  /** The stored checkpoint, or undefined before the first sync. */
  checkpoint(): Promise<{ number: bigint; hash: string } | undefined>;
}

interface FetchedRange {
  from: number;
  to: number;
  first: BlockHeader;
  end: BlockHeader;
  logs: RawLog[];
}

interface DecodedRange {
  range: FetchedRange;
  events: ChainEventRecord[];
}

interface Anchor extends Checkpoint {
  header?: BlockHeader;
}

const ZERO_HASH = `0x${'0'.repeat(64)}`;
/** Logs per eth_getLogs request the range size aims at (about 2 MB of JSON). */
const TARGET_LOGS = 3_000;
/** Blocks in the first range of a catch-up, before the log density is known. */
const INITIAL_SPAN = 16;
/** getLogs requests kept in flight during a catch-up. */
const PREFETCH_RANGES = 4;
/** Events per batch (one database transaction) during a catch-up, and at most this many ranges. */
const BATCH_EVENTS = 200_000;
const BATCH_RANGES = 64;
/**
 * A batch is submitted after gathering ranges this long, so that a long catch-up still checkpoints
 * every few seconds. Not shorter: every order or operation a batch touches is written once per
 * batch, and at 1 s a 60 000-event catch-up split into two or three batches depending on the
 * machine's speed that moment, each split rewriting every open order (+10-50 % on the benchmark).
 * Within the window a batch waits for a range already requested as long as the window lasts: a
 * fixed short wait (250 ms) was tripped by a node busy for a moment, which split a catch-up the
 * same way.
 */
const BATCH_MS = 3_000;
const ANCESTOR_PAGE = 32;
const LENS_CONCURRENCY = 8;
const MAX_BACKOFF_MS = 30_000;

export function createStockIndexer(opts: StockIndexerOptions): StockIndexer {
  const { db, deployment } = opts;
  const name = opts.name ?? 'stock';
  const confirmations = Math.max(0, opts.confirmations ?? 0);
  const pollMs = Math.max(1, opts.pollMs ?? 1_000);
  const batchBlocks = Math.max(1, opts.batchBlocks ?? 2_000);
  let span = Math.min(batchBlocks, INITIAL_SPAN);
  const commitEvents = Math.max(1, opts.commitEvents ?? BATCH_EVENTS);
  const log = opts.logger ?? pino({ level: 'silent' });
  const kinds = contractKinds(deployment);
  const src: ChainSource = createChainSource(opts.publicClient, [...kinds.keys()], deployment.contracts.accountLens);
  const startKey = `indexer.${name}.start-block`;

  let current: Checkpoint | undefined;
  const cache = new ProjectionCache();
  // Relaxed: a batch lost to a power cut is indexed again from the checkpoint it did not move.
  const writer = createBatchWriter(db, { durability: 'relaxed' });
  const recorder = createWriteRecorder(db);
  /** The batch submitted and not yet known to be committed. */
  let writing: Promise<void> | undefined;
  let lock: Promise<unknown> = Promise.resolve();
  let running = false;
  let stopRequested = false;
  let loop: Promise<void> | undefined;
  let wake: (() => void) | undefined;
  const progress = new Set<() => void>();

  function exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = lock.then(fn, fn);
    lock = run.catch(() => undefined);
    return run;
  }

  function advanced(cp: Checkpoint): void {
    current = cp;
    for (const notify of [...progress]) notify();
  }

  // ------------------------------------------------------------- start block

  async function firstBlockWithCode(address: string, upper: number): Promise<number> {
    if (!(await src.hasCode(address, upper))) return upper;
    let lo = 0;
    let hi = upper;
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      if (await src.hasCode(address, mid)) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  async function startBlock(): Promise<number> {
    const stored = await getMeta(db, startKey);
    if (stored !== undefined) return Number(stored);
    let start: number;
    if (opts.startBlock !== undefined) start = Number(opts.startBlock);
    else {
      const upper = Number(deployment.blockNumber);
      try {
        const firsts = await Promise.all([...kinds.keys()].map((a) => firstBlockWithCode(a, upper)));
        start = Math.min(...firsts);
      } catch (err) {
        // A pruned node cannot answer eth_getCode for old blocks: start at the recorded deployment block.
        log.warn({ err: describe(err) }, 'indexer: cannot find the deployment block, starting at the recorded block');
        start = upper;
      }
    }
    await setMeta(db, startKey, String(start));
    return start;
  }

  /** The block before `start` (the checkpoint's initial value): its hash is what block `start` must extend. */
  async function anchorBefore(start: number): Promise<Anchor> {
    if (start <= 0) return { number: -1, hash: ZERO_HASH };
    const header = await src.headerByNumber(start - 1);
    if (!header) throw new ChainUnavailableError({ detail: { reason: 'start block not found' } });
    return { number: header.number, hash: header.hash, header };
  }

  async function ensureCheckpoint(): Promise<Checkpoint> {
    const stored = await getCheckpoint(db, name);
    if (stored) return stored;
    const anchor = await anchorBefore(await startBlock());
    const cp = await withTransaction(db, async (tx) => {
      if (anchor.header) await insertBlocks(tx, name, [blockRow(anchor.header)]);
      return initCheckpoint(tx, name, { number: anchor.number, hash: anchor.hash }, Date.now());
    });
    log.info({ block: cp.number }, 'indexer: initialised checkpoint');
    return cp;
  }

  // ------------------------------------------------------------------ ranges

  /** eth_getLogs, splitting the range when the provider refuses it (result-size limits). */
  async function fetchLogs(from: number, to: number): Promise<RawLog[]> {
    try {
      return await src.logs(from, to);
    } catch (err) {
      if (to === from || (isAppError(err) && err.code === 'CHAIN_UNAVAILABLE')) throw err;
      const mid = Math.floor((from + to) / 2);
      span = Math.max(1, Math.min(span, mid - from + 1));
      log.info({ from, to, span }, 'indexer: provider refused a log range, splitting it');
      const left = await fetchLogs(from, mid);
      const right = await fetchLogs(mid + 1, to);
      return left.concat(right);
    }
  }

  /**
   * Logs and boundary headers of [from, to], all of one branch: the header of `to` is read before
   * and after the logs, and a block hash commits to every ancestor, so equal hashes mean the chain
   * up to `to` did not change while the logs were read.
   */
  async function fetchRange(from: number, to: number): Promise<FetchedRange> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const before = await src.headerByNumber(to);
      if (!before) break;
      if (from === to) {
        // By hash: exactly this block's logs whatever the head does meanwhile.
        return { from, to, first: before, end: before, logs: await src.logsOfBlock(before.hash) };
      }
      const [logs, first] = await Promise.all([fetchLogs(from, to), src.headerByNumber(from)]);
      const after = await src.headerByNumber(to);
      if (first && after && after.hash === before.hash) {
        adaptSpan(to - from + 1, logs.length);
        return { from, to, first, end: after, logs };
      }
    }
    throw new ChainUnavailableError({ detail: { reason: 'the chain changed during every attempt to read a range' } });
  }

  /** Sizes the next range from the density of the last one: grow at most 2x, shrink at once. */
  function adaptSpan(blocks: number, logs: number): void {
    const fit = logs === 0 ? batchBlocks : Math.floor((blocks * TARGET_LOGS) / logs);
    span = Math.max(1, Math.min(batchBlocks, fit, blocks * 2));
  }

  function blockRow(h: BlockHeader): ChainBlockRecord {
    return { hash: h.hash, number: h.number, parentHash: h.parentHash, timestamp: h.timestamp };
  }

  /**
   * Stock balances of the touched pairs at block `at` (the block being checkpointed). A node
   * without that block's state (pruned: far behind the head during a catch-up) answers for the
   * newest confirmed block instead; the row records which block it is, and a later touch re-reads.
   */
  async function readPositions(touches: PositionTouches, at: { number: number; hash: string }, timestamp: number): Promise<PositionRecord[]> {
    const users = [...touches.keys()];
    if (users.length === 0) return [];
    let block = { number: at.number, hash: at.hash, timestamp };
    const read = async (user: string) => {
      const stocks = [...(touches.get(user) as Set<string>)];
      try {
        return await src.stockBalances(user, stocks, block.hash);
      } catch (err) {
        if (isAppError(err) && err.code === 'CHAIN_UNAVAILABLE') throw err;
        if (block.hash === at.hash) {
          const newest = await src.headerByNumber(Math.max(0, (await src.blockNumber()) - confirmations));
          if (!newest) throw err;
          block = { number: newest.number, hash: newest.hash, timestamp: newest.timestamp };
          log.debug({ at: at.number, instead: block.number }, 'indexer: no state at the checkpoint block, reading positions at the newest');
        }
        return src.stockBalances(user, stocks, block.hash);
      }
    };
    const out: PositionRecord[] = [];
    for (let i = 0; i < users.length; i += LENS_CONCURRENCY) {
      const batch = users.slice(i, i + LENS_CONCURRENCY);
      const results = await Promise.all(batch.map(read));
      batch.forEach((user, k) => {
        for (const b of results[k]) {
          out.push({
            userAddress: user,
            stockAddress: b.stock,
            walletBalance: b.wallet,
            exchangeBalance: b.exchange,
            lockedBalance: b.locked,
            blockNumber: block.number,
            updatedAt: block.timestamp,
          });
        }
      });
    }
    return out;
  }

  /** A fetched range's logs as event records (timestamps fetched when the node omits them). */
  async function decodeRange(range: FetchedRange): Promise<DecodedRange> {
    const missing = new Set<string>();
    for (const l of range.logs) if (l.blockTimestamp === undefined) missing.add(l.blockHash.toLowerCase());
    let timestamps: Map<string, number> | undefined;
    if (missing.size > 0) {
      timestamps = new Map();
      const headers = await Promise.all([...missing].map((h) => src.headerByHash(h)));
      for (const h of headers) if (h) timestamps.set(h.hash, h.timestamp);
    }
    const events = decodeLogs(range.logs, timestamps);
    for (const ev of events) {
      if (ev.blockNumber < range.from || ev.blockNumber > range.to) {
        throw new ChainUnavailableError({ detail: { reason: 'eth_getLogs answered logs outside the range' } });
      }
    }
    return { range, events };
  }

  /** Awaits the batch being written, if any: its failure is thrown here. */
  async function settle(): Promise<void> {
    const p = writing;
    if (!p) return;
    try {
      await p;
    } finally {
      if (writing === p) writing = undefined;
    }
  }

  /**
   * Prepares the writes of consecutive ranges extending `cp` as one batch (one database
   * transaction: events, blocks, projections, positions and the checkpoint move) and submits it
   * without waiting for the commit, so the next batch is fetched, decoded and projected while this
   * one is written. Only one batch is in flight: a batch is submitted once the previous committed.
   * Returns the checkpoint the batch moves to (or `cp` when `next` gave nothing linkable).
   * `next(waitMs)` yields the following range, or undefined to end the batch (none requested, or
   * none within `waitMs`); a range that does not start on the previous one's last block is handed
   * back through `diverged` and ends the batch.
   */
  async function writeBatch(
    cp: Checkpoint,
    next: (waitMs: number) => Promise<FetchedRange | undefined>,
  ): Promise<{ cp: Checkpoint; diverged?: FetchedRange }> {
    let diverged: FetchedRange | undefined;
    const written: Array<{ from: number; to: number; events: number }> = [];
    const projector = new BatchProjector(db, kinds, cache, settle);
    const blocks = new Map<string, ChainBlockRecord>();
    const statements: CompiledQuery[] = [];
    let end: BlockHeader | undefined;
    let tip: Checkpoint = cp;
    let events = 0;
    const started = Date.now();
    for (let range = await next(BATCH_MS); range; range = await next(started + BATCH_MS - Date.now())) {
      if (range.first.parentHash !== tip.hash) {
        diverged = range;
        break;
      }
      const decoded = await decodeRange(range);
      await projector.add(decoded.events);
      for (const q of await recorder.record((r) => insertEvents(r, name, decoded.events))) statements.push(q);
      for (const ev of decoded.events) {
        if (!blocks.has(ev.blockHash)) blocks.set(ev.blockHash, { hash: ev.blockHash, number: ev.blockNumber, parentHash: null, timestamp: ev.timestamp });
      }
      blocks.set(range.first.hash, blockRow(range.first));
      blocks.set(range.end.hash, blockRow(range.end));
      end = range.end;
      tip = { number: range.end.number, hash: range.end.hash };
      events += decoded.events.length;
      written.push({ from: range.from, to: range.to, events: decoded.events.length });
      if (events >= commitEvents || written.length >= BATCH_RANGES || Date.now() - started >= BATCH_MS) break;
    }
    if (!end) return { cp, diverged };
    const positions = await readPositions(projector.positionTouches(), end, end.timestamp);
    const projection = projector.result();
    const to = tip;
    for (const q of await recorder.record(async (r) => {
      await insertBlocks(r, name, [...blocks.values()]);
      await upsertOrderStates(r, projection.orders, { appendOnly: true });
      await insertFills(r, projection.fills);
      await upsertCashOperationStates(r, projection.cash);
      await upsertStockOperationStates(r, projection.stockOps);
      await upsertPositions(r, positions);
    })) {
      statements.push(q);
    }
    // Fails the batch (ConflictError) unless the checkpoint is still where this batch starts.
    const [guard] = await recorder.record((r) => moveCheckpoint(r, name, cp, to, Date.now()));
    await settle();
    cache.remember(projection);
    const submitted = writer.submit({ statements, guard });
    writing = submitted;
    submitted.then(
      () => {
        log.debug({ from: written[0].from, to: to.number, events }, 'indexer: blocks indexed');
        for (const w of written) opts.onRange?.(w);
        advanced(to);
      },
      // What the cache holds was never committed.
      () => cache.clear(),
    );
    return { cp: to, diverged };
  }

  // ------------------------------------------------------------------- reorgs

  /** The highest stored block still on the canonical chain, or the start anchor when none is (reset). */
  async function findAncestor(cp: Checkpoint): Promise<{ anchor: Anchor; reset: boolean }> {
    let max = cp.number;
    for (;;) {
      const page = await listBlocksDescending(db, name, max, ANCESTOR_PAGE);
      if (page.length === 0) break;
      const canonical = await Promise.all(page.map((b) => src.headerByNumber(b.number)));
      for (let i = 0; i < page.length; i++) {
        if (canonical[i]?.hash === page[i].hash) return { anchor: { number: page[i].number, hash: page[i].hash }, reset: false };
      }
      max = page[page.length - 1].number - 1;
    }
    return { anchor: await anchorBefore(await startBlock()), reset: true };
  }

  /** Rolls back everything above the common ancestor of the stored branch and the chain. */
  async function reorg(cp: Checkpoint): Promise<Checkpoint> {
    await settle();
    const { anchor, reset } = await findAncestor(cp);
    const floor = reset ? -2 : anchor.number;
    const orphaned = await listEventsAbove(db, name, floor);
    const keys = [...new Set(orphaned.map((e) => e.entityKey).filter((k): k is string => k !== null))];
    const touches = await touchesOf(db, orphaned, kinds);
    // State at the ancestor; before the first indexed block there is none of ours to read.
    const positions =
      reset || anchor.number < 0
        ? zeroPositions(touches, anchor.number)
        : await readPositions(touches, anchor, await ancestorTimestamp(anchor));
    const next = { number: anchor.number, hash: anchor.hash };
    cache.clear();
    await withTransaction(db, async (tx) => {
      if (!(await moveCheckpoint(tx, name, cp, next, Date.now()))) {
        throw new ConflictError('indexer: the checkpoint was moved by another writer');
      }
      await deleteBlocksAbove(tx, name, floor);
      if (reset && anchor.header) await insertBlocks(tx, name, [blockRow(anchor.header)]);
      await reprojectEntities(tx, name, keys);
      await upsertPositions(tx, positions);
    });
    log.warn(
      { from: cp.number, to: next.number, orphanedEvents: orphaned.length, entities: keys.length, reset },
      'indexer: chain reorganised, rolled back to the common ancestor',
    );
    advanced(next);
    return next;
  }

  async function ancestorTimestamp(anchor: Anchor): Promise<number> {
    const h = await src.headerByHash(anchor.hash);
    return h?.timestamp ?? 0;
  }

  // ----------------------------------------------------------------- syncing

  /** Reorg check of the checkpoint itself: a reorg can replace blocks without moving the head. */
  async function verified(cp: Checkpoint, head: number): Promise<Checkpoint> {
    if (cp.number < 0) return cp;
    const h = cp.number <= head ? await src.headerByNumber(cp.number) : undefined;
    if (h && h.hash === cp.hash) return cp;
    return reorg(cp);
  }

  /**
   * Indexes (cp, target]. Ranges are fetched ahead (up to PREFETCH_RANGES requests in flight, so
   * the node prepares the next logs while this process works) and committed in batches of about
   * `commitEvents` events, each prepared while the one before is written (`writeBatch`): a batch
   * is a run of linked ranges, so the checkpoint still only ever
   * names a block whose events — and all earlier ones — are stored. A range that does not start on
   * the last linked block's hash means a reorg: the linked ranges before it are committed, the
   * stored branch is reconciled, and fetching resumes from the common ancestor.
   */
  async function catchUp(start: Checkpoint, target: number): Promise<Checkpoint> {
    let cp = start;
    while (cp.number < target && !stopRequested) {
      let nextFrom = cp.number + 1;
      const inflight: Promise<FetchedRange>[] = [];
      const issue = () => {
        while (inflight.length < PREFETCH_RANGES && nextFrom <= target && !stopRequested) {
          const from = nextFrom;
          const to = Math.min(target, from + span - 1);
          nextFrom = to + 1;
          const fetching = fetchRange(from, to);
          fetching.catch(() => undefined);
          inflight.push(fetching);
        }
      };
      let first = true;
      // Within a batch, wait for the next range only while the batch's window lasts: with a slow
      // node the ranges at hand are written (and the checkpoint moves) rather than held back.
      const next = async (waitMs: number): Promise<FetchedRange | undefined> => {
        const head = inflight[0];
        if (!head) return undefined;
        if (!first) {
          // A failed fetch also ends the batch; its error surfaces when the next batch awaits it.
          if ((await settledWithin(head, Math.max(0, waitMs))) !== 'ready') return undefined;
        }
        first = false;
        inflight.shift();
        const range = await head;
        issue();
        return range;
      };
      let diverged = false;
      try {
        issue();
        while (inflight.length > 0 && !diverged) {
          // The first range of a batch is waited for as long as it takes.
          await inflight[0];
          first = true;
          const res = await writeBatch(cp, next);
          cp = res.cp;
          diverged = res.diverged !== undefined;
        }
      } finally {
        for (const p of inflight.splice(0)) await p.catch(() => undefined);
      }
      if (diverged) cp = await reorg(cp);
    }
    await settle();
    return cp;
  }

  async function sync(): Promise<Checkpoint> {
    // A batch of a failed sync may still be in flight: the stored checkpoint is the truth after it.
    await settle().catch(() => undefined);
    let cp = await ensureCheckpoint();
    // Another writer moved it (or this is the first sync): what the cache holds may be stale.
    if (!current || current.number !== cp.number || current.hash !== cp.hash) cache.clear();
    current = cp;
    const head = await src.blockNumber();
    cp = await verified(cp, head);
    return catchUp(cp, head - confirmations);
  }

  async function deliver(hash: string): Promise<BlockDelivery> {
    await settle().catch(() => undefined);
    const header = await src.headerByHash(hash.toLowerCase());
    if (!header) return 'stale';
    let cp = await ensureCheckpoint();
    const head = await src.blockNumber();
    if (header.number > head - confirmations) return 'unconfirmed';
    const canonical = await src.headerByNumber(header.number);
    if (!canonical || canonical.hash !== header.hash) return 'stale';
    if (header.number <= cp.number) {
      const ours = await src.headerByNumber(cp.number);
      if (ours?.hash === cp.hash) return 'duplicate';
      cp = await reorg(cp);
      await catchUp(cp, header.number);
      return 'reorged';
    }
    let gap = false;
    if (header.number > cp.number + 1) {
      cp = await catchUp(cp, header.number - 1);
      gap = true;
    }
    if (header.parentHash !== cp.hash) {
      cp = await reorg(cp);
      await catchUp(cp, header.number);
      return 'reorged';
    }
    const logs = await src.logsOfBlock(header.hash);
    let pending: FetchedRange | undefined = { from: header.number, to: header.number, first: header, end: header, logs };
    await writeBatch(cp, async () => {
      const range = pending;
      pending = undefined;
      return range;
    });
    await settle();
    return gap ? 'gap-filled' : 'appended';
  }

  // -------------------------------------------------------------------- loop

  function sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        if (wake === done) wake = undefined;
        resolve();
      }
      wake = done;
    });
  }

  async function runLoop(): Promise<void> {
    let failures = 0;
    while (running) {
      try {
        await exclusive(sync);
        failures = 0;
      } catch (err) {
        failures++;
        const retryable = isAppError(err) && err.retryable;
        log[retryable ? 'warn' : 'error']({ err: describe(err), failures }, 'indexer: sync failed, retrying');
      }
      if (!running) break;
      await sleep(failures === 0 ? pollMs : Math.min(MAX_BACKOFF_MS, pollMs * 2 ** Math.min(failures, 10)));
    }
  }

  return {
    async start() {
      if (running) return;
      running = true;
      stopRequested = false;
      loop = runLoop();
    },
    async stop() {
      if (!running && !loop) return;
      running = false;
      stopRequested = true;
      wake?.();
      await loop;
      loop = undefined;
      stopRequested = false;
      // The indexer has at most one batch in flight: once it has settled, nothing is being written.
      await settle().catch(() => undefined);
    },
    async syncOnce() {
      const cp = await exclusive(sync);
      return { head: BigInt(cp.number) };
    },
    async waitForBlock(n, timeoutMs = 10_000) {
      const target = Number(n);
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const cp = current ?? (await getCheckpoint(db, name));
        if (cp && cp.number >= target) return;
        const remaining = deadline - Date.now();
        if (remaining <= 0) throw new AppError('INTERNAL', `indexer: block ${target} not indexed within ${timeoutMs} ms`);
        if (running) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(finish, Math.min(remaining, pollMs));
            function finish() {
              clearTimeout(timer);
              progress.delete(finish);
              resolve();
            }
            progress.add(finish);
          });
        } else {
          try {
            await exclusive(sync);
          } catch {
            await new Promise((r) => setTimeout(r, Math.min(remaining, pollMs)));
          }
          const after = current;
          if (!after || after.number < target) await new Promise((r) => setTimeout(r, Math.min(Math.max(0, deadline - Date.now()), 20)));
        }
      }
    },
    deliverBlock(hash) {
      return exclusive(() => deliver(hash));
    },
    async checkpoint() {
      const cp = await getCheckpoint(db, name);
      return cp ? { number: BigInt(cp.number), hash: cp.hash } : undefined;
    },
  };
}

/** Whether `p` settles within `ms` (the timer is cleared either way). */
function settledWithin(p: Promise<unknown>, ms: number): Promise<'ready' | 'failed' | 'waiting'> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve('waiting'), ms);
    p.then(
      () => {
        clearTimeout(timer);
        resolve('ready');
      },
      () => {
        clearTimeout(timer);
        resolve('failed');
      },
    );
  });
}

/** Before the contracts existed every balance was zero. */
function zeroPositions(touches: PositionTouches, blockNumber: number): PositionRecord[] {
  const out: PositionRecord[] = [];
  for (const [user, stocks] of touches) {
    for (const stock of stocks) {
      out.push({ userAddress: user, stockAddress: stock, walletBalance: '0', exchangeBalance: '0', lockedBalance: '0', blockNumber, updatedAt: 0 });
    }
  }
  return out;
}

/** Error facts for a log line: code and name, never a URL (the AppError hierarchy strips them). */
function describe(err: unknown): Record<string, unknown> {
  if (isAppError(err)) return { code: err.code, message: err.message, ...(err.detail ? { detail: err.detail } : {}) };
  if (err instanceof Error) return { name: err.name, message: err.message.slice(0, 200) };
  return { error: String(err) };
}
