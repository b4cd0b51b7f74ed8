/**
 * The generic chain follower (docs/indexer.md). An indexer is defined once — a name, the contracts
 * it follows, handlers registered per contract and event (`indexer.on('StockRouter:OrderFilled',
 * handler)`, as Ponder's `ponder.on` and the dYdX indexer's handler per event) and optional batch
 * hooks for bulk work — and `createChainFollower` runs it: it follows the chain `confirmations`
 * blocks behind the head, stores every log of those contracts as a decoded event, runs the
 * handlers, and moves the indexer's checkpoint (block number + hash) in the same database
 * transaction. Reconciliation is by parent hash: the next range must start on the checkpointed
 * block's hash; when it does not, the follower walks back to the common ancestor, deletes the
 * orphaned blocks' events and lets the indexer re-derive what they touched (`rollback`), then
 * indexes the new branch.
 *
 * Several indexers share one database: each one's blocks and events are stored under its name
 * (chain-block-store.ts), its checkpoint is `indexer_checkpoints[name]` and its start block
 * `meta['indexer.<name>.start-block']`, so one's rollback never touches another's rows. Each runs
 * its own follower.
 *
 * Chain and storage failures never escape the polling loop: they are logged and retried with
 * backoff. `syncOnce` (for tests and tools) does throw them.
 *
 * The definition an indexer makes of itself is indexer-definition.ts, the follower's options and
 * interface chain-follower-types.ts; both are re-exported here.
 */
import { pino } from 'pino';
import type { CompiledQuery, Kysely } from 'kysely';
import { AppError, ChainUnavailableError, ConflictError, isAppError } from '../errors/app-error.ts';
import { createLock, sleep } from '../lib/async.ts';
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
} from '../storage/chain-block-store.ts';
import { createBatchWriter } from '../storage/batch-writer.ts';
import type { DatabaseSchema } from '../storage/database.ts';
import { getMeta, setMeta } from '../storage/meta-store.ts';
import { withTransaction } from '../storage/transaction.ts';
import { createWriteRecorder } from '../storage/write-recorder.ts';
import { createChainSource, type BlockHeader, type ChainSource } from './chain-source.ts';
import { createEventDecoder, type RawLog } from './event-decoder.ts';
import { decodeLogs } from './event-records.ts';
import type { EventHandler, HandlerContext, IndexerDefinition } from './indexer-definition.ts';
import type { BlockDelivery, ChainFollower, ChainFollowerOptions } from './chain-follower-types.ts';

export { defineIndexer } from './indexer-definition.ts';
export type { BatchStart, EventHandler, FlushContext, HandlerContext, IndexedContract, IndexerDefinition, IndexerHooks, IndexerSpec, RollbackContext, RollbackWrites } from './indexer-definition.ts';
export { deployedBlocksOf, followerOptionsOf } from './chain-follower-types.ts';
export type { BlockDelivery, ChainFollower, ChainFollowerOptions, FollowerChoices, FollowerProgress } from './chain-follower-types.ts';

// ----------------------------------------------------------------- follower

