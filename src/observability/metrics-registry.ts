/**
 * The process's Prometheus metrics (docs/operations.md "Metrics"), in one prom-client registry.
 *
 * Two kinds:
 * - event metrics, recorded where the event happens (HTTP answers, authentication and rate-limit
 *   refusals, engine commands, journal flushes, dropped stream frames): module-level objects, so a
 *   hot path reaches them without a lookup through the stack. They record only while some stack in
 *   the process serves metrics ({@link acquireMetrics}); with `METRICS_PORT=off` every record call
 *   returns at its first line, which is what the benchmark's "without" measures.
 * - state metrics, read at scrape time (quote, mark and index ages, indexer lag, queues, leases,
 *   stream connections, the insurance fund, open interest): gauges whose collect() reads the sources
 *   each running stack registers ({@link trackMetricsSource}) and unregisters on stop. Nothing is
 *   sampled between scrapes.
 *
 * Label values come from fixed sets only (route patterns, status codes, command kinds, causes,
 * roles, the catalog's symbols and instruments): never an API key, an address or an order id.
 * Subject labels read from the role samplers are checked against a symbol pattern and capped.
 */
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { FastifyInstance } from 'fastify';
import { APP_VERSION } from '../config/build-info.ts';
import { UnauthorizedError, ForbiddenError, type AuthFailure } from '../errors/app-error.ts';
import { LEASE_STATES, type RoleSnapshot, type RoleStatusRegistry } from './role-status.ts';

/** The one registry of this process: every metric below, and the process metrics once enabled. */
export const metricsRegistry = new Registry();

let holders = 0;
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
const HTTP_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Engine commands (applied, then durable in the journal) and journal flushes: fsync-bound. */
const ENGINE_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
const BATCH_ROW_BUCKETS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000];

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

function counterSeries<L extends string>(counter: Counter<L>, labels: Record<L, string>): CounterSeries {
  return { inc: (n = 1) => counter.inc(labels, n) };
}

function histogramSeries<L extends string>(histogram: Histogram<L>, labels: Record<L, string>): HistogramSeries {
  return { observe: (v) => histogram.observe(labels, v) };
}

// ---------------------------------------------------------------------------------------------
// HTTP: requests, latency, authentication and rate-limit refusals.

type HttpLabels = 'api' | 'method' | 'route' | 'status';
const HTTP_LABELS = ['api', 'method', 'route', 'status'] as const;
const httpRequests = new Counter<HttpLabels>({
  name: 'tokex_http_requests_total',
  help: 'HTTP requests answered, by API, method, route pattern (unmatched for unknown paths) and status code.',
  labelNames: HTTP_LABELS,
  registers: [metricsRegistry],
});
const httpDuration = new Histogram<HttpLabels>({
  name: 'tokex_http_request_duration_seconds',
  help: 'Time from a request received to its answer sent, by API, method, route pattern and status code.',
  labelNames: HTTP_LABELS,
  buckets: HTTP_BUCKETS,
  registers: [metricsRegistry],
});

/** Causes of an authentication refusal: the perp API's AuthFailure set plus `permission`. */
export const AUTH_CAUSES = ['credentials', 'key', 'expired', 'ip', 'timestamp', 'signature', 'replay', 'scope', 'permission'] as const;
export type AuthCause = (typeof AUTH_CAUSES)[number];

const authRefusals = new Counter<'api' | 'transport' | 'cause'>({
  name: 'tokex_auth_refusals_total',
  help: 'Requests and stream auth frames refused by authentication, by API, transport (http or stream) and cause. Counts only: no key or address.',
  labelNames: ['api', 'transport', 'cause'],
  registers: [metricsRegistry],
});
const rateLimitRefusals = new Counter<'api' | 'bucket'>({
  name: 'tokex_rate_limit_refusals_total',
  help: 'Requests refused with 429 by the request rate limit, by API and the bucket counted (key: an authenticated API key; address: a client address).',
  labelNames: ['api', 'bucket'],
  registers: [metricsRegistry],
});

/** The API each app serves, for the labels (set by createHttpServer). */
const apiOfApp = new WeakMap<object, string>();

