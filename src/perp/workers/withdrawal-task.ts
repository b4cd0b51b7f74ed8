/**
 * Pays the withdrawals the engine has reserved (docs/perp-risk.md "Withdrawals", docs/perp-api.md
 * "Withdrawals"), in the perp-engine role, with the perp operator's key through the process's shared
 * sender (src/chain/tx-sender.ts) and so its nonce sequence.
 *
 * For each withdrawal the engine lists as pending, exactly once:
 *
 * 1. Its row (store/withdrawal-store.ts) is made PENDING if the API's answer was lost before it was.
 * 2. A payment already signed (recorded in the row before it was broadcast) is followed, never
 *    replaced by a new one: `sender.resume` re-broadcasts the same bytes and waits for a receipt. If
 *    its nonce went to another transaction, it can no longer land, and the withdrawal goes on to 3.
 * 3. If the vault already shows `withdrawalPaid(id)`, it is PAID and nothing is sent. Otherwise the
 *    call is simulated: `WithdrawalAlreadyPaid` is PAID; a revert that says this vault cannot make
 *    the payment (`InsufficientVaultBalance`, a zero account, amount or id) is FAILED without a
 *    transaction, as is a request the wallet never signed (a row from before 0.2.0) or whose
 *    signed deadline has passed; the cap of the period reached, no answer, the key not an operator
 *    yet are retried later. Then `payWithdrawal(request, signature)` relays the wallet's signed
 *    request, each signed version of the transaction recorded (status SENT, its hash) before it is
 *    broadcast.
 * 4. A mined payment is PAID; a reverted one is PAID if the vault shows the id paid (another version
 *    landed first), FAILED otherwise.
 * 5. The outcome is written to the row, then the engine is told with `settleWithdrawal` under the id
 *    `withdrawal-settle:<id>`: PAID takes the reserve out, FAILED gives it back, once (the engine
 *    refuses a second settlement, and the journal answers a retried id). Then the row is final:
 *    COMPLETED or FAILED.
 *
 * A crash anywhere is resumed from what the row and the engine hold: before anything was signed, the
 * vault is asked first (3); between broadcast and receipt, the recorded transaction is followed (2);
 * after the receipt, the recorded outcome is settled (5). The vault's own `withdrawalPaid` guard stays
 * the last line: it reverts a second payment of an id whatever happens here.
 *
 * Payments run side by side (up to `maxInFlight`); on start, payments already signed are resumed
 * before any new one takes a nonce. A payment that fails transiently waits (1 s, doubling to 30 s)
 * before the next try.
 */
import { setMaxListeners } from 'node:events';
import { BaseError, encodeFunctionData, parseTransaction, type Address, type Hex, type TransactionReceipt } from 'viem';
import { marginVaultAbi } from '../../chain/abi/generated/index.ts';
import { toChainError, type ChainPublicClient } from '../../chain/chain-client.ts';
import { SendAbortedError, TxDroppedError, type SendHooks, type TxRequest, type TxSender } from '../../chain/tx-sender.ts';
import { ChainRevertError } from '../../errors/app-error.ts';
import type { Logger } from '../../lib/logger.ts';
import type { DbExecutor } from '../../storage/database.ts';
import type { PerpEngine } from '../engine/perp-engine.ts';
import type { EngineGateway } from '../sequencer/engine-gateway.ts';
import {
  clearWithdrawalTxs,
  finishWithdrawal,
  getWithdrawals,
  listOpenWithdrawals,
  recordWithdrawalReserved,
  recordWithdrawalTx,
  setWithdrawalOutcome,
  type SignedWithdrawal,
  type WithdrawalOutcome,
  type WithdrawalRecord,
} from '../store/withdrawal-store.ts';

export const SETTLE_COMMAND_PREFIX = 'withdrawal-settle:';

/**
 * What a failure may say in the log: a viem error as the project's short chain error (viem's own text
 * can quote the signed transaction), anything else (storage, the engine) by its message.
 */
function logSafe(err: unknown): { message: string; detail?: Record<string, unknown> } {
  if (err instanceof BaseError) {
    const e = toChainError(err);
    return { message: e.message, ...(e.detail ? { detail: e.detail } : {}) };
  }
  return { message: err instanceof Error ? err.message : String(err) };
}

