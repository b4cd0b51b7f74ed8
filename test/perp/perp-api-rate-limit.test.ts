/**
 * Rate limits of the perpetual API over real HTTP: per API key (120 a minute by default), per client
 * address for public routes and failed authentication; X-RateLimit headers on every answer of the
 * API; past the limit HTTP 429, code 42900 and Retry-After. Shared through Redis when REDIS_URL is set.
 */
import { afterEach, describe, expect, it } from 'vitest';
import Fastify from 'fastify';
import { registerRateLimit } from '../../src/http/rate-limiter.ts';
import { perpHarnessVariants, type PerpHarness } from '../support/perp-api-harness.ts';
import { until } from '../support/poll.ts';

describe.each(perpHarnessVariants())('perp API rate limit ($name)', (variant) => {
  let h: PerpHarness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  it('answers the 121st request of a key within a minute with 429 42900 and Retry-After (default 120)', async () => {
    h = await variant.start();
    const { client } = await h.key();
    const other = await h.key();
    const answers = [];
    // Sequential batches of concurrent requests: fast, and every request is counted once.
    for (let i = 0; i < 120; i += 20) answers.push(...(await Promise.all(Array.from({ length: 20 }, () => client.request('GET', 'instruments')))));
    expect(answers.map((a) => a.code)).toEqual(Array(120).fill(0));
    expect(answers.map((a) => a.rateLimit!.remaining).sort((a, b) => a - b)).toEqual(Array.from({ length: 120 }, (_, i) => i));
    expect(answers.every((a) => a.rateLimit!.limit === 120)).toBe(true);
    const refused = await client.request('GET', 'instruments');
    expect([refused.httpStatus, refused.code, refused.msg]).toEqual([429, 42900, 'Too many requests']);
    expect(refused.retryAfter).toBeGreaterThanOrEqual(1);
    expect(refused.retryAfter).toBeLessThanOrEqual(60);
    expect(refused.rateLimit).toMatchObject({ limit: 120, remaining: 0 });
    // Another key has its own budget.
    const fine = await other.client.request('GET', 'instruments');
    expect([fine.code, fine.rateLimit!.remaining]).toEqual([0, 119]);
  });

  it('takes the limit from configuration, and counts public calls and failed signatures per address', async () => {
    h = await variant.start({ limit: 3 });
    const a = await h.key();
    const codes: number[] = [];
    for (let i = 0; i < 4; i++) codes.push((await a.client.request('GET', 'api-keys')).code);
    expect(codes).toEqual([0, 0, 0, 42900]);
    // A stranger replaying bad signatures with a's key does not spend a's budget: it spends its address's.
    const b = await h.key();
    const forged = h.client(b.apiKey, 'not the secret');
    const bad: number[] = [];
    for (let i = 0; i < 4; i++) bad.push((await forged.request('GET', 'instruments')).code);
    expect(bad).toEqual([20006, 20006, 20006, 42900]);
    expect((await b.client.request('GET', 'instruments')).code).toBe(0);
    // The public route shares the address's bucket, which is spent by now.
    const res = await fetch(`${h.baseUrl}/v4/public/trader/time`);
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toMatch(/^[1-9][0-9]?$/);
    expect(res.headers.get('x-ratelimit-limit')).toBe('3');
    expect(res.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(((await res.json()) as { code: number }).code).toBe(42900);
  });

  it('counts a replayed signed request against its sender\'s address, not against the key whose signature it repeats', async () => {
    h = await variant.start({ limit: 3 });
    const a = await h.key();
    const req = a.client.sign('GET', 'api-keys');
    const first = await fetch(req.url, { method: req.method, headers: req.headers });
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-remaining')).toBe('2');
    // The same signature again: refused as a replay, counted on the address (3 a window).
    const replays: Array<[number, string | null]> = [];
    for (let i = 0; i < 3; i++) {
      const r = await fetch(req.url, { method: req.method, headers: req.headers });
      replays.push([((await r.json()) as { code: number }).code, r.headers.get('x-ratelimit-remaining')]);
    }
    expect(replays).toEqual([[20007, '2'], [20007, '1'], [20007, '0']]);
    // The key's own budget is as the first request left it.
    const next = await a.client.request('GET', 'api-keys');
    expect([next.code, next.rateLimit!.remaining]).toEqual([0, 1]);
  });
});

describe('rate limit over @fastify/rate-limit', () => {
  it('opens a window at the first request of a bucket, counts buckets apart and resets after the window', async () => {
    const app = Fastify();
    // A window long enough that a busy machine cannot end it between the hits that must share it.
    const windowMs = 1_500;
    const check = await registerRateLimit(app, { limit: 2, windowMs });
    app.get('/:bucket', async (req) => check(req, (req.params as { bucket: string }).bucket));
    await app.ready();
    const hit = async (bucket: string) => (await app.inject({ method: 'GET', url: `/${bucket}` })).json();
    const first = await hit('k');
    expect({ ...first, resetMs: undefined }).toEqual({ limit: 2, remaining: 1, limited: false, resetMs: undefined });
    expect(first.resetMs).toBeGreaterThan(0);
    expect(first.resetMs).toBeLessThanOrEqual(windowMs);
    expect(await hit('k')).toMatchObject({ remaining: 0, limited: false });
    expect(await hit('k')).toMatchObject({ remaining: 0, limited: true });
    expect(await hit('other')).toMatchObject({ remaining: 1, limited: false });
    // Until the window has run out: a hit inside it is only refused again (it moves no count that
    // matters), the first one after it opens a new window.
    const reset = await until(() => hit('k'), (r) => r.limited === false, 20_000);
    expect(reset).toMatchObject({ remaining: 1, limited: false });
    await app.close();
  });
});
