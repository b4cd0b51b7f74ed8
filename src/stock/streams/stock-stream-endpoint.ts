/**
 * The stock API's WebSocket endpoint, `[prefix]/api/v1/ws` (contract.md §C, docs/streams.md): the
 * shared endpoint with this venue's channels, symbols and codes (the stock API's HTTP-like codes:
 * 400, 401, 404, 410, 429, 500). `auth` is the REST check (stock-auth-hook.ts) over the frame and,
 * as REST, never says which check failed. The private streams are the key's bound wallet's, or for
 * a key bound to none, those of what it recorded (`key:<apiKey>`).
 *
 * Several chains (docs/streams.md "Several chains"): each chain has its own publisher and broker,
 * hence its own hub here, and a connection reads one chain's: the one its URL's `chainId` names,
 * else the one its `auth` frame names, else the first chain (what a client of one chain always got).
 */
import type { FastifyInstance } from 'fastify';
import type { ApiKeyService } from '../../auth/api-key-service.ts';
import type { NonceStore } from '../../auth/nonce-store.ts';
import type { Logger } from '../../lib/logger.ts';
import { attachStreamEndpoint, StreamUpgradeRefusal, type StreamEndpoint, type StreamLimits, type StreamRoute } from '../../streams/stream-endpoint.ts';
import type { StreamHub } from '../../streams/stream-hub.ts';
import { createStockStreamAuth, StockStreamChainFixed } from '../stock-auth-hook.ts';
import { keySubject, stockChannels } from './stock-stream-channels.ts';

export const STOCK_WS_PATH = '/api/v1/ws';
export const STOCK_STREAM_GONE = 410;

/** One chain's streams: its hub (over its publisher's broker) and its listed symbols. */
export interface StockStreamChain {
  chainId: number;
  hub: StreamHub;
  isSymbol(symbol: string): boolean;
}

export interface StockStreamEndpointOptions {
  /** The chains served, the deployment's first chain first: a connection naming none is on it. */
  chains: readonly StockStreamChain[];
  /** Chains configured whose node did not answer at start: named as such when asked for. */
  unstartedChainIds?: readonly number[];
  keys: ApiKeyService;
  nonces: NonceStore;
  product: string;
  prefix: string;
  logger: Logger;
  limits?: Partial<StreamLimits>;
}

/** A chain id in the URL's query: the `x-api-chain-id` text, 1 to 16 digits without a leading zero. */
const CHAIN_ID_TEXT = /^[1-9][0-9]{0,15}$/;

export interface StockStreamEndpoint extends StreamEndpoint {
  /**
   * A chain that started after the endpoint (its node did not answer at start, then did): its
   * streams are served from now on, to new connections, as a chain served from the start.
   */
  addChain(chain: StockStreamChain): void;
}

export function attachStockStreams(app: FastifyInstance, opts: StockStreamEndpointOptions): StockStreamEndpoint {
  const [first, ...others] = opts.chains;
  if (first === undefined) throw new Error('stock streams: no chain to serve');
  const routes = new Map<number, StreamRoute & { chainId: number }>(opts.chains.map((c) => [c.chainId, { chainId: c.chainId, hub: c.hub, isSymbol: c.isSymbol }]));
  // By hub: the endpoint builds its default route itself, from `hub` and `isSymbol` below.
  const chainOf = new Map<StreamHub, number>([...routes.values()].map((r) => [r.hub, r.chainId]));
  const defaultRoute = routes.get(first.chainId)!;
  const unstarted = new Set(opts.unstartedChainIds ?? []);
  const check = createStockStreamAuth({
    keys: opts.keys,
    nonces: opts.nonces,
    chainId: first.chainId,
    otherChainIds: others.map((c) => c.chainId),
    unstartedChainIds: opts.unstartedChainIds,
    product: opts.product,
  });
  const endpoint = attachStreamEndpoint(app, {
    paths: [...new Set([`${opts.prefix}${STOCK_WS_PATH}`, STOCK_WS_PATH])],
    // The default route: the endpoint hands it back as the connection's when the URL names no chain.
    hub: defaultRoute.hub,
    isSymbol: defaultRoute.isSymbol,
    catalog: stockChannels(),
    limits: opts.limits,
    logger: opts.logger,
    codes: { invalid: 400, unknownSymbol: 404, authRequired: 401, rateLimited: 429, gone: STOCK_STREAM_GONE, unavailable: 500 },
    // Public streams have no `auth` to name a chain: the URL does (`?chainId=`), as a browser's
    // WebSocket can send no header. Which chains are served is no secret (demo.json, /readyz).
    routeOf(query) {
      const text = query.get('chainId');
      if (text === null) return undefined;
      if (!CHAIN_ID_TEXT.test(text)) throw new StreamUpgradeRefusal('chainId: a positive integer without a leading zero');
      const chainId = Number(text);
      const route = routes.get(chainId);
      if (route !== undefined) return route;
      if (unstarted.has(chainId)) throw new StreamUpgradeRefusal(`chainId: chain ${chainId} did not start (its node did not answer): served once its node answers`);
      throw new StreamUpgradeRefusal(`chainId: chain ${chainId} is not served by this API`);
    },
    async authenticate(frame, peer, connection) {
      const current = chainOf.get(connection.route.hub) ?? first.chainId;
      const { key, chainId } = await check(frame, peer, { chainId: current, fixed: connection.fixed });
      // As REST shows them: a bound key its wallet's orders and operations; a key bound to none
      // (a recording key) the ones whose transactions it recorded. Both on the chain authenticated on.
      return { account: key.userAddress !== null ? key.userAddress.toLowerCase() : keySubject(key.apiKey), chainId, route: routes.get(chainId)! };
    },
    // A chain the connection cannot move to is the client's mistake, said as such (it names no
    // secret); every other refusal is the opaque one, its cause in the log.
    authRefusal: (err) => (err instanceof StockStreamChainFixed ? { code: 400, msg: err.message } : { code: 401, msg: 'Unauthorized' }),
  });
  return Object.assign(endpoint, {
    addChain(chain: StockStreamChain): void {
      if (routes.has(chain.chainId)) return;
      routes.set(chain.chainId, { chainId: chain.chainId, hub: chain.hub, isSymbol: chain.isSymbol });
      chainOf.set(chain.hub, chain.chainId);
      unstarted.delete(chain.chainId);
      check.addChain(chain.chainId);
    },
  });
}