/** Vault reverts that mean this payment cannot be made: the withdrawal fails and its reserve returns. */
const VAULT_REFUSALS = new Set(['InsufficientVaultBalance', 'ZeroAddress', 'ZeroAmount', 'ZeroWithdrawalId', 'WithdrawalExpired', 'InvalidWithdrawalSignature', 'WithdrawalAboveCap']);

/** A row from before 0.2.0 carries no signature, and the vault pays nothing without the wallet's. */
export const UNSIGNED_WITHDRAWAL_REASON =
  "not signed by the wallet (requested before 0.2.0, whose vault paid without the wallet's signature): the amount is back in the account; request it again";

export interface WithdrawalTaskOptions {
  db: DbExecutor;
  gateway: Pick<EngineGateway, 'submit'>;
  /** The live engine (the task runs beside the sequencer). */
  engine: () => Pick<PerpEngine, 'pendingWithdrawals' | 'withdrawal'>;
  publicClient: ChainPublicClient;
  /** The perp operator's sender (an operator of the vault). */
  sender: TxSender;
  marginVault: Address;
  /** Where to look for the vault's `Withdrawn` log of a payment made without this task. Default 0. */
  fromBlock?: bigint;
  logger?: Pick<Logger, 'info' | 'warn' | 'error'>;
  /** Default 250 ms. */
  pollMs?: number;
  /** Payments in progress at once. Default 16. */
  maxInFlight?: number;
  /** First wait after a failed try (doubling, at most 30 s). Default 1 000 ms. */
  retryMs?: number;
  now?: () => number;
}

export interface WithdrawalTask {
  start(): void;
  /** Stops taking new work and abandons the waits of payments in flight (they resume on the next start). */
  stop(): Promise<void>;
  /**
   * One round: takes in hand every reserved withdrawal not in progress (payments already signed
   * first), and finalises rows the engine has settled. Answers how many it took in hand; they go
   * on in the background (`drain` waits for them).
   */
  runOnce(): Promise<number>;
  /** Resolves once no payment is in progress. */
  drain(): Promise<void>;
}

interface Decision {
  outcome: WithdrawalOutcome;
  txHash: string | null;
  blockNumber: number | null;
  reason: string | null;
}

interface Pending {
  withdrawalId: string;
  account: string;
  amount: bigint;
  requestedTs: number;
}

