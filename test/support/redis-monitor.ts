import { connect, type Socket } from 'node:net';

/**
 * What Redis received, as its MONITOR command shows it, on a socket of its own.
 *
 * ioredis's `monitor()` connection could fail with "Command queue state error" when MONITOR's first
 * lines arrived with its OK on a busy Redis (other test files' MULTI and HSET, in CI): the lines
 * reached a queue with no command in it and the error was uncaught. A plain socket has no queue:
 * every `+` line after the OK is one command, parsed into its quoted arguments.
 */
export interface RedisMonitor {
  /** Resolves once Redis has answered MONITOR: commands sent after it are seen. */
  readonly ready: Promise<void>;
  close(): void;
}

export function monitorRedis(url: string, onCommand: (args: string[]) => void): RedisMonitor {
  const { hostname, port } = new URL(url);
  const socket: Socket = connect({ host: hostname || '127.0.0.1', port: Number(port || 6379) });
  let buffered = '';
  let answered = false;
  let resolveReady!: () => void;
  let rejectReady!: (error: Error) => void;
  const ready = new Promise<void>((resolve, reject) => {
    resolveReady = resolve;
    rejectReady = reject;
  });
  socket.setEncoding('utf8');
  socket.on('connect', () => socket.write('MONITOR\r\n'));
  socket.on('error', (error) => rejectReady(error));
  socket.on('data', (chunk: string) => {
    buffered += chunk;
    let end: number;
    while ((end = buffered.indexOf('\r\n')) >= 0) {
      const line = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      if (!answered) {
        answered = true;
        if (line === '+OK') resolveReady();
        else rejectReady(new Error(`MONITOR was answered ${line}`));
        continue;
      }
      if (line.startsWith('+')) onCommand(monitorArgs(line));
    }
  });
  return { ready, close: () => socket.destroy() };
}

/** `+1795840394.516146 [0 127.0.0.1:55796] "evalsha" "ab12" "1"` → ['evalsha', 'ab12', '1']. */
export function monitorArgs(line: string): string[] {
  const args: string[] = [];
  for (const match of line.matchAll(/"((?:[^"\\]|\\.)*)"/g)) {
    args.push(match[1].replace(/\\x([0-9a-f]{2})|\\(.)/gi, (_all, hex: string | undefined, ch: string) => {
      if (hex) return String.fromCharCode(parseInt(hex, 16));
      return ({ n: '\n', r: '\r', t: '\t', a: '\x07', b: '\b' } as Record<string, string>)[ch] ?? ch;
    }));
  }
  return args;
}
