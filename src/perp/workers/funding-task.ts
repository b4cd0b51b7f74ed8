/**
 * Funding (docs/perp-pricing.md "Funding"): every `sampleMs` the premium of each book's impact bid
 * and ask over the index is sampled; at each funding time (a multiple of the interval since the
 * epoch, so every process agrees when it is) the mean of the interval's samples gives the rate,
 * which is submitted as `applyFunding` with id `funding:<symbol>:<time>`: a restart, or a second
 * engine process by mistake, can never pay the same interval twice.
 *
 * Samples live in memory: after a restart the interval in progress is averaged over the samples
 * taken since, and an interval the process was down for at its end is not paid.
 */
import { periodic, type PeriodicTask } from '../../lib/async.ts';
import type { Logger } from '../../lib/logger.ts';
import type { PerpEngine } from '../engine/perp-engine.ts';
import { fundingRate, impactPrice, premiumSample, type FundingSettings } from '../pricing/funding-rate.ts';
import type { EngineGateway } from '../sequencer/engine-gateway.ts';
import type { IndexSource } from './mark-price-task.ts';
import { venueNow } from '../../lib/venue-clock.ts';

/** Impact notional: the market order size whose average fill price stands for a side of the book. */
export const DEFAULT_IMPACT_NOTIONAL_MICROS = 10_000n * 1_000_000n;

export interface FundingTaskOptions {
  gateway: Pick<EngineGateway, 'submit'>;
  engine: () => PerpEngine;
  index: IndexSource;
  /** Default 5 000 ms. */
  sampleMs?: number;
  /** Overrides every instrument's funding interval (PERP_FUNDING_INTERVAL_MS). */
  intervalMs?: number;
  impactNotionalMicros?: bigint;
  settings?: FundingSettings;
  now?: () => number;
  logger?: Pick<Logger, 'warn'>;
}

/** The funding time at or before `t` for an interval (a whole multiple of it since the epoch). */
export function fundingTimeAt(t: number, intervalMs: number): number {
  return Math.floor(t / intervalMs) * intervalMs;
}

export function createFundingTask(opts: FundingTaskOptions): PeriodicTask & { pendingSamples(symbol: string): number } {
  const now = opts.now ?? venueNow;
  const impact = opts.impactNotionalMicros ?? DEFAULT_IMPACT_NOTIONAL_MICROS;
  const samples = new Map<string, bigint[]>();
  const period = new Map<string, number>();

  const runOnce = async (): Promise<void> => {
    const engine = opts.engine();
    const t = now();
    // Every instrument's payment submitted before any is awaited: one journal commit for them all
    // (a sandbox's advance pays them at each of its steps), each still answered on its own.
    const paid: Array<Promise<void>> = [];
    for (const spec of engine.instrumentList()) {
      const interval = opts.intervalMs ?? spec.fundingIntervalMs;
      const current = fundingTimeAt(t, interval);
      const started = period.get(spec.symbol);
      if (started === undefined) period.set(spec.symbol, current);
      else if (current > started) {
        const { rateE9 } = fundingRate(samples.get(spec.symbol) ?? [], interval, opts.settings);
        paid.push(
          opts.gateway.submit({ kind: 'applyFunding', id: `funding:${spec.symbol}:${current}`, ts: current, symbol: spec.symbol, rateE9 }).then((r) => {
            if (!r.ok) opts.logger?.warn({ symbol: spec.symbol, code: r.code }, 'perp funding: refused by the engine');
          }),
        );
        samples.set(spec.symbol, []);
        period.set(spec.symbol, current);
      }
      const index = opts.index(spec.symbol, spec.tickSize);
      if (index === undefined) continue;
      const depth = engine.depth(spec.symbol, 1_000)!;
      const bid = impactPrice(depth.bids, spec.unitMicros, impact, 'bid');
      const ask = impactPrice(depth.asks, spec.unitMicros, impact, 'ask');
      let list = samples.get(spec.symbol);
      if (!list) samples.set(spec.symbol, (list = []));
      list.push(premiumSample(index, bid, ask));
    }
    await Promise.all(paid);
  };

  const task = periodic(opts.sampleMs ?? 5_000, runOnce, (err) => opts.logger?.warn({ err }, 'perp funding: round failed'));
  return { ...task, pendingSamples: (symbol) => samples.get(symbol)?.length ?? 0 };
}
