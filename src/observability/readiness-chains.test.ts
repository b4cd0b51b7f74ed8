import { describe, expect, it } from 'vitest';
import { createChainsReadinessProbe, type ReadinessProbe, type ReadinessReport } from './readiness.ts';
import { publicReport } from '../http/probe-routes.ts';

/** A probe answering `report`, or failing as an unreachable database does. */
function probe(report: Partial<ReadinessReport> | 'storage down'): ReadinessProbe {
  return {
    async check() {
      if (report === 'storage down') throw new Error('connect ECONNREFUSED');
      return { ready: true, staleMs: 15_000, checkedAt: 1_000, roles: [], summary: '', ...report };
    },
    tableReads: 1,
  };
}

describe('readiness of an API serving several chains', () => {
  it('stays ready while only another chain is not, naming that chain and its stale roles', async () => {
    const first = probe({ roles: [{ role: 'indexer', state: 'fresh', ageMs: 10, leaseState: 'held' }] });
    const stalled = probe({ ready: false, summary: 'executor stale for 20 s', roles: [{ role: 'executor', state: 'stale', ageMs: 20_000, leaseState: 'held' }] });
    const report = await createChainsReadinessProbe(first, [{ chainId: 31338, probe: stalled }, { chainId: 31339, probe: probe('storage down') }]).check();
    expect(report.ready).toBe(true);
    expect(report.summary).toBe('chain 31338 not ready: executor stale for 20 s; chain 31339 not ready: storage unavailable');
    expect(publicReport(report)).toEqual({
      status: 'ready',
      staleAfterMs: 15_000,
      checkedAt: 1_000,
      roles: [{ role: 'indexer', state: 'fresh', ageMs: 10, lease: 'held' }],
      summary: 'chain 31338 not ready: executor stale for 20 s; chain 31339 not ready: storage unavailable',
      chains: [
        { chainId: 31338, status: 'not_ready', summary: 'executor stale for 20 s', roles: [{ role: 'executor', state: 'stale', ageMs: 20_000, lease: 'held' }] },
        { chainId: 31339, status: 'not_ready', summary: 'storage unavailable', roles: [] },
      ],
    });
  });

  it("is not ready when the first chain is not (it holds the shared roles), and keeps the first chain's summary first", async () => {
    const report = await createChainsReadinessProbe(probe({ ready: false, summary: 'marketdata stale for 30 s' }), [{ chainId: 31338, probe: probe({}) }]).check();
    expect(report.ready).toBe(false);
    expect(report.summary).toBe('marketdata stale for 30 s');
    expect(report.chains).toEqual([{ chainId: 31338, ready: true, summary: '', roles: [] }]);
  });

  it('answers exactly the single-chain report when no other chain is served', async () => {
    const single = probe({ roles: [{ role: 'indexer', state: 'fresh', ageMs: 5, leaseState: 'held' }] });
    expect(Object.keys(publicReport(await single.check())).sort()).toEqual(['checkedAt', 'roles', 'staleAfterMs', 'status']);
  });
});
