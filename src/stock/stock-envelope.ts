/** The stock API's envelope (contract.md §A): `{code, errMsg, uuid, data}`. */
import fastJson from 'fast-json-stringify';
import type { AppError, ErrorCode } from '../errors/app-error.ts';
import type { EnvelopeFormat } from '../http/envelope.ts';

const STATUS: Record<ErrorCode, { http: number; code: number }> = {
  VALIDATION: { http: 400, code: 400 },
  // Every authentication or permission failure looks the same to the client (seed §7A).
  UNAUTHORIZED: { http: 400, code: 401 },
  FORBIDDEN: { http: 400, code: 401 },
  NOT_FOUND: { http: 404, code: 404 },
  CONFLICT: { http: 409, code: 409 },
  PAYLOAD_TOO_LARGE: { http: 413, code: 413 },
  RATE_LIMITED: { http: 429, code: 429 },
  CHAIN_REVERT: { http: 400, code: 400 },
  CHAIN_UNAVAILABLE: { http: 503, code: 503 },
  STORAGE_UNAVAILABLE: { http: 503, code: 503 },
  INTERNAL: { http: 500, code: 500 },
};

export interface StockEnvelope<T> {
  code: number;
  errMsg: string;
  uuid: string;
  data?: T;
}

export function stockOk<T>(uuid: string, data: T): StockEnvelope<T> {
  return { code: 200, errMsg: '', uuid, data };
}

/** The content type a route sets when it answers with `stockOkText`. */
export const JSON_UTF8 = 'application/json; charset=utf-8';

/**
 * The success envelope around data that is already JSON, for the hottest routes: a quote is
 * rendered once per tick rather than once per request, and calldata is hex. Fastify sends a
 * string with a JSON content type as it is, so the route's response schema then only
 * documents the answer; the data text must come from that schema's serializer or be checked against
 * it in a test. `uuid` is the request id, which this API generates itself (a UUID), never a header.
 */
export function stockOkText(uuid: string, dataJson: string): string {
  return '{"code":200,"errMsg":"","uuid":"' + uuid + '","data":' + dataJson + '}';
}

export const stockEnvelope: EnvelopeFormat = {
  renderError(err: AppError, requestId: string) {
    const s = STATUS[err.code] ?? STATUS.INTERNAL;
    const errMsg = s.code === 401 ? 'Unauthorized' : s.code === 500 ? 'Internal server error' : err.message;
    const headers = err.code === 'RATE_LIMITED' ? { 'retry-after': String((err as AppError & { retryAfterSeconds?: number }).retryAfterSeconds ?? 60) } : undefined;
    return { statusCode: s.http, body: { code: s.code, errMsg, uuid: requestId }, headers };
  },
};

/** The serializer Fastify would build for a response's `data` schema, for text rendered ahead. */
export function dataRenderer(schema: object): (data: unknown) => string {
  return fastJson(schema as fastJson.Schema);
}
