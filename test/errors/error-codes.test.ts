import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  AppError,
  ChainRevertError,
  ChainUnavailableError,
  ConflictError,
  ForbiddenError,
  NotFoundError,
  PayloadTooLargeError,
  RateLimitedError,
  RejectedError,
  StorageUnavailableError,
  UnauthorizedError,
  ValidationError,
} from '../../src/errors/app-error.ts';
import { PERP_ERROR_CODES, perpErrorOf } from '../../src/perp/perp-error-codes.ts';
import { perpEnvelope, perpOk } from '../../src/perp/perp-envelope.ts';
import { stockEnvelope, stockOk } from '../../src/stock/stock-envelope.ts';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..');
const ID = '0b7c9e4e-1f0a-4c61-9a51-8f3f1d2e7a10';

describe('perp error codes', () => {
  it('are unique, in their category\'s range, and use only the HTTP statuses the spec lists, with 503 for an unavailable dependency', () => {
    const entries = Object.values(PERP_ERROR_CODES);
    expect(new Set(entries.map((e) => e.code)).size).toBe(entries.length);
    const range: Record<string, [number, number, number]> = {
      parameter: [10000, 10999, 400],
      authentication: [20000, 20999, 401],
      permission: [30000, 30999, 403],
      'not found': [40000, 40999, 404],
      'rate limit': [42900, 42999, 429],
      server: [50000, 50999, 500],
      trading: [51000, 52999, 400],
    };
    // A dependency that does not answer (the chain, the database, Redis) is a 503 the client retries,
    // not the spec's 500 "internal server error": nothing is wrong with the request or the server.
    // So is `/readyz` naming a stale role (Kubernetes' readiness convention).
    const unavailable = new Set([50001, 50002, 50003]);
    for (const e of entries) {
      const [lo, hi, http] = range[e.category];
      expect(e.code, e.meaning).toBeGreaterThanOrEqual(lo);
      expect(e.code, e.meaning).toBeLessThanOrEqual(hi);
      expect(e.http, e.meaning).toBe(unavailable.has(e.code) ? 503 : http);
    }
  });

  it('are the table docs/perp-api.md prints, row for row', () => {
    const doc = fs.readFileSync(path.join(ROOT, 'docs/perp-api.md'), 'utf8');
    const rows = doc
      .split('\n')
      .filter((l) => /^\| \d+ \|/.test(l))
      .map((l) => l.slice(2, -2).split(' | '));
    expect(rows).toEqual(Object.entries(PERP_ERROR_CODES).map(([name, e]) => [String(e.code), String(e.http), e.category, `\`${name}\``, e.meaning]));
  });

  it('map every error of the hierarchy', () => {
    const cases: Array<[AppError, number, number]> = [
      [new ValidationError('size', 'must be a decimal string'), 400, 10000],
      [new PayloadTooLargeError(65536), 400, 10001],
      [new ConflictError('clientOrderId: in use'), 400, 10002],
      [new UnauthorizedError('no headers'), 401, 20001],
      [new UnauthorizedError('unknown key', { failure: 'key' }), 401, 20002],
      [new UnauthorizedError('expired', { failure: 'expired' }), 401, 20003],
      [new UnauthorizedError('ip', { failure: 'ip' }), 401, 20004],
      [new UnauthorizedError('ts', { failure: 'timestamp' }), 401, 20005],
      [new UnauthorizedError('sig', { failure: 'signature' }), 401, 20006],
      [new UnauthorizedError('again', { failure: 'replay' }), 401, 20007],
      [new UnauthorizedError('chain', { failure: 'scope' }), 401, 20008],
      [new ForbiddenError('TRADE permission required'), 403, 30001],
      [new NotFoundError('liquidity'), 404, 40000],
      [new NotFoundError('route'), 404, 40001],
      [new NotFoundError('symbol'), 404, 40002],
      [new NotFoundError('order'), 404, 40003],
      [new NotFoundError('position'), 404, 40004],
      [new NotFoundError('apiKey'), 404, 40005],
      [new RateLimitedError(12), 429, 42900],
      [new AppError('INTERNAL', 'boom'), 500, 50000],
      [new ChainUnavailableError(), 503, 50001],
      [new StorageUnavailableError(), 503, 50002],
      [new RejectedError('INSUFFICIENT_MARGIN', 'margin: needs 10 more'), 400, 51001],
      [new RejectedError('POST_ONLY_WOULD_CROSS', 'post-only order would cross'), 400, 51003],
      [new RejectedError('REDUCE_ONLY_WOULD_INCREASE', 'reduce-only would increase'), 400, 51004],
      [new ChainRevertError('InsufficientBalance'), 400, 52001],
    ];
    for (const [err, http, code] of cases) expect(perpErrorOf(err), err.message).toMatchObject({ http, code });
  });
});

