/**
 * The venue's on-chain oracle, off-chain side (docs/market-data.md, "On-chain oracle"): the
 * publisher that writes the prices the venue trades on to the PriceFeedHub, and the reader that
 * brings the feeds' answers back for the checks made off chain (the perpetual index).
 *
 * Publishing follows Chainlink's model: a feed gets a new round when its price moved by at least
 * `deviationBps` from the last answer, or when its last round is `heartbeatMs` old (by the wall
 * clock or the chain's, whichever is older), and every feed due in a round goes out in one
 * `publish` transaction. The answer is the quote's mid, (bid + ask) / 2, at the feeds' 8 decimals,
 * rounded half up. A quote older than `quoteMaxAgeMs`, or one that is not two positive prices with
 * bid ≤ ask, is not published: the feed then ages, and the StockRouter stops filling that stock once
 * the answer is older than its `maxAge` — a stale source halts the stock on chain too.
 *
 * The pure rules (answer, trigger, verdict) are exported for the executor's pre-check and tests.
 */
import { decodeEventLog, encodeFunctionData, getAbiItem, toEventSelector, type Address, type Hex } from 'viem';
import { priceFeedHubAbi } from '../chain/abi/generated/index.ts';
import { toChainError, type ChainPublicClient } from '../chain/chain-client.ts';
import type { TxSender } from '../chain/tx-sender.ts';
import { AppError, ChainRevertError } from '../errors/app-error.ts';
import { periodic, type PeriodicTask } from '../lib/async.ts';
import type { Logger } from '../lib/logger.ts';
import type { QuoteReader } from './market-types.ts';
import { venueChainNow, venueNow } from '../lib/venue-clock.ts';

/** Decimals of every venue feed's answer, as Chainlink's USD feeds. */
export const FEED_DECIMALS = 8;
/** `ORACLE_HEARTBEAT_MS`: a feed gets a round at least this often. */
export const DEFAULT_ORACLE_HEARTBEAT_MS = 60_000;
/** `ORACLE_DEVIATION_BPS`: a move of this much from the last answer publishes at once. */
export const DEFAULT_ORACLE_DEVIATION_BPS = 25;
/** `ORACLE_TOLERANCE_BPS`: how far a fill (or the perp index) may stray from the answer. */
export const DEFAULT_ORACLE_TOLERANCE_BPS = 100;
/** Heartbeats an answer may miss before the StockRouter calls it stale (`maxAge` = 3 × heartbeat). */
export const ORACLE_MAX_AGE_HEARTBEATS = 3;
/** A quote older than this is not published. */
export const DEFAULT_PUBLISH_QUOTE_MAX_AGE_MS = 30_000;
/**
 * `PriceFeedHub.MAX_CLOCK_SKEW`: how far past the block an observation time may be, seconds. An
 * update beyond it is refused on chain for its feed alone (`UpdateRefused`); the publisher does not
 * send it.
 */
export const MAX_OBSERVATION_AHEAD_S = 60;

const BPS = 10_000n;

/** The feed's `description()`: `AAPL / USD`, Chainlink's naming. */
export function feedDescription(symbol: string): string {
  return `${symbol} / USD`;
}

/** The symbol a venue feed prices, from its description; undefined for another shape. */
export function symbolOfDescription(description: string): string | undefined {
  const m = /^([A-Z0-9.\-]{1,20}) \/ USD$/.exec(description);
  return m ? m[1] : undefined;
}

const PRICE_RE = /^(0|[1-9]\d*)(\.\d+)?$/;

/** A decimal string as an exact integer and its number of decimals. */
function exact(value: string): { digits: bigint; decimals: number } | undefined {
  if (typeof value !== 'string' || value.length > 60 || !PRICE_RE.test(value)) return undefined;
  const [whole, fraction = ''] = value.split('.');
  return { digits: BigInt(whole + fraction), decimals: fraction.length };
}

/**
 * The answer a quote publishes: (bid + ask) / 2 at `FEED_DECIMALS`, rounded half up; undefined
 * unless bid and ask are positive decimals with bid ≤ ask.
 */
