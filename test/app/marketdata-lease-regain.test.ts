/**
 * The marketdata role loses its lease and takes it back, in a process whose stock API stays up: the
 * API's prices go on moving afterwards. The API took its quote reader once, at its start; handed the
 * role's first feed itself, it read that stopped feed for ever (prices frozen at the moment of the
 * loss while every role reported fresh; seen in a test run under load). The context's switchable
 * reader follows the role's next feed (src/marketdata/switchable-quote-reader.ts).
 *
 * The lease is lost the way load loses it: this process's loop is held longer than the lease's
 * renewal allows (LEASE_TTL_MS 2 s: renewals give up after half of it).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';
import { until } from '../support/poll.ts';

let t: TestStack;
beforeAll(async () => {
  t = await startTestStack({ LEASE_TTL_MS: '2000', MARKETDATA_TICK_MS: '100' }, { role: ['marketdata', 'stock-api'] });
}, 120_000);
afterAll(async () => {
  await t?.stop();
});

const lastOf = async (): Promise<{ last: string; ts: number }> => {
  const r = await t.readOnly.request<any>('GET', '/api/v1/prices/AAPL');
  return { last: String(r.data?.basicInfo?.last), ts: Number(r.data?.basicInfo?.timestamp ?? r.data?.timestamp ?? 0) };
};

describe('marketdata: a lost and retaken lease', () => {
  it('the stock API reads the new feed: AAPL moves after the role is back', async () => {
    await until(lastOf, (q) => q.last !== 'undefined', 30_000);
    const lost = t.logs.length;
    // Hold the loop past the renewal's limit, as a stalled process would.
    const end = Date.now() + 2_500;
    while (Date.now() < end) {
      /* a stalled loop */
    }
    await until(async () => t.logs.slice(lost).join('\n'), (s) => /"role":"marketdata".*role taken over from stand-by|role taken over from stand-by.*"role":"marketdata"/.test(s), 30_000);
    expect(t.logs.slice(lost).some((l) => l.includes('"lease":"role:marketdata"') && l.includes('lease lost'))).toBe(true);
    // After the take-over, three different prices in a row: the feed the API reads is live.
    const seen = new Set<string>();
    await until(async () => {
      seen.add((await lastOf()).last);
      return seen.size;
    }, (n) => n >= 3, 30_000);
    expect(seen.size).toBeGreaterThanOrEqual(3);
  });
});
