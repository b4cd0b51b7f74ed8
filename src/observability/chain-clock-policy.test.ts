import { describe, expect, it } from 'vitest';
import { chainClockDetail, chainClockOf, judgeChainClock, measureChainSkew, skewAtFirstSight, skewSeconds, type ChainClockFigures } from './chain-clock-policy.ts';
import { judgeReadiness } from './readiness.ts';

/** 2026-11-25T01:54:52.120Z, a wall clock with milliseconds. */
const WALL = Date.UTC(2026, 10, 25, 1, 54, 52, 120);

/** The deployment's bounds: maxAge 180 s (3 × the 60 s heartbeat), the executor's 15 s margin, the hub's 60 s. */
const figures = (chainTime: number, skewMs = measureChainSkew(chainTime, WALL, undefined)): ChainClockFigures => ({
  chainTime,
  block: 812,
  readAt: WALL,
  skewMs,
  oracleMaxAgeS: 180,
  oracleAgeMarginS: 15,
  hubMaxClockSkewS: 60,
});

describe('the chain clock skew', () => {
  it('reads ahead straight off the latest block, to the millisecond', () => {
    expect(measureChainSkew(WALL + 222_880, WALL, undefined)).toBe(222_880);
    // A block stamped this very second (whole seconds: floor of the wall clock) is in step, not behind.
    expect(measureChainSkew(WALL - 120, WALL, undefined)).toBe(0);
  });

  it('counts an old latest block as behind only when it was seen appearing (an idle chain mines nothing)', () => {
    // Ten minutes since the last block, never seen appearing: idle, not behind.
    expect(measureChainSkew(WALL - 600_000, WALL, undefined)).toBe(0);
    // Seen appearing 75.12 s after its stamp: the node's clock is 75 s behind.
    const behind = skewAtFirstSight(WALL - 75_120, WALL);
    expect(behind).toBe(-75_120);
    expect(measureChainSkew(WALL - 75_120, WALL + 30_000, behind)).toBe(-75_120);
    // A lead wins over an older behind measure: the latest block is ahead now.
    expect(measureChainSkew(WALL + 5_000, WALL, -75_120)).toBe(5_000);
    // A block seen appearing ahead of its stamp's second is no behind measure at all.
    expect(measureChainSkew(WALL - 600_000, WALL, 400)).toBe(0);
  });

  it('rounds to whole seconds half away from zero, either way', () => {
    expect(skewSeconds(222_880)).toBe(223);
    expect(skewSeconds(222_499)).toBe(222);
    expect(skewSeconds(-75_500)).toBe(-76);
    expect(skewSeconds(0)).toBe(0);
  });
});

