/**
 * Applies the scheduled corporate actions at their ex-date (docs/corporate-actions.md): the cash
 * dividends, below, and the splits, which split-scheduler.ts takes up and hands to the split applier
 * (split-applier.ts: one owner transaction on the Stock token). Runs in the executor role, sending
 * with the executor's key through the process's sender for that key (one nonce sequence with the
 * order settlement).
 *
 * Each due dividend goes through three steps, each recorded before the next, so that a restart
 * resumes where the last one stopped and nothing is paid twice:
 *
 * 1. **Record.** The record block is the last block before the action took effect: the start of
 *    its ex-date (00:00 New York), or the moment it was added when that is later (an action added
 *    on its ex-date takes effect at once). The holders of record are every address the stock
 *    indexer has seen hold the stock (`stock_positions`: every Transfer, exchange deposit or
 *    withdrawal and order of the stock touches its row), with their wallet, free and locked
 *    exchange balances read from the chain at the record block. The sum must equal the token's
 *    total supply at that block (the Stock contract's own balance backs the exchange balances and
 *    is not a holder): when it does not, the indexer has not reached a holder yet and the step
 *    waits for the next run. The amounts (dividend-amounts.ts), the Merkle tree and every holder's
 *    proof are then stored with the payouts, in one transaction.
 * 2. **Fund.** The distributor is funded with exactly the net total and the root published, in one
 *    call (`createDistribution`, keyed by the action so a retried call cannot fund twice). A payer
 *    without the cash fails the action, naming both amounts.
 * 3. **Push.** The leaves are paid in batches (`pushPayouts`); a leaf its holder claimed itself is
 *    skipped by the contract and recorded with the holder's own transaction. Once every leaf is
 *    paid the action is `applied`.
 *
 * The clock is injectable (`now`): tests and demos move to the ex-date without waiting for it.
 */
import { listHoldersOfStock } from '../store/stock-position-store.ts';
import { encodeFunctionData, keccak256, parseEventLogs, stringToHex, type Address, type Hex, type TransactionReceipt } from 'viem';
import { cashTokenAbi, dividendDistributorAbi, stockAbi } from '../../chain/abi/generated/index.ts';
import { toChainError, type ChainPublicClient } from '../../chain/chain-client.ts';
import type { Deployment } from '../../chain/deploy-contracts.ts';
import type { TxSender } from '../../chain/tx-sender.ts';
import { AppError, ChainRevertError, isAppError } from '../../errors/app-error.ts';
import { periodic } from '../../lib/async.ts';
import { formatDecimal } from '../../lib/decimal.ts';
import type { Logger } from '../../lib/logger.ts';
import { newYorkDate, newYorkDayStart, type CorporateAction } from '../../marketdata/corporate-actions.ts';
import type { Db } from '../../storage/database.ts';
import { isUniqueViolation } from '../../storage/storage-errors.ts';
import {
  actionIdOf,
  getCorporateAction,
  insertCorporateAction,
  listDueActions,
  listPendingPayouts,
  markActionApplied,
  markActionFailed,
  markPayoutsPaid,
  recordDistribution,
  recordDividendComputation,
  type CorporateActionRecord,
  type DividendPayoutRecord,
} from './corporate-action-store.ts';
import { computeDividend, parseAmountPerShare, type Holding } from './dividend-amounts.ts';
import type { SplitApplier } from './split-applier.ts';
import { createSplitScheduler } from './split-scheduler.ts';
import { BASE_MULTIPLIER } from '../../marketdata/price-splits.ts';
import { buildMerkleTree } from './merkle-tree.ts';
import { venueNow } from '../../lib/venue-clock.ts';

export type DividendLogger = Pick<Logger, 'info' | 'warn' | 'error'>;

