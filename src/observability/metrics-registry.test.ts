import { readFileSync } from 'node:fs';
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { APP_VERSION } from '../config/build-info.ts';
import { ForbiddenError, UnauthorizedError } from '../errors/app-error.ts';
import { authCauseOf, metricsActive, metricsRegistry, recordAuthRefusal, recordHttpRequest, recordJournalFlush } from './metrics-registry.ts';
import { startMetricsServer } from './metrics-server.ts';
import { startMetrics } from '../app/metrics-wiring.ts';
import type { StackContext } from '../app/stack-context.ts';

const silent = { info() {}, error() {} };

async function value(name: string, labels: Record<string, string>): Promise<number> {
  const m = (await metricsRegistry.getMetricsAsJSON()).find((x) => x.name === name);
  return (m?.values ?? []).filter((s) => Object.entries(labels).every(([k, v]) => String(s.labels[k]) === v)).reduce((n, s) => n + s.value, 0);
}

describe('authentication refusal causes', () => {
  it("map the stock API's reasons and the perp API's failures onto the fixed set, never the reason's words", () => {
    const stock = (reason: string) => authCauseOf(new UnauthorizedError(reason));
    expect(stock('unknown api key')).toBe('key');
    expect(stock('not a stock api key')).toBe('key');
    expect(stock('api key revoked')).toBe('key');
    expect(stock('api key expired')).toBe('expired');
    expect(stock('api key scope mismatch')).toBe('scope');
    expect(stock('api key has no scope for this chain and product')).toBe('scope');
    expect(stock('x-api-p does not match the service (case-sensitive)')).toBe('scope');
    expect(stock('x-api-chain-id does not match the service')).toBe('scope');
    expect(stock('peer 10.1.2.3 not in whitelist')).toBe('ip');
    expect(stock('peer address unknown (disconnected)')).toBe('ip');
    expect(stock('READ_ONLY key on a write method')).toBe('permission');
    expect(stock('READ_ONLY scope on a write method')).toBe('permission');
    expect(stock('signature mismatch or malformed')).toBe('signature');
    expect(stock('nonce reused')).toBe('replay');
    expect(stock('timestamp outside the 45 s window')).toBe('timestamp');
    expect(stock('timestamp is not milliseconds')).toBe('credentials');
    expect(stock('missing authentication header')).toBe('credentials');
    expect(stock('x-api-key repeated')).toBe('credentials');
    expect(authCauseOf(new UnauthorizedError('peer 10.0.0.1 not in whitelist', { failure: 'ip' }))).toBe('ip');
    expect(authCauseOf(new UnauthorizedError('signature already used', { failure: 'replay' }))).toBe('replay');
    expect(authCauseOf(new ForbiddenError('TRADE permission required'))).toBe('permission');
    expect(authCauseOf(new Error('storage down'))).toBeUndefined();
  });
});

describe('tokex_build_info', () => {
  it("is 1 with the release (package.json's version) and the Node.js version as labels", async () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(APP_VERSION).toBe(pkg.version);
    const m = (await metricsRegistry.getMetricsAsJSON()).find((x) => x.name === 'tokex_build_info');
    expect(m?.type).toBe('gauge');
    expect(m?.values).toEqual([{ labels: { version: pkg.version, node: process.version }, value: 1 }]);
    const text = await metricsRegistry.metrics();
    expect(text).toContain(`\ntokex_build_info{version="${pkg.version}",node="${process.version}"} 1\n`);
  });
});

