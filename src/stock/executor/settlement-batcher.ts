/**
 * Turns per-order decisions into `StockRouter.settleOrders(fills, closes)` transactions.
 *
 * - Batches of at most `batchSize` orders, fewer when the learned gas per order says a batch would
 *   exceed the gas budget (`maxBatchGas`, within 90% of the block gas limit).
 * - The first batches are simulated (eth_estimateGas) to learn the gas per order; after that a
 *   batch goes out unsimulated with a limit from the learned figure (`simulateFirst` simulates every
 *   one). A simulation costs the node as much as the transaction itself.
 * - Up to `maxInFlight` batches are sent and awaited at once; the operator's nonces are managed
 *   locally by the {@link TxSender} (one nonce sequence per operator key in the process).
 * - An order is in flight from `submit` until its batch resolves; it is never put in a second batch
 *   meanwhile, and the block that settled it is remembered so that a read of the chain older than
 *   that block cannot settle it again.
 * - A batch that reverts (in simulation, or on chain) is bisected by simulation: the order a decoded
 *   error names is taken out directly, otherwise reverting halves are searched down to single
 *   orders. Those are dropped (logged) until their on-chain state or the decision changes, or until
 *   `poisonRetryMs` passes; the rest settle as one batch.
 * - A fill the StockRouter's oracle check refused (`OraclePriceDeviation`, `OraclePriceStale`,
 *   `OracleAnswerInvalid`: the feed moved or aged between the executor's read and the block) is
 *   dropped the same way but only until the decision's price changes or `oracleRetryMs` passes: the
 *   next tick decides it again from a fresh quote and a fresh read of the feed. A reverted
 *   transaction changed nothing, so the order is settled at most once.
 * - RPC trouble (`ChainUnavailableError`) is retryable: the batch's orders are released unsent and
 *   the outcome carries the error so the caller backs off.
 */
import { encodeFunctionData, type Address, type Hex } from 'viem';
import { stockRouterAbi } from '../../chain/abi/generated/index.ts';
import { toChainError, type ChainPublicClient } from '../../chain/chain-client.ts';
import { AppError, ChainRevertError } from '../../errors/app-error.ts';
import type { CloseStatus } from './fill-policy.ts';
import type { ExecutorLogger } from './executor-logger.ts';
import type { TxSender } from '../../chain/tx-sender.ts';
import { venueNow } from '../../lib/venue-clock.ts';

export interface OrderSettlement {
  orderId: bigint;
  fill?: { quantity: bigint; price: bigint };
  close?: CloseStatus;
  /**
   * Fingerprint of what the decision was made from (order state, fee config, decision kind).
   * A dropped order is retried as soon as this changes.
   */
  stateKey: string;
}

export interface BatchOutcome {
  /** Orders whose settlement was mined. */
  settled: number;
  /** Of those, orders closed with a final status (Filled, Canceled, Expired, Rejected). */
  closed: number;
  /** Of those, orders that got a fill. */
  filled: number;
  /** settleOrders transactions mined successfully. */
  transactions: number;
  /** Orders dropped because their settlement reverts on its own. */
  dropped: number;
  /** Of those, fills the on-chain oracle refused: decided again from a fresh quote and feed. */
  repriced: number;
  /** Orders released unsent because of a retryable error. */
  deferred: number;
  /** The first retryable error met (the caller backs off), if any. */
  retryableError?: AppError;
  /** Ids of the orders settled, in no particular order. */
  settledIds: bigint[];
  /** Ids of the orders closed (final now), in no particular order. */
  closedIds: bigint[];
}