export function labelApp(app: FastifyInstance, api: string): void {
  apiOfApp.set(app, api);
  // The refusal series exist from the start at 0, so a rate over them reads 0 rather than no data.
  for (const transport of ['http', 'stream']) for (const cause of AUTH_CAUSES) authRefusals.inc({ api, transport, cause }, 0);
  for (const bucket of ['key', 'address']) rateLimitRefusals.inc({ api, bucket }, 0);
  for (const reason of ['slow_consumer', 'closed']) droppedFrames.inc({ api, reason }, 0);
  streamResets.inc({ api }, 0);
}

export function apiLabelOf(app: FastifyInstance): string {
  return apiOfApp.get(app) ?? 'other';
}

interface HttpSeries {
  count: CounterSeries;
  duration: HistogramSeries;
}

/**
 * Per app: route → method → status → the series' label object, made once, so an answer allocates
 * nothing and builds no string here.
 */
const httpSeries = new WeakMap<object, Map<string, Map<string, Map<number, HttpSeries>>>>();

function seriesOf(app: object, route: string, method: string, status: number): HttpSeries {
  let byRoute = httpSeries.get(app);
  if (byRoute === undefined) httpSeries.set(app, (byRoute = new Map()));
  let byMethod = byRoute.get(route);
  if (byMethod === undefined) byRoute.set(route, (byMethod = new Map()));
  let byStatus = byMethod.get(method);
  if (byStatus === undefined) byMethod.set(method, (byStatus = new Map()));
  let s = byStatus.get(status);
  if (s === undefined) {
    const labels = { api: apiOfApp.get(app) ?? 'other', method, route, status: String(status) };
    s = { count: counterSeries(httpRequests, labels), duration: histogramSeries(httpDuration, labels) };
    byStatus.set(status, s);
  }
  return s;
}

/**
 * One answered request. `route` is the matched route's pattern (`/v4/public/trader/orders/:orderId`)
 * or undefined for a path no route matched (labelled `unmatched`, whatever the path was).
 */
export function recordHttpRequest(app: object, method: string, route: string | undefined, status: number, ms: number): void {
  if (holders === 0) return;
  const s = seriesOf(app, route ?? 'unmatched', method, status);
  s.count.inc();
  s.duration.observe(ms / 1000);
}

/** The cause of an authentication refusal, from the fixed set (never the refusal's own words). */
export function authCauseOf(err: unknown): AuthCause | undefined {
  if (err instanceof ForbiddenError) return 'permission';
  if (!(err instanceof UnauthorizedError)) return undefined;
  if (err.failure !== 'credentials') return err.failure satisfies AuthFailure;
  // The stock API's refusals all carry the default failure; their reasons (stock-auth-hook.ts) say which check failed.
  const r = err.reason;
  if (r.includes('READ_ONLY')) return 'permission';
  if (r.includes('expired')) return 'expired';
  if (r.includes('whitelist') || r.startsWith('peer ')) return 'ip';
  if (r.startsWith('timestamp outside')) return 'timestamp';
  if (r.startsWith('signature')) return 'signature';
  if (r === 'nonce reused') return 'replay';
  if (r.includes('scope') || r.includes('does not match the service')) return 'scope';
  if (r.includes('api key')) return 'key';
  return 'credentials';
}

/** An authentication refusal (`err` an UnauthorizedError or ForbiddenError; anything else is not counted). */
export function recordAuthRefusal(api: string, transport: 'http' | 'stream', err: unknown): void {
  if (holders === 0) return;
  const cause = authCauseOf(err);
  if (cause !== undefined) authRefusals.inc({ api, transport, cause });
}

/** A request refused by the rate limit; `bucket` is the limiter's bucket, of which only the kind is kept. */
export function recordRateLimited(app: object, bucket: string): void {
  if (holders === 0) return;
  rateLimitRefusals.inc({ api: apiOfApp.get(app) ?? 'other', bucket: bucket.startsWith('key:') ? 'key' : 'address' });
}

// ---------------------------------------------------------------------------------------------
// The perpetual engine: commands, their latency, journal flushes.

