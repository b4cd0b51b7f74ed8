/**
 * A quote's bid and ask as the contracts' prices (mUSD per share, 18 decimals), shared by the
 * executor (which fills at them) and the order routes (which bound a market order by them).
 */
import type { Quote } from '../marketdata/market-types.ts';

export const DEFAULT_QUOTE_MAX_AGE_MS = 30_000;

const PRICE_DECIMALS = 18;
const PRICE_SCALE = 10n ** 18n;
const UINT128_MAX = (1n << 128n) - 1n;
const DECIMAL_RE = /^(0|[1-9]\d*)(\.\d{1,18})?$/;

/** A decimal price string as an exact 18-decimal mUSD price; undefined when malformed or not positive. */
export function toPrice18(value: string): bigint | undefined {
  if (typeof value !== 'string' || !DECIMAL_RE.test(value)) return undefined;
  const [whole, fraction = ''] = value.split('.');
  const scaled = BigInt(whole) * PRICE_SCALE + BigInt(fraction.padEnd(PRICE_DECIMALS, '0'));
  return scaled > 0n && scaled <= UINT128_MAX ? scaled : undefined;
}

/** Bid and ask of a quote as 18-decimal prices, or undefined when the quote cannot be used at `now`. */
export function usableQuote(
  quote: Pick<Quote, 'bid' | 'ask' | 'timestamp'> | undefined,
  now: number,
  maxAgeMs: number = DEFAULT_QUOTE_MAX_AGE_MS,
): { bid: bigint; ask: bigint } | undefined {
  if (!quote) return undefined;
  if (!(now - quote.timestamp <= maxAgeMs)) return undefined;
  const bid = toPrice18(quote.bid);
  const ask = toPrice18(quote.ask);
  if (bid === undefined || ask === undefined) return undefined;
  return { bid, ask };
}
