/**
 * The stock API's WebSocket endpoint, `[prefix]/api/v1/ws` (contract.md §C, docs/streams.md): the
 * shared endpoint with this venue's channels, symbols and codes (the stock API's HTTP-like codes:
 * 400, 401, 404, 410, 429, 500). `auth` is the REST check (stock-auth-hook.ts) over the frame and,
 * as REST, never says which check failed. The private streams are the key's bound wallet's, or for
 * a key bound to none, those of what it recorded (`key:<apiKey>`).
 */
import type { FastifyInstance } from 'fastify';
import type { ApiKeyService } from '../../auth/api-key-service.ts';
import type { NonceStore } from '../../auth/nonce-store.ts';
import type { Logger } from '../../lib/logger.ts';
import { attachStreamEndpoint, type StreamEndpoint, type StreamLimits } from '../../streams/stream-endpoint.ts';
import type { StreamHub } from '../../streams/stream-hub.ts';
import { createStockStreamAuth } from '../stock-auth-hook.ts';
import { keySubject, stockChannels } from './stock-stream-channels.ts';

export const STOCK_WS_PATH = '/api/v1/ws';
export const STOCK_STREAM_GONE = 410;

export interface StockStreamEndpointOptions {
  hub: StreamHub;
  keys: ApiKeyService;
  nonces: NonceStore;
  chainId: number;
  product: string;
  prefix: string;
  isSymbol(symbol: string): boolean;
  logger: Logger;
  limits?: Partial<StreamLimits>;
}

export function attachStockStreams(app: FastifyInstance, opts: StockStreamEndpointOptions): StreamEndpoint {
  const check = createStockStreamAuth(opts);
  return attachStreamEndpoint(app, {
    paths: [...new Set([`${opts.prefix}${STOCK_WS_PATH}`, STOCK_WS_PATH])],
    hub: opts.hub,
    catalog: stockChannels(),
    isSymbol: opts.isSymbol,
    limits: opts.limits,
    logger: opts.logger,
    codes: { invalid: 400, unknownSymbol: 404, authRequired: 401, rateLimited: 429, gone: STOCK_STREAM_GONE, unavailable: 500 },
    async authenticate(frame, peer) {
      const key = await check(frame, peer);
      // As REST shows them: a bound key its wallet's orders and operations; a key bound to none
      // (a recording key) the ones whose transactions it recorded.
      return { account: key.userAddress !== null ? key.userAddress.toLowerCase() : keySubject(key.apiKey) };
    },
    authRefusal: () => ({ code: 401, msg: 'Unauthorized' }),
  });
}