/**
 * Every command kind the engine knows, the label's whole range; anything else is `other`. The engine
 * holds this list to its own CommandKind (src/perp/sequencer/engine-sequencer.ts checks it at compile
 * time), since this layer does not import the domain above it.
 */
export const ENGINE_COMMAND_KINDS = [
  'deposit', 'withdraw', 'placeOrder', 'amendOrder', 'cancelOrder', 'cancelOrders', 'cancelAll', 'setLeverage', 'adjustMargin',
  'setMarkPrice', 'addInstrument', 'updateInstrument', 'requestWithdrawal', 'settleWithdrawal', 'addLiquidity',
  'removeLiquidity', 'cancelAllAfter', 'applyFunding', 'applySplit', 'setRules',
] as const;
const COMMAND_KINDS: ReadonlySet<string> = new Set(ENGINE_COMMAND_KINDS);

const engineCommands = new Counter<'kind' | 'outcome'>({
  name: 'tokex_engine_commands_total',
  help: 'Commands the perpetual engine applied and journalled, by kind and outcome (accepted, rejected by the engine, or failed: the journal write failed and the outcome is unknown).',
  labelNames: ['kind', 'outcome'],
  registers: [metricsRegistry],
});
const engineCommandDuration = new Histogram<'kind'>({
  name: 'tokex_engine_command_duration_seconds',
  help: 'Time from a command applied by the engine to its answer released (its journal row durable), by kind.',
  labelNames: ['kind'],
  buckets: ENGINE_BUCKETS,
  registers: [metricsRegistry],
});
const journalFlushDuration = new Histogram({
  name: 'tokex_engine_journal_flush_duration_seconds',
  help: 'Time to write one group-committed batch of engine journal rows (durable on return).',
  buckets: ENGINE_BUCKETS,
  registers: [metricsRegistry],
});
const journalBatchRows = new Histogram({
  name: 'tokex_engine_journal_batch_rows',
  help: 'Journal rows per group-committed batch.',
  buckets: BATCH_ROW_BUCKETS,
  registers: [metricsRegistry],
});
const journalFailures = new Counter({
  name: 'tokex_engine_journal_failures_total',
  help: 'Journal batch writes that failed (the engine then rebuilds from the journal).',
  registers: [metricsRegistry],
});

interface KindSeries {
  accepted: CounterSeries;
  rejected: CounterSeries;
  failed: CounterSeries;
  duration: HistogramSeries;
}

/** The series of each command kind, bound once; a kind outside the engine's set is `other`. */
const kindSeries = new Map<string, KindSeries>();

function seriesOfKind(raw: string): KindSeries {
  let s = kindSeries.get(raw);
  if (s !== undefined) return s;
  const kind = COMMAND_KINDS.has(raw) ? raw : 'other';
  s = kindSeries.get(kind);
  if (s === undefined) {
    s = {
      accepted: counterSeries(engineCommands, { kind, outcome: 'accepted' }),
      rejected: counterSeries(engineCommands, { kind, outcome: 'rejected' }),
      failed: counterSeries(engineCommands, { kind, outcome: 'failed' }),
      duration: histogramSeries(engineCommandDuration, { kind }),
    };
    kindSeries.set(kind, s);
  }
  return s;
}

/** The clock of the engine metrics: performance.now() while recording, 0 otherwise (nothing to time). */
export function metricsClock(): number {
  return holders === 0 ? 0 : performance.now();
}

/** What the sequencer knows of each command of a batch. */
export interface JournalledCommand {
  row: { kind: string };
  result: { ok: boolean };
  /** metricsClock() when the command was applied. */
  appliedAt?: number;
}

/** A batch made durable: `startedAt` is metricsClock() before the write. */
export function recordJournalFlush(startedAt: number, batch: readonly JournalledCommand[]): void {
  if (holders === 0 || startedAt === 0) return;
  const now = performance.now();
  journalFlushDuration.observe((now - startedAt) / 1000);
  journalBatchRows.observe(batch.length);
  for (const p of batch) {
    const s = seriesOfKind(p.row.kind);
    (p.result.ok ? s.accepted : s.rejected).inc();
    if (p.appliedAt) s.duration.observe((now - p.appliedAt) / 1000);
  }
}

