/**
 * The perpetual API's error table (contract.md §B): the engine's result codes (one table, in
 * src/perp/engine/result-codes.ts) and the codes only the API answers (authentication, permission,
 * routes, signatures, server faults). Five-digit codes in ranges per category, as OKX numbers them:
 * 10xxx parameters, 20xxx authentication, 30xxx permission, 40xxx not found, 42900 rate limit, 50xxx
 * server, 51xxx and 52xxx trading rejections. HTTP statuses are only those the spec lists (400 401
 * 403 404 429 500). docs/perp-api.md prints this table row for row (a test keeps it in step).
 * Integrators program against the numbers: never renumber an entry, only add.
 */
import type { AppError, AuthFailure, ErrorCode } from '../errors/app-error.ts';
import type { CodeStatus } from '../errors/error-codes.ts';
import { RESULT_CODES } from './engine/result-codes.ts';

export const PERP_OK_CODE = 0;

export type PerpCategory = 'parameter' | 'authentication' | 'permission' | 'not found' | 'rate limit' | 'trading' | 'server';

export interface PerpCodeEntry extends CodeStatus {
  category: PerpCategory;
  /** What it means, as the documentation prints it. */
  meaning: string;
}

/** Codes the API answers that the engine never does. */
const API_CODES = {
  BODY_TOO_LARGE: { code: 10001, http: 400, category: 'parameter', meaning: 'the request body is larger than the limit' },
  STATE_CONFLICT: { code: 10002, http: 400, category: 'parameter', meaning: 'the request conflicts with the current state of the resource' },
  SNAPSHOT_REQUIRED: { code: 10003, http: 400, category: 'parameter', meaning: 'streams: `since` is no longer retained, or the stream restarted; subscribe without `since` for a fresh snapshot' },

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
  POSITION_NOT_FOUND: { code: 40004, http: 404, category: 'not found', meaning: 'no such position for this account' },
  API_KEY_NOT_FOUND: { code: 40005, http: 404, category: 'not found', meaning: 'no such API key for this wallet' },

  RATE_LIMITED: { code: 42900, http: 429, category: 'rate limit', meaning: 'too many requests for this key; retry after `Retry-After` seconds' },

  INTERNAL: { code: 50000, http: 500, category: 'server', meaning: 'internal error; report the `requestId`' },
  CHAIN_UNAVAILABLE: { code: 50001, http: 503, category: 'server', meaning: 'the chain RPC does not answer; retry with backoff' },
  STORAGE_UNAVAILABLE: { code: 50002, http: 503, category: 'server', meaning: 'the database or shared store does not answer; retry with backoff' },
  NOT_READY: { code: 50003, http: 503, category: 'server', meaning: '`GET /readyz` only: a role the API depends on has made no progress within its threshold (docs/operations.md)' },

  DUPLICATE_CLIENT_ORDER_ID: { code: 51008, http: 400, category: 'trading', meaning: '`clientOrderId` was already used by this account' },
  NONCE_USED: { code: 51013, http: 400, category: 'trading', meaning: 'the signed order\'s `nonce` was already used' },
  BAD_ORDER_SIGNATURE: { code: 51014, http: 400, category: 'trading', meaning: 'the order\'s EIP-712 signature is not from the wallet or its enabled session signer' },
  ONE_CLICK_NOT_ENABLED: { code: 51015, http: 400, category: 'trading', meaning: 'One-Click Trade is not enabled (or expired) for the session signer' },
  CHAIN_REVERTED: { code: 52001, http: 400, category: 'trading', meaning: 'the chain reverted the transaction' },
} as const satisfies Record<string, PerpCodeEntry>;

type Table = typeof RESULT_CODES & typeof API_CODES;
export type PerpErrorName = keyof Table;

/** Every entry, in code order (the order the documentation prints). */
export const PERP_ERROR_CODES: Readonly<Record<PerpErrorName, PerpCodeEntry>> = Object.fromEntries(
  Object.entries({ ...RESULT_CODES, ...API_CODES } as Record<string, PerpCodeEntry>).sort((a, b) => a[1].code - b[1].code),
) as Record<PerpErrorName, PerpCodeEntry>;

/** A business refusal the API answers (a RejectedError's `rejection`): a trading entry of the table. */
export type PerpRejection = { [K in PerpErrorName]: Table[K]['category'] extends 'trading' ? K : never }[PerpErrorName];

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
  symbol: 'UNKNOWN_SYMBOL',
  instrument: 'UNKNOWN_SYMBOL',
  order: 'ORDER_NOT_FOUND',
  position: 'POSITION_NOT_FOUND',
  apiKey: 'API_KEY_NOT_FOUND',
};

const BY_ERROR_CODE: Readonly<Record<Exclude<ErrorCode, 'UNAUTHORIZED' | 'NOT_FOUND' | 'REJECTED'>, PerpErrorName>> = {
  VALIDATION: 'INVALID',
  PAYLOAD_TOO_LARGE: 'BODY_TOO_LARGE',
  CONFLICT: 'STATE_CONFLICT',
  FORBIDDEN: 'PERMISSION_DENIED',
  RATE_LIMITED: 'RATE_LIMITED',
  CHAIN_REVERT: 'CHAIN_REVERTED',
  CHAIN_UNAVAILABLE: 'CHAIN_UNAVAILABLE',
  STORAGE_UNAVAILABLE: 'STORAGE_UNAVAILABLE',
  INTERNAL: 'INTERNAL',
};

function isName(name: string): name is PerpErrorName {
  return Object.prototype.hasOwnProperty.call(PERP_ERROR_CODES, name);
}

/** The table's entry for an error of the hierarchy. */
export function perpErrorOf(err: AppError): { name: PerpErrorName } & PerpCodeEntry {
  let name: PerpErrorName;
  if (err.code === 'UNAUTHORIZED') name = AUTH_FAILURES[(err as AppError & { failure?: AuthFailure }).failure ?? 'credentials'] ?? 'MISSING_CREDENTIALS';
  else if (err.code === 'NOT_FOUND') name = NOT_FOUND[(err as AppError & { what?: string }).what ?? ''] ?? 'NOT_FOUND';
  else if (err.code === 'REJECTED') {
    const rejection = (err as AppError & { rejection?: string }).rejection;
    name = rejection !== undefined && isName(rejection) && PERP_ERROR_CODES[rejection].category === 'trading' ? rejection : 'INTERNAL';
  } else name = BY_ERROR_CODE[err.code] ?? 'INTERNAL';
  return { name, ...PERP_ERROR_CODES[name] };
}
