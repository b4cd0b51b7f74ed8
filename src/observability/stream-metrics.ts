/**
 * The streams' metrics (metrics-registry.ts): dropped frames, resets, and the endpoints' connections
 * read at scrape time.
 */
import { Counter, Gauge } from 'prom-client';
import { onApiLabelled } from './http-metrics.ts';
import { holders, metricsRegistry } from './prometheus-registry.ts';

const droppedFrames = new Counter<'api' | 'reason'>({
  name: 'tokex_stream_dropped_frames_total',
  help: 'Stream frames not delivered, by API and reason: slow_consumer (the client did not read: the frame is dropped and the connection closed), closed (the connection had gone).',
  labelNames: ['api', 'reason'],
  registers: [metricsRegistry],
});
const streamResets = new Counter<'api'>({
  name: 'tokex_stream_resets_total',
  help: 'Subscriptions ended by the server because their stream restarted or had a gap (the client is told to subscribe again).',
  labelNames: ['api'],
  registers: [metricsRegistry],
});

// Each API's series exist from the start at 0 (http-metrics.ts labelApp), so a rate over them reads 0 rather than no data.
onApiLabelled((api) => {
  for (const reason of ['slow_consumer', 'closed']) droppedFrames.inc({ api, reason }, 0);
  streamResets.inc({ api }, 0);
});

export function recordDroppedFrame(api: string, reason: 'slow_consumer' | 'closed'): void {
  if (holders === 0) return;
  droppedFrames.inc({ api, reason });
}

export function recordStreamReset(api: string): void {
  if (holders === 0) return;
  streamResets.inc({ api });
}

/** A stream endpoint's figures, read at scrape time. */
export interface StreamEndpointSource {
  api: string;
  connections(): number;
  /** Subscriptions by channel name (`depth`, `orders`, ...). */
  subscriptions(): Map<string, number>;
}

const streamEndpoints = new Set<StreamEndpointSource>();

/** Registers a stream endpoint for the gauges; the answer removes it (call it when the endpoint closes). */
export function trackStreamEndpoint(source: StreamEndpointSource): () => void {
  streamEndpoints.add(source);
  return () => void streamEndpoints.delete(source);
}

new Gauge<'api'>({
  name: 'tokex_stream_connections',
  help: 'Open WebSocket stream connections, by API.',
  labelNames: ['api'],
  registers: [metricsRegistry],
  collect() {
    this.reset();
    const by = new Map<string, number>();
    for (const s of streamEndpoints) by.set(s.api, (by.get(s.api) ?? 0) + s.connections());
    for (const [api, n] of by) this.set({ api }, n);
  },
});

new Gauge<'api' | 'channel'>({
  name: 'tokex_stream_subscriptions',
  help: 'Stream subscriptions, by API and channel.',
  labelNames: ['api', 'channel'],
  registers: [metricsRegistry],
  collect() {
    this.reset();
    const by = new Map<string, { api: string; channel: string; n: number }>();
    for (const s of streamEndpoints) {
      for (const [channel, n] of s.subscriptions()) {
        const key = `${s.api} ${channel}`;
        const e = by.get(key);
        if (e) e.n += n;
        else by.set(key, { api: s.api, channel, n });
      }
    }
    for (const e of by.values()) this.set({ api: e.api, channel: e.channel }, e.n);
  },
});
