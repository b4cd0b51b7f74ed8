/**
 * Feeds the engine its index and mark prices (docs/perp-pricing.md): every `intervalMs` each
 * instrument's index is read from market data, the mark is computed from it, the book and the last
 * trade (pricing/mark-price.ts), and a `setMarkPrice` command is submitted when either moved, or at
 * least every `heartbeatMs` so that the mark and index candles have a point each interval.
 *
 * The basis EMA lives here, in memory: after a restart it starts again from its first sample, which
 * the band around the index keeps harmless.
 *
 * With an `oracle` (docs/market-data.md, "On-chain oracle"), an instrument whose index symbol has a
 * venue price feed is checked against the chain before its index is used: an index further than
 * the tolerance from the feed's answer (the StockRouter's comparison, in the same integers), or
 * one whose quote was observed more than the maximum age after the feed's last observation (the
 * chain stopped following the index), is withheld — no `setMarkPrice` for that instrument — so
 * its index ages in the engine and liquidation pauses there as for a frozen quote
 * (docs/perp-risk.md), until the two agree again. Age is counted from the quote, not the block:
 * a stock perpetual trades on through a closed market on its last index, whose quote and feed
 * are then equally old.
 */
import { periodic, type PeriodicTask } from '../../lib/async.ts';
import type { Logger } from '../../lib/logger.ts';
import type { PerpEngine } from '../engine/perp-engine.ts';
import { EMPTY_BASIS, markPrice, type BasisEma } from '../pricing/mark-price.ts';
import type { EngineGateway } from '../sequencer/engine-gateway.ts';
import { oracleVerdict, type FeedAnswer, type OracleVerdict } from '../../marketdata/oracle-publisher.ts';
import { indexSymbolOf } from '../pricing/index-price.ts';
import { effectiveBandPpm } from '../engine/risk/price-band.ts';
import { venueNow } from '../../lib/venue-clock.ts';
import { venueSeed } from '../../lib/seeded-random.ts';

/** The mark's band around the index with the market open (pricing/mark-price.ts's default, ±5 %). */
export const MARK_INDEX_BAND_PPM = 50_000;

/** The index of a perp symbol in ticks of the instrument, or undefined when no quote is known. */
export type IndexSource = (symbol: string, tickSize: string) => bigint | undefined;

/** What the mark task needs to check an index against the chain. */
export interface IndexOracle {
  /** The latest answer of the feed of a market-data symbol (`AAPL`, `BTC`), undefined when it has none. */
  answer(symbol: string): FeedAnswer | undefined;
  toleranceBps: number;
  maxAgeS: number;
}

/** ticks × tickSize as an integer at `decimals` (the tick size has at most that many), or undefined. */
function ticksAt(ticks: bigint, tickSize: string, decimals: number): bigint | undefined {
  const m = /^(\d+)(?:\.(\d+))?$/.exec(tickSize);
  if (!m || (m[2] ?? '').length > decimals) return undefined;
  const fraction = m[2] ?? '';
  return ticks * BigInt(m[1] + fraction) * 10n ** BigInt(decimals - fraction.length);
}

/**
 * The verdict on an index of `indexTicks` ticks of `tickSize`, from a quote observed at
 * `indexTimeMs`, against the symbol's feed: `ok` when the symbol has no feed or its feed no round yet
 * (nothing to check).
 */
export function indexOracleVerdict(oracle: IndexOracle, perpSymbol: string, indexTicks: bigint, tickSize: string, indexTimeMs: number): OracleVerdict {
  const reading = oracle.answer(indexSymbolOf(perpSymbol));
  // A feed with no round yet (its publisher has had no fresh quote to publish since it was set up)
  // says nothing about the index: unchecked, as without a feed. The staleness rule still applies.
  if (reading === undefined || reading.updatedAt === 0) return 'ok';
  // At 18 decimals, as the router compares fills: tick sizes have far fewer.
  const index = ticksAt(indexTicks, tickSize, 18);
  if (index === undefined) return 'invalid';
  const verdict = oracleVerdict(reading, index, 18, oracle.toleranceBps, Number.MAX_SAFE_INTEGER);
  if (verdict !== 'ok') return verdict;
  const observedAt = reading.observedAt ?? reading.updatedAt;
  return Math.floor(indexTimeMs / 1000) - observedAt > oracle.maxAgeS ? 'stale' : 'ok';
}

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
  /** The on-chain check of the index; unset: the index is used as market data gives it. */
  oracle?: IndexOracle;
  /**
   * Whether the market of the instrument's underlying is open now (the market calendar's answer for
   * a stock, always for crypto); unset: always open. Closed, the command carries `marketOpen: false`
   * and the mark's clamp around the index widens with the engine's band (risk/price-band.ts).
   */
  marketOpen?: (symbol: string) => boolean;
  now?: () => number;
  logger?: Pick<Logger, 'warn'>;
}

