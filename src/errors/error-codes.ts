/**
 * The stable numeric codes each API answers for the one AppError hierarchy. Integrators program
 * against these numbers: never renumber an entry, only add. docs/stock-api.md and docs/perp-api.md
 * print the same tables (a test keeps the perp document in step with this file).
 */
import type { AppError, AuthFailure, ErrorCode, Rejection } from './app-error.ts';

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

// ------------------------------------------------------------------ perp API (contract.md §B)

export const PERP_OK_CODE = 0;

export type PerpCategory = 'parameter' | 'authentication' | 'permission' | 'not found' | 'rate limit' | 'trading' | 'server';

export interface PerpCodeEntry extends CodeStatus {
  category: PerpCategory;
  /** What it means, as the documentation prints it. */
  meaning: string;
}

/**
 * Five-digit codes in ranges per category, as OKX numbers them: 10xxx parameters, 20xxx
 * authentication, 30xxx permission, 40xxx not found, 42900 rate limit, 50xxx server, 51xxx and
 * 52xxx trading rejections. HTTP statuses are only those the spec lists (400 401 403 404 429 500).
 */
export const PERP_ERROR_CODES = {
  INVALID_PARAMETER: { code: 10000, http: 400, category: 'parameter', meaning: 'a parameter is missing or invalid; `msg` names the field and the reason' },
  BODY_TOO_LARGE: { code: 10001, http: 400, category: 'parameter', meaning: 'the request body is larger than the limit' },
  STATE_CONFLICT: { code: 10002, http: 400, category: 'parameter', meaning: 'the request conflicts with the current state of the resource' },

  MISSING_CREDENTIALS: { code: 20001, http: 401, category: 'authentication', meaning: 'an authentication header is missing, repeated or malformed' },
  INVALID_API_KEY: { code: 20002, http: 401, category: 'authentication', meaning: 'the API key does not exist, was deleted, or belongs to another API' },
  API_KEY_EXPIRED: { code: 20003, http: 401, category: 'authentication', meaning: 'the API key has expired' },
  IP_NOT_ALLOWED: { code: 20004, http: 401, category: 'authentication', meaning: 'the request comes from an IP address the key does not whitelist' },
  TIMESTAMP_OUT_OF_WINDOW: { code: 20005, http: 401, category: 'authentication', meaning: '`X-Api-Ts` is more than 45 s from the server clock' },
  INVALID_SIGNATURE: { code: 20006, http: 401, category: 'authentication', meaning: '`X-Api-Sign` does not match the request' },
  REPLAYED_REQUEST: { code: 20007, http: 401, category: 'authentication', meaning: 'the same signature was already used inside the window' },
  CHAIN_MISMATCH: { code: 20008, http: 401, category: 'authentication', meaning: '`X-Chain-Id` is missing or not the chain of the service or the key' },

  PERMISSION_DENIED: { code: 30001, http: 403, category: 'permission', meaning: 'the key lacks the permission the endpoint needs (READ, TRADE or TRANSFER)' },

  NOT_FOUND: { code: 40000, http: 404, category: 'not found', meaning: 'the resource does not exist or is not the account\'s' },
  ROUTE_NOT_FOUND: { code: 40001, http: 404, category: 'not found', meaning: 'no such endpoint' },
  SYMBOL_NOT_FOUND: { code: 40002, http: 404, category: 'not found', meaning: 'no such instrument' },
  ORDER_NOT_FOUND: { code: 40003, http: 404, category: 'not found', meaning: 'no such order for this account' },
  POSITION_NOT_FOUND: { code: 40004, http: 404, category: 'not found', meaning: 'no such position for this account' },
  API_KEY_NOT_FOUND: { code: 40005, http: 404, category: 'not found', meaning: 'no such API key for this wallet' },

  RATE_LIMITED: { code: 42900, http: 429, category: 'rate limit', meaning: 'too many requests for this key; retry after `Retry-After` seconds' },

  INTERNAL: { code: 50000, http: 500, category: 'server', meaning: 'internal error; report the `requestId`' },
  CHAIN_UNAVAILABLE: { code: 50001, http: 500, category: 'server', meaning: 'the chain RPC does not answer; retry with backoff' },
  STORAGE_UNAVAILABLE: { code: 50002, http: 500, category: 'server', meaning: 'the database or shared store does not answer; retry with backoff' },

  INSUFFICIENT_MARGIN: { code: 51001, http: 400, category: 'trading', meaning: 'not enough free margin for the order or the margin change' },
  INSUFFICIENT_BALANCE: { code: 51002, http: 400, category: 'trading', meaning: 'not enough withdrawable collateral' },
  POST_ONLY_WOULD_CROSS: { code: 51003, http: 400, category: 'trading', meaning: 'a POST_ONLY order would take liquidity; it was not placed' },
  REDUCE_ONLY_WOULD_INCREASE: { code: 51004, http: 400, category: 'trading', meaning: 'a reduce-only order would open or increase a position' },
  FOK_NOT_FILLED: { code: 51005, http: 400, category: 'trading', meaning: 'a FOK order could not be filled in full; nothing was filled' },
  NO_LIQUIDITY: { code: 51006, http: 400, category: 'trading', meaning: 'no resting liquidity within the worst price' },
  ORDER_NOT_OPEN: { code: 51007, http: 400, category: 'trading', meaning: 'the order is already filled, cancelled or expired' },
  DUPLICATE_CLIENT_ORDER_ID: { code: 51008, http: 400, category: 'trading', meaning: '`clientOrderId` was already used by this account' },
  LEVERAGE_EXCEEDED: { code: 51009, http: 400, category: 'trading', meaning: 'the leverage is above the instrument\'s maximum' },
  SIZE_OUT_OF_RANGE: { code: 51010, http: 400, category: 'trading', meaning: 'the size is below the minimum, above the maximum or off the step' },
  PRICE_OUT_OF_RANGE: { code: 51011, http: 400, category: 'trading', meaning: 'the price is off the tick or outside the allowed band' },
  ORDER_EXPIRED: { code: 51012, http: 400, category: 'trading', meaning: 'the signed order\'s `expiry` has passed' },
  NONCE_USED: { code: 51013, http: 400, category: 'trading', meaning: 'the signed order\'s `nonce` was already used' },
  BAD_ORDER_SIGNATURE: { code: 51014, http: 400, category: 'trading', meaning: 'the order\'s EIP-712 signature is not from the wallet or its enabled session signer' },
  ONE_CLICK_NOT_ENABLED: { code: 51015, http: 400, category: 'trading', meaning: 'One-Click Trade is not enabled (or expired) for the session signer' },
  POSITION_NOT_OPEN: { code: 51016, http: 400, category: 'trading', meaning: 'there is no open position to close or adjust' },
  CHAIN_REVERTED: { code: 52001, http: 400, category: 'trading', meaning: 'the chain reverted the transaction' },
} as const satisfies Record<string, PerpCodeEntry>;

