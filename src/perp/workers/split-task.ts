/**
 * Applies the stock splits to the stock perpetuals (docs/perp-risk.md "Stock splits"): at the
 * split's moment on the market calendar's clock (`splitEffectiveAt`: 00:00 America/New_York on the
 * ex-date, or shortly after a same-day action was added; the moment the stock side splits and the
 * quotes move), each SPLIT on a stock with a listed perpetual is submitted to the engine once as
 * `applySplit`, keyed by its corporate action id (`AAPL-2026-11-26`): the engine remembers the ids
 * it applied, so a restart, a second round or a second process resubmits harmlessly.
 *
 * The actions are the configuration file's and the corporate-action table's (read only: the table is
 * the stock side's, whose on-chain split marks a row `applied`; a row `failed` is not applied here,
 * and a row replaces the file's entry with the same id). Actions dated before the venue started
 * predate it (its prices were always post-split) and are never applied. The perpetual does not wait
 * for the chain.
 *
 * **The index pause.** The quotes say which shares they are in (`Quote.multiplier`,
 * src/marketdata/price-splits.ts). From a split's moment until the engine has applied it, and
 * whenever the index quote's multiplier is not the one the engine's applied splits make (a quote
 * from before the split arriving late, or a split the quotes moved to that the engine refused),
 * `indexPaused` says so and the role withholds the index of that instrument (no mark command, no
 * funding sample): post-split prices never meet pre-split positions. The engine's index ages
 * meanwhile, so liquidation on that instrument pauses after its indexStaleMs as for a frozen feed,
 * and resumes with the first index in the engine's shares.
 */
import { periodic, type PeriodicTask } from '../../lib/async.ts';
import type { Logger } from '../../lib/logger.ts';
import type { CorporateAction } from '../../marketdata/corporate-actions.ts';
import { BASE_MULTIPLIER, multiplierAfter, priceSplitsOf } from '../../marketdata/price-splits.ts';
import type { PerpEngine } from '../engine/perp-engine.ts';
import type { ApplySplitCommand } from '../engine/engine-types.ts';
import type { EngineGateway } from '../sequencer/engine-gateway.ts';
import { indexSymbolOf } from '../pricing/index-price.ts';
import { venueNow } from '../../lib/venue-clock.ts';

/**
 * A corporate action as the table stores it, as far as the perpetual reads it (the stock side's
 * store, `listCorporateActions`, answers these; the role passes it in, since the perp domain does
 * not import the stock domain).
 */
export interface StoredCorporateAction {
  symbol: string;
  type: CorporateAction['type'];
  exDate: string;
  ratio: string | null;
  status: 'scheduled' | 'applied' | 'failed';
  /** When it was stored (wall clock, ms): a same-day split takes effect shortly after. */
  createdAt?: number;
}

/** `AAPL-2030-01-02`: the corporate action id, as the stock side's store forms it (one action per symbol and ex-date). */
export function splitActionIdOf(symbol: string, exDate: string): string {
  return `${symbol.toUpperCase()}-${exDate}`;
}

/** A split the task knows: its id, stock, the instant it takes effect and its ratio. */
export interface KnownSplit {
  actionId: string;
  /** The stock (`AAPL`). */
  symbol: string;
  exDate: string;
  /** When it takes effect, ms (calendar clock). */
  effectiveAt: number;
  ratioTo: number;
  ratioFrom: number;
}

export interface SplitTaskOptions {
  /** The corporate-action table's rows (read only). */
  listStored: () => Promise<readonly StoredCorporateAction[]>;
  gateway: Pick<EngineGateway, 'submit'>;
  /** The live engine (between commands): its instruments and the splits it has applied. */
  engine: () => PerpEngine;
  /** The configuration file's actions (its SPLITs are taken; the table's rows win on the same id). */
  fileActions?: readonly CorporateAction[];
  /** `YYYY-MM-DD` in New York: splits with an earlier ex-date predate the venue and are never applied. */
  venueStartDate: string;
  /**
   * `YYYY-MM-DD` in New York from which the quotes carry splits in their multiplier (the stock
   * venue's start). A split between it and `venueStartDate` is in the quotes and, predating this
   * venue, in its prices already. Default `venueStartDate`.
   */
  quotesStartDate?: string;
  /** The market calendar's clock minus the wall clock (MARKET_CLOCK_START), ms. Default 0. */
  clockOffsetMs?: number;
  /** The clock of command and quote times. Default the venue clock (src/lib/venue-clock.ts). */
  now?: () => number;
  /** Default 1 000 ms. */
  intervalMs?: number;
  logger?: Pick<Logger, 'info' | 'warn' | 'error'>;
}

export interface SplitTask extends PeriodicTask {
  /**
   * Whether the index of `perpSymbol` must be withheld now: a split of its stock is due and not yet
   * applied by the engine, or the index quote is in other shares than the engine's.
   */
  indexPaused(perpSymbol: string, quote?: { multiplier?: string }): boolean;
  /** The splits known after the last successful read (for tools and tests). */
  known(): readonly KnownSplit[];
}

