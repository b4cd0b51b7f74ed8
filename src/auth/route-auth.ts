/**
 * Routes are authenticated unless they opt out explicitly with `config: { auth: false }` (the perp
 * API's `GET time` and its wallet-signed key creation). Every API's auth hook asks `authRequired`,
 * so an opt-out is one visible flag on the route rather than a path list inside a hook.
 */
import type { FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** `false`: the route is public and the API's auth hook lets every request through. */
    auth?: boolean;
  }
}

export function authRequired(request: FastifyRequest): boolean {
  return request.routeOptions.config?.auth !== false;
}
