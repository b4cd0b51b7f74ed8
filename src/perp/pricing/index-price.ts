/**
 * The index of an instrument (docs/perp-pricing.md "Index"): the market-data quote of its base
 * (`AAPL-USD` → the stock API's own `AAPL` quote, `BTC-USD` → the simulator's `BTC`), as the mid of
 * bid and ask in whole ticks of the instrument, rounded down. Exact: decimal strings to bigint.
 */
import { parseScaled } from '../engine/fixed-point.ts';

/** The market-data symbol whose quote is the index of `perpSymbol`. */
export function indexSymbolOf(perpSymbol: string): string {
  const dash = perpSymbol.indexOf('-');
  return dash === -1 ? perpSymbol : perpSymbol.slice(0, dash);
}

/** ⌊(bid + ask) / 2 / tickSize⌋, or undefined for a quote that is not two positive decimals. */
export function midTicks(bid: string, ask: string, tickSize: string): bigint | undefined {
  let b: { value: bigint; scale: number };
  let a: { value: bigint; scale: number };
  let t: { value: bigint; scale: number };
  try {
    b = parseScaled(bid, 'bid');
    a = parseScaled(ask, 'ask');
    t = parseScaled(tickSize, 'tickSize');
  } catch {
    return undefined;
  }
  const scale = Math.max(b.scale, a.scale, t.scale);
  const up = (v: { value: bigint; scale: number }) => v.value * 10n ** BigInt(scale - v.scale);
  const sum = up(b) + up(a);
  // (sum / 2) / tick = sum / (2 · tick), all at one scale.
  const ticks = sum / (2n * up(t));
  return up(b) > 0n && up(a) > 0n && ticks > 0n ? ticks : undefined;
}