export function quoteAnswer(bid: string, ask: string): bigint | undefined {
  const b = exact(bid);
  const a = exact(ask);
  if (!b || !a || b.digits === 0n || a.digits === 0n) return undefined;
  const d = Math.max(b.decimals, a.decimals);
  const bs = b.digits * 10n ** BigInt(d - b.decimals);
  const as = a.digits * 10n ** BigInt(d - a.decimals);
  if (bs > as) return undefined;
  // mid · 10^8 = (bs + as) · 10^8 / (2 · 10^d), rounded half up.
  const num = (bs + as) * 10n ** BigInt(FEED_DECIMALS);
  const den = 2n * 10n ** BigInt(d);
  const answer = (2n * num + den) / (2n * den);
  return answer > 0n ? answer : undefined;
}

export type PublishTrigger = 'first' | 'heartbeat' | 'deviation';

/**
 * Why `answer` is due now, or undefined: no round yet; the last round `ageMs` old or more than the
 * heartbeat; or a move of `deviationBps` or more from the last answer.
 */
export function publishTrigger(
  last: { answer: bigint } | undefined,
  answer: bigint,
  ageMs: number,
  heartbeatMs: number,
  deviationBps: number,
): PublishTrigger | undefined {
  if (last === undefined || last.answer <= 0n) return 'first';
  const diff = answer > last.answer ? answer - last.answer : last.answer - answer;
  if (diff * BPS >= last.answer * BigInt(deviationBps)) return 'deviation';
  if (ageMs >= heartbeatMs) return 'heartbeat';
  return undefined;
}

/** A feed's latest round as a check reads it. */
export interface FeedAnswer {
  /** In `decimals`; zero before the first round. */
  answer: bigint;
  decimals: number;
  /**
   * The feed's `updatedAt`: on a venue feed the price's observation time (what the StockRouter
   * measures staleness from), seconds (0: none).
   */
  updatedAt: number;
  /** When the round's price was observed (its `startedAt`), seconds; unset when not read. */
  observedAt?: number;
  /** The chain's time at the read, seconds. */
  chainTime: number;
}

export type OracleVerdict = 'ok' | 'stale' | 'deviation' | 'invalid';

/**
 * The StockRouter's oracle rule (`_checkOracle`), off chain: an answer that is not positive is
 * `invalid`; one written more than `maxAgeS` before the chain's time, counted `ageMarginS` ahead
 * (the block that settles comes later than the read), is `stale`; a `price` (at `priceDecimals`)
 * further than `toleranceBps` from the answer is `deviation`. Exact integers, the contract's
 * comparison: |price − answer| × 10⁴ > answer × toleranceBps.
 */
export function oracleVerdict(
  reading: FeedAnswer,
  price: bigint,
  priceDecimals: number,
  toleranceBps: number,
  maxAgeS: number,
  ageMarginS = 0,
): OracleVerdict {
  if (reading.answer <= 0n || reading.answer > (1n << 128n) - 1n) return 'invalid';
  if (reading.updatedAt < reading.chainTime + ageMarginS && reading.chainTime + ageMarginS - reading.updatedAt > maxAgeS) return 'stale';
  const scale = priceDecimals - reading.decimals;
  const ref = scale >= 0 ? reading.answer * 10n ** BigInt(scale) : reading.answer;
  const p = scale >= 0 ? price : price * 10n ** BigInt(-scale);
  const diff = p > ref ? p - ref : ref - p;
  return diff * BPS > ref * BigInt(toleranceBps) ? 'deviation' : 'ok';
}

// ----------------------------------------------------------------- the publisher

export interface OracleFeedRef {
  symbol: string;
  feed: Address;
}

/** `future-observation`: the quote is stamped more than MAX_OBSERVATION_AHEAD_S past the chain's time; `refused`: the hub refused it (UpdateRefused). */
export type PublishSkip = 'no-quote' | 'stale-quote' | 'invalid-quote' | 'out-of-order' | 'future-observation' | 'refused';

