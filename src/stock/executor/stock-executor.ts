/**
 * The stock domain's executor: every tick it reads the open orders from the chain
 * ({@link createOrderTracker}), decides each against the market-data quote and the trading
 * calendar ({@link decideFill}) — and, for a stock the StockRouter checks against an oracle feed,
 * against the feed's latest answer read in the same tick —, settles the decisions in batched `settleOrders` transactions
 * ({@link createSettlementBatcher}) and settles due queued cash operations
 * ({@link createCashQueueSettler}). It depends on chain state and quotes only — never on the
 * indexer's projections — so it runs alone (`--role executor`) or inside the embedded stack.
 *
 * A tick that fails (RPC down, storage down) is logged and the loop backs off exponentially up to
 * `maxBackoffMs`; `stop()` waits for the tick in progress and the transactions it sent.
 */
import { BASE_MULTIPLIER } from '../../marketdata/price-splits.ts';
import { getAddress, type Address } from 'viem';
import { cashierAbi, stockAbi, stockRouterAbi } from '../../chain/abi/generated/index.ts';
import { toChainError, type ChainPublicClient, type ChainWalletClient } from '../../chain/chain-client.ts';
import { senderFor, type TxSender } from '../../chain/tx-sender.ts';
import type { Deployment } from '../../chain/deploy-contracts.ts';
import { AppError, ChainRevertError } from '../../errors/app-error.ts';
import { sleep } from '../../lib/async.ts';
import { symbolFlagsOf } from '../../marketdata/symbol-catalog.ts';
import type { QuoteReader } from '../../marketdata/market-types.ts';
import type { DbExecutor } from '../../storage/database.ts';
import { createCashQueueSettler, DEFAULT_CASH_SETTLE_DELAY_MS, type CashQueueSettler } from './cash-queue-settler.ts';
import type { ExecutorLogger } from './executor-logger.ts';
import { recordCloseReasons, type OrderCloseReason } from '../store/order-reason-store.ts';
import { recordExecutorRejection, type ExecutorRejectionReason } from '../../observability/venue-metrics.ts';
import {
  closeReason,
  decideFill,
  DEFAULT_NO_QUOTE_TIMEOUT_MS,
  OrderStatus,
  DEFAULT_QUOTE_MAX_AGE_MS,
  Side,
  usableQuote,
  type DecideInput,
  type ExecutorCalendar,
  type FeeConfig,
  type OracleCheck,
  type DecisionReason,
} from './fill-policy.ts';
import { createOrderTracker, type OrderTracker, type TrackedOrder } from './order-tracker.ts';
import { createSettlementBatcher, type BatchOutcome, type OrderSettlement, type SettlementBatcher } from './settlement-batcher.ts';
import { venueNow } from '../../lib/venue-clock.ts';
import { timedVenueRun } from '../../lib/venue-clock-walk.ts';