export interface SettlementBatcherOptions {
  publicClient: ChainPublicClient;
  sender: TxSender;
  stockRouter: Address;
  logger?: ExecutorLogger;
  /** Most orders per transaction. Default 200. */
  batchSize?: number;
  /** Gas budget of one transaction (capped at 90% of the block gas limit). Default 25,000,000. */
  maxBatchGas?: bigint;
  /**
   * Simulate every batch (eth_estimateGas) before sending it. Default false: batches go out with a
   * gas limit from the learned gas per order, and only the first batch and failed ones are
   * simulated — a simulation costs the node as much as the transaction itself.
   */
  simulateFirst?: boolean;
  /** Batches being estimated, sent or awaited at once. Default 4. */
  maxInFlight?: number;
  /** How long a dropped order stays dropped when nothing changes. Default 60 s. */
  poisonRetryMs?: number;
  /** How long a fill the oracle check refused stays dropped at an unchanged price. Default 5 s. */
  oracleRetryMs?: number;
  /** Gas limit = estimate × (1 + this / 100). Default 20. */
  gasMarginPercent?: number;
  now?: () => number;
  /** Stops waits on shutdown. */
  signal?: AbortSignal;
}

export interface SettlementBatcher {
  submit(items: readonly OrderSettlement[]): Promise<BatchOutcome>;
  /** The order is in a batch that has not resolved yet. */
  isInFlight(orderId: bigint): boolean;
  /**
   * The order was dropped for exactly this decision and its retry time has not come. `price`: the
   * decision's fill price (a fill the oracle refused is retried as soon as it differs).
   */
  isDropped(orderId: bigint, stateKey: string, price?: bigint): boolean;
  /** Block of the order's last mined settlement by this batcher, if remembered. */
  settledAtBlock(orderId: bigint): bigint | undefined;
  /** Forget settled blocks the chain reads have caught up with (reads at `block` or later). */
  forgetSettledBefore(orderId: bigint, block: bigint): void;
  /** Forget every remembered settlement block (the chain's block numbers went backwards). */
  forgetAllSettled(): void;
  inFlightCount(): number;
  /** Current learned gas per order. */
  gasPerOrder(): bigint;
}

/** The StockRouter's oracle check refused the fill's price (the feed moved or aged meanwhile). */
export const ORACLE_ERRORS: ReadonlySet<string> = new Set(['OraclePriceDeviation', 'OraclePriceStale', 'OracleAnswerInvalid']);
/** Errors whose first argument is the order at fault. */
// Each names the order (its first argument). A fill the treasury loss budget refuses is dropped like
// any order that reverts alone: the budget's window has to pass (docs/security.md, "Executor key").
const ORDER_ERRORS = new Set(['OrderNotOpen', 'PriceOutsideLimit', 'FillExceedsOrder', 'LockInsufficient', 'PriceFeedRequired', 'TreasuryLossBudgetExceeded', ...ORACLE_ERRORS]);

const DEFAULT_GAS_PER_ORDER = 150_000n;
const BASE_GAS = 60_000n;

type Settled = { items: OrderSettlement[]; block: bigint };
type Out = { mined: Settled[]; dropped: number; repriced: number };

