/**
 * Signer recovery on worker threads (`SIGNATURE_WORKERS`, docs/performance.md "Signature recovery
 * on every core"): a recovery costs about 70–90 µs of libsecp256k1, and a process that verifies every
 * signed order on its one JavaScript thread leaves its other cores idle for that part of the work.
 * Off by default: on the 2-core machines measured, no core is idle (the client and the order thread
 * hold both) and the messages' own CPU made batches and WebSocket orders slower; it is for a host
 * with cores to spare (`SIGNATURE_WORKERS=auto`).
 *
 * A message to a worker and back costs tens of µs, about what it would save for one signature, so
 * recoveries are not sent one by one: those requested within one turn of the event loop (every
 * request read in one poll phase, or the 20 orders of a batch) are queued and sent at the turn's end
 * (`setImmediate`) as one message of two strings to a free worker, split evenly when several are free.
 * While every worker has a batch, new requests wait in the queue and go with the next free worker,
 * so batches grow under load and the messages cost less per signature.
 *
 * The answers are those of the calling thread's `recoverSigner`: the inputs are checked here with
 * its own checks (`checkRecoverable`, same errors) before anything is queued, the worker runs the same
 * function, and a refusal comes back as the same ValidationError (`signature: is not a valid
 * signature`). signature-recovery-pool.test.ts checks this on valid and malformed input.
 *
 * Nothing is lost when a worker dies: the batch it held is recovered on the calling thread (the
 * answer is a pure function of the input, so recovering twice is safe) and the worker is started
 * again; after three deaths in a row without an answer in between, that worker is not restarted
 * and its share falls to the others or, with none left, to the calling thread. Until a worker has
 * said it is ready (it loads its script, through tsx from the sources, in tens to hundreds of ms),
 * recoveries run on the calling thread too. Without the native binding the pool starts no worker.
 */
import { workerScript } from '../lib/worker-script.ts';
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import type { Address, Hex } from 'viem';
import { AppError } from '../errors/app-error.ts';
import type { Logger } from '../lib/logger.ts';
import { checkRecoverable, invalidSignature, nativeRecovery, recoverSigner, recoverSignerJs } from './signature-recovery.ts';
import { ADDRESS_CHARS, RECOVERY_WORKER_MARK, REFUSED, type RecoveryBatchRequest, type RecoveryWorkerReply } from './signature-recovery-worker.ts';

/** `SIGNATURE_WORKERS` (app-config.ts): `auto` (one worker for each core beyond the calling thread's, at most {@link AUTO_MAX_WORKERS}) or a count, 0 for none. */
export type SignatureWorkersSetting = 'auto' | number;

/**
 * The most workers `auto` starts. One order thread cannot keep more busy: it spends 180–700 µs of its
 * own on an order besides the 70–90 µs of recovery it hands over, so one worker recovers for it with
 * time to spare (docs/performance.md, "Signature recovery on every core"); more only split a batch's
 * recoveries between them, which shortens the batch's wait.
 */
export const AUTO_MAX_WORKERS = 4;
/** A worker that died this many times without answering a batch in between is not started again. */
const MAX_CRASHES_IN_A_ROW = 3;

/**
 * The workers a setting starts: `auto` is one for each core this process may run on
 * (`os.availableParallelism()`, which honours `taskset`) beyond the calling thread's, at most
 * {@link AUTO_MAX_WORKERS}; 0 on one core, where a worker could only take turns with the caller.
 */
export function signatureWorkerCount(setting: SignatureWorkersSetting, parallelism = os.availableParallelism()): number {
  if (setting === 'auto') return Math.max(0, Math.min(AUTO_MAX_WORKERS, parallelism - 1));
  return setting;
}

interface Item {
  digest: Hex;
  signature: Hex;
  resolve(signer: Address): void;
  reject(err: unknown): void;
}

interface Slot {
  index: number;
  worker?: Worker;
  ready: boolean;
  batch?: { id: number; items: Item[] };
  crashes: number;
  retired: boolean;
}

