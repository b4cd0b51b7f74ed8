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
  const { hostname, port, username, password } = new URL(url);
  const socket: Socket = connect({ host: hostname || '127.0.0.1', port: Number(port || 6379) });
  // A URL with a password authenticates first (AUTH, as ioredis would): one more OK to read.
  const auth = password ? [...(username ? [decodeURIComponent(username)] : []), decodeURIComponent(password)] : [];
  let buffered = '';
  let oks = auth.length > 0 ? 2 : 1;
  let answered = false;
  let resolveReady!: () => void;
  let rejectReady!: (error: Error) => void;
  const ready = new Promise<void>((resolve, reject) => {
    resolveReady = resolve;
    rejectReady = reject;
  });
  socket.setEncoding('utf8');
  socket.on('connect', () => {
    if (auth.length > 0) socket.write(resp(['AUTH', ...auth]));
    socket.write('MONITOR\r\n');
  });
  socket.on('error', (error) => rejectReady(error));
  socket.on('data', (chunk: string) => {
    buffered += chunk;
    let end: number;
    while ((end = buffered.indexOf('\r\n')) >= 0) {
      const line = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      if (!answered) {
        if (line !== '+OK') {
          // The reply names no secret (Redis answers WRONGPASS or NOAUTH without the password).
          answered = true;
          rejectReady(new Error(`MONITOR was answered ${line}`));
          socket.destroy();
        } else if (--oks === 0) {
          answered = true;
          resolveReady();
        }
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

/** A command as a RESP array of bulk strings. */
function resp(args: string[]): string {
  return `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`;
}
