/**
 * Liquidation and the pool (issue 19): two figures of the perpetual engine's risk machinery, in
 * process, on one core.
 *
 * 1. What a mark update costs against the open positions. One instrument, N accounts each holding one
 *    cross long of 10 lots ($1,000), all bought with an IOC placeOrder from one big resting ask (the
 *    shorts all sit in that maker's one position). Every account deposits exactly the initial margin
 *    of its leverage plus the taker fee, so its leverage decides where it is liquidated: 92 % trade
 *    at the default 10× (liquidated about 9 % below the entry), and eight tiers of 1 % each at 50×,
 *    40×, 33×, 28×, 25×, 22×, 20× and 18× (about 1.0 % to 4.6 % below). The mark then steps down
 *    through the tiers, each step crossing one tier's triggers and liquidating it through the book
 *    into a bid an absorbing account rests for it (the pool is funded as the backstop; a liquidation
 *    that reaches it or ADL fails the bench). Before the first step and after each, batches of mark
 *    updates move within a band that crosses nothing. The bench checks in the trigger heaps (read
 *    directly, untimed) that each step crosses exactly its tier and each band nothing, and in the
 *    events that exactly that tier was liquidated, each account in one step through the book.
 *    Per size: the median over the batches of the time per update (0 crossed), the median of the
 *    steps, and per liquidated position (step − 0-crossed update) ÷ positions liquidated. The sizes
 *    in BENCH_RISK_SPARSE run again with 0.1 % per tier, so that the same crossed count can be
 *    compared at ten times the open positions. Times are the process's CPU time, taken once V8's
 *    background sweeping after the forced collection has stopped (see settle()), with the wall time
 *    and the collector's pauses inside the step beside them.
 *
 * 2. Engine throughput with the liquidity pool quoting. A seeded stream of limit adds, cancels and
 *    market orders (the rules of perp-engine-bench.ts's generator) on three instruments, 64 accounts,
 *    with a mark update per instrument every N stream commands, run on fresh engines as it is and
 *    with the pool account (funded through addLiquidity) keeping five POST_ONLY levels a side on
 *    every book, requoted (cancelAll + ten placeOrders per instrument) after each mark update as a
 *    quoting worker would. Stream commands per second of each (the mark updates and the pool's
 *    commands are inside the timed loop, not in the count), best of alternating rounds, and the ratio.
 *
 *   npx tsx bench/perp-risk-bench.ts      (BENCH_RISK_SIZES=10000,100000,1000000; BENCH_RISK_SPARSE=1000000;
 *                                          BENCH_RISK_BATCH=1000 updates a batch, BENCH_RISK_BATCHES=10 a stage;
 *                                          BENCH_POOL_OPS=1000000; BENCH_POOL_REQUOTE=1000,100 (N);
 *                                          BENCH_POOL_ROUNDS=2; BENCH_PERP_SEED; BENCH_CPU_PROF=1 profiles each step)
 *
 * `runPerpRiskBench()` is exported for the main bench (`BENCH_ONLY=perp` or `perp-risk`).
 */
import { PerformanceObserver } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { CommandResult, EngineCommand, EngineEvent, LiquidationEvent, PlaceOrderAccepted } from '../src/perp/engine/engine-types.ts';
import { ceilDiv, floorDiv, PPM } from '../src/perp/engine/fixed-point.ts';
import { instrumentSpec, type InstrumentConfig } from '../src/perp/engine/instruments.ts';
import { PerpEngine, POOL_ACCOUNT } from '../src/perp/engine/perp-engine.ts';
import { imrFor } from '../src/perp/engine/risk/margin-rates.ts';
import { isLive } from '../src/perp/engine/risk/trigger-heap.ts';
import type { EngineState } from '../src/perp/engine/state/engine-state.ts';
import { startCpuProfile } from './cpu-profile.ts';
import { CANCEL, generate as generateBookStream, LIMIT, MARKET, MID } from './perp-engine-bench.ts';

export interface PerpRiskBenchOptions {
  /** Open positions per liquidation scenario, 1 % crossed a step. Default 10 000, 100 000, 1 000 000 (BENCH_RISK_SIZES). */
  sizes?: number[];
  /** Sizes run again with 0.1 % crossed a step, to tell the crossed count from the open positions. Default 1 000 000 (BENCH_RISK_SPARSE; empty: none). */
  sparseSizes?: number[];
  /** Mark updates per 0-crossed batch. Default 1 000 (BENCH_RISK_BATCH). */
  batch?: number;
  /** 0-crossed batches before the first step and after each. Default 10 (BENCH_RISK_BATCHES). */
  batches?: number;
  /** Timed stream commands of the pool scenario. Default 1 000 000 (BENCH_POOL_OPS). */
  poolOps?: number;
  /** Stream commands between mark updates (and the pool's requotes), one scenario each. Default 1 000 and 100 (BENCH_POOL_REQUOTE). */
  requoteEvery?: number[];
  /** Alternating rounds of the pool scenario, best of each. Default 2 (BENCH_POOL_ROUNDS). */
  rounds?: number;
  /** Default 1 (BENCH_PERP_SEED). */
  seed?: number;
  print?: (line: string) => void;
}