describe('judging the chain clock against the venue time checks', () => {
  it('refuses stock fills once the chain is ahead by the oracle age less the executor margin, naming both times and the bound', () => {
    const refusal = judgeChainClock(figures(WALL + 222_880));
    expect(refusal).toEqual({
      check: 'oracle-max-age',
      chainTime: WALL + 222_880,
      wallTime: WALL,
      skewMs: 222_880,
      limitS: 165,
      reason:
        "chain clock 223 s ahead (chain 2026-11-25T01:58:35.000Z at block 812, wall 2026-11-25T01:54:52.120Z); stock fills are refused past the oracle's 180 s age (maxAge); the executor allows at most 165 s ahead: the oracle's age less its 15 s margin",
    });
  });

  it('holds at a few seconds ahead and up to one millisecond short of the bound', () => {
    expect(judgeChainClock(figures(WALL + 3_000))).toBeUndefined();
    expect(judgeChainClock(figures(WALL, 164_999))).toBeUndefined();
    expect(judgeChainClock(figures(WALL, 165_000))?.check).toBe('oracle-max-age');
  });

  it("refuses once the chain is behind by more than the hub's MAX_CLOCK_SKEW: no update is taken, the answers age", () => {
    expect(judgeChainClock(figures(WALL - 60_000, -60_000))).toBeUndefined();
    expect(judgeChainClock(figures(WALL - 75_000, -75_120))).toEqual({
      check: 'hub-clock-skew',
      chainTime: WALL - 75_000,
      wallTime: WALL,
      skewMs: -75_120,
      limitS: 60,
      reason:
        "chain clock 75 s behind (chain 2026-11-25T01:53:37.120Z at block 812, wall 2026-11-25T01:54:52.120Z); the PriceFeedHub refuses prices observed more than 60 s after the block (MAX_CLOCK_SKEW), so the oracle's answers age and stock fills stop",
    });
  });

  it('judges nothing the chain does not bound: no feed, no hub', () => {
    const { oracleMaxAgeS: _a, hubMaxClockSkewS: _h, ...bare } = figures(WALL + 400_000);
    expect(judgeChainClock(bare)).toBeUndefined();
    expect(judgeChainClock({ ...bare, skewMs: -7_200_000 })).toBeUndefined();
  });

  it('reads the figures back from a published detail, and nothing from a malformed one', () => {
    const f = figures(WALL + 222_880);
    expect(chainClockOf({ chainClock: chainClockDetail(f) })).toEqual(f);
    const { hubMaxClockSkewS: _h, ...noHub } = f;
    expect(chainClockOf(JSON.parse(JSON.stringify({ chainClock: chainClockDetail(noHub) })))).toEqual({ ...noHub, hubMaxClockSkewS: undefined });
    expect(chainClockOf({ chainClock: { chainTime: '1', block: 1, readAt: 1, skewMs: 1 } })).toBeUndefined();
    expect(chainClockOf({ chainClock: null })).toBeUndefined();
    expect(chainClockOf(undefined)).toBeUndefined();
  });
});

describe('readiness with the chain clock', () => {
  const row = (role: string, detail: Record<string, unknown> = {}) => ({ role, holder: 'h:1:a', leaseState: 'held', progressAt: WALL - 400, detail, publishedAt: WALL - 400 });

  it('marks the fresh executor blocked, with the reason and both clocks, and is not ready', () => {
    const rows = [row('marketdata'), row('indexer'), row('executor', { queueDepth: 1, chainClock: chainClockDetail(figures(WALL + 222_880)) }), row('relayer')];
    const report = judgeReadiness(rows, ['marketdata', 'indexer', 'executor', 'relayer'], WALL + 1_000, 15_000);
    expect(report.ready).toBe(false);
    const executor = report.roles.find((r) => r.role === 'executor');
    expect(executor).toMatchObject({
      state: 'blocked',
      ageMs: 1_400,
      clock: { check: 'oracle-max-age', chainTime: WALL + 222_880, wallTime: WALL, skewMs: 222_880, limitS: 165 },
    });
    expect(report.summary).toBe(`executor blocked: ${judgeChainClock(figures(WALL + 222_880))!.reason}`);
    expect(report.roles.filter((r) => r.state !== 'fresh').map((r) => r.role)).toEqual(['executor']);
  });

  it('stays ready at a few seconds of skew', () => {
    const rows = [row('executor', { chainClock: chainClockDetail(figures(WALL + 3_000)) })];
    const report = judgeReadiness(rows, ['executor'], WALL + 1_000, 15_000);
    expect(report).toMatchObject({ ready: true, summary: '' });
    expect(report.roles[0].state).toBe('fresh');
  });

  it('does not judge a reading older than the stale threshold, and a stale role stays stale', () => {
    // The executor ticks on (progress 0.4 s ago) but its clock reading is 15.001 s old: not judged.
    const ticking = [{ ...row('executor', { chainClock: chainClockDetail(figures(WALL + 222_880)) }), progressAt: WALL + 14_601 }];
    expect(judgeReadiness(ticking, ['executor'], WALL + 15_000, 15_000).roles[0].state).toBe('blocked');
    expect(judgeReadiness(ticking, ['executor'], WALL + 15_001, 15_000).roles[0].state).toBe('fresh');
    const old = [row('executor', { chainClock: chainClockDetail(figures(WALL + 222_880)) })];
    expect(judgeReadiness(old, ['executor'], WALL + 16_000, 15_000).roles[0].state).toBe('stale');
  });
});
