/**
 * The liquidity pool's quoter (docs/perp-risk.md "The liquidity pool"): the pool is an engine
 * account (POOL_ACCOUNT) that trades through the same admission and matching as everyone, and this
 * task keeps it quoting both sides of every book around the index, with the market maker's ladder
 * (market-maker-task.ts) sized from the pool's own equity:
 *
 * - `levels` POST_ONLY bids and asks, `halfSpreadBps` from the index for the first and `stepBps`
 *   apart after it (default 3 levels, 10 bps and 10 bps apart: behind the demo market maker's 5 bps,
 *   so the pool adds depth rather than competing for the touch);
 * - each level worth `levelEquityBps` of the pool's equity (default 50 bps, 0.5 %), rounded down to
 *   the lot; a level below the instrument's minimum size is left out, so a small pool quotes
 *   fewer books rather than more than its share;
 * - skewed against the pool's inventory on the book: long, lower; short, higher; by up to
 *   `skewBps` (default 20) at an inventory of `maxInventoryEquityBps` of equity (default 20 %), so a
 *   position the pool took over as the liquidation backstop is worked off through its quotes;
 * - quoted again when the index moves `requoteBps` (default 5), one of its orders fills, the
 *   equity moves `equityRequoteBps` (default 5 %) since the last quotes, or every `maxAgeMs` (30 s);
 * - only while the pool has shares and positive equity: otherwise its orders are cancelled and none
 *   placed.
 *
 * On start nothing is remembered, so the first round cancels whatever the pool left resting before a
 * restart and quotes afresh (or cancels only, without equity or before the index is known).
 * POST_ONLY: the pool never takes liquidity through its quotes; a level that would cross is refused
 * by the engine and simply not placed.
 */
import { periodic, type PeriodicTask } from '../../lib/async.ts';
import type { Logger } from '../../lib/logger.ts';
import { POOL_ACCOUNT, type PerpEngine } from '../engine/perp-engine.ts';
import type { EngineGateway } from '../sequencer/engine-gateway.ts';
import { BPS, heldStill, inventorySkewBps, placeQuoteLevels, quotesDue, type QuotedBook } from './market-maker-task.ts';
import { venueNow } from '../../lib/venue-clock.ts';

export interface PoolQuoterOptions {
  gateway: Pick<EngineGateway, 'submit'>;
  engine: () => PerpEngine;
  /** Default 1 000 ms. */
  refreshMs?: number;
  /** Levels per side. Default 3. */
  levels?: number;
  /** Default 10. */
  halfSpreadBps?: number;
  /** Default 10. */
  stepBps?: number;
  /** Each level's notional as bps of the pool's equity. Default 50 (0.5 %). */
  levelEquityBps?: number;
  /** Default 5. */
  requoteBps?: number;
  /** Requote when the equity has moved this many bps since the last quotes. Default 500 (5 %). */
  equityRequoteBps?: number;
  /** Default 30 000 ms. */
  maxAgeMs?: number;
  /** Default 20. */
  skewBps?: number;
  /** The inventory (as bps of equity) at which the skew is full. Default 2 000 (20 %). */
  maxInventoryEquityBps?: number;
  now?: () => number;
  logger?: Pick<Logger, 'warn' | 'info'>;
}

export function createPoolQuoterTask(opts: PoolQuoterOptions): PeriodicTask {
  const now = opts.now ?? venueNow;
  const account = POOL_ACCOUNT;
  const levels = opts.levels ?? 3;
  const half = BigInt(opts.halfSpreadBps ?? 10);
  const step = BigInt(opts.stepBps ?? 10);
  const levelBps = BigInt(opts.levelEquityBps ?? 50);
  const requote = BigInt(opts.requoteBps ?? 5);
  const equityRequote = BigInt(opts.equityRequoteBps ?? 500);
  const maxAge = opts.maxAgeMs ?? 30_000;
  const skew = BigInt(opts.skewBps ?? 20);
  const maxInventoryBps = BigInt(opts.maxInventoryEquityBps ?? 2_000);
  /** Per book: the last quotes, with the equity they were sized from. */
  const quoted = new Map<string, QuotedBook & { equity: bigint }>();
  let seq = 0;

  const runOnce = async (): Promise<void> => {
    const engine = opts.engine();
    const pool = engine.pool();
    const equity = pool.totalShares > 0n && pool.equity > 0n ? pool.equity : 0n;
    const me = engine.getAccount(account);
    for (const spec of engine.instrumentList()) {
      const symbol = spec.symbol;
      const index = BigInt(engine.prices(symbol)!.indexPriceTicks);
      const t = now();
      const open = engine.openOrders(account, symbol);
      const last = quoted.get(symbol);
      // With the engine's sequence, as the market maker's (market-maker-task.ts): unique across restarts.
      const tag = `pool:${symbol}:${t}:${engine.lastSeq}:${++seq}`;
      if (equity === 0n || index <= 0n) {
        // Nothing to quote with, or no price yet (only before the first mark after a start): no
        // order of the pool may rest.
        quoted.delete(symbol);
        if (open.length > 0) await opts.gateway.submit({ kind: 'cancelAll', id: `${tag}:cancel`, ts: t, account, symbol });
        continue;
      }
      // Held still (a seeded sandbox at the instant of its last quotes), only the index requotes.
      const still = heldStill(last, t);
      const equityMoved = !still && last !== undefined && (equity > last.equity ? equity - last.equity : last.equity - equity) * BPS >= equityRequote * last.equity;
      if (!equityMoved && !quotesDue(last, open, index, t, requote, maxAge, still)) continue;
      const state = { index, at: t, restingLots: 0, equity };
      quoted.set(symbol, state);
      if (open.length > 0) await opts.gateway.submit({ kind: 'cancelAll', id: `${tag}:cancel`, ts: t, account, symbol });

      const levelNotional = (equity * levelBps) / BPS;
      const position = me?.positions.find((p) => p.symbol === symbol);
      const inventory = position ? BigInt(position.sizeLots) * index * spec.unitMicros : 0n;
      state.restingLots = await placeQuoteLevels({
        gateway: opts.gateway, spec, account, index, levels, halfSpreadBps: half, stepBps: step, tag, ts: t,
        shiftBps: inventorySkewBps(inventory, (equity * maxInventoryBps) / BPS, skew),
        lotsAt: (px) => {
          let lots = levelNotional / (px * spec.unitMicros);
          if (lots < BigInt(spec.minSizeLots)) return 0n;
          if (lots > BigInt(spec.maxSizeLots)) lots = BigInt(spec.maxSizeLots);
          return lots;
        },
      });
    }
  };

  return periodic(opts.refreshMs ?? 1_000, runOnce, (err) => opts.logger?.warn({ err }, 'perp pool quoter: round failed'));
}