export interface SignatureRecoveryPoolStats {
  /** Workers started and ready now. */
  readyWorkers: number;
  /** Batches answered by a worker, and the signatures in them. */
  batches: number;
  recoveredByWorkers: number;
  /** Signatures recovered on the calling thread: no worker ready, or (below) a worker died with them. */
  recoveredInline: number;
  /** Of those, the signatures of batches whose worker died before answering. */
  failedOver: number;
  /** Workers that exited while the pool was open. */
  workerExits: number;
}

export interface SignatureRecoveryPoolOptions {
  workers: number;
  logger?: Pick<Logger, 'warn' | 'info'>;
}

export class SignatureRecoveryPool {
  private readonly slots: Slot[];
  private queue: Item[] = [];
  private scheduled = false;
  private closed = false;
  private nextId = 1;
  private readonly counts = { batches: 0, recoveredByWorkers: 0, recoveredInline: 0, failedOver: 0, workerExits: 0 };
  private readonly logger?: Pick<Logger, 'warn' | 'info'>;
  private readonly flushSoon = () => this.flush();

  constructor(opts: SignatureRecoveryPoolOptions) {
    this.logger = opts.logger;
    const n = nativeRecovery ? Math.max(0, Math.floor(opts.workers)) : 0;
    this.slots = Array.from({ length: n }, (_, index) => ({ index, ready: false, crashes: 0, retired: false }));
    for (const slot of this.slots) this.start(slot);
  }

  /** The workers this pool was asked for (those retired after crashes included). */
  get size(): number {
    return this.slots.length;
  }

  stats(): SignatureRecoveryPoolStats {
    return { readyWorkers: this.slots.filter((s) => s.ready).length, ...this.counts };
  }

