/**
 * Exact decimal amounts as bigint fixed point. Every amount that crosses the API is a decimal
 * string; inside the process it is a bigint scaled by a known number of decimals. Never `number`.
 */
import { ValidationError } from '../errors/app-error.ts';

const DECIMAL_RE = /^(0|[1-9]\d*)(\.\d+)?$/;

export interface ParseDecimalOptions {
  /** Name of the request field, used in the validation message. */
  field: string;
  decimals: number;
  /** Reject zero (default true: amounts, prices and quantities must be positive). */
  positive?: boolean;
  /** Upper bound on the scaled value (default: uint128 max). */
  max?: bigint;
}

const UINT128_MAX = (1n << 128n) - 1n;

/** Parses `"12.5"` into `12500000n` for 6 decimals. Rejects signs, exponents, spaces and excess precision. */
export function parseDecimal(value: unknown, opts: ParseDecimalOptions): bigint {
  const { field, decimals } = opts;
  if (typeof value !== 'string') throw new ValidationError(field, 'must be a decimal string');
  if (!DECIMAL_RE.test(value)) throw new ValidationError(field, 'must be a non-negative decimal string like "12.5"');
  const dot = value.indexOf('.');
  const fraction = dot === -1 ? '' : value.slice(dot + 1);
  if (fraction.length > decimals) throw new ValidationError(field, `at most ${decimals} decimal places`);
  // The digits with the fraction padded to `decimals` places are the scaled integer: one parse.
  const scaled = BigInt((dot === -1 ? value : value.slice(0, dot)) + fraction.padEnd(decimals, '0'));
  if ((opts.positive ?? true) && scaled === 0n) throw new ValidationError(field, 'must be greater than zero');
  if (scaled > (opts.max ?? UINT128_MAX)) throw new ValidationError(field, 'too large');
  return scaled;
}

/** Formats a scaled bigint as the shortest exact decimal string (`12500000n`, 6 → `"12.5"`). */
export function formatDecimal(value: bigint, decimals: number): string {
  if (value === 0n) return '0';
  const negative = value < 0n;
  // String work on the digits: a bigint division and a remainder per value cost several times more.
  const digits = (negative ? -value : value).toString();
  let whole: string;
  let frac: string;
  if (digits.length > decimals) {
    whole = digits.slice(0, digits.length - decimals);
    frac = digits.slice(digits.length - decimals);
  } else {
    whole = '0';
    frac = digits.padStart(decimals, '0');
  }
  let end = frac.length;
  while (end > 0 && frac.charCodeAt(end - 1) === 48 /* 0 */) end--;
  const out = end === 0 ? whole : `${whole}.${frac.slice(0, end)}`;
  return negative ? '-' + out : out;
}

/** Changes the scale of a value; when scaling down, `rounding` decides the lost digits. */
export function rescale(value: bigint, from: number, to: number, rounding: 'floor' | 'ceil' = 'floor'): bigint {
  if (to >= from) return value * 10n ** BigInt(to - from);
  const div = 10n ** BigInt(from - to);
  const q = value / div;
  return rounding === 'ceil' && q * div !== value && value > 0n ? q + 1n : q;
}

/** a*b/den rounded down or up; the one place multiplication of two scaled values is done. */
export function mulDiv(a: bigint, b: bigint, den: bigint, rounding: 'floor' | 'ceil' = 'floor'): bigint {
  const p = a * b;
  const q = p / den;
  return rounding === 'ceil' && q * den !== p && p > 0n ? q + 1n : q;
}
