/**
 * The stock API's request signature (contract.md §A Authentication), shared by the server's check
 * and the SDK's signer so that both build the five-line payload from one definition. A separate
 * test recomputes it by hand so the two cannot agree on a mistake unnoticed.
 */
import { createHmac } from 'node:crypto';

/** Query parameters sorted by name (stable for repeated names), encoded as URLSearchParams encodes them. */
export function canonicalQuery(query: string | URLSearchParams | Record<string, string | number | undefined>): string {
  let params: URLSearchParams;
  if (query instanceof URLSearchParams) params = query;
  else if (typeof query === 'string') params = new URLSearchParams(query.startsWith('?') ? query.slice(1) : query);
  else {
    params = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined) params.append(k, String(v));
  }
  const entries = [...params.entries()];
  // Array.prototype.sort is stable, so repeated names keep their order.
  entries.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return new URLSearchParams(entries).toString();
}

/** `/api/v1/...` plus `?sorted-query` when there is a query. */
export function signedUri(path: string, query: string): string {
  return query === '' ? path : `${path}?${query}`;
}

export interface StockSignInput {
  method: string;
  /** Already canonical: path from /api/v1/ plus the sorted query. */
  uri: string;
  ts: string;
  nonce: string;
  body: string;
}

export function stockSignPayload(input: StockSignInput): string {
  return [input.method.toUpperCase(), input.uri, input.ts, input.nonce, input.body].join('\n');
}

/** Lower-case hex HMAC-SHA256 of the payload under the API secret. */
export function hmacHex(secret: string, payload: string): string {
  return createHmac('sha256', secret).update(payload, 'utf8').digest('hex');
}

/** The same HMAC as 32 raw bytes, for constant-time comparison. */
export function hmacDigest(secret: string, payload: string): Buffer {
  return createHmac('sha256', secret).update(payload, 'utf8').digest();
}