  /** Resolves once every worker that is to run is ready (tests, and a start that wants them warm). */
  async whenReady(timeoutMs = 30_000): Promise<void> {
    const until = Date.now() + timeoutMs;
    while (this.slots.some((s) => !s.ready && !s.retired) && !this.closed) {
      if (Date.now() > until) throw new AppError('INTERNAL', 'signature recovery pool: the workers did not start in time');
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  /**
   * {@link recoverSigner}'s answer for `digest` and `signature`, computed on a worker when one is
   * free this turn or the next; refused with recoverSigner's own error.
   */
  recover(digest: Hex, signature: Hex): Promise<Address> {
    try {
      checkRecoverable(digest, signature);
    } catch (err) {
      return Promise.reject(err);
    }
    return new Promise<Address>((resolve, reject) => {
      this.queue.push({ digest, signature, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(this.flushSoon);
      }
    });
  }

  /** Stops the workers; what they hold and what is queued is recovered here first. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.inline(this.queue.splice(0));
    await Promise.all(
      this.slots.map(async (slot) => {
        const w = slot.worker;
        if (w) await w.terminate();
      }),
    );
  }

  private flush(): void {
    this.scheduled = false;
    if (this.queue.length === 0) return;
    if (this.closed || !this.slots.some((s) => s.ready)) {
      this.inline(this.queue.splice(0));
      return;
    }
    const free = this.slots.filter((s) => s.ready && s.batch === undefined);
    // Every worker busy: the queue waits for the first answer (see onReply), and grows meanwhile.
    if (free.length === 0) return;
    const share = Math.ceil(this.queue.length / free.length);
    for (const slot of free) {
      if (this.queue.length === 0) break;
      this.send(slot, this.queue.splice(0, share));
    }
  }

  private send(slot: Slot, items: Item[]): void {
    const w = slot.worker!;
    const id = this.nextId++;
    slot.batch = { id, items };
    let digests = '';
    let signatures = '';
    for (const it of items) {
      digests += it.digest;
      signatures += it.signature;
    }
    // Held while it has work, so that a process waiting only for a recovery does not exit under it.
    w.ref();
    w.postMessage({ id, digests, signatures } satisfies RecoveryBatchRequest);
  }

  private onReply(slot: Slot, m: RecoveryWorkerReply): void {
    if (m.type === 'ready') {
      slot.ready = true;
      slot.worker?.unref();
      if (this.queue.length > 0 && !this.scheduled) this.flush();
      return;
    }
    const batch = slot.batch;
    if (batch === undefined || batch.id !== m.id) return;
    slot.batch = undefined;
    slot.crashes = 0;
    slot.worker?.unref();
    this.counts.batches++;
    this.counts.recoveredByWorkers += batch.items.length;
    for (let i = 0; i < batch.items.length; i++) {
      const signer = m.signers.slice(i * ADDRESS_CHARS, (i + 1) * ADDRESS_CHARS);
      if (signer === REFUSED) batch.items[i].reject(invalidSignature());
      else batch.items[i].resolve(signer as Address);
    }
    // What queued while this worker was busy goes now, without waiting for the turn's end.
    if (this.queue.length > 0) this.flush();
  }

  private start(slot: Slot): void {
    const { url, argv } = workerScript('signature-recovery-worker.js', new URL('./signature-recovery-worker.ts', import.meta.url));
    const w = new Worker(url, { workerData: RECOVERY_WORKER_MARK, argv, execArgv: [], name: `signature-recovery-${slot.index}` });
    w.unref();
    slot.worker = w;
    slot.ready = false;
    w.on('message', (m: RecoveryWorkerReply) => this.onReply(slot, m));
    w.on('error', (err) => this.logger?.warn({ err }, 'signature recovery worker failed; its batch is recovered on the calling thread'));
    w.on('exit', (code) => this.onExit(slot, w, code));
  }

  private onExit(slot: Slot, w: Worker, code: number): void {
    if (slot.worker !== w) return;
    slot.worker = undefined;
    slot.ready = false;
    const batch = slot.batch;
    slot.batch = undefined;
    if (batch) {
      this.counts.failedOver += batch.items.length;
      this.inline(batch.items);
    }
    if (this.closed) return;
    this.counts.workerExits++;
    slot.crashes++;
    if (slot.crashes >= MAX_CRASHES_IN_A_ROW) {
      slot.retired = true;
      this.logger?.warn({ worker: slot.index, code }, 'signature recovery worker died three times in a row; not started again (its share is recovered elsewhere)');
    } else {
      this.logger?.warn({ worker: slot.index, code }, 'signature recovery worker exited; started again');
      this.start(slot);
    }
    // The queue may have waited for this worker.
    if (this.queue.length > 0 && !this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flushSoon);
    }
  }

  /** Recovers `items` on this thread, as recoverSigner would. */
  private inline(items: Item[]): void {
    this.counts.recoveredInline += items.length;
    if (!nativeRecovery) {
      // No binding: no worker was started, and recovery is viem's (same answers, see signature-recovery.ts).
      for (const it of items) recoverSignerJs(it.digest, it.signature).then(it.resolve, it.reject);
      return;
    }
    for (const it of items) {
      try {
        it.resolve(recoverSigner(it.digest, it.signature));
      } catch (err) {
        it.reject(err);
      }
    }
  }

  /** Tests only: the live worker of slot `i`, to kill it mid-batch. */
  workerForTest(i: number): Worker | undefined {
    return this.slots[i]?.worker;
  }

  /** Tests only: whether slot `i` has a batch out. */
  busyForTest(i: number): boolean {
    return this.slots[i]?.batch !== undefined;
  }
}

let shared: SignatureRecoveryPool | undefined;

/**
 * Starts the process's pool with `workers` threads (replacing one started before), or with 0 closes
 * it: every recovery then runs on the calling thread, as it did before the pool. Answers the pool.
 */
export async function configureSignatureRecovery(opts: SignatureRecoveryPoolOptions): Promise<SignatureRecoveryPool | undefined> {
  const old = shared;
  shared = undefined;
  await old?.close();
  if (opts.workers > 0 && nativeRecovery) shared = new SignatureRecoveryPool(opts);
  return shared;
}

/** The process's pool, if one is running. */
export function signatureRecoveryPool(): SignatureRecoveryPool | undefined {
  return shared;
}