export interface DividendSchedulerOptions {
  db: Db;
  publicClient: ChainPublicClient;
  /** The executor's sender (its nonce sequence is shared with the order settlement). */
  sender: TxSender;
  deployment: Pick<Deployment, 'contracts' | 'deployedAt' | 'blockNumber' | 'firstBlockNumber'>;
  /** Withholding in basis points (`DIVIDEND_WITHHOLDING_BPS`), recorded on each action as applied. */
  withholdingBps: number;
  /** The configuration file's actions: its dividends due on or after the venue's deployment are taken up. */
  fileActions?: readonly CorporateAction[];
  now?: () => number;
  /** Default 5 000 ms. */
  tickMs?: number;
  /** The record block stays this many blocks behind the head (INDEXER_CONFIRMATIONS). Default 0. */
  confirmations?: number;
  /** Leaves per `pushPayouts`. Default 100. */
  pushBatchSize?: number;
  /** `pushPayouts` calls per action per run. Default unlimited (until every leaf is paid). */
  maxPushBatchesPerRun?: number;
  /** Decimals of the cash token. Default 6. */
  cashDecimals?: number;
  logger?: DividendLogger;
  /** Applies the due splits (none given: a due split fails naming it). */
  splits?: SplitApplier;
  /**
   * On a chain after the first: the run-time actions of the first chain's store (the deployment's
   * one list of them, docs/corporate-actions.md "Several chains"). Each run copies the ones this
   * chain lists and has not stored yet into its own store, with their `createdAt`, and applies them
   * there with a state of its own. Undefined on the first chain, whose store is that list.
   */
  runTimeSource?: () => Promise<readonly CorporateActionRecord[]>;
}

export interface DividendRunResult {
  /** Actions that became `applied` in this run. */
  applied: string[];
  failed: string[];
  /** Actions due that wait for a later run (indexer behind, chain away, push batches left). */
  waiting: string[];
}

export interface DividendRunOptions {
  /**
   * Called before the run acts on the actions due, when there are any: a sandbox's advance moves the
   * chain to its step there (docs/sandbox.md "Clock"), and leaves it where it was otherwise.
   */
  beforeChain?: () => Promise<void>;
}

export interface DividendScheduler {
  start(): void;
  stop(): Promise<void>;
  runOnce(o?: DividendRunOptions): Promise<DividendRunResult>;
}

/** The holders of record could not all be found yet (the indexer is behind the record block). */
export class HoldersIncompleteError extends AppError {
  constructor(message: string, detail: Record<string, unknown>) {
    super('INTERNAL', message, { retryable: true, detail });
  }
}

const READ_CONCURRENCY = 8;
const CALL_GAS = 400_000n;

/** The distributor's key for an action: one distribution per action, whoever retries it. */
export function distributionRefOf(actionId: string): Hex {
  return keccak256(stringToHex(`tokex:dividend:${actionId}`));
}

async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