export interface StockExecutorOptions {
  db: DbExecutor;
  publicClient: ChainPublicClient;
  /**
   * The sender of every settlement, shared with the process's other workers that send with the
   * executor's key. Default: the process's sender ({@link senderFor}) for `walletClient`'s account.
   */
  sender?: TxSender;
  /** The executor's wallet (a local account), when no `sender` is given. */
  walletClient?: ChainWalletClient;
  deployment: Deployment;
  quotes: QuoteReader;
  /**
   * The trading calendar: the stack's venue calendar, whose session flags per symbol and session
   * rules (us-sessions) the fill rules follow; any MarketCalendar otherwise.
   */
  calendar: ExecutorCalendar;
  logger: ExecutorLogger;
  /** Pause between ticks. Default 1000. */
  tickMs?: number;
  /** Most orders per settleOrders transaction. Default 200. */
  batchSize?: number;
  /** Delay before a queued deposit or withdrawal is settled. Default 5000. */
  cashSettleDelayMs?: number;
  /** Gas budget per settleOrders transaction (capped at 90% of the block gas limit). Default 25,000,000. */
  maxBatchGas?: bigint;
  /** Batches in flight at once. Default 4. */
  maxInFlightBatches?: number;
  /** Simulate every batch before sending it (default: only until the gas per order is learned, and on failures). */
  simulateFirst?: boolean;
  /** Per symbol (or `*`), the largest quantity one fill takes (stock units). Default: no limit. */
  maxFill?: Record<string, bigint>;
  /** Default 30 s. */
  quoteMaxAgeMs?: number;
  /** Default 60 s. */
  noQuoteTimeoutMs?: number;
  /** How long an order whose settlement reverts stays dropped if nothing changes. Default 60 s. */
  poisonRetryMs?: number;
  /** How long a fill the on-chain oracle refused stays dropped at an unchanged price. Default 5 s. */
  oracleRetryMs?: number;
  /** Seconds before an oracle answer's maximum age at which it is no longer relied on. Default 15. */
  oracleAgeMarginS?: number;
  /** Longest pause between failing ticks. Default 10 s. */
  maxBackoffMs?: number;
  /** After this long, `stop()` abandons transactions it is still following. Default 30 s. */
  stopTimeoutMs?: number;
  /** Clock (ms). Default the venue clock (src/lib/venue-clock.ts); tests pass a fake one. */
  now?: () => number;
  /**
   * While it answers true, a tick reads, decides and sends nothing, and reports no progress: the
   * sandbox's `executor-paused` fault (docs/sandbox.md), which must look like an executor that stopped.
   */
  held?: () => boolean;
}

/** The settlement counts of the tick's batches (settled: fill and/or close mined this tick), and what it read. */
export interface ExecutorTickResult extends Pick<BatchOutcome, 'settled' | 'closed' | 'filled' | 'transactions' | 'dropped' | 'repriced'> {
  /** Orders open (or canceling) on chain after the scan. */
  open: number;
  /** Orders read from the chain this tick (new ids from the low-water mark up, and the open ones). */
  scanned: number;
  cashDeposits: number;
  cashWithdrawals: number;
}

export interface StockExecutor {
  start(): Promise<void>;
  stop(): Promise<void>;
  runOnce(): Promise<ExecutorTickResult>;
  /** For readiness and metrics: when a tick last completed, and the orders open on chain after it. */
  progress(): ExecutorProgress;
}

export interface ExecutorProgress {
  /** Wall-clock ms of the last tick that completed. */
  tickedAt?: number;
  /** Orders open on chain (resting limit orders included) and queued cash operations waiting. */
  queueDepth: number;
  /** Wall-clock ms of the oldest open order's creation (chain time), or undefined with none. */
  oldestPendingAt?: number;
}

