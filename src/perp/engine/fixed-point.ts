/**
 * Integer division with an explicit direction. BigInt `/` truncates toward zero, which rounds a
 * negative quotient up; every rounding in the engine must say which way it goes (docs/perp-engine.md).
 */

/** ⌊a / b⌋ for b > 0. */
export function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a < 0n && q * b !== a ? q - 1n : q;
}

/** ⌈a / b⌉ for b > 0. */
export function ceilDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a > 0n && q * b !== a ? q + 1n : q;
}

/** Parts per million: the denominator of fee and margin rates. */
export const PPM = 1_000_000n;
/** Funding rates are given in units of 1e-9 (`rateE9 = 100_000` is 0.01 %). */
export const RATE_E9 = 1_000_000_000n;

/**
 * An exact decimal string as `value / 10^scale`. Throws on anything but a plain non-negative decimal:
 * used for instrument configuration only (a programmer error, not client input).
 */
export function parseScaled(text: string, what: string): { value: bigint; scale: number } {
  if (!/^(0|[1-9]\d*)(\.\d+)?$/.test(text)) throw new Error(`instrument: ${what} must be a decimal string, got ${JSON.stringify(text)}`);
  const dot = text.indexOf('.');
  if (dot === -1) return { value: BigInt(text), scale: 0 };
  return { value: BigInt(text.slice(0, dot) + text.slice(dot + 1)), scale: text.length - dot - 1 };
}
