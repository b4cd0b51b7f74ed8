/**
 * The shared HTTP layer on its own, with a test API in the stock envelope: an auth hook that checks
 * an HMAC over the raw bytes (as the APIs' hooks do), decodeJsonRequest after it, and routes with
 * body, query and path schemas. What it shows holds for every API built on the layer.
 */
import { createHmac } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UnauthorizedError } from '../../src/errors/app-error.ts';
import { createHttpServer } from '../../src/http/create-http-server.ts';
import { decodeJsonRequest } from '../../src/http/request-decoder.ts';
import { integerFromText, isJsonUtf8, parseJsonBytes } from '../../src/http/request-decoder.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { stockEnvelope } from '../../src/stock/stock-envelope.ts';
import { send, sendRaw, UUID_V4, type RawAnswer } from './raw-http.ts';

const SECRET = 'test-secret';
const sign = (method: string, path: string, body: Uint8Array) =>
  createHmac('sha256', SECRET).update(Buffer.concat([Buffer.from(`${method}\n${path}\n`), body])).digest('hex');

let app: FastifyInstance;
let base: string;
const logs: Array<Record<string, unknown>> = [];
/** Resolves the pending /slow request's hook, which waits for the test. */
let releaseSlow: (() => void) | undefined;
/** What /abort's hook saw once the client had gone. */
let abortSeen: { ip: string | undefined; destroyed: boolean } | undefined;
let abortDone: (() => void) | undefined;
let abortArrived: (() => void) | undefined;

