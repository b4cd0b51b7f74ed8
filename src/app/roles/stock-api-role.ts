/** Role `stock-api`: the signed tokenized-stock HTTP API; stateless, so many may run at once. */
import { openRedis } from '../../storage/redis-client.ts';
import { createMemoryNonceStore, createRedisNonceStore, type NonceStore } from '../../auth/nonce-store.ts';
import { corporateActionRegistryOf } from '../corporate-action-wiring.ts';
import { buildStockApi } from '../../stock/stock-api.ts';
import { createStockChainReader } from '../../stock/stock-chain-reader.ts';
import { createScheduledChangesReader } from '../../chain/owner-actions.ts';
import { VENUE_CONTRACTS } from '../../chain/venue-code.ts';
import type { Abi } from 'viem';
import { createStockDirectory } from '../../stock/stock-directory.ts';
import { createCalldataJournal } from '../../stock/calldata-journal.ts';
import type { StackContext } from '../stack-context.ts';
import { streamBrokerFor } from '../stream-wiring.ts';
import { createStreamHub } from '../../streams/stream-hub.ts';
import { stockChannels } from '../../stock/streams/stock-stream-channels.ts';
import { attachStockStreams, STOCK_STREAM_GONE } from '../../stock/streams/stock-stream-endpoint.ts';
import { apiTransportFor } from '../../http/tls-options.ts';
import { startGuarded } from '../stop-list.ts';
import { consoleRoutes } from '../../console/console-routes.ts';
import { API_DEPENDENCIES, createReadinessProbe } from '../../observability/readiness.ts';

export async function startStockApiRole(ctx: StackContext): Promise<() => Promise<void>> {
  const { config, logger, db } = ctx;
  const { deployment, readClient } = ctx.chain;
  // The delegatee users sign for: the relayer's address, whichever process holds its key.
  const relayer = ctx.chain.addressOf('relayer');
  if (!relayer) ctx.logger.warn('no relayer address (RELAYER_ADDRESS or RELAYER_PRIVATE_KEY): One Click endpoints answer 503');
  // HTTPS or plain HTTP, decided (and the certificate files checked) before anything starts.
  const transport = apiTransportFor(config, 'stock API');
  const { stop } = await startGuarded(logger, async (stops) => {
    let nonces: NonceStore;
    if (config.redisUrl) {
      const redis = openRedis(config.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: true }, logger, 'stock API nonces');
      await redis.connect();
      stops.add(async () => void redis.disconnect());
      nonces = createRedisNonceStore(redis);
    } else {
      const memory = createMemoryNonceStore();
      stops.add(() => memory.close());
      nonces = memory;
    }
    const chain = createStockChainReader({ publicClient: readClient, deployment, refreshMs: config.chainConfigRefreshMs, logger });
    stops.add(async () => chain.stop());
    await chain.start();
    // The file's actions and the run-time ones (the database), with their states: docs/corporate-actions.md.
    const corporate = await corporateActionRegistryOf(ctx);
    const calldataJournal = createCalldataJournal({ db, logger });
    stops.add(() => calldataJournal.close());
    const app = await buildStockApi({
      transport,
      deps: {
        chainId: config.chainId,
        indexWaitMs: config.indexWaitMs,
        contracts: {
          stockRouter: deployment.contracts.stockRouter,
          oneClickRouter: deployment.contracts.oneClickRouter,
          cashier: deployment.contracts.cashier,
          cashToken: deployment.contracts.cashToken,
        },
        product: config.stockProduct,
        prefix: config.stockApiPrefix,
        db,
        calldataJournal,
        stocks: createStockDirectory(ctx.symbols, deployment.contracts.stocks),
        quotes: await ctx.quotes(),
        chain,
        calendar: ctx.calendar,
        corporateActions: (symbol, opts) => corporate.list(symbol, opts),
        quoteMaxAgeMs: config.executor.quoteMaxAgeMs,
        // What the venues' timelocks will do (docs/security.md, "Owner and upgrader").
        scheduledChanges: createScheduledChangesReader({
          publicClient: readClient,
          record: () => ctx.chain.record,
          abis: Object.values(VENUE_CONTRACTS).map((c) => c.abi as Abi),
          onError: (err) => logger.warn({ err }, 'stock API: the timelocks\' scheduled operations could not be read'),
        }),
        oneClick: relayer
          ? { relayer, signals: ctx.relaySignals, waitMs: config.relay.waitMs, pollMs: config.relay.pollMs }
          : undefined,
      },
      keys: ctx.keys,
      nonces,
      logger,
      bodyLimitBytes: config.bodyLimitBytes,
      trustedProxies: config.trustedProxies,
      // Without a relayer address One Click answers 503 by design: the relayer is then no dependency.
      readiness: createReadinessProbe({ db, roles: API_DEPENDENCIES.stock.filter((r) => r !== 'relayer' || relayer !== undefined), staleMs: config.readinessStaleMs }),
    });
    // The WebSocket streams (docs/streams.md): this process's publisher, or the shared one over Redis.
    const broker = ctx.stockStreams ?? (config.redisUrl ? await streamBrokerFor(ctx, 'stock', stops) : undefined);
    if (broker) {
      const hub = createStreamHub({ broker, catalog: stockChannels(), goneCode: STOCK_STREAM_GONE, logger });
      await hub.start();
      stops.add(() => hub.stop());
      const directory = createStockDirectory(ctx.symbols, deployment.contracts.stocks);
      const endpoint = attachStockStreams(app, {
        hub, keys: ctx.keys, nonces, chainId: config.chainId, product: config.stockProduct, prefix: config.stockApiPrefix,
        isSymbol: (s) => directory.bySymbol(s) !== undefined, logger, limits: { pingMs: config.streamPingMs, idleMs: config.streamIdleMs },
      });
      stops.add(() => endpoint.close());
    } else {
      logger.warn('stock-api: no stream publisher in this process and no REDIS_URL; /api/v1/ws is not served');
    }
    await app.register(consoleRoutes, { ctx }); // the web console at /console (docs/console.md)
    const address = await app.listen({ host: config.host, port: config.stockApiPort });
    stops.add(() => app.close());
    ctx.endpoints.stock = { app, baseUrl: address + config.stockApiPrefix };
  });
  return stop;
}
