import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config/app-config.ts';
import { accessLoggerOf, createLogger, prettyLogs } from './logger.ts';

function capture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _enc, cb) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      cb();
    },
  });
  return { lines, destination };
}

describe('a readable terminal (issue 41)', () => {
  it('drops the per-request lines when requests are off, and keeps every other line', () => {
    const { lines, destination } = capture();
    const logger = createLogger({ destination, requests: false });
    accessLoggerOf(logger).info({ method: 'GET', url: '/x', status: 200, ms: 1 }, 'request');
    logger.warn({ role: 'indexer' }, 'behind');
    expect(lines.map((l) => JSON.parse(l).msg)).toEqual(['behind']);
  });

  it('keeps them by default', () => {
    const { lines, destination } = capture();
    accessLoggerOf(createLogger({ destination })).info({ status: 200 }, 'request');
    expect(lines.map((l) => JSON.parse(l).msg)).toEqual(['request']);
  });

  it('LOG_REQUESTS: off in the embedded demo, on with a chain of your own, and the setting wins', () => {
    expect(loadConfig({}).logRequests).toBe(false);
    expect(loadConfig({ LOG_REQUESTS: '1' }).logRequests).toBe(true);
    expect(loadConfig({ RPC_URL: 'http://127.0.0.1:1', CHAIN_ID: '1' }).logRequests).toBe(true);
    expect(loadConfig({ RPC_URL: 'http://127.0.0.1:1', CHAIN_ID: '1', LOG_REQUESTS: 'false' }).logRequests).toBe(false);
  });

  it('pretty on a terminal, JSON through a pipe, unless LOG_FORMAT says', () => {
    expect(prettyLogs('auto', true)).toBe(true);
    expect(prettyLogs('auto', false)).toBe(false);
    expect(prettyLogs('json', true)).toBe(false);
    expect(prettyLogs('pretty', false)).toBe(true);
    expect(loadConfig({ LOG_FORMAT: 'json' }).logFormat).toBe('json');
    expect(() => loadConfig({ LOG_FORMAT: 'xml' })).toThrow(/LOG_FORMAT/);
  });
});