export function createMarkPriceTask(opts: MarkPriceTaskOptions): PeriodicTask {
  const now = opts.now ?? venueNow;
  const heartbeat = opts.heartbeatMs ?? 10_000;
  const basis = new Map<string, BasisEma>();
  const sentAt = new Map<string, number>();
  /** Instruments whose index the oracle currently refuses, with why (logged on each change). */
  const withheld = new Map<string, OracleVerdict>();

  const runOnce = async (): Promise<void> => {
    const engine = opts.engine();
    const submits: Array<Promise<unknown>> = [];
    for (const spec of engine.instrumentList()) {
      const index = opts.index(spec.symbol, spec.tickSize);
      if (index === undefined) {
        // No index (no quote, or withheld while a split is due): the basis EMA starts again from the
        // next sample, so a basis in pre-split ticks never meets a post-split index.
        basis.delete(spec.symbol);
        continue;
      }
      if (opts.oracle) {
        const verdict = indexOracleVerdict(opts.oracle, spec.symbol, index, spec.tickSize, opts.indexTime?.(spec.symbol) ?? now());
        if (verdict !== 'ok') {
          if (withheld.get(spec.symbol) !== verdict) opts.logger?.warn({ symbol: spec.symbol, verdict }, 'perp mark price: the index disagrees with the on-chain oracle; withheld');
          withheld.set(spec.symbol, verdict);
          continue;
        }
        if (withheld.delete(spec.symbol)) opts.logger?.warn({ symbol: spec.symbol }, 'perp mark price: the index agrees with the on-chain oracle again');
      }
      const t = now();
      const open = opts.marketOpen?.(spec.symbol) ?? true;
      const prices = engine.prices(spec.symbol)!;
      const bba = engine.bestBidAsk(spec.symbol)!;
      const result = markPrice(basis.get(spec.symbol) ?? EMPTY_BASIS, {
        indexTicks: index,
        bestBidTicks: bba.bidTicks === undefined ? undefined : BigInt(bba.bidTicks),
        bestAskTicks: bba.askTicks === undefined ? undefined : BigInt(bba.askTicks),
        lastTradeTicks: prices.lastTradePriceTicks > 0 ? BigInt(prices.lastTradePriceTicks) : undefined,
        ts: t,
      }, { bandPpm: BigInt(effectiveBandPpm(MARK_INDEX_BAND_PPM, open)) });
      basis.set(spec.symbol, result.basis);
      const cap = BigInt(spec.maxPriceTicks);
      const mark = Number(result.markTicks > cap ? cap : result.markTicks);
      const idx = Number(index > cap ? cap : index);
      const indexMoved = idx !== prices.indexPriceTicks || open !== engine.marketOpen(spec.symbol);
      // A seeded sandbox at the instant of the last mark sent holds it unless the index moved (a
      // pin): a mark moved by the book or a trade would be sent at a moment the client cannot know,
      // between its orders (docs/sandbox.md "Determinism"). The basis EMA stands still there anyway.
      const held = venueSeed() !== undefined && sentAt.get(spec.symbol) === t;
      const moved = indexMoved || (!held && mark !== prices.markPriceTicks);
      if (!moved && t - (sentAt.get(spec.symbol) ?? 0) < heartbeat) continue;
      sentAt.set(spec.symbol, t);
      submits.push(
        opts.gateway.submit({
          kind: 'setMarkPrice', id: `mark:${spec.symbol}:${t}`, ts: t, symbol: spec.symbol, markPriceTicks: mark, indexPriceTicks: idx,
          // Never after the command's own time: a quote stamped by a clock slightly ahead counts as now.
          indexTs: Math.min(t, opts.indexTime?.(spec.symbol) ?? t),
          ...(open ? {} : { marketOpen: false }),
        }),
      );
    }
    await Promise.all(submits);
  };

  return periodic(opts.intervalMs ?? 1_000, runOnce, (err) => opts.logger?.warn({ err }, 'perp mark price: round failed'));
}
