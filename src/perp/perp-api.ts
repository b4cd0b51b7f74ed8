/**
 * The perpetual API as a Fastify application (contract.md §B), assembled as both venues are
 * (src/http/venue-api.ts): the perp envelope, signing headers and document, and the
 * /v4/public/trader scope with authentication, permission and rate limit (perp-auth-hook.ts) and
 * one route module per group.
 */
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { ApiKeyService } from '../auth/api-key-service.ts';
import type { NonceStore } from '../auth/nonce-store.ts';
import type { ApiTransport } from '../http/tls-options.ts';
import type { ReadinessProbe } from '../observability/readiness.ts';
import { registerRateLimit, type RateLimitSettings } from '../http/rate-limiter.ts';
import { buildVenueApi } from '../http/venue-api.ts';
import type { RequestFaultSource } from '../http/request-faults.ts';
import type { Db } from '../storage/database.ts';
import { DEFAULT_INSTRUMENTS, instrumentSpec, type InstrumentConfig } from './engine/instruments.ts';
import { createPerpAuthHook } from './perp-auth-hook.ts';
import { perpEnvelope, perpProbeEnvelope } from './perp-envelope.ts';
import { createPerpKeyService } from './perp-key-service.ts';
import { createAccountService } from './account-service.ts';
import { createWithdrawalService } from './withdrawal-service.ts';
import { createMarketService } from './market-service.ts';
import { createOrderService, type OrderService } from './order-service.ts';
import { createOneClickService } from './one-click-service.ts';
import { createLiquidityService } from './liquidity-service.ts';
import type { PerpVenue } from './perp-venue.ts';
import { accountRoutes } from './routes/account-routes.ts';
import { approveFlowRoutes } from './routes/approve-flow-routes.ts';
import type { VaultTransactionService } from './vault-transaction-service.ts';
import { apiKeyRoutes } from './routes/api-key-routes.ts';
import { historyRoutes } from './routes/history-routes.ts';
import { marketRoutes } from './routes/market-routes.ts';
import { oneClickRoutes } from './routes/one-click-routes.ts';
import { tradingRoutes } from './routes/trading-routes.ts';
import { liquidityRoutes } from './routes/liquidity-routes.ts';
import { riskRoutes } from './routes/risk-routes.ts';
import { reservesRoutes } from './routes/reserves-routes.ts';
import { mondayRoutes } from './routes/monday-routes.ts';
import { createMondayOrderService } from './monday-order-service.ts';
import { engineUnavailable } from './routes/trading-routes.ts';
import { venueNow } from '../lib/venue-clock.ts';
import { named } from '../http/named-plugin.ts';

export const PERP_API_VERSION = '4.0.0';
/** Every endpoint's path starts here (after the base URL). */
export const PERP_API_ROOT = '/v4/public/trader';
/** The domain's verifyingContract until the margin vault is deployed with the stack. */
export const PLACEHOLDER_VERIFYING_CONTRACT = '0x0000000000000000000000000000000000000000';

/**
 * The reference page's introduction (markdown): how to sign (contract.md §B) with a worked example
 * the reference-pages test recomputes, and where the streams are.
 */
