/**
 * The perpetual API's request signature (contract.md §B): `X-Api-Sign` is the padded Base64
 * HMAC-SHA256, under the API secret, of `TS + METHOD + REQUEST_PATH + BODY`, the request path taken
 * from `/v4/` with the query sorted by name. The HMAC itself is the platform's (node:crypto on the
 * servers, a pure implementation in the SDK); what it is computed over is defined here once.
 */
import { canonicalQuery, signedUri, type Query } from '../common/canonical-query.ts';

export const PERP_HEADERS = {
  key: 'X-Api-Key',
  sign: 'X-Api-Sign',
  ts: 'X-Api-Ts',
  chainId: 'X-Chain-Id',
  idempotencyKey: 'Idempotency-Key',
} as const;

/** How far `X-Api-Ts` may be from the server's clock. */
export const PERP_TS_WINDOW_MS = 45_000;

export interface PerpSignInput {
  /** `X-Api-Ts` as sent (milliseconds). */
  ts: string;
  method: string;
  /** The path from `/v4/` plus `?` and the sorted query when there is one ({@link perpRequestPath}). */
  requestPath: string;
}

/** The request path the signature covers: `path` (from `/v4/`) with its query in canonical order. */
export function perpRequestPath(path: string, query: string | URLSearchParams | Query = ''): string {
  return signedUri(path, canonicalQuery(query));
}

/** What precedes the body in the signed message: `ts + METHOD + request_path`. */
export function perpSignPrefix(input: PerpSignInput): string {
  return input.ts + input.method.toUpperCase() + input.requestPath;
}

/** The whole signed message for a client holding the body as text. */
export function perpSignMessage(input: PerpSignInput & { body: string }): string {
  return perpSignPrefix(input) + input.body;
}
