/**
 * The operator side of queued cash operations. A deposit the Cashier's credit buffer could not
 * cover, or a withdrawal its token buffer could not pay, waits in the Cashier as a queued operation
 * (`queuedDeposit(id)` / `queuedWithdrawal(id)`, ids from 1 below `nextDepositQueueId()` /
 * `nextWithdrawalQueueId()`). This settles each one `settleDelayMs` after first seeing it pending —
 * the delay stands in for the off-chain final cash settlement — with `settleDeposit(id)` /
 * `settleWithdrawal(id)`.
 *
 * Restart-safe: per queue a cursor (lowest id not known settled) is kept in the meta store, and
 * everything from it up is re-read from the chain. The first-seen time is memory only, so after a
 * restart an operation waits at most one more delay.
 */
import { encodeFunctionData, type Address } from 'viem';
import { cashierAbi } from '../../chain/abi/generated/index.ts';
import { toChainError, type ChainPublicClient } from '../../chain/chain-client.ts';
import { AppError, ChainRevertError } from '../../errors/app-error.ts';
import type { DbExecutor } from '../../storage/database.ts';
import { getMeta, setMeta } from '../../storage/meta-store.ts';
import type { ExecutorLogger } from './executor-logger.ts';
import type { TxSender } from '../../chain/tx-sender.ts';
import { venueNow } from '../../lib/venue-clock.ts';

export type CashQueueKind = 'deposit' | 'withdrawal';

export interface CashQueueSettlerOptions {
  db: DbExecutor;
  publicClient: ChainPublicClient;
  sender: TxSender;
  cashier: Address;
  logger?: ExecutorLogger;
  /** Default 5000 ms (`CASH_SETTLE_DELAY_MS`). */
  settleDelayMs?: number;
  now?: () => number;
  /** Settlements sent per queue per run. Default 50. */
  maxPerRun?: number;
  /** After a settlement reverts, wait this long before trying that operation again. Default 30 s. */
  retryAfterMs?: number;
  signal?: AbortSignal;
}

export interface CashSettleOutcome {
  deposits: number;
  withdrawals: number;
  /** Operations seen pending and not settled yet (waiting for the delay or for a retry). */
  pending: number;
  retryableError?: AppError;
}

export interface CashQueueSettler {
  runOnce(): Promise<CashSettleOutcome>;
  /** Per queue, the lowest id not known to be settled. */
  cursors(): { deposit: bigint; withdrawal: bigint };
}

export const DEFAULT_CASH_SETTLE_DELAY_MS = 5_000;
const STATUS_PENDING = 1;
const STATUS_SETTLED = 2;

interface QueueState {
  kind: CashQueueKind;
  metaKey: string;
  cursor: bigint;
  persisted: bigint;
  /** Pending ids → first seen (ms). */
  pending: Map<bigint, number>;
  /** Ids whose settlement reverted → not before (ms). */
  backoff: Map<bigint, number>;
  /** Ids known settled at or above the cursor. */
  settled: Set<bigint>;
  inFlight: Set<bigint>;
}

