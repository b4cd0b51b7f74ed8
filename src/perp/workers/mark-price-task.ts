/**
 * Feeds the engine its index and mark prices (docs/perp-pricing.md): every `intervalMs` each
 * instrument's index is read from market data, the mark is computed from it, the book and the last
 * trade (pricing/mark-price.ts), and a `setMarkPrice` command is submitted when either moved, or at
 * least every `heartbeatMs` so that the mark and index candles have a point each interval.
 *
 * The basis EMA lives here, in memory: after a restart it starts again from its first sample, which
 * the band around the index keeps harmless.
 */
import { periodic, type PeriodicTask } from '../../lib/async.ts';
import type { Logger } from '../../lib/logger.ts';
import type { PerpEngine } from '../engine/perp-engine.ts';
import { EMPTY_BASIS, markPrice, type BasisEma } from '../pricing/mark-price.ts';
import type { EngineGateway } from '../sequencer/engine-gateway.ts';

/** The index of a perp symbol in ticks of the instrument, or undefined when no quote is known. */
export type IndexSource = (symbol: string, tickSize: string) => bigint | undefined;

export interface MarkPriceTaskOptions {
  gateway: Pick<EngineGateway, 'submit'>;
  /** The live engine, for the book and the last trade (read between commands). */
  engine: () => PerpEngine;
  index: IndexSource;
  /**
   * When the index's quote was observed (ms), so that the engine pauses liquidation on a frozen feed
   * (docs/perp-risk.md); default: the time of the round.
   */
  indexTime?: (symbol: string) => number | undefined;
  /** Default 1 000 ms. */
  intervalMs?: number;
  /** Default 10 000 ms. */
  heartbeatMs?: number;
  now?: () => number;
  logger?: Pick<Logger, 'warn'>;
}

export function createMarkPriceTask(opts: MarkPriceTaskOptions): PeriodicTask {
  const now = opts.now ?? Date.now;
  const heartbeat = opts.heartbeatMs ?? 10_000;
  const basis = new Map<string, BasisEma>();
  const sentAt = new Map<string, number>();

  const runOnce = async (): Promise<void> => {
    const engine = opts.engine();
    const submits: Array<Promise<unknown>> = [];
    for (const spec of engine.instrumentList()) {
      const index = opts.index(spec.symbol, spec.tickSize);
      if (index === undefined) continue;
      const t = now();
      const prices = engine.prices(spec.symbol)!;
      const bba = engine.bestBidAsk(spec.symbol)!;
      const result = markPrice(basis.get(spec.symbol) ?? EMPTY_BASIS, {
        indexTicks: index,
        bestBidTicks: bba.bidTicks === undefined ? undefined : BigInt(bba.bidTicks),
        bestAskTicks: bba.askTicks === undefined ? undefined : BigInt(bba.askTicks),
        lastTradeTicks: prices.lastTradePriceTicks > 0 ? BigInt(prices.lastTradePriceTicks) : undefined,
        ts: t,
      });
      basis.set(spec.symbol, result.basis);
      const cap = BigInt(spec.maxPriceTicks);
      const mark = Number(result.markTicks > cap ? cap : result.markTicks);
      const idx = Number(index > cap ? cap : index);
      const moved = mark !== prices.markPriceTicks || idx !== prices.indexPriceTicks;
      if (!moved && t - (sentAt.get(spec.symbol) ?? 0) < heartbeat) continue;
      sentAt.set(spec.symbol, t);
      submits.push(
        opts.gateway.submit({
          kind: 'setMarkPrice', id: `mark:${spec.symbol}:${t}`, ts: t, symbol: spec.symbol, markPriceTicks: mark, indexPriceTicks: idx,
          // Never after the command's own time: a quote stamped by a clock slightly ahead counts as now.
          indexTs: Math.min(t, opts.indexTime?.(spec.symbol) ?? t),
        }),
      );
    }
    await Promise.all(submits);
  };

  return periodic(opts.intervalMs ?? 1_000, runOnce, (err) => opts.logger?.warn({ err }, 'perp mark price: round failed'));
}