export const PERP_API_DESCRIPTION = [
  'Perpetual futures: market data, API keys created with a wallet signature, signed orders on the matching engine, positions, ' +
    'account and history, collateral in the on-chain margin vault, One-Click Trade and the liquidity pool. Guide: docs/perp-api.md.',
  '',
  '## Signing a request',
  '',
  'Every endpoint but `GET time`, `GET insurance-fund` and the two API-key creation calls (which a wallet signature authorises) ' +
    'carries four headers:',
  '',
  '| header | content |',
  '| --- | --- |',
  '| `X-Api-Key` | the API key |',
  '| `X-Api-Ts` | the request time in milliseconds since the epoch, within 45 s of the server clock (`GET time`) |',
  '| `X-Api-Sign` | Base64 (standard, padded) of HMAC-SHA256(key = the API secret, message = `ts + METHOD + request_path + body`) |',
  '| `X-Chain-Id` | the chain id the service runs on |',
  '',
  '`ts` is the `X-Api-Ts` value as sent, `METHOD` upper case, `request_path` the path from `/v4/` and, when there is a query, `?` and its ' +
    'parameters sorted by name (send the query in that order), `body` the raw body exactly as sent (JSON, UTF-8) or empty; a JSON object body may ' +
    'instead be signed with its top-level keys sorted, compact (as Monday Trade clients sign it: docs/perp-api.md "Monday Trade clients"). ' +
    'An identical signature seen again inside the window is refused as a replay (`20007`). ' +
    'Each API key may spend 120 rate-limit units a minute by default (configurable; `X-RateLimit-Limit`, `X-RateLimit-Remaining`, `X-RateLimit-Reset` on every answer; 429 and `Retry-After` past it). A request weighs 1, a batch of n orders or order ids 1 + floor(n/10); WebSocket order frames count against the same budget.',
  '',
  'Worked example: secret `demo-secret`, `X-Api-Ts` `1700000000000`, `GET /v4/public/trader/market-trades?symbol=BTC-USD&limit=2`:',
  '',
  '```',
  'message    = 1700000000000GET/v4/public/trader/market-trades?limit=2&symbol=BTC-USD',
  'X-Api-Sign = RVhN++/SUQybLFownmgiGM+BXLkhRPiF7+GKOFqdXyA=',
  '```',
  '',
  '```sh',
  "ts=$(date +%s%3N); path='/v4/public/trader/market-trades?limit=2&symbol=BTC-USD'",
  "sign=$(printf '%s' \"${ts}GET${path}\" | openssl dgst -sha256 -hmac \"$API_SECRET\" -binary | base64)",
  '```',
  '',
  '## Streams',
  '',
  'Pushed updates (book, trades, tickers, candles, mark; and, after `auth`, orders, fills, positions and account, resumable with `since`) ' +
    'come over the WebSocket at `ws://<host:port>/v4/public/ws`: see docs/streams.md.',
].join('\n');

export interface PerpApiOptions {
  /** HTTPS or plain HTTP, and whether requests must arrive as HTTPS (src/http/tls-options.ts). Default: plain HTTP. */
  transport?: ApiTransport;
  chainId: number;
  db: Db;
  /**
   * Where the projection's history is read (orders, trades, transactions, candles, funding rates,
   * liquidity moves): on SQLite its own file (storage-wiring.ts openHistoryDatabase). Default `db`.
   */
  historyDb?: Db;
  keys: ApiKeyService;
  nonces: NonceStore;
  /** Requests per minute and key, and the shared store when several instances serve (Redis). */
  rateLimit: RateLimitSettings;
  logger: Logger;
  bodyLimitBytes: number;
  trustedProxies?: string[];
  /** The margin vault: verifying contract of the API-key creation typed data. */
  marginVault?: string;
  instruments?: readonly InstrumentConfig[];
  /**
   * The engine (its gateway and live state) and the indexed chain: without it the trading,
   * account, history and book endpoints answer 50002 (the engine is not reachable).
   */
  venue?: PerpVenue;
  /** Overrides every instrument's funding interval (PERP_FUNDING_INTERVAL_MS). */
  fundingIntervalMs?: number;
  /** Lock-up of liquidity added to the pool (PERP_LP_LOCKUP_MS); default 4 days. */
  lpLockupMs?: number;
  /** The approve/deposit flow's relay (it needs the chain): without it those endpoints answer 50002. */
  vaultTransactions?: VaultTransactionService;
  now?: () => number;
  /** Extra route modules registered inside the authenticated scope (trading, account, ... join here). */
  extraRoutes?: Array<(api: FastifyInstance) => Promise<void>>;
  /** `/readyz`'s judge (docs/operations.md); without it the API says ready. */
  readiness?: ReadinessProbe;
  /** Injected faults (the sandbox's, docs/sandbox.md); none without. */
  faults?: RequestFaultSource;
}

const orderServices = new WeakMap<FastifyInstance, OrderService>();

/**
 * The order service behind `app`'s trading routes (undefined without an engine): the stream
 * endpoint's order entry uses the same instance, with the app's rate-limit checker (rateLimitOf).
 */
export function perpOrderServiceOf(app: FastifyInstance): OrderService | undefined {
  return orderServices.get(app);
}