function auth(request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void {
  const given = request.headers['x-test-sign'];
  const path = (request.raw.url ?? '/').split('?')[0];
  if (typeof given !== 'string' || given !== sign(request.method, path, request.rawBody)) return done(new UnauthorizedError('bad test signature'));
  done();
}

beforeAll(async () => {
  const destination = new Writable({
    write(chunk, _enc, cb) {
      for (const l of String(chunk).split('\n').filter(Boolean)) logs.push(JSON.parse(l) as Record<string, unknown>);
      cb();
    },
  });
  app = createHttpServer({ logger: createLogger({ level: 'debug', destination }), envelope: stockEnvelope, bodyLimitBytes: 1024 });
  await app.register(
    async (api) => {
      api.addHook('preValidation', auth);
      api.addHook('preValidation', decodeJsonRequest);
      api.setNotFoundHandler(async () => {
        throw new (await import('../../src/errors/app-error.ts')).NotFoundError('route');
      });
      api.post(
        '/echo',
        {
          schema: {
            body: {
              type: 'object',
              additionalProperties: false,
              required: ['amount'],
              properties: { amount: { type: 'string', pattern: '^(0|[1-9][0-9]*)(\\.[0-9]+)?$' }, n: { type: 'integer' }, note: { type: 'string' } },
            },
          },
        },
        async (req) => ({ code: 200, errMsg: '', uuid: req.id, data: { body: req.body, raw: req.rawBody.toString('hex') } }),
      );
      api.get(
        '/list',
        { schema: { querystring: { type: 'object', properties: { page: { type: 'integer', maximum: 1000 }, limit: { type: 'integer' }, q: { type: 'string' } } } } },
        async (req) => ({ code: 200, errMsg: '', uuid: req.id, data: req.query }),
      );
      api.get(
        '/items/:id',
        { schema: { params: { type: 'object', properties: { id: { type: 'string', maxLength: 8 } } } } },
        async (req) => ({ code: 200, errMsg: '', uuid: req.id, data: req.params }),
      );
      api.get('/slow', async (req) => {
        await new Promise<void>((r) => (releaseSlow = r));
        return { code: 200, errMsg: '', uuid: req.id, data: 'slow' };
      });
      api.get(
        '/abort',
        {
          preHandler: (request, _reply, done) => {
            // Waits until the client has gone, then reads the peer address as an auth hook would.
            const gone = () => {
              abortSeen = { ip: request.ip, destroyed: request.raw.socket.destroyed };
              abortDone?.();
              // What an unlucky hook does with a peer address it cannot read.
              done(new Error(`client gone, peer ${request.ip.trim()}`));
            };
            if (request.raw.socket.destroyed) gone();
            else request.raw.socket.once('close', gone);
            abortArrived?.();
          },
        },
        async () => 'unreachable',
      );
    },
    { prefix: '/api' },
  );
  await app.listen({ host: '127.0.0.1', port: 0 });
  const addr = app.server.address() as net.AddressInfo;
  base = `http://127.0.0.1:${addr.port}`;
});

afterAll(async () => {
  releaseSlow?.();
  await app?.close();
});

function signedPost(path: string, body: Uint8Array | string, headers: Record<string, string> = {}) {
  const bytes = typeof body === 'string' ? Buffer.from(body) : Buffer.from(body);
  return send(base, { method: 'POST', target: path, headers: { 'x-test-sign': sign('POST', path, bytes), ...headers }, body: bytes });
}

function expectEnvelope(r: RawAnswer, status: number, code: number, errMsg: string) {
  expect({ status: r.status, code: r.json?.code, errMsg: r.json?.errMsg }).toEqual({ status, code, errMsg });
  expect(Object.keys(r.json!).sort()).toEqual(['code', 'errMsg', 't', 'uuid']);
  expect(typeof r.json!.t).toBe('number');
  expect(r.json!.uuid).toMatch(UUID_V4);
  expect(r.headers['content-type']).toMatch(/^application\/json/);
}

describe('body bytes and decoding', () => {
  it('keeps the exact bytes for every content type, and signs over them', async () => {
    const body = '{"amount":"1.5","note":"µ"}';
    const r = await signedPost('/api/echo', body, { 'content-type': 'application/json' });
    expect(r.status).toBe(200);
    expect(r.json!.data).toEqual({ body: { amount: '1.5', note: 'µ' }, raw: Buffer.from(body).toString('hex') });
    // Same bytes, other declared types: authenticated over the bytes, then refused by type.
    for (const type of ['text/plain', 'application/octet-stream', 'application/json; charset=utf-16', 'application/json; charset=latin1', 'application/x-www-form-urlencoded', 'garbage//type']) {
      expectEnvelope(await signedPost('/api/echo', body, { 'content-type': type }), 400, 400, 'content-type: must be application/json (charset utf-8)');
    }
    expectEnvelope(await signedPost('/api/echo', body), 400, 400, 'content-type: must be application/json (charset utf-8)');
    expect((await signedPost('/api/echo', body, { 'content-type': 'Application/JSON; Charset="UTF-8"' })).status).toBe(200);
  });

  it('signed over the empty string, a text/plain body no longer authenticates', async () => {
    const r = await send(base, { method: 'POST', target: '/api/echo', headers: { 'x-test-sign': sign('POST', '/api/echo', Buffer.alloc(0)), 'content-type': 'text/plain' }, body: '{"amount":"1"}' });
    expectEnvelope(r, 400, 401, 'Unauthorized');
  });

  it('refuses invalid UTF-8, invalid JSON and __proto__ after authentication, and only then', async () => {
    const invalidUtf8 = Buffer.concat([Buffer.from('{"amount":"1","note":"'), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('"}')]);
    const json = { 'content-type': 'application/json' };
    expectEnvelope(await signedPost('/api/echo', invalidUtf8, json), 400, 400, 'body: is not valid UTF-8');
    expectEnvelope(await signedPost('/api/echo', '{"amount":', json), 400, 400, 'body: is not valid JSON');
    expectEnvelope(await signedPost('/api/echo', '{"amount":"1","\\u005f_proto__":{"x":1}}', json), 400, 400, 'body: must not contain a __proto__ key');
    // Unauthenticated, the same bodies learn nothing but the opaque 401, on a route or not.
    for (const target of ['/api/echo', '/api/nothing-here']) {
      for (const body of [invalidUtf8, Buffer.from('{"amount":'), Buffer.from('not json')]) {
        expectEnvelope(await send(base, { method: 'POST', target, headers: json, body }), 400, 401, 'Unauthorized');
      }
    }
  });

  it('does not coerce: a number, an exponent or an array is not a decimal string', async () => {
    const json = { 'content-type': 'application/json' };
    const reason = 'must be a decimal string like "12.5" (no sign, exponent or spaces)';
    for (const amount of ['9007199254740993', '1e3', '["1"]', 'true', 'null', '{"a":"1"}']) {
      expectEnvelope(await signedPost('/api/echo', `{"amount":${amount}}`, json), 400, 400, `amount: ${reason}`);
    }
    expectEnvelope(await signedPost('/api/echo', '{"amount":"1","n":"5"}', json), 400, 400, 'n: must be integer');
    expectEnvelope(await signedPost('/api/echo', '{"amount":"1e3"}', json), 400, 400, `amount: ${reason}`);
  });

  it('refuses a body on GET rather than ignoring bytes the signature did not cover', async () => {
    const r = await send(base, { method: 'GET', target: '/api/list', headers: { 'x-test-sign': sign('GET', '/api/list', Buffer.alloc(0)) }, body: '{"x":1}' });
    expectEnvelope(r, 400, 400, 'body: not allowed on GET');
  });

  it('answers a body over the limit with 413 in the envelope and closes the connection', async () => {
    const r = await signedPost('/api/echo', `{"amount":"1","note":"${'x'.repeat(2000)}"}`, { 'content-type': 'application/json' });
    expectEnvelope(r, 413, 413, 'body: larger than 1024 bytes');
    expect(r.headers.connection).toBe('close');
  });
});

describe('query integers', () => {
  const get = (target: string) => send(base, { method: 'GET', target, headers: { 'x-test-sign': sign('GET', target.split('?')[0], Buffer.alloc(0)) } });

  it('parses integer parameters exactly and leaves the rest to the schema', async () => {
    expect((await get('/api/list?page=2&limit=-5&q=7')).json!.data).toEqual({ page: 2, limit: -5, q: '7' });
    expect((await get('/api/list?limit=99999999999999999999')).json!.data).toEqual({ limit: Number.MAX_SAFE_INTEGER });
    expectEnvelope(await get('/api/list?page=1e3'), 400, 400, 'page: must be integer');
    expectEnvelope(await get('/api/list?page=1.5'), 400, 400, 'page: must be integer');
    expectEnvelope(await get('/api/list?page=%201'), 400, 400, 'page: must be integer');
    expectEnvelope(await get('/api/list?page=1&page=2'), 400, 400, 'page: must be integer');
    expectEnvelope(await get('/api/list?page=99999999999999999999'), 400, 400, 'page: must be <= 1000');
  });

  it('turns text into numbers only when it is an integer in digits', () => {
    expect(['0', '-0', '42', '-42', '0042', '9007199254740991'].map(integerFromText)).toEqual([0, -0, 42, -42, 42, 9007199254740991]);
    expect(['', '1e3', '0x10', '1.0', ' 1', '1 ', '+1', 'Infinity', 'NaN', '١'].map(integerFromText)).toEqual(['', '1e3', '0x10', '1.0', ' 1', '1 ', '+1', 'Infinity', 'NaN', '١']);
    expect(integerFromText('-99999999999999999999')).toBe(-Number.MAX_SAFE_INTEGER);
  });
});

describe('content types and bytes', () => {
  it('accepts application/json with or without charset utf-8 only', () => {
    expect(['application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON;CHARSET=UTF8', 'application/json; charset="utf-8"'].map(isJsonUtf8)).toEqual([true, true, true, true]);
    expect(['application/json; charset=utf-16', 'application/json; boundary=x', 'application/jsonx', 'text/json', 'application/json; charset'].map(isJsonUtf8)).toEqual([false, false, false, false, false]);
  });

  it('decodes UTF-8 strictly', () => {
    expect(parseJsonBytes(Buffer.from('{"a":"é"}'))).toEqual({ a: 'é' });
    expect(() => parseJsonBytes(Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x7d]))).toThrow('body: is not valid UTF-8');
  });
});

