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

export interface ScaleOutResult {
  /** B ÷ A CPU per order in the warm windows, own processes, per round. */
  ratios: number[];
  /** The same with the PostgreSQL and Redis servers' CPU added to both. */
  ratiosWithServices: number[];
  one: TopologyCost[];
  two: TopologyCost[];
  /** projectThroughput of the medians, A ÷ B, on 2, 8 and 32 cores. */
  projection: string;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * Rounds of A then B, each on a fresh schema; the figure is the warm window (the same servers after
 * BENCH_SCALEOUT_STEADY more orders): each process compiles its own order path, so B's three
 * processes pay V8's optimisation three times in a first window, which a venue pays once a release.
 */
export async function runPerpScaleOutBench(opts: { rounds?: number; orders?: number; steadyWarm?: number } = {}): Promise<ScaleOutResult> {
  if (!process.env.DATABASE_URL || !process.env.REDIS_URL) throw new Error('perp scale-out bench: needs DATABASE_URL and REDIS_URL');
  const rounds = opts.rounds ?? Number(process.env.BENCH_SCALEOUT_ROUNDS ?? 2);
  const orders = opts.orders ?? Number(process.env.BENCH_SCALEOUT_ORDERS ?? 3_000);
  const steadyWarm = opts.steadyWarm ?? Number(process.env.BENCH_SCALEOUT_STEADY ?? 12_000);
  const costOf = (r: PerpOrdersBenchResult): TopologyCost => {
    const w = r.ways[0].warm ?? r.ways[0].first;
    return { perSec: w.perSec, cpuUsPerOrder: w.cpuUsPerOrder, servicesUsPerOrder: w.servicesCpuUsPerOrder, bottleneckLoopUsPerOrder: w.perServerLoopUsPerOrder[0] };
  };
  const one: TopologyCost[] = [];
  const two: TopologyCost[] = [];
  for (let i = 0; i < rounds; i++) {
    one.push(costOf(await runPerpOrdersBench({ topology: 'one-process', database: 'pg', ways: ['single'], orders, steadyWarm, withFloor: false })));
    two.push(costOf(await runPerpOrdersBench({ topology: 'two-apis', ways: ['single'], orders, steadyWarm, withFloor: false })));
  }
  const ratios = two.map((b, i) => b.cpuUsPerOrder / one[i].cpuUsPerOrder);
  const ratiosWithServices = two.map((b, i) => (b.cpuUsPerOrder + b.servicesUsPerOrder) / (one[i].cpuUsPerOrder + one[i].servicesUsPerOrder));
  const pick = (xs: TopologyCost[]): TopologyCost => ({
    perSec: median(xs.map((x) => x.perSec)),
    cpuUsPerOrder: median(xs.map((x) => x.cpuUsPerOrder)),
    servicesUsPerOrder: median(xs.map((x) => x.servicesUsPerOrder)),
    bottleneckLoopUsPerOrder: median(xs.map((x) => x.bottleneckLoopUsPerOrder)),
  });
  const projection = [2, 8, 32].map((cores) => `${cores} cores ${projectThroughput(pick(one), cores).toFixed(0)} ÷ ${projectThroughput(pick(two), cores).toFixed(0)}`).join('; ');
  return { ratios, ratiosWithServices, one, two, projection };
}