export interface LiquidationFigures {
  positions: number;
  /** Positions liquidated by each 1 % step (= positions / 100). */
  crossed: number;
  buildSeconds: number;
  /** JS heap the built state takes (after full collections, MB). */
  heapMb: number;
  /** Median over the batches of the CPU time per mark update that crosses nothing (µs), and the wall time. */
  zeroUs: number;
  zeroWallUs: number;
  batches: number;
  /** Median over the steps of the CPU time of a mark update crossing 1 % (ms), and the wall time. */
  stepMs: number;
  stepWallMs: number;
  stepsMs: number[];
  stepsWallMs: number[];
  /** (step − 0-crossed update) ÷ crossed, CPU and wall (µs). */
  perLiquidationUs: number;
  perLiquidationWallUs: number;
  /** Events one step emits (median). */
  stepEvents: number;
  /** Collector pauses inside a step (median, wall ms). */
  stepGcMs: number;
}

export interface PoolFigures {
  ops: number;
  instruments: number;
  requoteEvery: number;
  plainOpsPerSec: number;
  poolOpsPerSec: number;
  /** pool ÷ plain. */
  ratio: number;
  /** Commands per second of the pool run counting the mark updates and the pool's own commands too. */
  poolCommandsPerSec: number;
  poolCommands: number;
  poolPostOnlyRejected: number;
  plain: StreamCounts;
  pool: StreamCounts;
}

export interface StreamCounts {
  accepted: number;
  rejected: number;
  trades: number;
  /** Trades in which the pool was the maker. */
  poolTrades: number;
  rejectCodes: Record<string, number>;
}

export interface PerpRiskBenchResult {
  liquidation: LiquidationFigures[];
  pool: PoolFigures[];
  table: string;
}

/** A full collection before every timed part (`--expose-gc` set at runtime, as perp-engine-bench does). */
setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;

const fmt = (n: number) => n.toLocaleString('en-US');
const median = (xs: number[]) => {
  const v = [...xs].sort((a, b) => a - b);
  return v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
};
const address = (n: number) => '0x' + n.toString(16).padStart(40, '0');

function must(r: CommandResult, what: string): CommandResult {
  if (!r.ok) throw new Error(`perp risk bench: ${what} refused: ${r.code} ${r.message}`);
  return r;
}

// ---------------------------------------------------------------------------------------------
// 1. Liquidation.

/** $100 a lot at the mid (0.01 × 0.01 → 100 micro-USD per tick·lot); MM 1 %, IM floor 2 % (50×). */
const LIQ: InstrumentConfig = {
  symbol: 'LIQ-USD', tickSize: '0.01', lotSize: '0.01', minSizeLots: 1, maxSizeLots: 1_000_000_000, maxPriceTicks: 100_000_000,
  maxLeverage: 50, initialMarginRatioPpm: 20_000, maintenanceMarginRatioPpm: 10_000, makerFeeRatePpm: 200, takerFeeRatePpm: 500,
  fundingIntervalMs: 3_600_000, priceBandPpm: 0, markStaleMs: 0, liquidationFeePpm: 5_000,
};
/** Lots per small account: $1,000 of notional, below the partial-liquidation threshold. */
const LOTS = 10;
/** The tiers' leverages, liquidated in this order as the mark falls. */
const TIER_LEVERAGE = [50, 40, 33, 28, 25, 22, 20, 18];
/** Everyone else: the engine's default leverage. */
const BASE_LEVERAGE = 10;
/** Ticks the 0-crossed batches move the mark up from the last step (never against a long). */
const BAND = 1_000;

const MAKER = address(0xa11);
const ABSORBER = address(0xa12);
const LP = address(0xa13);
const FIRST_ACCOUNT = 0x1_0000_0000;

interface Tier {
  leverage: number;
  /** Collateral deposited: the initial margin plus the taker fee, so the equity after the buy is the IM. */
  deposit: bigint;
  /** The highest mark at which the account is below maintenance. */
  liquidatedAt: number;
  /** The mark of this tier's step. */
  step: number;
  /** Bankruptcy price of the position at the step, and the absorbing bid's price just above it. */
  bankruptcy: number;
  bid: number;
}

