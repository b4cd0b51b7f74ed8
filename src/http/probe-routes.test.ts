import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { APP_VERSION } from '../config/build-info.ts';
import { createLogger } from '../lib/logger.ts';
import { perpEnvelope, perpProbeEnvelope } from '../perp/perp-envelope.ts';
import { stockEnvelope, stockProbeEnvelope } from '../stock/stock-envelope.ts';
import { createHttpServer } from './create-http-server.ts';
import { registerProbes } from './probe-routes.ts';

const PACKAGE_VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

describe('/healthz', () => {
  it("answers the release in each API's envelope, under each prefix, uncached", async () => {
    expect(APP_VERSION).toBe(PACKAGE_VERSION);
    const logger = createLogger({ level: 'silent' });
    const stock = createHttpServer({ logger, envelope: stockEnvelope, bodyLimitBytes: 1024 });
    const perp = createHttpServer({ logger, envelope: perpEnvelope, bodyLimitBytes: 1024 });
    registerProbes(stock, { prefixes: ['', '/stock'], envelope: stockProbeEnvelope });
    registerProbes(perp, { prefixes: [''], envelope: perpProbeEnvelope });
    try {
      for (const url of ['/healthz', '/stock/healthz']) {
        const res = await stock.inject({ method: 'GET', url });
        expect(res.statusCode, url).toBe(200);
        expect(res.headers['cache-control']).toBe('no-store');
        expect(res.json()).toEqual({ code: 200, errMsg: '', uuid: expect.any(String), data: { status: 'ok', version: PACKAGE_VERSION }, t: expect.any(Number) });
      }
      const res = await perp.inject({ method: 'GET', url: '/healthz' });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ code: 0, msg: 'ok', data: { status: 'ok', version: PACKAGE_VERSION }, requestId: expect.any(String) });
    } finally {
      await stock.close();
      await perp.close();
    }
  });
});