describe('route matching before authentication', () => {
  it('answers a long path parameter exactly as an unknown route: opaque 401, then the schema', async () => {
    const long = 'x'.repeat(300);
    expectEnvelope(await send(base, { method: 'GET', target: `/api/items/${long}` }), 400, 401, 'Unauthorized');
    expectEnvelope(await send(base, { method: 'GET', target: `/api/nothing/${long}` }), 400, 401, 'Unauthorized');
    const target = `/api/items/${long}`;
    const r = await send(base, { method: 'GET', target, headers: { 'x-test-sign': sign('GET', target, Buffer.alloc(0)) } });
    expectEnvelope(r, 400, 400, 'id: must NOT have more than 8 characters');
  });

  it('answers a URL that does not decode in the envelope', async () => {
    for (const target of ['/api/items/%E0%A4%A', '/api/nothing/%ZZ', '/%']) {
      const r = await send(base, { method: 'GET', target });
      expect(r.json, target).toBeDefined();
      expect(r.json!.uuid).toMatch(UUID_V4);
      expect(r.status).toBeLessThan(500);
    }
  });
});

describe('answers Node would write itself', () => {
  const host = () => new URL(base).host;

  it('malformed HTTP: 400 in the envelope, Connection: close', async () => {
    for (const bytes of [
      `GET /api/list HTTP/1.1\r\nHost: ${host()}\r\nbad header line\r\n\r\n`,
      `G@T /api/list HTTP/1.1\r\nHost: ${host()}\r\n\r\n`,
      `GET /api/list HTTP/9.9\r\nHost: ${host()}\r\n\r\n`,
      `POST /api/echo HTTP/1.1\r\nHost: ${host()}\r\ncontent-length: 5\r\ntransfer-encoding: chunked\r\n\r\n`,
    ]) {
      const r = await sendRaw(base, Buffer.from(bytes, 'latin1'));
      expectEnvelope(r, 400, 400, 'request: malformed HTTP');
      expect(r.headers.connection).toBe('close');
    }
  });

  it('an Expect header Node does not support: 400 in the envelope instead of an empty 417', async () => {
    const r = await send(base, { method: 'GET', target: '/api/list', headers: { expect: 'something-else' } });
    expectEnvelope(r, 400, 400, 'expect: only 100-continue is supported');
    expect(r.headers.connection).toBe('close');
  });

  it('headers over Node\'s limit: the envelope, Connection: close', async () => {
    const r = await sendRaw(base, Buffer.from(`GET /api/list HTTP/1.1\r\nHost: ${host()}\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`, 'latin1'));
    expectEnvelope(r, 400, 400, 'headers: too large');
    expect(r.headers.connection).toBe('close');
  });
});