/** Margin arithmetic of one 10-lot long bought at MID with the given leverage (the engine's rules). */
function tierOf(leverage: number): Tier {
  const spec = instrumentSpec(LIQ);
  const unit = spec.unitMicros;
  const notional = BigInt(LOTS * MID) * unit;
  const im = ceilDiv(notional * imrFor(spec, leverage), PPM);
  const fee = ceilDiv(notional * BigInt(spec.takerFeeRatePpm), PPM);
  const per = BigInt(LOTS) * unit;
  const equityAt = (p: number) => im + per * BigInt(p - MID);
  const mmAt = (p: number) => ceilDiv(per * BigInt(p) * BigInt(spec.maintenanceMarginRatioPpm), PPM);
  let p = MID;
  while (equityAt(p) >= mmAt(p)) p--;
  // A little below the threshold, so the step does not sit on a rounding edge.
  const step = p - 100;
  const bankruptcy = step - Number(floorDiv(equityAt(step), per));
  return { leverage, deposit: im + fee, liquidatedAt: p, step, bankruptcy, bid: Math.floor((step + bankruptcy) / 2) };
}

/** Live triggers a mark of `ticks` crosses: longs at or above it, shorts at or below (an untimed O(n) scan). */
function crossedAt(engine: PerpEngine, ticks: number): number {
  const inst = (engine as unknown as { s: EngineState }).s.instruments.get(LIQ.symbol)!;
  let n = 0;
  for (const e of inst.longTriggers) if (e.trig >= ticks && isLive(e)) n++;
  for (const e of inst.shortTriggers) if (e.trig <= ticks && isLive(e)) n++;
  return n;
}

function buildLiquidationState(n: number, tiers: Tier[], base: Tier, every = 100): { engine: PerpEngine; ts: number } {
  if (n % every !== 0) throw new Error(`perp risk bench: sizes must be multiples of ${every}`);
  const engine = new PerpEngine({ instruments: [LIQ] });
  const symbol = LIQ.symbol;
  const perTier = n / every;
  let ts = 1;
  must(engine.apply({ kind: 'setMarkPrice', id: 'm', ts: ts++, symbol, markPriceTicks: MID, indexPriceTicks: MID }), 'mark');
  // The backstop: funded, never expected to be used (the bench fails if it is).
  must(engine.apply({ kind: 'deposit', id: 'lp', ts: ts++, account: LP, amount: 10n ** 14n }), 'LP deposit');
  must(engine.apply({ kind: 'addLiquidity', id: 'lp', ts: ts++, account: LP, amount: 10n ** 14n, lockupMs: 0 }), 'addLiquidity');
  // The maker: one ask for every small account's 10 lots.
  must(engine.apply({ kind: 'deposit', id: 'mk', ts: ts++, account: MAKER, amount: 10n ** 15n }), 'maker deposit');
  must(engine.apply({ kind: 'setLeverage', id: 'mk', ts: ts++, account: MAKER, symbol, leverage: 50 }), 'maker leverage');
  must(engine.apply({ kind: 'placeOrder', id: 'mk', ts: ts++, account: MAKER, symbol, side: 'SELL', type: 'LIMIT', priceTicks: MID, sizeLots: n * LOTS }), 'maker ask');
  // The absorber: one bid per tier between its step and its bankruptcy price, sized to take it all.
  must(engine.apply({ kind: 'deposit', id: 'ab', ts: ts++, account: ABSORBER, amount: 10n ** 15n }), 'absorber deposit');
  must(engine.apply({ kind: 'setLeverage', id: 'ab', ts: ts++, account: ABSORBER, symbol, leverage: 50 }), 'absorber leverage');
  for (const t of tiers) {
    must(engine.apply({ kind: 'placeOrder', id: 'ab', ts: ts++, account: ABSORBER, symbol, side: 'BUY', type: 'LIMIT', priceTicks: t.bid, sizeLots: perTier * LOTS }), 'absorber bid');
  }
  const dep: EngineCommand = { kind: 'deposit', id: 'd', ts: 0, account: '', amount: 0n };
  const lev: EngineCommand = { kind: 'setLeverage', id: 'l', ts: 0, account: '', symbol, leverage: 0 };
  const buy: EngineCommand = { kind: 'placeOrder', id: 'b', ts: 0, account: '', symbol, side: 'BUY', type: 'LIMIT', timeInForce: 'IOC', priceTicks: MID, sizeLots: LOTS };
  for (let i = 0; i < n; i++) {
    const account = address(FIRST_ACCOUNT + i);
    // Tiers interleaved through the address space: account i is in tier i mod `every` when there is one.
    const k = i % every;
    const tier = k < tiers.length ? tiers[k] : base;
    dep.ts = ts++;
    dep.account = account;
    dep.amount = tier.deposit;
    must(engine.apply(dep), 'deposit');
    if (tier !== base) {
      lev.ts = ts++;
      lev.account = account;
      lev.leverage = tier.leverage;
      must(engine.apply(lev), 'setLeverage');
    }
    buy.ts = ts++;
    buy.account = account;
    const r = must(engine.apply(buy), 'buy') as PlaceOrderAccepted;
    if (r.order.filledLots !== LOTS) throw new Error('perp risk bench: a small account did not fill');
  }
  return { engine, ts };
}

