/**
 * How the perpetual API answers an error of the hierarchy: the row of its table (the contract's
 * PERP_ERROR_CODES, contract.md §B; docs/perp-api.md prints it row for row, a test keeps it in
 * step). The engine's refusals arrive by name (RejectedError's `rejection`) and are mapped here;
 * the engine itself knows no number or HTTP status.
 */
import { PERP_ERROR_CODES, PERP_OK_CODE, type PerpErrorEntry, type PerpErrorName, type PerpRejection } from '@tokex/contract';
import type { AppError, AuthFailure, ErrorCode } from '../errors/app-error.ts';
import type { RejectCode } from './engine/result-codes.ts';

export { PERP_ERROR_CODES, PERP_OK_CODE, type PerpErrorName, type PerpRejection };
export type PerpCodeEntry = PerpErrorEntry;

// Every refusal the engine can answer has a row of the table: a name added to the engine without
// one fails to compile here.
const ENGINE_REFUSALS_HAVE_ROWS: Readonly<Record<RejectCode, PerpErrorEntry>> = PERP_ERROR_CODES;
void ENGINE_REFUSALS_HAVE_ROWS;

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
