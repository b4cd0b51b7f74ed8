/**
 * HTTP metrics (metrics-registry.ts): requests and their latency by route, authentication and
 * rate-limit refusals.
 */
import { Counter, Histogram } from 'prom-client';
import type { FastifyInstance } from 'fastify';
import { UnauthorizedError, ForbiddenError, type AuthFailure } from '../errors/app-error.ts';
import { holders, metricsRegistry, HTTP_BUCKETS, counterSeries, histogramSeries, type CounterSeries, type HistogramSeries } from './prometheus-registry.ts';

type HttpLabels = 'api' | 'method' | 'route' | 'status';
const HTTP_LABELS = ['api', 'method', 'route', 'status'] as const;
const httpRequests = new Counter<HttpLabels>({
  name: 'tokex_http_requests_total',
  help: 'HTTP requests answered, by API, method, route pattern (unmatched for unknown paths) and status code.',
  labelNames: HTTP_LABELS,
  registers: [metricsRegistry],
});
const httpDuration = new Histogram<HttpLabels>({
  name: 'tokex_http_request_duration_seconds',
  help: 'Time from a request received to its answer sent, by API, method, route pattern and status code.',
  labelNames: HTTP_LABELS,
  buckets: HTTP_BUCKETS,
  registers: [metricsRegistry],
});

/** Causes of an authentication refusal: the perp API's AuthFailure set plus `permission`. */
export const AUTH_CAUSES = ['credentials', 'key', 'expired', 'ip', 'timestamp', 'signature', 'replay', 'scope', 'permission'] as const;
export type AuthCause = (typeof AUTH_CAUSES)[number];

const authRefusals = new Counter<'api' | 'transport' | 'cause'>({
  name: 'tokex_auth_refusals_total',
  help: 'Requests and stream auth frames refused by authentication, by API, transport (http or stream) and cause. Counts only: no key or address.',
  labelNames: ['api', 'transport', 'cause'],
  registers: [metricsRegistry],
});
const rateLimitRefusals = new Counter<'api' | 'bucket'>({
  name: 'tokex_rate_limit_refusals_total',
  help: 'Requests refused with 429 by the request rate limit, by API and the bucket counted (key: an authenticated API key; address: a client address).',
  labelNames: ['api', 'bucket'],
  registers: [metricsRegistry],
});

/** The API each app serves, for the labels (set by createHttpServer). */
const apiOfApp = new WeakMap<object, string>();

export function labelApp(app: FastifyInstance, api: string): void {
  apiOfApp.set(app, api);
  // The refusal series exist from the start at 0, so a rate over them reads 0 rather than no data.
  for (const transport of ['http', 'stream']) for (const cause of AUTH_CAUSES) authRefusals.inc({ api, transport, cause }, 0);
  for (const bucket of ['key', 'address']) rateLimitRefusals.inc({ api, bucket }, 0);
  for (const fn of apiLabelled) fn(api);
}

/**
 * What other metric modules start at 0 for each API labelled (stream-metrics.ts: its dropped frames
 * and resets), registered as they load: this module, loaded before theirs, does not import them.
 */
const apiLabelled: Array<(api: string) => void> = [];

export function onApiLabelled(fn: (api: string) => void): void {
  apiLabelled.push(fn);
}

export function apiLabelOf(app: FastifyInstance): string {
  return apiOfApp.get(app) ?? 'other';
}

interface HttpSeries {
  count: CounterSeries;
  duration: HistogramSeries;
}

/**
 * Per app: route → method → status → the series' label object, made once, so an answer allocates
 * nothing and builds no string here.
 */
const httpSeries = new WeakMap<object, Map<string, Map<string, Map<number, HttpSeries>>>>();

function seriesOf(app: object, route: string, method: string, status: number): HttpSeries {
  let byRoute = httpSeries.get(app);
  if (byRoute === undefined) httpSeries.set(app, (byRoute = new Map()));
  let byMethod = byRoute.get(route);
  if (byMethod === undefined) byRoute.set(route, (byMethod = new Map()));
  let byStatus = byMethod.get(method);
  if (byStatus === undefined) byMethod.set(method, (byStatus = new Map()));
  let s = byStatus.get(status);
  if (s === undefined) {
    const labels = { api: apiOfApp.get(app) ?? 'other', method, route, status: String(status) };
    s = { count: counterSeries(httpRequests, labels), duration: histogramSeries(httpDuration, labels) };
    byStatus.set(status, s);
  }
  return s;
}

/**
 * One answered request. `route` is the matched route's pattern (`/v4/public/trader/orders/:orderId`)
 * or undefined for a path no route matched (labelled `unmatched`, whatever the path was).
 */
export function recordHttpRequest(app: object, method: string, route: string | undefined, status: number, ms: number): void {
  if (holders === 0) return;
  const s = seriesOf(app, route ?? 'unmatched', method, status);
  s.count.inc();
  s.duration.observe(ms / 1000);
}

/** The cause of an authentication refusal, from the fixed set (never the refusal's own words). */
export function authCauseOf(err: unknown): AuthCause | undefined {
  if (err instanceof ForbiddenError) return 'permission';
  if (!(err instanceof UnauthorizedError)) return undefined;
  if (err.failure !== 'credentials') return err.failure satisfies AuthFailure;
  // The stock API's refusals all carry the default failure; their reasons (stock-auth-hook.ts) say which check failed.
  const r = err.reason;
  if (r.includes('READ_ONLY')) return 'permission';
  if (r.includes('expired')) return 'expired';
  if (r.includes('whitelist') || r.startsWith('peer ')) return 'ip';
  if (r.startsWith('timestamp outside')) return 'timestamp';
  if (r.startsWith('signature')) return 'signature';
  if (r === 'nonce reused') return 'replay';
  if (r.includes('scope') || r.includes('does not match the service')) return 'scope';
  if (r.includes('api key')) return 'key';
  return 'credentials';
}

/** An authentication refusal (`err` an UnauthorizedError or ForbiddenError; anything else is not counted). */
export function recordAuthRefusal(api: string, transport: 'http' | 'stream', err: unknown): void {
  if (holders === 0) return;
  const cause = authCauseOf(err);
  if (cause !== undefined) authRefusals.inc({ api, transport, cause });
}

/** A request refused by the rate limit; `bucket` is the limiter's bucket, of which only the kind is kept. */
export function recordRateLimited(app: object, bucket: string): void {
  if (holders === 0) return;
  rateLimitRefusals.inc({ api: apiOfApp.get(app) ?? 'other', bucket: bucket.startsWith('key:') ? 'key' : 'address' });
}
