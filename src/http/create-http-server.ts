/**
 * The HTTP machinery both APIs share: Fastify with a UUID v4 per request, one log line per request
 * carrying that uuid, every body kept as the bytes received for signature checks (decoded only after
 * authentication, see request-decoder.ts), a body size limit, schema validation without coercion
 * whose errors name the field, and every answer the server can shape in the API's envelope: route
 * and schema errors, unroutable URLs, malformed HTTP that Node refuses, and the drain while closing.
 * API-specific parts (routes, auth, envelope) are plugged in by the caller.
 *
 * Once the API registers a rate limit on the app (registerRateLimit), every refusal made here before
 * the API's own hooks could count the request (a body over the limit, a URL that does not decode,
 * malformed HTTP, an unknown path outside the API's scopes, ...) is counted against the client's
 * address and carries the X-RateLimit headers; past the limit it becomes the 429 refusal.
 */
import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { accessLoggerOf, type Logger } from '../lib/logger.ts';
import {
  AppError,
  NotFoundError,
  PayloadTooLargeError,
  RateLimitedError,
  ValidationError,
  isAppError,
} from '../errors/app-error.ts';
import type { EnvelopeFormat } from './envelope.ts';
import { addressBucket, rateLimitCounted, rateLimitedError, rateLimitHeaders, rateLimitOf, type RateLimitCheck } from './rate-limiter.ts';
import { PATTERN_REASONS } from './schema-patterns.ts';
import { sharedCompilersFactory } from './schema-compilers.ts';
import { peerTrust, type ApiTransport } from './tls-options.ts';
import { labelApp, metricsActive, recordAuthRefusal, recordHttpRequest } from '../observability/metrics-registry.ts';


export interface HttpServerOptions {
  logger: Logger;
  envelope: EnvelopeFormat;
  bodyLimitBytes: number;
  /** Peers whose forwarding headers are trusted; empty means the socket address is the client. */
  trustedProxies?: string[];
  /**
   * HTTPS, or plain HTTP that must have been HTTPS up to a trusted proxy (src/http/tls-options.ts).
   * Default: plain HTTP. The API builders pass what their role decided (apiTransportFor).
   */
  transport?: ApiTransport;
  /** The API's name in the metrics' `api` label (`stock`, `perp`). */
  api?: string;
}

/** A year, as the spec's deployments ask; sent only on answers that travelled over HTTPS. */
export const HSTS_VALUE = 'max-age=31536000';

/** Production behind trusted proxies: the refusal of a request that did not reach the proxy over HTTPS. */
export function httpsRequiredError(): AppError {
  return new AppError('VALIDATION', 'https required');
}

/** Per app: whether an upgrade (WebSocket) request may proceed, for the stream endpoints. */
const upgradeGuards = new WeakMap<object, (req: IncomingMessage) => AppError | undefined>();

/**
 * Why an upgrade request to `app` must be refused (production behind a proxy, not HTTPS), or
 * undefined. The streams call it before accepting a WebSocket.
 */
export function upgradeRefusalOf(app: FastifyInstance, req: IncomingMessage): AppError | undefined {
  return upgradeGuards.get(app)?.(req);
}

interface AjvError {
  instancePath?: string;
  keyword?: string;
  message?: string;
  params?: Record<string, unknown>;
  /** Present because Ajv runs with `verbose`: the schema holding the failed keyword. */
  parentSchema?: { pattern?: unknown };
}

/** Turns an Ajv error into `field: reason`, e.g. `notional: must match pattern ...`. */
export function validationFromAjv(errors: AjvError[], dataVar: string): ValidationError {
  const e = errors[0] ?? {};
  const base = (e.instancePath ?? '').replace(/^\//, '').replace(/\//g, '.');
  let field = base;
  let reason = e.message ?? 'is invalid';
  if (e.keyword === 'required' && typeof e.params?.missingProperty === 'string') {
    field = base ? `${base}.${e.params.missingProperty}` : e.params.missingProperty;
    reason = 'required';
  } else if (e.keyword === 'additionalProperties' && typeof e.params?.additionalProperty === 'string') {
    field = base ? `${base}.${e.params.additionalProperty}` : e.params.additionalProperty;
    reason = 'unknown field';
  } else if (e.keyword === 'enum' && Array.isArray(e.params?.allowedValues)) {
    reason = `must be one of ${(e.params.allowedValues as unknown[]).join(', ')}`;
  } else if (e.keyword === 'pattern' && typeof e.params?.pattern === 'string' && PATTERN_REASONS[e.params.pattern]) {
    reason = PATTERN_REASONS[e.params.pattern];
  } else if (e.keyword === 'type' && typeof e.parentSchema?.pattern === 'string' && PATTERN_REASONS[e.parentSchema.pattern]) {
    // A JSON number or array where a decimal string belongs reads as what the field must be.
    reason = PATTERN_REASONS[e.parentSchema.pattern];
  }
  return new ValidationError(field || (dataVar === 'body' ? 'body' : dataVar), reason);
}

function toAppError(err: FastifyError | Error): AppError {
  if (isAppError(err)) return err;
  const fe = err as FastifyError;
  switch (fe.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new PayloadTooLargeError(0, { cause: err });
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ValidationError('content-length', 'does not match the body', { cause: err });
    case 'FST_ERR_BAD_URL':
      return new ValidationError('url', 'is not a valid URL', { cause: err });
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new ValidationError('url', 'path parameter too long', { cause: err });
    default:
      break;
  }
  if (fe.statusCode === 429) return new RateLimitedError(60, { cause: err });
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    return new ValidationError('request', fe.message.replace(/^FST_\w+: /, ''), { cause: err });
  }
  return new AppError('INTERNAL', 'Internal server error', { cause: err });
}

