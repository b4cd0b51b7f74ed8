/**
 * The stock API's own HTTP layer and auth hook without its routes (they need a chain), for the tests
 * of what the layer and the hook answer and log: chain `chainId`, product STOCK, under /api/v1, an
 * unknown route answered as the API answers it.
 */
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll } from 'vitest';
import { createApiKeyService, type ApiKeyService } from '../../src/auth/api-key-service.ts';
import { createSecretBox } from '../../src/auth/secret-box.ts';
import type { Db } from '../../src/storage/database.ts';
import { openTestSqlite } from './test-databases.ts';
import { createMemoryNonceStore } from '../../src/auth/nonce-store.ts';
import { NotFoundError } from '../../src/errors/app-error.ts';
import { createHttpServer } from '../../src/http/create-http-server.ts';
import { decodeJsonRequest } from '../../src/http/request-decoder.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { createStockAuthHook } from '../../src/stock/stock-auth-hook.ts';
import { stockEnvelope } from '../../src/stock/stock-envelope.ts';

export interface StockAuthAppOptions {
  keys: ApiKeyService;
  chainId: number;
  /** Every log line, parsed. */
  logs: Array<Record<string, unknown>>;
  /** The API's JSON body decoder after the hook, as the real API has it. */
  decodeJson?: boolean;
  /** The test's routes. */
  routes(api: FastifyInstance): void;
}

/** The app, not yet listening. */
export async function createStockAuthApp(opts: StockAuthAppOptions): Promise<FastifyInstance> {
  const destination = new Writable({
    write(chunk, _enc, cb) {
      for (const line of String(chunk).split('\n').filter(Boolean)) opts.logs.push(JSON.parse(line) as Record<string, unknown>);
      cb();
    },
  });
  const app = createHttpServer({ logger: createLogger({ level: 'info', destination }), envelope: stockEnvelope, bodyLimitBytes: 65_536 });
  const auth = createStockAuthHook({ keys: opts.keys, nonces: createMemoryNonceStore(), chainId: opts.chainId, product: 'STOCK', prefix: '' });
  await app.register(
    async (api) => {
      api.addHook('preValidation', auth);
      if (opts.decodeJson) api.addHook('preValidation', decodeJsonRequest);
      api.setNotFoundHandler(async () => {
        throw new NotFoundError('route');
      });
      opts.routes(api);
    },
    { prefix: '/api/v1' },
  );
  return app;
}

export interface StockAuthAppHandle {
  /** Every log line, parsed. */
  readonly logs: Array<Record<string, unknown>>;
  /** From the suite's beforeAll on. */
  readonly app: FastifyInstance;
  readonly keys: ApiKeyService;
  readonly baseUrl: string;
}

/**
 * The app for the enclosing suite, on a key service of its own (a fresh SQLite; `wrapKeys` may put
 * itself in front of it), listening on a free port from its beforeAll on, closed after it.
 */
export function useStockAuthApp(
  opts: Omit<StockAuthAppOptions, 'keys' | 'logs'> & { wrapKeys?: (keys: ApiKeyService) => ApiKeyService },
): StockAuthAppHandle {
  const logs: Array<Record<string, unknown>> = [];
  let db: Db | undefined;
  let app: FastifyInstance | undefined;
  let keys: ApiKeyService | undefined;
  let baseUrl = '';
  beforeAll(async () => {
    db = await openTestSqlite();
    const real = createApiKeyService({ db, secretBox: createSecretBox(randomBytes(32)), cacheTtlMs: 0 });
    keys = opts.wrapKeys ? opts.wrapKeys(real) : real;
    app = await createStockAuthApp({ ...opts, keys, logs });
    baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });
  return {
    logs,
    get app() {
      return app!;
    },
    get keys() {
      return keys!;
    },
    get baseUrl() {
      return baseUrl;
    },
  };
}
