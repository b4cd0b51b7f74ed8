import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { sourceTestKit } from '../../../test/support/quote-source-harness.ts';
import type { SourceHealth } from './quote-source.ts';
import { createSourceLifecycle, type SourceLifecycleOptions } from './source-lifecycle.ts';

const SECRET = 'hunter2-secret';
const FAILED = 'quote source: stopped for good; fix it, then restart';

const { logLines: lines, logger } = sourceTestKit();

function harness(over: Partial<SourceLifecycleOptions> = {}) {
  const calls = { connect: 0, drop: 0 };
  const lc = createSourceLifecycle({
    name: 'test-source',
    redact: (t) => t.split(SECRET).join('[redacted]'),
    initialBackoffMs: 100,
    maxBackoffMs: 1000,
    backoffJitter: 0.2,
    now: () => Date.now(),
    random: () => 1,
    logger,
    connect: () => {
      calls.connect++;
      lc.connecting({ url: 'ws://x' });
    },
    drop: () => void calls.drop++,
    failedMessage: FAILED,
    ...over,
  });
  const states: SourceHealth[] = [];
  lc.onStateChange((h) => void states.push(h));
  return { lc, lines, calls, states };
}

beforeEach(() => {
  vi.useFakeTimers({ now: 1_000_000 });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('source lifecycle', () => {
  it('retries with doubling, jittered, capped delays and resets the backoff once live', async () => {
    const { lc, calls, lines } = harness();
    const started = lc.start();
    expect(lc.health()).toMatchObject({ state: 'connecting', connects: 1, retryAttempt: 0 });
    const delays: number[] = [];
    for (let i = 0; i < 5; i++) {
      lc.lose('closed', 'connection closed (1006)');
      const h = lc.health();
      expect(h.state).toBe('reconnecting');
      delays.push(h.nextRetryAt! - Date.now());
      vi.advanceTimersByTime(h.nextRetryAt! - Date.now());
    }
    await started; // the first loss settled start()
    // random() = 1 is the top of the ±20 % jitter; the cap holds after it.
    expect(delays).toEqual([120, 240, 480, 960, 1000]);
    expect(calls).toEqual({ connect: 6, drop: 5 });
    expect(lc.health()).toMatchObject({ state: 'connecting', connects: 6, retryAttempt: 5, nextRetryAt: undefined });
    lc.live({ symbols: 2 });
    expect(lc.health()).toMatchObject({ state: 'live', ready: true, retryAttempt: 0 });
    expect(lines.at(-1)).toEqual(['info', { source: 'test-source', symbols: 2, connects: 6 }, 'quote source: live']);
    lc.lose('closed', 'again', 5000);
    expect(lc.health().nextRetryAt! - Date.now()).toBe(5000);
  });

  it('stops for good on fail: no retry, the fix-it line logged, and start() tries afresh', async () => {
    const { lc, calls, lines, states } = harness();
    const started = lc.start();
    lc.fail(402, `402 auth failed for ${SECRET}`);
    await started;
    expect(lc.health()).toMatchObject({ state: 'failed', lastError: { code: 402, message: '402 auth failed for [redacted]' }, nextRetryAt: undefined });
    expect(lines.at(-1)).toEqual(['error', { source: 'test-source', error: lc.lastError }, FAILED]);
    lc.lose('closed', 'late close'); // ignored once failed
    vi.advanceTimersByTime(120_000);
    expect(calls).toEqual({ connect: 1, drop: 1 });
    expect(states.map((h) => h.state)).toEqual(['connecting', 'failed']);
    void lc.start();
    expect(lc.health()).toMatchObject({ state: 'connecting', connects: 2, lastError: undefined });
  });

  it('stop() cancels a scheduled retry', () => {
    const { lc, calls } = harness();
    void lc.start();
    lc.lose('closed', 'gone');
    lc.stop();
    expect(lc.health()).toMatchObject({ state: 'stopped', nextRetryAt: undefined });
    vi.advanceTimersByTime(120_000);
    expect(calls.connect).toBe(1);
  });

  it('redacts errors and samples, logs one malformed sample per connection, and survives throwing listeners', () => {
    const { lc, lines } = harness({ unconfirmedSymbols: () => ['MSFT'] });
    void lc.start();
    lc.onStateChange(() => {
      throw new Error('listener bug');
    });
    lc.onTick(() => {
      throw new Error('tick bug');
    });
    const ticks: unknown[] = [];
    lc.onTick((t) => void ticks.push(t));
    lc.malformed(`{"secret":"${SECRET}"}`);
    lc.malformed('again');
    lc.setError('socket', `echo ${SECRET}`);
    lc.setState('subscribing');
    lc.emit({ source: 'test-source', symbol: 'AAPL', bid: '1.00', ask: '1.02', last: '1.01', lastIsTrade: false, sourceTime: 1, receivedAt: 2 });
    lc.heard(Date.now());
    const h = lc.health();
    expect(h).toMatchObject({ state: 'subscribing', lastMessageAt: Date.now(), unconfirmedSymbols: ['MSFT'], lastError: { code: 'socket', message: 'echo [redacted]' } });
    expect(h.counters.malformed).toBe(2);
    expect(ticks).toHaveLength(1);
    const said = lines.map((l) => l[2]);
    expect(said.filter((m) => m === 'quote source: malformed message skipped')).toHaveLength(1);
    expect(said).toContain('quote source: state listener threw');
    expect(said).toContain('quote source: tick listener threw');
    expect(JSON.stringify(lines)).not.toContain(SECRET);
    lc.connecting({}); // a new connection logs its first malformed sample again
    lc.malformed('third');
    expect(lines.filter((l) => l[2] === 'quote source: malformed message skipped')).toHaveLength(2);
  });
});
