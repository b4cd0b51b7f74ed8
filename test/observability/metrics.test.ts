/**
 * `GET /metrics` of the real embedded stack (role `all`, anvil, SQLite), scraped over HTTP and
 * parsed as Prometheus text: the named series are there and move, no label carries an API key, an
 * address or an order id, and a thousand scrapes leave the APIs' other answers as they were.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PerpClient } from '@tokex/sdk';
import { DEMO_SYMBOLS } from '../../src/marketdata/symbol-catalog.ts';
import { DEFAULT_INSTRUMENTS } from '../../src/perp/engine/instruments.ts';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';
import { openSocket } from '../support/ws-client.ts';
import { until } from '../support/poll.ts';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The Prometheus text format (version 0.0.4): `# HELP`/`# TYPE` lines, then `name{l="v",...} value`. */
function parseMetrics(text: string): { samples: Sample[]; types: Map<string, string> } {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    if (line.startsWith('# TYPE ')) {
      const [name, type] = line.slice(7).split(' ');
      types.set(name, type);
      continue;
    }
    if (line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    if (m[3]) {
      const re = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?/g;
      let l: RegExpExecArray | null;
      let consumed = 0;
      while ((l = re.exec(m[3])) !== null) {
        labels[l[1]] = l[2].replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
        consumed += l[0].length;
      }
      if (consumed !== m[3].length) throw new Error(`bad labels: ${line}`);
    }
    const value = m[4] === '+Inf' ? Infinity : m[4] === '-Inf' ? -Infinity : Number(m[4]);
    if (Number.isNaN(value) && m[4] !== 'NaN') throw new Error(`bad value: ${line}`);
    samples.push({ name: m[1], labels, value });
  }
  return { samples, types };
}

const find = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
const sum = (samples: Sample[], name: string, labels: Record<string, string> = {}) => find(samples, name, labels).reduce((n, s) => n + s.value, 0);