export function createCashQueueSettler(opts: CashQueueSettlerOptions): CashQueueSettler {
  const delay = opts.settleDelayMs ?? DEFAULT_CASH_SETTLE_DELAY_MS;
  const now = opts.now ?? venueNow;
  const maxPerRun = opts.maxPerRun ?? 50;
  const retryAfterMs = opts.retryAfterMs ?? 30_000;
  const { publicClient } = opts;
  const queues: Record<CashQueueKind, QueueState> = {
    deposit: mkQueue('deposit'),
    withdrawal: mkQueue('withdrawal'),
  };
  let loaded = false;

  function mkQueue(kind: CashQueueKind): QueueState {
    return { kind, metaKey: `executor.cash.${kind}Cursor`, cursor: 1n, persisted: 1n, pending: new Map(), backoff: new Map(), settled: new Set(), inFlight: new Set() };
  }

  const load = async (): Promise<void> => {
    for (const q of Object.values(queues)) {
      const raw = await getMeta(opts.db, q.metaKey);
      if (raw !== undefined && /^[1-9]\d*$/.test(raw)) q.cursor = BigInt(raw);
      q.persisted = q.cursor;
    }
    loaded = true;
  };

  const read = async <T>(fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      throw toChainError(err);
    }
  };

  const runQueue = async (q: QueueState): Promise<number> => {
    const next = await read(() =>
      publicClient.readContract({
        address: opts.cashier,
        abi: cashierAbi,
        functionName: q.kind === 'deposit' ? 'nextDepositQueueId' : 'nextWithdrawalQueueId',
      }),
    );
    // Everything from the cursor up that is not known settled: its status decides.
    const ids: bigint[] = [];
    for (let id = q.cursor; id < next; id++) if (!q.settled.has(id) && !q.inFlight.has(id)) ids.push(id);
    const statuses = await read(() =>
      Promise.all(
        ids.map((id) =>
          publicClient.readContract({
            address: opts.cashier,
            abi: cashierAbi,
            functionName: q.kind === 'deposit' ? 'queuedDeposit' : 'queuedWithdrawal',
            args: [id],
          }),
        ),
      ),
    );
    const t = now();
    ids.forEach((id, i) => {
      const status = statuses[i].status;
      if (status === STATUS_PENDING) {
        if (!q.pending.has(id)) q.pending.set(id, t);
      } else if (status === STATUS_SETTLED) {
        q.pending.delete(id);
        q.backoff.delete(id);
        q.settled.add(id);
      }
    });

    const due = [...q.pending.entries()]
      .filter(([id, seen]) => t - seen >= delay && !q.inFlight.has(id) && (q.backoff.get(id) ?? 0) <= t)
      .map(([id]) => id)
      .sort((a, b) => (a < b ? -1 : 1))
      .slice(0, maxPerRun);
    let settledNow = 0;
    let firstRetryable: AppError | undefined;
    await Promise.all(
      due.map(async (id) => {
        q.inFlight.add(id);
        try {
          const data = encodeFunctionData({
            abi: cashierAbi,
            functionName: q.kind === 'deposit' ? 'settleDeposit' : 'settleWithdrawal',
            args: [id],
          });
          let gas: bigint;
          try {
            gas = await publicClient.estimateGas({ account: opts.sender.address, to: opts.cashier, data });
          } catch (err) {
            throw toChainError(err);
          }
          const receipt = await opts.sender.send({ to: opts.cashier, data, gas: (gas * 13n) / 10n }, opts.signal);
          if (receipt.status !== 'success') throw new ChainRevertError(undefined, { detail: { txHash: receipt.transactionHash } });
          q.pending.delete(id);
          q.backoff.delete(id);
          q.settled.add(id);
          settledNow++;
          opts.logger?.info({ queueId: id.toString(), kind: q.kind, txHash: receipt.transactionHash }, 'executor: queued cash operation settled');
        } catch (err) {
          const mapped = toChainError(err);
          if (mapped instanceof ChainRevertError && mapped.errorName === 'QueuedOpNotPending') {
            // Someone else (another operator) settled it first.
            q.pending.delete(id);
            q.settled.add(id);
          } else if (mapped.retryable) {
            firstRetryable ??= mapped;
          } else {
            q.backoff.set(id, now() + retryAfterMs);
            opts.logger?.warn(
              { queueId: id.toString(), kind: q.kind, error: mapped instanceof ChainRevertError ? mapped.errorName : mapped.code, errorArgs: mapped.detail?.errorArgs },
              'executor: queued cash settlement reverts; retrying later',
            );
          }
        } finally {
          q.inFlight.delete(id);
        }
      }),
    );

    // Advance the cursor over the settled prefix.
    let cursor = q.cursor;
    while (cursor < next && q.settled.has(cursor)) {
      q.settled.delete(cursor);
      cursor++;
    }
    q.cursor = cursor;
    if (q.cursor !== q.persisted) {
      try {
        await setMeta(opts.db, q.metaKey, q.cursor.toString());
        q.persisted = q.cursor;
      } catch (err) {
        opts.logger?.warn({ err }, 'executor: could not persist the cash queue cursor; retrying next run');
      }
    }
    if (firstRetryable) throw firstRetryable;
    return settledNow;
  };

  return {
    async runOnce() {
      if (!loaded) await load();
      const outcome: CashSettleOutcome = { deposits: 0, withdrawals: 0, pending: 0 };
      const [d, w] = await Promise.allSettled([runQueue(queues.deposit), runQueue(queues.withdrawal)]);
      if (d.status === 'fulfilled') outcome.deposits = d.value;
      else outcome.retryableError = toChainError(d.reason);
      if (w.status === 'fulfilled') outcome.withdrawals = w.value;
      else outcome.retryableError ??= toChainError(w.reason);
      outcome.pending = queues.deposit.pending.size + queues.withdrawal.pending.size;
      return outcome;
    },
    cursors: () => ({ deposit: queues.deposit.cursor, withdrawal: queues.withdrawal.cursor }),
  };
}
