/**
 * The stable numeric codes each API answers for the one AppError hierarchy. Integrators program
 * against these numbers: never renumber an entry, only add. docs/stock-api.md prints this table; the
 * perpetual API's is src/perp/perp-error-codes.ts, built on the engine's result-code table.
 */
import type { ErrorCode } from './app-error.ts';

export interface CodeStatus {
  /** HTTP status of the answer. */
  http: number;
  /** `code` in the answer's body. */
  code: number;
}

// ------------------------------------------------------------------ stock API (contract.md §A)

/** The stock API: the body code mirrors the HTTP status, except the opaque authentication answer. */
export const STOCK_ERROR_STATUS: Readonly<Record<ErrorCode, CodeStatus>> = {
  VALIDATION: { http: 400, code: 400 },
  // Every authentication or permission failure looks the same to the client (seed §7A).
  UNAUTHORIZED: { http: 400, code: 401 },
  FORBIDDEN: { http: 400, code: 401 },
  NOT_FOUND: { http: 404, code: 404 },
  CONFLICT: { http: 409, code: 409 },
  PAYLOAD_TOO_LARGE: { http: 413, code: 413 },
  RATE_LIMITED: { http: 429, code: 429 },
  CHAIN_REVERT: { http: 400, code: 400 },
  REJECTED: { http: 400, code: 400 },
  CHAIN_UNAVAILABLE: { http: 503, code: 503 },
  STORAGE_UNAVAILABLE: { http: 503, code: 503 },
  INTERNAL: { http: 500, code: 500 },
};

export const STOCK_OK_CODE = 200;