describe('a client that leaves during a hook', () => {
  it('still has its peer address, and what fails then is not logged as an error', async () => {
    const seen = new Promise<void>((r) => (abortDone = r));
    const arrived = new Promise<void>((r) => (abortArrived = r));
    const socket = net.connect({ host: '127.0.0.1', port: Number(new URL(base).port) });
    await new Promise<void>((r) => socket.once('connect', () => r()));
    socket.write(`GET /api/abort HTTP/1.1\r\nHost: x\r\nx-test-sign: ${sign('GET', '/api/abort', Buffer.alloc(0))}\r\n\r\n`);
    // Once the server is handling the request, the client resets the connection.
    await arrived;
    socket.resetAndDestroy();
    await seen;
    // The error handler runs right after the hook's done(); a macrotask later it has logged.
    await new Promise((r) => setImmediate(r));
    expect(abortSeen).toEqual({ ip: '127.0.0.1', destroyed: true });
    expect(logs.filter((l) => (l.level as number) >= 50)).toEqual([]);
    expect(logs.some((l) => l.msg === 'client closed the connection before the answer')).toBe(true);
  });
});

describe('a Unix socket', () => {
  it('serves requests although its peers have no address', async () => {
    const own = createHttpServer({ logger: createLogger({ level: 'silent' }), envelope: stockEnvelope, bodyLimitBytes: 1024 });
    own.get('/ok', async (req) => ({ code: 200, errMsg: '', uuid: req.id, data: 'ok' }));
    const socketPath = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'tokex-http-')), 'api.sock');
    await own.listen({ path: socketPath });
    try {
      const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = http.request({ socketPath, path: '/ok' }, (res) => {
          let body = '';
          res.on('data', (c) => (body += String(c)));
          res.on('end', () => resolve({ status: res.statusCode!, body }));
        });
        req.on('error', reject);
        req.end();
      });
      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.body)).toMatchObject({ code: 200, data: 'ok' });
    } finally {
      await own.close();
    }
  });
});

describe('closing', () => {
  it('answers a request that arrives while the server drains with 503 in the envelope, Connection: close', async () => {
    const own = createHttpServer({ logger: createLogger({ level: 'silent' }), envelope: stockEnvelope, bodyLimitBytes: 1024 });
    let release!: () => void;
    let started!: () => void;
    const inFlight = new Promise<void>((r) => (started = r));
    own.get('/slow', async () => {
      started();
      await new Promise<void>((r) => (release = r));
      return { ok: true };
    });
    own.get('/fast', async () => ({ ok: true }));
    let draining!: () => void;
    const drainStarted = new Promise<void>((r) => (draining = r));
    // Runs after the layer's own preClose hook, which marks the drain.
    own.addHook('preClose', (done) => {
      draining();
      done();
    });
    await own.listen({ host: '127.0.0.1', port: 0 });
    const port = (own.server.address() as net.AddressInfo).port;
    // A keep-alive connection busy with a request when the server starts closing stays open; a
    // second request on it arrives during the drain.
    const socket = net.connect({ host: '127.0.0.1', port });
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    const ended = new Promise<void>((r) => socket.on('close', () => r()));
    socket.write('GET /slow HTTP/1.1\r\nHost: x\r\n\r\n');
    await inFlight;
    const closed = own.close();
    await drainStarted;
    socket.write('GET /fast HTTP/1.1\r\nHost: x\r\n\r\n');
    release();
    await ended;
    await closed;
    const text = Buffer.concat(chunks).toString('utf8');
    const second = text.slice(text.indexOf('HTTP/1.1', 10));
    expect(second.split('\r\n')[0]).toBe('HTTP/1.1 503 Service Unavailable');
    expect(second.toLowerCase()).toContain('connection: close');
    const body = JSON.parse(second.slice(second.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>;
    expect(body).toMatchObject({ code: 503, errMsg: 'service: shutting down, try again' });
    expect(body.uuid).toMatch(UUID_V4);
  });
});
