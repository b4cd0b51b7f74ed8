/**
 * Amounts as a person reads them (docs/console.md, "Amounts"): each token's figures at its display
 * precision, truncated toward zero, never rounded (a balance is never shown larger than it is, a
 * debt never smaller). Works on the API's exact decimal strings, without any float. The APIs keep
 * the exact values; this is for the page only.
 */

import { DISPLAY_PRECISION, SHARE_DISPLAY_DECIMALS } from '@tokex/contract';

/**
 * Display precision by what the figure is, taken from the contract package's one table
 * (packages/contract/src/common/display-precision.ts) so the console, the CLI and the examples
 * show the same figure at the same places.
 */
export const DISPLAY_DECIMALS = {
  /** USDC, mUSD and every USD figure of an account (balances, equity, PnL, fees). */
  cash: DISPLAY_PRECISION.USD,
  /** Stock token shares. */
  shares: SHARE_DISPLAY_DECIMALS,
  /** Stock prices: the quotes' cent (`"229.80"`). */
  stockPrice: DISPLAY_PRECISION.USD,
} as const;

const DECIMAL = /^(-?)(\d*)(?:\.(\d*))?$/;

/**
 * `value` at `decimals` places, truncated toward zero (`"400.000000000000000126"` → `"400.00"`,
 * `"-1.239"` → `"-1.23"`), thousands not grouped; anything that is not a decimal is shown as is, and
 * null or undefined as `—`.
 */
export function formatAmount(value: unknown, decimals: number): string {
  if (value === null || value === undefined || value === '') return '—';
  const text = typeof value === 'number' || typeof value === 'bigint' ? String(value) : String(value).trim();
  const m = DECIMAL.exec(text);
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) return text;
  const int = (m[2] || '0').replace(/^0+(?=\d)/, '');
  const frac = (m[3] ?? '').slice(0, decimals).padEnd(decimals, '0');
  const zero = /^0*$/.test(int) && /^0*$/.test(frac);
  // A value truncated to zero is shown without its sign (-0.001 → 0.00).
  const sign = m[1] === '-' && !zero ? '-' : '';
  return decimals > 0 ? `${sign}${int}.${frac}` : `${sign}${int}`;
}

/** The places a step like `"0.1"`, `"0.01"`, `"1"` has: an instrument's tick or lot. */
export function decimalsOf(step: string | undefined, fallback = 2): number {
  if (!step) return fallback;
  const frac = step.split('.')[1] ?? '';
  return frac.replace(/0+$/, '').length;
}

export const formatCash = (v: unknown) => formatAmount(v, DISPLAY_DECIMALS.cash);
export const formatShares = (v: unknown) => formatAmount(v, DISPLAY_DECIMALS.shares);
export const formatStockPrice = (v: unknown) => formatAmount(v, DISPLAY_DECIMALS.stockPrice);

/** A positive decimal as the APIs take it (no sign, no exponent): what the forms check before sending. */
export function isPositiveDecimal(text: string): boolean {
  return /^(\d+\.?\d*|\.\d+)$/.test(text) && /[1-9]/.test(text);
}