export interface PublishOutcome {
  /** Symbols given a new round by this run. */
  published: string[];
  triggers: Record<string, PublishTrigger>;
  /** Symbols whose quote could not be published, and why. */
  skipped: Record<string, PublishSkip>;
  txHash?: Hex;
}

export interface OraclePublisherProgress {
  /** Wall-clock ms of the last run that completed (published or found nothing due). */
  checkedAt?: number;
  /** Wall-clock ms of the last successful publish transaction. */
  publishedAt?: number;
  /** Publish transactions mined. */
  transactions: number;
  /** Per symbol, the wall-clock ms its feed was last written by this publisher. */
  answeredAt: Record<string, number>;
  /** Runs that failed in a row (0 when the last succeeded). */
  failures: number;
}

export interface OraclePublisherOptions {
  publicClient: ChainPublicClient;
  /** The publisher's sender (its key must be a publisher of the hub). */
  sender: TxSender;
  hub: Address;
  feeds: readonly OracleFeedRef[];
  quotes: QuoteReader;
  /** Default 60 000. */
  heartbeatMs?: number;
  /** Default 25. */
  deviationBps?: number;
  /** Default 30 000. */
  quoteMaxAgeMs?: number;
  /** Pause between runs. Default 1 000. */
  intervalMs?: number;
  now?: () => number;
  logger?: Pick<Logger, 'info' | 'warn' | 'debug'>;
  /** Stops a send in progress on shutdown. */
  signal?: AbortSignal;
}

export interface OraclePublisher {
  start(): void;
  stop(): Promise<void>;
  /** One run now: publishes what is due. Throws what failed (the schedule logs it and goes on). */
  runOnce(): Promise<PublishOutcome>;
  /**
   * The round a run now would publish, kept here instead of sent: a sandbox's advance at a step it
   * does not move the chain to (docs/sandbox.md "Clock"), the step's time standing for the block's.
   * The next `runOnce` forgets them and publishes against the chain's own rounds.
   */
  stage(): Promise<PublishOutcome>;
  /**
   * The symbol's latest round this publisher wrote or staged (the chain's as last read, else),
   * undefined when it knows none: what a check in this process compares with during an advance.
   */
  latest(symbol: string): FeedAnswer | undefined;
  progress(): OraclePublisherProgress;
}

interface FeedState {
  answer: bigint;
  /** Observation time of the last round, seconds. */
  observedAt: number;
  /** Chain time the last round was written, seconds. */
  updatedAt: number;
  /** Wall-clock ms this process last wrote it (undefined: read from the chain). */
  writtenAt?: number;
}

const GAS_MARGIN_PERCENT = 130n;

const UPDATE_REFUSED = toEventSelector(getAbiItem({ abi: priceFeedHubAbi, name: 'UpdateRefused' }) as never);

/** Feeds (lower case) whose update the hub refused in a `publish` receipt. */
function refusedFeeds(logs: ReadonlyArray<{ address: Address; topics: readonly Hex[]; data: Hex }>, hub: Address): Set<string> {
  const out = new Set<string>();
  for (const l of logs) {
    if (l.topics[0] !== UPDATE_REFUSED || l.address.toLowerCase() !== hub.toLowerCase()) continue;
    const ev = decodeEventLog({ abi: priceFeedHubAbi, eventName: 'UpdateRefused', topics: l.topics as [Hex, ...Hex[]], data: l.data });
    out.add((ev.args as { feed: Address }).feed.toLowerCase());
  }
  return out;
}

