/**
 * The built-in demo market maker (docs/perp-api.md "Demo market maker"): an account with collateral
 * deposited on chain like any other, whose orders go through the same engine admission as a
 * client's. It keeps every book two-sided around the index: `levels` POST_ONLY bids and asks,
 * `halfSpreadBps` from the index for the first and `stepBps` apart after it, each worth about
 * `levelNotionalMicros`. It quotes again when the index has moved `requoteBps` since its last
 * quotes, when one of its orders has filled, or every `maxAgeMs`. Its inventory skews the quotes:
 * long, it quotes lower (to sell), short, higher, by up to `skewBps` at `maxInventoryMicros`.
 *
 * POST_ONLY: it never takes liquidity, so it never trades against itself or a client's resting
 * order; a level that would cross a client's order is simply not placed.
 *
 * The quoting itself (the ladder of levels, the inventory skew, when to quote again) is shared with
 * the liquidity pool's quoter (pool-quoter-task.ts), which sizes its levels from the pool's equity.
 */
import { periodic, type PeriodicTask } from '../../lib/async.ts';
import type { Logger } from '../../lib/logger.ts';
import { ceilDiv, floorDiv } from '../engine/fixed-point.ts';
import type { InstrumentSpec } from '../engine/instruments.ts';
import type { OrderView } from '../engine/engine-types.ts';
import type { PerpEngine } from '../engine/perp-engine.ts';
import type { EngineGateway } from '../sequencer/engine-gateway.ts';
import { venueNow } from '../../lib/venue-clock.ts';
import { venueSeed } from '../../lib/seeded-random.ts';

export interface MarketMakerOptions {
  gateway: Pick<EngineGateway, 'submit'>;
  engine: () => PerpEngine;
  /** The market maker's account (lower-case address). */
  account: string;
  /** Default 1 000 ms. */
  refreshMs?: number;
  /** Levels per side. Default 5. */
  levels?: number;
  halfSpreadBps?: number;
  stepBps?: number;
  /** Default $2,000 a level. */
  levelNotionalMicros?: bigint;
  requoteBps?: number;
  maxAgeMs?: number;
  skewBps?: number;
  maxInventoryMicros?: bigint;
  now?: () => number;
  logger?: Pick<Logger, 'warn' | 'info'>;
}

export const BPS = 10_000n;

/** What a quoter remembers of its last quotes on a book. */
export interface QuotedBook {
  /** The index quoted around. */
  index: bigint;
  at: number;
  /** The lots its orders left resting then. */
  restingLots: number;
}

/**
 * Whether a book's quotes are due again: never quoted (also the first round after a start, so the
 * levels a previous run left are replaced), one of its orders filled even in part, the index moved
 * `requoteBps` or more, or the quotes are `maxAgeMs` old. A level refused as crossing is not
 * counted as a fill: it would requote for ever.
 *
 * In a seeded sandbox whose time has not moved since the last quotes (`heldStill`), only the index
 * moving (a pin) makes them due: a fill there would requote at a moment the client cannot know, and
 * the next client order would get another id by the race (docs/sandbox.md "Determinism").
 */
export function quotesDue(last: QuotedBook | undefined, open: readonly OrderView[], index: bigint, t: number, requoteBps: bigint, maxAgeMs: number, heldStill = false): boolean {
  const indexMoved = last !== undefined && (index > last.index ? index - last.index : last.index - index) * BPS >= requoteBps * last.index;
  if (last !== undefined && heldStill) return indexMoved;
  return last === undefined || open.reduce((lots, o) => lots + o.remainingLots, 0) < last.restingLots || indexMoved || t - last.at >= maxAgeMs;
}

/** Whether the venue holds still for a quoter: a seeded sandbox (src/lib/seeded-random.ts) at the instant of its last quotes. */
export function heldStill(last: { at: number } | undefined, t: number): boolean {
  return venueSeed() !== undefined && last !== undefined && last.at === t;
}

/**
 * The inventory skew in bps: long → negative (quotes move down, to sell), short → positive, in
 * proportion to the inventory's notional up to `skewBps` at `maxInventory` (and no further).
 */
export function inventorySkewBps(inventory: bigint, maxInventory: bigint, skewBps: bigint): bigint {
  if (maxInventory <= 0n) return 0n;
  const clamped = inventory > maxInventory ? maxInventory : inventory < -maxInventory ? -maxInventory : inventory;
  return -(clamped * skewBps) / maxInventory;
}

export interface QuoteLevelsInput {
  gateway: Pick<EngineGateway, 'submit'>;
  spec: InstrumentSpec;
  account: string;
  index: bigint;
  levels: number;
  halfSpreadBps: bigint;
  stepBps: bigint;
  /** Moves both sides by this many bps (the inventory skew). */
  shiftBps: bigint;
  /** Lots of a level at `priceTicks`; 0 leaves the level out. */
  lotsAt: (priceTicks: bigint) => bigint;
  /** Command id prefix, unique per round and book. */
  tag: string;
  ts: number;
}

