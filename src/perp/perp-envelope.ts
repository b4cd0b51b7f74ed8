/**
 * The perpetual API's envelope (contract.md §B): `{code, msg, data, requestId}`, code 0 on success
 * and otherwise a number from the documented table (src/perp/perp-error-codes.ts, docs/perp-api.md)
 * with the HTTP status the table gives. Data that depend on chain state also carry `blockInfo`.
 */
import { UnauthorizedError, type AppError } from '../errors/app-error.ts';
import { PERP_ERROR_CODES, PERP_OK_CODE, perpErrorOf } from './perp-error-codes.ts';
import type { EnvelopeFormat } from '../http/envelope.ts';
import type { ProbeEnvelope } from '../http/probe-routes.ts';

export interface BlockInfo {
  number: string;
  hash: string;
  timestamp: number;
}

export interface PerpEnvelope<T> {
  code: number;
  msg: string;
  data: T;
  requestId: string;
  blockInfo?: BlockInfo;
}

export function perpOk<T>(requestId: string, data: T, blockInfo?: BlockInfo): PerpEnvelope<T> {
  const body: PerpEnvelope<T> = { code: PERP_OK_CODE, msg: 'ok', data, requestId };
  if (blockInfo) body.blockInfo = blockInfo;
  return body;
}

/** `/healthz` and `/readyz` in this envelope; not ready is the documented NOT_READY code. */
export const perpProbeEnvelope: ProbeEnvelope = {
  ok: (requestId, data) => perpOk(requestId, data),
  notReady: (requestId, msg, data) => ({ code: PERP_ERROR_CODES.NOT_READY.code, msg, data, requestId }),
};

/** Messages that must not carry the error's own text: the cause of a fault stays in the log. */
const FIXED_MESSAGES: Partial<Record<AppError['code'], string>> = {
  INTERNAL: 'Internal server error',
  UNAUTHORIZED: 'Unauthorized',
};

export const CHAIN_MISMATCH_MESSAGE = 'X-Chain-Id is missing or not the chain of this service (GET time answers without it; the docs name the chain id) or of the API key';

export const perpEnvelope: EnvelopeFormat = {
  renderError(err: AppError, requestId: string) {
    const entry = perpErrorOf(err);
    // A chain mismatch says so (the chain id is public, and a client configured for another
    // deployment, a Monday Trade client still on chain 143, needs to know), and a signature mismatch
    // names the text the signature must cover (the request's own method and path, never the secret:
    // perp-auth-hook.ts); other authentication failures stay 'Unauthorized' beside their code.
    const msg =
      entry.name === 'CHAIN_MISMATCH'
        ? CHAIN_MISMATCH_MESSAGE
        : entry.name === 'INVALID_SIGNATURE' && err instanceof UnauthorizedError && err.publicMessage !== undefined
          ? err.publicMessage
          : (FIXED_MESSAGES[err.code] ?? (entry.name === 'INTERNAL' ? 'Internal server error' : err.message));
    // `data` is an object on errors too; a validation error names its field there as well, and an
    // error's own `data` (what the client needs to act: `outcome: "unknown"` on a 50002 whose
    // request may or may not have been applied) is answered, except on faults whose cause stays in
    // the log.
    const field = (err as AppError & { field?: string }).field;
    const own = err.data !== undefined && entry.name !== 'INTERNAL' && err.code !== 'UNAUTHORIZED' ? err.data : {};
    const data = err.code === 'VALIDATION' && field !== undefined ? { ...own, field } : { ...own };
    const headers = err.code === 'RATE_LIMITED' ? { 'retry-after': String((err as AppError & { retryAfterSeconds?: number }).retryAfterSeconds ?? 60) } : undefined;
    return { statusCode: entry.http, body: { code: entry.code, msg, data, requestId }, headers };
  },
};