describe('perp envelope', () => {
  it('wraps success as {code: 0, msg: "ok", data, requestId}, with blockInfo when given', () => {
    expect(perpOk(ID, { serverTime: 1 })).toEqual({ code: 0, msg: 'ok', data: { serverTime: 1 }, requestId: ID });
    const blockInfo = { number: '12', hash: `0x${'ab'.repeat(32)}`, timestamp: 1_700_000_000_000 };
    expect(perpOk(ID, [], blockInfo)).toEqual({ code: 0, msg: 'ok', data: [], requestId: ID, blockInfo });
  });

  it('renders errors with the table\'s status and code, and never an internal message', () => {
    expect(perpEnvelope.renderError(new ValidationError('size', 'must be a decimal string'), ID)).toEqual({
      statusCode: 400,
      body: { code: 10000, msg: 'size: must be a decimal string', data: { field: 'size' }, requestId: ID },
      headers: undefined,
    });
    expect(perpEnvelope.renderError(new ForbiddenError('TRADE permission required'), ID)).toEqual({
      statusCode: 403,
      body: { code: 30001, msg: 'TRADE permission required', data: {}, requestId: ID },
      headers: undefined,
    });
    expect(perpEnvelope.renderError(new UnauthorizedError('signature over abc', { failure: 'signature' }), ID).body).toEqual({ code: 20006, msg: 'Unauthorized', data: {}, requestId: ID });
    // A public message is answered only where the failure is a signature's and the error carries one.
    expect(perpEnvelope.renderError(new UnauthorizedError('signature over abc', { failure: 'signature', publicMessage: 'sign X' }), ID).body).toEqual({ code: 20006, msg: 'sign X', data: {}, requestId: ID });
    expect(perpEnvelope.renderError(new UnauthorizedError('key k', { failure: 'key', publicMessage: 'sign X' }), ID).body).toEqual({ code: 20002, msg: 'Unauthorized', data: {}, requestId: ID });
    expect(perpEnvelope.renderError(new AppError('INTERNAL', 'db password wrong at line 3'), ID).body).toEqual({ code: 50000, msg: 'Internal server error', data: {}, requestId: ID });
    expect(perpEnvelope.renderError(new RateLimitedError(7), ID)).toMatchObject({ statusCode: 429, body: { code: 42900 }, headers: { 'retry-after': '7' } });
  });
});

describe('stock envelope codes', () => {
  it('keep their values: 401 opaque for authentication and permission, the HTTP status otherwise', () => {
    const render = (e: AppError) => {
      const r = stockEnvelope.renderError(e, ID);
      return [r.statusCode, (r.body as { code: number }).code, (r.body as { errMsg: string }).errMsg];
    };
    expect(stockOk(ID, 1)).toEqual({ code: 200, errMsg: '', uuid: ID, data: 1, t: expect.any(Number) });
    expect(render(new ValidationError('notional', 'required for a market buy'))).toEqual([400, 400, 'notional: required for a market buy']);
    expect(render(new UnauthorizedError('signature mismatch', { failure: 'signature' }))).toEqual([400, 401, 'Unauthorized']);
    expect(render(new ForbiddenError('READ_ONLY key'))).toEqual([400, 401, 'Unauthorized']);
    expect(render(new NotFoundError('order'))).toEqual([404, 404, 'order: not found']);
    expect(render(new ConflictError('x: busy'))).toEqual([409, 409, 'x: busy']);
    expect(render(new PayloadTooLargeError(65536))).toEqual([413, 413, 'body: larger than 65536 bytes']);
    expect(render(new RateLimitedError(3))).toEqual([429, 429, 'Too many requests']);
    expect(render(new RejectedError('ORDER_NOT_OPEN', 'orderId: order is not open'))).toEqual([400, 400, 'orderId: order is not open']);
    expect(render(new ChainUnavailableError())).toEqual([503, 503, 'chain: RPC unavailable, try again later']);
    expect(render(new StorageUnavailableError())).toEqual([503, 503, 'storage: unavailable, try again later']);
    expect(render(new AppError('INTERNAL', 'secret detail'))).toEqual([500, 500, 'Internal server error']);
  });
});
