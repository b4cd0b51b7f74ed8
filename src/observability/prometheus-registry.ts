/**
 * The process's one prom-client registry (metrics-registry.ts has the whole picture): turning
 * recording on and off, the process metrics, the build's `_info`, and what every metric module shares:
 * the buckets and the hot path's label-set objects.
 */
import { createRequire } from 'node:module';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { APP_VERSION } from '../config/build-info.ts';

/** The one registry of this process: every metric below, and the process metrics once enabled. */
export const metricsRegistry = new Registry();

/**
 * Stacks holding recording on ({@link acquireMetrics}): read directly by the record calls of the metric
 * modules (an imported live binding), so that a call returns at its first line while it is 0.
 */
export let holders = 0;
let defaultsOn = false;

/**
 * prom-client's process metrics (process_*, nodejs_*: CPU, memory, heap, event loop lag, handles),
 * all but its GC histogram, nodejs_gc_duration_seconds: that one runs a perf_hooks observer on
 * every collection, and in the benchmark (docs/operations.md "What the metrics cost") the process
 * metrics made most of the metrics' whole cost on the order path, the GC observer about 0.7 % of
 * the server's CPU per order of it. They are prom-client's own modules, lib/metrics/<name>.js for each name it lists, which the
 * exact dependency version pins; should that layout change, all of them are taken as before.
 */
function startProcessMetrics(): void {
  try {
    const load = createRequire(import.meta.url);
    const starts = collectDefaultMetrics.metricsList
      .filter((name) => name !== 'gc')
      .map((name) => load(`prom-client/lib/metrics/${name}.js`) as (registry: Registry, config: object) => void);
    for (const start of starts) start(metricsRegistry, { eventLoopMonitoringPrecision: 10 });
  } catch {
    collectDefaultMetrics({ register: metricsRegistry });
  }
}

/**
 * Turns recording on for this process until the answer is called (counted: several stacks in one
 * process, as in the tests, each hold it). The first call also starts the process metrics.
 */
export function acquireMetrics(): () => void {
  holders++;
  if (!defaultsOn) {
    defaultsOn = true;
    startProcessMetrics();
  }
  let released = false;
  return () => {
    if (released) return;
    released = true;
    holders--;
  };
}

/** Whether event metrics are recorded now. */
export function metricsActive(): boolean {
  return holders > 0;
}

// ---------------------------------------------------------------------------------------------
// The build: which release each process runs, Prometheus' `_info` convention (a constant 1 whose
// labels are the facts), so that a query can join it to any other series by instance.

new Gauge<'version' | 'node'>({
  name: 'tokex_build_info',
  help: 'Always 1: the tokex release this process runs (version, package.json\'s) and its Node.js version (node).',
  labelNames: ['version', 'node'],
  registers: [metricsRegistry],
}).set({ version: APP_VERSION, node: process.version }, 1);

// ---------------------------------------------------------------------------------------------
// Buckets, in seconds.

/** HTTP answers: from a cached read (well under a millisecond) to a chain round trip (seconds). */
export const HTTP_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Engine commands (applied, then durable in the journal) and journal flushes: fsync-bound. */
export const ENGINE_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
export const BATCH_ROW_BUCKETS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000];

// ---------------------------------------------------------------------------------------------
// Hot-path series: a label set's object is made once and kept, so recording allocates nothing.
// (prom-client still turns it into a key string on each call: about 1 µs a request, 0.1 % of the
// server's CPU per signed order; series of our own, without that, were measured and not kept,
// docs/performance.md "Hand-made code and what it buys".)

export interface CounterSeries {
  inc(n?: number): void;
}

export interface HistogramSeries {
  observe(seconds: number): void;
}

export function counterSeries<L extends string>(counter: Counter<L>, labels: Record<L, string>): CounterSeries {
  return { inc: (n = 1) => counter.inc(labels, n) };
}

export function histogramSeries<L extends string>(histogram: Histogram<L>, labels: Record<L, string>): HistogramSeries {
  return { observe: (v) => histogram.observe(labels, v) };
}
