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
 */
import { periodic, type PeriodicTask } from '../../lib/async.ts';
import type { Logger } from '../../lib/logger.ts';
import { ceilDiv, floorDiv } from '../engine/fixed-point.ts';
import type { PerpEngine } from '../engine/perp-engine.ts';
import type { EngineGateway } from '../sequencer/engine-gateway.ts';

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

const BPS = 10_000n;

export function createMarketMakerTask(opts: MarketMakerOptions): PeriodicTask {
  const now = opts.now ?? Date.now;
  const account = opts.account.toLowerCase();
  const levels = opts.levels ?? 5;
  const half = BigInt(opts.halfSpreadBps ?? 5);
  const step = BigInt(opts.stepBps ?? 5);
  const levelNotional = opts.levelNotionalMicros ?? 2_000n * 1_000_000n;
  const requote = BigInt(opts.requoteBps ?? 3);
  const maxAge = opts.maxAgeMs ?? 30_000;
  const skew = BigInt(opts.skewBps ?? 10);
  const maxInventory = opts.maxInventoryMicros ?? 100_000n * 1_000_000n;
  /** Per symbol: the index quoted around, when, and the lots its orders left resting then. */
  const quoted = new Map<string, { index: bigint; at: number; restingLots: number }>();
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
      const stale =
        last === undefined ||
        // One of its orders filled, even in part (a level refused as crossing is not counted: it
        // would requote for ever).
        open.reduce((lots, o) => lots + o.remainingLots, 0) < last.restingLots ||
        (index > last.index ? index - last.index : last.index - index) * BPS >= requote * last.index ||
        t - last.at >= maxAge;
      if (!stale) continue;
      const state = { index, at: t, restingLots: 0 };
      quoted.set(symbol, state);
      const tag = `mm:${symbol}:${t}:${++seq}`;
      if (open.length > 0) await opts.gateway.submit({ kind: 'cancelAll', id: `${tag}:cancel`, ts: t, account, symbol });

      // Inventory skew in bps: long → negative (quotes move down), short → positive.
      const position = me.positions.find((p) => p.symbol === symbol);
      const inventory = position ? BigInt(position.sizeLots) * index * spec.unitMicros : 0n;
      const clamped = inventory > maxInventory ? maxInventory : inventory < -maxInventory ? -maxInventory : inventory;
      const shift = -(clamped * skew) / maxInventory;

      const orders: Array<ReturnType<EngineGateway['submit']>> = [];
      for (let i = 0; i < levels; i++) {
        const off = half + BigInt(i) * step;
        const bid = floorDiv(index * (BPS - off + shift), BPS);
        const ask = ceilDiv(index * (BPS + off + shift), BPS);
        for (const [side, px] of [['BUY', bid], ['SELL', ask]] as const) {
          if (px < 1n || px > BigInt(spec.maxPriceTicks)) continue;
          const perLot = px * spec.unitMicros;
          let lots = ceilDiv(levelNotional, perLot);
          if (lots < BigInt(spec.minSizeLots)) lots = BigInt(spec.minSizeLots);
          orders.push(
            opts.gateway.submit({
              kind: 'placeOrder', id: `${tag}:${side}${i}`, ts: t, account, symbol, side, type: 'LIMIT',
              priceTicks: Number(px), sizeLots: Number(lots), timeInForce: 'POST_ONLY',
            }),
          );
        }
      }
      for (const r of await Promise.all(orders)) {
        if (r.ok && 'order' in r) state.restingLots += r.order.remainingLots;
      }
    }
  };

  return periodic(opts.refreshMs ?? 1_000, runOnce, (err) => opts.logger?.warn({ err }, 'perp market maker: round failed'));
}
