import { describe, expect, it } from 'vitest';
import { renderStatus, type StatusReport } from './status-command.ts';

const line = (role: string, state: 'fresh' | 'stale' | 'missing' = 'fresh') => ({ role, state, ...(state === 'missing' ? {} : { ageMs: 400, lease: 'held', holder: 'h:1:a' }) });

describe('renderStatus with several chains', () => {
  it('one section per chain, each with its table and verdict; one chain as before', () => {
    const first: StatusReport = { ok: true, staleAfterMs: 15_000, chainId: 31337, source: '/d/tokex.sqlite', roles: [line('marketdata'), line('indexer')] };
    const single = renderStatus(first);
    expect(single).not.toMatch(/^chain /m);
    expect(single).toMatch(/\n\nall 2 roles fresh \(stale after 15 s\); from \/d\/tokex\.sqlite$/);

    const several = renderStatus({ ...first, ok: false, chains: [{ chainId: 31338, ok: false, source: '/d/chains/31338/tokex.sqlite', roles: [line('indexer'), line('executor', 'missing'), line('relayer')] }] });
    const sections = several.split(/\n\n(?=chain )/);
    expect(sections).toHaveLength(2);
    expect(sections[0].split('\n')[0]).toBe('chain 31337 (the first chain: every role)');
    expect(sections[0]).toContain('all 2 roles fresh (stale after 15 s); from /d/tokex.sqlite');
    expect(sections[1].split('\n')[0]).toBe('chain 31338 (its own indexer, executor and relayer)');
    expect(sections[1]).toMatch(/^executor\s+missing\s+-/m);
    expect(sections[1]).toContain('1 of 3 roles not fresh: executor (stale after 15 s); from /d/chains/31338/tokex.sqlite');
  });
});

describe('renderStatus with a blocked role', () => {
  it('shows the executor blocked in the table and the verdict, and says the stock venue cannot fill and why', () => {
    const reason = "chain clock 223 s ahead (chain 2026-11-25T01:58:35.000Z at block 812, wall 2026-11-25T01:54:52.120Z); stock fills are refused past the oracle's 180 s age (maxAge); the executor allows at most 165 s ahead: the oracle's age less its 15 s margin";
    const out = renderStatus({
      ok: false,
      staleAfterMs: 15_000,
      source: '/d/tokex.sqlite',
      roles: [line('marketdata'), { ...line('executor'), state: 'blocked', reason, detail: { queueDepth: 2, clockSkewS: 223, chainClock: { skewMs: 222_880 } } }],
    });
    const lines = out.split('\n');
    expect(lines.find((l) => l.startsWith('executor'))).toMatch(/^executor\s+blocked\s+-\s+0\.4 s\s+held\s+h:1:a\s+queueDepth=2 clockSkewS=223$/);
    expect(lines.slice(-2)).toEqual([
      '1 of 2 roles not fresh: executor blocked (stale after 15 s); from /d/tokex.sqlite',
      `the stock venue cannot fill: ${reason}`,
    ]);
  });
});
