import { PassThrough } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createAccessLogger, createLogger, hundredthsText } from './logger.ts';

describe('access log line', () => {
  it('writes ms rounded to hundredths exactly as Math.round(ms * 100) / 100 prints it', () => {
    for (const ms of [0, 0.004, 0.005, 0.1, 0.12, 0.5, 1, 1.05, 2.999, 10.1, 123.456, 99999.99]) {
      expect(hundredthsText(ms)).toBe(String(Math.round(ms * 100) / 100));
    }
    fc.assert(
      fc.property(fc.double({ min: 0, max: 1e7, noNaN: true }), (ms) => {
        expect(Number(hundredthsText(ms))).toBe(Math.round(ms * 100) / 100);
        expect(hundredthsText(ms)).toMatch(/^(0|[1-9]\d*)(\.\d{1,2})?$/);
      }),
    );
  });

  it('is one JSON line in pino format with the uuid, and time within the call', async () => {
    const out = new PassThrough();
    const chunks: string[] = [];
    out.on('data', (c) => chunks.push(String(c)));
    const logger = createLogger({ level: 'info', destination: out });
    const access = createAccessLogger(logger)!;
    const before = Date.now();
    access({ uuid: 'u-1', method: 'GET', url: '/api/v1/prices/AAPL?x="y"', status: 200, ms: 0.126 });
    access({ uuid: 'u-2', method: 'POST', url: '/b', status: 400, ms: 3 });
    const after = Date.now();
    await new Promise((r) => setImmediate(r));
    const lines = chunks.join('').trimEnd().split('\n').map((l) => JSON.parse(l));
    expect(lines).toMatchObject([
      { level: 30, uuid: 'u-1', method: 'GET', url: '/api/v1/prices/AAPL?x="y"', status: 200, ms: 0.13, msg: 'request' },
      { level: 30, uuid: 'u-2', method: 'POST', url: '/b', status: 400, ms: 3, msg: 'request' },
    ]);
    for (const l of lines) {
      expect(l.time).toBeGreaterThanOrEqual(before);
      expect(l.time).toBeLessThanOrEqual(after);
    }
  });

  it('is not written above info', () => {
    expect(createAccessLogger(createLogger({ level: 'warn', destination: new PassThrough() }))).toBeUndefined();
  });
});
