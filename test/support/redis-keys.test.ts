import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { dropRedisKeys } from './redis-keys.ts';

describe.runIf(process.env.REDIS_URL)('dropRedisKeys', () => {
  it('removes every key under the prefix, past one SCAN batch, and nothing beside it', async () => {
    const redis = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: 1 });
    const base = `test-drop-${process.pid}-${Date.now().toString(36)}`;
    try {
      const mine = Array.from({ length: 1_203 }, (_, i) => `${base}:a:${i}`);
      await redis.mset(...mine.flatMap((k) => [k, '1']));
      await redis.xadd(`${base}:a:stream`, '*', 'f', 'v');
      // A key whose name only begins like the prefix, without its separator, is another stack's.
      await redis.set(`${base}-other:k`, '1');
      expect(await dropRedisKeys(process.env.REDIS_URL!, `${base}:`)).toBe(1_204);
      expect(await redis.exists(...mine.slice(0, 3), `${base}:a:stream`)).toBe(0);
      expect(await redis.get(`${base}-other:k`)).toBe('1');
      await expect(dropRedisKeys(process.env.REDIS_URL!, '')).rejects.toThrow(/refusing/);
      await expect(dropRedisKeys(process.env.REDIS_URL!, `${base}*`)).rejects.toThrow(/refusing/);
    } finally {
      await redis.del(`${base}-other:k`);
      redis.disconnect();
    }
  });
});
