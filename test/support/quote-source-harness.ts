/**
 * What the quote-source tests share whatever the provider: waiting on a source's state, collecting
 * its ticks, a logger that records every line, cleanups run after each test, and a check that a
 * credential appears nowhere in what a source logged or reported.
 */
import { afterEach } from 'vitest';
import type { MarketDataLogger } from '../../src/marketdata/history-seeder.ts';
import type { QuoteSource, SourceHealth, SourceTick } from '../../src/marketdata/sources/quote-source.ts';

/** Resolves with the first health snapshot (now or on a later state change) that satisfies `test`. */
export function untilHealth(source: QuoteSource, test: (h: SourceHealth) => boolean): Promise<SourceHealth> {
  const h = source.health();
  if (test(h)) return Promise.resolve(h);
  return new Promise((resolve) => {
    const off = source.onStateChange((snapshot) => {
      if (!test(snapshot)) return;
      off();
      resolve(snapshot);
    });
  });
}

/** Collects a source's ticks and lets a test wait for the n-th one (registered after any earlier listener). */
export function tickLog(source: QuoteSource) {
  const ticks: SourceTick[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  source.onTick((t) => {
    ticks.push(t);
    for (const w of waiters.filter((x) => ticks.length >= x.n)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve();
    }
  });
  return {
    ticks,
    /** Resolves once `n` ticks have arrived in all. */
    count: (n: number): Promise<void> => (ticks.length >= n ? Promise.resolve() : new Promise((resolve) => waiters.push({ n, resolve }))),
  };
}

/**
 * For a test file's top level: a logger recording each call as `[level, ...args]` in `logLines`,
 * and `defer`, whose cleanups run after each test, last first; the log is emptied then too.
 */
export function sourceTestKit() {
  const logLines: unknown[][] = [];
  const logger = {
    info: (...args: unknown[]) => void logLines.push(['info', ...args]),
    warn: (...args: unknown[]) => void logLines.push(['warn', ...args]),
    error: (...args: unknown[]) => void logLines.push(['error', ...args]),
  } as unknown as MarketDataLogger;
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
    logLines.length = 0;
  });
  const defer = (cleanup: () => Promise<void>): void => void cleanups.push(cleanup);
  /** A test's fake server and source, the source stopped after the test, its ticks logged. */
  const adopt = <V, S extends QuoteSource>(server: V, source: S) => {
    defer(() => source.stop());
    return { server, source, log: tickLog(source) };
  };
  return { logLines, logger, defer, adopt };
}

/** Retries a test does not wait long for: 20 ms doubling to 200 ms, no jitter. */
export const FAST_RETRIES = { initialBackoffMs: 20, maxBackoffMs: 200, random: () => 0.5 };

/** A test's `setup()` (its fake server and source) with the source started, and the server's first connection. */
export async function started<T extends { server: { connections: readonly unknown[] }; source: QuoteSource }>(
  made: Promise<T>,
): Promise<T & { conn: T['server']['connections'][number] }> {
  const s = await made;
  await s.source.start();
  return { ...s, conn: s.server.connections[0] };
}

/** Whether `secret` appears anywhere in `things` (errors with their message and stack, bigints as text). */
export const leaks = (secret: string, ...things: unknown[]): boolean =>
  JSON.stringify(things, (_k, v: unknown) => (v instanceof Error ? `${v.message} ${v.stack}` : typeof v === 'bigint' ? String(v) : v)).includes(secret);
