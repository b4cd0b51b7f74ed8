import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { until } from './poll.ts';
import { monitorArgs, monitorRedis } from './redis-monitor.ts';

describe('MONITOR lines', () => {
  it('split into their quoted arguments, Redis\'s escapes undone', () => {
    expect(monitorArgs('+1795840394.516146 [0 127.0.0.1:55796] "evalsha" "ab12" "1" "test:sha:k:n-2"')).toEqual([
      'evalsha', 'ab12', '1', 'test:sha:k:n-2',
    ]);
    expect(monitorArgs('+1.0 [0 lua] "hset" "a \\"b\\"" "x\\\\y" "\\x00\\n"')).toEqual(['hset', 'a "b"', 'x\\y', '\x00\n']);
    expect(monitorArgs('+1.0 [0 unix:/tmp/r.sock] "ping"')).toEqual(['ping']);
  });
});

describe.runIf(process.env.REDIS_URL)('MONITOR on a socket of its own', () => {
  it('authenticates as the URL says, sees a command sent after it is ready, and refuses a wrong password without naming it', async () => {
    const admin = new Redis(process.env.REDIS_URL!);
    const user = `monitor-test-${process.pid}-${Date.now()}`;
    const base = new URL(process.env.REDIS_URL!);
    const urlWith = (password: string) => `redis://${encodeURIComponent(user)}:${encodeURIComponent(password)}@${base.host}`;
    await admin.call('ACL', 'SETUSER', user, 'on', '>right pass', '~*', '+@all');
    const seen: string[][] = [];
    const monitor = monitorRedis(urlWith('right pass'), (args) => seen.push(args));
    try {
      await monitor.ready;
      const key = `${user}:k`;
      await admin.set(key, 'v', 'PX', 10_000);
      await until(async () => seen.some((a) => a[0]?.toLowerCase() === 'set' && a[1] === key), Boolean, 5_000);
      const wrong = monitorRedis(urlWith('wrong pass'), () => undefined);
      const refusal = await wrong.ready.then(() => 'ready', (err: Error) => err.message);
      expect(refusal).toMatch(/^MONITOR was answered -WRONGPASS/);
      expect(refusal).not.toContain('wrong pass');
    } finally {
      monitor.close();
      await admin.call('ACL', 'DELUSER', user);
      admin.disconnect();
    }
  });
});
