import { describe, expect, it } from 'vitest';
import { acquireMetrics, metricsActive, metricsRegistry } from './metrics-registry.ts';
import { EXECUTOR_REJECTION_REASONS, recordExecutorRejection, rejectionLabel, trackChainClock } from './venue-metrics.ts';

async function values(name: string): Promise<Array<{ labels: Partial<Record<string, string | number>>; value: number }>> {
  return (await metricsRegistry.getMetricsAsJSON()).find((m) => m.name === name)?.values ?? [];
}

describe('tokex_executor_rejections_total', () => {
  it('labels the fill policy reasons from the fixed set, anything else as other', () => {
    expect(rejectionLabel('oracle-stale')).toBe('oracle_stale');
    expect(rejectionLabel('market-outside-regular')).toBe('market_outside_regular');
    expect(rejectionLabel('no-quote')).toBe('no_quote');
    expect(rejectionLabel('0xdeadbeef order 42')).toBe('other');
  });

  it('exists for every reason from the start, and counts only while metrics are served', async () => {
    // Workers share modules between files (vitest.config.ts, isolate: false): counts are read as differences.
    const read = async () => new Map((await values('tokex_executor_rejections_total')).map((v) => [v.labels.reason, v.value]));
    const before = await read();
    expect([...before.keys()]).toEqual([...EXECUTOR_REJECTION_REASONS]);
    const served = metricsActive();
    recordExecutorRejection('oracle-stale');
    expect((await read()).get('oracle_stale')).toBe(before.get('oracle_stale')! + (served ? 1 : 0));
    const release = acquireMetrics();
    recordExecutorRejection('oracle-stale');
    recordExecutorRejection('something new');
    release();
    const after = await read();
    expect(EXECUTOR_REJECTION_REASONS.map((r) => after.get(r)! - before.get(r)!)).toEqual(
      EXECUTOR_REJECTION_REASONS.map((r) => (r === 'oracle_stale' ? (served ? 2 : 1) : r === 'other' ? 1 : 0)),
    );
  });
});

describe('tokex_chain_clock_skew_seconds', () => {
  it("reads each tracked chain's last skew at the scrape, in seconds, and nothing once untracked", async () => {
    // Chain ids of this test's own: a stack of another file in this worker may track its chain too.
    const ours = async () => (await values('tokex_chain_clock_skew_seconds')).filter((v) => String(v.labels.chain_id).startsWith('99000'));
    const untrack = trackChainClock({ chainId: 990001, figures: () => ({ chainTime: 1_000, block: 1, readAt: 0, skewMs: 222_880 }) });
    const none = trackChainClock({ chainId: 990002, figures: () => undefined });
    expect(await ours()).toEqual([{ labels: { chain_id: '990001' }, value: 222.88 }]);
    untrack();
    none();
    expect(await ours()).toEqual([]);
  });
});