export type PerpErrorName = keyof typeof PERP_ERROR_CODES;

// Every rejection of the hierarchy has its entry under the same name (checked by the compiler).
const REJECTIONS: Readonly<Record<Rejection, PerpCodeEntry>> = PERP_ERROR_CODES;

const AUTH_FAILURES: Readonly<Record<AuthFailure, PerpErrorName>> = {
  credentials: 'MISSING_CREDENTIALS',
  key: 'INVALID_API_KEY',
  expired: 'API_KEY_EXPIRED',
  ip: 'IP_NOT_ALLOWED',
  timestamp: 'TIMESTAMP_OUT_OF_WINDOW',
  signature: 'INVALID_SIGNATURE',
  replay: 'REPLAYED_REQUEST',
  scope: 'CHAIN_MISMATCH',
};

const NOT_FOUND: Readonly<Record<string, PerpErrorName>> = {
  route: 'ROUTE_NOT_FOUND',
  symbol: 'SYMBOL_NOT_FOUND',
  instrument: 'SYMBOL_NOT_FOUND',
  order: 'ORDER_NOT_FOUND',
  position: 'POSITION_NOT_FOUND',
  apiKey: 'API_KEY_NOT_FOUND',
};

const BY_ERROR_CODE: Readonly<Record<Exclude<ErrorCode, 'UNAUTHORIZED' | 'NOT_FOUND' | 'REJECTED'>, PerpErrorName>> = {
  VALIDATION: 'INVALID_PARAMETER',
  PAYLOAD_TOO_LARGE: 'BODY_TOO_LARGE',
  CONFLICT: 'STATE_CONFLICT',
  FORBIDDEN: 'PERMISSION_DENIED',
  RATE_LIMITED: 'RATE_LIMITED',
  CHAIN_REVERT: 'CHAIN_REVERTED',
  CHAIN_UNAVAILABLE: 'CHAIN_UNAVAILABLE',
  STORAGE_UNAVAILABLE: 'STORAGE_UNAVAILABLE',
  INTERNAL: 'INTERNAL',
};

/** The perp table's entry for an error of the hierarchy. */
export function perpErrorOf(err: AppError): { name: PerpErrorName } & PerpCodeEntry {
  let name: PerpErrorName;
  if (err.code === 'UNAUTHORIZED') name = AUTH_FAILURES[(err as AppError & { failure?: AuthFailure }).failure ?? 'credentials'] ?? 'MISSING_CREDENTIALS';
  else if (err.code === 'NOT_FOUND') name = NOT_FOUND[(err as AppError & { what?: string }).what ?? ''] ?? 'NOT_FOUND';
  else if (err.code === 'REJECTED') {
    const rejection = (err as AppError & { rejection?: Rejection }).rejection;
    name = rejection !== undefined && REJECTIONS[rejection] ? rejection : 'INTERNAL';
  } else name = BY_ERROR_CODE[err.code] ?? 'INTERNAL';
  return { name, ...PERP_ERROR_CODES[name] };
}