export function createWithdrawalTask(opts: WithdrawalTaskOptions): WithdrawalTask {
  const { db, publicClient, sender, marginVault } = opts;
  const now = opts.now ?? Date.now;
  const pollMs = opts.pollMs ?? 250;
  const maxInFlight = opts.maxInFlight ?? 16;
  const retryMs = opts.retryMs ?? 1_000;
  const log = opts.logger;
  const active = new Map<string, Promise<void>>();
  const backoff = new Map<string, { tries: number; at: number }>();
  // Every payment followed (up to maxInFlight) listens for the stop on one signal.
  const newController = () => {
    const c = new AbortController();
    setMaxListeners(0, c.signal);
    return c;
  };
  let controller = newController();
  let running = false;
  let timer: NodeJS.Timeout | undefined;
  let round: Promise<unknown> | undefined;

  /** The wallet's signed request, relayed as signed: the operator's key adds nothing but gas. */
  const callData = (w: Pending, signed: SignedWithdrawal): Hex =>
    encodeFunctionData({
      abi: marginVaultAbi,
      functionName: 'payWithdrawal',
      args: [
        { account: w.account as Address, recipient: signed.recipient as Address, amount: w.amount, withdrawalId: w.withdrawalId as Hex, deadline: BigInt(signed.deadline) },
        signed.signature,
      ],
    });

  const isPaid = async (id: string): Promise<boolean> => {
    try {
      return await publicClient.readContract({ address: marginVault, abi: marginVaultAbi, functionName: 'withdrawalPaid', args: [id as Hex] });
    } catch (err) {
      throw toChainError(err);
    }
  };

  /** The vault paid `id` without (or before) our receipt: its `Withdrawn` log says where, if it can be read. */
  const paidOnChain = async (id: string): Promise<Decision> => {
    let txHash: string | null = null;
    let blockNumber: number | null = null;
    try {
      const logs = await publicClient.getContractEvents({ address: marginVault, abi: marginVaultAbi, eventName: 'Withdrawn', args: { withdrawalId: id as Hex }, fromBlock: opts.fromBlock ?? 0n });
      const last = logs[logs.length - 1];
      if (last) {
        txHash = last.transactionHash;
        blockNumber = Number(last.blockNumber);
      }
    } catch (err) {
      log?.warn({ withdrawalId: id, err: toChainError(err).message }, 'perp withdrawals: the vault shows the id paid; its log could not be read');
    }
    return { outcome: 'PAID', txHash, blockNumber, reason: null };
  };

  const fromReceipt = async (id: string, receipt: TransactionReceipt): Promise<Decision> => {
    const at = { txHash: receipt.transactionHash, blockNumber: Number(receipt.blockNumber) };
    if (receipt.status === 'success') return { outcome: 'PAID', ...at, reason: null };
    // Reverted: paid by another version or before (WithdrawalAlreadyPaid), or not payable.
    if (await isPaid(id)) return paidOnChain(id);
    return { outcome: 'FAILED', ...at, reason: 'the payment transaction reverted' };
  };

  /** Steps 2 to 4: the payment's outcome, or a throw (retried later). */
  const decide = async (w: Pending, row: WithdrawalRecord, signal: AbortSignal): Promise<Decision> => {
    const id = w.withdrawalId;
    if (row.signed === null) {
      if (await isPaid(id)) return paidOnChain(id);
      return { outcome: 'FAILED', txHash: null, blockNumber: null, reason: UNSIGNED_WITHDRAWAL_REASON };
    }
    const data = callData(w, row.signed);
    const hooks: SendHooks = { onSigned: (tx) => recordWithdrawalTx(db, id, tx, now()) };
    if (row.txVersions.length > 0) {
      const latest = row.txVersions[row.txVersions.length - 1];
      const request: TxRequest = { to: marginVault, data, gas: parseTransaction(latest.raw).gas ?? 200_000n };
      try {
        return await fromReceipt(id, await sender.resume(row.txVersions, request, signal, hooks));
      } catch (err) {
        if (!(err instanceof TxDroppedError)) throw err;
        // None of the signed versions can land any more: decide again from the vault.
        log?.warn({ withdrawalId: id, txHash: latest.hash }, 'perp withdrawals: the payment transaction was dropped; the vault is asked again');
        if (await isPaid(id)) return paidOnChain(id);
        await clearWithdrawalTxs(db, id, `payment ${latest.hash} was dropped; sent again`, now());
      }
    }
    if (await isPaid(id)) return paidOnChain(id);
    let gas: bigint;
    try {
      gas = await publicClient.estimateGas({ account: sender.address, to: marginVault, data });
    } catch (err) {
      const e = toChainError(err);
      if (e instanceof ChainRevertError && e.errorName === 'WithdrawalAlreadyPaid') return paidOnChain(id);
      if (e instanceof ChainRevertError && e.errorName !== undefined && VAULT_REFUSALS.has(e.errorName)) {
        return { outcome: 'FAILED', txHash: null, blockNumber: null, reason: `the vault cannot pay it: ${e.errorName}` };
      }
      // Past the cap's level: it waits (retried with the backoff) until enough has refilled.
      if (e instanceof ChainRevertError && e.errorName === 'WithdrawalCapExceeded') {
        throw new Error("perp withdrawals: the vault's withdrawal cap is reached; the payment waits until enough of it has refilled");
      }
      // The guardian's pause: the payment waits (retried with the backoff) until it is lifted.
      if (e instanceof ChainRevertError && e.errorName === 'VenuePaused') {
        throw new Error("perp withdrawals: the vault's payments are paused by its guardian; the payment waits for the pause to be lifted");
      }
      // Frozen for good after the operator's silence: accounts take their leaves through the escape
      // hatch, and the reserve stays where it is (returning it would count it twice).
      if (e instanceof ChainRevertError && e.errorName === 'VaultFrozen') {
        throw new Error('perp withdrawals: the vault is frozen (escape hatch open); it pays nothing more through the operator');
      }
      throw e;
    }
    return fromReceipt(id, await sender.send({ to: marginVault, data, gas: (gas * 13n) / 10n }, signal, hooks));
  };

  /** Step 5: the engine settles the decided outcome (once), then the row is final. */
  const settle = async (id: string, outcome: WithdrawalOutcome): Promise<void> => {
    const r = await opts.gateway.submit({ kind: 'settleWithdrawal', id: `${SETTLE_COMMAND_PREFIX}${id}`, ts: now(), withdrawalId: id, outcome });
    let status = outcome;
    if (!r.ok) {
      const w = opts.engine().withdrawal(id);
      if (w === undefined || w.status === 'PENDING') throw new Error(`perp withdrawals: settlement of ${id} refused: ${r.code} ${r.message}`);
      if (w.status !== outcome) log?.error({ withdrawalId: id, decided: outcome, engine: w.status }, 'perp withdrawals: the engine settled the withdrawal otherwise');
      status = w.status;
    }
    await finishWithdrawal(db, id, status, now());
    log?.info({ withdrawalId: id, status: status === 'PAID' ? 'COMPLETED' : 'FAILED' }, 'perp withdrawals: settled');
  };

  const pay = async (w: Pending, known: WithdrawalRecord | undefined, signal: AbortSignal): Promise<void> => {
    const id = w.withdrawalId;
    let row = known;
    if (row === undefined || row.status === 'REQUESTED') {
      row = await recordWithdrawalReserved(db, { withdrawalId: id, account: w.account, clientWithdrawalId: null, amount: w.amount, createdAt: w.requestedTs }, now());
    }
    let outcome = row.outcome;
    if (outcome === null) {
      const d = await decide(w, row, signal);
      await setWithdrawalOutcome(db, id, d, now());
      outcome = d.outcome;
    }
    await settle(id, outcome);
  };

  const launch = (w: Pending, row: WithdrawalRecord | undefined) => {
    const id = w.withdrawalId;
    const signal = controller.signal;
    const job = pay(w, row, signal)
      .then(() => void backoff.delete(id))
      .catch((err: unknown) => {
        if (err instanceof SendAbortedError || signal.aborted) return;
        const tries = (backoff.get(id)?.tries ?? 0) + 1;
        backoff.set(id, { tries, at: now() + Math.min(retryMs * 2 ** (tries - 1), 30_000) });
        // The project's short chain message, never viem's: its text can quote the signed transaction.
        log?.warn({ withdrawalId: id, tries, err: logSafe(err) }, 'perp withdrawals: payment not finished; retrying later');
      })
      .finally(() => active.delete(id));
    active.set(id, job);
  };

  const runOnce = async (): Promise<number> => {
    const engine = opts.engine();
    const t = now();
    // Forced withdrawals (filed on chain) are the forced-withdrawal task's: no signed request to relay.
    const due = engine.pendingWithdrawals().filter((w) => !w.forced && !active.has(w.withdrawalId) && (backoff.get(w.withdrawalId)?.at ?? 0) <= t);
    const rows = due.length > 0 ? await getWithdrawals(db, due.map((w) => w.withdrawalId)) : new Map<string, WithdrawalRecord>();
    // Payments already signed first: their nonces come before any new one's.
    const signed = (w: Pending) => {
      const r = rows.get(w.withdrawalId);
      return r !== undefined && r.outcome === null && r.txVersions.length > 0;
    };
    const ordered = [...due.filter(signed), ...due.filter((w) => !signed(w))];
    let taken = 0;
    for (const w of ordered) {
      if (active.size >= maxInFlight) break;
      if (controller.signal.aborted) break;
      launch(w, rows.get(w.withdrawalId));
      taken++;
    }
    // Rows whose withdrawal the engine settled while the row was not told (a crash in between).
    for (const row of await listOpenWithdrawals(db, 500)) {
      if (active.has(row.withdrawalId)) continue;
      const w = engine.withdrawal(row.withdrawalId);
      if (w !== undefined && w.status !== 'PENDING') await finishWithdrawal(db, row.withdrawalId, w.status, now());
    }
    return taken;
  };

  const loop = () => {
    if (!running) return;
    round = runOnce()
      .catch((err: unknown) => log?.warn({ err: logSafe(err) }, 'perp withdrawals: round failed; retrying'))
      .finally(() => {
        round = undefined;
        if (running) timer = setTimeout(loop, pollMs);
      });
  };

  const drain = async (): Promise<void> => {
    while (active.size > 0) await Promise.allSettled([...active.values()]);
  };

  return {
    start() {
      if (running) return;
      if (controller.signal.aborted) controller = newController();
      running = true;
      loop();
    },
    async stop() {
      running = false;
      if (timer) clearTimeout(timer);
      controller.abort();
      await round;
      await drain();
    },
    runOnce,
    drain,
  };
}
