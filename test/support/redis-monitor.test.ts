import { describe, expect, it } from 'vitest';
import { monitorArgs } from './redis-monitor.ts';

describe('MONITOR lines', () => {
  it('split into their quoted arguments, Redis\'s escapes undone', () => {
    expect(monitorArgs('+1795840394.516146 [0 127.0.0.1:55796] "evalsha" "ab12" "1" "test:sha:k:n-2"')).toEqual([
      'evalsha', 'ab12', '1', 'test:sha:k:n-2',
    ]);
    expect(monitorArgs('+1.0 [0 lua] "hset" "a \\"b\\"" "x\\\\y" "\\x00\\n"')).toEqual(['hset', 'a "b"', 'x\\y', '\x00\n']);
    expect(monitorArgs('+1.0 [0 unix:/tmp/r.sock] "ping"')).toEqual(['ping']);
  });
});