/**
 * The splits to apply: the file's SPLITs and the table's (a row replacing the file's entry of the
 * same id; a `failed` row dropping it), from the venue's start date on, oldest first.
 */
export function splitsToApply(
  file: readonly CorporateAction[],
  stored: readonly StoredCorporateAction[],
  venueStartDate: string,
  clockOffsetMs = 0,
): KnownSplit[] {
  return priceSplitsOf(file, stored, venueStartDate, clockOffsetMs)
    .filter((p) => p.status !== 'failed')
    .map((p) => ({ actionId: p.id, symbol: p.symbol, exDate: p.exDate, effectiveAt: p.at, ratioTo: Number(p.numerator), ratioFrom: Number(p.denominator) }));
}

/** The engine's command for a split on one perpetual (its id is stable: the sequencer answers a repeat from the journal). */
export function splitCommandOf(split: KnownSplit, perpSymbol: string, ts: number): ApplySplitCommand {
  return { kind: 'applySplit', id: `split:${split.actionId}:${perpSymbol}`, ts, symbol: perpSymbol, actionId: split.actionId, ratioTo: split.ratioTo, ratioFrom: split.ratioFrom };
}

export function createSplitTask(opts: SplitTaskOptions): SplitTask {
  const wall = opts.now ?? venueNow;
  const offset = opts.clockOffsetMs ?? 0;
  const marketNow = () => wall() + offset;
  const fileActions = (opts.fileActions ?? []).filter((a) => a.type === 'SPLIT');
  // Known before the first read of the table: the file's, so the pause holds from the first round.
  const quotesStart = opts.quotesStartDate ?? opts.venueStartDate;
  let splits = splitsToApply(fileActions, [], opts.venueStartDate, offset);
  /** What the quotes' multiplier is made of: every split from the quotes' start, failed ones included. */
  let quoteSplits = priceSplitsOf(fileActions, [], quotesStart, offset);
  let readFailing = false;

  const perpsOf = (engine: PerpEngine, stock: string): string[] =>
    engine.instrumentList().map((i) => i.symbol).filter((sym) => indexSymbolOf(sym) === stock);

  const runOnce = async (): Promise<void> => {
    try {
      const stored = await opts.listStored();
      splits = splitsToApply(fileActions, stored, opts.venueStartDate, offset);
      quoteSplits = priceSplitsOf(fileActions, stored, quotesStart, offset);
      if (readFailing) opts.logger?.info('perp splits: the corporate-action table is readable again');
      readFailing = false;
    } catch (err) {
      // Keep the last list: the pause stays as it was, and a due split is applied from it.
      if (!readFailing) opts.logger?.warn({ err }, 'perp splits: the corporate-action table could not be read; using the last list');
      readFailing = true;
    }
    const now = marketNow();
    const engine = opts.engine();
    for (const split of splits) {
      if (split.effectiveAt > now) continue;
      for (const perp of perpsOf(engine, split.symbol)) {
        if (engine.splitApplied(perp, split.actionId)) continue;
        const result = await opts.gateway.submit(splitCommandOf(split, perp, wall()));
        if (result.ok) {
          opts.logger?.info({ symbol: perp, actionId: split.actionId, ratio: `${split.ratioTo}:${split.ratioFrom}` }, 'perp splits: split applied to the stock perpetual');
        } else {
          opts.logger?.error({ symbol: perp, actionId: split.actionId, code: result.code, message: result.message }, 'perp splits: the engine refused the split');
        }
      }
    }
  };

  const task = periodic(opts.intervalMs ?? 1_000, runOnce, (err) => opts.logger?.warn({ err }, 'perp splits: round failed'));
  return {
    ...task,
    known: () => splits,
    indexPaused(perpSymbol, quote) {
      const stock = indexSymbolOf(perpSymbol);
      const now = marketNow();
      const engine = opts.engine();
      for (const split of splits) {
        if (split.symbol === stock && split.effectiveAt <= now && !engine.splitApplied(perpSymbol, split.actionId)) return true;
      }
      // The multiplier the engine's prices are in: the splits it applied, and those before this
      // venue started (its prices always were post-split). A failed one it never applied, so a quote
      // that moved to it is in other shares.
      let multiplier = BASE_MULTIPLIER;
      for (const split of quoteSplits) {
        if (split.symbol !== stock || split.at > now) continue;
        if (split.exDate < opts.venueStartDate || engine.splitApplied(perpSymbol, split.id)) multiplier = multiplierAfter(multiplier, split);
      }
      return quote !== undefined && (quote.multiplier === undefined ? BASE_MULTIPLIER : BigInt(quote.multiplier)) !== multiplier;
    },
  };
}