/** A batch whose write failed: its commands' outcome is unknown to their senders. */
export function recordJournalFailure(batch: readonly JournalledCommand[]): void {
  if (holders === 0) return;
  journalFailures.inc();
  for (const p of batch) seriesOfKind(p.row.kind).failed.inc();
}

// ---------------------------------------------------------------------------------------------
// Streams.

const droppedFrames = new Counter<'api' | 'reason'>({
  name: 'tokex_stream_dropped_frames_total',
  help: 'Stream frames not delivered, by API and reason: slow_consumer (the client did not read: the frame is dropped and the connection closed), closed (the connection had gone).',
  labelNames: ['api', 'reason'],
  registers: [metricsRegistry],
});
const streamResets = new Counter<'api'>({
  name: 'tokex_stream_resets_total',
  help: 'Subscriptions ended by the server because their stream restarted or had a gap (the client is told to subscribe again).',
  labelNames: ['api'],
  registers: [metricsRegistry],
});

export function recordDroppedFrame(api: string, reason: 'slow_consumer' | 'closed'): void {
  if (holders === 0) return;
  droppedFrames.inc({ api, reason });
}

export function recordStreamReset(api: string): void {
  if (holders === 0) return;
  streamResets.inc({ api });
}

/** A stream endpoint's figures, read at scrape time. */
export interface StreamEndpointSource {
  api: string;
  connections(): number;
  /** Subscriptions by channel name (`depth`, `orders`, ...). */
  subscriptions(): Map<string, number>;
}

const streamEndpoints = new Set<StreamEndpointSource>();

/** Registers a stream endpoint for the gauges; the answer removes it (call it when the endpoint closes). */
export function trackStreamEndpoint(source: StreamEndpointSource): () => void {
  streamEndpoints.add(source);
  return () => void streamEndpoints.delete(source);
}

new Gauge<'api'>({
  name: 'tokex_stream_connections',
  help: 'Open WebSocket stream connections, by API.',
  labelNames: ['api'],
  registers: [metricsRegistry],
  collect() {
    this.reset();
    const by = new Map<string, number>();
    for (const s of streamEndpoints) by.set(s.api, (by.get(s.api) ?? 0) + s.connections());
    for (const [api, n] of by) this.set({ api }, n);
  },
});

new Gauge<'api' | 'channel'>({
  name: 'tokex_stream_subscriptions',
  help: 'Stream subscriptions, by API and channel.',
  labelNames: ['api', 'channel'],
  registers: [metricsRegistry],
  collect() {
    this.reset();
    const by = new Map<string, { api: string; channel: string; n: number }>();
    for (const s of streamEndpoints) {
      for (const [channel, n] of s.subscriptions()) {
        const key = `${s.api} ${channel}`;
        const e = by.get(key);
        if (e) e.n += n;
        else by.set(key, { api: s.api, channel, n });
      }
    }
    for (const e of by.values()) this.set({ api: e.api, channel: e.channel }, e.n);
  },
});

// ---------------------------------------------------------------------------------------------
// State read at scrape time from the stacks running here.

/**
 * What the gauges read of the perpetual engine (src/perp/engine/perp-engine.ts satisfies it): the
 * shape only, so this layer does not import the domain above it.
 */
export interface MetricsEngine {
  instrumentList(): ReadonlyArray<{ symbol: string; lotSize: string; unitMicros: bigint }>;
  prices(symbol: string): { markPriceTicks: number; markTs: number; indexTs: number } | undefined;
  openInterest(symbol: string): number | undefined;
  insuranceFund(): { balance: bigint };
}

/** What a running stack offers the gauges. */
export interface MetricsSource {
  /** The progress and lease state of the singleton roles run in this process. */
  status?: RoleStatusRegistry;
  /** The live perpetual engine, when the perp-engine role runs here. */
  engine?(): MetricsEngine | undefined;
  /**
   * The role status of the other chains this process serves (docs/deployment.md, "Several chains"),
   * exported by chain id; `status` above is the first chain's.
   */
  chains?(): ReadonlyArray<{ chainId: number; status: RoleStatusRegistry }>;
}