/**
 * Whether the client has gone: its answer can no longer be delivered, and it is not a server fault.
 * A TCP connection reset by the client, before Node has read the reset, still looks open but can no
 * longer tell its peer address (while its own address is still known; a Unix socket knows neither).
 */
function socketGone(socket: Socket | null | undefined): boolean {
  return !socket || socket.destroyed || (socket.remoteAddress === undefined && socket.localAddress !== undefined);
}

/** The drain answer: a request that arrives on a kept-alive connection while the server closes. */
class ShuttingDownError extends AppError {
  constructor() {
    super('STORAGE_UNAVAILABLE', 'service: shutting down, try again', { retryable: true });
  }
}

/**
 * A whole HTTP/1.1 answer in the API's envelope for a connection Node refuses before Fastify sees
 * a request (malformed request line or headers, headers too large, a request that timed out). The
 * connection is closed afterwards, and the answer says so.
 */
export function renderRawAnswer(envelope: EnvelopeFormat, err: AppError, uuid: string, headers: Record<string, string> = {}): string {
  const r = envelope.renderError(err, uuid);
  const body = JSON.stringify(r.body);
  let head = `HTTP/1.1 ${r.statusCode} ${STATUS_CODES[r.statusCode] ?? ''}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n`;
  for (const [k, v] of Object.entries({ ...headers, ...r.headers })) head += `${k}: ${v}\r\n`;
  return `${head}\r\n${body}`;
}

function clientErrorOf(err: NodeJS.ErrnoException): AppError {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return new ValidationError('headers', 'too large', { cause: err });
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new ValidationError('request', 'not received in time', { cause: err });
    default:
      return new ValidationError('request', 'malformed HTTP', { cause: err });
  }
}

/** Large enough that no URL Node accepts (16 KiB of request line and headers) reaches the limit. */
const MAX_PARAM_LENGTH = 65_536;

const EMPTY = Buffer.alloc(0);

/** Requests Node handed to `checkExpectation` (an `Expect` other than 100-continue), refused in onRequest. */
const unmetExpectation = new WeakSet<IncomingMessage>();

/** Sockets whose malformed HTTP is being answered: Node may report the same one again meanwhile. */
const answering = new WeakSet<Socket>();

/** The refusal to send once the request is counted: itself, or the 429 when over the limit. */
interface CountedRefusal {
  err: AppError;
  headers?: Record<string, string>;
}

/**
 * Counts a refusal against `ip`. A store that does not answer leaves the refusal as it is, without
 * the headers: it is refused anyway, so nothing is waved through.
 */
async function countRefusal(check: RateLimitCheck, request: FastifyRequest | undefined, ip: string | undefined, err: AppError, logger: Logger, uuid: string): Promise<CountedRefusal> {
  try {
    const state = await check(request, addressBucket(ip));
    return { err: state.limited ? rateLimitedError(state) : err, headers: rateLimitHeaders(state) };
  } catch (cause) {
    logger.warn({ uuid, cause: describeCause((cause as AppError).cause ?? cause) }, 'rate limit store unavailable; refusal not counted');
    return { err };
  }
}