export function createStockExecutor(opts: StockExecutorOptions): StockExecutor {
  const tickMs = opts.tickMs ?? 1_000;
  if (!Number.isInteger(tickMs) || tickMs < 1) throw new Error('tickMs: must be a positive integer');
  const now = opts.now ?? venueNow;
  const log = opts.logger;
  const { publicClient, deployment } = opts;
  const contracts = deployment.contracts;
  const maxBackoffMs = opts.maxBackoffMs ?? 10_000;
  const quoteMaxAgeMs = opts.quoteMaxAgeMs ?? DEFAULT_QUOTE_MAX_AGE_MS;
  const noQuoteTimeoutMs = opts.noQuoteTimeoutMs ?? DEFAULT_NO_QUOTE_TIMEOUT_MS;
  const abort = new AbortController();

  if (!opts.sender && !opts.walletClient) throw new AppError('INTERNAL', 'executor: needs a sender or a wallet');
  const sender: TxSender = opts.sender ?? senderFor({ publicClient, account: opts.walletClient!.account, logger: log });
  const tracker: OrderTracker = createOrderTracker({
    db: opts.db,
    publicClient,
    accountLens: contracts.accountLens,
    stockRouter: contracts.stockRouter,
    fromBlock: BigInt(deployment.blockNumber),
    logger: log,
  });
  const batcher: SettlementBatcher = createSettlementBatcher({
    publicClient,
    sender,
    stockRouter: contracts.stockRouter,
    logger: log,
    batchSize: opts.batchSize,
    maxBatchGas: opts.maxBatchGas,
    maxInFlight: opts.maxInFlightBatches,
    simulateFirst: opts.simulateFirst,
    poisonRetryMs: opts.poisonRetryMs,
    oracleRetryMs: opts.oracleRetryMs,
    now,
    signal: abort.signal,
  });
  const cash: CashQueueSettler = createCashQueueSettler({
    db: opts.db,
    publicClient,
    sender,
    cashier: contracts.cashier,
    logger: log,
    settleDelayMs: opts.cashSettleDelayMs ?? DEFAULT_CASH_SETTLE_DELAY_MS,
    now,
    signal: abort.signal,
  });

  // Stock address → symbol: the deployment's, plus any stock listed later (read once).
  const symbols = new Map<string, string>(Object.entries(contracts.stocks).map(([sym, addr]) => [addr.toLowerCase(), sym]));
  const symbolOf = async (stock: string): Promise<string | undefined> => {
    const key = stock.toLowerCase();
    const known = symbols.get(key);
    if (known !== undefined) return known;
    try {
      const sym = await publicClient.readContract({ address: getAddress(stock) as Address, abi: stockAbi, functionName: 'symbol' });
      symbols.set(key, sym);
      return sym;
    } catch (err) {
      log.warn({ err: toChainError(err), stock }, 'executor: could not read the symbol of a stock');
      return undefined;
    }
  };
  const noQuoteSince = new Map<string, number>();
  /** Per symbol, since when its oracle has refused the fills decided (ms). */
  const oracleBlockedSince = new Map<string, number>();

  /** The stock's oracle check as the router applies it at `blockNumber`; undefined: it has none. */
  const readOracle = async (stock: string, blockNumber: bigint, required: boolean): Promise<OracleCheck | undefined> => {
    let config;
    let answer: bigint;
    let updatedAt: bigint;
    let blockTimestamp: bigint;
    try {
      [config, , answer, updatedAt, blockTimestamp] = await publicClient.readContract({
        address: contracts.stockRouter,
        abi: stockRouterAbi,
        functionName: 'oracleReading',
        args: [getAddress(stock) as Address],
        blockNumber,
      });
    } catch (err) {
      const mapped = toChainError(err);
      // The feed itself reverts: the router's fill would too. No usable answer.
      if (mapped instanceof ChainRevertError) return { toleranceBps: 0, maxAgeS: 0 };
      throw mapped;
    }
    // No feed: unchecked, unless the router requires one (docs/security.md), when no price is usable.
    if (BigInt(config.feed) === 0n) return required ? { toleranceBps: 0, maxAgeS: 0 } : undefined;
    return {
      reading: { answer, decimals: config.decimals, updatedAt: Number(updatedAt), chainTime: Number(blockTimestamp) },
      toleranceBps: config.toleranceBps,
      maxAgeS: config.maxAge,
      ageMarginS: opts.oracleAgeMarginS,
    };
  };
  let lastBlock = 0n;
  /** Orders this process is closing REJECTED or EXPIRED, and why (written before the settlement is sent). */
  const closing = new Map<bigint, { status: 'Rejected' | 'Expired'; reason: string; symbol: string; rule: DecisionReason }>();
  /** The reason last written per order, so a settlement retried tick after tick writes it once. */
  const recordedReasons = new Map<bigint, string>();

  /**
   * Writes why these orders are about to close, before the settlement that closes them is sent: the
   * API and the `orders` stream show it once the indexer sees the close. A storage failure does not
   * hold the settlement back (the chain is the record; only the sentence would be missing).
   */
  const recordReasons = async (items: readonly OrderSettlement[], at: number): Promise<void> => {
    const rows: OrderCloseReason[] = [];
    for (const it of items) {
      const c = closing.get(it.orderId);
      if (c === undefined || recordedReasons.get(it.orderId) === c.reason) continue;
      rows.push({ orderId: it.orderId.toString(), status: c.status, reason: c.reason, decidedAt: at });
    }
    if (rows.length === 0) return;
    try {
      await recordCloseReasons(opts.db, rows);
      for (const r of rows) recordedReasons.set(BigInt(r.orderId), r.reason);
    } catch (err) {
      log.warn({ err, orders: rows.length }, 'executor: could not record why orders close; settling them anyway');
    }
  };

  /** Each order closed REJECTED or EXPIRED, in the log with its id and reason, once its close is mined. */
  const reportClosed = (ids: readonly bigint[]): void => {
    for (const id of ids) {
      const c = closing.get(id);
      closing.delete(id);
      recordedReasons.delete(id);
      if (c === undefined) continue;
      const fields = { orderId: id.toString(), symbol: c.symbol, status: c.status.toUpperCase(), reason: c.reason };
      // A rejection is an order the venue could not serve; an expiry is the DAY order's normal end.
      if (c.status === 'Rejected') {
        log.warn(fields, 'executor: order rejected');
        // Counted by rule (a fixed set): a venue that rejects every buy shows it on a dashboard, not only in the log.
        recordExecutorRejection(c.rule);
      } else log.info(fields, 'executor: order expired');
    }
  };

  /** Symbols whose quotes and chain disagree on a split (logged once per episode). */
  const splitWaits = new Set<string>();

  const decide = async (
    t: TrackedOrder,
    fees: FeeConfig,
    at: number,
    oracleOf: (stock: string) => Promise<OracleCheck | undefined>,
  ): Promise<OrderSettlement | undefined> => {
    const { order } = t;
    const symbol = await symbolOf(order.stock);
    let quote = symbol === undefined ? undefined : opts.quotes.getQuote(symbol);
    const key = symbol ?? order.stock.toLowerCase();
    // A split between the quote and the chain (docs/corporate-actions.md, "Splits"): the quote's
    // shares are not the order's, so nothing fills until both speak of the same share; a cancel
    // requested meanwhile still closes.
    if (quote !== undefined && quoteMultiplierOf(quote) !== order.multiplier) {
      if (!splitWaits.has(key)) {
        splitWaits.add(key);
        log.warn({ symbol: key, quoteMultiplier: quoteMultiplierOf(quote).toString(), chainMultiplier: order.multiplier.toString() }, 'executor: the quotes and the chain are on different sides of a split; fills wait');
      }
      if (order.status !== OrderStatus.Canceling) return undefined;
      quote = undefined;
    } else if (quote !== undefined && splitWaits.delete(key)) {
      log.info({ symbol: key }, 'executor: the quotes and the chain agree on the split again');
    }
    if (usableQuote(quote, at, quoteMaxAgeMs)) noQuoteSince.delete(key);
    else if (!noQuoteSince.has(key)) noQuoteSince.set(key, at);
    const filledValue =
      order.side === Side.Buy && order.filledQuantity > 0n ? await tracker.filledValue(t) : undefined;
    const maxFill = symbol === undefined ? opts.maxFill?.['*'] : (opts.maxFill?.[symbol] ?? opts.maxFill?.['*']);
    let input: DecideInput = {
      order,
      quote,
      // The rate the order was placed with, which the router charges; the current config for an order placed before rates were fixed per order.
      fees: t.feeBps === undefined ? fees : { marketFeeBps: t.feeBps, limitFeeBps: t.feeBps },
      now: at,
      calendar: opts.calendar,
      // An unknown stock (listed after this process started) trades as the calendar's default.
      sessionFlags: symbolFlagsOf(opts.calendar, symbol ?? ''),
      maxFillQuantity: maxFill,
      quoteMaxAgeMs,
      noQuoteTimeoutMs,
      noQuoteSince: noQuoteSince.get(key),
      filledValue,
    };
    let decision = decideFill(input);
    if (decision.fill) {
      // Read only for a fill: the feed bounds prices, not waits or closes.
      const oracle = await oracleOf(order.stock);
      if (oracle !== undefined) {
        input = { ...input, oracle, oracleBlockedSince: oracleBlockedSince.get(key) };
        decision = decideFill(input);
        if (decision.reason.startsWith('oracle-')) {
          if (!oracleBlockedSince.has(key)) {
            oracleBlockedSince.set(key, at);
            log.warn({ symbol: key, reason: decision.reason, orderId: t.id.toString() }, 'executor: the on-chain oracle refuses fills of this stock; waiting for a fresh quote and feed');
          }
        } else if (decision.fill && oracleBlockedSince.delete(key)) {
          log.info({ symbol: key }, 'executor: the on-chain oracle accepts fills of this stock again');
        }
      }
    }
    if (!decision.fill && decision.close === undefined) return undefined;
    const why = closeReason(input, decision, symbol ?? order.stock);
    if (why !== undefined) closing.set(t.id, { status: decision.close === OrderStatus.Rejected ? 'Rejected' : 'Expired', reason: why, symbol: symbol ?? order.stock, rule: decision.reason });
    else closing.delete(t.id);
    const stateKey = [
      order.status,
      order.filledQuantity,
      order.locked,
      fees.marketFeeBps,
      fees.limitFeeBps,
      decision.fill ? 'fill' : '',
      decision.close ?? '',
    ].join(':');
    return { orderId: t.id, fill: decision.fill, close: decision.close, stateKey };
  };

  let ready = false;
  /**
   * Once per process, before anything is settled: the account must be an operator of both
   * contracts, and transactions a previous run left pending must be mined first — a decision
   * made from state they are about to change could fill an order twice.
   */
  const preflight = async (): Promise<boolean> => {
    if (ready) return true;
    const address = sender.address;
    let onRouter: boolean;
    let onCashier: boolean;
    let pending: number;
    let latest: number;
    try {
      [onRouter, onCashier, pending, latest] = await Promise.all([
        publicClient.readContract({ address: contracts.stockRouter, abi: stockRouterAbi, functionName: 'isOperator', args: [address] }),
        publicClient.readContract({ address: contracts.cashier, abi: cashierAbi, functionName: 'isOperator', args: [address] }),
        publicClient.getTransactionCount({ address, blockTag: 'pending' }),
        publicClient.getTransactionCount({ address, blockTag: 'latest' }),
      ]);
    } catch (err) {
      throw toChainError(err);
    }
    if (!onRouter || !onCashier) {
      throw new AppError('INTERNAL', 'executor: the wallet is not an operator of the StockRouter and the Cashier', {
        detail: { operator: address, stockRouter: onRouter, cashier: onCashier },
      });
    }
    if (pending > latest) {
      log.info({ pending: pending - latest }, 'executor: waiting for operator transactions of a previous run to be mined');
      return false;
    }
    ready = true;
    return true;
  };

  let pausedLogged = false;
  const venuePaused = async (): Promise<boolean> => {
    let paused: boolean;
    try {
      paused = await publicClient.readContract({ address: contracts.stockRouter, abi: stockRouterAbi, functionName: 'paused' });
    } catch (err) {
      const mapped = toChainError(err);
      // A router from before the pause has none: never paused.
      if (mapped instanceof ChainRevertError) return false;
      throw mapped;
    }
    if (paused !== pausedLogged) {
      if (paused) log.warn({}, 'executor: the venue is paused by its guardian; no fills or operator actions until it is lifted');
      else log.info({}, 'executor: the pause is lifted; settling again');
      pausedLogged = paused;
    }
    return paused;
  };

  const tick = async (): Promise<ExecutorTickResult> => {
    const started = performance.now();
    const phases = { scanMs: 0, decideMs: 0, submitMs: 0 };
    const at = now();
    if (opts.held?.()) {
      return { settled: 0, closed: 0, filled: 0, transactions: 0, dropped: 0, repriced: 0, open: tracker.openCount(), scanned: 0, cashDeposits: 0, cashWithdrawals: 0 };
    }
    if (!(await preflight())) {
      return { settled: 0, closed: 0, filled: 0, transactions: 0, dropped: 0, repriced: 0, open: tracker.openCount(), scanned: 0, cashDeposits: 0, cashWithdrawals: 0 };
    }
    // The guardian's pause stops fills and operator actions on chain: nothing is decided or sent
    // (every settlement would revert VenuePaused, and an order-by-order search for the culprit would
    // drop orders that did nothing wrong). Users' exits stay open meanwhile (docs/security.md).
    if (await venuePaused()) {
      return { settled: 0, closed: 0, filled: 0, transactions: 0, dropped: 0, repriced: 0, open: tracker.openCount(), scanned: 0, cashDeposits: 0, cashWithdrawals: 0 };
    }
    const [scan, cashOutcome] = await Promise.all([
      (async () => {
        const t0 = performance.now();
        const refreshed = await tracker.refresh();
        phases.scanMs = Math.round(performance.now() - t0);
        // A chain restarted from an older state (or a reorg) renumbers blocks: the remembered
        // settlement blocks mean nothing there, and the chain state read now is the truth.
        if (refreshed.blockNumber < lastBlock) batcher.forgetAllSettled();
        lastBlock = refreshed.blockNumber;
        let fees: FeeConfig;
        let oracleRequired: boolean;
        try {
          [fees, oracleRequired] = await Promise.all([
            publicClient.readContract({
              address: contracts.stockRouter,
              abi: stockRouterAbi,
              functionName: 'feeConfig',
              blockNumber: refreshed.blockNumber,
            }),
            // A router from before the flag has none (reverts): it fills feedless stocks unchecked.
            publicClient
              .readContract({ address: contracts.stockRouter, abi: stockRouterAbi, functionName: 'requireOracle', blockNumber: refreshed.blockNumber })
              .catch((err: unknown) => {
                const mapped = toChainError(err);
                if (mapped instanceof ChainRevertError) return false;
                throw mapped;
              }),
          ]);
        } catch (err) {
          throw toChainError(err);
        }
        const candidates: TrackedOrder[] = [];
        // Orders no longer open (closed elsewhere, or a chain that went back) need no reason kept.
        if (closing.size > 0) {
          const open = new Set(refreshed.open.map((t) => t.id));
          for (const id of closing.keys()) if (!open.has(id) && !batcher.isInFlight(id)) closing.delete(id);
          for (const id of recordedReasons.keys()) if (!open.has(id) && !batcher.isInFlight(id)) recordedReasons.delete(id);
        }
        for (const t of refreshed.open) {
          if (batcher.isInFlight(t.id)) continue;
          const settledAt = batcher.settledAtBlock(t.id);
          // Read before our own settlement of it was mined: its state is stale.
          if (settledAt !== undefined && t.readAtBlock < settledAt) continue;
          if (settledAt !== undefined) batcher.forgetSettledBefore(t.id, t.readAtBlock);
          candidates.push(t);
        }
        const t1 = performance.now();
        // One read of each stock's oracle per tick, at the block the orders were read at.
        const oracles = new Map<string, Promise<OracleCheck | undefined>>();
        const oracleOf = (stock: string): Promise<OracleCheck | undefined> => {
          const k = stock.toLowerCase();
          let p = oracles.get(k);
          if (!p) oracles.set(k, (p = readOracle(stock, refreshed.blockNumber, oracleRequired)));
          return p;
        };
        const decided = await Promise.all(candidates.map((t) => decide(t, fees, at, oracleOf)));
        const items = decided.filter((d): d is OrderSettlement => d !== undefined && !batcher.isDropped(d.orderId, d.stateKey, d.fill?.price));
        const t2 = performance.now();
        phases.decideMs = Math.round(t2 - t1);
        await recordReasons(items, at);
        const outcome = await batcher.submit(items);
        phases.submitMs = Math.round(performance.now() - t2);
        reportClosed(outcome.closedIds);
        await tracker.markClosed(outcome.closedIds);
        return { refreshed, outcome };
      })(),
      cash.runOnce(),
    ]);
    const { refreshed, outcome } = scan;
    const result: ExecutorTickResult = {
      settled: outcome.settled,
      closed: outcome.closed,
      filled: outcome.filled,
      transactions: outcome.transactions,
      dropped: outcome.dropped,
      repriced: outcome.repriced,
      open: Math.max(0, refreshed.open.length - outcome.closed),
      scanned: refreshed.read,
      cashDeposits: cashOutcome.deposits,
      cashWithdrawals: cashOutcome.withdrawals,
    };
    const ms = Math.round(performance.now() - started);
    if (result.settled > 0 || result.cashDeposits > 0 || result.cashWithdrawals > 0 || result.dropped > 0) {
      log.info({ ...result, ms, ...phases, lowWaterMark: tracker.lowWaterMark().toString() }, 'executor: tick');
    }
    const retryable = outcome.retryableError ?? cashOutcome.retryableError;
    if (retryable) throw retryable;
    let oldest: bigint | undefined;
    for (const t of refreshed.open) if (oldest === undefined || t.order.createdAt < oldest) oldest = t.order.createdAt;
    lastProgress = {
      tickedAt: Date.now(),
      queueDepth: result.open + cashOutcome.pending,
      oldestPendingAt: oldest === undefined ? undefined : Number(oldest) * 1000,
    };
    return result;
  };

  let lastProgress: ExecutorProgress = { queueDepth: 0 };

  // Ticks never overlap: one asked for while another runs follows it.
  let chain: Promise<unknown> = Promise.resolve();
  const runOnce = (): Promise<ExecutorTickResult> => {
    const run = chain.then(tick);
    chain = run.catch(() => undefined);
    return run;
  };

  let running = false;
  let loop: Promise<void> | undefined;
  // Ends the pause between ticks when stop() is called; a new one per start.
  let wake = new AbortController();

  const runLoop = async (): Promise<void> => {
    let failures = 0;
    while (running) {
      try {
        // Held while a sandbox's advance walks: it runs this executor at its steps itself.
        await (timedVenueRun(runOnce) ?? Promise.resolve());
        if (failures > 0) log.info({ failedTicks: failures }, 'executor: ticks succeed again');
        failures = 0;
      } catch (err) {
        failures++;
        const mapped = err instanceof AppError ? err : toChainError(err);
        if (failures === 1) log.warn({ err: mapped, retryable: mapped.retryable }, 'executor: tick failed; backing off');
        else log.debug({ err: mapped, failures }, 'executor: tick failed again');
      }
      if (!running) break;
      const pause = failures > 0 ? Math.min(tickMs * 2 ** Math.min(failures, 16), maxBackoffMs) : tickMs;
      await sleep(pause, wake.signal);
    }
  };

  return {
    async start() {
      if (running) return;
      if (abort.signal.aborted) throw new AppError('INTERNAL', 'executor: stopped after a timeout; create a new one');
      running = true;
      wake = new AbortController();
      loop = runLoop();
      log.info({ tickMs, batchSize: opts.batchSize ?? 200, operator: sender.address }, 'executor: running');
    },
    async stop() {
      running = false;
      wake.abort();
      const timer = setTimeout(() => abort.abort(), opts.stopTimeoutMs ?? 30_000);
      try {
        await loop;
        await chain;
      } finally {
        clearTimeout(timer);
        loop = undefined;
      }
    },
    runOnce,
    progress: () => lastProgress,
  };
}

