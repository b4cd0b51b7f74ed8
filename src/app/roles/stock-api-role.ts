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
import { createStreamHub } from '../../streams/stream-hub.ts';
import { stockChannels } from '../../stock/streams/stock-stream-channels.ts';
import { attachStockStreams, STOCK_STREAM_GONE, type StockStreamChain } from '../../stock/streams/stock-stream-endpoint.ts';
import { apiTransportFor } from '../../http/tls-options.ts';
import { startGuarded, type StopList } from '../stop-list.ts';
import type { StockApiDeps } from '../../stock/stock-deps.ts';
import type { Address } from 'viem';
import { consoleRoutes } from '../../console/console-routes.ts';
import { API_DEPENDENCIES, createChainsReadinessProbe, createReadinessProbe, type ReadinessProbe } from '../../observability/readiness.ts';
import { registerSandbox } from '../sandbox-wiring.ts';
import { named } from '../../http/named-plugin.ts';

export async function startStockApiRole(ctx: StackContext): Promise<() => Promise<void>> {
  const { config, logger } = ctx;
  // The delegatee users sign for: the relayer's address, whichever process holds its key.
  const relayer = ctx.chain.addressOf('relayer');
  if (!relayer) ctx.logger.warn('no relayer address (RELAYER_ADDRESS or RELAYER_PRIVATE_KEY): One Click endpoints answer 503');
  // HTTPS or plain HTTP, decided (and the certificate files checked) before anything starts.
  const transport = apiTransportFor(config, 'stock API');
  const { stop } = await startGuarded(logger, async (stops) => {
    let nonces: NonceStore;
    if (config.redisUrl) {
      const redis = openRedis(config.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: true, enableAutoPipelining: true }, logger, 'stock API nonces');
      await redis.connect();
      stops.add(async () => void redis.disconnect());
      nonces = createRedisNonceStore(redis);
    } else {
      const memory = createMemoryNonceStore();
      stops.add(() => memory.close());
      nonces = memory;
    }
    const venue = await stockVenueDeps(ctx, stops, relayer);
    // The other chains' venues (docs/stock-api.md, "Several chains"): the same routes, each with
    // its chain's contracts, reader, database and relayer signals; the request's header picks one.
    const otherChains: Array<Awaited<ReturnType<typeof stockVenueDeps>>> = [];
    for (const other of ctx.otherChains) otherChains.push(await stockVenueDeps(other, stops, relayer));
    const otherProbe = (db: StackContext['db']) => createReadinessProbe({ db, roles: API_DEPENDENCIES.stock.filter((r) => r !== 'marketdata' && (r !== 'relayer' || relayer !== undefined)), staleMs: config.readinessStaleMs });
    // A chain whose node has not answered yet: its routes are registered now with its venue bound
    // once it starts in the background (the auth hook refuses it until then).
    const quotes = ctx.unstartedChains.length > 0 ? await ctx.quotes() : undefined;
    const late = ctx.unstartedChains.map((entry) => {
      const bound: { deps?: StockApiDeps; probe?: ReadinessProbe } = {};
      entry.onStarted.push(async (other) => {
        bound.deps = (await stockVenueDeps(other, stops, relayer)).deps;
        bound.probe = otherProbe(other.db);
      });
      const unstarted = unstartedProbe(() => entry.reason, config.readinessStaleMs);
      const probe: ReadinessProbe = { check: () => (bound.probe ?? unstarted).check(), get tableReads() { return bound.probe?.tableReads ?? 0; } };
      return { chainId: entry.chainId, deps: lateVenueDeps(ctx, { chainId: entry.chainId, db: entry.db, quotes: quotes! }, () => bound.deps), probe };
    });
    // The operator page's corporate actions: each chain's registry and store, the first chain's first.
    const actionChains = [ctx, ...ctx.otherChains].map((c, i) => ({ chainId: c.config.chainId, db: c.db, corporateActions: i === 0 ? venue.corporate : otherChains[i - 1].corporate }));
    const readiness = (c: typeof ctx) => createReadinessProbe({ db: c.db, roles: API_DEPENDENCIES.stock.filter((r) => r !== 'relayer' || relayer !== undefined), staleMs: config.readinessStaleMs });
    const app = await buildStockApi({
      transport,
      unstartedChainIds: () => ctx.unstartedChains.map((c) => c.chainId),
      deps: venue.deps,
      otherChains: [...otherChains.map((o) => o.deps), ...late.map((l) => l.deps)],
      keys: ctx.keys,
      nonces,
      logger,
      bodyLimitBytes: config.bodyLimitBytes,
      trustedProxies: config.trustedProxies,
      // Without a relayer address One Click answers 503 by design: the relayer is then no dependency.
      // A chain after the first has no marketdata role of its own: its quotes are the first chain's.
      // The sandbox's injected faults (docs/sandbox.md), when it is on.
      ...(ctx.sandbox ? { faults: ctx.sandbox.faults } : {}),
      readiness:
        ctx.otherChains.length === 0 && late.length === 0
          ? readiness(ctx)
          : createChainsReadinessProbe(readiness(ctx), [
              ...ctx.otherChains.map((other) => ({ chainId: other.config.chainId, probe: otherProbe(other.db) })),
              // A chain whose node did not answer at start: not ready until it starts, then its roles judge.
              ...late.map(({ chainId, probe }) => ({ chainId, probe })),
            ]),
    });
    // The WebSocket streams (docs/streams.md): each chain's publisher in this process, or its shared
    // one over Redis (its own prefix, stream-wiring.ts); a connection reads one chain's (docs/streams.md,
    // "Several chains"). Without the first chain's, none is served.
    const streamChainOf = async (c: StackContext): Promise<StockStreamChain | undefined> => {
      const broker = c.stockStreams ?? (config.redisUrl ? (await c.streamBroker('stock')).broker : undefined);
      if (broker === undefined) {
        if (c !== ctx) logger.warn({ chainId: c.config.chainId }, 'stock-api: no stream publisher of this chain in this process and no REDIS_URL; its streams are not served');
        return undefined;
      }
      const hub = createStreamHub({ broker, catalog: stockChannels(), goneCode: STOCK_STREAM_GONE, logger: c.logger });
      await hub.start();
      stops.add(() => hub.stop());
      const directory = createStockDirectory(ctx.symbols, c.chain.deployment.contracts.stocks);
      return { chainId: c.config.chainId, hub, isSymbol: (s) => directory.bySymbol(s) !== undefined };
    };
    const streamChains: StockStreamChain[] = [];
    for (const c of [ctx, ...ctx.otherChains]) {
      const served = await streamChainOf(c);
      if (served !== undefined) streamChains.push(served);
    }
    if (streamChains[0]?.chainId === config.chainId) {
      const endpoint = attachStockStreams(app, {
        chains: streamChains,
        unstartedChainIds: ctx.unstartedChains.map((c) => c.chainId),
        keys: ctx.keys, nonces, product: config.stockProduct, prefix: config.stockApiPrefix,
        logger, limits: { pingMs: config.streamPingMs, idleMs: config.streamIdleMs },
      });
      stops.add(() => endpoint.close());
      // A chain whose node answers later: its streams once it has started (its indexer, which
      // publishes them, runs by then), without a restart.
      for (const entry of ctx.unstartedChains) {
        entry.onStarted.push(async (other) => {
          // Caught here: the chain's routes and roles have started, and a retry would start them twice.
          try {
            const served = await streamChainOf(other);
            if (served !== undefined) endpoint.addChain(served);
          } catch (err) {
            logger.error({ err, chainId: entry.chainId }, 'stock-api: the streams of a chain that started late could not be served; its REST routes are');
          }
        });
      }
    } else {
      logger.warn('stock-api: no stream publisher in this process and no REDIS_URL; /api/v1/ws is not served');
    }
    // The web console at /console, its operator page at /console/ops (docs/console.md).
    await app.register(named(consoleRoutes), { ctx, ops: { ctx, chains: actionChains } });
    // The sandbox control API at /sandbox/v1 (docs/sandbox.md): registered only when it is on, so
    // that nothing of it exists otherwise (a 404 like any unknown path).
    if (ctx.sandbox) await registerSandbox(ctx, app, ctx.sandbox, stops);
    const address = await app.listen({ host: config.host, port: config.stockApiPort });
    stops.add(async () => {
      const closing = app.close();
      // A sandbox snapshot or revert is a request to this very server, answered once the venue runs
      // again: waiting for the close (which waits for that answer) would never end. The port is free
      // once the listener is closed, which close() does first; the answer then goes out on its
      // connection (with `Connection: close`) and the old server ends with it.
      if (ctx.sandbox?.venue?.restarting) {
        closing.catch((err: unknown) => logger.warn({ err }, 'stock-api: closing the server before a sandbox restart'));
        while (app.server.listening) await new Promise((r) => setTimeout(r, 5));
        return;
      }
      await closing;
    });
    ctx.endpoints.stock = { app, baseUrl: address + config.stockApiPrefix };
  });
  return stop;
}

