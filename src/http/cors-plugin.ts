/**
 * Cross-origin access for pages served from this machine only (the web console, docs/console.md,
 * runs on the stock API's port and calls the perpetual API on another port). An `Origin` that is not
 * `http(s)://` + a loopback host gets no CORS header at all, so browsers keep refusing every other
 * site. Credentials (cookies) are never allowed: the APIs authenticate by signed headers.
 *
 * Added as a root `onRequest` hook, so it also answers preflights of routes behind an authenticating
 * hook (those run later, in preValidation) and of paths without an OPTIONS route.
 */
import type { FastifyInstance } from 'fastify';

const LOOPBACK_ORIGIN = /^https?:\/\/(localhost|127(?:\.\d{1,3}){3}|\[::1\])(?::\d{1,5})?$/;

/** The request headers a signed call of either API sends. */
const ALLOWED_HEADERS = ['content-type', 'idempotency-key', 'x-api-key', 'x-api-sign', 'x-api-ts', 'x-chain-id', 'x-api-nonce', 'x-api-chain-id', 'x-api-p'];
const EXPOSED_HEADERS = ['x-request-id', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'retry-after'];
const ALLOWED_METHODS = ['GET', 'POST', 'DELETE'];

export function isLoopbackOrigin(origin: string | undefined): boolean {
  return origin !== undefined && LOOPBACK_ORIGIN.test(origin);
}

export function registerLoopbackCors(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    const origin = request.headers.origin;
    if (!isLoopbackOrigin(origin)) return;
    void reply.header('access-control-allow-origin', origin).header('vary', 'Origin');
    const preflightMethod = request.headers['access-control-request-method'];
    if (request.method === 'OPTIONS' && typeof preflightMethod === 'string') {
      return reply
        .code(204)
        .header('access-control-allow-methods', ALLOWED_METHODS.join(', '))
        .header('access-control-allow-headers', ALLOWED_HEADERS.join(', '))
        .header('access-control-max-age', '600')
        .send();
    }
    void reply.header('access-control-expose-headers', EXPOSED_HEADERS.join(', '));
  });
}
