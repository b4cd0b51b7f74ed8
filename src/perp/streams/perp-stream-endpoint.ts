/**
 * The perpetual API's WebSocket endpoint, `/v4/public/ws` (contract.md §C, docs/streams.md): the
 * shared endpoint with this venue's channels, symbols, error codes and `auth`. `auth` is the REST
 * signature over `ts + "GET" + "/v4/public/ws"` with an empty body, checked by the same function as
 * every request (timestamp window, key, whitelist, signature, replay), and needs READ.
 */
import type { FastifyInstance } from 'fastify';
import { isAppError, ForbiddenError, UnauthorizedError } from '../../errors/app-error.ts';
import { hasPermission } from '../../auth/api-key-model.ts';
import type { ApiKeyService } from '../../auth/api-key-service.ts';
import type { NonceStore } from '../../auth/nonce-store.ts';
import type { Logger } from '../../lib/logger.ts';
import { attachStreamEndpoint, type StreamEndpoint, type StreamLimits } from '../../streams/stream-endpoint.ts';
import type { StreamHub } from '../../streams/stream-hub.ts';
import { createPerpSignatureCheck } from '../perp-auth-hook.ts';
import { PERP_ERROR_CODES, perpErrorOf } from '../perp-error-codes.ts';
import { walletOf } from '../venue-calls.ts';
import { perpChannels } from './perp-stream-channels.ts';

export const PERP_WS_PATH = '/v4/public/ws';

const code = (name: keyof typeof PERP_ERROR_CODES) => PERP_ERROR_CODES[name].code;

export interface PerpStreamEndpointOptions {
  hub: StreamHub;
  keys: ApiKeyService;
  nonces: NonceStore;
  chainId: number;
  isSymbol(symbol: string): boolean;
  logger: Logger;
  limits?: Partial<StreamLimits>;
  now?: () => number;
}

const EMPTY = new Uint8Array(0);

export function attachPerpStreams(app: FastifyInstance, opts: PerpStreamEndpointOptions): StreamEndpoint {
  const check = createPerpSignatureCheck(opts);
  return attachStreamEndpoint(app, {
    paths: [PERP_WS_PATH],
    hub: opts.hub,
    catalog: perpChannels(),
    isSymbol: opts.isSymbol,
    limits: opts.limits,
    logger: opts.logger,
    codes: {
      invalid: code('INVALID'),
      unknownSymbol: code('UNKNOWN_SYMBOL'),
      authRequired: code('PERMISSION_DENIED'),
      rateLimited: code('RATE_LIMITED'),
      gone: code('SNAPSHOT_REQUIRED'),
      unavailable: code('STORAGE_UNAVAILABLE'),
    },
    async authenticate(frame, peer) {
      const { apiKey, sign } = frame;
      const ts = typeof frame.ts === 'number' ? String(frame.ts) : frame.ts;
      if (typeof apiKey !== 'string' || typeof sign !== 'string' || typeof ts !== 'string') {
        throw new UnauthorizedError('auth: apiKey, ts and sign are required', { failure: 'credentials' });
      }
      const key = await check({ apiKey, sign, ts, method: 'GET', requestPath: PERP_WS_PATH, body: EMPTY, peer });
      if (!hasPermission(key, 'READ')) throw new ForbiddenError('READ permission required');
      return { account: walletOf(key) };
    },
    authRefusal(err) {
      if (!isAppError(err)) return { code: code('INTERNAL'), msg: 'internal error' };
      const entry = perpErrorOf(err);
      // The table's words, as REST answers: never the key, the signature or the reason's detail.
      return { code: entry.code, msg: entry.meaning };
    },
  });
}