export function createHttpServer(opts: HttpServerOptions): FastifyInstance {
  const { logger, envelope, bodyLimitBytes } = opts;
  const transport = opts.transport ?? { requireHttps: false };
  const trusted = opts.trustedProxies && opts.trustedProxies.length > 0 ? opts.trustedProxies : undefined;

  const answer = (request: FastifyRequest, reply: FastifyReply, err: AppError) => {
    const rendered = envelope.renderError(err, request.id);
    if (rendered.headers) void reply.headers(rendered.headers);
    return reply.code(rendered.statusCode).send(rendered.body);
  };

  /**
   * Answers a refusal, counted first unless the API's hooks counted the request already (their
   * headers are on the reply then). A client that has gone is neither counted nor answered usefully.
   * Without a rate limit (or nothing to count) the answer goes out at once, without a promise.
   */
  const refuse = (request: FastifyRequest, reply: FastifyReply, err: AppError) => {
    const check = rateLimitOf(app);
    if (!check || rateLimitCounted(request) || socketGone(request.raw.socket)) return answer(request, reply, err);
    return countRefusal(check, request, request.ip, err, logger, request.id).then((counted) => {
      if (counted.headers) void reply.headers(counted.headers);
      return answer(request, reply, counted.err);
    });
  };

  // Fastify's own logger is off: it would build a child logger per request. We log once per
  // request ourselves, with the uuid as a field.
  const app = Fastify({
    logger: false,
    genReqId: () => randomUUID(),
    bodyLimit: bodyLimitBytes,
    trustProxy: trusted ?? false,
    ...(transport.https ? { https: transport.https } : {}),
    schemaErrorFormatter: (errors, dataVar) => validationFromAjv(errors as AjvError[], dataVar),
    // No coercion: a JSON number is never an amount, `["1"]` never a string. Query parameters are
    // text by nature; decodeJsonRequest turns the integer ones into numbers explicitly.
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, useDefaults: true, allErrors: false, verbose: true } },
    // Each schema compiled once per process, not once per server built (the sandbox's reverts build
    // the servers again in the process).
    schemaController: { compilersFactory: sharedCompilersFactory },
    // Route matching must not depend on a parameter's length: a long one would otherwise be refused
    // before authentication on a real route only, telling a stranger which routes exist. The route
    // schemas limit each parameter, after authentication.
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // The drain answer is ours (onRequest below), in the envelope.
    return503OnClosing: false,
    clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket) {
      // A reset connection or one already gone has nobody to answer.
      if (err.code === 'ECONNRESET' || socket.destroyed || answering.has(socket)) return;
      const uuid = randomUUID();
      logger.debug({ uuid, code: err.code }, 'malformed request refused');
      // As Node does: answer only when no response has started on this connection.
      const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
      if (!socket.writable || (inFlight && inFlight.headersSent)) {
        socket.destroy();
        return;
      }
      const check = rateLimitOf(app);
      if (!check) {
        socket.write(renderRawAnswer(envelope, clientErrorOf(err), uuid));
        socket.destroy();
        return;
      }
      // No request exists, so the socket's peer is the client counted (behind a trusted proxy, the
      // proxy: a bucket of these refusals alone, since its clients' requests count by their address).
      answering.add(socket);
      socket.pause();
      void countRefusal(check, undefined, socket.remoteAddress, clientErrorOf(err), logger, uuid).then((r) => {
        if (!socket.destroyed && socket.writable) socket.write(renderRawAnswer(envelope, r.err, uuid, r.headers));
        socket.destroy();
      });
    },
    // Errors found while routing (a URL that does not decode), before any route or hook applies.
    frameworkErrors(err, request, reply) {
      logger.debug({ uuid: request.id, code: (err as FastifyError).code }, 'unroutable request refused');
      return refuse(request, reply, toAppError(err));
    },
  }) as unknown as FastifyInstance;
  const api = opts.api ?? 'other';
  labelApp(app, api);

  // X-Forwarded-Proto counts only from a trusted peer, as Fastify's request.protocol reads it.
  const trustsPeer = peerTrust(trusted ?? []);
  const forwardedProto = (req: IncomingMessage): string | undefined => {
    const raw = req.headers['x-forwarded-proto'];
    const peer = req.socket?.remoteAddress;
    if (raw === undefined || !peer || !trustsPeer(peer)) return undefined;
    const last = (Array.isArray(raw) ? raw.join(',') : raw).split(',').pop();
    return last?.trim().toLowerCase();
  };
  const protocolOf = (req: IncomingMessage): string => forwardedProto(req) ?? ((req.socket as (Socket & { encrypted?: boolean }) | null)?.encrypted ? 'https' : 'http');
  if (transport.requireHttps) {
    upgradeGuards.set(app, (req) => (protocolOf(req) === 'https' ? undefined : httpsRequiredError()));
  }
  if (transport.https) {
    // A client speaking plain HTTP (or garbage) to the TLS port: its connection is closed, the server stays.
    app.server.on('tlsClientError', (err: NodeJS.ErrnoException) => logger.debug({ code: err.code }, 'TLS handshake refused'));
  }
  // HTTPS answers tell browsers to keep to HTTPS: ours, or a trusted proxy's in front of us.
  if (transport.https || trusted) {
    app.addHook('onSend', (request, reply, payload, done) => {
      if (protocolOf(request.raw) === 'https') void reply.header('strict-transport-security', HSTS_VALUE);
      done(null, payload);
    });
  }

  app.decorateRequest('rawBody', null as unknown as Buffer);
  app.decorateRequest('bodyContentType', null);

  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });

  // Reading the peer address keeps it: Node remembers it on the socket, and once the client has
  // reset the connection (during an uncached key lookup, say) the socket can no longer tell it,
  // which made `request.ip` undefined in the auth hook. Read as early as possible, on accept...
  app.server.on('connection', (socket: Socket) => void socket.remoteAddress);

  // An `Expect` other than 100-continue: Node would answer 417 with an empty body by itself. Handed
  // to Fastify as a request instead, refused in onRequest like any other refusal (uuid, log line,
  // rate limit).
  app.server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    unmetExpectation.add(req);
    app.server.emit('request', req, res);
  });

  app.addHook('onRequest', (request, reply, done) => {
    // ...and a request whose peer cannot be told any more comes from a client that has gone: it is
    // dropped here, before any hook relies on its address.
    if (socketGone(request.raw.socket)) {
      request.raw.socket?.destroy();
      return done(new ValidationError('request', 'the client closed the connection'));
    }
    request.rawBody = EMPTY;
    if (transport.requireHttps && protocolOf(request.raw) !== 'https') return done(httpsRequiredError());
    if (unmetExpectation.has(request.raw)) {
      // Whatever body follows is not read: the connection cannot carry another request.
      void reply.header('connection', 'close');
      return done(new ValidationError('expect', 'only 100-continue is supported'));
    }
    // Fastify picks a parser by Content-Type and refuses an unknown or malformed one (415) before
    // any hook that authenticates. Taking the header out sends every body to the one parser below,
    // which only keeps the bytes; decodeJsonRequest judges the type after authentication.
    const type = request.headers['content-type'];
    if (type !== undefined) {
      request.bodyContentType = type;
      request.headers['content-type'] = undefined;
    }
    if (closing) {
      void reply.header('connection', 'close');
      return done(new ShuttingDownError());
    }
    done();
  });

  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (request, body, done) => {
    request.rawBody = body as Buffer;
    done(null, undefined);
  });

  app.setNotFoundHandler((request, reply) => refuse(request, reply, new NotFoundError('route')));

  app.setErrorHandler((err, request, reply) => {
    let appErr = toAppError(err as FastifyError);
    if (appErr instanceof PayloadTooLargeError) appErr = new PayloadTooLargeError(bodyLimitBytes);
    const uuid = request.id;
    if (socketGone(request.raw.socket)) {
      // Whatever failed, the client left first (for instance while its key was looked up): not a
      // fault of the server, and there is nobody to answer.
      logger.debug({ uuid, code: appErr.code }, 'client closed the connection before the answer');
    } else if (appErr instanceof ShuttingDownError) {
      logger.debug({ uuid }, 'request refused while closing');
    } else if (appErr.code === 'INTERNAL') {
      logger.error({ uuid, err }, 'request failed');
    } else if (appErr.code === 'UNAUTHORIZED') {
      // The cause is logged here, under the request's uuid, and nowhere in the response.
      logger.warn({ uuid, reason: (appErr as AppError & { reason?: string }).reason }, 'authentication failed');
      recordAuthRefusal(api, 'http', appErr);
    } else if (appErr.code === 'FORBIDDEN') {
      recordAuthRefusal(api, 'http', appErr);
    } else if (appErr.code === 'CHAIN_UNAVAILABLE' || appErr.code === 'STORAGE_UNAVAILABLE') {
      logger.warn({ uuid, code: appErr.code, cause: describeCause(appErr.cause) }, 'dependency unavailable');
    }
    // A body that was not read to its end leaves the connection unusable for another request.
    if (appErr.code === 'PAYLOAD_TOO_LARGE') void reply.header('connection', 'close');
    return refuse(request, reply, appErr);
  });

  // One line per request, through pino like every other line, with fixed scalar fields only.
  const access = accessLoggerOf(logger);
  app.addHook('onResponse', (request, reply, done) => {
    const ms = reply.elapsedTime;
    access.info({ uuid: request.id, method: request.method, url: request.url, status: reply.statusCode, ms: Math.round(ms * 100) / 100 }, 'request');
    if (metricsActive()) recordHttpRequest(app, request.method, request.routeOptions.url, reply.statusCode, ms);
    done();
  });

  return app;
}

/**
 * A short description of an upstream failure for the log. URLs are dropped because hosted RPC and
 * database URLs often carry credentials.
 */
function describeCause(cause: unknown): string | undefined {
  if (!cause) return undefined;
  const text = cause instanceof Error ? `${cause.name}: ${cause.message.split('\n')[0]}` : String(cause);
  return text.replace(/[a-z][a-z0-9+.-]*:\/\/\S+/gi, '[url]').slice(0, 300);
}
