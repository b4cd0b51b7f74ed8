/**
 * The stock API's request signature (contract.md §A): `x-api-sign` is the lower-case hex
 * HMAC-SHA256, under the API secret, of five lines `METHOD\nURI\nTS\nNONCE\nBODY` (no trailing
 * newline), the URI taken from `/api/v1/` with the query sorted by name. The HMAC itself is the
 * platform's; what it is computed over is defined here once.
 */
import { canonicalQuery, signedUri, type Query } from '../common/canonical-query.ts';

export const STOCK_HEADERS = {
  key: 'x-api-key',
  sign: 'x-api-sign',
  ts: 'x-api-ts',
  nonce: 'x-api-nonce',
  chainId: 'x-api-chain-id',
  product: 'x-api-p',
} as const;

export interface StockSignInput {
  method: string;
  /** Already canonical: the path from /api/v1/ plus `?` and the sorted query ({@link stockSignedUri}). */
  uri: string;
  ts: string;
  nonce: string;
}

/** The URI the signature covers: `path` (from `/api/v1/`) with its query in canonical order. */
export function stockSignedUri(path: string, query: string | URLSearchParams | Query = ''): string {
  return signedUri(path, canonicalQuery(query));
}

/** The four lines before the body, each ended by `\n`: METHOD, URI, TS, NONCE. */
export function stockSignPrefix(input: StockSignInput): string {
  return `${input.method.toUpperCase()}\n${input.uri}\n${input.ts}\n${input.nonce}\n`;
}

/** The whole five-line payload for a client holding the body as text ('' when there is none). */
export function stockSignMessage(input: StockSignInput & { body: string }): string {
  return stockSignPrefix(input) + input.body;
}
