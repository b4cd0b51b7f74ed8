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

  it('keeps UTF-8 text intact', () => {
    const f = open('utf8.log');
    const d = createBufferedDestination(f.fd);
    d.write('{"msg":"µs → ok"}\n');
    d.flushSync();
    expect(f.read()).toBe('{"msg":"µs → ok"}\n');
  });
});
