/**
 * The suites of `npm run bench`, each a BENCH_ONLY key, each turning its bench's result into rows
 * for the runner (bench/runner.ts): the figure, its baseline from the same run, the ratio and the
 * target.
 */
import { runExecutorBench } from './executor-bench.ts';
import { runHttpBench } from './http-bench.ts';
import { runIndexerBench } from './indexer-bench.ts';
import { runOneClickBench } from './one-click-bench.ts';
import { runPerpEngineBench } from './perp-engine-bench.ts';
import { runPerpOrdersBench, type WindowFigure } from './perp-orders-bench.ts';
import { runPerpScaleOutBench } from './perp-scaleout-bench.ts';
import type { Row, Suite } from './runner.ts';
import { runSandboxBench, sandboxMedian } from './sandbox-bench.ts';
import { runStreamFanoutBench } from './stream-fanout-bench.ts';
import { TESTKIT_HISTORY_DAYS } from '@tokex/testkit';
import { runUpgradeBench } from './upgrade-bench.ts';

const list = (xs: number[], digits = 2) => xs.map((x) => x.toFixed(digits)).join(' / ');

export const http: Suite = {
  key: 'http',
  name: 'stock API: signed reads and calldata, server CPU a request ÷ a bare Fastify route (bench/http-bench.ts)',
  run: (ctx) => runHttpBench(ctx.log),
};

export const indexer: Suite = {
  key: 'indexer',
  name: 'indexer catch-up from block 0 ÷ raw eth_getLogs + JSON.parse of the same ranges, fresh anvil (bench/indexer-bench.ts)',
  async run(ctx) {
    const r = await runIndexerBench({ events: ctx.num('BENCH_INDEXER_EVENTS', 50_000), log: ctx.log });
    return [
      ...r.catchUp.map((c): Row => ({
        figure: `catch-up of ${c.events.toLocaleString('en-US')} events into ${c.engine === 'sqlite' ? 'SQLite' : 'PostgreSQL'}`, value: c.eventsPerSecond, unit: 'events/s',
        baseline: `eth_getLogs ceiling ${Math.round(c.ceilingEventsPerSecond).toLocaleString('en-US')}/s`, ratio: c.ratio, target: '≥ 0.5', met: c.ratio >= 0.5,
      })),
      { figure: 'event decoding, event-decoder.ts (hand-made)', value: r.decoder.events / r.decoder.fastSeconds, unit: 'events/s', baseline: `viem decodeEventLog ${Math.round(r.decoder.events / r.decoder.viemSeconds).toLocaleString('en-US')}/s`, ratio: r.decoder.viemSeconds / r.decoder.fastSeconds, target: 'report' },
    ];
  },
};

export const executor: Suite = {
  key: 'executor',
  name: 'executor settlement on a fresh anvil (bench/executor-bench.ts)',
  async run(ctx) {
    const r = await runExecutorBench({ orders: ctx.num('BENCH_ORDERS', 5_000), print: ctx.log });
    const ok = r.statuses.Filled === r.orders;
    return [{ figure: `${r.orders} orders settled, ${r.transactions} settleOrders, ~${Math.round(r.gasPerOrder).toLocaleString('en-US')} gas an order${ok ? '' : ' (NOT every order filled)'}`, value: r.ordersPerSecond, unit: 'orders/s', target: '≥ 1,000', met: ok && r.ordersPerSecond >= 1000 }];
  },
};

export const oneclick: Suite = {
  key: 'oneclick',
  name: "One Click order sends end to end ÷ anvil's ceiling for the same orders pre-signed, same chain (bench/one-click-bench.ts)",
  async run(ctx) {
    const r = await runOneClickBench({ users: ctx.num('BENCH_ONE_CLICK_USERS', 16), perUser: ctx.num('BENCH_ONE_CLICK_SENDS', 40), print: ctx.log });
    return [{ figure: `One Click sends, ${r.users} users (${r.failures} failed)`, value: r.sendsPerSecond, unit: 'sends/s', baseline: `anvil pre-signed ${r.ceilingPerSecond.toFixed(1)}/s`, ratio: r.ratio, target: '≥ 0.5', met: r.ratio >= 0.5 && r.failures === 0 }];
  },
};