const sources = new Set<MetricsSource>();

/** Registers a stack's source for the gauges; the answer removes it. */
export function trackMetricsSource(source: MetricsSource): () => void {
  sources.add(source);
  return () => void sources.delete(source);
}

/** A symbol or instrument as the catalogs spell them: anything else never becomes a label. */
const SUBJECT = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,31}$/;
/** At most this many subjects per role and gauge, whatever a sampler returns. */
const MAX_SUBJECTS = 200;

/** One snapshot of every source's roles per scrape: every gauge of a scrape reads the same figures. */
let memo: { at: number; snaps: RoleSnapshot[] } | undefined;

function snapshots(): RoleSnapshot[] {
  const t = Date.now();
  if (memo && t - memo.at < 100) return memo.snaps;
  const snaps: RoleSnapshot[] = [];
  for (const s of sources) {
    if (!s.status) continue;
    try {
      for (const r of s.status.snapshot(t)) snaps.push(r);
    } catch {
      // A registry that fails reports nothing this scrape.
    }
  }
  memo = { at: t, snaps };
  return snaps;
}

function engines(): MetricsEngine[] {
  const out: MetricsEngine[] = [];
  for (const s of sources) {
    try {
      const e = s.engine?.();
      if (e) out.push(e);
    } catch {
      // An engine being replaced (a recovery) is read at the next scrape.
    }
  }
  return out;
}

const finite = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const numberOf = (v: unknown): number | undefined => (finite(v) ? v : typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : undefined);
const ageSeconds = (now: number, at: number) => Math.max(0, (now - at) / 1000);

/** Entries of a per-subject record of times (ms), checked and capped. */
function subjectTimes(record: unknown): Array<[string, number]> {
  if (record === null || typeof record !== 'object') return [];
  const out: Array<[string, number]> = [];
  for (const [k, v] of Object.entries(record as Record<string, unknown>)) {
    if (out.length >= MAX_SUBJECTS) break;
    if (SUBJECT.test(k) && finite(v) && v > 0) out.push([k, v]);
  }
  return out;
}

/** A detail value holding a per-subject record: an object, or its JSON text (detail values are scalars). */
function parsedRecord(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  try {
    return JSON.parse(v) as unknown;
  } catch {
    return undefined;
  }
}

function gauge<L extends string>(name: string, help: string, labelNames: readonly L[], fill: (set: (labels: Record<L, string>, v: number) => void, now: number) => void): void {
  new Gauge<L>({
    name,
    help,
    labelNames,
    registers: [metricsRegistry],
    collect() {
      this.reset();
      try {
        fill((labels, v) => this.set(labels as never, v), Date.now());
      } catch {
        // One failing read leaves this gauge empty for the scrape, the others unaffected.
      }
    },
  });
}

gauge('tokex_quote_age_seconds', 'Seconds since the last quote of each symbol (market data role in this process).', ['symbol'], (set, now) => {
  for (const r of snapshots()) if (r.role === 'marketdata') for (const [symbol, at] of subjectTimes(r.subjects)) set({ symbol }, ageSeconds(now, at));
});

/** Mark and index times per instrument: the engine's own where it runs here, else the perp-engine role's sample. */
function perpPriceTimes(): { mark: Map<string, number>; index: Map<string, number> } {
  const mark = new Map<string, number>();
  const index = new Map<string, number>();
  for (const e of engines()) {
    for (const spec of e.instrumentList()) {
      const p = e.prices(spec.symbol);
      if (!p || !SUBJECT.test(spec.symbol)) continue;
      if (p.markTs > 0) mark.set(spec.symbol, Math.max(mark.get(spec.symbol) ?? 0, p.markTs));
      if (p.indexTs > 0) index.set(spec.symbol, Math.max(index.get(spec.symbol) ?? 0, p.indexTs));
    }
  }
  for (const r of snapshots()) {
    if (r.role !== 'perp-engine') continue;
    for (const [k, at] of subjectTimes(r.subjects)) if (!mark.has(k)) mark.set(k, at);
    for (const [k, at] of subjectTimes(parsedRecord(r.detail?.indexAt ?? r.detail?.index))) if (!index.has(k)) index.set(k, at);
  }
  return { mark, index };
}

