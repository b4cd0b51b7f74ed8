/**
 * State metrics (metrics-registry.ts), read at scrape time from the stacks running here: quote, mark
 * and index ages, indexer lag, queues, leases, the insurance fund, open interest, live quote feeds.
 */
import { Counter, Gauge } from 'prom-client';
import { LEASE_STATES, type RoleSnapshot, type RoleStatusRegistry } from './role-status.ts';
import { metricsRegistry } from './prometheus-registry.ts';

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