export const upgrade: Suite = {
  key: 'upgrade',
  name: 'proxies: settlement with ÷ without (6a0f45b), One Click on the proxied contracts, migration of a pre-proxy venue (bench/upgrade-bench.ts)',
  async run(ctx) {
    const u = await runUpgradeBench({ print: ctx.log, orders: ctx.num('BENCH_UPGRADE_ORDERS', 500), rounds: ctx.num('BENCH_UPGRADE_ROUNDS', 8), holders: ctx.num('BENCH_UPGRADE_HOLDERS', 1_000), openOrders: ctx.num('BENCH_UPGRADE_OPEN_ORDERS', 1_000) });
    const e = u.executor;
    return [
      { figure: 'executor settlement, orders/s with proxies', value: e.ordersPerSecondRatio, unit: '× without', baseline: '6a0f45b, same anvil, alternating rounds', ratio: e.ordersPerSecondRatio, target: '≥ 0.9', met: e.ordersPerSecondRatio >= 0.9 },
      { figure: 'gas an order with proxies', value: e.gasRatio, unit: '× without', baseline: '6a0f45b', ratio: e.gasRatio, target: '≤ 1.11', met: e.gasRatio <= 1.11 },
      { figure: 'One Click sends on the proxied contracts', value: u.oneClick.sendsPerSecond, unit: 'sends/s', baseline: `anvil pre-signed ${u.oneClick.ceilingPerSecond.toFixed(1)}/s`, ratio: u.oneClick.ratio, target: '≥ 0.5', met: u.oneClick.ratio >= 0.5 },
      { figure: `migrating a pre-proxy venue, per 1,000 holders (${Math.round(u.migration.txPer1000Holders)} tx)`, value: u.migration.msPer1000Holders / 1000, unit: 's', target: 'report' },
      { figure: `migrating a pre-proxy venue, per 1,000 open orders (${Math.round(u.migration.txPer1000Orders)} tx)`, value: u.migration.msPer1000Orders / 1000, unit: 's', target: 'report' },
    ];
  },
};

export const perpEngine: Suite = {
  key: 'perp-engine',
  name: 'perpetual book ÷ nodejs-order-book on the same seeded streams, and the full engine, in process, one core (bench/perp-engine-bench.ts)',
  async run(ctx) {
    // The book depths given here: BENCH_PERP_STEADY is the perp-orders suite's warm-up in a full run.
    const r = await runPerpEngineBench({ ops: ctx.num('BENCH_PERP_OPS', 1_000_000), steadyDepth: 5_000, deepDepth: 120_000, print: ctx.log });
    return [
      ...r.books.map((b): Row => {
        const target = b.scenario === 'steady' ? 2 : 10;
        return { figure: `book, ${b.scenario} (${b.restingAtStart.toLocaleString('en-US')} resting), ${b.ops.toLocaleString('en-US')} mixed operations`, value: b.oursOpsPerSec, unit: 'ops/s', baseline: `nodejs-order-book ${Math.round(b.peerOpsPerSec).toLocaleString('en-US')} ops/s`, ratio: b.ratio, target: `≥ ${target}×`, met: b.ratio >= target };
      }),
      ...r.engine.map((e): Row => ({ figure: `full engine (accounts, margin, fees, events), ${e.scenario} stream`, value: e.opsPerSec, unit: 'ops/s', target: 'report' })),
    ];
  },
};

const WAY = { single: 'single REST orders', batch: 'batches of 20 (POST orders/batch)', ws: 'WebSocket place frames' } as const;
const window = (w: WindowFigure) => `${Math.round(w.perSec).toLocaleString('en-US')} orders/s, p99 ${w.p99Ms.toFixed(1)} ms${w.refused ? `, ${w.refused} refused` : ''}`;

export const perpOrders: Suite = {
  key: 'perp-orders',
  name: "signed perp orders end to end, one process on SQLite: server CPU an order ÷ (native recovery alone + the bare route's CPU ÷ orders a request), issue 40's overhead factor (bench/perp-orders-bench.ts)",
  async run(ctx) {
    const r = await runPerpOrdersBench();
    ctx.log(`native recovery alone ${list(r.recoveryRoundsUs, 1)} µs by round; bare route ${r.floorCpuUsPerRequest.toFixed(1)} µs a request at ${Math.round(r.floorPerSec)}/s`);
    for (const w of r.ways) ctx.log(`${WAY[w.way]}: first ${window(w.first)}${w.warm ? `; warm ${window(w.warm)}` : ''}`);
    return r.overhead.map((o) => ({
      figure: `${WAY[o.way]}, ${o.window === 'first' ? 'first window' : 'warm'}: overhead factor`, value: o.cpuUsPerOrder, unit: 'µs an order',
      baseline: `recovery ${o.recoveryUs.toFixed(1)} + bare ${o.floorUsPerOrder.toFixed(1)} µs`, ratio: o.factor, target: `≤ ${o.target.toFixed(1)}`, met: o.factor <= o.target && o.refused === 0,
    }));
  },
};

