/**
 * The stock API's error table (contract.md §A; docs/stock-api.md prints it): the envelope's `code`
 * mirrors the HTTP status, except that every authentication or permission failure answers the same
 * opaque `401` in an HTTP 400 (seed §7A), so a caller learns nothing about which check failed.
 * Integrators program against these numbers: never renumber an entry, only add.
 */
export interface StockErrorEntry {
  /** `code` of the envelope. */
  code: number;
  /** HTTP status of the answer. */
  http: number;
  meaning: string;
}

/** `code` of every successful answer. */
export const STOCK_OK_CODE = 200;

export const STOCK_ERROR_CODES = {
  VALIDATION: { http: 400, code: 400, meaning: 'a parameter is missing or invalid; `errMsg` names the field and the reason' },
  UNAUTHORIZED: { http: 400, code: 401, meaning: 'authentication failed (key, signature, timestamp, nonce, chain or IP); which check is not said' },
  FORBIDDEN: { http: 400, code: 401, meaning: 'the key may not do this; answered as an authentication failure' },
  NOT_FOUND: { http: 404, code: 404, meaning: 'no such resource or route' },
  CONFLICT: { http: 409, code: 409, meaning: 'the request conflicts with the current state (an idempotent retry with another body)' },
  PAYLOAD_TOO_LARGE: { http: 413, code: 413, meaning: 'the request body is larger than the limit' },
  RATE_LIMITED: { http: 429, code: 429, meaning: 'too many requests for this key; retry after `Retry-After` seconds' },
  CHAIN_REVERT: { http: 400, code: 400, meaning: 'the chain reverted the transaction; `data` carries its hash and status' },
  REJECTED: { http: 400, code: 400, meaning: 'refused by a business rule (balance, market closed, order state); `errMsg` says which' },
  CHAIN_UNAVAILABLE: { http: 503, code: 503, meaning: 'the chain RPC does not answer; retry with backoff' },
  STORAGE_UNAVAILABLE: { http: 503, code: 503, meaning: 'the database or shared store does not answer; retry with backoff' },
  INTERNAL: { http: 500, code: 500, meaning: 'internal error; report the `uuid`' },
} as const satisfies Record<string, StockErrorEntry>;

export type StockErrorName = keyof typeof STOCK_ERROR_CODES;
