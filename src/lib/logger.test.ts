import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from './logger.ts';

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

  it('writes the request line of the HTTP layer as an ordinary pino line, redaction included', async () => {
    const { logger, lines } = capture();
    logger.info({ uuid: 'u-1', method: 'GET', url: '/api/v1/prices/AAPL?x="y"', status: 200, ms: 0.13 }, 'request');
    expect(await lines()).toMatchObject([{ level: 30, uuid: 'u-1', method: 'GET', url: '/api/v1/prices/AAPL?x="y"', status: 200, ms: 0.13, msg: 'request' }]);
  });

  it('writes nothing below its level', async () => {
    const { logger, lines } = capture('warn');
    logger.info({ uuid: 'u-2' }, 'request');
    logger.warn({ uuid: 'u-3' }, 'kept');
    expect((await lines()).map((l) => l.uuid)).toEqual(['u-3']);
  });
});
