/**
 * Issue 40 item 5: what scaling out costs in CPU per order. The same signed single REST orders
 * (bench/perp-orders-bench.ts) go to
 *   A. one process (the perp API with the engine in it) on PostgreSQL, and
 *   B. two perp API processes, each reading its own replica of the journal, and the engine in a
 *      process of its own, over Redis Streams, on the same PostgreSQL,
 * in turn, A B A B, each on a fresh schema. The figure is B's CPU per accepted order ÷ A's (target
 * ≤ 1.3): of the topology's own processes, and with the PostgreSQL and Redis server processes added
 * (from /proc, for the same window; they also count anything else using those services then).
 *
 * On two cores B cannot be faster than A; CPU per order says whether it would be on more. The
 * projection (projectThroughput) puts each topology on N cores under stated assumptions.
 */
import os from 'node:os';
import { runPerpOrdersBench, type PerpOrdersBenchResult } from './perp-orders-bench.ts';

export interface TopologyCost {
  /** Orders a second, closed loop, on this machine. */
  perSec: number;
  /** Own processes' CPU per order, µs (user + system). */
  cpuUsPerOrder: number;
  /** PostgreSQL and Redis server CPU per order over the same window, µs. */
  servicesUsPerOrder: number;
  /** The busiest single event loop's busy time per order, µs: the one-writer (or one-process) bound. */
  bottleneckLoopUsPerOrder: number;
}

/**
 * Orders a second on `cores` cores, from CPU per order measured on this machine. Assumptions: CPU
 * per order does not change with the core count (no new contention, the same per-order work); API
 * processes are added until the cores are used; one event loop — the engine's single writer in
 * the scaled-out topology, the whole venue in one process — cannot go past one core, so its busy
 * time per order caps the rate; the services' CPU runs on the same cores. Both are upper bounds.
 */
export function projectThroughput(cost: Pick<TopologyCost, 'cpuUsPerOrder' | 'servicesUsPerOrder' | 'bottleneckLoopUsPerOrder'>, cores: number): number {
  if (!(cores >= 1) || !(cost.cpuUsPerOrder > 0) || !(cost.bottleneckLoopUsPerOrder > 0) || !(cost.servicesUsPerOrder >= 0)) {
    throw new RangeError(`projectThroughput: bad inputs ${JSON.stringify({ ...cost, cores })}`);
  }
  const byCores = (cores * 1e6) / (cost.cpuUsPerOrder + cost.servicesUsPerOrder);
  const byLoop = 1e6 / cost.bottleneckLoopUsPerOrder;
  return Math.min(byCores, byLoop);
}

const costOf = (r: PerpOrdersBenchResult, bottleneckIndex: number): TopologyCost => ({
  perSec: r.perSec,
  cpuUsPerOrder: r.serverCpuUsPerOrder,
  servicesUsPerOrder: r.servicesCpuUsPerOrder ?? 0,
  bottleneckLoopUsPerOrder: r.perServerLoopUsPerOrder?.[bottleneckIndex] ?? r.serverLoopUsPerOrder,
});

