/**
 * How long a durable write takes on the disk that holds a directory: the median of a few
 * `fdatasync` calls after a 4 KiB write, in a file of its own that is removed afterwards. The perp
 * journal's `PERP_JOURNAL_WRITER=auto` reads it once at start to decide where its commits run
 * (src/perp/sequencer/journal-writer.ts journalOnWorker): a commit on the order thread stops that
 * thread for its sync, which costs nothing worth a thread hop on a disk that syncs in a fraction of a
 * millisecond, and stalls every order behind it on one that takes several.
 */
import { closeSync, fdatasyncSync, openSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';

/** Median milliseconds of a 4 KiB write's `fdatasync` in `dir`; Infinity when it cannot be measured there. */
export function measureSyncLatencyMs(dir: string, samples = 7): number {
  const file = path.join(dir, `.tokex-sync-probe-${process.pid}-${Date.now()}`);
  let fd: number | undefined;
  try {
    fd = openSync(file, 'w');
    const page = Buffer.alloc(4096, 0x5a);
    const times: number[] = [];
    for (let i = 0; i < samples; i++) {
      // A new page at the end each time: the file grows, as a WAL does between checkpoints.
      writeSync(fd, page, 0, page.length, i * page.length);
      const t0 = performance.now();
      fdatasyncSync(fd);
      times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    return times[Math.floor(times.length / 2)];
  } catch {
    return Infinity;
  } finally {
    if (fd !== undefined) closeSync(fd);
    rmSync(file, { force: true });
  }
}
