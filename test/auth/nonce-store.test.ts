import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { createMemoryNonceStore, createRedisNonceStore, type NonceStore } from '../../src/auth/nonce-store.ts';
import { until } from '../support/poll.ts';
import { monitorRedis } from '../support/redis-monitor.ts';
import { dropRedisKeys } from '../support/redis-keys.ts';

const stores: Array<{ name: string; make(): Promise<{ store: NonceStore; done(): Promise<void> }> }> = [
  {
    name: 'memory',
    async make() {
      const store = createMemoryNonceStore();
      return { store, done: () => store.close() };
    },
  },
];
if (process.env.REDIS_URL) {
  stores.push({
    name: 'redis',
    async make() {
      const redis = new Redis(process.env.REDIS_URL!, { lazyConnect: false, maxRetriesPerRequest: 1 });
      const prefix = `test:${process.pid}:${Date.now()}:`;
      const store = createRedisNonceStore(redis, { prefix });
      return {
        store,
        done: async () => {
          redis.disconnect();
          await dropRedisKeys(process.env.REDIS_URL!, prefix).catch(() => undefined);
        },
      };
    },
  });
}

describe.each(stores)('$name nonce store', ({ make }) => {
  let cleanup: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const c of cleanup) await c();
  });

  it('accepts a nonce once per key and again after its window', async () => {
    const { store, done } = await make();
    cleanup.push(done);
    // A window long enough that a busy machine cannot end it between the claims that must be refused.
    const windowMs = 1_000;
    expect(await store.claim('key-a', 'n-1', windowMs)).toBe(true);
    expect(await store.claim('key-a', 'n-1', windowMs)).toBe(false);
    // Another key may use the same nonce.
    expect(await store.claim('key-b', 'n-1', windowMs)).toBe(true);
    // Claimed again once the window has run out (a refused claim changes nothing, so asking is the look).
    expect(await until(async () => store.claim('key-a', 'n-1', windowMs), (ok) => ok, 20_000)).toBe(true);
    // And taken by that claim: refused again.
    expect(await store.claim('key-a', 'n-1', windowMs)).toBe(false);
  });

  it('lets exactly one of many concurrent claims win', async () => {
    const { store, done } = await make();
    cleanup.push(done);
    const results = await Promise.all(Array.from({ length: 20 }, () => store.claim('key-c', 'same', 5_000)));
    expect(results.filter(Boolean)).toHaveLength(1);
  });
});

describe.runIf(process.env.REDIS_URL)('redis nonce store fence', () => {
  it('refuses a request signed before the fence once Redis has lost its data; later ones are claimed', async () => {
    const redis = new Redis(process.env.REDIS_URL!, { lazyConnect: false, maxRetriesPerRequest: 1 });
    const prefix = `test-fence:${process.pid}:${Date.now()}:`;
    try {
      const signedAt = Date.now() - 1_000;
      // The store sets the fence of a new Redis as it starts: a request signed before is refused,
      // as one from before a loss would be; one signed after it is claimed.
      const store = createRedisNonceStore(redis, { prefix });
      expect(await store.claim('k', 'before', 60_000, signedAt)).toBe(false);
      expect(await store.claim('k', 'n-0', 60_000, Number(await redis.get(`${prefix}__fence__`)))).toBe(true);
      expect(await store.claim('k', 'n-1', 60_000, Date.now() + 5)).toBe(true);
      expect(await store.claim('k', 'n-1', 60_000, Date.now() + 5)).toBe(false);
      const fence = Number(await redis.get(`${prefix}__fence__`));
      expect(fence).toBeGreaterThan(signedAt);
      // Redis loses everything: n-1 is no longer recorded, but its request predates the new fence.
      await redis.del(`${prefix}__fence__`, `${prefix}k:n-1`);
      // The new fence comes from Redis's clock after the loss: later than the old one.
      while (Date.now() <= fence + 1) await new Promise((r) => setImmediate(r));
      expect(await store.claim('k', 'n-1', 60_000, fence)).toBe(false);
      expect(await store.claim('k', 'n-2', 60_000, Date.now() + 5)).toBe(true);
      // Without a signing time (callers other than the auth hooks), only the nonce decides.
      expect(await store.claim('k', 'n-3', 60_000)).toBe(true);
    } finally {
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    }
  });
});

describe.runIf(process.env.REDIS_URL)('redis nonce store scripts', () => {
  it('claims by the script\'s hash (EVALSHA), and still once Redis has forgotten its scripts (SCRIPT FLUSH, as a restart does)', async () => {
    const redis = new Redis(process.env.REDIS_URL!, { lazyConnect: false, maxRetriesPerRequest: 1 });
    const prefix = `test:sha:${process.pid}:${Date.now()}:`;
    // Every command that names this store's keys, as Redis received it: the command and its key.
    const seen: string[] = [];
    const monitor = monitorRedis(process.env.REDIS_URL!, (args) => {
      const key = args.find((a) => a.startsWith(`${prefix}k:`));
      // The scripts' own SETs show too: only the calls are of interest.
      if (key && /^eval/i.test(args[0])) seen.push(`${args[0].toLowerCase()} ${key.slice(prefix.length)}`);
    });
    try {
      await monitor.ready;
      const store = createRedisNonceStore(redis, { prefix });
      expect(await store.claim('k', 'n-1', 60_000)).toBe(true);
      expect(await store.claim('k', 'n-2', 60_000)).toBe(true);
      await redis.script('FLUSH');
      expect(await store.claim('k', 'n-3', 60_000)).toBe(true);
      expect(await store.claim('k', 'n-3', 60_000)).toBe(false);
      await until(async () => seen.length, (n) => n >= 5, 5_000);
      expect(seen).toHaveLength(5);
      // n-1 may go as EVAL (the script not loaded yet); after the flush n-3's first EVALSHA is answered NOSCRIPT and sent again as EVAL.
      expect(seen.slice(1)).toEqual(['evalsha k:n-2', 'evalsha k:n-3', 'eval k:n-3', 'evalsha k:n-3']);
    } finally {
      monitor.close();
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    }
  });
});