export function createSettlementBatcher(opts: SettlementBatcherOptions): SettlementBatcher {
  const batchSize = opts.batchSize ?? 200;
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new Error('batchSize: must be a positive integer');
  const maxBatchGas = opts.maxBatchGas ?? 25_000_000n;
  const simulateFirst = opts.simulateFirst ?? false;
  const maxInFlight = opts.maxInFlight ?? 4;
  const poisonRetryMs = opts.poisonRetryMs ?? 60_000;
  const oracleRetryMs = opts.oracleRetryMs ?? 5_000;
  const margin = BigInt(100 + (opts.gasMarginPercent ?? 20));
  const now = opts.now ?? venueNow;
  const log = opts.logger;

  const inFlight = new Set<bigint>();
  /** `price`: set for a fill the oracle refused, which is retried once its price changes. */
  const dropped = new Map<bigint, { stateKey: string; until: number; price?: bigint }>();
  const settledBlocks = new Map<bigint, bigint>();
  let gasPerOrder = DEFAULT_GAS_PER_ORDER;

  const effectiveBatchSize = (): number => {
    const byGas = Number(((gasBudget() * 100n) / margin - BASE_GAS) / gasPerOrder);
    return Math.max(1, Math.min(batchSize, byGas));
  };

  const encode = (items: readonly OrderSettlement[]): Hex => {
    const fills = [];
    const closes = [];
    for (const it of items) {
      if (it.fill) fills.push({ orderId: it.orderId, quantity: it.fill.quantity, price: it.fill.price });
      if (it.close !== undefined) closes.push({ orderId: it.orderId, status: it.close });
    }
    return encodeFunctionData({ abi: stockRouterAbi, functionName: 'settleOrders', args: [fills, closes] });
  };

  const estimate = async (data: Hex): Promise<bigint> => {
    try {
      return await opts.publicClient.estimateGas({ account: opts.sender.address, to: opts.stockRouter, data });
    } catch (err) {
      throw toChainError(err);
    }
  };

  let learned = false;
  let blockGasLimit: bigint | undefined;

  /** Most gas one batch may ask for: the configured budget, within 90% of the block gas limit. */
  const gasBudget = (): bigint => {
    const cap = blockGasLimit !== undefined ? (blockGasLimit * 9n) / 10n : maxBatchGas;
    return maxBatchGas < cap ? maxBatchGas : cap;
  };

  const predictedGas = (count: number): bigint => ((BASE_GAS + BigInt(count) * gasPerOrder) * margin) / 100n;

  const learnPerOrder = (per: bigint): void => {
    // Lean towards the larger figure: an over-estimate costs a slightly smaller batch, an
    // under-estimate an out-of-gas transaction and a re-check.
    gasPerOrder = per > gasPerOrder || !learned ? per : (gasPerOrder * 3n + per) / 4n;
    learned = true;
  };

  const learnFromEstimate = (gas: bigint, count: number): void => {
    if (count < 8) return; // small batches are dominated by the fixed cost
    learnPerOrder((gas - BASE_GAS > 0n ? gas - BASE_GAS : gas) / BigInt(count));
  };

  const learnFromReceipt = (gasUsed: bigint, count: number): void => {
    if (count < 8) return;
    // gasUsed is after storage refunds (at most a fifth of the gas used), while the limit must
    // cover the gas before them.
    learnPerOrder((((gasUsed * 5n) / 4n - BASE_GAS > 0n ? (gasUsed * 5n) / 4n - BASE_GAS : gasUsed)) / BigInt(count));
  };

  /** Drops the order; answers whether it was for the oracle check (re-priced on the next tick). */
  const drop = (item: OrderSettlement, err: AppError): boolean => {
    if (err instanceof ChainRevertError && err.errorName !== undefined && ORACLE_ERRORS.has(err.errorName) && item.fill) {
      dropped.set(item.orderId, { stateKey: item.stateKey, until: now() + oracleRetryMs, price: item.fill.price });
      log?.warn(
        {
          orderId: item.orderId.toString(),
          fill: { quantity: item.fill.quantity.toString(), price: item.fill.price.toString() },
          error: err.errorName,
          errorArgs: err.detail?.errorArgs,
        },
        'executor: the on-chain oracle refused this fill; deciding it again from a fresh quote and feed',
      );
      return true;
    }
    dropped.set(item.orderId, { stateKey: item.stateKey, until: now() + poisonRetryMs });
    log?.warn(
      {
        orderId: item.orderId.toString(),
        fill: item.fill ? { quantity: item.fill.quantity.toString(), price: item.fill.price.toString() } : undefined,
        close: item.close,
        error: err instanceof ChainRevertError ? err.errorName : err.code,
        errorArgs: err.detail?.errorArgs,
      },
      'executor: settlement of this order reverts; dropped until its state changes',
    );
    return false;
  };

  /**
   * Settles `items` (one batch), bisecting on a revert. Resolves with the mined sub-batches;
   * throws only retryable errors (after releasing nothing: the caller releases the whole batch).
   */
  /**
   * Settles `items` (one batch), bisecting on a revert. `simulate` runs the batch through
   * eth_estimateGas before sending it (always with `simulateFirst`, while nothing has been learned,
   * and whenever the batch is being re-checked after a failure); otherwise the gas limit comes
   * from the learned gas per order and the batch goes straight out. Throws only what the caller
   * treats as retryable.
   */
  const settle = async (items: OrderSettlement[], out: Out, simulate = simulateFirst || !learned, attempt = 0): Promise<void> => {
    if (items.length === 0) return;
    const data = encode(items);
    let gasLimit: bigint;
    if (simulate) {
      let gas: bigint;
      try {
        gas = await estimate(data);
      } catch (err) {
        if (err instanceof ChainRevertError) return bisect(items, err, out);
        throw err;
      }
      learnFromEstimate(gas, items.length);
      if (gas > gasBudget() && items.length > 1) return split(items, out, true);
      // A batch that ran out of gas on its own estimate gets twice the margin on the next try.
      gasLimit = (gas * (margin + BigInt(attempt) * (margin - 100n))) / 100n;
    } else {
      gasLimit = predictedGas(items.length);
      if (gasLimit > gasBudget() && items.length > 1) return split(items, out, false);
    }
    const receipt = await opts.sender.send({ to: opts.stockRouter, data, gas: gasLimit }, opts.signal);
    if (receipt.status === 'success') {
      learnFromReceipt(receipt.gasUsed, items.length);
      out.mined.push({ items, block: receipt.blockNumber });
      return;
    }
    const outOfGas = receipt.gasUsed * 100n >= gasLimit * 98n;
    log?.warn(
      { txHash: receipt.transactionHash, orders: items.length, outOfGas },
      'executor: settlement batch reverted on chain; re-checking it',
    );
    if (simulate && items.length === 1 && (!outOfGas || attempt >= 2)) {
      // Passed its own simulation and still reverted: the state moved under it (an oracle answer
      // written in between, say). Simulated again for the reason; the next tick decides again.
      const why = outOfGas ? undefined : await simulateRevert(items).catch(() => undefined);
      if (drop(items[0], why ?? new AppError('INTERNAL', 'executor: settlement reverted on chain', { detail: { txHash: receipt.transactionHash, outOfGas } }))) out.repriced++;
      out.dropped++;
      return;
    }
    // Find out why with a simulation: a revert is bisected, a pass (out of gas) is resent on its estimate.
    if (simulate && items.length > 1) return split(items, out, true);
    return settle(items, out, true, outOfGas ? attempt + 1 : attempt);
  };

  const split = async (items: OrderSettlement[], out: Out, simulate: boolean): Promise<void> => {
    const half = Math.ceil(items.length / 2);
    await settle(items.slice(0, half), out, simulate);
    await settle(items.slice(half), out, simulate);
  };

  /** Simulates a batch: undefined when it passes, the revert when it does not. */
  const simulateRevert = async (items: OrderSettlement[]): Promise<ChainRevertError | undefined> => {
    try {
      await estimate(encode(items));
      return undefined;
    } catch (err) {
      if (err instanceof ChainRevertError) return err;
      throw err;
    }
  };

  /**
   * The orders of a reverting batch that revert on their own account, found by simulation only
   * (nothing is sent): the order a decoded error names, else each half that reverts is searched
   * again, down to single orders. Halves are simulated as prefixes-or-not of the batch, so an empty
   * answer means the revert comes from the orders together (e.g. a treasury drained by the sum).
   */
  const findBad = async (items: OrderSettlement[], err: ChainRevertError, found: Map<OrderSettlement, ChainRevertError>): Promise<void> => {
    if (items.length === 1) {
      found.set(items[0], err);
      return;
    }
    const named = err.errorName && ORDER_ERRORS.has(err.errorName) ? (err.detail?.errorArgs as string[] | undefined)?.[0] : undefined;
    const culprit = named === undefined ? undefined : items.find((i) => i.orderId.toString() === named);
    if (culprit) {
      found.set(culprit, err);
      return;
    }
    const half = Math.ceil(items.length / 2);
    for (const part of [items.slice(0, half), items.slice(half)]) {
      const e = await simulateRevert(part);
      if (e) await findBad(part, e, found);
    }
  };

  /** A batch reverts: drop the orders that revert alone, then settle the rest as one batch. */
  const bisect = async (items: OrderSettlement[], err: ChainRevertError, out: Out): Promise<void> => {
    const found = new Map<OrderSettlement, ChainRevertError>();
    await findBad(items, err, found);
    if (found.size === 0) {
      // Only the combination reverts: settle the halves one after the other.
      await split(items, out, true);
      return;
    }
    for (const [item, e] of found) if (drop(item, e)) out.repriced++;
    out.dropped += found.size;
    // Simulated again before it goes out: the rest may still hold another bad order.
    await settle(
      items.filter((i) => !found.has(i)),
      out,
      true,
    );
  };

  const submit = async (all: readonly OrderSettlement[]): Promise<BatchOutcome> => {
    const outcome: BatchOutcome = { settled: 0, closed: 0, filled: 0, transactions: 0, dropped: 0, repriced: 0, deferred: 0, settledIds: [], closedIds: [] };
    const items: OrderSettlement[] = [];
    const seen = new Set<bigint>();
    for (const it of all) {
      if (!it.fill && it.close === undefined) continue;
      if (inFlight.has(it.orderId) || seen.has(it.orderId)) continue;
      seen.add(it.orderId);
      inFlight.add(it.orderId);
      items.push(it);
    }
    if (blockGasLimit === undefined && items.length > 0) {
      try {
        blockGasLimit = (await opts.publicClient.getBlock()).gasLimit;
      } catch {
        // Unknown for now: the configured budget stands, and the next submit asks again.
      }
    }
    // Batches are cut when a worker takes one, so later batches use the gas learned from earlier ones.
    let cursor = 0;
    const take = (): OrderSettlement[] | undefined => {
      if (cursor >= items.length) return undefined;
      const batch = items.slice(cursor, cursor + effectiveBatchSize());
      cursor += batch.length;
      return batch;
    };
    const firstSize = effectiveBatchSize();
    const workers = Math.min(maxInFlight, Math.ceil(items.length / firstSize));

    const worker = async (): Promise<void> => {
      for (let batch = take(); batch; batch = take()) {
        const out: Out = { mined: [], dropped: 0, repriced: 0 };
        try {
          if (outcome.retryableError) {
            // The RPC is failing: do not hammer it; the next tick takes these again.
            outcome.deferred += batch.length;
            continue;
          }
          await settle(batch, out);
        } catch (err) {
          const mapped = toChainError(err);
          if (mapped.retryable) {
            outcome.retryableError ??= mapped;
          } else {
            log?.error({ err: mapped, orders: batch.length }, 'executor: settlement batch failed');
          }
          const minedIds = new Set(out.mined.flatMap((m) => m.items.map((i) => i.orderId)));
          outcome.deferred += batch.length - minedIds.size - out.dropped;
        } finally {
          for (const m of out.mined) {
            outcome.transactions++;
            for (const it of m.items) {
              // A closed order is final and leaves the tracker; only a still-open one needs the guard.
              if (it.close !== undefined) settledBlocks.delete(it.orderId);
              else settledBlocks.set(it.orderId, m.block);
              dropped.delete(it.orderId);
              outcome.settled++;
              outcome.settledIds.push(it.orderId);
              if (it.close !== undefined) {
                outcome.closed++;
                outcome.closedIds.push(it.orderId);
              }
              if (it.fill) outcome.filled++;
            }
          }
          outcome.dropped += out.dropped;
          outcome.repriced += out.repriced;
          for (const it of batch) inFlight.delete(it.orderId);
        }
      }
    };
    await Promise.all(Array.from({ length: workers }, worker));
    return outcome;
  };

  return {
    submit,
    isInFlight: (id) => inFlight.has(id),
    isDropped(id, stateKey, price) {
      const d = dropped.get(id);
      if (!d) return false;
      if (d.stateKey !== stateKey || now() >= d.until || (d.price !== undefined && d.price !== price)) {
        dropped.delete(id);
        return false;
      }
      return true;
    },
    settledAtBlock: (id) => settledBlocks.get(id),
    forgetSettledBefore(id, block) {
      const b = settledBlocks.get(id);
      if (b !== undefined && block >= b) settledBlocks.delete(id);
    },
    forgetAllSettled: () => settledBlocks.clear(),
    inFlightCount: () => inFlight.size,
    gasPerOrder: () => gasPerOrder,
  };
}

