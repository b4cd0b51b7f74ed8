/**
 * The process's Prometheus metrics (docs/operations.md "Metrics"), in one prom-client registry.
 *
 * Two kinds:
 * - event metrics, recorded where the event happens (HTTP answers, authentication and rate-limit
 *   refusals, engine commands, journal flushes, dropped stream frames): module-level objects, so a
 *   hot path reaches them without a lookup through the stack. They record only while some stack in
 *   the process serves metrics ({@link acquireMetrics}); with `METRICS_PORT=off` every record call
 *   returns at its first line, which is what the benchmark's "without" measures.
 * - state metrics, read at scrape time (quote, mark and index ages, indexer lag, queues, leases,
 *   stream connections, the insurance fund, open interest): gauges whose collect() reads the sources
 *   each running stack registers ({@link trackMetricsSource}) and unregisters on stop. Nothing is
 *   sampled between scrapes.
 *
 * Label values come from fixed sets only (route patterns, status codes, command kinds, causes,
 * roles, the catalog's symbols and instruments): never an API key, an address or an order id.
 * Subject labels read from the role samplers are checked against a symbol pattern and capped.
 *
 * By concern, each module registering its metrics as it loads: prometheus-registry.ts (the registry,
 * recording on and off, buckets), http-metrics.ts, engine-metrics.ts, stream-metrics.ts and
 * state-metrics.ts. This module loads them in that order, which is the order /metrics lists them in,
 * and is the one place the rest of the code imports them from.
 */
export {
  metricsRegistry,
  acquireMetrics,
  metricsActive,
  type CounterSeries,
  type HistogramSeries,
} from './prometheus-registry.ts';
export {
  AUTH_CAUSES,
  type AuthCause,
  labelApp,
  apiLabelOf,
  recordHttpRequest,
  authCauseOf,
  recordAuthRefusal,
  recordRateLimited,
} from './http-metrics.ts';
export {
  ENGINE_COMMAND_KINDS,
  metricsClock,
  type JournalledCommand,
  recordJournalFlush,
  recordJournalFailure,
} from './engine-metrics.ts';
export {
  recordDroppedFrame,
  recordStreamReset,
  type StreamEndpointSource,
  trackStreamEndpoint,
} from './stream-metrics.ts';
export {
  type MetricsEngine,
  type MetricsSource,
  trackMetricsSource,
  QUOTE_SOURCE_STATES,
  QUOTE_SYMBOL_STATUSES,
  type QuoteMessageCounts,
  type QuoteFeedMetrics,
  trackQuoteFeed,
} from './state-metrics.ts';