export interface ScaleOutResult {
  one: TopologyCost[];
  two: TopologyCost[];
  /** The same servers' steady windows (after `steadyWarm` more orders), when measured. */
  oneSteady: TopologyCost[];
  twoSteady: TopologyCost[];
  /** B ÷ A in the steady windows, own processes. */
  steadyRatios: number[];
  /** B ÷ A CPU per order, own processes, per round. */
  ratios: number[];
  /** The same with the services' CPU added to both. */
  ratiosWithServices: number[];
  /** The engine's share of B's CPU per order (its process alone), per round. */
  engineUsPerOrder: number[];
  table: string;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const steadyCostOf = (r: PerpOrdersBenchResult): TopologyCost | undefined =>
  r.steady && {
    perSec: r.steady.perSec,
    cpuUsPerOrder: r.steady.cpuUsPerOrder,
    servicesUsPerOrder: r.steady.servicesCpuUsPerOrder,
    bottleneckLoopUsPerOrder: r.steady.perServerLoopUsPerOrder[0] ?? r.steady.loopUsPerOrder,
  };

export async function runPerpScaleOutBench(opts: { nativeRecoverPerSec: number; rounds?: number; orders?: number; steadyWarm?: number }): Promise<ScaleOutResult> {
  if (!process.env.DATABASE_URL || !process.env.REDIS_URL) throw new Error('perp scale-out bench: needs DATABASE_URL and REDIS_URL');
  const rounds = opts.rounds ?? Number(process.env.BENCH_SCALEOUT_ROUNDS ?? 2);
  const orders = opts.orders ?? Number(process.env.BENCH_SCALEOUT_ORDERS ?? 3_000);
  // Each process compiles its own order path: B's three processes pay V8's optimisation three times
  // over in a first window that A pays once (a venue pays it once a release). The steady windows,
  // on the same servers after this many more orders, are what an order costs a running venue.
  const steadyWarm = opts.steadyWarm ?? Number(process.env.BENCH_SCALEOUT_STEADY ?? 12_000);
  const one: TopologyCost[] = [];
  const two: TopologyCost[] = [];
  const oneSteady: TopologyCost[] = [];
  const twoSteady: TopologyCost[] = [];
  const apiUsPerOrder: string[] = [];
  const engineUsPerOrder: number[] = [];
  const refused: number[] = [];
  const loads: string[] = [];
  for (let i = 0; i < rounds; i++) {
    const a = await runPerpOrdersBench({ topology: 'one-process', database: 'pg', entry: [], orders, nativeRecoverPerSec: opts.nativeRecoverPerSec, steadyWarm });
    loads.push(os.loadavg()[0].toFixed(1));
    const b = await runPerpOrdersBench({ topology: 'two-apis', orders, nativeRecoverPerSec: opts.nativeRecoverPerSec, steadyWarm });
    loads.push(os.loadavg()[0].toFixed(1));
    one.push(costOf(a, 0));
    two.push(costOf(b, 0));
    const [as, bs] = [steadyCostOf(a), steadyCostOf(b)];
    if (as && bs) {
      oneSteady.push(as);
      twoSteady.push(bs);
      const [engine, ...apis] = b.steady!.perServerCpuUsPerOrder;
      apiUsPerOrder.push(`engine ${engine.toFixed(0)}, APIs ${apis.map((x) => x.toFixed(0)).join(' + ')}`);
    }
    engineUsPerOrder.push(b.perServerCpuUsPerOrder?.[0] ?? 0);
    refused.push(a.failures, b.failures);
  }
  const ratios = two.map((b, i) => b.cpuUsPerOrder / one[i].cpuUsPerOrder);
  const steadyRatios = twoSteady.map((b, i) => b.cpuUsPerOrder / oneSteady[i].cpuUsPerOrder);
  const steadyWithServices = twoSteady.map((b, i) => (b.cpuUsPerOrder + b.servicesUsPerOrder) / (oneSteady[i].cpuUsPerOrder + oneSteady[i].servicesUsPerOrder));
  const ratiosWithServices = two.map((b, i) => (b.cpuUsPerOrder + b.servicesUsPerOrder) / (one[i].cpuUsPerOrder + one[i].servicesUsPerOrder));
  const list = (xs: number[], digits = 0) => xs.map((x) => x.toFixed(digits)).join(' / ');
  const pick = (xs: TopologyCost[]): TopologyCost => ({
    perSec: median(xs.map((x) => x.perSec)),
    cpuUsPerOrder: median(xs.map((x) => x.cpuUsPerOrder)),
    servicesUsPerOrder: median(xs.map((x) => x.servicesUsPerOrder)),
    bottleneckLoopUsPerOrder: median(xs.map((x) => x.bottleneckLoopUsPerOrder)),
  });
  // The projection from the steady windows when there are some: what a running venue would do.
  const [oneM, twoM] = oneSteady.length > 0 ? [pick(oneSteady), pick(twoSteady)] : [pick(one), pick(two)];
  const ratio = median(ratios);
  const projection = [2, 8, 32].map((cores) => `${cores} cores: ${projectThroughput(oneM, cores).toFixed(0)} ÷ ${projectThroughput(twoM, cores).toFixed(0)}`).join('; ');
  const steadyRows =
    steadyRatios.length === 0
      ? []
      : [
          `| **steady windows** (the same servers after ${steadyWarm} more orders; ${2 * orders} orders each): orders a second | ${list(oneSteady.map((x) => x.perSec))} | ${list(twoSteady.map((x) => x.perSec))} |`,
          `| &nbsp;&nbsp;CPU per order, own processes, µs | ${list(oneSteady.map((x) => x.cpuUsPerOrder))} | ${list(twoSteady.map((x) => x.cpuUsPerOrder))} (${apiUsPerOrder.join('; ')}) |`,
          `| &nbsp;&nbsp;PostgreSQL and Redis servers' CPU per order, µs | ${list(oneSteady.map((x) => x.servicesUsPerOrder))} | ${list(twoSteady.map((x) => x.servicesUsPerOrder))} |`,
          `| &nbsp;&nbsp;busiest event loop per order, µs | ${list(oneSteady.map((x) => x.bottleneckLoopUsPerOrder))} | ${list(twoSteady.map((x) => x.bottleneckLoopUsPerOrder))} |`,
          `| &nbsp;&nbsp;**CPU per order B ÷ A, steady, own processes (target ≤ 1.3)** | ${list(steadyRatios, 2)}; median **${median(steadyRatios).toFixed(2)}** ${median(steadyRatios) <= 1.3 ? 'met' : 'NOT met'} | |`,
          `| &nbsp;&nbsp;CPU per order B ÷ A, steady, services included | ${list(steadyWithServices, 2)} | |`,
        ];
  const table = [
    '| figure (rounds A B A B …; each on a fresh PostgreSQL schema) | one process (A) | two APIs + engine over Redis (B) |',
    '| --- | ---: | ---: |',
    `| signed single REST orders a second, ${orders} a round (refused: ${refused.reduce((x, y) => x + y, 0)}) | ${list(one.map((x) => x.perSec))} | ${list(two.map((x) => x.perSec))} |`,
    `| CPU per order, own processes (user + system), µs | ${list(one.map((x) => x.cpuUsPerOrder))} | ${list(two.map((x) => x.cpuUsPerOrder))} (engine ${list(engineUsPerOrder)}) |`,
    `| PostgreSQL and Redis servers' CPU per order, µs | ${list(one.map((x) => x.servicesUsPerOrder))} | ${list(two.map((x) => x.servicesUsPerOrder))} |`,
    `| busiest event loop per order (A: the process; B: the engine), µs | ${list(one.map((x) => x.bottleneckLoopUsPerOrder))} | ${list(two.map((x) => x.bottleneckLoopUsPerOrder))} |`,
    `| **CPU per order B ÷ A, own processes (target ≤ 1.3)** | ${list(ratios, 2)}; median **${ratio.toFixed(2)}** ${ratio <= 1.3 ? 'met' : 'NOT met'} | |`,
    `| CPU per order B ÷ A, services included | ${list(ratiosWithServices, 2)} | |`,
    ...steadyRows,
    `| projected orders a second, A ÷ B (projectThroughput: cores ÷ CPU per order, capped by the busiest loop; ${oneSteady.length > 0 ? 'steady windows' : 'first windows'}) | ${projection} | |`,
    `| load average after each run | ${loads.join(', ')} | |`,
  ].join('\n');
  return { one, two, oneSteady, twoSteady, steadyRatios, ratios, ratiosWithServices, engineUsPerOrder, table };
}
