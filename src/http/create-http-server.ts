/**
 * The HTTP machinery both APIs share: Fastify with a UUID v4 per request, one log line per request
 * carrying that uuid, JSON bodies kept raw for signature checks, a body size limit, schema
 * validation errors that name the field, and one error handler that renders typed errors in the
 * API's envelope. API-specific parts (routes, auth, envelope) are plugged in by the caller.
 */
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyError, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { createAccessLogger } from '../lib/logger.ts';
import {
  AppError,
  NotFoundError,
  PayloadTooLargeError,
  RateLimitedError,
  ValidationError,
  isAppError,
} from '../errors/app-error.ts';
import type { EnvelopeFormat } from './envelope.ts';
import { PATTERN_REASONS } from './schema-patterns.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The body exactly as received ('' when there was none): what request signatures cover. */
    rawBody: string;
  }
}

export interface HttpServerOptions {
  logger: Logger;
  envelope: EnvelopeFormat;
  bodyLimitBytes: number;
  /** Peers whose forwarding headers are trusted; empty means the socket address is the client. */
  trustedProxies?: string[];
}

interface AjvError {
  instancePath?: string;
  keyword?: string;
  message?: string;
  params?: Record<string, unknown>;
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
  }
  return new ValidationError(field || (dataVar === 'body' ? 'body' : dataVar), reason);
}

function toAppError(err: FastifyError | Error): AppError {
  if (isAppError(err)) return err;
  const fe = err as FastifyError;
  switch (fe.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new PayloadTooLargeError(0, { cause: err });
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ValidationError('content-type', 'must be application/json', { cause: err });
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ValidationError('body', 'must not be empty when content-type is application/json', { cause: err });
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ValidationError('content-length', 'does not match the body', { cause: err });
    default:
      break;
  }
  if (fe.statusCode === 429) return new RateLimitedError(60, { cause: err });
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    return new ValidationError('request', fe.message.replace(/^FST_\w+: /, ''), { cause: err });
  }
  return new AppError('INTERNAL', 'Internal server error', { cause: err });
}

export function createHttpServer(opts: HttpServerOptions): FastifyInstance {
  const { logger, envelope, bodyLimitBytes } = opts;
  // Fastify's own logger is off: it would build a child logger per request, which costs more than
  // the whole signature check. We log once per request ourselves, with the uuid as a field.
  const app = Fastify({
    logger: false,
    genReqId: () => randomUUID(),
    bodyLimit: bodyLimitBytes,
    trustProxy: opts.trustedProxies && opts.trustedProxies.length > 0 ? opts.trustedProxies : false,
    schemaErrorFormatter: (errors, dataVar) => validationFromAjv(errors as AjvError[], dataVar),
    ajv: { customOptions: { removeAdditional: false, coerceTypes: 'array', useDefaults: true, allErrors: false } },
    return503OnClosing: true,
  }) as unknown as FastifyInstance;

  app.decorateRequest('rawBody', '');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string;
    request.rawBody = text;
    if (text.length === 0) return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch (cause) {
      done(new ValidationError('body', 'is not valid JSON', { cause }), undefined);
    }
  });

  app.setNotFoundHandler((request, reply) => {
    const { statusCode, body } = envelope.renderError(new NotFoundError('route'), request.id);
    return reply.code(statusCode).send(body);
  });

  app.setErrorHandler((err, request, reply) => {
    let appErr = toAppError(err as FastifyError);
    if (appErr instanceof PayloadTooLargeError) appErr = new PayloadTooLargeError(bodyLimitBytes);
    const uuid = request.id;
    if (appErr.code === 'INTERNAL') {
      logger.error({ uuid, err }, 'request failed');
    } else if (appErr.code === 'UNAUTHORIZED') {
      // The cause is logged here, under the request's uuid, and nowhere in the response.
      logger.warn({ uuid, reason: (appErr as AppError & { reason?: string }).reason }, 'authentication failed');
    } else if (appErr.code === 'CHAIN_UNAVAILABLE' || appErr.code === 'STORAGE_UNAVAILABLE') {
      logger.warn({ uuid, code: appErr.code, cause: describeCause(appErr.cause) }, 'dependency unavailable');
    }
    const rendered = envelope.renderError(appErr, request.id);
    if (rendered.headers) void reply.headers(rendered.headers);
    return reply.code(rendered.statusCode).send(rendered.body);
  });

  const access = createAccessLogger(logger);
  if (access) {
    app.addHook('onResponse', (request, reply, done) => {
      access({ uuid: request.id, method: request.method, url: request.url, status: reply.statusCode, ms: reply.elapsedTime });
      done();
    });
  }

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
