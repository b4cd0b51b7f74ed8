/**
 * The assembly both venues' APIs share: the HTTP server (create-http-server.ts), OpenAPI 3.1
 * generated from the route schemas and served at /openapi.json with its reference page at /docs,
 * one authenticated scope (the venue's auth hook, then the JSON decoder, then its routes) whose
 * unknown paths authenticate before they answer not-found, and the probes. A venue brings what
 * differs: envelope, auth hook, scope prefix, signing headers, document info and route modules.
 */
import swagger from '@fastify/swagger';
import type { FastifyInstance, preValidationHookHandler } from 'fastify';
import { NotFoundError } from '../errors/app-error.ts';
import { createLogger } from '../lib/logger.ts';
import type { ReadinessProbe } from '../observability/readiness.ts';
import { createHttpServer, type HttpServerOptions } from './create-http-server.ts';
import { registerProbes, type ProbeEnvelope } from './probe-routes.ts';
import { registerReferencePage } from './reference-page.ts';
import { decodeJsonRequest } from './request-decoder.ts';
import { registerRequestFaults, type RequestFaultSource } from './request-faults.ts';
import { named } from './named-plugin.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The route reads no engine state: it sends commands and answers from the engine's reply (an
     * order placement), so it does not wait for `settled`.
     */
    answersFromReply?: boolean;
  }
}

export interface VenueApiOptions extends HttpServerOptions {
  /** The OpenAPI document's `info`; `description` is markdown the reference page shows. */
  info: { title: string; version: string; description: string };
  /** The signing headers by security-scheme name, in the document's order; every operation requires them all. */
  securityHeaders: Record<string, string>;
  /**
   * The scope's authentication hook, asked for once the document plugin is registered (a venue may
   * register its rate limit on `app` first).
   */
  authenticate(app: FastifyInstance): preValidationHookHandler | Promise<preValidationHookHandler>;
  /** Awaited before every GET of the scope, once authenticated and decoded (perp: durable state only). */
  beforeRead?: () => Promise<void>;
  /**
   * Awaited before every request of the scope but the routes whose config says `answersFromReply`,
   * once authenticated and decoded (perp with the engine apart: the replica holds every command this
   * process answered).
   */
  settled?: () => Promise<void>;
  /** Where the authenticated scope starts, service prefix included (`/v4/public/trader`, `/api/v1`). */
  scopePrefix: string;
  /**
   * A service prefix the deployment sits behind (`''` for none): the document, the reference page
   * and the probes answer at the root, where orchestrators look, and under it too.
   */
  servicePrefix?: string;
  referenceTitle: string;
  probeEnvelope: ProbeEnvelope;
  /** `/readyz`'s judge (docs/operations.md); without it the API says ready. */
  readiness?: ReadinessProbe;
  /** Registers the venue's route modules inside the authenticated scope. */
  routes(api: FastifyInstance): Promise<void>;
  /** Extra route modules registered inside the authenticated scope after the venue's own. */
  extraRoutes?: Array<(api: FastifyInstance) => Promise<void>>;
  /**
   * Injected faults (the sandbox's, docs/sandbox.md), answered before anything else runs
   * (request-faults.ts); `rateLimitPerWindow` is the API's real limit, for the 429's headers.
   */
  faults?: { source: RequestFaultSource; rateLimitPerWindow?: number };
}

export async function buildVenueApi(opts: VenueApiOptions): Promise<FastifyInstance> {
  // The options are a superset of the server's: it reads only its own.
  const app = createHttpServer(opts);
  if (opts.faults) registerRequestFaults(app, { api: opts.api ?? 'other', envelope: opts.envelope, ...opts.faults });
  const schemes = Object.entries(opts.securityHeaders);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: opts.info,
      components: { securitySchemes: Object.fromEntries(schemes.map(([scheme, name]) => [scheme, { type: 'apiKey', in: 'header', name } as const])) },
      security: [Object.fromEntries(schemes.map(([scheme]) => [scheme, []]))],
    },
  });

  const auth = await opts.authenticate(app);
  const { beforeRead } = opts;

  await app.register(
    named(async (api: FastifyInstance) => {
      api.addHook('preValidation', auth);
      // Body and query are read only once authentication has decided: before that, a request learns
      // nothing but the opaque 401 (invalid JSON or a wrong content type included).
      api.addHook('preValidation', decodeJsonRequest);
      if (beforeRead) {
        api.addHook('preHandler', async (request) => {
          if (request.method === 'GET') await beforeRead();
        });
      }
      const { settled } = opts;
      if (settled) {
        api.addHook('preHandler', async (request) => {
          if (request.routeOptions.config?.answersFromReply !== true) await settled();
        });
      }
      // The scope's hooks also run for its not-found handler: unknown routes authenticate first, so
      // a caller without a valid signature cannot probe which routes exist.
      api.setNotFoundHandler(async () => {
        throw new NotFoundError('route');
      });
      // The scope's root (with and without the trailing slash) is not covered by its not-found
      // handler: answered here, after the same hooks, so that it too tells a stranger nothing.
      api.all('/', { schema: { hide: true } }, async () => {
        throw new NotFoundError('route');
      });
      await opts.routes(api);
      for (const extra of opts.extraRoutes ?? []) await api.register(named(extra));
    }, 'authenticated scope'),
    { prefix: opts.scopePrefix },
  );

  const servicePrefix = opts.servicePrefix ?? '';
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  if (servicePrefix !== '') app.get(`${servicePrefix}/openapi.json`, { schema: { hide: true } }, async () => app.swagger());
  const docsAt: Array<`/${string}`> = servicePrefix === '' ? ['/docs'] : ['/docs', `${servicePrefix}/docs` as `/${string}`];
  for (const routePrefix of docsAt) await registerReferencePage(app, { routePrefix, title: opts.referenceTitle });
  registerProbes(app, {
    prefixes: servicePrefix === '' ? [''] : ['', servicePrefix],
    readiness: opts.readiness,
    envelope: opts.probeEnvelope,
  });
  return app;
}

/** What an API is built with to render its OpenAPI document: no log lines, the default body limit. */
export function openApiBuildOptions(): Pick<HttpServerOptions, 'logger' | 'bodyLimitBytes'> {
  return { logger: createLogger({ level: 'silent' }), bodyLimitBytes: 65_536 };
}

/**
 * The OpenAPI document an API built for it declares (its routes registered with inert dependencies,
 * never called), without listening; the app is closed, then `release` frees what it was given.
 */
export async function renderOpenApi(app: FastifyInstance, release?: () => Promise<void>): Promise<unknown> {
  await app.ready();
  const doc = app.swagger();
  await app.close();
  await release?.();
  return doc;
}
