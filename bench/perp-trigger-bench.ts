/**
 * Trigger orders (issue 29): what a mark update costs against N resting stop and take-profit orders
 * when it crosses 1 % of them, in process, on one core, on the engine itself (PerpEngine).
 *
 * One instrument ($200, 5 % price band), N trigger orders (MARK) placed round-robin by N / 10
 * accounts, each with a deposit. Every order opens exposure (none is reduce-only), so each holds a
 * reserve and, when it fires, enters as a MARKET order of 10 lots. TIERS tiers of 1 % of N sit just
 * above the mark, interleaved through the orders (order i is in tier i mod 100 when there is one;
 * i mod 1 000 in the 0.1 % runs):
 * tier k's triggers are between MID + 10k + 1 and MID + 10k + 10 ticks, half BUY STOP_MARKET and half
 * SELL TAKE_PROFIT_MARKET (both fire on a rise). The other 100 − TIERS % rest far from the mark (5 %
 * to 30 % away, both directions and the four kinds of trigger), so they sit in the heaps a step
 * pops from. A market maker rests one order of 10 lots for every order a step fires (asks above the
 * steps for the buys, bids below the mark for the sells), so each fired order fills in full against
 * one maker order.
 *
 * Step k sets the mark to MID + 10(k + 1): it fires exactly tier k (checked in its events: that many
 * orderTriggered, as many trades, nothing expired). Before the first step and after each, batches of
 * mark updates move within 5 ticks below the last step and cross nothing (one event each). The
 * baseline is the same updates on an engine holding the maker's book and no triggers. Per size: the
 * median 0-crossed update, the median step, and per triggered order (step − baseline update) ÷ fired.
 * Times are the process's CPU time once V8's background sweeping has stopped (perp-risk-bench.ts's
 * settle()), the wall time beside them.
 *
 *   npx tsx bench/perp-trigger-bench.ts      (BENCH_TRIGGER_SIZES=10000,100000,1000000; BENCH_TRIGGER_SPARSE=1000000
 *                                             (0.1 % a step: the fired count of the size ten times smaller); BENCH_TRIGGER_TIERS=8;
 *                                             BENCH_TRIGGER_BATCH=1000 updates a batch, BENCH_TRIGGER_BATCHES=5 a stage;
 *                                             BENCH_CPU_PROF=1 profiles each step → bench-profiles/perp-trigger-<N>-<k>.cpuprofile)
 *
 * `runPerpTriggerBench()` is exported for the main bench (`BENCH_ONLY=perp-triggers` or `perp`).
 */
import { PerformanceObserver } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { CommandResult, EngineCommand, EngineEvent, PlaceOrderCommand } from '../src/perp/engine/engine-types.ts';
import type { InstrumentConfig } from '../src/perp/engine/instruments.ts';
import { PerpEngine } from '../src/perp/engine/perp-engine.ts';
import { startCpuProfile } from './cpu-profile.ts';

export interface PerpTriggerBenchOptions {
  /** Resting trigger orders per scenario. Default 10 000, 100 000, 1 000 000 (BENCH_TRIGGER_SIZES). */
  sizes?: number[];
  /** Sizes run again with 0.1 % crossed a step: the fired count of a size ten times smaller. Default 1 000 000 (BENCH_TRIGGER_SPARSE; empty: none). */
  sparseSizes?: number[];
  /** Steps per scenario, each crossing 1 % of N. Default 8 (BENCH_TRIGGER_TIERS). */
  tiers?: number;
  /** Mark updates per 0-crossed batch. Default 1 000 (BENCH_TRIGGER_BATCH). */
  batch?: number;
  /** 0-crossed batches before the first step and after each. Default 5 (BENCH_TRIGGER_BATCHES). */
  batches?: number;
  print?: (line: string) => void;
}

