/**
 * The perpetual engine's metrics (metrics-registry.ts): commands, their latency, journal flushes.
 */
import { performance } from 'node:perf_hooks';
import { Counter, Histogram } from 'prom-client';
import { holders, metricsRegistry, ENGINE_BUCKETS, BATCH_ROW_BUCKETS, counterSeries, histogramSeries, type CounterSeries, type HistogramSeries } from './prometheus-registry.ts';

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