gauge('tokex_perp_mark_age_seconds', 'Seconds since the mark price of each perpetual instrument was last set.', ['instrument'], (set, now) => {
  for (const [instrument, at] of perpPriceTimes().mark) set({ instrument }, ageSeconds(now, at));
});

gauge('tokex_perp_index_age_seconds', 'Seconds since the index price of each perpetual instrument was last set.', ['instrument'], (set, now) => {
  for (const [instrument, at] of perpPriceTimes().index) set({ instrument }, ageSeconds(now, at));
});

/**
 * An indexer's lag in blocks from its sample: the follower's `lagBlocks`, else its head (as last
 * polled) minus the block indexed. Read from what the follower knows: no call to the node.
 */
function lagBlocksOf(r: RoleSnapshot): number | undefined {
  const d = r.detail ?? {};
  const lag = numberOf(d.lagBlocks);
  if (lag !== undefined) return lag;
  const head = numberOf(d.head);
  const indexed = numberOf(d.indexed);
  return head !== undefined && indexed !== undefined ? Math.max(0, head - indexed) : undefined;
}

gauge('tokex_indexer_lag_blocks', 'Blocks between the chain head and the last block indexed, by indexer (indexer: the stock venue; perp-indexer: the margin vault).', ['indexer'], (set) => {
  for (const r of snapshots()) {
    if (r.role !== 'indexer' && r.role !== 'perp-indexer') continue;
    const lag = lagBlocksOf(r);
    if (lag !== undefined) set({ indexer: r.role }, lag);
  }
});

gauge('tokex_queue_depth', 'Items waiting in a worker queue, by role (executor: orders to settle; relayer: One Click transactions to send).', ['role'], (set) => {
  for (const r of snapshots()) {
    if (r.role !== 'executor' && r.role !== 'relayer') continue;
    const depth = numberOf(r.detail?.queueDepth);
    if (depth !== undefined) set({ role: r.role }, depth);
  }
});

gauge('tokex_queue_oldest_age_seconds', 'Age of the oldest item waiting in a worker queue, by role (0 when the queue is empty).', ['role'], (set, now) => {
  for (const r of snapshots()) {
    if (r.role !== 'executor' && r.role !== 'relayer' || !r.detail || !('oldestPendingAt' in r.detail)) continue;
    const at = numberOf(r.detail.oldestPendingAt);
    set({ role: r.role }, at === undefined || at <= 0 ? 0 : ageSeconds(now, at));
  }
});

gauge('tokex_perp_projector_lag_events', 'Engine events the perp projector has not yet written to the history tables.', [], (set) => {
  for (const r of snapshots()) {
    if (r.role !== 'projector') continue;
    const lag = numberOf(r.detail?.lag);
    if (lag !== undefined) set({}, lag);
  }
});

gauge('tokex_perp_engine_last_seq', 'The last event sequence number of the perpetual engine run in this process (it grows with every command that changes state).', [], (set) => {
  for (const r of snapshots()) {
    if (r.role !== 'perp-engine') continue;
    const seq = numberOf(r.detail?.seq);
    if (seq !== undefined) set({}, seq);
  }
});

gauge('tokex_role_progress_age_seconds', 'Seconds since each role run in this process last made progress (a tick, a block indexed, a command applied).', ['role'], (set, now) => {
  for (const r of snapshots()) if (finite(r.progressAt)) set({ role: r.role }, ageSeconds(now, r.progressAt));
});

/** Lease states of every source, by lease (role) name: held wins over the others when two stacks share a process. */
function leaseStates(): Map<string, string> {
  const out = new Map<string, string>();
  for (const s of sources) {
    if (!s.status) continue;
    for (const [lease, state] of s.status.leases()) if (SUBJECT.test(lease) && (out.get(lease) !== 'held' || state === 'held')) out.set(lease, state);
  }
  return out;
}