export interface TriggerFigures {
  /** Trigger orders resting before the first step. */
  resting: number;
  accounts: number;
  /** Orders each step fires (N / 100). */
  fired: number;
  buildSeconds: number;
  /** JS heap the built state takes beyond the empty engine's (after full collections), MB. */
  heapMb: number;
  /** Median CPU µs of a mark update crossing nothing, with N resting, and its wall time. */
  zeroUs: number;
  zeroWallUs: number;
  /** Median over the steps of the CPU time of a mark update crossing 1 % (ms), and the wall time. */
  stepMs: number;
  stepWallMs: number;
  stepsMs: number[];
  /** (step − the baseline update) ÷ fired: CPU and wall, µs. */
  perTriggeredUs: number;
  perTriggeredWallUs: number;
  /** The least of the steps, per triggered order (CPU µs): the figure with the least of the machine's noise in it. */
  bestPerTriggeredUs: number;
  /** Events one step emits (median) and the collector's pauses inside a step (median, wall ms). */
  stepEvents: number;
  stepGcMs: number;
}

export interface PerpTriggerBenchResult {
  /** The baseline: the same mark updates on an engine with the maker's book and no triggers (CPU µs, wall µs). */
  baselineUs: number;
  baselineWallUs: number;
  sizes: TriggerFigures[];
  /** perTriggeredUs of the largest size ÷ of the smallest (the target: about 1, flat in the resting count). */
  flatness: number;
  table: string;
}

setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;

const fmt = (n: number) => n.toLocaleString('en-US');
const median = (xs: number[]) => {
  const v = [...xs].sort((a, b) => a - b);
  return v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
};
const address = (n: number) => '0x' + n.toString(16).padStart(40, '0');

function must(r: CommandResult, what: string): CommandResult {
  if (!r.ok) throw new Error(`perp trigger bench: ${what} refused: ${r.code} ${r.message}`);
  return r;
}

/** An AAPL-like perpetual: $0.01 ticks, 0.01 lots, the default 5 % band and mark staleness. */
const TRG: InstrumentConfig = {
  symbol: 'TRG-USD', tickSize: '0.01', lotSize: '0.01', minSizeLots: 1, maxSizeLots: 1_000_000_000, maxPriceTicks: 100_000_000,
  maxLeverage: 20, initialMarginRatioPpm: 50_000, maintenanceMarginRatioPpm: 25_000, makerFeeRatePpm: 200, takerFeeRatePpm: 500,
  fundingIntervalMs: 3_600_000, priceBandPpm: 50_000,
};
const SYMBOL = TRG.symbol;
const MID = 20_000;
/** Lots of every trigger order and of every maker order ($20 at MID). */
const LOTS = 10;
/** Trigger orders per account. */
const PER_ACCOUNT = 10;
/** Ticks between steps; each tier's triggers lie within one. */
const STEP = 10;
/** The 0-crossed batches move the mark between the last step and this many ticks below it. */
const WIGGLE = 5;
/** The resting triggers that never fire: FAR to FAR + SPREAD ticks from MID (5 % to 30 %). */
const FAR = 1_000;
const SPREAD = 5_000;
/** The maker's orders: asks from MID + 200, bids from MID − 200, over 100 levels a side. */
const MAKER_GAP = 200;
const MAKER_LEVELS = 100;
const MAKER = address(0xa21);
const FIRST_ACCOUNT = 0x2_0000_0000;
/** $1,000 an account: ten reserves of about $2.1 each and the fills' margin, with room. */
const ACCOUNT_DEPOSIT = 1_000_000_000n;

/** After a full collection, wait until V8's background sweeping has stopped (see perp-risk-bench.ts). */
async function settle(): Promise<void> {
  const until = performance.now() + 3_000;
  while (performance.now() < until) {
    const c = process.cpuUsage();
    await new Promise((r) => setTimeout(r, 10));
    const d = process.cpuUsage(c);
    if (d.user + d.system < 1_000) return;
  }
}

function timed<T>(fn: () => T): { value: T; wallUs: number; cpuUs: number } {
  const c = process.cpuUsage();
  const start = performance.now();
  const value = fn();
  const wallUs = (performance.now() - start) * 1000;
  const d = process.cpuUsage(c);
  return { value, wallUs, cpuUs: d.user + d.system };
}

