/**
 * The stock API's envelope (contract.md §A): `{code, errMsg, uuid, data, t}`, `t` the server's
 * clock when it answered, in ms (anchored-reference.md §1 shows it on every answer).
 */
import fastJson from 'fast-json-stringify';
import type { AppError } from '../errors/app-error.ts';
import { STOCK_ERROR_STATUS, STOCK_OK_CODE } from '../errors/error-codes.ts';
import type { EnvelopeFormat } from '../http/envelope.ts';
import type { ProbeEnvelope } from '../http/probe-routes.ts';

export interface StockEnvelope<T> {
  code: number;
  errMsg: string;
  uuid: string;
  data?: T;
  t: number;
}

/** `t`: the wall clock, never a test's shifted one, so that a client can measure its skew from it. */
const serverTime = () => Date.now();

export function stockOk<T>(uuid: string, data: T): StockEnvelope<T> {
  return { code: STOCK_OK_CODE, errMsg: '', uuid, data, t: serverTime() };
}

/** `/healthz` and `/readyz` in this envelope; not ready answers code 503. */
export const stockProbeEnvelope: ProbeEnvelope = {
  ok: (uuid, data) => stockOk(uuid, data),
  notReady: (uuid, errMsg, data) => ({ code: 503, errMsg, uuid, data, t: serverTime() }),
};

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
  return '{"code":200,"errMsg":"","uuid":"' + uuid + '","data":' + dataJson + ',"t":' + serverTime() + '}';
}

export const stockEnvelope: EnvelopeFormat = {
  renderError(err: AppError, requestId: string) {
    const s = STOCK_ERROR_STATUS[err.code] ?? STOCK_ERROR_STATUS.INTERNAL;
    const errMsg = s.code === 401 ? 'Unauthorized' : s.code === 500 ? 'Internal server error' : err.message;
    const headers = err.code === 'RATE_LIMITED' ? { 'retry-after': String((err as AppError & { retryAfterSeconds?: number }).retryAfterSeconds ?? 60) } : undefined;
    // Facts such as a reverted transaction's hash ride along; never on the opaque 401 or a fault.
    const data = err.data !== undefined && s.code !== 401 && s.code !== 500 ? { data: err.data } : {};
    return { statusCode: s.http, body: { code: s.code, errMsg, uuid: requestId, ...data, t: serverTime() }, headers };
  },
};

/** The serializer Fastify would build for a response's `data` schema, for text rendered ahead. */
export function dataRenderer(schema: object): (data: unknown) => string {
  // One per schema object in the process: a sandbox's revert builds the routes again.
  let render = renderers.get(schema);
  if (!render) renderers.set(schema, (render = fastJson(schema as fastJson.Schema)));
  return render;
}
const renderers = new WeakMap<object, (data: unknown) => string>();
