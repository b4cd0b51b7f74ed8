/**
 * The One Click relayer: sends the transactions the stock API queued for delegated users
 * (`stock_relay_requests`), with the relayer's own key through the process's shared sender (one
 * nonce sequence per key, src/chain/tx-sender.ts), and records how each ended.
 *
 * Exactly-once on chain across restarts: each signed version is journalled before it is broadcast
 * (the sender's `onSigned` hook), so a relayer started after a crash first resumes every `sent`
 * request — the same bytes, the same nonce — and only then takes queued ones. A request never
 * signed is simply sent later; one whose nonce was used by another transaction fails as dropped.
 *
 * A mined request is recorded for the calling key in the same database transaction that marks it
 * mined (`stock_tx_records`, so the order or operation shows in that key's lists like a recorded
 * self-submitted one), with the order ids and operation ids read off the receipt. A reverted one
 * records nothing: the indexer sees no event of a reverted transaction either.
 */
import { setMaxListeners } from 'node:events';
import { decodeEventLog, decodeFunctionData, getAbiItem, toEventSelector, type Abi, type Hex, type TransactionReceipt } from 'viem';
import { cashierAbi, oneClickRouterAbi, stockAbi, stockRouterAbi } from '../../chain/abi/generated/index.ts';
import { toChainError, type ChainPublicClient } from '../../chain/chain-client.ts';
import type { Deployment } from '../../chain/deploy-contracts.ts';
import { SenderUnfundedError, SendAbortedError, TxDroppedError, type TxSender } from '../../chain/tx-sender.ts';
import { AppError, ChainRevertError, ChainUnavailableError } from '../../errors/app-error.ts';
import { sleep } from '../../lib/async.ts';
import type { Logger } from '../../lib/logger.ts';
import { withTransaction } from '../../storage/transaction.ts';
import { operationIdFromReceipt } from '../operation-id.ts';
import type { RelaySignals } from '../relay-signals.ts';
import {
  ALREADY_DELEGATED,
  expireQueuedRelayRequests,
  finishRelayRequest,
  listQueuedRelayRequests,
  listSentRelayRequests,
  recordSignedVersion,
  type RelayKind,
  type RelayRequest,
  type RelayResult,
  type RelayVersion,
} from '../store/relay-request-store.ts';
import { recordTx, type TxKind } from '../store/tx-record-store.ts';
import type { Db } from '../../storage/database.ts';

export interface OneClickRelayerOptions {
  db: Db;
  publicClient: ChainPublicClient;
  /** The relayer key's sender (the delegatee users sign for). */
  sender: TxSender;
  deployment: Deployment;
  signals?: RelaySignals;
  logger: Pick<Logger, 'info' | 'warn' | 'error'>;
  /** How often the queue is read when no signal came (another process queued). Default 50 ms. */
  pollMs?: number;
  /** Transactions followed at once. Default 64. */
  maxInFlight?: number;
  /** A request queued longer than this is failed rather than sent late. Default 60 s. */
  maxQueueAgeMs?: number;
  now?: () => number;
}

export interface OneClickRelayer {
  start(): Promise<void>;
  /** Stops taking requests and abandons the ones it follows: they stay journalled for the next start. */
  stop(): Promise<void>;
  /** Requests being sent or followed now. */
  inFlight(): number;
  /**
   * For readiness and metrics: progress is a request ending, or a look at an empty queue (an idle
   * relayer is not stale; one whose requests hang is). Queue depth counts in-flight and waiting requests.
   */
  progress(): { progressAt?: number; queueDepth: number; oldestPendingAt?: number };
}

/** Relayed kinds that place orders or move money: recorded for the calling key when mined. */
const RECORDED_KIND: Partial<Record<RelayKind, TxKind>> = {
  order: 'order',
  'cash-deposit': 'cash-deposit',
  'cash-withdrawal': 'cash-withdrawal',
  'stock-deposit': 'stock-deposit',
  'stock-withdrawal': 'stock-withdrawal',
};

const selector = (abi: Abi, name: string) => toEventSelector(getAbiItem({ abi, name }) as never);
const ORDER_PLACED = selector(stockRouterAbi as Abi, 'OrderPlaced');
const OPERATION_TOPICS = new Set<Hex>([
  selector(cashierAbi as Abi, 'Deposited'),
  selector(cashierAbi as Abi, 'DepositQueued'),
  selector(cashierAbi as Abi, 'Withdrawn'),
  selector(cashierAbi as Abi, 'WithdrawalQueued'),
  selector(stockAbi as Abi, 'StockDeposited'),
  selector(stockAbi as Abi, 'StockWithdrawn'),
]);