interface FetchedRange {
  from: number;
  to: number;
  first: BlockHeader;
  end: BlockHeader;
  logs: RawLog[];
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
const MAX_BACKOFF_MS = 30_000;

export function createChainFollower<B>(def: IndexerDefinition<B>, opts: ChainFollowerOptions): ChainFollower {
  const { db } = opts;
  const name = def.name;
  const hooks = def.hooks;
  const confirmations = Math.max(0, opts.confirmations ?? 0);
  const pollMs = Math.max(1, opts.pollMs ?? 1_000);
  const batchBlocks = Math.max(1, opts.batchBlocks ?? 2_000);
  let span = Math.min(batchBlocks, INITIAL_SPAN);
  const commitEvents = Math.max(1, opts.commitEvents ?? BATCH_EVENTS);
  const log = opts.logger ?? pino({ level: 'silent' });
  const startKey = `indexer.${name}.start-block`;

  /** Lower-case address → the contract's name, and the dispatch table of its handlers by event name. */
  const contractOf = new Map<string, string>();
  const dispatch = new Map<string, Map<string, EventHandler<B>>>();
  for (const c of def.contracts) {
    const byEvent = new Map<string, EventHandler<B>>();
    for (const item of c.abi) {
      if (item.type !== 'event') continue;
      const h = def.handlerOf(c.name, item.name);
      if (h) byEvent.set(item.name, h);
    }
    for (const a of c.addresses) {
      const address = a.toLowerCase();
      if (contractOf.has(address)) throw new AppError('INTERNAL', `indexer ${name}: address ${address} is in two contracts`);
      contractOf.set(address, c.name);
      dispatch.set(address, byEvent);
    }
  }
  const src: ChainSource = createChainSource(opts.publicClient, [...contractOf.keys()]);
  const decode = createEventDecoder(def.contracts.map((c) => c.abi));

  let current: Checkpoint | undefined;
  // Relaxed: a batch lost to a power cut is indexed again from the checkpoint it did not move.
  const writer = createBatchWriter(db, { durability: 'relaxed' });
  const recorder = createWriteRecorder(db);
  /** The batch submitted and not yet known to be committed. */
  let writing: Promise<void> | undefined;
  const lock = createLock();
  let running = false;
  let stopRequested = false;
  let loop: Promise<void> | undefined;
  let wake: AbortController | undefined;
  const progress = new Set<() => void>();

  const exclusive = <T>(fn: () => Promise<T>): Promise<T> => lock.run(fn);

  /** What progress() answers: a long catch-up counts as progress with each batch, not only at its end. */
  let lastHead: number | undefined;
  let progressAt: number | undefined;

  function advanced(cp: Checkpoint): void {
    current = cp;
    progressAt = Date.now();
    for (const notify of [...progress]) notify();
  }

  /** A listener's failure is its own: the write it hears about is committed whatever it does. */
  function afterCommit(notify: () => void): void {
    try {
      notify();
    } catch (err) {
      log.error({ err: describe(err), indexer: name }, 'indexer: a commit listener failed');
    }
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
      const upper = opts.deployedBlocks !== undefined ? Number(opts.deployedBlocks.last) : await src.blockNumber();
      try {
        const firsts = await Promise.all([...contractOf.keys()].map((a) => firstBlockWithCode(a, upper)));
        start = Math.min(...firsts);
      } catch (err) {
        // A pruned node cannot answer eth_getCode for old blocks: start at the recorded first
        // deployment block, so that nothing the deployment itself emitted (mints, funding) is skipped.
        log.warn({ err: describe(err), indexer: name }, 'indexer: cannot find the deployment block, starting at the recorded first deployment block');
        start = opts.deployedBlocks !== undefined ? Number(opts.deployedBlocks.first) : upper;
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
    if (header.number === 0) {
      // The genesis block as block 1 links to it: anvil makes a new genesis block (a new hash) each
      // time it loads a state file, while block 1 keeps its parent. Anchored at the hash anvil
      // answers for block 0, the first range would never link and the sync would roll back forever.
      const child = await src.headerByNumber(1);
      if (child && child.parentHash && child.parentHash !== header.hash) {
        return { number: 0, hash: child.parentHash, header: { ...header, hash: child.parentHash } };
      }
    }
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
    log.info({ block: cp.number, indexer: name }, 'indexer: initialised checkpoint');
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
      log.info({ from, to, span, indexer: name }, 'indexer: provider refused a log range, splitting it');
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

  /** A fetched range's logs as event records (timestamps fetched when the node omits them). */
  async function decodeRange(range: FetchedRange): Promise<ChainEventRecord[]> {
    const missing = new Set<string>();
    for (const l of range.logs) if (l.blockTimestamp === undefined) missing.add(l.blockHash.toLowerCase());
    let timestamps: Map<string, number> | undefined;
    if (missing.size > 0) {
      timestamps = new Map();
      const headers = await Promise.all([...missing].map((h) => src.headerByHash(h)));
      for (const h of headers) if (h) timestamps.set(h.hash, h.timestamp);
    }
    const events = decodeLogs(range.logs, decode, timestamps);
    for (const ev of events) {
      if (ev.blockNumber < range.from || ev.blockNumber > range.to) {
        throw new ChainUnavailableError({ detail: { reason: 'eth_getLogs answered logs outside the range' } });
      }
    }
    return events;
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

  /** Runs the registered handlers of `events` (chain order) for the batch. */
  async function handle(events: readonly ChainEventRecord[], ctx: HandlerContext<B>): Promise<void> {
    for (const ev of events) {
      const h = dispatch.get(ev.address)?.get(ev.name);
      if (!h) continue;
      ctx.contract = contractOf.get(ev.address) as string;
      const pending = h(ev, ctx);
      if (pending) await pending;
    }
  }

  /**
   * Prepares the writes of consecutive ranges extending `cp` as one batch (one database
   * transaction: events, blocks, what the handlers and hooks write, and the checkpoint move) and
   * submits it without waiting for the commit, so the next batch is fetched, decoded and handled
   * while this one is written. Only one batch is in flight: a batch is submitted once the previous
   * committed. Returns the checkpoint the batch moves to (or `cp` when `next` gave nothing
   * linkable). `next(waitMs)` yields the following range, or undefined to end the batch (none
   * requested, or none within `waitMs`); a range that does not start on the previous one's last
   * block is handed back through `diverged` and ends the batch.
   */
  async function writeBatch(
    cp: Checkpoint,
    next: (waitMs: number) => Promise<FetchedRange | undefined>,
  ): Promise<{ cp: Checkpoint; diverged?: FetchedRange }> {
    let diverged: FetchedRange | undefined;
    const written: Array<{ from: number; to: number; events: number }> = [];
    const batch = hooks?.createBatch ? hooks.createBatch({ indexer: name, db, settled: settle }) : (undefined as B);
    const writes: Array<(db: Kysely<DatabaseSchema>) => Promise<unknown>> = [];
    const ctx: HandlerContext<B> = { batch, contract: '', write: (fn) => void writes.push(fn) };
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
      if (hooks?.prepare) await hooks.prepare(batch, decoded);
      await handle(decoded, ctx);
      for (const q of await recorder.record((r) => insertEvents(r, name, decoded))) statements.push(q);
      for (const ev of decoded) {
        if (!blocks.has(ev.blockHash)) blocks.set(ev.blockHash, { hash: ev.blockHash, number: ev.blockNumber, parentHash: null, timestamp: ev.timestamp });
      }
      blocks.set(range.first.hash, blockRow(range.first));
      blocks.set(range.end.hash, blockRow(range.end));
      end = range.end;
      tip = { number: range.end.number, hash: range.end.hash };
      events += decoded.length;
      written.push({ from: range.from, to: range.to, events: decoded.length });
      if (events >= commitEvents || written.length >= BATCH_RANGES || Date.now() - started >= BATCH_MS) break;
    }
    if (!end) return { cp, diverged };
    const record = async (fn: (db: Kysely<DatabaseSchema>) => Promise<unknown>) => {
      for (const q of await recorder.record(fn)) statements.push(q);
    };
    await record((r) => insertBlocks(r, name, [...blocks.values()]));
    await record(async (r) => {
      for (const w of writes) await w(r);
    });
    if (hooks?.flush) await hooks.flush(batch, { indexer: name, end, chain: src, confirmations, record });
    const to = tip;
    // Fails the batch (ConflictError) unless the checkpoint is still where this batch starts.
    const [guard] = await recorder.record((r) => moveCheckpoint(r, name, cp, to, Date.now()));
    await settle();
    hooks?.submitted?.(batch);
    const submitted = writer.submit({ statements, guard });
    writing = submitted;
    submitted.then(
      () => {
        log.debug({ from: written[0].from, to: to.number, events, indexer: name }, 'indexer: blocks indexed');
        for (const w of written) opts.onRange?.(w);
        advanced(to);
        afterCommit(() => hooks?.committed?.(batch));
      },
      // What the indexer holds in memory was never committed.
      () => hooks?.reset?.(),
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

  /** Rolls back everything of this indexer above the common ancestor of its stored branch and the chain. */
  async function reorg(cp: Checkpoint): Promise<Checkpoint> {
    await settle();
    const { anchor, reset } = await findAncestor(cp);
    const floor = reset ? -2 : anchor.number;
    const orphaned = await listEventsAbove(db, name, floor);
    const rollbackWrites = hooks?.rollback
      ? await hooks.rollback({
          indexer: name,
          db,
          chain: src,
          confirmations,
          orphaned,
          anchor: { number: anchor.number, hash: anchor.hash },
          reset,
          anchorTimestamp: async () => (await src.headerByHash(anchor.hash))?.timestamp ?? 0,
        })
      : undefined;
    const next = { number: anchor.number, hash: anchor.hash };
    hooks?.reset?.();
    await withTransaction(db, async (tx) => {
      if (!(await moveCheckpoint(tx, name, cp, next, Date.now()))) {
        throw new ConflictError('indexer: the checkpoint was moved by another writer');
      }
      await deleteBlocksAbove(tx, name, floor);
      if (reset && anchor.header) await insertBlocks(tx, name, [blockRow(anchor.header)]);
      if (rollbackWrites) await rollbackWrites(tx);
    });
    log.warn(
      { from: cp.number, to: next.number, orphanedEvents: orphaned.length, reset, indexer: name },
      'indexer: chain reorganised, rolled back to the common ancestor',
    );
    advanced(next);
    afterCommit(() => hooks?.rolledBack?.());
    return next;
  }

  // ----------------------------------------------------------------- syncing

  /** Reorg check of the checkpoint itself: a reorg can replace blocks without moving the head. */
  async function verified(cp: Checkpoint, head: number): Promise<Checkpoint> {
    if (cp.number < 0) return cp;
    const h = cp.number <= head ? await src.headerByNumber(cp.number) : undefined;
    if (h && h.hash === cp.hash) return cp;
    // The genesis anchor is the hash block 1 links to (see anchorBefore), not anvil's answer for block 0.
    if (cp.number === 0 && head >= 1 && (await src.headerByNumber(1))?.parentHash === cp.hash) return cp;
    return reorg(cp);
  }

  /**
   * Indexes (cp, target]. Ranges are fetched ahead (up to PREFETCH_RANGES requests in flight, so
   * the node prepares the next logs while this process works) and committed in batches of about
   * `commitEvents` events, each prepared while the one before is written (`writeBatch`): a batch
   * is a run of linked ranges, so the checkpoint still only ever names a block whose events — and
   * all earlier ones — are stored. A range that does not start on the last linked block's hash
   * means a reorg: the linked ranges before it are committed, the stored branch is reconciled, and
   * fetching resumes from the common ancestor.
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
    // Another writer moved it (or this is the first sync): what the indexer holds may be stale.
    if (!current || current.number !== cp.number || current.hash !== cp.hash) hooks?.reset?.();
    current = cp;
    const head = await src.blockNumber();
    lastHead = head;
    cp = await verified(cp, head);
    const target = head - confirmations;
    const reached = await catchUp(cp, target);
    // Progress only when what is committed has reached the target: a sync whose batches are still
    // in flight counts when they commit (advanced()), and one whose batches fail never does.
    if (current !== undefined && current.number >= target) progressAt = Date.now();
    return reached;
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

  let nudged = false;
  async function pause(ms: number): Promise<void> {
    if (nudged) {
      nudged = false;
      return;
    }
    wake = new AbortController();
    await sleep(ms, wake.signal);
    wake = undefined;
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
        log[retryable ? 'warn' : 'error']({ err: describe(err), failures, indexer: name }, 'indexer: sync failed, retrying');
      }
      if (!running) break;
      await pause(failures === 0 ? pollMs : Math.min(MAX_BACKOFF_MS, pollMs * 2 ** Math.min(failures, 10)));
    }
  }

  return {
    name,
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
      wake?.abort();
      await loop;
      loop = undefined;
      stopRequested = false;
      // At most one batch is in flight: once it has settled, nothing is being written.
      await settle().catch(() => undefined);
    },
    progress: () => ({ progressAt, head: lastHead, indexed: current?.number }),
    nudge() {
      if (!running) return;
      if (wake !== undefined) wake.abort();
      else nudged = true;
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
            await sleep(Math.min(remaining, pollMs));
          }
          const after = current;
          if (!after || after.number < target) await sleep(Math.min(Math.max(0, deadline - Date.now()), 20));
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

/** Error facts for a log line: code and name, never a URL (the AppError hierarchy strips them). */
function describe(err: unknown): Record<string, unknown> {
  if (isAppError(err)) return { code: err.code, message: err.message, ...(err.detail ? { detail: err.detail } : {}) };
  if (err instanceof Error) return { name: err.name, message: err.message.slice(0, 200) };
  return { error: String(err) };
}