export async function buildPerpApi(opts: PerpApiOptions): Promise<FastifyInstance> {
  const now = opts.now ?? Date.now;
  // What the engine stamps and decides on (orders and their expiries, liquidity's lock-up, the
  // market's stamps) is on the venue's clock (docs/sandbox.md "Clock"); signing windows and key
  // messages stay on the wall clock. The same outside a sandbox that moved its clock.
  const venueTime = opts.now ?? venueNow;
  const keyService = createPerpKeyService({
    db: opts.db,
    keys: opts.keys,
    chainId: opts.chainId,
    verifyingContract: opts.marginVault ?? PLACEHOLDER_VERIFYING_CONTRACT,
    now,
  });
  const instruments = (opts.instruments ?? DEFAULT_INSTRUMENTS).map(instrumentSpec);
  const { venue } = opts;
  const orders = venue ? createOrderService({ db: opts.db, history: opts.historyDb, venue, domain: keyService.domain, now: venueTime }) : undefined;
  // Sessions live in the database alone: One-Click Trade works on an instance without the engine too.
  const oneClick = createOneClickService({ db: opts.db, domain: keyService.domain, now });
  const accounts = venue ? createAccountService({ db: opts.db, history: opts.historyDb, venue }) : undefined;
  const liquidity = venue ? createLiquidityService({ db: opts.db, history: opts.historyDb, venue, lockupMs: opts.lpLockupMs, now: venueTime }) : undefined;
  const market = venue ? createMarketService({ db: opts.historyDb ?? opts.db, venue, fundingIntervalMs: opts.fundingIntervalMs, now: venueTime }) : undefined;

  const app = await buildVenueApi({
    logger: opts.logger,
    envelope: perpEnvelope,
    api: 'perp',
    bodyLimitBytes: opts.bodyLimitBytes,
    trustedProxies: opts.trustedProxies,
    transport: opts.transport,
    info: { title: 'Perpetual futures trading API', version: PERP_API_VERSION, description: PERP_API_DESCRIPTION },
    securityHeaders: { apiKey: 'X-Api-Key', signature: 'X-Api-Sign', timestamp: 'X-Api-Ts', chainId: 'X-Chain-Id' },
    authenticate: async (app) => {
      const rateLimit = await registerRateLimit(app, opts.rateLimit);
      return createPerpAuthHook({ keys: opts.keys, nonces: opts.nonces, rateLimit, chainId: opts.chainId, now });
    },
    // Reads answer durable state only: nothing a failed journal write later removes.
    beforeRead: venue?.readable,
    // With the engine apart: what this process answered is in its replica before anything but a
    // placement reads it (perp-venue.ts `settled`).
    settled: venue?.settled,
    scopePrefix: PERP_API_ROOT,
    referenceTitle: 'Perpetual futures API reference',
    probeEnvelope: perpProbeEnvelope,
    readiness: opts.readiness,
    routes: async (api) => {
      await api.register(named(marketRoutes), { instruments, now, market });
      await api.register(named(apiKeyRoutes), { service: keyService });
      await api.register(named(tradingRoutes), { orders });
      await api.register(named(oneClickRoutes), { service: oneClick });
      await api.register(named(accountRoutes), { accounts, venue, withdrawals: venue ? createWithdrawalService({ db: opts.db, venue, domain: keyService.domain, now }) : undefined });
      await api.register(named(historyRoutes), { accounts });
      await api.register(named(approveFlowRoutes), { service: opts.vaultTransactions });
      await api.register(named(liquidityRoutes), { liquidity });
      await api.register(named(riskRoutes), { liquidity });
      await api.register(named(reservesRoutes), { db: opts.db });
      // Monday Trade's clients' shape of the same services (docs/perp-api.md "Monday Trade clients").
      await api.register(named(mondayRoutes), {
        keys: keyService,
        service: createMondayOrderService({ chainId: opts.chainId, instruments, venue, orders, market, venueDelegate: oneClick.venueDelegate, unavailable: engineUnavailable }),
      });
    },
    extraRoutes: opts.extraRoutes,
    ...(opts.faults ? { faults: { source: opts.faults, rateLimitPerWindow: opts.rateLimit.limit } } : {}),
  });
  if (orders) orderServices.set(app, orders);
  return app;
}