export function createDividendScheduler(opts: DividendSchedulerOptions): DividendScheduler {
  const { db, publicClient, sender } = opts;
  const now = opts.now ?? venueNow;
  const log = opts.logger;
  const cashDecimals = opts.cashDecimals ?? 6;
  const pushBatchSize = opts.pushBatchSize ?? 100;
  const maxPushBatches = opts.maxPushBatchesPerRun ?? Number.POSITIVE_INFINITY;
  const contracts = opts.deployment.contracts;
  const venueStartDate = newYorkDate(opts.deployment.deployedAt);
  const firstBlock = BigInt(opts.deployment.firstBlockNumber ?? opts.deployment.blockNumber);
  let fileTakenUp = false;
  const abort = new AbortController();

  /** The file's dividends due on or after the deployment, stored once so they get a state. */
  const takeUpFileActions = async () => {
    for (const a of opts.fileActions ?? []) {
      if (a.exDate < venueStartDate) continue;
      if (await getCorporateAction(db, actionIdOf(a.symbol, a.exDate))) continue;
      try {
        await insertCorporateAction(db, { ...a, source: 'file', stockAddress: contracts.stocks[a.symbol] }, now());
      } catch (err) {
        if (!(isAppError(err) && err.code === 'VALIDATION') && !isUniqueViolation(err)) throw err;
      }
    }
  };

  let sourceFailing = false;
  /** Run-time actions this chain's store holds (checked once each). */
  const takenUp = new Set<string>();
  /**
   * The first chain's run-time actions this chain has not stored yet, stored as they were added (the
   * same `createdAt`: the same split moment and record time on every chain), `scheduled` here. A
   * symbol without a token on this chain is not listed here: nothing to apply. One dated before this
   * chain's venue started predates its tokens, as for the file's actions. An unreadable source
   * leaves this run to the actions stored already.
   */
  const takeUpRunTimeActions = async () => {
    if (!opts.runTimeSource) return;
    let source: readonly CorporateActionRecord[];
    try {
      source = await opts.runTimeSource();
      if (sourceFailing) log?.info('corporate actions: the first chain\'s store is readable again');
      sourceFailing = false;
    } catch (err) {
      if (!sourceFailing) log?.warn({ err: (err as Error).message }, 'corporate actions: the first chain\'s store could not be read; new run-time actions wait');
      sourceFailing = true;
      return;
    }
    for (const a of source) {
      if (takenUp.has(a.actionId)) continue;
      const stock = contracts.stocks[a.symbol];
      if (!stock || a.exDate < venueStartDate) continue;
      if (await getCorporateAction(db, a.actionId)) {
        // Stored here already (an earlier run, or before a restart): never read again.
        takenUp.add(a.actionId);
        continue;
      }
      const action: CorporateAction = { symbol: a.symbol, type: a.type, exDate: a.exDate };
      if (a.recordDate !== null) action.recordDate = a.recordDate;
      if (a.ratio !== null) action.ratio = a.ratio;
      if (a.amount !== null) action.amount = a.amount;
      if (a.currency !== null) action.currency = a.currency;
      try {
        await insertCorporateAction(db, { ...action, source: 'cli', stockAddress: stock }, now(), a.createdAt);
        takenUp.add(a.actionId);
        log?.info({ actionId: a.actionId }, 'corporate actions: a run-time action of the first chain taken up on this chain');
      } catch (err) {
        if (!(isAppError(err) && err.code === 'VALIDATION') && !isUniqueViolation(err)) throw err;
      }
    }
  };

  const send = async (to: Address, data: Hex, gas: bigint): Promise<TransactionReceipt> => {
    const receipt = await sender.send({ to, data, gas }, abort.signal);
    if (receipt.status !== 'success') throw new ChainRevertError(undefined, { detail: { txHash: receipt.transactionHash } });
    return receipt;
  };

  const blockTime = async (blockNumber: bigint): Promise<number> => Number((await publicClient.getBlock({ blockNumber })).timestamp) * 1000;

  /** The last block whose timestamp is before `at` (ms), at most `head`; `floor - 1` when none from `floor` on is. */
  const lastBlockBefore = async (at: number, head: bigint, floor: bigint): Promise<bigint> => {
    if ((await blockTime(head)) < at) return head;
    if (floor > head || (await blockTime(floor)) >= at) return floor - 1n;
    let lo = floor;
    let hi = head;
    while (hi - lo > 1n) {
      const mid = (lo + hi) / 2n;
      if ((await blockTime(mid)) < at) lo = mid;
      else hi = mid;
    }
    return lo;
  };

  /** Every address the indexer has seen hold `stock` (wallet or exchange), lower case. */
  const knownHolders = async (stock: Address): Promise<string[]> => {
    const users = await listHoldersOfStock(db, stock);
    return [...new Set(users.map((u) => u.toLowerCase()))].filter((u) => u !== stock.toLowerCase());
  };

  const holdingsAt = async (stock: Address, blockNumber: bigint): Promise<Holding[]> => {
    if (blockNumber < firstBlock) return [];
    const read = (functionName: 'balanceOf' | 'stockBalance' | 'lockedStockBalance', who: Address) =>
      publicClient.readContract({ address: stock, abi: stockAbi, functionName, args: [who], blockNumber }) as Promise<bigint>;
    const holders = await knownHolders(stock);
    const holdings = await mapLimit(holders, READ_CONCURRENCY, async (h) => {
      const who = h as Address;
      const [wallet, free, locked] = await Promise.all([read('balanceOf', who), read('stockBalance', who), read('lockedStockBalance', who)]);
      return { account: who, shares: wallet + free + locked };
    });
    const [supply, multiplier] = await Promise.all([
      publicClient.readContract({ address: stock, abi: stockAbi, functionName: 'totalSupply', blockNumber }) as Promise<bigint>,
      publicClient.readContract({ address: stock, abi: stockAbi, functionName: 'multiplier', blockNumber }) as Promise<bigint>,
    ]);
    const held = holdings.reduce((s, h) => s + h.shares, 0n);
    // Shown balances are base units × multiplier rounded down, each of a holder's three on its own:
    // after a split that is not a whole number (3:2, 1:10) they fall short of the supply by less than
    // one unit each. A whole-number multiplier leaves no rounding: the sum is exact.
    const slack = multiplier % BASE_MULTIPLIER === 0n ? 0n : 3n * BigInt(holdings.length);
    if (held > supply || supply - held > slack) {
      throw new HoldersIncompleteError('dividend: the indexed holders do not hold the whole supply at the record block yet (the indexer is behind)', {
        stock,
        recordBlock: blockNumber.toString(),
        held: held.toString(),
        supply: supply.toString(),
      });
    }
    return holdings.filter((h) => h.shares > 0n);
  };

  const record = async (a: CorporateActionRecord, stock: Address, distributor: Address) => {
    const takesEffect = Math.max(newYorkDayStart(a.exDate), a.createdAt);
    const head = (await publicClient.getBlockNumber()) - BigInt(opts.confirmations ?? 0);
    const recordBlock = await lastBlockBefore(takesEffect, head, firstBlock);
    const holdings = await holdingsAt(stock, recordBlock);
    const amounts = computeDividend({ holdings, amountPerShare: parseAmountPerShare(a.amount ?? ''), withholdingBps: opts.withholdingBps, cashDecimals });
    const tree = buildMerkleTree(amounts.payouts);
    await recordDividendComputation(
      db,
      a.actionId,
      {
        stockAddress: stock,
        recordBlock: Number(recordBlock),
        withholdingBps: amounts.withholdingBps,
        sharesOfRecord: amounts.sharesOfRecord,
        grossAmount: amounts.gross,
        withholdingAmount: amounts.withholding,
        netAmount: amounts.net,
        remainderUnits: amounts.remainderUnits,
        merkleRoot: tree.root,
        distributor,
        payouts: amounts.payouts.map((p) => ({ ...p, proof: tree.proofOf(p.account) })),
      },
      now(),
    );
    log?.info(
      { actionId: a.actionId, recordBlock: Number(recordBlock), holders: amounts.payouts.length, net: formatDecimal(amounts.net, cashDecimals), withholdingBps: amounts.withholdingBps },
      'dividend: holders of record taken',
    );
  };

  const fund = async (a: CorporateActionRecord, stock: Address, distributor: Address, cashToken: Address): Promise<boolean> => {
    const ref = distributionRefOf(a.actionId);
    const net = BigInt(a.netAmount ?? '0');
    const existing = (await publicClient.readContract({ address: distributor, abi: dividendDistributorAbi, functionName: 'distributionOf', args: [ref] })) as bigint;
    if (existing !== 0n) {
      // Funded by an earlier run that stopped before recording it.
      const [created] = await publicClient.getContractEvents({
        address: distributor,
        abi: dividendDistributorAbi,
        eventName: 'DistributionCreated',
        args: { ref },
        fromBlock: BigInt(a.recordBlock ?? 0),
      });
      if (!created) throw new AppError('INTERNAL', 'dividend: the distribution exists but its creation event was not found', { retryable: true });
      await recordDistribution(db, a.actionId, existing, created.transactionHash, now());
      return true;
    }
    if (net === 0n) return false;
    const payer = sender.address;
    const balance = (await publicClient.readContract({ address: cashToken, abi: cashTokenAbi, functionName: 'balanceOf', args: [payer] })) as bigint;
    if (balance < net) {
      throw new AppError(
        'VALIDATION',
        `the paying wallet ${payer.toLowerCase()} holds ${formatDecimal(balance, cashDecimals)} of the cash token; the dividend needs ${formatDecimal(net, cashDecimals)}`,
      );
    }
    const allowance = (await publicClient.readContract({ address: cashToken, abi: cashTokenAbi, functionName: 'allowance', args: [payer, distributor] })) as bigint;
    if (allowance < net) {
      await send(cashToken, encodeFunctionData({ abi: cashTokenAbi, functionName: 'approve', args: [distributor, net] }), 100_000n);
    }
    const args = [ref, stock, cashToken, a.merkleRoot as Hex, net, BigInt(a.recordBlock ?? 0)] as const;
    try {
      // A revert is refused here with its reason (NotOperator, ...), before anything is sent.
      await publicClient.simulateContract({ address: distributor, abi: dividendDistributorAbi, functionName: 'createDistribution', args, account: payer });
    } catch (err) {
      throw toChainError(err);
    }
    const receipt = await send(distributor, encodeFunctionData({ abi: dividendDistributorAbi, functionName: 'createDistribution', args }), CALL_GAS);
    const [created] = parseEventLogs({ abi: dividendDistributorAbi, eventName: 'DistributionCreated', logs: receipt.logs });
    await recordDistribution(db, a.actionId, created.args.distributionId, receipt.transactionHash, now());
    log?.info({ actionId: a.actionId, distributionId: created.args.distributionId.toString(), txHash: receipt.transactionHash }, 'dividend: distribution funded and root published');
    return true;
  };

  /** Pays pending leaves; answers whether every leaf is paid. */
  const push = async (a: CorporateActionRecord, distributor: Address): Promise<boolean> => {
    const id = BigInt(a.distributionId as string);
    for (let batches = 0; ; ) {
      const pending = await listPendingPayouts(db, a.actionId, pushBatchSize);
      if (pending.length === 0) return true;
      // Leaves their holders claimed themselves: recorded with the holder's transaction.
      const claimed = await mapLimit(pending, READ_CONCURRENCY, (p) =>
        publicClient.readContract({ address: distributor, abi: dividendDistributorAbi, functionName: 'isClaimed', args: [id, p.userAddress as Address] }) as Promise<boolean>,
      );
      const self = pending.filter((_, i) => claimed[i]);
      if (self.length > 0) await recordSelfClaims(a, distributor, id, self);
      const open = pending.filter((_, i) => !claimed[i]);
      if (open.length === 0) continue;
      if (batches >= maxPushBatches) return false;
      batches++;
      const args = [id, open.map((p) => p.userAddress as Address), open.map((p) => BigInt(p.amount)), open.map((p) => p.proof)] as const;
      const gas = await publicClient
        .estimateContractGas({ address: distributor, abi: dividendDistributorAbi, functionName: 'pushPayouts', args, account: sender.address })
        .catch((err: unknown) => {
          throw toChainError(err);
        });
      const receipt = await send(distributor, encodeFunctionData({ abi: dividendDistributorAbi, functionName: 'pushPayouts', args }), (gas * 6n) / 5n + 50_000n);
      const paidAt = await blockTime(receipt.blockNumber);
      const paid = new Set(parseEventLogs({ abi: dividendDistributorAbi, eventName: 'Claimed', logs: receipt.logs }).map((e) => e.args.account.toLowerCase()));
      await markPayoutsPaid(
        db,
        open.filter((p) => paid.has(p.userAddress)).map((p) => ({ operationId: p.operationId, txHash: receipt.transactionHash, blockNumber: Number(receipt.blockNumber), paidAt })),
        now(),
      );
      log?.info({ actionId: a.actionId, paid: paid.size, txHash: receipt.transactionHash }, 'dividend: payouts pushed');
    }
  };

  const recordSelfClaims = async (a: CorporateActionRecord, distributor: Address, id: bigint, rows: readonly DividendPayoutRecord[]) => {
    const paid = [];
    for (const p of rows) {
      const [ev] = await publicClient.getContractEvents({
        address: distributor,
        abi: dividendDistributorAbi,
        eventName: 'Claimed',
        args: { distributionId: id, account: p.userAddress as Address },
        fromBlock: BigInt(a.recordBlock ?? 0),
      });
      if (!ev) throw new AppError('INTERNAL', 'dividend: a claimed leaf has no Claimed event yet', { retryable: true });
      paid.push({ operationId: p.operationId, txHash: ev.transactionHash, blockNumber: Number(ev.blockNumber), paidAt: await blockTime(ev.blockNumber) });
    }
    await markPayoutsPaid(db, paid, now());
  };

  /** Answers the action's state after this run's work on it. */
  const apply = async (actionId: string): Promise<'applied' | 'waiting'> => {
    let a = (await getCorporateAction(db, actionId)) as CorporateActionRecord;
    const stock = contracts.stocks[a.symbol];
    if (!stock) throw new AppError('VALIDATION', `${a.symbol} has no token on this chain`);
    // An action already recorded keeps the distributor it was recorded for: a dividend under way when
    // the venue migrated to new contracts is funded and paid from the distributor that holds it.
    const distributor = (a.distributor as Address | null) ?? contracts.dividendDistributor;
    if (!distributor) throw new AppError('VALIDATION', 'the deployment record has no dividendDistributor (deployed before dividends existed): redeploy the stock venue');
    if (a.recordBlock === null) {
      await record(a, stock, distributor);
      a = (await getCorporateAction(db, actionId)) as CorporateActionRecord;
    }
    if (a.distributionId === null) {
      const funded = await fund(a, stock, distributor, contracts.cashToken);
      if (!funded) {
        await markActionApplied(db, actionId, now());
        log?.info({ actionId }, 'dividend: no holders of record; nothing to pay');
        return 'applied';
      }
      a = (await getCorporateAction(db, actionId)) as CorporateActionRecord;
    }
    if (!(await push(a, distributor))) return 'waiting';
    await markActionApplied(db, actionId, now());
    log?.info({ actionId, txHash: a.txHash }, 'dividend: applied');
    return 'applied';
  };

  const splitScheduler = createSplitScheduler({ db, splits: opts.splits });

  const runOnce = async (o: DividendRunOptions = {}): Promise<DividendRunResult> => {
    const result: DividendRunResult = { applied: [], failed: [], waiting: [] };
    if (!fileTakenUp) {
      await takeUpFileActions();
      fileTakenUp = true;
    }
    await takeUpRunTimeActions();
    const t = now();
    const due = await listDueActions(db, newYorkDate(t));
    due.push(...(await splitScheduler.dueAhead(due, t)));
    if (due.length > 0) await o.beforeChain?.();
    for (const a of due) {
      try {
        const state = a.type === 'SPLIT' ? await splitScheduler.apply(a, abort.signal) : await apply(a.actionId);
        result[state === 'applied' ? 'applied' : 'waiting'].push(a.actionId);
      } catch (err) {
        const e = toChainError(err);
        if (e.retryable || abort.signal.aborted) {
          log?.warn({ actionId: a.actionId, err: { code: e.code, message: e.message, detail: e.detail } }, 'dividend: not applied yet; retrying on the next run');
          result.waiting.push(a.actionId);
          continue;
        }
        const reason = e instanceof ChainRevertError ? `${e.message}${e.errorName ? '' : ' (see the transaction)'}` : e.message;
        await markActionFailed(db, a.actionId, reason, now());
        log?.error({ actionId: a.actionId, reason }, 'dividend: failed');
        result.failed.push(a.actionId);
      }
    }
    return result;
  };

  const task = periodic(opts.tickMs ?? 5_000, async () => void (await runOnce()), (err: unknown) => log?.error({ err: toChainError(err).message }, 'dividend: run failed'));

  return {
    start: () => task.start(),
    async stop() {
      // A send waiting out a chain outage gives up at once, then the run in progress is awaited.
      abort.abort();
      await task.stop();
    },
    runOnce,
  };
}
