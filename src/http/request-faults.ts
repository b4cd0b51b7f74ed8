/**
 * Faults injected into an API's requests (the sandbox's, docs/sandbox.md): a source decides, per
 * request, whether it is answered with a fault instead of being served, and this hook answers it
 * exactly as the API's real refusal looks to a client: the same envelope, status, code and headers.
 * Both venues' APIs take it through buildVenueApi, so one helper serves both.
 *
 * The hook runs at `onRequest`, before authentication, rate limiting and body parsing: a fault stands
 * for something that happens in front of the route (a limiter, a dependency away), and it must not
 * spend the key's real rate-limit budget or touch a nonce.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ChainUnavailableError, RateLimitedError, StorageUnavailableError, type AppError } from '../errors/app-error.ts';
import type { EnvelopeFormat } from './envelope.ts';
import { rateLimitHeaders } from './rate-limiter.ts';

/** What a request is answered with instead of being served. */
export type RequestFault =
  /** The API's rate-limit refusal (429), `Retry-After` of this many seconds. */
  | { kind: 'rate-limited'; retryAfterSeconds: number }
  /** A dependency outage (503): the database or shared store (`storage`), or the chain's node (`chain`). */
  | { kind: 'unavailable'; cause: 'storage' | 'chain' };

export interface RequestFaultProbe {
  /** `stock` or `perp`. */
  api: string;
  /** The path as sent, without the query. */
  path: string;
  /** The `x-api-key` header (both APIs name the key so), when sent once. */
  apiKey: string | undefined;
}

/** How a stream endpoint drops its connections: a close frame of its own, or the socket cut. */
export type StreamDropMode = 'close' | 'terminate';

/** A stream endpoint on an API's server as faults reach it (the sandbox's `stream-drop`). */
export interface DroppableStream {
  /** Drops every open connection now; answers how many there were. */
  drop(mode: StreamDropMode): number;
}

export interface RequestFaultSource {
  /** The fault this request is answered with, if any; taking it uses up one of the fault's count. */
  take(probe: RequestFaultProbe): RequestFault | undefined;
  /**
   * A stream endpoint attached to an API this source serves (src/streams/stream-endpoint.ts), so
   * that a fault can drop its connections; answers the call that detaches it (the endpoint's close).
   */
  attachStream?(api: string, stream: DroppableStream): () => void;
}

/**
 * The fault source of each API server, for what is attached to the server after the hook (its
 * stream endpoint): keyed by the root instance, which both the hook and the endpoint are given.
 */
const sources = new WeakMap<FastifyInstance, { api: string; source: RequestFaultSource }>();

/** The fault source registered on `app` with its API's name, if any. */
export function requestFaultsOf(app: FastifyInstance): { api: string; source: RequestFaultSource } | undefined {
  return sources.get(app);
}

export interface RequestFaultOptions {
  api: string;
  envelope: EnvelopeFormat;
  source: RequestFaultSource;
  /**
   * The API's real limit per window when it has a rate limit (the perp API): its 429 then carries
   * the X-RateLimit headers as the real limiter's does. Without one (the stock API, which documents
   * none) only `Retry-After`, as its error table says.
   */
  rateLimitPerWindow?: number;
}

function errorOf(fault: RequestFault): AppError {
  if (fault.kind === 'rate-limited') return new RateLimitedError(fault.retryAfterSeconds);
  return fault.cause === 'chain' ? new ChainUnavailableError() : new StorageUnavailableError();
}

/** Registers the fault hook on the API's root, so that every path (unknown ones included) passes it. */
export function registerRequestFaults(app: FastifyInstance, opts: RequestFaultOptions): void {
  const { source, envelope } = opts;
  sources.set(app, { api: opts.api, source });
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const url = request.raw.url ?? '/';
    const q = url.indexOf('?');
    const key = request.headers['x-api-key'];
    const fault = source.take({ api: opts.api, path: q === -1 ? url : url.slice(0, q), apiKey: typeof key === 'string' ? key : undefined });
    if (fault === undefined) return;
    const rendered = envelope.renderError(errorOf(fault), request.id);
    const headers: Record<string, string> = {};
    if (fault.kind === 'rate-limited' && opts.rateLimitPerWindow !== undefined) {
      // What the limiter sends for a refused request: nothing left, the window's end as Retry-After.
      Object.assign(headers, rateLimitHeaders({ limit: opts.rateLimitPerWindow, remaining: 0, resetMs: fault.retryAfterSeconds * 1000, limited: true }));
    }
    Object.assign(headers, rendered.headers);
    return reply.code(rendered.statusCode).headers(headers).send(rendered.body);
  });
}