/** One chain's stock API dependencies, built from its context (the first chain's or another's). */
async function stockVenueDeps(ctx: StackContext, stops: StopList, relayer: Address | undefined): Promise<{ deps: StockApiDeps; corporate: Awaited<ReturnType<typeof corporateActionRegistryOf>> }> {
  const { config, logger, db } = ctx;
  const { deployment, readClient } = ctx.chain;
  const chain = createStockChainReader({ publicClient: readClient, deployment, refreshMs: config.chainConfigRefreshMs, logger });
  stops.add(async () => chain.stop());
  await chain.start();
  // The file's actions and the run-time ones (the database), with their states: docs/corporate-actions.md.
  const corporate = await corporateActionRegistryOf(ctx);
  const calldataJournal = createCalldataJournal({ db, logger });
  stops.add(() => calldataJournal.close());
  const deps: StockApiDeps = {
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
    // Candles and 24-hour figures from the one feed's history, on the first chain's database.
    historyDb: ctx.firstChainDb,
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
    oneClick: relayer ? { relayer, signals: ctx.relaySignals, waitMs: config.relay.waitMs, pollMs: config.relay.pollMs } : undefined,
  };
  return { deps, corporate };
}

/** The readiness of a chain that has not started: not ready, saying why. */
function unstartedProbe(reason: () => string, staleMs: number): ReadinessProbe {
  return {
    check: async () => ({ ready: false, staleMs, checkedAt: Date.now(), roles: [], summary: `did not start (${reason()}); served once its node answers (tried again every 10 s)` }),
    tableReads: 0,
  };
}

