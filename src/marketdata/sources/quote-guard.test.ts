import { describe, expect, it } from 'vitest';
import { createQuoteGuard, type QuoteGuardOptions } from './quote-guard.ts';
import type { SourceTick } from './quote-source.ts';

const T0 = 1_760_000_000_000;

const tick = (over: Partial<SourceTick> = {}): SourceTick => ({
  source: 'alpaca-sip',
  symbol: 'AAPL',
  bid: '229.80',
  ask: '229.84',
  last: '229.82',
  lastIsTrade: true,
  sourceTime: T0,
  receivedAt: T0,
  ...over,
});

const guardOf = (over: Partial<QuoteGuardOptions> = {}) =>
  createQuoteGuard({ symbols: ['AAPL', 'MSFT'], sources: ['alpaca-sip'], staleAfterMs: 3000, maxDivergenceBps: 25, ...over });

describe('quote guard, one source', () => {
  it('is no-data until the first tick, then live with that quote', () => {
    const g = guardOf();
    expect(g.status('AAPL', T0)).toEqual({
      symbol: 'AAPL',
      status: 'no-data',
      tradable: false,
      reasons: [{ code: 'no-data', source: 'alpaca-sip', detail: 'no accepted tick yet' }],
      lastTickAt: undefined,
      quote: undefined,
      divergenceBps: undefined,
    });
    expect(g.ingest(tick({ receivedAt: T0 + 40 }))).toBe('accepted');
    expect(g.status('AAPL', T0 + 100)).toEqual({
      symbol: 'AAPL',
      status: 'live',
      tradable: true,
      reasons: [],
      lastTickAt: T0 + 40,
      quote: { source: 'alpaca-sip', bid: '229.80', ask: '229.84', last: '229.82', sourceTime: T0, receivedAt: T0 + 40 },
      divergenceBps: undefined,
    });
    expect(g.status('MSFT', T0 + 100).status).toBe('no-data');
  });

  it('goes stale exactly after staleAfterMs of silence and recovers on the next tick', () => {
    const g = guardOf();
    g.ingest(tick());
    expect(g.status('AAPL', T0 + 3000).status).toBe('live');
    const stale = g.status('AAPL', T0 + 3001);
    expect(stale.status).toBe('stale');
    expect(stale.tradable).toBe(false);
    expect(stale.reasons).toEqual([{ code: 'stale', source: 'alpaca-sip', detail: 'no accepted tick for 3001 ms (limit 3000)' }]);
    // The quote stays visible while halted.
    expect(stale.quote?.bid).toBe('229.80');
    g.ingest(tick({ sourceTime: T0 + 9000, receivedAt: T0 + 9000, bid: '230.00', ask: '230.04' }));
    expect(g.status('AAPL', T0 + 9000)).toMatchObject({ status: 'live', reasons: [], quote: { bid: '230.00' } });
  });

  it('ages a lagging feed by its provider time, and a clock-ahead provider by receipt', () => {
    const g = guardOf();
    // Received now, but the quote is 5 s old: stale at once.
    g.ingest(tick({ sourceTime: T0 - 5000, receivedAt: T0 }));
    expect(g.status('AAPL', T0).reasons[0].detail).toBe('no accepted tick for 5000 ms (limit 3000)');
    // Provider clock 2 s ahead of ours: age counts from receipt.
    g.ingest(tick({ sourceTime: T0 + 2000, receivedAt: T0 }));
    expect(g.status('AAPL', T0 + 3000).status).toBe('live');
    expect(g.status('AAPL', T0 + 3001).status).toBe('stale');
  });

  it('does not call a closed session stale', () => {
    let open = true;
    const g = guardOf({ sessionOpen: () => open });
    g.ingest(tick());
    expect(g.status('AAPL', T0 + 60_000).status).toBe('stale');
    open = false;
    expect(g.status('AAPL', T0 + 60_000).status).toBe('live');
    expect(g.status('MSFT', T0 + 60_000).status).toBe('no-data');
  });

  it('drops duplicates and out-of-order ticks and counts every verdict per source', () => {
    const g = guardOf();
    expect(g.ingest(tick())).toBe('accepted');
    expect(g.ingest(tick({ receivedAt: T0 + 5 }))).toBe('duplicate');
    expect(g.ingest(tick({ sourceTime: T0 - 1, bid: '229.70' }))).toBe('out-of-order');
    // Same provider time, new prices: a second update within the millisecond.
    expect(g.ingest(tick({ ask: '229.83' }))).toBe('accepted');
    expect(g.ingest(tick({ sourceTime: T0 + 1, bid: '0.00' }))).toBe('rejected-value');
    expect(g.ingest(tick({ sourceTime: T0 + 1, bid: '229.90', ask: '229.85' }))).toBe('rejected-value');
    expect(g.ingest(tick({ sourceTime: T0 + 1, bid: '229.8O' }))).toBe('malformed');
    expect(g.ingest(tick({ sourceTime: T0 + 1, bid: '1e2' }))).toBe('malformed');
    expect(g.ingest(tick({ sourceTime: Number.NaN }))).toBe('malformed');
    expect(g.ingest(tick({ symbol: 'TSLA' }))).toBe('ignored');
    expect(g.ingest(tick({ source: 'polygon' }))).toBe('ignored');
    expect(g.counters()).toEqual({
      'alpaca-sip': { accepted: 2, duplicate: 1, outOfOrder: 1, malformed: 3, rejectedValue: 2, ignored: 1 },
      polygon: { accepted: 0, duplicate: 0, outOfOrder: 0, malformed: 0, rejectedValue: 0, ignored: 1 },
    });
    // Refused ticks moved nothing.
    expect(g.status('AAPL', T0).quote).toMatchObject({ bid: '229.80', ask: '229.83' });
  });

  it('holds a halt for recoverAfterMs after its conditions clear', () => {
    const g = guardOf({ recoverAfterMs: 2000 });
    g.ingest(tick());
    // The first tick ends the start-up no-data: recovering for 2 s.
    expect(g.status('AAPL', T0 + 1999)).toMatchObject({
      status: 'no-data',
      tradable: false,
      reasons: [{ code: 'recovering', source: 'alpaca-sip', detail: `clear since ${T0}; live from ${T0 + 2000}` }],
    });
    g.ingest(tick({ sourceTime: T0 + 2000, receivedAt: T0 + 2000, ask: '229.85' }));
    expect(g.status('AAPL', T0 + 2000).status).toBe('live');
    // Silence, then a tick at +10 s ends the stale halt; live again 2 s later.
    expect(g.status('AAPL', T0 + 9000).status).toBe('stale');
    g.ingest(tick({ sourceTime: T0 + 10_000, receivedAt: T0 + 10_000, ask: '229.86' }));
    expect(g.status('AAPL', T0 + 11_999).status).toBe('stale');
    expect(g.status('AAPL', T0 + 11_999).reasons.map((r) => r.code)).toEqual(['recovering']);
    expect(g.status('AAPL', T0 + 12_000).status).toBe('live');
  });

  it('refuses bad configuration naming the variable', () => {
    expect(() => guardOf({ staleAfterMs: 0 })).toThrow('QUOTE_STALE_AFTER_MS: must be a positive integer');
    expect(() => guardOf({ maxDivergenceBps: 2.5 })).toThrow('QUOTE_MAX_DIVERGENCE_BPS: must be a non-negative integer');
    expect(() => guardOf({ sources: ['a', 'a'] })).toThrow('sources: names must be distinct');
    expect(() => guardOf().status('TSLA', T0)).toThrow('symbol: TSLA is not guarded');
  });
});