/** BENCH_CPU_PROF=1: a V8 CPU profile of each 1 % step → bench-profiles/perp-risk-<positions>-<leverage>x.cpuprofile. */
const PROFILE = Boolean(process.env.BENCH_CPU_PROF);

/**
 * After a full collection V8 sweeps the heap on background threads; on this 2-core machine they took
 * the core from the main thread through the next step (measured: at 100 000 positions the main thread
 * waited on the run queue for 25–45 µs of every liquidation's 35–55, and mostly not at all at 10 000,
 * whose heap is swept at once). So wait until the process is idle again (under 10 % of a core over 10 ms,
 * at most 3 s) before timing.
 */
async function settle(): Promise<void> {
  const until = performance.now() + 3_000;
  while (performance.now() < until) {
    const c = process.cpuUsage();
    await new Promise((r) => setTimeout(r, 10));
    const d = process.cpuUsage(c);
    if (d.user + d.system < 1_000) return;
  }
}

/** Wall and CPU time of `fn` in µs (CPU: the whole process, idle but for this thread after settle()). */
function timed<T>(fn: () => T): { value: T; wallUs: number; cpuUs: number } {
  const c = process.cpuUsage();
  const start = performance.now();
  const value = fn();
  const wallUs = (performance.now() - start) * 1000;
  const d = process.cpuUsage(c);
  return { value, wallUs, cpuUs: d.user + d.system };
}