/** The engine with its mark and the maker's book for `tiers` steps of `fired` orders each (half asks, half bids). */
function baseEngine(tiers: number, fired: number): { engine: PerpEngine; ts: number } {
  const engine = new PerpEngine({ instruments: [TRG] });
  let ts = 1;
  must(engine.apply({ kind: 'setMarkPrice', id: 'm', ts: ts++, symbol: SYMBOL, markPriceTicks: MID, indexPriceTicks: MID }), 'mark');
  must(engine.apply({ kind: 'deposit', id: 'mk', ts: ts++, account: MAKER, amount: 10n ** 15n }), 'maker deposit');
  must(engine.apply({ kind: 'setLeverage', id: 'mk', ts: ts++, account: MAKER, symbol: SYMBOL, leverage: 20 }), 'maker leverage');
  const quote: PlaceOrderCommand & { kind: 'placeOrder' } = { kind: 'placeOrder', id: 'q', ts: 0, account: MAKER, symbol: SYMBOL, side: 'SELL', type: 'LIMIT', priceTicks: 0, sizeLots: LOTS };
  // Each fired order takes one maker order; half the fired orders buy, half sell.
  const each = Math.ceil((tiers * fired) / 2);
  for (let q = 0; q < each; q++) {
    for (const side of ['SELL', 'BUY'] as const) {
      quote.ts = ts++;
      quote.side = side;
      quote.priceTicks = side === 'SELL' ? MID + MAKER_GAP + (q % MAKER_LEVELS) : MID - MAKER_GAP - (q % MAKER_LEVELS);
      must(engine.apply(quote), 'maker quote');
    }
  }
  return { engine, ts };
}

/**
 * Order i: in tier i mod `every` when that is below `tiers` (just above the mark), else far away. The
 * four kinds in turn by i (BUY STOP / SELL TAKE_PROFIT fire on a rise, SELL STOP / BUY TAKE_PROFIT
 * on a fall); a tier holds only the rising two.
 */
function triggerOf(i: number, tiers: number, every: number, cmd: PlaceOrderCommand): void {
  const k = i % every;
  const j = Math.floor(i / every);
  if (k < tiers) {
    const buy = (j & 1) === 0;
    cmd.side = buy ? 'BUY' : 'SELL';
    cmd.type = buy ? 'STOP_MARKET' : 'TAKE_PROFIT_MARKET';
    cmd.triggerPriceTicks = MID + STEP * k + 1 + (j % STEP);
    return;
  }
  // A spread of prices from a cheap multiplicative hash, so the heaps hold many distinct triggers.
  const off = FAR + ((Math.imul(i, 2_654_435_761) >>> 0) % SPREAD);
  switch (i & 3) {
    case 0: cmd.side = 'BUY'; cmd.type = 'STOP_MARKET'; cmd.triggerPriceTicks = MID + off; break;
    case 1: cmd.side = 'SELL'; cmd.type = 'TAKE_PROFIT_MARKET'; cmd.triggerPriceTicks = MID + off; break;
    case 2: cmd.side = 'SELL'; cmd.type = 'STOP_MARKET'; cmd.triggerPriceTicks = MID - off; break;
    default: cmd.side = 'BUY'; cmd.type = 'TAKE_PROFIT_MARKET'; cmd.triggerPriceTicks = MID - off;
  }
}