describe('quote guard, two sources', () => {
  const two = (over: Partial<QuoteGuardOptions> = {}) => guardOf({ sources: ['alpaca-sip', 'alpaca-iex'], ...over });
  const iex = (over: Partial<SourceTick> = {}) => tick({ source: 'alpaca-iex', ...over });

  it('halts on divergence beyond the limit, exactly at the boundary', () => {
    const g = two();
    // Primary mid 100.00.
    g.ingest(tick({ bid: '99.99', ask: '100.01', last: '100.00' }));
    expect(g.status('AAPL', T0).status).toBe('no-data');
    // Mid 100.25: exactly 25 bps, allowed.
    g.ingest(iex({ bid: '100.24', ask: '100.26', last: '100.25' }));
    expect(g.status('AAPL', T0)).toMatchObject({ status: 'live', divergenceBps: '25.00', reasons: [] });
    // Mid 100.2501: 25.01 bps.
    g.ingest(iex({ sourceTime: T0 + 1, bid: '100.2401', ask: '100.2601', last: '100.25' }));
    const s = g.status('AAPL', T0 + 1);
    expect(s).toMatchObject({ status: 'diverged', tradable: false, divergenceBps: '25.01' });
    expect(s.reasons).toEqual([{ code: 'diverged', source: 'alpaca-iex', detail: 'mid 100.00 vs 100.2501: 25.01 bps (limit 25)' }]);
    // Below on the other side: 24.99 bps.
    g.ingest(iex({ sourceTime: T0 + 2, bid: '99.7401', ask: '99.7601', last: '99.75' }));
    expect(g.status('AAPL', T0 + 2)).toMatchObject({ status: 'live', divergenceBps: '24.99' });
  });

  it('rounds the reported divergence down and compares exactly', () => {
    const g = two({ maxDivergenceBps: 0 });
    g.ingest(tick({ bid: '229.80', ask: '229.84', last: '229.82' }));
    g.ingest(iex({ bid: '229.80', ask: '229.84', last: '229.83' }));
    expect(g.status('AAPL', T0)).toMatchObject({ status: 'live', divergenceBps: '0.00' });
    // Mids 229.82 vs 229.82000001: 0.0000435 bps, reported 0.00 but over a zero limit.
    g.ingest(iex({ sourceTime: T0 + 1, bid: '229.80', ask: '229.84000002' }));
    expect(g.status('AAPL', T0 + 1)).toMatchObject({ status: 'diverged', divergenceBps: '0.00' });
  });

  it('halts when the check source is stale or silent, unless only the primary is required', () => {
    const g = two();
    g.ingest(tick());
    expect(g.status('AAPL', T0).reasons).toEqual([{ code: 'no-data', source: 'alpaca-iex', detail: 'no accepted tick yet' }]);
    g.ingest(iex());
    g.ingest(tick({ sourceTime: T0 + 3000, receivedAt: T0 + 3000, ask: '229.85' }));
    const s = g.status('AAPL', T0 + 3500);
    expect(s.status).toBe('stale');
    expect(s.reasons).toEqual([{ code: 'stale', source: 'alpaca-iex', detail: 'no accepted tick for 3500 ms (limit 3000)' }]);
    // Not required: no halt, no divergence check either.
    const lenient = two({ requireAllSources: false });
    lenient.ingest(tick());
    expect(lenient.status('AAPL', T0)).toMatchObject({ status: 'live', divergenceBps: undefined });
    lenient.ingest(iex({ bid: '300.00', ask: '300.10' }));
    expect(lenient.status('AAPL', T0).status).toBe('diverged');
    expect(lenient.status('AAPL', T0 + 3001).status).toBe('stale'); // the primary always counts
  });

  it('lists every condition in force and picks the status by precedence', () => {
    const g = createQuoteGuard({ symbols: ['AAPL'], sources: ['a', 'b', 'c'], staleAfterMs: 1000, maxDivergenceBps: 10 });
    g.ingest(tick({ source: 'a', bid: '100.00', ask: '100.00', last: '100.00' }));
    g.ingest(tick({ source: 'b', bid: '101.00', ask: '101.00', last: '101.00' }));
    let s = g.status('AAPL', T0);
    expect(s.status).toBe('no-data');
    expect(s.reasons.map((r) => `${r.code}:${r.source}`)).toEqual(['no-data:c', 'diverged:b']);
    g.ingest(tick({ source: 'c', sourceTime: T0 - 2000, receivedAt: T0, bid: '100.00', ask: '100.00', last: '100.00' }));
    s = g.status('AAPL', T0);
    expect(s.status).toBe('stale');
    expect(s.reasons.map((r) => `${r.code}:${r.source}`)).toEqual(['stale:c', 'diverged:b']);
    expect(s.divergenceBps).toBe('100.00');
  });
});