describe('memory nonce store at volume', () => {
  it('keeps every one of 50,000 nonces through table growth and forgets them after the window', async () => {
    let t = 1_000_000;
    const store = createMemoryNonceStore({ now: () => t });
    const nonces = Array.from({ length: 50_000 }, (_, i) => `nonce-${i}-${(i * 2654435761) >>> 0}`);
    for (const n of nonces) expect(await store.claim('k', n, 45_000)).toBe(true);
    let replays = 0;
    for (const n of nonces) if (!(await store.claim('k', n, 45_000))) replays++;
    expect(replays).toBe(nonces.length);
    expect(await store.claim('other-key', nonces[0], 45_000)).toBe(true);
    t += 47_000;
    expect(await store.claim('k', nonces[123], 45_000)).toBe(true);
    await store.close();
  });

  it('under churn across many windows rejects every live replay and accepts every expired nonce again', async () => {
    let t = 5_000;
    const store = createMemoryNonceStore({ now: () => t });
    const live: string[] = [];
    for (let step = 0; step < 60_000; step++) {
      t += 1;
      const n = `c-${step}`;
      expect(store.claim('k', n, 1_000)).toBe(true);
      live.push(n);
      if (step % 997 === 0) {
        // Entries younger than the window are replays; those past it are free again.
        for (const old of live.slice(-900, -1)) expect(store.claim('k', old, 1_000)).toBe(false);
        const expired = live[live.length - 1_500];
        if (expired) expect(store.claim('k', expired, 1_000)).toBe(true);
      }
    }
    await store.close();
  });
});

describe('memory nonce store bounds', () => {
  it('refuses new nonces past its size bound until expired ones are swept', async () => {
    let t = 1_000;
    const store = createMemoryNonceStore({ now: () => t, maxEntries: 3, sweepMs: 60_000 });
    expect(store.claim('k', 'a-000001', 1_000)).toBe(true);
    expect(store.claim('k', 'b-000001', 1_000)).toBe(true);
    t += 500;
    expect(store.claim('k', 'c-000001', 1_000)).toBe(true);
    // Full of live nonces: a fresh one is refused (the client retries later), a replay still is.
    expect(store.claim('k', 'd-000001', 1_000)).toBe(false);
    expect(store.claim('k', 'a-000001', 1_000)).toBe(false);
    // a and b have expired: the sweep a full store runs makes room.
    t += 600;
    expect(store.claim('k', 'd-000001', 1_000)).toBe(true);
    expect(store.claim('k', 'e-000001', 1_000)).toBe(true);
    expect(store.claim('k', 'f-000001', 1_000)).toBe(false);
    expect(store.claim('k', 'c-000001', 1_000)).toBe(false);
    await store.close();
  });

  it('a long-lived nonce at the front of the sweep holds back no decision about the ones behind it', async () => {
    let t = 1_000;
    const store = createMemoryNonceStore({ now: () => t, maxEntries: 3, sweepMs: 100 });
    // A timestamp from the future: the first nonce lives ten times as long as the next two.
    expect(store.claim('k', 'long-0001', 10_000)).toBe(true);
    expect(store.claim('k', 'short-001', 1_000)).toBe(true);
    expect(store.claim('k', 'short-002', 1_000)).toBe(true);
    t += 2_000;
    // The sweep stops at the live long one; the expired short ones behind it are taken again...
    expect(store.claim('k', 'short-001', 1_000)).toBe(true);
    // ...the long one is still a replay, and a fresh nonce finds the table full of two live ones and
    // one expired one, which the full-table sweep cannot reach past the long one: refused for now.
    expect(store.claim('k', 'long-0001', 1_000)).toBe(false);
    expect(store.claim('k', 'short-001', 1_000)).toBe(false);
    expect(store.claim('k', 'fresh-001', 1_000)).toBe(false);
    // Once the long one expires, the sweep clears the front and room returns.
    t += 9_000;
    expect(store.claim('k', 'fresh-001', 1_000)).toBe(true);
    expect(store.claim('k', 'long-0001', 1_000)).toBe(true);
    await store.close();
  });

  it('keys nonces per scope without confusing a scope that ends where another nonce begins', async () => {
    const store = createMemoryNonceStore();
    expect(store.claim('key', 'abc-0001', 10_000)).toBe(true);
    expect(store.claim('key', 'abc-0001', 10_000)).toBe(false);
    expect(store.claim('key2', 'abc-0001', 10_000)).toBe(true);
    await store.close();
  });
});