function buildTriggers(n: number, tiers: number, every: number): { engine: PerpEngine; ts: number; accounts: number } {
  if (n % every !== 0) throw new Error(`perp trigger bench: sizes must be multiples of ${every}`);
  const { engine, ts: t0 } = baseEngine(tiers, n / every);
  let ts = t0;
  const accounts = Math.max(1, Math.ceil(n / PER_ACCOUNT));
  const dep: EngineCommand = { kind: 'deposit', id: 'd', ts: 0, account: '', amount: ACCOUNT_DEPOSIT };
  const addresses: string[] = [];
  for (let a = 0; a < accounts; a++) {
    const account = address(FIRST_ACCOUNT + a);
    addresses.push(account);
    dep.ts = ts++;
    dep.account = account;
    must(engine.apply(dep), 'deposit');
  }
  const cmd: PlaceOrderCommand & { kind: 'placeOrder' } = { kind: 'placeOrder', id: 't', ts: 0, account: '', symbol: SYMBOL, side: 'BUY', type: 'STOP_MARKET', sizeLots: LOTS, triggerPriceTicks: 0 };
  // Round-robin over the accounts, as orders arrive from many at once.
  for (let i = 0; i < n; i++) {
    triggerOf(i, tiers, every, cmd);
    cmd.ts = ts++;
    cmd.account = addresses[i % accounts];
    must(engine.apply(cmd), 'trigger order');
  }
  if (engine.waitingTriggers(SYMBOL) !== n) throw new Error(`perp trigger bench: ${engine.waitingTriggers(SYMBOL)} triggers waiting, expected ${n}`);
  return { engine, ts, accounts };
}

const PROFILE = Boolean(process.env.BENCH_CPU_PROF);

/** Batches of `batch` mark updates between `high` and `high − WIGGLE`, each crossing nothing: CPU and wall µs per update. */
function zeroBatches(engine: PerpEngine, tsRef: { ts: number }, high: number, batch: number, batches: number, cpu: number[], wall: number[]): void {
  const mark: EngineCommand = { kind: 'setMarkPrice', id: 'mark', ts: 0, symbol: SYMBOL, markPriceTicks: high, indexPriceTicks: high };
  for (let b = 0; b < batches; b++) {
    const t = timed(() => {
      for (let j = 0; j < batch; j++) {
        mark.ts = tsRef.ts++;
        mark.markPriceTicks = mark.indexPriceTicks = j & 1 ? high - WIGGLE : high;
        const r = engine.apply(mark);
        if (r.events.length !== 1) throw new Error(`perp trigger bench: a 0-crossed mark update did more than move the mark (${r.events.length} events)`);
      }
    });
    cpu.push(t.cpuUs / batch);
    wall.push(t.wallUs / batch);
  }
}

/** The baseline: the steps' mark updates on an engine with the maker's book and no trigger orders. */
async function runBaseline(tiers: number, batch: number, batches: number): Promise<{ us: number; wallUs: number }> {
  const built = baseEngine(tiers, 100);
  const tsRef = { ts: built.ts };
  collect();
  await settle();
  const cpu: number[] = [];
  const wall: number[] = [];
  for (let k = 0; k <= tiers; k++) zeroBatches(built.engine, tsRef, MID + STEP * k, batch, batches, cpu, wall);
  return { us: median(cpu), wallUs: median(wall) };
}