gauge('tokex_role_lease_held', '1 when this process holds the role\'s lease and runs it, 0 otherwise (stand-by, lost, released).', ['role'], (set) => {
  for (const [role, state] of leaseStates()) set({ role }, state === 'held' ? 1 : 0);
});

gauge('tokex_role_lease_state', 'The role\'s lease state in this process: 1 for the current state (held, standby, lost, released), 0 for the others.', ['role', 'state'], (set) => {
  for (const [role, current] of leaseStates()) for (const state of LEASE_STATES) set({ role, state }, state === current ? 1 : 0);
});

/** The other chains' role snapshots and lease states, by chain id (read once per scrape of each gauge). */
function chainStatuses(): Array<{ chainId: string; status: RoleStatusRegistry }> {
  const out: Array<{ chainId: string; status: RoleStatusRegistry }> = [];
  for (const s of sources) {
    try {
      for (const c of s.chains?.() ?? []) out.push({ chainId: String(c.chainId), status: c.status });
    } catch {
      // A source being stopped reports nothing this scrape.
    }
  }
  return out;
}

gauge('tokex_chain_role_progress_age_seconds', 'Seconds since each per-chain role (indexer, executor, relayer) of a chain after the first last made progress, by chain id (the first chain\'s are tokex_role_progress_age_seconds).', ['chain_id', 'role'], (set, now) => {
  for (const c of chainStatuses()) for (const r of c.status.snapshot(now)) if (finite(r.progressAt)) set({ chain_id: c.chainId, role: r.role }, ageSeconds(now, r.progressAt));
});

gauge('tokex_chain_role_lease_held', '1 when this process holds the lease of a chain\'s per-chain role and runs it, 0 otherwise, by chain id, for the chains after the first.', ['chain_id', 'role'], (set) => {
  for (const c of chainStatuses()) for (const [role, state] of c.status.leases()) if (SUBJECT.test(role)) set({ chain_id: c.chainId, role }, state === 'held' ? 1 : 0);
});

gauge('tokex_chain_indexer_lag_blocks', 'Blocks between a chain\'s head and the last block its stock indexer indexed, by chain id, for the chains after the first whose indexer runs in this process (the first chain\'s is tokex_indexer_lag_blocks{indexer="indexer"}).', ['chain_id'], (set, now) => {
  for (const c of chainStatuses()) {
    for (const r of c.status.snapshot(now)) {
      if (r.role !== 'indexer') continue;
      const lag = lagBlocksOf(r);
      if (lag !== undefined) set({ chain_id: c.chainId }, lag);
    }
  }
});

/** Micro-USD (the engine's collateral unit) in USD, for a gauge only: the money itself stays exact. */
const usd = (micros: bigint) => Number(micros) / 1e6;

gauge('tokex_perp_insurance_fund_usd', 'The perpetual venue\'s insurance fund balance, USD.', [], (set) => {
  for (const e of engines()) set({}, usd(e.insuranceFund().balance));
});

gauge('tokex_perp_open_interest', 'Open interest of each perpetual instrument, in its base asset (the sum of the long positions).', ['instrument'], (set) => {
  for (const e of engines()) {
    for (const spec of e.instrumentList()) {
      const lots = e.openInterest(spec.symbol);
      if (lots !== undefined && SUBJECT.test(spec.symbol)) set({ instrument: spec.symbol }, lots * Number(spec.lotSize));
    }
  }
});

gauge('tokex_perp_open_interest_usd', 'Open interest of each perpetual instrument at its mark price, USD.', ['instrument'], (set) => {
  for (const e of engines()) {
    for (const spec of e.instrumentList()) {
      const lots = e.openInterest(spec.symbol);
      const mark = e.prices(spec.symbol)?.markPriceTicks ?? 0;
      if (lots !== undefined && SUBJECT.test(spec.symbol)) set({ instrument: spec.symbol }, usd(BigInt(lots) * BigInt(mark) * spec.unitMicros));
    }
  }
});

