/**
 * The price at which a position would be liquidated, all else (other positions at their marks, the
 * wallet) unchanged (docs/perp-api.md "Positions"). The engine flags an account liquidatable when
 * `backing + uPnL(P) < MM(P)`, where for a cross position `backing` is the collateral plus every
 * other cross position's uPnL − MM, and for an isolated one its own margin. With s the signed size in
 * lots, u the unit (µUSD per tick × lot), E the entry cost, m the maintenance rate in ppm:
 *
 *   long   b + s·u·P − E = s·u·P·m   →  P = (E − b) / (s·u·(1 − m))
 *   short  b − |s|·u·P + E = |s|·u·P·m  →  P = (E + b) / (|s|·u·(1 + m))
 *
 * in ticks, rounded toward the mark (up for a long, down for a short): the position is reported
 * liquidatable no later than it is. Undefined when no positive price liquidates it (a long backed
 * by more than its entry cost).
 */
import { ceilDiv, floorDiv, PPM } from '../engine/fixed-point.ts';

export function liquidationPriceTicks(p: { sizeLots: number; entryNotional: bigint; unitMicros: bigint; mmrPpm: bigint; backing: bigint }): bigint | undefined {
  if (p.sizeLots === 0) return undefined;
  const s = BigInt(p.sizeLots);
  if (s > 0n) {
    const num = (p.entryNotional - p.backing) * PPM;
    const den = s * p.unitMicros * (PPM - p.mmrPpm);
    if (num <= 0n || den <= 0n) return undefined;
    return ceilDiv(num, den);
  }
  const num = (p.entryNotional + p.backing) * PPM;
  const den = -s * p.unitMicros * (PPM + p.mmrPpm);
  const ticks = floorDiv(num, den);
  return ticks > 0n ? ticks : undefined;
}
