/**
 * The demo taker (docs/perp-api.md "Demo market maker"): beside the market maker's quotes, an
 * account with collateral like any other sends a small market order every `everyMs`, one
 * instrument after another, so a new install shows trades, tickers and candles, not only a book.
 * It leans against its own position (long: it sells, short: it buys; flat: it alternates), so it
 * stays near flat and pays only fees. Its orders go through the engine's admission like a client's.
 */
import { periodic, type PeriodicTask } from '../../lib/async.ts';
import type { Logger } from '../../lib/logger.ts';
import { ceilDiv } from '../engine/fixed-point.ts';
import type { PerpEngine } from '../engine/perp-engine.ts';
import type { EngineGateway } from '../sequencer/engine-gateway.ts';
import { venueNow } from '../../lib/venue-clock.ts';
import { venueSeed } from '../../lib/seeded-random.ts';

export interface DemoTakerOptions {
  gateway: Pick<EngineGateway, 'submit'>;
  engine: () => PerpEngine;
  account: string;
  /** Default 10 000 ms. */
  everyMs?: number;
  /** About this much a trade. Default $500. */
  notionalMicros?: bigint;
  now?: () => number;
  logger?: Pick<Logger, 'warn'>;
}

export function createDemoTakerTask(opts: DemoTakerOptions): PeriodicTask {
  const now = opts.now ?? venueNow;
  const account = opts.account.toLowerCase();
  const notional = opts.notionalMicros ?? 500n * 1_000_000n;
  const everyMs = opts.everyMs ?? 10_000;
  let turn = 0;
  let seq = 0;
  /** In a seeded sandbox: when it began, and when it last traded, on the venue's clock. */
  let began: number | undefined;
  let tradedAt: number | undefined;

  const runOnce = async (): Promise<void> => {
    // A seeded sandbox trades every `everyMs` of the venue's time, the first after `everyMs`: while
    // its clock stands still, never (its trades would land between a client's orders by the wall
    // clock, and move their ids and fills: docs/sandbox.md "Determinism").
    if (venueSeed() !== undefined) {
      const t = now();
      began ??= t;
      if (t - (tradedAt ?? began) < everyMs) return;
    }
    const engine = opts.engine();
    const me = engine.getAccount(account);
    if (me === undefined) return;
    const list = engine.instrumentList();
    // The next instrument whose book has both sides.
    for (let tried = 0; tried < list.length; tried++) {
      const spec = list[turn++ % list.length];
      const { bidTicks, askTicks } = engine.bestBidAsk(spec.symbol)!;
      if (bidTicks === undefined || askTicks === undefined) continue;
      const held = me.positions.find((p) => p.symbol === spec.symbol)?.sizeLots ?? 0;
      const side = held > 0 ? 'SELL' : held < 0 ? 'BUY' : seq % 2 === 0 ? 'BUY' : 'SELL';
      const price = BigInt(side === 'BUY' ? askTicks : bidTicks);
      let lots = ceilDiv(notional, price * spec.unitMicros);
      if (lots < BigInt(spec.minSizeLots)) lots = BigInt(spec.minSizeLots);
      const t = now();
      await opts.gateway.submit({ kind: 'placeOrder', id: `taker:${spec.symbol}:${t}:${engine.lastSeq}:${++seq}`, ts: t, account, symbol: spec.symbol, side, type: 'MARKET', sizeLots: Number(lots), timeInForce: 'IOC' });
      tradedAt = t;
      return;
    }
  };

  return periodic(everyMs, runOnce, (err) => opts.logger?.warn({ err }, 'perp demo taker: round failed'));
}
