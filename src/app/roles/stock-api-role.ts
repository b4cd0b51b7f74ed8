/** Role `stock-api`: the signed tokenized-stock HTTP API; stateless, so many may run at once. */
import { Redis } from 'ioredis';
import { createMemoryNonceStore, createRedisNonceStore, type NonceStore } from '../../auth/nonce-store.ts';
import { loadCorporateActions } from '../../marketdata/corporate-actions.ts';
import { buildStockApi } from '../../stock/stock-api.ts';
import { createStockChainReader } from '../../stock/stock-chain-reader.ts';
import { createStockDirectory } from '../../stock/stock-directory.ts';
import { createCalldataJournal } from '../../stock/calldata-journal.ts';
import type { StackContext } from '../stack-context.ts';
import { startGuarded } from '../stop-list.ts';

export async function startStockApiRole(ctx: StackContext): Promise<() => Promise<void>> {
  const { config, logger, db } = ctx;
  const { deployment, readClient } = ctx.chain;
  // The delegatee users sign for: the relayer's address, whichever process holds its key.
  const relayer = ctx.chain.addressOf('relayer');
  if (!relayer) ctx.logger.warn('no relayer address (RELAYER_ADDRESS or RELAYER_PRIVATE_KEY): One Click endpoints answer 503');
  const { stop } = await startGuarded(logger, async (stops) => {
    let nonces: NonceStore;
    if (config.redisUrl) {
      const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: true });
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
    const corporate = await loadCorporateActions(config.corporateActionsFile);
    const calldataJournal = createCalldataJournal({ db, logger });
    stops.add(() => calldataJournal.close());
    const app = await buildStockApi({
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
        corporateActions: (symbol) => corporate.list(symbol),
        oneClick: relayer
          ? { relayer, signals: ctx.relaySignals, waitMs: config.relay.waitMs, pollMs: config.relay.pollMs }
          : undefined,
      },
      keys: ctx.keys,
      nonces,
      logger,
      bodyLimitBytes: config.bodyLimitBytes,
      trustedProxies: config.trustedProxies,
    });
    const address = await app.listen({ host: config.host, port: config.stockApiPort });
    stops.add(() => app.close());
    ctx.endpoints.stock = { app, baseUrl: address + config.stockApiPrefix };
  });
  return stop;
}
