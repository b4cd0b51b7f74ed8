import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createBufferedDestination } from './buffered-destination.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokex-log-'));
let fd: number | undefined;
afterEach(() => {
  if (fd !== undefined) fs.closeSync(fd);
  fd = undefined;
});

function open(name: string): { fd: number; read(): string } {
  const file = path.join(dir, name);
  fd = fs.openSync(file, 'w');
  return { fd, read: () => fs.readFileSync(file, 'utf8') };
}

describe('buffered log destination', () => {
  it('holds lines until the size threshold, then writes them whole and in order', () => {
    const f = open('size.log');
    const d = createBufferedDestination(f.fd, { maxBytes: 100, maxDelayMs: 60_000 });
    d.write('{"n":1}\n');
    d.write('{"n":2}\n');
    expect(f.read()).toBe('');
    const long = `{"n":3,"pad":"${'x'.repeat(100)}"}\n`;
    d.write(long);
    expect(f.read()).toBe(`{"n":1}\n{"n":2}\n${long}`);
  });

  it('writes what it holds after the delay, and on flush', async () => {
    const f = open('delay.log');
    const d = createBufferedDestination(f.fd, { maxBytes: 1 << 20, maxDelayMs: 20 });
    d.write('a\n');
    await new Promise((r) => setTimeout(r, 80));
    expect(f.read()).toBe('a\n');
    d.write('b\n');
    d.flushSync();
    expect(f.read()).toBe('a\nb\n');
  });

  it('keeps the order of a line too long for its buffer among short ones', () => {
    const f = open('long.log');
    const d = createBufferedDestination(f.fd, { maxBytes: 100, maxDelayMs: 60_000 });
    const long = `{"pad":"${'é'.repeat(20_000)}"}\n`;
    d.write('a\n');
    d.write(long);
    d.write('b\n');
    d.flushSync();
    expect(f.read()).toBe(`a\n${long}b\n`);
  });

  it('keeps UTF-8 text intact', () => {
    const f = open('utf8.log');
    const d = createBufferedDestination(f.fd);
    d.write('{"msg":"µs → ok"}\n');
    d.flushSync();
    expect(f.read()).toBe('{"msg":"µs → ok"}\n');
  });

  it('keeps at most maxPendingBytes for a reader that stalls, then reports how many lines it dropped', () => {
    // A real pipe nobody reads: writes fail with EAGAIN once its buffer (64 KiB on Linux) is full.
    const fifo = path.join(dir, 'stalled.fifo');
    execFileSync('mkfifo', [fifo]);
    const writeFd = fs.openSync(fifo, fs.constants.O_RDWR | fs.constants.O_NONBLOCK);
    const readFd = fs.openSync(fifo, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
    try {
      const d = createBufferedDestination(writeFd, { maxBytes: 4096, maxDelayMs: 60_000, maxPendingBytes: 100_000 });
      const line = (n: number) => `{"n":${n},"pad":"${'x'.repeat(90)}"}\n`;
      const total = 10_000; // about 1 MB
      for (let n = 0; n < total; n++) d.write(line(n));
      d.flushSync();

      // Drain the pipe as a reader that came back would, letting the destination write the rest.
      let out = '';
      const buf = Buffer.alloc(1 << 16);
      for (let i = 0; i < 1000; i++) {
        let got = 0;
        try {
          got = fs.readSync(readFd, buf);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') throw err;
        }
        out += buf.subarray(0, got).toString('utf8');
        d.flushSync();
        if (got === 0 && out.endsWith('\n') && out.includes('"dropped"')) break;
      }
      const lines = out.trimEnd().split('\n').map((l) => JSON.parse(l) as { n?: number; dropped?: number; level?: number });
      const kept = lines.filter((l) => l.n !== undefined).map((l) => l.n as number);
      // What it kept: whole lines, in order, from the start, bounded by the pipe plus the cap.
      expect(kept).toEqual(kept.map((_, i) => i));
      expect(out.length).toBeLessThan(65_536 + 100_000 + 8_192 + 200);
      const notice = lines.at(-1)!;
      expect(notice).toMatchObject({ level: 40 });
      expect(notice.dropped).toBe(total - kept.length);
      expect(kept.length).toBeLessThan(total);

      // Afterwards lines flow again.
      d.write(line(-1));
      d.flushSync();
      expect(fs.readSync(readFd, buf)).toBe(line(-1).length);
    } finally {
      fs.closeSync(writeFd);
      fs.closeSync(readFd);
    }
  });
});
