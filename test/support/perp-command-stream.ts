/**
 * A deterministic stream of perpetual engine commands from a seed: deposits, marks, limit orders
 * near the mark, market orders and cancels, over a few accounts on BTC-USD and ETH-USD. Some are
 * refused by the engine (cancels of finished orders, orders short of margin): the journal keeps
 * those too. For the sequencer's tests, its kill test and the journal benchmark.
 */
import type { EngineCommand } from '../../src/perp/engine/engine-types.ts';
import { createPrng } from '../../src/marketdata/prng.ts';

export const STREAM_ACCOUNTS = Array.from({ length: 8 }, (_, i) => `0x${(i + 1).toString(16).padStart(40, 'a')}`);

const SYMBOLS = [
  { symbol: 'BTC-USD', mid: 500_000, spread: 300, minLots: 10, maxLots: 200 },
  { symbol: 'ETH-USD', mid: 300_000, spread: 300, minLots: 10, maxLots: 200 },
] as const;

/**
 * An endless generator of commands with ids `${prefix}-${n}` and ts from `startTs` + n. The first
 * commands set marks and fund every account.
 */
export function* perpCommandStream(seed: number, prefix: string, startTs = 1_700_000_000_000): Generator<EngineCommand> {
  const prng = createPrng(seed);
  const rnd = () => prng.next();
  let n = 0;
  const next = () => `${prefix}-${n++}`;
  const ts = () => startTs + n;
  for (const s of SYMBOLS) yield { kind: 'setMarkPrice', id: next(), ts: ts(), symbol: s.symbol, markPriceTicks: s.mid, indexPriceTicks: s.mid };
  for (const account of STREAM_ACCOUNTS) yield { kind: 'deposit', id: next(), ts: ts(), account, amount: 1_000_000_000_000n };
  let placed = 0;
  for (;;) {
    const r = rnd();
    const s = SYMBOLS[Math.floor(rnd() * SYMBOLS.length)];
    const account = STREAM_ACCOUNTS[Math.floor(rnd() * STREAM_ACCOUNTS.length)];
    const side = rnd() < 0.5 ? 'BUY' : 'SELL';
    const sizeLots = s.minLots + Math.floor(rnd() * (s.maxLots - s.minLots));
    if (r < 0.55) {
      // Mostly passive, one in eight crossing the mid.
      const off = 1 + Math.floor(rnd() * s.spread);
      const crossing = rnd() < 0.125;
      const priceTicks = side === 'BUY' ? s.mid + (crossing ? off : -off) : s.mid + (crossing ? -off : off);
      placed++;
      yield { kind: 'placeOrder', id: next(), ts: ts(), account, symbol: s.symbol, side, type: 'LIMIT', priceTicks, sizeLots, timeInForce: 'GTC' };
    } else if (r < 0.7) {
      yield { kind: 'placeOrder', id: next(), ts: ts(), account, symbol: s.symbol, side, type: 'MARKET', sizeLots };
    } else if (r < 0.95) {
      const orderId = 1 + Math.floor(rnd() * Math.max(1, placed));
      yield { kind: 'cancelOrder', id: next(), ts: ts(), account, orderId };
    } else if (r < 0.97) {
      yield { kind: 'deposit', id: next(), ts: ts(), account, amount: BigInt(1 + Math.floor(rnd() * 1_000_000)) * 1_000n };
    } else {
      const mark = s.mid + Math.floor(rnd() * 41) - 20;
      yield { kind: 'setMarkPrice', id: next(), ts: ts(), symbol: s.symbol, markPriceTicks: mark, indexPriceTicks: mark };
    }
  }
}

export function takeCommands(seed: number, prefix: string, count: number): EngineCommand[] {
  const out: EngineCommand[] = [];
  for (const c of perpCommandStream(seed, prefix)) {
    if (out.length >= count) break;
    out.push(c);
  }
  return out;
}