export const scaleout: Suite = {
  key: 'scaleout',
  name: 'scale-out: two perp API processes and the engine over Redis Streams (B) ÷ one process (A), CPU an order, PostgreSQL, warm windows (bench/perp-scaleout-bench.ts)',
  needs: ['DATABASE_URL', 'REDIS_URL'],
  async run(ctx) {
    const s = await runPerpScaleOutBench();
    ctx.log(`projected orders a second, A ÷ B: ${s.projection}`);
    const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const ratio = med(s.ratios);
    return [
      { figure: `CPU an order, B ÷ A, own processes (rounds ${list(s.ratios)}; with PostgreSQL and Redis ${list(s.ratiosWithServices)})`, value: med(s.two.map((x) => x.cpuUsPerOrder)), unit: 'µs an order', baseline: `A ${med(s.one.map((x) => x.cpuUsPerOrder)).toFixed(0)} µs`, ratio, target: '≤ 1.3', met: ratio <= 1.3 },
    ];
  },
};

export const streams: Suite = {
  key: 'streams',
  name: 'stream fan-out to 1,000 WebSocket subscribers of one book ÷ a bare ws broadcast of the same frames (bench/stream-fanout-bench.ts)',
  async run(ctx) {
    const f = await runStreamFanoutBench({ print: ctx.log });
    return [
      { figure: `fan-out to ${f.subscribers} subscribers (publisher → hub → sockets)`, value: f.capacity.perSec, unit: 'frames/s', baseline: `bare ws broadcast ${Math.round(f.bare.perSec).toLocaleString('en-US')}/s`, ratio: f.ratio, target: '≥ 0.5', met: f.ratio >= 0.5 },
      { figure: `under load: ${f.streams.orders.toLocaleString('en-US')} commands in ${f.streams.seconds.toFixed(0)} s, submit to socket p50 ${f.streams.p50} / p99 ${f.streams.p99} ms`, value: f.streams.perSec, unit: 'frames/s', target: 'report' },
    ];
  },
};

export const sandbox: Suite = {
  key: 'sandbox',
  name: 'the sandbox (issue 61): a clock advance with a position open, and a start of a seeded venue, ÷ a fresh venue (npm start on an empty data directory), child processes (bench/sandbox-bench.ts)',
  async run(ctx) {
    const r = await runSandboxBench({ days: ctx.num('BENCH_SANDBOX_DAYS', 30), reverts: ctx.num('BENCH_SANDBOX_REVERTS', 7), kitHistoryDays: TESTKIT_HISTORY_DAYS, log: ctx.log });
    const revertP50 = sandboxMedian(r.revertMs);
    const fresh = `fresh venue ${Math.round(r.freshStartMs).toLocaleString('en-US')} ms`;
    const slowest = [...r.ran].sort((a, b) => b.ms - a.ms)[0];
    return [
      { figure: 'a fresh venue: npm start on an empty data directory to its banner (the baseline)', value: r.freshStartMs, unit: 'ms', target: 'report' },
      {
        figure: `the test kit's cold start: startVenue() on an empty data directory, its ${r.kitHistoryDays} days of history (npm start's: 30)`,
        value: r.kitColdStartMs, unit: 'ms', baseline: fresh, ratio: r.kitColdStartMs / r.freshStartMs, target: '≤ 5 s', met: r.kitColdStartMs <= 5_000,
      },
      { figure: 'the seeded venue started again (no deploy, no seed): a start from a template', value: r.restartMs, unit: 'ms', baseline: fresh, ratio: r.restartMs / r.freshStartMs, target: '≤ 2 s', met: r.restartMs <= 2_000 },
      { figure: 'POST /sandbox/v1/snapshots (the venue stopped, copied, started again in process)', value: r.snapshotMs, unit: 'ms', baseline: fresh, ratio: r.snapshotMs / r.freshStartMs, target: 'report' },
      {
        figure: `revert to it after a market order, a resting order and a mint, p50 of ${r.revertMs.length} (max ${Math.round(Math.max(...r.revertMs)).toLocaleString('en-US')} ms)`,
        value: revertP50, unit: 'ms', baseline: fresh, ratio: revertP50 / r.freshStartMs, target: '≤ 250 ms', met: revertP50 <= 250,
      },
      { figure: 'POST /sandbox/v1/reset (the seeded venue, anvil started again on its state)', value: r.resetMs, unit: 'ms', baseline: fresh, ratio: r.resetMs / r.freshStartMs, target: 'report' },
      {
        figure: `clock advance of ${r.advanceDays} days, a position open (${r.steps} steps; slowest task: ${slowest.name} ${slowest.ms.toLocaleString('en-US')} ms, chain ${r.chainMs} ms)`,
        value: r.advanceMs, unit: 'ms', baseline: fresh, ratio: r.advanceMs / r.freshStartMs, target: '≤ 5 s', met: r.advanceMs <= 5_000,
      },
    ];
  },
};

/** In the order `npm run bench` runs them. */
export const SUITES: Suite[] = [http, indexer, executor, oneclick, upgrade, perpEngine, perpOrders, scaleout, streams, sandbox];
