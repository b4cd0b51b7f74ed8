/**
 * A stack's metrics (docs/operations.md, "Metrics"): the listener from `config.metrics`, with the
 * gauges reading this stack's role status and the engine of `ctx.perpVenue` (read at each scrape,
 * so roles started later are seen). `METRICS_PORT=off`: nothing is recorded or served.
 */
import { startMetricsServer, type MetricsHandle } from '../observability/metrics-server.ts';
import type { StackContext } from './stack-context.ts';

/** The metrics URL of each running stack, for demo.json and the banner. */
const urls = new WeakMap<object, string>();

export function metricsUrlOf(ctx: StackContext): string | undefined {
  return urls.get(ctx);
}

export async function startMetrics(ctx: StackContext): Promise<MetricsHandle> {
  const settings = ctx.config.metrics;
  if (!settings) return { url: undefined, stop: async () => undefined };
  const handle = await startMetricsServer({
    host: settings.host,
    port: settings.port,
    logger: ctx.logger,
    source: { status: ctx.status, engine: () => ctx.perpVenue?.engine(), chains: () => ctx.otherChains.map((c) => ({ chainId: c.config.chainId, status: c.status })) },
  });
  if (handle.url) urls.set(ctx, handle.url);
  return handle;
}
