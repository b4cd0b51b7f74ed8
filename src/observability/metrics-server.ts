/**
 * `GET /metrics` in the Prometheus text format, on a listener of its own (METRICS_HOST, default
 * loopback; METRICS_PORT, default 9464): apart from the APIs, so a scrape never counts against a
 * rate limit, never needs a key, and a firewall can keep it private. Every process that runs a
 * stack serves its own (a worker-only process too).
 *
 * A scrape renders the registry at most once a second: requests arriving meanwhile share the last
 * rendering (or the one in progress), so hammering /metrics costs the APIs next to nothing.
 *
 * The listener speaks the few lines of HTTP/1.1 a scrape needs (one GET or HEAD a connection, then
 * `connection: close`, which Prometheus and curl take as they take any answer) over node:net rather
 * than node:http. Measured (docs/operations.md "What the metrics cost"): a node:http server beside
 * the APIs' in the same process, scraped every 5 s, raised the APIs' CPU per signed order by about
 * 7 %, with or without rendering anything, and this one by about 1 % (within the noise). The likely
 * cause is V8's: each scrape sent a second kind of server, request and handler through the http
 * code the APIs' requests run, and their optimised code was thrown away and rebuilt.
 */
import net, { type AddressInfo } from 'node:net';
import type { Logger } from '../lib/logger.ts';
import { acquireMetrics, metricsRegistry, trackMetricsSource, type MetricsSource } from './metrics-registry.ts';
// The stock venue's series register themselves in the registry on load: every process serving
// metrics exports them, an API-only one too (at 0 or empty), so a dashboard reads no gaps.
import './venue-metrics.ts';

export interface MetricsHandle {
  /** `http://host:port/metrics`; undefined when metrics are off or the listener could not start. */
  url?: string;
  stop(): Promise<void>;
}

export interface MetricsServerOptions {
  host: string;
  port: number;
  logger: Pick<Logger, 'info' | 'error'>;
  /** What this process's gauges read (role status, the engine). */
  source?: MetricsSource;
  /** How long one rendering answers scrapes; default 1 000 ms. */
  cacheMs?: number;
}

/** A request head longer than this is no scrape: the connection is closed. */
const MAX_HEAD = 8_192;
const MAX_CONNECTIONS = 256;

function urlOf(host: string, port: number): string {
  const h = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '[::1]' : host.includes(':') ? `[${host}]` : host;
  return `http://${h}:${port}/metrics`;
}

/**
 * Records metrics in this process and serves them. A listener that cannot start (the port taken by
 * another process) is logged at error level and the process runs on without it: trading does not
 * stop for its monitoring.
 */
export async function startMetricsServer(opts: MetricsServerOptions): Promise<MetricsHandle> {
  const release = acquireMetrics();
  const untrack = opts.source ? trackMetricsSource(opts.source) : () => undefined;
  const cacheMs = opts.cacheMs ?? 1_000;
  let rendered: { at: number; text: string } | undefined;
  let rendering: Promise<string> | undefined;

  const render = (): Promise<string> => {
    const now = Date.now();
    if (rendered && now - rendered.at < cacheMs) return Promise.resolve(rendered.text);
    rendering ??= metricsRegistry
      .metrics()
      .then((text) => {
        rendered = { at: Date.now(), text };
        return text;
      })
      .finally(() => {
        rendering = undefined;
      });
    return rendering;
  };

  /** Open connections, closed on stop: a scraper holding one never keeps the process from stopping. */
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.setTimeout(10_000, () => socket.destroy());
    socket.on('error', () => socket.destroy());
    let head = '';
    const onData = (chunk: Buffer) => {
      head += chunk.toString('latin1');
      const end = head.indexOf('\r\n\r\n');
      if (end === -1) {
        if (head.length > MAX_HEAD) socket.destroy();
        return;
      }
      socket.off('data', onData);
      const [method = '', target = ''] = head.slice(0, head.indexOf('\r\n')).split(' ');
      answer(socket, method, target);
    };
    socket.on('data', onData);
  });

  const send = (socket: net.Socket, status: string, type: string, body: string, extra = '', bodyOut = true) => {
    if (socket.destroyed) return;
    socket.end(`HTTP/1.1 ${status}\r\ncontent-type: ${type}\r\ncontent-length: ${Buffer.byteLength(body)}\r\ncache-control: no-store\r\nconnection: close\r\n${extra}\r\n${bodyOut ? body : ''}`);
  };
  const answer = (socket: net.Socket, method: string, target: string) => {
    const path = target.split('?')[0];
    if (path !== '/metrics') return send(socket, '404 Not Found', 'text/plain; charset=utf-8', 'not found: the metrics are at /metrics\n');
    if (method !== 'GET' && method !== 'HEAD') return send(socket, '405 Method Not Allowed', 'text/plain; charset=utf-8', 'method not allowed\n', 'allow: GET, HEAD\r\n');
    render().then(
      (text) => send(socket, '200 OK', metricsRegistry.contentType, text, '', method === 'GET'),
      (err: unknown) => {
        opts.logger.error({ err: err instanceof Error ? err.message : String(err) }, 'metrics: rendering failed');
        send(socket, '500 Internal Server Error', 'text/plain; charset=utf-8', 'metrics rendering failed\n');
      },
    );
  };

  // A scraper needs one connection at a time; a flood of them is refused beyond this.
  server.maxConnections = MAX_CONNECTIONS;

  const stopAll = async (listening: boolean) => {
    untrack();
    release();
    if (!listening) return;
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };

  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(opts.port, opts.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    opts.logger.error(
      { host: opts.host, port: opts.port, code: (err as NodeJS.ErrnoException).code },
      'metrics: listener not started (set METRICS_PORT to a free port, 0 for any, or off); running without /metrics',
    );
    // Nobody can read them: nothing is recorded either.
    await stopAll(false);
    return { url: undefined, stop: async () => undefined };
  }
  // An accept that fails later (out of descriptors) is logged; the listener stays.
  server.on('error', (err: NodeJS.ErrnoException) => opts.logger.error({ code: err.code }, 'metrics: listener error'));
  const port = (server.address() as AddressInfo).port;
  const url = urlOf(opts.host, port);
  opts.logger.info({ url }, 'metrics: serving');
  let stopped: Promise<void> | undefined;
  return { url, stop: () => (stopped ??= stopAll(true)) };
}