/**
 * The API dependencies of a chain that has not started, for its routes registered now: what is
 * known without its node (its id, the shared product, quotes, calendar, its database) answers at
 * once; the rest is the started chain's (`bound()`), read on requests only, which the auth hook
 * refuses until then.
 */
function lateVenueDeps(first: StackContext, chain: { chainId: number; db?: StackContext['db']; quotes: StockApiDeps['quotes'] }, bound: () => StockApiDeps | undefined): StockApiDeps {
  const { chainId, db, quotes } = chain;
  const known: Partial<StockApiDeps> = {
    chainId,
    quotes,
    product: first.config.stockProduct,
    prefix: first.config.stockApiPrefix,
    indexWaitMs: first.config.indexWaitMs,
    calendar: first.calendar,
    quoteMaxAgeMs: first.config.executor.quoteMaxAgeMs,
    historyDb: first.db,
    ...(db ? { db } : {}),
  };
  return new Proxy({} as StockApiDeps, {
    get(_target, key) {
      const deps = bound();
      if (deps) return deps[key as keyof StockApiDeps];
      if (typeof key !== 'string' || key === 'now' || key === 'then') return undefined;
      if (key in known) return known[key as keyof StockApiDeps];
      // A request reaches here only past the auth hook, which refuses the chain until it starts.
      throw new Error(`chain ${chainId} has not started: ${key} is not available yet`);
    },
  });
}
