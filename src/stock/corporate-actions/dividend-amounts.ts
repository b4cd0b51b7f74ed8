/**
 * What a cash dividend pays each holder of record, exactly (docs/corporate-actions.md, "Amounts").
 *
 * Units: shares `s` in stock units (10^-18 share), the declared amount per share `A` in 10^-8 of the
 * currency (the configuration takes at most 8 decimals), cash in the cash token's units (USDC:
 * 10^-6). With `D = 10^(stockDecimals + 8 - cashDecimals) * 10^4` and the withholding `w` in basis
 * points, a holder's exact net entitlement is `s·A·(10^4 − w) / D` cash units, and for the whole
 * action, with `S = Σ s` the shares of record:
 *
 *   gross      G = floor(S·A·10^4 / D)              (the declared amount × shares of record)
 *   net        N = floor(S·A·(10^4 − w) / D)         (what the holders are paid, together)
 *   withheld   W = G − N
 *
 * Each holder first gets the floor of its exact entitlement; the `R = N − Σ floor` units left over
 * (0 ≤ R < the number of holders) go one each to the holders with the largest remainders, ties to
 * the lower address (Hamilton's largest-remainder method). So the sum paid is exactly N, to the
 * unit, and no holder's payout is a whole unit away from its exact entitlement. The distributor is
 * funded with exactly N.
 */
import type { Address } from 'viem';
import { ValidationError } from '../../errors/app-error.ts';
import { parseDecimal } from '../../lib/decimal.ts';

/** Decimals of a declared amount per share (the configuration's limit). */
export const AMOUNT_PER_SHARE_DECIMALS = 8;
export const BPS = 10_000n;

export interface Holding {
  account: Address;
  /** Shares of record in stock units (wallet + free + locked exchange balance). */
  shares: bigint;
}

export interface Payout {
  account: Address;
  shares: bigint;
  /** Cash-token units paid. */
  amount: bigint;
}

export interface DividendAmounts {
  /** Declared amount per share in 10^-8 of the currency. */
  amountPerShare: bigint;
  withholdingBps: number;
  /** S: shares of record, stock units. */
  sharesOfRecord: bigint;
  /** G, cash units. */
  gross: bigint;
  /** W = G − N, cash units. */
  withholding: bigint;
  /** N = the sum of the payouts, cash units. */
  net: bigint;
  /** Units handed out by the largest remainders (R). */
  remainderUnits: bigint;
  /** One per holder with a non-zero payout, by account ascending (lower case). */
  payouts: Payout[];
}

export function parseAmountPerShare(amount: string, field = 'amount'): bigint {
  return parseDecimal(amount, { field, decimals: AMOUNT_PER_SHARE_DECIMALS });
}

export function checkWithholdingBps(bps: number, field = 'DIVIDEND_WITHHOLDING_BPS'): number {
  if (!Number.isInteger(bps) || bps < 0 || bps > 10_000) throw new ValidationError(field, 'must be an integer from 0 to 10000 basis points');
  return bps;
}

const lower = (a: string) => a.toLowerCase();

export function computeDividend(params: {
  holdings: readonly Holding[];
  amountPerShare: bigint;
  withholdingBps: number;
  stockDecimals?: number;
  cashDecimals?: number;
}): DividendAmounts {
  const stockDecimals = params.stockDecimals ?? 18;
  const cashDecimals = params.cashDecimals ?? 6;
  const w = BigInt(checkWithholdingBps(params.withholdingBps, 'withholdingBps'));
  const A = params.amountPerShare;
  if (A <= 0n) throw new ValidationError('amount', 'must be greater than zero');
  const exp = stockDecimals + AMOUNT_PER_SHARE_DECIMALS - cashDecimals;
  // D's power of ten is negative only for a cash token with more decimals than stock + 8.
  if (exp < 0) throw new ValidationError('cashDecimals', 'more decimals than the stock plus 8 is not supported');
  const D = 10n ** BigInt(exp) * BPS;
  const keep = BPS - w;

  const seen = new Set<string>();
  const rows: Array<{ account: Address; shares: bigint; floor: bigint; rest: bigint }> = [];
  let S = 0n;
  for (const h of params.holdings) {
    if (h.shares < 0n) throw new ValidationError('shares', 'must not be negative');
    const key = lower(h.account);
    if (seen.has(key)) throw new ValidationError('holdings', `account ${key} appears twice`);
    seen.add(key);
    if (h.shares === 0n) continue;
    S += h.shares;
    const n = h.shares * A * keep;
    rows.push({ account: h.account, shares: h.shares, floor: n / D, rest: n % D });
  }
  const gross = (S * A * BPS) / D;
  const net = (S * A * keep) / D;
  let floors = 0n;
  for (const r of rows) floors += r.floor;
  const remainderUnits = net - floors;
  // Largest remainder first; equal remainders by address, so the allotment is reproducible.
  const order = [...rows].sort((a, b) => (a.rest !== b.rest ? (a.rest > b.rest ? -1 : 1) : lower(a.account) < lower(b.account) ? -1 : 1));
  const extra = new Set<Address>();
  for (let i = 0n; i < remainderUnits; i++) extra.add(order[Number(i)].account);
  const payouts = rows
    .map((r) => ({ account: r.account, shares: r.shares, amount: r.floor + (extra.has(r.account) ? 1n : 0n) }))
    .filter((p) => p.amount > 0n)
    .sort((a, b) => (lower(a.account) < lower(b.account) ? -1 : 1));
  return { amountPerShare: A, withholdingBps: Number(w), sharesOfRecord: S, gross, withholding: gross - net, net, remainderUnits, payouts };
}