export function createOraclePublisher(opts: OraclePublisherOptions): OraclePublisher {
  const heartbeatMs = opts.heartbeatMs ?? DEFAULT_ORACLE_HEARTBEAT_MS;
  const deviationBps = opts.deviationBps ?? DEFAULT_ORACLE_DEVIATION_BPS;
  const quoteMaxAgeMs = opts.quoteMaxAgeMs ?? DEFAULT_PUBLISH_QUOTE_MAX_AGE_MS;
  if (!(heartbeatMs > 0) || !Number.isInteger(deviationBps) || deviationBps < 1) {
    throw new AppError('INTERNAL', 'oracle publisher: heartbeatMs and deviationBps must be positive');
  }
  const now = opts.now ?? venueChainNow;
  // A quote's age is told on the clock it is stamped on, the venue's: a frozen sandbox stamps its
  // quotes at the frozen instant while its chain's time runs on, and they are not stale for that.
  const quoteNow = opts.now ?? venueNow;
  const log = opts.logger;
  const { publicClient, hub } = opts;
  const feeds = [...opts.feeds];
  /** The chain's rounds as last read or written; undefined until read (and after a failure). */
  let state: Map<Address, FeedState> | undefined;
  const progress: OraclePublisherProgress = { transactions: 0, answeredAt: {}, failures: 0 };
  /** The last reason logged per symbol, so a quote that stays unusable is logged once. */
  const skipLogged = new Map<string, PublishSkip>();

  const sync = async (): Promise<Map<Address, FeedState>> => {
    const rounds = await publicClient.readContract({ address: hub, abi: priceFeedHubAbi, functionName: 'latestRoundsOf', args: [feeds.map((f) => f.feed)] });
    const m = new Map<Address, FeedState>();
    feeds.forEach((f, i) => {
      const r = rounds[i];
      if (r && r.roundId > 0n) m.set(f.feed, { answer: r.answer, observedAt: Number(r.startedAt), updatedAt: Number(r.writtenAt) });
    });
    return m;
  };

  /** Rounds staged at steps of an advance the chain was not moved to (`stage`), newer than the chain's. */
  const staged = new Map<Address, FeedState>();
  const newer = (a: FeedState | undefined, b: FeedState | undefined) => (a === undefined || (b !== undefined && b.observedAt > a.observedAt) ? b : a);
  const bySymbol = new Map(feeds.map((f) => [f.symbol, f.feed]));

  /** What is due at `at` (ms) on a chain at `chainTime` (s) against the rounds `lastOf` answers. */
  const plan = (at: number, chainTime: number, lastOf: (feed: Address) => FeedState | undefined) => {
    const outcome: PublishOutcome = { published: [], triggers: {}, skipped: {} };
    const updates: Array<{ feed: Address; answer: bigint; observedAt: bigint }> = [];
    const next = new Map<Address, FeedState>();
    for (const f of feeds) {
      const last = lastOf(f.feed);
      const q = opts.quotes.getQuote(f.symbol);
      let skip: PublishSkip | undefined;
      let answer: bigint | undefined;
      if (!q) skip = 'no-quote';
      else if (!(Math.min(at, quoteNow()) - q.timestamp <= quoteMaxAgeMs)) skip = 'stale-quote';
      else if ((answer = quoteAnswer(q.bid, q.ask)) === undefined) skip = 'invalid-quote';
      const observedAt = q ? Math.floor(q.timestamp / 1000) : 0;
      if (skip === undefined && last !== undefined && observedAt < last.observedAt) skip = 'out-of-order';
      // Ahead of both clocks by more than the hub takes: refused on chain whatever block takes it (an
      // idle chain's latest block may be old, so the wall clock counts too; the hub decides the rest).
      if (skip === undefined && observedAt > Math.max(chainTime, Math.floor(at / 1000)) + MAX_OBSERVATION_AHEAD_S) skip = 'future-observation';
      if (skip !== undefined) {
        outcome.skipped[f.symbol] = skip;
        if (skipLogged.get(f.symbol) !== skip) {
          skipLogged.set(f.symbol, skip);
          log?.warn({ symbol: f.symbol, reason: skip }, 'oracle publisher: quote not published; the feed ages');
        }
        continue;
      }
      skipLogged.delete(f.symbol);
      // The older of the two clocks: a chain that runs ahead of the wall (many blocks a second
      // on anvil) would otherwise see the answer go stale before the wall clock calls it due.
      const chainAgeMs = last ? (chainTime - last.updatedAt) * 1000 : Infinity;
      const wallAgeMs = last?.writtenAt !== undefined ? at - last.writtenAt : chainAgeMs;
      const trigger = publishTrigger(last, answer!, Math.max(chainAgeMs, wallAgeMs), heartbeatMs, deviationBps);
      if (trigger === undefined) continue;
      updates.push({ feed: f.feed, answer: answer!, observedAt: BigInt(observedAt) });
      outcome.triggers[f.symbol] = trigger;
      outcome.published.push(f.symbol);
      next.set(f.feed, { answer: answer!, observedAt, updatedAt: chainTime, writtenAt: at });
    }
    return { outcome, updates, next };
  };

  const run = async (): Promise<PublishOutcome> => {
    let block: { timestamp: bigint };
    try {
      state ??= await sync();
      block = await publicClient.getBlock({ blockTag: 'latest' });
    } catch (err) {
      throw toChainError(err);
    }
    // Against the chain's own rounds: what was staged at the steps before is not on it.
    staged.clear();
    const chainTime = Number(block.timestamp);
    const at = now();
    const known = state;
    const { outcome, updates, next } = plan(at, chainTime, (feed) => known.get(feed));
    if (updates.length === 0) return outcome;

    const data = encodeFunctionData({ abi: priceFeedHubAbi, functionName: 'publish', args: [updates] });
    let gas: bigint;
    try {
      // Simulated first: an invalid update is refused here, decoded with the hub's errors, at no gas.
      gas = await publicClient.estimateContractGas({ address: hub, abi: priceFeedHubAbi, functionName: 'publish', args: [updates], account: opts.sender.address });
    } catch (err) {
      state = undefined;
      throw toChainError(err);
    }
    const receipt = await opts.sender.send({ to: hub, data, gas: (gas * GAS_MARGIN_PERCENT) / 100n }, opts.signal);
    if (receipt.status !== 'success') {
      state = undefined;
      throw new ChainRevertError(undefined, { detail: { txHash: receipt.transactionHash } });
    }
    // The hub skips an update it refuses (a clock ahead of the block's, a later round already there)
    // and writes the others: only what it wrote is the feed's state.
    const refused = refusedFeeds(receipt.logs, hub);
    if (refused.size > 0) {
      for (const f of feeds) {
        if (!refused.has(f.feed.toLowerCase())) continue;
        next.delete(f.feed);
        outcome.published = outcome.published.filter((sym) => sym !== f.symbol);
        delete outcome.triggers[f.symbol];
        outcome.skipped[f.symbol] = 'refused';
        log?.warn({ symbol: f.symbol, txHash: receipt.transactionHash }, 'oracle publisher: the hub refused the update (observation time); the feed ages');
      }
      // Its round on chain is not what this process thought: read it again next run.
      state = undefined;
    } else {
      for (const [feed, s] of next) state.set(feed, s);
    }
    for (const sym of outcome.published) progress.answeredAt[sym] = at;
    progress.publishedAt = at;
    progress.transactions++;
    outcome.txHash = receipt.transactionHash;
    log?.debug({ symbols: outcome.published, triggers: outcome.triggers, txHash: receipt.transactionHash }, 'oracle publisher: published');
    return outcome;
  };

  let chain: Promise<unknown> = Promise.resolve();
  const runOnce = (): Promise<PublishOutcome> => {
    const r = chain.then(run).then(
      (out) => {
        if (progress.failures > 0) log?.info({ failedRuns: progress.failures }, 'oracle publisher: publishing again');
        progress.failures = 0;
        progress.checkedAt = now();
        return out;
      },
      (err: unknown) => {
        progress.failures++;
        throw err;
      },
    );
    chain = r.catch(() => undefined);
    return r;
  };

  const task: PeriodicTask = periodic(
    opts.intervalMs ?? 1_000,
    async () => void (await runOnce()),
    (err) => {
      const mapped = err instanceof AppError ? err : toChainError(err);
      if (progress.failures === 1) log?.warn({ err: mapped }, 'oracle publisher: publish failed; retrying');
      else log?.debug({ err: mapped, failures: progress.failures }, 'oracle publisher: publish failed again');
    },
  );

  const stage = (): Promise<PublishOutcome> => {
    const r = chain.then(async () => {
      try {
        state ??= await sync();
      } catch (err) {
        throw toChainError(err);
      }
      const at = now();
      const known = state;
      const { outcome, next } = plan(at, Math.floor(at / 1000), (feed) => newer(known.get(feed), staged.get(feed)));
      for (const [feed, st] of next) staged.set(feed, st);
      return outcome;
    });
    chain = r.catch(() => undefined);
    return r;
  };

  return {
    start: () => task.start(),
    stop: () => task.stop(),
    runOnce,
    stage,
    latest(symbol) {
      const feed = bySymbol.get(symbol);
      const st = feed === undefined ? undefined : newer(state?.get(feed), staged.get(feed));
      if (st === undefined) return undefined;
      // The hub's round: `updatedAt` the observation time the router ages, `startedAt` the same.
      return { answer: st.answer, decimals: FEED_DECIMALS, updatedAt: st.observedAt, observedAt: st.observedAt, chainTime: st.updatedAt };
    },
    progress: () => ({ ...progress, answeredAt: { ...progress.answeredAt } }),
  };
}