// ---------------------------------------------------------------------------------------------
// Live quote sources (docs/market-data.md): read at scrape time from the marketdata role's live
// quote service, when QUOTE_SOURCE names a provider. Label values: source names and symbols,
// checked against the subject pattern, and the fixed sets below.

/** A quote source's connection states (src/marketdata/sources/quote-source.ts `SourceState`). */
export const QUOTE_SOURCE_STATES = ['idle', 'connecting', 'subscribing', 'live', 'reconnecting', 'failed', 'stopped'] as const;
/** The guard's verdicts per symbol (src/marketdata/sources/quote-guard.ts `SymbolLiveness`). */
export const QUOTE_SYMBOL_STATUSES = ['live', 'stale', 'diverged', 'no-data'] as const;

/** A source's message counts, each message once by what became of it. */
export interface QuoteMessageCounts {
  accepted: number;
  duplicate: number;
  outOfOrder: number;
  malformed: number;
  rejectedValue: number;
  ignored: number;
}

/** What the quote gauges read of a live quote service (the shape only: this layer imports no domain). */
export interface QuoteFeedMetrics {
  sources(): ReadonlyArray<{ name: string; state: string; counters: QuoteMessageCounts }>;
  symbols(): ReadonlyArray<{ symbol: string; status: string }>;
}

const quoteFeeds = new Set<QuoteFeedMetrics>();

/** Registers a live quote service for the gauges; the answer removes it (call it when the service stops). */
export function trackQuoteFeed(feed: QuoteFeedMetrics): () => void {
  quoteFeeds.add(feed);
  return () => void quoteFeeds.delete(feed);
}

function eachQuoteFeed(read: (feed: QuoteFeedMetrics) => void): void {
  for (const f of quoteFeeds) {
    try {
      read(f);
    } catch {
      // A feed that fails to answer reports nothing this scrape.
    }
  }
}

gauge('tokex_quote_source_state', 'Each live quote source\'s connection state: 1 for the current one (idle, connecting, subscribing, live, reconnecting, failed, stopped), 0 for the others.', ['source', 'state'], (set) => {
  eachQuoteFeed((f) => {
    for (const s of f.sources()) {
      if (!SUBJECT.test(s.name)) continue;
      for (const state of QUOTE_SOURCE_STATES) set({ source: s.name, state }, state === s.state ? 1 : 0);
    }
  });
});

gauge('tokex_quote_symbol_status', 'Each live-quoted symbol\'s status by the quote guard: 1 for the current one (live: tradable; stale, diverged, no-data: halted), 0 for the others.', ['symbol', 'status'], (set) => {
  eachQuoteFeed((f) => {
    let n = 0;
    for (const s of f.symbols()) {
      if (!SUBJECT.test(s.symbol) || n++ >= MAX_SUBJECTS) continue;
      for (const status of QUOTE_SYMBOL_STATUSES) set({ symbol: s.symbol, status }, status === s.status ? 1 : 0);
    }
  });
});

/** The outcome label of each count. */
const QUOTE_OUTCOMES: ReadonlyArray<readonly [keyof QuoteMessageCounts, string]> = [
  ['accepted', 'accepted'],
  ['duplicate', 'duplicate'],
  ['outOfOrder', 'out_of_order'],
  ['malformed', 'malformed'],
  ['rejectedValue', 'rejected_value'],
  ['ignored', 'ignored'],
];

new Counter<'source' | 'outcome'>({
  name: 'tokex_quote_source_messages_total',
  help: 'Data messages (quotes and trades) a live quote source received, each counted once by what became of it: accepted, or dropped as duplicate, out_of_order, malformed, rejected_value (zero, crossed, absurd) or ignored (not asked for, not used).',
  labelNames: ['source', 'outcome'],
  registers: [metricsRegistry],
  collect() {
    this.reset();
    eachQuoteFeed((f) => {
      for (const s of f.sources()) {
        if (!SUBJECT.test(s.name)) continue;
        for (const [key, outcome] of QUOTE_OUTCOMES) {
          const v = s.counters[key];
          if (finite(v) && v >= 0) this.inc({ source: s.name, outcome }, v);
        }
      }
    });
  },
});
