import { spawnSync } from 'node:child_process';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { accessLoggerOf, createLogger } from './logger.ts';

function capture(level = 'info') {
  const out = new PassThrough();
  const chunks: string[] = [];
  out.on('data', (c) => chunks.push(String(c)));
  const logger = createLogger({ level, destination: out });
  const lines = async () => {
    await new Promise((r) => setImmediate(r));
    return chunks.join('').trimEnd().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
  };
  return { logger, lines };
}

describe('logger', () => {
  it('redacts secret-bearing fields wherever a careless call puts them', async () => {
    const { logger, lines } = capture();
    logger.info(
      {
        apiSecret: 's1',
        secret: 's2',
        privateKey: '0xabc',
        signature: 'sig',
        masterKey: 'mk',
        key: { apiSecret: 's3', privateKey: '0xdef', label: 'kept' },
        headers: { 'x-api-sign': 'hexsig', authorization: 'Bearer t', 'x-api-key': 'visible' },
        req: { headers: { 'x-api-sign': 'hexsig2', authorization: 'Bearer u' } },
      },
      'careless',
    );
    const [line] = await lines();
    expect(line).toMatchObject({
      msg: 'careless',
      apiSecret: '[redacted]',
      secret: '[redacted]',
      privateKey: '[redacted]',
      signature: '[redacted]',
      masterKey: '[redacted]',
      key: { apiSecret: '[redacted]', privateKey: '[redacted]', label: 'kept' },
      headers: { 'x-api-sign': '[redacted]', authorization: '[redacted]', 'x-api-key': 'visible' },
      req: { headers: { 'x-api-sign': '[redacted]', authorization: '[redacted]' } },
    });
    const text = JSON.stringify(line);
    for (const secret of ['s1', 's2', 's3', '0xabc', '0xdef', '"sig"', 'hexsig', 'Bearer', 'mk']) expect(text).not.toContain(secret);
  });

  it('writes the request line of the HTTP layer as an ordinary pino line, to the same destination in order', async () => {
    const { logger, lines } = capture();
    logger.info({ uuid: 'u-0' }, 'before');
    accessLoggerOf(logger).info({ uuid: 'u-1', method: 'GET', url: '/api/v1/prices/AAPL?x="y"', status: 200, ms: 0.13 }, 'request');
    logger.info({ uuid: 'u-2' }, 'after');
    expect(await lines()).toMatchObject([
      { uuid: 'u-0', msg: 'before' },
      { level: 30, uuid: 'u-1', method: 'GET', url: '/api/v1/prices/AAPL?x="y"', status: 200, ms: 0.13, msg: 'request' },
      { uuid: 'u-2', msg: 'after' },
    ]);
  });

  it('writes nothing below its level, the access lines included', async () => {
    const { logger, lines } = capture('warn');
    logger.info({ uuid: 'u-2' }, 'request');
    accessLoggerOf(logger).info({ uuid: 'u-4' }, 'request');
    logger.warn({ uuid: 'u-3' }, 'kept');
    expect((await lines()).map((l) => l.uuid)).toEqual(['u-3']);
  });

  it('writes out what stdout still buffers when the process ends, by itself or by process.exit', () => {
    const module = fileURLToPath(new URL('./logger.ts', import.meta.url));
    for (const ending of ['', 'process.exit(0);']) {
      const code = `const { createLogger } = await import(${JSON.stringify(module)}); createLogger().info({ n: 7 }, 'last words'); ${ending}`;
      const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { encoding: 'utf8', env: { ...process.env, LOG_LEVEL: 'info' } });
      expect(run.status).toBe(0);
      expect(run.stdout.trim().split('\n').map((l) => JSON.parse(l).msg)).toEqual(['last words']);
    }
  });
});