// ----------------------------------------------------------------- the reader

export interface OracleFeedReaderOptions {
  publicClient: ChainPublicClient;
  hub: Address;
  feeds: readonly OracleFeedRef[];
  /** Default 1 000. */
  refreshMs?: number;
  now?: () => number;
  logger?: Pick<Logger, 'warn'>;
}

export interface OracleFeedReader {
  start(): void;
  stop(): Promise<void>;
  /** Reads every feed now. */
  refresh(): Promise<void>;
  /**
   * The symbol's latest answer as last read, or undefined (no feed, or not read yet). Its
   * `chainTime` is the read's, moved on by the wall time since: reads that keep failing make the
   * answer age rather than stay as fresh as it was.
   */
  answer(symbol: string): FeedAnswer | undefined;
  hasFeed(symbol: string): boolean;
}

/**
 * The feeds' latest rounds, re-read every `refreshMs` in one call (`latestRoundsOf`) with the
 * chain's time, for checks that run synchronously (the perp mark task). A failed read keeps the
 * previous answers, whose age then shows in the verdict.
 */
export function createOracleFeedReader(opts: OracleFeedReaderOptions): OracleFeedReader {
  const now = opts.now ?? venueChainNow;
  const bySymbol = new Map(opts.feeds.map((f) => [f.symbol, f.feed]));
  const answers = new Map<string, FeedAnswer & { readAt: number }>();
  const refresh = async (): Promise<void> => {
    const list = [...bySymbol.entries()];
    if (list.length === 0) return;
    let rounds;
    let block;
    const readAt = now();
    try {
      [rounds, block] = await Promise.all([
        opts.publicClient.readContract({ address: opts.hub, abi: priceFeedHubAbi, functionName: 'latestRoundsOf', args: [list.map(([, f]) => f)] }),
        opts.publicClient.getBlock({ blockTag: 'latest' }),
      ]);
    } catch (err) {
      throw toChainError(err);
    }
    list.forEach(([symbol], i) => {
      const r = rounds[i];
      answers.set(symbol, { answer: r.answer, decimals: FEED_DECIMALS, updatedAt: Number(r.updatedAt), observedAt: Number(r.startedAt), chainTime: Number(block.timestamp), readAt });
    });
  };
  const task = periodic(opts.refreshMs ?? 1_000, refresh, (err) => opts.logger?.warn({ err: toChainError(err) }, 'oracle reader: the feeds could not be read'));
  return {
    start: () => task.start(),
    stop: () => task.stop(),
    refresh,
    answer(symbol) {
      const a = answers.get(symbol);
      if (!a) return undefined;
      const { readAt, ...reading } = a;
      return { ...reading, chainTime: reading.chainTime + Math.max(0, Math.floor((now() - readAt) / 1000)) };
    },
    hasFeed: (symbol) => bySymbol.has(symbol),
  };
}