/** Order ids placed and operation ids (as the indexer assigns them) of a mined receipt. */
export function resultOfReceipt(receipt: TransactionReceipt, deployment: Deployment): RelayResult {
  const router = deployment.contracts.stockRouter.toLowerCase();
  const orderIds: string[] = [];
  const operationIds: string[] = [];
  for (const log of receipt.logs) {
    const topic = log.topics[0];
    if (topic === ORDER_PLACED && log.address.toLowerCase() === router) {
      const ev = decodeEventLog({ abi: stockRouterAbi, data: log.data, topics: log.topics, eventName: 'OrderPlaced' });
      orderIds.push((ev.args as { orderId: bigint }).orderId.toString());
    } else if (topic !== undefined && OPERATION_TOPICS.has(topic)) {
      const id = operationIdFromReceipt(receipt, log.logIndex, deployment);
      if (id) operationIds.push(id);
    }
  }
  return { orderIds, operationIds };
}

export function createOneClickRelayer(opts: OneClickRelayerOptions): OneClickRelayer {
  const { db, sender, deployment, logger: log } = opts;
  const now = opts.now ?? Date.now;
  const pollMs = opts.pollMs ?? 50;
  const maxInFlight = opts.maxInFlight ?? 64;
  const maxQueueAgeMs = opts.maxQueueAgeMs ?? 60_000;
  const abort = new AbortController();
  // Every transaction followed listens for the stop.
  setMaxListeners(0, abort.signal);
  const active = new Map<string, Promise<void>>();
  let wake: (() => void) | undefined;
  let loop: Promise<void> | undefined;
  let unsubscribe: (() => void) | undefined;

  /** Journals each signed version, and keeps it in `versions` for a retry to resume. */
  const hooks = (r: RelayRequest, versions: RelayVersion[]) => ({
    onSigned: async (tx: RelayVersion, replaces?: Hex) => {
      await recordSignedVersion(db, r.requestId, tx, replaces, now());
      if (replaces) versions.push(tx);
      else versions.splice(0, versions.length, tx);
      opts.signals?.changed(r.requestId);
    },
  });

  /**
   * Why a mined transaction reverted, from the state before its block: a call that succeeds there
   * with more gas ran out of gas (an inner call's out-of-gas reverts the outer one before gasUsed
   * reaches the limit, so the receipt alone cannot tell); otherwise the custom error, if any.
   */
  async function revertReason(r: RelayRequest, receipt: TransactionReceipt): Promise<string> {
    try {
      const need = await opts.publicClient.estimateGas({ account: sender.address, to: r.to, data: r.data, blockNumber: receipt.blockNumber - 1n });
      if (need > r.gasLimit) return `out of gas: the call needs about ${need} gas and the gasLimit was ${r.gasLimit}`;
    } catch (err) {
      const e = toChainError(err);
      if (e instanceof ChainRevertError && e.errorName) return e.errorName;
    }
    return 'reverted';
  }

  /**
   * A reverted `delegate` lost a race to the same delegation (this request's earlier version, a
   * concurrent enable of the same signature, anyone who submitted it): the nonce moved and the
   * relayer is the wallet's live delegate as of the reverted transaction's block.
   */
  async function lostToSameDelegation(r: RelayRequest, receipt: TransactionReceipt): Promise<boolean> {
    if (r.kind !== 'delegate') return false;
    try {
      const call = decodeFunctionData({ abi: oneClickRouterAbi, data: r.data });
      if (call.functionName !== 'delegateBySig') return false;
      const deadline = call.args[2];
      // Past its deadline the signature itself was refused (SignatureExpired), whoever is the delegate.
      const block = await opts.publicClient.getBlock({ blockNumber: receipt.blockNumber });
      if (block.timestamp > BigInt(deadline)) return false;
      const [delegatee] = await opts.publicClient.readContract({
        address: r.to,
        abi: oneClickRouterAbi,
        functionName: 'activeDelegateOf',
        args: [r.userAddress],
        blockNumber: receipt.blockNumber,
      });
      return delegatee.toLowerCase() === sender.address.toLowerCase();
    } catch (err) {
      // Unknown: recorded as the revert it was; the read is retried with the whole record.
      throw toChainError(err);
    }
  }

  async function finish(r: RelayRequest, receipt: TransactionReceipt): Promise<void> {
    const base = { txHash: receipt.transactionHash, blockNumber: receipt.blockNumber, gasUsed: receipt.gasUsed, now: now() };
    if (receipt.status !== 'success' && (await lostToSameDelegation(r, receipt))) {
      await finishRelayRequest(db, r.requestId, { status: 'mined', ...base, result: { orderIds: [], operationIds: [] }, error: ALREADY_DELEGATED });
      log.info({ requestId: r.requestId, txHash: receipt.transactionHash }, 'relayer: delegation already submitted; reported enabled');
      return;
    }
    if (receipt.status !== 'success') {
      const error = await revertReason(r, receipt);
      await finishRelayRequest(db, r.requestId, { status: 'reverted', ...base, error });
      log.warn({ requestId: r.requestId, kind: r.kind, txHash: receipt.transactionHash, error }, 'relayer: transaction reverted');
      return;
    }
    // The send's answer waits for the indexer to project this block: let it look now.
    opts.signals?.mined();
    const result = resultOfReceipt(receipt, deployment);
    const recordAs = RECORDED_KIND[r.kind];
    await withTransaction(db, async (tx) => {
      if (recordAs) await recordTx(tx, { txHash: receipt.transactionHash, apiKey: r.apiKey, kind: recordAs, recordedAt: now() });
      await finishRelayRequest(tx, r.requestId, { status: 'mined', ...base, result });
    });
  }

  /**
   * The receipt is in hand: its end is recorded however long the database takes to come back. A
   * relayer stopped meanwhile leaves the request `sent`, and the next one finds the receipt again.
   */
  async function recordEnd(r: RelayRequest, receipt: TransactionReceipt): Promise<void> {
    for (let delay = 200, warned = false; ; delay = Math.min(delay * 2, 5_000)) {
      try {
        await finish(r, receipt);
        return;
      } catch (err) {
        if (!warned) log.warn({ requestId: r.requestId, txHash: receipt.transactionHash, code: (err as AppError).code }, 'relayer: recording a mined transaction failed; retrying');
        warned = true;
        await sleep(delay, abort.signal);
        if (abort.signal.aborted) return;
      }
    }
  }

  async function fail(r: RelayRequest, err: unknown, journalled: boolean): Promise<'retry' | 'done'> {
    if (abort.signal.aborted && (err instanceof SendAbortedError || (err as { name?: string }).name === 'AbortError')) return 'done';
    // The node or the database is away: nothing was broadcast (or the journal write failed before
    // it), and the request waits in place.
    if (err instanceof ChainUnavailableError || (err as AppError).code === 'STORAGE_UNAVAILABLE') return 'retry';
    // Signed bytes were journalled and may have reached the node: the request is not "nothing was
    // sent" until the chain says so (a dropped transaction). Resume the same bytes instead.
    if (journalled && !(err instanceof TxDroppedError) && !(err instanceof SenderUnfundedError)) {
      log.warn({ requestId: r.requestId, kind: r.kind, code: (err as AppError).code }, 'relayer: a journalled request failed; resuming its signed transaction');
      return 'retry';
    }
    let error: string;
    if (err instanceof SenderUnfundedError) error = 'relayer: cannot pay for gas (its ETH balance is too low); nothing was sent';
    else if (err instanceof TxDroppedError) error = 'relayer: the transaction was dropped (its nonce was used by another); nothing happened on chain';
    else error = 'relayer: the node refused the transaction; nothing was sent';
    log.error({ requestId: r.requestId, kind: r.kind, code: (err as AppError).code, detail: (err as AppError).detail }, error);
    await finishRelayRequest(db, r.requestId, { status: 'failed', error, now: now() });
    return 'done';
  }

  /** Sends (or resumes) one request and records its end; leaves it journalled when stopped. */
  /** For progress(): the last request that ended (or the last look at an empty queue), and the queue as last read. */
  let progressAt: number | undefined;
  let depth: { queueDepth: number; oldestPendingAt?: number } = { queueDepth: 0 };
  const created = new Map<string, number>();
  const oldestActive = (): number | undefined => {
    let oldest: number | undefined;
    for (const id of active.keys()) {
      const c = created.get(id);
      if (c !== undefined && (oldest === undefined || c < oldest)) oldest = c;
    }
    return oldest;
  };

  function run(r: RelayRequest): void {
    created.set(r.requestId, r.createdAt);
    // What has been journalled of this request: once anything has, every attempt resumes it (the
    // same nonce), never sends the call again under a new one.
    const versions: RelayVersion[] = [...r.versions];
    const p = (async () => {
      for (;;) {
        try {
          const req = { to: r.to, data: r.data, gas: r.gasLimit };
          const receipt = versions.length > 0
            ? await sender.resume([...versions], req, abort.signal, hooks(r, versions))
            : await sender.send(req, abort.signal, hooks(r, versions));
          await recordEnd(r, receipt);
          break;
        } catch (err) {
          if (abort.signal.aborted) break;
          if ((await fail(r, err, versions.length > 0)) === 'done') break;
          // The node is away before anything was broadcast: the request waits in place.
          await sleep(500, abort.signal).catch(() => undefined);
          if (abort.signal.aborted) break;
        }
      }
    })()
      .catch((err) => log.error({ requestId: r.requestId, code: (err as AppError).code }, 'relayer: could not record a request\'s end'))
      .finally(() => {
        active.delete(r.requestId);
        created.delete(r.requestId);
        progressAt = Date.now();
        opts.signals?.changed(r.requestId);
        // A slot is free: queued requests may go now.
        onSignal();
      });
    active.set(r.requestId, p);
  }

  let expiredAt = 0;
  async function drainQueue(): Promise<void> {
    // Once a second, not on every wake-up: the age limit is in tens of seconds.
    if (now() - expiredAt >= 1_000) {
      expiredAt = now();
      const expired = await expireQueuedRelayRequests(db, now() - maxQueueAgeMs, 'relayer: not sent within its time limit; nothing was sent', now());
      for (const id of expired) opts.signals?.changed(id);
    }
    const room = maxInFlight - active.size;
    if (room <= 0) return;
    const queued = await listQueuedRelayRequests(db, room + active.size);
    let oldest = oldestActive();
    for (const r of queued) if (!active.has(r.requestId) && (oldest === undefined || r.createdAt < oldest)) oldest = r.createdAt;
    const waiting = queued.filter((r) => !active.has(r.requestId)).length;
    // Idle, or nothing stuck: progress now. Otherwise progress is the last request that ended.
    if (active.size === 0 && waiting === 0) progressAt = Date.now();
    depth = { queueDepth: active.size + waiting, oldestPendingAt: oldest };
    for (const r of queued) {
      if (active.size >= maxInFlight) break;
      if (!active.has(r.requestId)) run(r);
    }
  }

  /** Set by a signal that came while the queue was being read: read it again at once. */
  let signalled = false;

  async function mainLoop(): Promise<void> {
    while (!abort.signal.aborted) {
      signalled = false;
      try {
        await drainQueue();
      } catch (err) {
        log.warn({ code: (err as AppError).code }, 'relayer: reading the queue failed; retrying');
      }
      if (signalled) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, pollMs);
        function done() {
          clearTimeout(timer);
          wake = undefined;
          abort.signal.removeEventListener('abort', done);
          resolve();
        }
        wake = done;
        abort.signal.addEventListener('abort', done);
      });
    }
  }

  const onSignal = () => {
    signalled = true;
    wake?.();
  };

  return {
    async start() {
      // Journalled transactions first, in nonce order: their broadcasts queue on the nonce lock
      // ahead of any new send, which then takes the chain's count after them.
      const sent = await listSentRelayRequests(db);
      if (sent.length > 0) log.info({ requests: sent.length }, 'relayer: resuming transactions signed before a restart');
      for (const r of sent) run(r);
      unsubscribe = opts.signals?.onQueued(onSignal);
      loop = mainLoop();
    },
    async stop() {
      abort.abort();
      unsubscribe?.();
      await loop;
      await Promise.allSettled([...active.values()]);
    },
    inFlight: () => active.size,
    progress: () => ({ progressAt, ...depth, queueDepth: Math.max(depth.queueDepth, active.size) }),
  };
}
