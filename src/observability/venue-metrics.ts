/**
 * The stock venue's own series (docs/operations.md, "Metrics"), beside metrics-registry.ts's and in
 * its registry: the orders the executor rejects, by the rule that rejected them, and the chain's
 * clock against the wall clock, which halts every fill when it passes the oracle's age
 * (chain-clock-policy.ts). metrics-server.ts loads this module, so every process serving metrics
 * exports both series even where no executor runs.
 *
 * Label values come from the fixed sets below and the configured chain ids: never an order id, an
 * address or a sentence.
 */
import { Counter, Gauge } from 'prom-client';
import { metricsActive, metricsRegistry } from './metrics-registry.ts';
import type { ChainClockFigures } from './chain-clock-policy.ts';

/**
 * Why the executor closes an order REJECTED: the fill policy's rejecting reasons
 * (src/stock/executor/fill-policy.ts `DecisionReason`, `-` written `_` as Prometheus labels are),
 * and `other` for anything else. The executor holds its reasons to this list at compile time.
 */
export const EXECUTOR_REJECTION_REASONS = [
  'no_quote',
  'notional_too_small',
  'beyond_worst_price',
  'lock_exhausted',
  'oracle_stale',
  'oracle_deviation',
  'oracle_invalid',
  'market_outside_regular',
  'not_fractionable',
  'other',
] as const;
export type ExecutorRejectionReason = (typeof EXECUTOR_REJECTION_REASONS)[number];

const KNOWN: ReadonlySet<string> = new Set(EXECUTOR_REJECTION_REASONS);

const rejections = new Counter<'reason'>({
  name: 'tokex_executor_rejections_total',
  help: 'Stock orders the executor closed REJECTED (the close mined), by the rule that rejected them: no_quote, notional_too_small, beyond_worst_price, lock_exhausted, oracle_stale, oracle_deviation, oracle_invalid, market_outside_regular, not_fractionable, other.',
  labelNames: ['reason'],
  registers: [metricsRegistry],
});
// Every reason exists from the start at 0, so a rate over them reads 0 rather than no data.
for (const reason of EXECUTOR_REJECTION_REASONS) rejections.inc({ reason }, 0);

/** The label of a fill-policy reason (`oracle-stale` → `oracle_stale`); one outside the set is `other`. */
export function rejectionLabel(reason: string): ExecutorRejectionReason {
  const label = reason.replace(/-/g, '_');
  return KNOWN.has(label) ? (label as ExecutorRejectionReason) : 'other';
}

/** An order whose REJECTED close was mined, with the fill policy's reason. */
export function recordExecutorRejection(reason: string): void {
  if (!metricsActive()) return;
  rejections.inc({ reason: rejectionLabel(reason) });
}

/** A chain's clock reading, registered by the executor role of that chain. */
export interface ChainClockSource {
  chainId: number;
  figures(): ChainClockFigures | undefined;
}

const clocks = new Set<ChainClockSource>();

/** Registers a chain clock for the gauge; the answer removes it (call it when the role stops). */
export function trackChainClock(source: ChainClockSource): () => void {
  clocks.add(source);
  return () => void clocks.delete(source);
}

new Gauge<'chain_id'>({
  name: 'tokex_chain_clock_skew_seconds',
  help: "The chain's clock (its latest block's timestamp) minus this host's wall clock, seconds, by chain id: positive ahead, negative behind (measured when a block appears). Stock fills stop when it passes the oracle's maxAge less the executor's margin, or the PriceFeedHub's MAX_CLOCK_SKEW behind.",
  labelNames: ['chain_id'],
  registers: [metricsRegistry],
  collect() {
    this.reset();
    for (const c of clocks) {
      try {
        const f = c.figures();
        if (f !== undefined && Number.isSafeInteger(c.chainId)) this.set({ chain_id: String(c.chainId) }, f.skewMs / 1000);
      } catch {
        // A source being stopped reports nothing this scrape.
      }
    }
  },
});
