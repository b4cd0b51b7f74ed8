/**
 * Readiness (src/observability/readiness.ts, status-publisher.ts, docs/operations.md): the judge of
 * the roles' published progress, the publisher's rule that a process which lost a role never
 * overwrites its successor's row, and `/readyz` on a running stack: every role fresh, what it shows
 * (no holder ids, keys or addresses), and 1,000 hammering requests that cost the database one read a
 * second and leave the API's other answers alone.
 */
import { until } from '../support/poll.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { judgeReadiness, createReadinessProbe } from '../../src/observability/readiness.ts';
import { createRoleStatusRegistry } from '../../src/observability/role-status.ts';
import { startStatusPublisher } from '../../src/observability/status-publisher.ts';
import { listRoleStatus, type RoleStatusRow } from '../../src/storage/role-status-store.ts';
import { openTestSqlite } from '../support/test-databases.ts';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';

const quiet = { warn() {} };
const row = (role: string, progressAt: number | undefined, leaseState = 'held'): RoleStatusRow => ({ role, holder: 'h:1:00', leaseState, progressAt, detail: {}, publishedAt: 1_000_000 });

describe('judgeReadiness', () => {
  it('names each stale, lost or missing role with its age, and is ready only when all are fresh', () => {
    const now = 1_060_000;
    const rows = [row('marketdata', now - 500), row('indexer', now - 42_400), row('executor', now - 1_000, 'lost')];
    const r = judgeReadiness(rows, ['marketdata', 'indexer', 'executor', 'relayer'], now, 15_000);
    expect(r.ready).toBe(false);
    expect(r.roles.map((x) => [x.role, x.state, x.ageMs])).toEqual([
      ['marketdata', 'fresh', 500],
      ['indexer', 'stale', 42_400],
      ['executor', 'stale', 1_000],
      ['relayer', 'missing', undefined],
    ]);
    expect(r.summary).toBe('indexer stale for 42 s, executor stale for 1 s (lease lost), relayer has never reported');
    const fresh = judgeReadiness([row('marketdata', now - 15_000)], ['marketdata'], now, 15_000);
    expect(fresh).toMatchObject({ ready: true, summary: '' });
    // No progress yet: as old as its first publication.
    expect(judgeReadiness([row('marketdata', undefined)], ['marketdata'], now, 15_000).roles[0]).toMatchObject({ state: 'stale', ageMs: 60_000 });
  });
});

describe('status publisher', () => {
  it('writes the roles it runs, and after losing one marks only its own row, never a successor\'s', async () => {
    const db = await openTestSqlite();
    try {
      const a = createRoleStatusRegistry('host:1:aa');
      let at = 5_000;
      a.setLease('marketdata', 'held');
      const untrack = a.track('marketdata', () => ({ progressAt: at, detail: { x: 1 } }));
      const pubA = startStatusPublisher({ db, registry: a, intervalMs: 60_000, logger: quiet });
      await pubA.publishOnce();
      expect((await listRoleStatus(db)).map((r) => [r.role, r.holder, r.leaseState, r.progressAt])).toEqual([['marketdata', 'host:1:aa', 'held', 5_000]]);

      // a loses the lease and stops the role; b takes over and publishes.
      at = 6_000;
      untrack();
      a.setLease('marketdata', 'lost');
      const b = createRoleStatusRegistry('host:2:bb');
      b.setLease('marketdata', 'held');
      b.track('marketdata', () => ({ progressAt: 9_000 }));
      const pubB = startStatusPublisher({ db, registry: b, intervalMs: 60_000, logger: quiet });
      await pubB.publishOnce();
      await pubA.publishOnce();
      expect((await listRoleStatus(db)).map((r) => [r.holder, r.leaseState, r.progressAt])).toEqual([['host:2:bb', 'held', 9_000]]);
      await pubA.stop();
      await pubB.stop();
      // b's clean stop: its last word is its own row, as it stood.
      expect((await listRoleStatus(db))[0]).toMatchObject({ holder: 'host:2:bb', progressAt: 9_000 });
    } finally {
      await db.close();
    }
  });
});

describe('/readyz on a running stack', () => {
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack({ STATUS_PUBLISH_MS: '200' });
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('is ready once every role has reported, and shows figures without holder ids, keys or addresses', async () => {
    const base = new URL(t.stack.stockBaseUrl!).origin;
    let body: any;
    for (let i = 0; ; i++) {
      const res = await fetch(`${base}/readyz`);
      body = await res.json();
      if (res.status === 200) break;
      if (i > 200) throw new Error(`never ready: ${JSON.stringify(body)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(body).toMatchObject({ code: 200, errMsg: '', data: { status: 'ready', staleAfterMs: 15_000 } });
    expect(body.data.roles.map((r: any) => [r.role, r.state, r.lease])).toEqual([
      ['marketdata', 'fresh', 'held'],
      ['indexer', 'fresh', 'held'],
      ['executor', 'fresh', 'held'],
      ['relayer', 'fresh', 'held'],
    ]);
    expect(Object.keys(body.data.roles[1].detail).sort()).toEqual(['head', 'indexed', 'lagBlocks']);
    const text = JSON.stringify(body);
    expect(text).not.toMatch(/0x[0-9a-fA-F]{40}/);
    expect(text).not.toContain(t.demo.stock.keys.readOnly.apiKey);
    expect(text).not.toMatch(/:\d+:[0-9a-f]{8}/); // holder ids (host:pid:random)
    // The perp roles report on their own schedule (they may start after the stock side is ready).
    const perp = await until(async () => (await fetch(`${t.perpBaseUrl}/readyz`)).json(), (b: any) => b.code === 0, 60_000);
    expect(perp).toMatchObject({ code: 0, msg: 'ok', data: { status: 'ready' } });
    const health = await (await fetch(`${base}/healthz`)).json();
    expect(health).toMatchObject({ code: 200, data: { status: 'ok' } });
  });

  it('1,000 probes hammering /readyz all answer, and the API\'s signed answers beside them are unaffected', async () => {
    const base = new URL(t.stack.stockBaseUrl!).origin;
    const statuses = new Map<number, number>();
    let next = 0;
    const hammer = Array.from({ length: 20 }, async () => {
      while (next < 1_000) {
        next += 1;
        const res = await fetch(`${base}/readyz`);
        await res.arrayBuffer();
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      }
    });
    const prices: number[] = [];
    const signed = (async () => {
      for (let i = 0; i < 20; i++) prices.push((await t.readOnly.request('GET', '/api/v1/prices/AAPL')).code);
    })();
    await Promise.all([...hammer, signed]);
    expect(Object.fromEntries(statuses)).toEqual({ 200: 1_000 });
    expect(prices).toEqual(Array(20).fill(200));
  });

  it('a probe reads the table at most once per second however often it is asked', async () => {
    let now = 1_000_000;
    const probe = createReadinessProbe({ db: t.stack.db, roles: ['marketdata'], staleMs: 15_000, now: () => now });
    await Promise.all(Array.from({ length: 1_000 }, () => probe.check()));
    expect(probe.tableReads).toBe(1);
    now += 999;
    await probe.check();
    expect(probe.tableReads).toBe(1);
    now += 1;
    await Promise.all(Array.from({ length: 10 }, () => probe.check()));
    expect(probe.tableReads).toBe(2);
  });
});