/** `every`: one order in `every` per tier (100: each step crosses 1 % of the orders). */
async function runSize(n: number, every: number, tiers: number, batch: number, batches: number, baseline: { us: number; wallUs: number }, print: (l: string) => void, quiet = false): Promise<TriggerFigures> {
  const fired = n / every;
  collect();
  const heapBefore = process.memoryUsage().heapUsed;
  const t0 = performance.now();
  const built = buildTriggers(n, tiers, every);
  const buildSeconds = (performance.now() - t0) / 1000;
  const engine = built.engine;
  const tsRef = { ts: built.ts };
  collect();
  const heapMb = (process.memoryUsage().heapUsed - heapBefore) / 1e6;
  if (!quiet) print(`perp trigger bench: ${fmt(n)} triggers (${fmt(fired)} a step) by ${fmt(built.accounts)} accounts built in ${buildSeconds.toFixed(1)} s, heap ${fmt(Math.round(heapMb))} MB`);
  await settle();

  const zeroCpu: number[] = [];
  const zeroWall: number[] = [];
  zeroBatches(engine, tsRef, MID, batch, batches, zeroCpu, zeroWall);
  const pauses: Array<{ start: number; end: number }> = [];
  const windows: Array<{ start: number; end: number }> = [];
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) pauses.push({ start: e.startTime, end: e.startTime + e.duration });
  });
  observer.observe({ entryTypes: ['gc'] });
  const stepCpu: number[] = [];
  const stepWall: number[] = [];
  const stepEvents: number[] = [];
  const mark: EngineCommand = { kind: 'setMarkPrice', id: 'step', ts: 0, symbol: SYMBOL, markPriceTicks: MID, indexPriceTicks: MID };
  for (let k = 0; k < tiers; k++) {
    const to = MID + STEP * (k + 1);
    collect();
    await settle();
    mark.ts = tsRef.ts++;
    mark.markPriceTicks = mark.indexPriceTicks = to;
    const profile = PROFILE && !quiet ? await startCpuProfile() : null;
    const from = performance.now();
    const t = timed(() => engine.apply(mark));
    windows.push({ start: from, end: performance.now() });
    await profile?.stop(`bench-profiles/perp-trigger-${n}-${k}.cpuprofile`);
    const r = must(t.value, 'step');
    const events = r.events as EngineEvent[];
    let triggered = 0;
    let trades = 0;
    let expired = 0;
    for (const e of events) {
      if (e.type === 'orderTriggered') triggered++;
      else if (e.type === 'trade') trades++;
      else if (e.type === 'orderDone' && e.status === 'EXPIRED') expired++;
    }
    if (triggered !== fired || trades !== fired || expired !== 0) {
      throw new Error(`perp trigger bench: the step to ${to} fired ${triggered} orders (${trades} trades, ${expired} expired), expected ${fired} filled`);
    }
    stepCpu.push(t.cpuUs);
    stepWall.push(t.wallUs);
    stepEvents.push(events.length);
    zeroBatches(engine, tsRef, to, batch, batches, zeroCpu, zeroWall);
  }
  if (engine.waitingTriggers(SYMBOL) !== n - tiers * fired) throw new Error('perp trigger bench: the steps fired more than their tiers');
  await new Promise((r) => setTimeout(r, 0));
  observer.disconnect();
  const stepGcMs = windows.map((w) => pauses.reduce((sum, p) => sum + Math.max(0, Math.min(p.end, w.end) - Math.max(p.start, w.start)), 0));
  const stepUs = median(stepCpu);
  const stepWallUs = median(stepWall);
  const out: TriggerFigures = {
    resting: n, accounts: built.accounts, fired, buildSeconds, heapMb, zeroUs: median(zeroCpu), zeroWallUs: median(zeroWall),
    stepMs: stepUs / 1000, stepWallMs: stepWallUs / 1000, stepsMs: stepCpu.map((u) => u / 1000),
    perTriggeredUs: (stepUs - baseline.us) / fired, perTriggeredWallUs: (stepWallUs - baseline.wallUs) / fired,
    bestPerTriggeredUs: (Math.min(...stepCpu) - baseline.us) / fired,
    stepEvents: median(stepEvents), stepGcMs: median(stepGcMs),
  };
  if (!quiet) {
    print(
      `perp trigger bench: ${fmt(n)} resting, ${fmt(fired)} fired a step: 0 crossed ${out.zeroUs.toFixed(2)} µs; steps CPU ${out.stepsMs.map((m) => m.toFixed(1)).join(' / ')} ms, ` +
        `wall ${stepWall.map((u) => (u / 1000).toFixed(1)).join(' / ')} ms (GC ${stepGcMs.map((m) => m.toFixed(1)).join(' / ')} ms); per triggered order ${out.perTriggeredUs.toFixed(2)} µs`,
    );
  }
  return out;
}