/** `every`: one account in `every` per tier (100: 1 % of the positions cross at each step). */
async function runLiquidation(n: number, every: number, batch: number, batches: number, print: (l: string) => void, quiet = false): Promise<LiquidationFigures> {
  const tiers = TIER_LEVERAGE.map(tierOf);
  const base = tierOf(BASE_LEVERAGE);
  const symbol = LIQ.symbol;
  const perTier = n / every;
  collect();
  const heapBefore = process.memoryUsage().heapUsed;
  const t0 = performance.now();
  const built = buildLiquidationState(n, tiers, base, every);
  const engine = built.engine;
  let ts = built.ts;
  const buildSeconds = (performance.now() - t0) / 1000;
  collect();
  const heapMb = (process.memoryUsage().heapUsed - heapBefore) / 1e6;
  if (!quiet) print(`perp risk bench: ${fmt(n)} positions built in ${buildSeconds.toFixed(1)} s, heap ${fmt(Math.round(heapMb))} MB`);
  await settle();

  const mark: EngineCommand = { kind: 'setMarkPrice', id: 'mark', ts: 0, symbol, markPriceTicks: MID, indexPriceTicks: MID };
  const zeroCpu: number[] = [];
  const zeroWall: number[] = [];
  /**
   * Batches of mark updates alternating between `high` and `high − BAND`, µs per update each. Many
   * short batches and their median: on a shared machine a batch the scheduler preempts is an outlier,
   * not a shift of the figure.
   */
  const zeroBatches = (high: number): void => {
    const low = high - BAND;
    if (crossedAt(engine, low) !== 0) throw new Error(`perp risk bench: the band at ${low} crosses triggers`);
    for (let b = 0; b < batches; b++) {
      const t = timed(() => {
        for (let j = 0; j < batch; j++) {
          mark.ts = ts++;
          mark.markPriceTicks = mark.indexPriceTicks = j & 1 ? low : high;
          const r = engine.apply(mark);
          if (r.events.length !== 1) throw new Error('perp risk bench: a 0-crossed mark update did more than move the mark');
        }
      });
      zeroCpu.push(t.cpuUs / batch);
      zeroWall.push(t.wallUs / batch);
    }
  };

  zeroBatches(MID);
  const stepCpu: number[] = [];
  const stepWall: number[] = [];
  // Collector pauses on the main thread, to tell what part of a step is young-generation GC.
  const pauses: Array<{ start: number; end: number }> = [];
  const windows: Array<{ start: number; end: number }> = [];
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) pauses.push({ start: e.startTime, end: e.startTime + e.duration });
  });
  observer.observe({ entryTypes: ['gc'] });
  const stepEvents: number[] = [];
  for (let k = 0; k < tiers.length; k++) {
    const tier = tiers[k];
    const crossed = crossedAt(engine, tier.step);
    if (crossed !== perTier) throw new Error(`perp risk bench: the step to ${tier.step} crosses ${crossed} positions, expected ${perTier}`);
    collect();
    await settle();
    mark.ts = ts++;
    mark.markPriceTicks = mark.indexPriceTicks = tier.step;
    const profile = PROFILE && !quiet ? await startCpuProfile() : null;
    const from = performance.now();
    const t = timed(() => engine.apply(mark));
    windows.push({ start: from, end: performance.now() });
    await profile?.stop(`bench-profiles/perp-risk-${n}-${tier.leverage}x.cpuprofile`);
    const r = must(t.value, 'step');
    stepCpu.push(t.cpuUs);
    stepWall.push(t.wallUs);
    stepEvents.push(r.events.length);
    const liquidations = (r.events as EngineEvent[]).filter((e): e is LiquidationEvent => e.type === 'liquidation');
    const accounts = new Set(liquidations.map((e) => e.account));
    const book = liquidations.filter((e) => e.method === 'BOOK' && e.closedLots === LOTS).length;
    if (accounts.size !== perTier || book !== perTier || liquidations.length !== perTier) {
      throw new Error(`perp risk bench: the ${tier.leverage}× step liquidated ${accounts.size} accounts (${book} fully through the book, ${liquidations.length} steps), expected ${perTier}`);
    }
    zeroBatches(tier.step + BAND);
  }
  await new Promise((r) => setTimeout(r, 0));
  observer.disconnect();
  const stepGcMs = windows.map((w) => pauses.reduce((sum, p) => sum + Math.max(0, Math.min(p.end, w.end) - Math.max(p.start, w.start)), 0));
  const zeroUs = median(zeroCpu);
  const zeroWallUs = median(zeroWall);
  const stepUs = median(stepCpu);
  const stepWallUs = median(stepWall);
  const out: LiquidationFigures = {
    positions: n, crossed: perTier, buildSeconds, heapMb, zeroUs, zeroWallUs, batches: zeroCpu.length,
    stepMs: stepUs / 1000, stepWallMs: stepWallUs / 1000, stepsMs: stepCpu.map((u) => u / 1000), stepsWallMs: stepWall.map((u) => u / 1000),
    perLiquidationUs: (stepUs - zeroUs) / perTier, perLiquidationWallUs: (stepWallUs - zeroWallUs) / perTier, stepEvents: median(stepEvents),
    stepGcMs: median(stepGcMs),
  };
  if (!quiet) {
    const list = (xs: number[]) => xs.map((m) => m.toFixed(1)).join(' / ');
    print(
      `perp risk bench: ${fmt(n)} positions: 0 crossed ${zeroUs.toFixed(2)} µs CPU, ${zeroWallUs.toFixed(2)} µs wall (batches ${Math.min(...zeroWall).toFixed(2)}..${Math.max(...zeroWall).toFixed(2)}); ` +
        `crossing CPU ${list(out.stepsMs)} ms, wall ${list(out.stepsWallMs)} ms (GC ${list(stepGcMs)} ms); per liquidation ${out.perLiquidationUs.toFixed(1)} µs CPU, ${out.perLiquidationWallUs.toFixed(1)} µs wall`,
    );
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// 2. The pool quoting.

const BOOKS = ['PA-USD', 'PB-USD', 'PC-USD'];
const STREAM_ACCOUNTS = 64;
/** The pool's quotes: LEVELS a side, the first GAP ticks from the mark, then every STEP ticks, SIZE lots each. */
const LEVELS = 5;
const GAP = 2;
const STEP = 3;
const SIZE = 10;

const bookConfig = (symbol: string): InstrumentConfig => ({
  symbol, tickSize: '0.01', lotSize: '0.01', minSizeLots: 1, maxSizeLots: 1_000_000, maxPriceTicks: 100_000_000,
  maxLeverage: 50, initialMarginRatioPpm: 20_000, maintenanceMarginRatioPpm: 10_000, makerFeeRatePpm: 200, takerFeeRatePpm: 500,
  fundingIntervalMs: 28_800_000, priceBandPpm: 0,
});

/** Untimed `prefill` limit adds, then `ops` timed operations, interleaved over the books. */
interface Stream {
  prefill: number;
  total: number;
  book: Uint8Array;
  kind: Uint8Array;
  buy: Uint8Array;
  price: Int32Array;
  size: Int32Array;
  /** Limit: the new order's id; cancel: the id of an order resting at that moment (in the stream alone). */
  id: Int32Array;
  account: Uint8Array;
}

/**
 * perp-engine-bench.ts's stream on each book (its generator, seeded per book), interleaved one
 * operation each in turn: untimed prefills first, then the timed operations. Order ids are offset per
 * book so that they stay unique.
 */
function generate(seed: number, depth: number, opsPerBook: number, spread: number, books: number): Stream {
  const perBook = depth + opsPerBook;
  const total = perBook * books;
  const s: Stream = {
    prefill: depth * books, total, book: new Uint8Array(total), kind: new Uint8Array(total), buy: new Uint8Array(total),
    price: new Int32Array(total), size: new Int32Array(total), id: new Int32Array(total), account: new Uint8Array(total),
  };
  for (let b = 0; b < books; b++) {
    const one = generateBookStream(seed * 101 + b, depth, opsPerBook, spread, STREAM_ACCOUNTS);
    const idBase = b * perBook;
    for (let j = 0; j < perBook; j++) {
      const i = j < depth ? j * books + b : depth * books + (j - depth) * books + b;
      s.book[i] = b;
      s.kind[i] = one.kind[j];
      s.buy[i] = one.buy[j];
      s.price[i] = one.price[j];
      s.size[i] = one.size[j];
      s.id[i] = one.id[j] === 0 ? 0 : one.id[j] + idBase;
      s.account[i] = one.account[j];
    }
  }
  return s;
}

interface StreamRun extends StreamCounts {
  ms: number;
  poolCommands: number;
  poolPostOnlyRejected: number;
  markCommands: number;
}

/** The stream through a fresh engine; with `pool`, the pool quotes every book and requotes after each mark update. */
function runStream(s: Stream, requoteEvery: number, pool: boolean): StreamRun {
  const engine = new PerpEngine({ instruments: BOOKS.map(bookConfig) });
  const accounts = Array.from({ length: STREAM_ACCOUNTS }, (_, i) => address(0xb000 + i));
  let ts = 1;
  for (const account of accounts) must(engine.apply({ kind: 'deposit', id: 'd', ts: ts++, account, amount: 10n ** 15n }), 'deposit');
  const marks: EngineCommand[] = BOOKS.map((symbol) => ({ kind: 'setMarkPrice', id: 'mark', ts: 0, symbol, markPriceTicks: MID, indexPriceTicks: MID }));
  for (const m of marks) {
    m.ts = ts++;
    must(engine.apply(m), 'mark');
  }
  let poolCommands = 0;
  let poolPostOnlyRejected = 0;
  if (pool) {
    must(engine.apply({ kind: 'deposit', id: 'lp', ts: ts++, account: LP, amount: 10n ** 15n }), 'LP deposit');
    must(engine.apply({ kind: 'addLiquidity', id: 'lp', ts: ts++, account: LP, amount: 10n ** 15n, lockupMs: 0 }), 'addLiquidity');
  }
  // What a quoting worker sends per book: cancel its quotes, then LEVELS POST_ONLY levels a side around the mark.
  const cancel = BOOKS.map((symbol): EngineCommand => ({ kind: 'cancelAll', id: 'q', ts: 0, account: POOL_ACCOUNT, symbol }));
  const quotes = BOOKS.map((symbol) => {
    const out: EngineCommand[] = [];
    for (let j = 0; j < LEVELS; j++) {
      for (const side of ['BUY', 'SELL'] as const) {
        const priceTicks = side === 'BUY' ? MID - GAP - j * STEP : MID + GAP + j * STEP;
        out.push({ kind: 'placeOrder', id: 'q', ts: 0, account: POOL_ACCOUNT, symbol, side, type: 'LIMIT', timeInForce: 'POST_ONLY', priceTicks, sizeLots: SIZE });
      }
    }
    return out;
  });
  const requote = () => {
    for (let b = 0; b < BOOKS.length; b++) {
      // Fresh command objects, as they would arrive from the worker.
      must(engine.apply({ ...cancel[b], ts }), 'pool cancel');
      poolCommands++;
      for (const q of quotes[b]) {
        const r = engine.apply({ ...q, ts });
        poolCommands++;
        if (!r.ok) {
          if (r.code !== 'POST_ONLY_WOULD_CROSS') throw new Error(`perp risk bench: a pool quote was refused: ${r.code} ${r.message}`);
          poolPostOnlyRejected++;
        }
      }
    }
  };
  if (pool) requote();

  const engineId = new Int32Array(s.total + 1);
  const owner = new Uint8Array(s.total + 1);
  let accepted = 0;
  let rejected = 0;
  let trades = 0;
  let poolTrades = 0;
  let markCommands = 0;
  const rejectCodes: Record<string, number> = {};
  let t0 = 0;
  for (let i = 0; i < s.total; i++) {
    if (i === s.prefill) {
      collect();
      t0 = performance.now();
      accepted = rejected = trades = poolTrades = 0;
      poolCommands = poolPostOnlyRejected = 0;
      for (const k in rejectCodes) delete rejectCodes[k];
    }
    const k = s.kind[i];
    let r: CommandResult;
    if (k === CANCEL) {
      const sid = s.id[i];
      r = engine.apply({ kind: 'cancelOrder', id: 'c', ts, account: accounts[owner[sid]], orderId: engineId[sid] });
    } else {
      // A fresh command object per order, as the API hands them in.
      const cmd: EngineCommand = {
        kind: 'placeOrder', id: 'c', ts, account: accounts[s.account[i]], symbol: BOOKS[s.book[i]], side: s.buy[i] === 1 ? 'BUY' : 'SELL',
        type: k === LIMIT ? 'LIMIT' : 'MARKET', priceTicks: k === LIMIT ? s.price[i] : undefined, sizeLots: s.size[i],
      };
      r = engine.apply(cmd);
    }
    if (r.ok) {
      accepted++;
      if (k !== CANCEL) {
        const placed = r as PlaceOrderAccepted;
        const fills = placed.fills;
        trades += fills.length;
        for (let f = 0; f < fills.length; f++) if (fills[f].makerAccount === POOL_ACCOUNT) poolTrades++;
        if (k === LIMIT) {
          engineId[s.id[i]] = placed.order.orderId;
          owner[s.id[i]] = s.account[i];
        }
      }
    } else {
      rejected++;
      rejectCodes[r.code] = (rejectCodes[r.code] ?? 0) + 1;
    }
    ts++;
    if (i >= s.prefill && (i - s.prefill + 1) % requoteEvery === 0) {
      // The price feed's mark update for every book (the mark stays at the mid), then the quoting worker.
      for (const m of marks) {
        m.ts = ts;
        must(engine.apply(m), 'mark');
        markCommands++;
      }
      if (pool) requote();
      ts++;
    }
  }
  const ms = performance.now() - t0;
  return { ms, accepted, rejected, trades, poolTrades, rejectCodes: { ...rejectCodes }, poolCommands, poolPostOnlyRejected, markCommands };
}

function runPool(opts: { ops: number; seed: number; requoteEvery: number[]; rounds: number; print: (l: string) => void }): PoolFigures[] {
  const books = BOOKS.length;
  const opsPerBook = Math.ceil(opts.ops / books);
  // Warm-up on a small stream, both ways, so the timed runs measure compiled code.
  const warm = generate(opts.seed + 1000, 2_000, 30_000, 200, books);
  runStream(warm, opts.requoteEvery[0], false);
  runStream(warm, opts.requoteEvery[0], true);
  opts.print(`perp risk bench: generating the pool stream (${books} books of 5,000 resting, ${fmt(opsPerBook * books)} ops)`);
  const s = generate(opts.seed, 5_000, opsPerBook, 200, books);
  const ops = s.total - s.prefill;
  const out: PoolFigures[] = [];
  for (const every of opts.requoteEvery) {
    let plain: StreamRun | null = null;
    let pooled: StreamRun | null = null;
    // Alternating rounds, best of each: a run's speed depends on the heap the previous one left.
    for (let round = 1; round <= opts.rounds; round++) {
      const a = runStream(s, every, false);
      const b = runStream(s, every, true);
      opts.print(`perp risk bench: marks every ${fmt(every)}, round ${round}: without the pool ${fmt(Math.round(a.ms))} ms, with it ${fmt(Math.round(b.ms))} ms`);
      if (plain === null || a.ms < plain.ms) plain = a;
      if (pooled === null || b.ms < pooled.ms) pooled = b;
    }
    const p = plain as StreamRun;
    const q = pooled as StreamRun;
    const plainOpsPerSec = Math.round((ops / p.ms) * 1000);
    const poolOpsPerSec = Math.round((ops / q.ms) * 1000);
    const counts = (r: StreamRun): StreamCounts => ({ accepted: r.accepted, rejected: r.rejected, trades: r.trades, poolTrades: r.poolTrades, rejectCodes: r.rejectCodes });
    out.push({
      ops, instruments: books, requoteEvery: every, plainOpsPerSec, poolOpsPerSec,
      ratio: Math.round((poolOpsPerSec / plainOpsPerSec) * 1000) / 1000,
      poolCommandsPerSec: Math.round(((ops + q.markCommands + q.poolCommands) / q.ms) * 1000),
      poolCommands: q.poolCommands, poolPostOnlyRejected: q.poolPostOnlyRejected, plain: counts(p), pool: counts(q),
    });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------

export async function runPerpRiskBench(opts: PerpRiskBenchOptions = {}): Promise<PerpRiskBenchResult> {
  const list = (v: string) => v.split(',').map(Number);
  const sizes = opts.sizes ?? list(process.env.BENCH_RISK_SIZES ?? '10000,100000,1000000');
  const sparse = opts.sparseSizes ?? list(process.env.BENCH_RISK_SPARSE ?? '1000000').filter((n) => n > 0);
  const batch = opts.batch ?? Number(process.env.BENCH_RISK_BATCH ?? 1_000);
  const batches = opts.batches ?? Number(process.env.BENCH_RISK_BATCHES ?? 10);
  const poolOps = opts.poolOps ?? Number(process.env.BENCH_POOL_OPS ?? 1_000_000);
  const requoteEvery = opts.requoteEvery ?? list(process.env.BENCH_POOL_REQUOTE ?? '1000,100');
  const rounds = Math.max(1, opts.rounds ?? Number(process.env.BENCH_POOL_ROUNDS ?? 2));
  const seed = opts.seed ?? Number(process.env.BENCH_PERP_SEED ?? 1);
  const print = opts.print ?? (() => {});

  // Warm-up: the build, the mark updates and the liquidation path compiled before anything is timed.
  await runLiquidation(30_000, 100, batch, 2, print, true);
  const liquidation: LiquidationFigures[] = [];
  for (const [n, every] of [...sizes.map((n) => [n, 100]), ...sparse.map((n) => [n, 1_000])]) {
    liquidation.push(await runLiquidation(n, every, batch, batches, print));
    collect();
  }
  const pool = runPool({ ops: poolOps, seed, requoteEvery, rounds, print });

  const base = liquidation[0];
  const codes = (c: Record<string, number>) => Object.entries(c).map(([k, v]) => `${k} ${fmt(v)}`).join(', ') || 'none';
  const lines = [
    `liquidation: mark updates against N open cross longs of 10 lots on one instrument; ${TIER_LEVERAGE.length} tiers of 1 % (0.1 % in the last rows) at ${TIER_LEVERAGE.join('/')}×, the rest at ${BASE_LEVERAGE}× ` +
      `(0 crossed: median of ${base.batches} batches of ${fmt(batch)} updates; crossing: median of the ${TIER_LEVERAGE.length} steps, each liquidating one tier through the book; ` +
      `per liquidation: (crossing − 0 crossed) ÷ liquidated; CPU time of the process once its background GC has settled, wall time in the last column; one core, in process)`,
    '',
    '| open positions | crossed a step | build | heap | update, 0 crossed | ÷ first | update crossing | per liquidation | ÷ first | wall: 0 crossed, crossing (of which GC), per liquidation |',
    '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...liquidation.map(
      (l) =>
        `| ${fmt(l.positions)} | ${fmt(l.crossed)} (${l.crossed * 100 === l.positions ? '1 %' : `${((l.crossed / l.positions) * 100).toFixed(1)} %`}) | ` +
        `${l.buildSeconds.toFixed(1)} s | ${fmt(Math.round(l.heapMb))} MB | ${l.zeroUs.toFixed(2)} µs | ${(l.zeroUs / base.zeroUs).toFixed(2)} | ` +
        `${l.stepMs.toFixed(2)} ms | ${l.perLiquidationUs.toFixed(1)} µs | ${(l.perLiquidationUs / base.perLiquidationUs).toFixed(2)} | ` +
        `${l.zeroWallUs.toFixed(2)} µs, ${l.stepWallMs.toFixed(2)} ms (${l.stepGcMs.toFixed(2)}), ${l.perLiquidationWallUs.toFixed(1)} µs |`,
    ),
    '',
    `the pool quoting: ${fmt(pool[0].ops)} stream commands over ${pool[0].instruments} books (seed ${seed}, 5,000 resting each, 64 accounts), a mark update per book every N stream commands; ` +
      `with the pool, ${LEVELS} POST_ONLY levels a side of ${SIZE} lots per book, requoted after each mark update (cancelAll + ${2 * LEVELS} placeOrders a book); best of ${rounds} alternating rounds`,
    '',
    '| N | stream ops/s without the pool | with the pool quoting | ratio | trades (the pool made) | pool commands (POST_ONLY refused) | all commands/s with the pool |',
    '| ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...pool.map(
      (p) =>
        `| ${fmt(p.requoteEvery)} | ${fmt(p.plainOpsPerSec)} | ${fmt(p.poolOpsPerSec)} | **${p.ratio.toFixed(3)}** | ${fmt(p.plain.trades)} → ${fmt(p.pool.trades)} (${fmt(p.pool.poolTrades)}) | ` +
        `${fmt(p.poolCommands)} (${fmt(p.poolPostOnlyRejected)}) | ${fmt(p.poolCommandsPerSec)} |`,
    ),
    '',
    ...pool.map((p) => `N = ${fmt(p.requoteEvery)}: stream rejections without the pool: ${codes(p.plain.rejectCodes)}; with it: ${codes(p.pool.rejectCodes)}`),
  ];
  return { liquidation, pool, table: lines.join('\n') };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runPerpRiskBench({ print: (l) => console.error(l) }).then(
    (r) => console.log(r.table),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