describe('recording', () => {
  it('records nothing while no stack serves metrics, and counts once one does', async () => {
    const labels = { api: 'unit', transport: 'http', cause: 'signature' };
    const err = new UnauthorizedError('signature mismatch or malformed');
    const start = await value('tokex_auth_refusals_total', labels);
    expect(metricsActive()).toBe(false);
    recordAuthRefusal('unit', 'http', err);
    expect(await value('tokex_auth_refusals_total', labels)).toBe(start);
    const server = await startMetricsServer({ host: '127.0.0.1', port: 0, logger: silent });
    try {
      expect(metricsActive()).toBe(true);
      recordAuthRefusal('unit', 'http', err);
      expect(await value('tokex_auth_refusals_total', labels)).toBe(start + 1);
      // A command kind outside the engine's set is labelled `other`.
      recordJournalFlush(performance.now() - 1, [{ row: { kind: 'made-up-kind' }, result: { ok: true }, appliedAt: performance.now() - 1 }]);
      const kinds = (await metricsRegistry.getMetricsAsJSON()).find((m) => m.name === 'tokex_engine_commands_total')!.values.map((v) => v.labels.kind);
      expect(kinds).toContain('other');
      expect(kinds).not.toContain('made-up-kind');
      // The histogram: cumulative buckets, +Inf, sum and count.
      const app = {};
      for (const ms of [0.3, 3, 3_000]) recordHttpRequest(app, 'GET', '/unit/:id', 200, ms);
      const series = (await metricsRegistry.getMetricsAsJSON()).find((m) => m.name === 'tokex_http_request_duration_seconds')!.values.filter((v) => v.labels.route === '/unit/:id');
      const at = (metricName: string, le?: string | number) => series.find((v) => (v as { metricName?: string }).metricName === metricName && (le === undefined || v.labels.le === le))?.value;
      expect(at('tokex_http_request_duration_seconds_bucket', 0.0005)).toBe(1);
      expect(at('tokex_http_request_duration_seconds_bucket', 0.0025)).toBe(1);
      expect(at('tokex_http_request_duration_seconds_bucket', 0.005)).toBe(2);
      expect(at('tokex_http_request_duration_seconds_bucket', 2.5)).toBe(2);
      expect(at('tokex_http_request_duration_seconds_bucket', 5)).toBe(3);
      expect(at('tokex_http_request_duration_seconds_bucket', '+Inf')).toBe(3);
      expect(at('tokex_http_request_duration_seconds_count')).toBe(3);
      expect(at('tokex_http_request_duration_seconds_sum')).toBeCloseTo(3.0033, 6);
      const text = await (await fetch(server.url!)).text();
      expect(text).toMatch(/\ntokex_http_request_duration_seconds_bucket\{le="\+Inf",api="other",method="GET",route="\/unit\/:id",status="200"\} 3\n/);
      expect(text).toContain('tokex_http_requests_total{api="other",method="GET",route="/unit/:id",status="200"} 3');
      // prom-client's process metrics, but the GC observer (metrics-registry.ts, startProcessMetrics).
      for (const name of ['process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'process_open_fds', 'nodejs_eventloop_lag_p99_seconds', 'nodejs_heap_size_used_bytes', 'nodejs_active_handles_total', 'nodejs_version_info']) expect(text).toContain(`\n# HELP ${name}`);
      expect(text).not.toContain('nodejs_gc_duration_seconds');
      expect(text).toContain('tokex_auth_refusals_total{api="unit",transport="http",cause="signature"}');
    } finally {
      await server.stop();
    }
    expect(metricsActive()).toBe(false);
  });

  it('with METRICS_PORT=off neither records nor listens', async () => {
    const handle = await startMetrics({ config: { metrics: undefined } } as unknown as StackContext);
    expect(handle.url).toBeUndefined();
    expect(metricsActive()).toBe(false);
    await handle.stop();
  });

  it('runs on without a listener when its port is taken, and says so', async () => {
    const holder = net.createServer();
    await new Promise<void>((r) => holder.listen(0, '127.0.0.1', () => r()));
    const port = (holder.address() as net.AddressInfo).port;
    const errors: Array<{ obj: object; msg?: string }> = [];
    try {
      const handle = await startMetricsServer({ host: '127.0.0.1', port, logger: { info() {}, error: (obj: object, msg?: string) => errors.push({ obj, msg }) } });
      expect(handle.url).toBeUndefined();
      expect(metricsActive()).toBe(false);
      expect(errors).toEqual([{ obj: { host: '127.0.0.1', port, code: 'EADDRINUSE' }, msg: expect.stringContaining('listener not started') }]);
      await handle.stop();
    } finally {
      await new Promise((r) => holder.close(r));
    }
  });
});

describe('the Grafana dashboard (deploy/grafana/tokex-dashboard.json)', () => {
  it('charts every tokex series, through the datasource variable, with unique panel ids', async () => {
    const fs = await import('node:fs');
    const dashboard = JSON.parse(fs.readFileSync(new URL('../../deploy/grafana/tokex-dashboard.json', import.meta.url), 'utf8')) as {
      panels: Array<{ id: number; type: string; datasource?: { uid: string }; targets?: Array<{ expr: string; datasource: { uid: string } }> }>;
      templating: { list: Array<{ name: string; type: string }> };
    };
    expect(dashboard.templating.list.find((v) => v.name === 'datasource')?.type).toBe('datasource');
    const ids = dashboard.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    const exprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => {
      expect(t.datasource.uid).toBe('${datasource}');
      return t.expr;
    }));
    const ours = metricsRegistry.getMetricsAsArray().map((m) => m.name).filter((n) => n.startsWith('tokex_'));
    expect(ours.length).toBeGreaterThan(25);
    for (const name of ours) expect(exprs.some((e) => e.includes(name)), name).toBe(true);
    // And nothing charted that the registry does not export (a renamed series would chart nothing).
    const charted = new Set(exprs.flatMap((e) => e.match(/tokex_[a-z0-9_]+/g) ?? []).map((n) => n.replace(/_(bucket|sum|count)$/, '')));
    for (const name of charted) expect(ours, name).toContain(name);
  });
});
