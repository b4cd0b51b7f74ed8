/** Exact checks of decimal strings against an instrument's steps (no floating point). */

const DECIMAL = /^(\d+)(?:\.(\d+))?$/;

function scaled(text: string, scale: number): bigint {
  const m = DECIMAL.exec(text)!;
  const frac = (m[2] ?? '').padEnd(scale, '0');
  return BigInt(m[1] + frac);
}

function decimals(text: string): number {
  return DECIMAL.exec(text)?.[2]?.length ?? 0;
}

/** True for a plain non-negative decimal string (`"12.5"`, not `"1e3"`, `"-1"` or `".5"`). */
export function isDecimalString(text: unknown): text is string {
  return typeof text === 'string' && DECIMAL.test(text);
}

/** True when `value` is a whole multiple of `step` (both plain decimal strings, step > 0). */
export function isMultipleOf(value: string, step: string): boolean {
  const scale = Math.max(decimals(value), decimals(step));
  const s = scaled(step, scale);
  return s > 0n && scaled(value, scale) % s === 0n;
}

/** -1, 0 or 1 as a < b, a = b, a > b (plain decimal strings). */
export function compareDecimal(a: string, b: string): number {
  const scale = Math.max(decimals(a), decimals(b));
  const x = scaled(a, scale);
  const y = scaled(b, scale);
  return x < y ? -1 : x > y ? 1 : 0;
}