/**
 * Places the ladder on one book: level i at `halfSpreadBps + i·stepBps` (shifted) from the index,
 * bids rounded down and asks up to the tick, each a POST_ONLY limit order. Answers the lots left
 * resting (a level refused, as crossing or for margin, counts none).
 */
export async function placeQuoteLevels(q: QuoteLevelsInput): Promise<number> {
  const { spec, index } = q;
  const orders: Array<ReturnType<EngineGateway['submit']>> = [];
  for (let i = 0; i < q.levels; i++) {
    const off = q.halfSpreadBps + BigInt(i) * q.stepBps;
    const bid = floorDiv(index * (BPS - off + q.shiftBps), BPS);
    const ask = ceilDiv(index * (BPS + off + q.shiftBps), BPS);
    for (const [side, px] of [['BUY', bid], ['SELL', ask]] as const) {
      if (px < 1n || px > BigInt(spec.maxPriceTicks)) continue;
      const lots = q.lotsAt(px);
      if (lots <= 0n) continue;
      orders.push(
        q.gateway.submit({
          kind: 'placeOrder', id: `${q.tag}:${side}${i}`, ts: q.ts, account: q.account, symbol: spec.symbol, side, type: 'LIMIT',
          priceTicks: Number(px), sizeLots: Number(lots), timeInForce: 'POST_ONLY',
        }),
      );
    }
  }
  let resting = 0;
  for (const r of await Promise.all(orders)) {
    if (r.ok && 'order' in r) resting += r.order.remainingLots;
  }
  return resting;
}

export function createMarketMakerTask(opts: MarketMakerOptions): PeriodicTask {
  const now = opts.now ?? venueNow;
  const account = opts.account.toLowerCase();
  const levels = opts.levels ?? 5;
  const half = BigInt(opts.halfSpreadBps ?? 5);
  const step = BigInt(opts.stepBps ?? 5);
  const levelNotional = opts.levelNotionalMicros ?? 2_000n * 1_000_000n;
  const requote = BigInt(opts.requoteBps ?? 3);
  const maxAge = opts.maxAgeMs ?? 30_000;
  const skew = BigInt(opts.skewBps ?? 10);
  const maxInventory = opts.maxInventoryMicros ?? 100_000n * 1_000_000n;
  const quoted = new Map<string, QuotedBook>();
  let seq = 0;
  let waiting = false;

  const runOnce = async (): Promise<void> => {
    const engine = opts.engine();
    const me = engine.getAccount(account);
    if (me === undefined) {
      if (!waiting) opts.logger?.info({ account }, 'perp market maker: waiting for its collateral to be credited');
      waiting = true;
      return;
    }
    waiting = false;
    for (const spec of engine.instrumentList()) {
      const symbol = spec.symbol;
      const index = BigInt(engine.prices(symbol)!.indexPriceTicks);
      if (index <= 0n) continue;
      const t = now();
      const open = engine.openOrders(account, symbol);
      const last = quoted.get(symbol);
      if (!quotesDue(last, open, index, t, requote, maxAge, heldStill(last, t))) continue;
      const state: QuotedBook = { index, at: t, restingLots: 0 };
      quoted.set(symbol, state);
      // The engine's sequence in the ids: a restart counts `seq` from 0 again, and where the clock
      // stands still (a seeded sandbox, a revert to a snapshot taken at the same instant) the ids
      // of the last run's quotes would come again and be answered as done, placing nothing.
      const tag = `mm:${symbol}:${t}:${engine.lastSeq}:${++seq}`;
      if (open.length > 0) await opts.gateway.submit({ kind: 'cancelAll', id: `${tag}:cancel`, ts: t, account, symbol });

      const position = me.positions.find((p) => p.symbol === symbol);
      const inventory = position ? BigInt(position.sizeLots) * index * spec.unitMicros : 0n;
      state.restingLots = await placeQuoteLevels({
        gateway: opts.gateway, spec, account, index, levels, halfSpreadBps: half, stepBps: step, tag, ts: t,
        shiftBps: inventorySkewBps(inventory, maxInventory, skew),
        lotsAt: (px) => {
          const lots = ceilDiv(levelNotional, px * spec.unitMicros);
          return lots < BigInt(spec.minSizeLots) ? BigInt(spec.minSizeLots) : lots;
        },
      });
    }
  };

  return periodic(opts.refreshMs ?? 1_000, runOnce, (err) => opts.logger?.warn({ err }, 'perp market maker: round failed'));
}