describe('Prometheus metrics of the stack', () => {
  let t: TestStack;
  let url: string;
  const scrape = async () => {
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return parseMetrics(await res.text());
  };
  /**
   * Scrapes until `ok` holds of the samples: one rendering answers scrapes for a second
   * (metrics-server.ts), and what a test did shows in a later one, however busy the machine.
   */
  const scrapeUntil = (ok: (samples: Sample[]) => boolean) => until(async () => (await scrape()).samples, ok, 30_000);

  beforeAll(async () => {
    // A low perp limit so that a few dozen public requests meet it (the last test).
    t = await startTestStack({ PERP_RATE_LIMIT_PER_MIN: '40', PERP_DEMO_TAKER_MS: '300' });
    url = t.stack.metricsUrl!;
  }, 180_000);

  afterAll(async () => {
    await t?.stop();
  });

  it('serves /metrics on its own loopback listener, named in demo.json', async () => {
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    expect(new URL(url).port).not.toBe('9464');
    expect(t.demo.metricsUrl).toBe(url);
    expect(url).not.toContain(new URL(t.stack.stockBaseUrl!).port);
    const other = await fetch(url.replace('/metrics', '/'));
    expect(other.status).toBe(404);
    await other.text();
    const post = await fetch(url, { method: 'POST' });
    expect(post.status).toBe(405);
    await post.text();
  });

  it('counts HTTP requests by route and status, with latency histograms, and authentication refusals by cause', async () => {
    const before = (await scrape()).samples;
    for (let i = 0; i < 5; i++) await t.readOnly.getPrice('AAPL');
    // A stock key with a wrong secret: the opaque 401, counted as a signature refusal.
    await expect(t.client(t.demo.stock.keys.readOnly.apiKey, 'not-the-secret').listOrders()).rejects.toThrow();
    // An unknown perp key: 20002, counted as a key refusal.
    const stranger = new PerpClient({ baseUrl: t.perpBaseUrl!, apiKey: 'f'.repeat(32), apiSecret: 'x'.repeat(44), chainId: t.demo.chainId });
    await expect(stranger.get('account')).rejects.toThrow();
    // Paths no route has, and a route with an id in its path: neither reaches a label as sent.
    await (await fetch(`${t.stack.stockBaseUrl}/no-such-path-7f3a9c`)).text();
    await expect(t.readOnly.getOrder('0x' + 'ab'.repeat(32))).rejects.toThrow();
    // Exactly getPrice's route: other stacks of this test process have counted other price routes.
    const priceLabels = { api: 'stock', route: '/api/v1/prices/:symbol', method: 'GET', status: '200' };
    const moved = (name: string, s: Sample[]) => sum(s, name, priceLabels) - sum(before, name, priceLabels);
    // A rendering made after all of the above: every count below has moved in it.
    const after = await scrapeUntil(
      (s) =>
        moved('tokex_http_requests_total', s) >= 5 &&
        moved('tokex_http_request_duration_seconds_count', s) >= 5 &&
        find(s, 'tokex_http_requests_total', { api: 'stock', route: 'unmatched', method: 'GET', status: '404' }).length > 0 &&
        sum(s, 'tokex_auth_refusals_total', { api: 'stock', transport: 'http', cause: 'signature' }) >= 1 &&
        sum(s, 'tokex_auth_refusals_total', { api: 'perp', transport: 'http', cause: 'key' }) >= 1,
    );

    const priceRoute = find(after, 'tokex_http_requests_total', { api: 'stock', method: 'GET', status: '200' }).find((s) => s.labels.route === '/api/v1/prices/:symbol');
    expect(priceRoute, 'a series for the price route').toBeDefined();
    const labels = priceRoute!.labels;
    expect(sum(after, 'tokex_http_requests_total', labels) - sum(before, 'tokex_http_requests_total', labels)).toBeGreaterThanOrEqual(5);
    // The histogram of the same series: its count moved as much, and its +Inf bucket equals its count.
    const count = sum(after, 'tokex_http_request_duration_seconds_count', labels);
    expect(count - sum(before, 'tokex_http_request_duration_seconds_count', labels)).toBeGreaterThanOrEqual(5);
    expect(sum(after, 'tokex_http_request_duration_seconds_bucket', { ...labels, le: '+Inf' })).toBe(count);
    expect(sum(after, 'tokex_http_request_duration_seconds_sum', labels)).toBeGreaterThan(0);

    // One series for the unknown path sent here (GET); other stacks of this test process add their own methods.
    expect(find(after, 'tokex_http_requests_total', { api: 'stock', route: 'unmatched', method: 'GET', status: '404' }).length).toBe(1);
    expect(sum(after, 'tokex_auth_refusals_total', { api: 'stock', transport: 'http', cause: 'signature' })).toBeGreaterThanOrEqual(1);
    expect(sum(after, 'tokex_auth_refusals_total', { api: 'perp', transport: 'http', cause: 'key' })).toBeGreaterThanOrEqual(1);
    const routes = new Set(find(after, 'tokex_http_requests_total').map((s) => s.labels.route));
    expect([...routes].some((r) => r.includes(':'))).toBe(true); // path parameters stay patterns
    for (const r of routes) expect(r).not.toMatch(/no-such-path|abab/);
  });

  it('exports quote, mark and index ages, lag, queues, leases, the engine, the fund and open interest, and process metrics, which move', async () => {
    const first = await scrape();
    const { samples, types } = first;
    for (const { symbol } of DEMO_SYMBOLS) {
      const age = find(samples, 'tokex_quote_age_seconds', { symbol });
      expect(age, symbol).toHaveLength(1);
      expect(age[0].value).toBeLessThan(10);
    }
    for (const { symbol } of DEFAULT_INSTRUMENTS) {
      expect(find(samples, 'tokex_perp_mark_age_seconds', { instrument: symbol })[0]?.value, symbol).toBeLessThan(15);
      expect(find(samples, 'tokex_perp_index_age_seconds', { instrument: symbol })[0]?.value, symbol).toBeLessThan(15);
      expect(find(samples, 'tokex_perp_open_interest', { instrument: symbol }), symbol).toHaveLength(1);
      expect(find(samples, 'tokex_perp_open_interest_usd', { instrument: symbol }), symbol).toHaveLength(1);
    }
    expect(find(samples, 'tokex_perp_insurance_fund_usd')).toHaveLength(1);
    for (const indexer of ['indexer', 'perp-indexer']) expect(find(samples, 'tokex_indexer_lag_blocks', { indexer })[0]?.value, indexer).toBeGreaterThanOrEqual(0);
    for (const role of ['executor', 'relayer']) {
      expect(find(samples, 'tokex_queue_depth', { role }), role).toHaveLength(1);
      expect(find(samples, 'tokex_queue_oldest_age_seconds', { role }), role).toHaveLength(1);
    }
    for (const role of ['marketdata', 'indexer', 'executor', 'relayer', 'perp-engine']) {
      expect(find(samples, 'tokex_role_lease_held', { role })[0]?.value, role).toBe(1);
      expect(find(samples, 'tokex_role_lease_state', { role, state: 'held' })[0]?.value, role).toBe(1);
      expect(find(samples, 'tokex_role_lease_state', { role, state: 'lost' })[0]?.value, role).toBe(0);
    }
    expect(find(samples, 'tokex_role_progress_age_seconds', { role: 'marketdata' })[0]?.value).toBeLessThan(10);
    expect(types.get('tokex_engine_commands_total')).toBe('counter');
    expect(types.get('tokex_engine_command_duration_seconds')).toBe('histogram');
    expect(types.get('tokex_engine_journal_flush_duration_seconds')).toBe('histogram');
    expect(types.get('tokex_http_request_duration_seconds')).toBe('histogram');
    expect(types.get('tokex_quote_age_seconds')).toBe('gauge');
    expect(find(samples, 'process_cpu_user_seconds_total')).toHaveLength(1);
    expect(find(samples, 'nodejs_eventloop_lag_seconds')).toHaveLength(1);
    expect(find(samples, 'process_resident_memory_bytes')[0]?.value).toBeGreaterThan(0);

    // Open a stream with a subscription: the gauges count it.
    const ws = await openSocket(`${t.stack.stockBaseUrl!.replace('http', 'ws')}/api/v1/ws`);
    try {
      ws.send({ op: 'subscribe', id: 'q', channel: 'quotes', symbol: 'AAPL' });
      await ws.next((f) => f.type === 'subscribed');
      // The market maker trades, the mark task marks: engine commands and journal flushes go on,
      // shown by a later rendering (the counts below, looked for until they have moved).
      const commands = (s: Sample[]) => sum(s, 'tokex_engine_commands_total', { outcome: 'accepted' });
      const flushes = (s: Sample[]) => sum(s, 'tokex_engine_journal_flush_duration_seconds_count');
      const later = await scrapeUntil(
        (s) =>
          (find(s, 'tokex_stream_connections', { api: 'stock' })[0]?.value ?? 0) >= 1 &&
          (find(s, 'tokex_stream_subscriptions', { api: 'stock', channel: 'quotes' })[0]?.value ?? 0) >= 1 &&
          commands(s) > commands(samples) &&
          flushes(s) > flushes(samples) &&
          sum(s, 'process_cpu_user_seconds_total') > sum(samples, 'process_cpu_user_seconds_total'),
      );
      expect(find(later, 'tokex_stream_connections', { api: 'stock' })[0]?.value).toBeGreaterThanOrEqual(1);
      // The refusal and drop counters exist from the start (0 until something happens), per API.
      for (const api of ['stock', 'perp']) {
        for (const reason of ['slow_consumer', 'closed']) expect(find(later, 'tokex_stream_dropped_frames_total', { api, reason }), `${api} ${reason}`).toHaveLength(1);
        expect(find(later, 'tokex_stream_resets_total', { api })).toHaveLength(1);
        expect(find(later, 'tokex_rate_limit_refusals_total', { api, bucket: 'key' })).toHaveLength(1);
      }
      expect(find(later, 'tokex_stream_subscriptions', { api: 'stock', channel: 'quotes' })[0]?.value).toBeGreaterThanOrEqual(1);
      expect(commands(later)).toBeGreaterThan(commands(samples));
      expect(sum(later, 'tokex_engine_commands_total', { kind: 'setMarkPrice', outcome: 'accepted' })).toBeGreaterThan(0);
      expect(sum(later, 'tokex_engine_command_duration_seconds_count', { kind: 'placeOrder' })).toBeGreaterThan(0);
      expect(sum(later, 'tokex_engine_journal_flush_duration_seconds_count')).toBeGreaterThan(sum(samples, 'tokex_engine_journal_flush_duration_seconds_count'));
      expect(sum(later, 'process_cpu_user_seconds_total')).toBeGreaterThan(sum(samples, 'process_cpu_user_seconds_total'));
      // Quote ages stay young: the quotes move.
      for (const { symbol } of DEMO_SYMBOLS) expect(find(later, 'tokex_quote_age_seconds', { symbol })[0].value, symbol).toBeLessThan(10);
    } finally {
      ws.close();
    }
  });

  it('answers the APIs as before while /metrics is scraped 1,000 times, 20 at a time', async () => {
    let scrapes = 0;
    let failed = 0;
    const hammer = async () => {
      while (scrapes < 1_000) {
        scrapes++;
        const res = await fetch(url);
        if (res.status !== 200) failed++;
        await res.text();
      }
    };
    // How many scrapes had been sent when each API answer came back.
    const answeredAt: number[] = [];
    let hammering = true;
    const api = (async () => {
      while (hammering) {
        const quote = await t.readOnly.getPrice('AAPL');
        expect(quote.symbol).toBe('AAPL');
        answeredAt.push(scrapes);
      }
    })();
    await Promise.all(Array.from({ length: 20 }, hammer));
    hammering = false;
    await api;
    expect(failed).toBe(0);
    expect(scrapes).toBe(1_000);
    // The API kept answering in the middle of the scrapes, not only once they were over: answers
    // came back all through them (no latency figure: the machine's load is not the stack's).
    const during = answeredAt.filter((n) => n < 1_000);
    expect(during.length).toBeGreaterThan(5);
    expect(during.filter((n) => n < 500).length).toBeGreaterThan(0);
    expect(during.filter((n) => n >= 500).length).toBeGreaterThan(0);
  });

  it('counts rate-limit refusals, and no label is an API key, an address or an order id', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 50; i++) {
      const res = await fetch(`${t.perpBaseUrl}/v4/public/trader/time`);
      statuses.push(res.status);
      await res.text();
    }
    expect(statuses).toContain(429);
    const refused = statuses.filter((s) => s === 429).length;
    const samples = await scrapeUntil((s) => sum(s, 'tokex_rate_limit_refusals_total', { api: 'perp', bucket: 'address' }) >= refused);
    expect(sum(samples, 'tokex_rate_limit_refusals_total', { api: 'perp', bucket: 'address' })).toBeGreaterThanOrEqual(refused);

    const secrets = [t.demo.stock.keys.readOnly.apiKey, t.demo.stock.keys.writable.apiKey, t.demo.perp!.keys.trader.apiKey, 'f'.repeat(32)];
    const values = new Set(samples.flatMap((s) => Object.values(s.labels)));
    expect(values.size).toBeGreaterThan(10);
    for (const v of values) {
      expect(v).not.toMatch(/0x[0-9a-fA-F]{40}/);
      expect(v).not.toMatch(/[0-9a-f]{32}/i);
      expect(v).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i);
      expect(v).not.toMatch(/^\d{6,}$/);
      for (const s of secrets) expect(v).not.toContain(s);
    }
    // Names follow Prometheus conventions: tokex_ prefix, counters end in _total, times in _seconds.
    const names = new Set(samples.map((s) => s.name).filter((n) => n.startsWith('tokex_')));
    for (const n of names) expect(n).toMatch(/^tokex_[a-z0-9_]+$/);
    expect([...names].filter((n) => /_ms$|_millis/.test(n))).toEqual([]);
  });
});
