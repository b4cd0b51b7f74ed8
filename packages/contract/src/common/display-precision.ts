/**
 * How many decimals a person is shown of each token's amounts (docs/stock-api.md "Amounts on
 * screen"). The APIs keep exact amounts (18-decimal mUSD and shares, 6-decimal USDC); a screen
 * (the CLI's tables, the examples, the console) shows them at this precision, truncated toward
 * zero, so a balance is never shown larger than it is: 400.000000000000000126 mUSD reads 400.00.
 *
 * Pure string arithmetic (no `number`), so it is exact at any size and loads in a browser.
 */

/**
 * Decimals shown per token or unit. A stock symbol not listed uses {@link SHARE_DISPLAY_DECIMALS}.
 * Perpetual sizes are not in it: the API answers them at the instrument's lot, already short.
 */
export const DISPLAY_PRECISION: Readonly<Record<string, number>> = Object.freeze({
  /** The demo cash token (6 decimals on chain): cents. */
  USDC: 2,
  /** The stock venue's cash ledger (18 decimals): cents. */
  mUSD: 2,
  /** Prices, PnL, margin, fees and collateral of both venues, quoted in US dollars: cents. */
  USD: 2,
});

/** Fractional shares of a stock token (18 decimals on chain) are shown to a millionth of a share. */
export const SHARE_DISPLAY_DECIMALS = 6;

/** The decimals shown for `token`: the table's, else a stock's ({@link SHARE_DISPLAY_DECIMALS}). */
export function displayDecimals(token: string): number {
  return DISPLAY_PRECISION[token] ?? SHARE_DISPLAY_DECIMALS;
}

const DECIMAL = /^(-)?(\d+)(?:\.(\d*))?$/;

/**
 * `amount` (a plain decimal string, as the APIs answer) at `decimals` places, truncated toward
 * zero and padded with zeros: ('400.000000000000000126', 2) → '400.00', ('-1.239', 2) → '-1.23',
 * ('-0.001', 2) → '0.00'. Anything that is not a plain decimal (null, '-', 'n/a') is returned as
 * it came, so a table can pass every cell through.
 */
export function truncateDecimal(amount: string, decimals: number): string {
  if (!Number.isInteger(decimals) || decimals < 0) throw new RangeError(`decimals must be a whole number ≥ 0 (got ${decimals})`);
  const m = DECIMAL.exec(amount.trim());
  if (m === null) return amount;
  const whole = m[2].replace(/^0+(?=\d)/, '');
  const frac = (m[3] ?? '').slice(0, decimals).padEnd(decimals, '0');
  const zero = /^0*$/.test(whole) && /^0*$/.test(frac);
  return `${m[1] !== undefined && !zero ? '-' : ''}${whole}${decimals > 0 ? `.${frac}` : ''}`;
}

/** `amount` of `token` as a person reads it: {@link truncateDecimal} at {@link displayDecimals}(token). */
export function formatDisplayAmount(amount: string, token: string): string {
  return truncateDecimal(amount, displayDecimals(token));
}
