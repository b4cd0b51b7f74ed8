/**
 * A log destination for a file descriptor that gathers lines in memory and writes them in one
 * synchronous write per 64 KiB or per 100 ms, whichever comes first. At thousands of requests a
 * second, pino's default asynchronous destination (sonic-boom) cost more per access line than the
 * signature check of the request; appending to an array and one write per batch costs about a
 * microsecond. Lines are whole in every write and keep their order; at most 100 ms of lines are in
 * memory, and `flushSync` (called on shutdown and on exit) writes them out.
 *
 * When the fd is a pipe whose reader falls behind, the bytes it does not take are kept and retried,
 * up to `maxPendingBytes` (default 8 MiB). Past that, new lines are dropped and counted rather than
 * kept without bound; once the reader catches up, a warning line says how many were lost.
 */
import fs from 'node:fs';

export interface BufferedDestination {
  write(line: string): boolean;
  /** pino's `logger.flush(cb)` calls this. */
  flush(cb?: (err?: Error) => void): void;
  flushSync(): void;
}

/** Every destination's flush, run once when the process exits. */
const onExit = new Set<() => void>();
let exitHooked = false;

export function createBufferedDestination(
  fd: number,
  opts: { maxBytes?: number; maxDelayMs?: number; maxPendingBytes?: number } = {},
): BufferedDestination {
  const maxBytes = opts.maxBytes ?? 64 * 1024;
  const maxDelayMs = opts.maxDelayMs ?? 100;
  const maxPending = opts.maxPendingBytes ?? 8 * 1024 * 1024;
  // Lines are encoded into this buffer as they come (one copy each), rather than joined and encoded
  // again per batch. A line longer than a third of the room left (UTF-8 takes at most 3 bytes per
  // UTF-16 unit) first sends what is held; one too long for the whole buffer goes on its own.
  const buffer = Buffer.allocUnsafe(Math.max(2 * maxBytes, 16 * 1024));
  let used = 0;
  /** Lines in `buffer`. */
  let count = 0;
  /** Bytes taken out of `buffer` that the fd has not accepted yet (a pipe that was full). */
  let pending: Buffer | undefined;
  /** Lines dropped since the fd last took everything. */
  let dropped = 0;
  let timer: NodeJS.Timeout | undefined;

  const schedule = () => {
    if (timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      flushSync();
    }, maxDelayMs);
    timer.unref();
  };

  /** Moves `bytes` (`lines` lines) behind what is pending, or counts them dropped past the cap. */
  function enqueue(bytes: Buffer, lines: number): void {
    if (pending && pending.length >= maxPending) dropped += lines;
    else pending = pending ? Buffer.concat([pending, bytes]) : Buffer.from(bytes);
  }

  function flushSync(): void {
    if (used > 0) {
      enqueue(buffer.subarray(0, used), count);
      used = 0;
      count = 0;
    }
    while (pending && pending.length > 0) {
      try {
        const n = fs.writeSync(fd, pending);
        pending = n >= pending.length ? undefined : pending.subarray(n);
      } catch (err) {
        // A non-blocking pipe whose reader is behind: keep the bytes and try again shortly.
        if ((err as NodeJS.ErrnoException).code === 'EAGAIN') return schedule();
        // Nowhere left to log to (stdout closed): drop rather than crash the service.
        pending = undefined;
        dropped = 0;
        return;
      }
      if (!pending && dropped > 0) {
        // Same JSON line format as pino's, level 40 (warn).
        pending = Buffer.from(`{"level":40,"time":${Date.now()},"dropped":${dropped},"msg":"log lines dropped: the output was not read fast enough"}\n`);
        dropped = 0;
      }
    }
  }

  function write(line: string): boolean {
    const worst = 3 * line.length;
    if (worst > buffer.length - used) {
      if (worst > buffer.length) {
        flushSync();
        enqueue(Buffer.from(line, 'utf8'), 1);
        flushSync();
        return true;
      }
      flushSync();
    }
    used += buffer.write(line, used, 'utf8');
    count++;
    if (used >= maxBytes) flushSync();
    else schedule();
    return true;
  }

  onExit.add(flushSync);
  if (!exitHooked) {
    exitHooked = true;
    process.once('exit', () => {
      for (const f of onExit) f();
    });
  }

  return {
    write,
    flush(cb) {
      flushSync();
      cb?.();
    },
    flushSync,
  };
}
