/** The initial margin rate of a position: max(⌈1e6 / leverage⌉, the instrument's floor), in ppm. */
import type { InstrumentSpec } from '../instruments.ts';

export function imrFor(spec: InstrumentSpec, leverage: number): bigint {
  return BigInt(Math.max(Math.ceil(1_000_000 / leverage), spec.initialMarginRatioPpm));
}