export async function runPerpTriggerBench(opts: PerpTriggerBenchOptions = {}): Promise<PerpTriggerBenchResult> {
  const sizes = opts.sizes ?? (process.env.BENCH_TRIGGER_SIZES ?? '10000,100000,1000000').split(',').map(Number);
  const sparse = (opts.sparseSizes ?? (process.env.BENCH_TRIGGER_SPARSE ?? '1000000').split(',').map(Number)).filter((n) => n > 0);
  const tiers = Math.min(50, Math.max(1, opts.tiers ?? Number(process.env.BENCH_TRIGGER_TIERS ?? 8)));
  const batch = opts.batch ?? Number(process.env.BENCH_TRIGGER_BATCH ?? 1_000);
  const batches = opts.batches ?? Number(process.env.BENCH_TRIGGER_BATCHES ?? 5);
  const print = opts.print ?? (() => {});
  // Warm-up: the build, the updates and the firing path compiled before anything is timed.
  const warmBase = await runBaseline(tiers, batch, 2);
  await runSize(20_000, 100, tiers, batch, 2, warmBase, print, true);
  collect();
  const baseline = await runBaseline(tiers, batch, batches);
  print(`perp trigger bench: baseline (no triggers) ${baseline.us.toFixed(2)} µs CPU, ${baseline.wallUs.toFixed(2)} µs wall an update`);
  const figures: TriggerFigures[] = [];
  for (const [n, every] of [...sizes.map((n) => [n, 100]), ...sparse.map((n) => [n, 1_000])]) {
    figures.push(await runSize(n, every, tiers, batch, batches, baseline, print));
    collect();
  }
  const dense = figures.filter((f) => f.fired * 100 === f.resting);
  const first = dense[0];
  const last = dense[dense.length - 1];
  const flatness = last.perTriggeredUs / first.perTriggeredUs;
  const lines = [
    `trigger orders: one mark update crossing 1 % (0.1 % in the last rows) of N resting MARK triggers (stop and take-profit, each entering as a MARKET order of ${LOTS} lots that fills against one maker order), ` +
      `N / ${PER_ACCOUNT} accounts; ${tiers} steps per size, median; 0 crossed: median of ${batches * (tiers + 1)} batches of ${fmt(batch)} updates; ` +
      `per triggered order: (step − baseline update) ÷ fired; CPU time of the process once its background GC has settled; one core, in process`,
    '',
    '| resting triggers | fired a step | build | heap | update, 0 crossed | update crossing 1 % | per triggered order | ÷ first | best step, per triggered order | wall: step (of which GC), per triggered order | events a step |',
    '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    `| 0 (baseline: the maker's book only) | 0 | | | ${baseline.us.toFixed(2)} µs | ${baseline.us.toFixed(2)} µs | | | | ${baseline.wallUs.toFixed(2)} µs | 1 |`,
    ...figures.map(
      (f) =>
        `| ${fmt(f.resting)} | ${fmt(f.fired)} (${f.fired * 100 === f.resting ? '1 %' : `${((100 * f.fired) / f.resting).toFixed(1)} %`}) | ${f.buildSeconds.toFixed(1)} s | ${fmt(Math.round(f.heapMb))} MB | ${f.zeroUs.toFixed(2)} µs | ${f.stepMs.toFixed(2)} ms | ` +
        `**${f.perTriggeredUs.toFixed(2)} µs** | ${(f.perTriggeredUs / first.perTriggeredUs).toFixed(2)} | ${f.bestPerTriggeredUs.toFixed(2)} µs | ${f.stepWallMs.toFixed(2)} ms (${f.stepGcMs.toFixed(2)}), ${f.perTriggeredWallUs.toFixed(2)} µs | ${fmt(f.stepEvents)} |`,
    ),
    '',
    `target: per triggered order flat in the resting count (${fmt(last.resting)} ÷ ${fmt(first.resting)}) → ${flatness.toFixed(2)} ${flatness <= 1.5 ? 'met (within 1.5×)' : 'NOT met (more than 1.5×)'}`,
    // The same fired count at ten times the resting orders: what the resting count alone costs.
    ...figures
      .filter((f) => !dense.includes(f))
      .flatMap((f) => {
        const peer = dense.find((d) => d.fired === f.fired);
        return peer ? [`same ${fmt(f.fired)} fired a step at ${fmt(f.resting)} resting ÷ at ${fmt(peer.resting)}: per triggered order ${(f.perTriggeredUs / peer.perTriggeredUs).toFixed(2)}`] : [];
      }),
  ];
  return { baselineUs: baseline.us, baselineWallUs: baseline.wallUs, sizes: figures, flatness, table: lines.join('\n') };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runPerpTriggerBench({ print: (l) => console.error(l) }).then(
    (r) => console.log(r.table),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