/**
 * The fill policy's rejecting reasons and their labels of `tokex_executor_rejections_total`, checked
 * at compile time: a reason renamed in the policy, or a label dropped from the metric's set, fails
 * here instead of counting silently as `other`.
 */
type RejectingReason = Extract<DecisionReason, 'no-quote' | 'notional-too-small' | 'beyond-worst-price' | 'lock-exhausted' | `oracle-${string}` | 'market-outside-regular' | 'not-fractionable'>;
type Underscored<S extends string> = S extends `${infer A}-${infer B}` ? `${A}_${Underscored<B>}` : S;
const REJECTION_LABELS_COVER: Record<Underscored<RejectingReason>, ExecutorRejectionReason> = {
  no_quote: 'no_quote',
  notional_too_small: 'notional_too_small',
  beyond_worst_price: 'beyond_worst_price',
  lock_exhausted: 'lock_exhausted',
  oracle_stale: 'oracle_stale',
  oracle_deviation: 'oracle_deviation',
  oracle_invalid: 'oracle_invalid',
  market_outside_regular: 'market_outside_regular',
  not_fractionable: 'not_fractionable',
};
void REJECTION_LABELS_COVER;

/** The share multiplier a quote is stated in (none: never split). */
function quoteMultiplierOf(quote: { multiplier?: string }): bigint {
  return quote.multiplier === undefined ? BASE_MULTIPLIER : BigInt(quote.multiplier);
}
