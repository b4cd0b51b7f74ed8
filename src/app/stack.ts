/**
 * Wires the processes of the system together. `startStack` runs one role or all of them in this
 * process: the chain (anvil spawned from npm unless RPC_URL is set) with the contracts deployed or
 * reused, storage, the market-data simulator, and the stock API. Roles only wire; every behaviour
 * lives in its own module.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import type { Address, Hex } from 'viem';
import type { AppConfig, Role } from '../config/app-config.ts';
import type { Logger } from '../lib/logger.ts';
import { AppError } from '../errors/app-error.ts';
import { createMemoryNonceStore, createRedisNonceStore, type NonceStore } from '../auth/nonce-store.ts';
import type { ApiKeyService } from '../auth/api-key-service.ts';
import { startAnvil, type AnvilHandle } from '../chain/anvil-process.ts';
import { DEMO_WALLETS, OPERATOR_ACCOUNT } from '../chain/anvil-accounts.ts';
import { createChainClients } from '../chain/chain-client.ts';
import { deployStack, isDeploymentLive, type Deployment } from '../chain/deploy-contracts.ts';
import { readDeployment, writeDeployment } from '../chain/deployment-file.ts';
import { DEMO_SYMBOLS } from '../marketdata/symbol-catalog.ts';
import { createMarketDataService } from '../marketdata/market-data-service.ts';
import { createQuoteCache } from '../marketdata/quote-cache.ts';
import { createMarketCalendar } from '../marketdata/market-calendar.ts';
import { loadCorporateActions } from '../marketdata/corporate-actions.ts';
import type { QuoteReader } from '../marketdata/market-types.ts';
import type { Db } from '../storage/database.ts';
import { getMeta, setMeta } from '../storage/meta-store.ts';
import { buildStockApi } from '../stock/stock-api.ts';
import { createStockIndexer } from '../stock/indexer/stock-indexer.ts';
import { createStockExecutor } from '../stock/executor/stock-executor.ts';
import { createStockChainReader } from '../stock/stock-chain-reader.ts';
import { createStockDirectory } from '../stock/stock-directory.ts';
import { createCalldataJournal } from '../stock/calldata-journal.ts';
import { openAppDatabase, openKeyService } from './storage-wiring.ts';

export interface DemoFile {
  chainId: number;
  rpcUrl: string;
  wallets: Array<{ address: Address; privateKey: Hex }>;
  stock: {
    baseUrl: string;
    product: string;
    contracts: { stockRouter: Address; oneClickRouter: Address; cashier: Address; cashToken: Address; accountLens: Address; stocks: Record<string, Address> };
    keys: {
      readOnly: { apiKey: string; apiSecret: string };
      writable: { apiKey: string; apiSecret: string; userAddress: Address };
    };
  };
}

export interface StackHandle {
  config: AppConfig;
  rpcUrl: string;
  deployment: Deployment;
  db: Db;
  keys: ApiKeyService;
  stockApi?: FastifyInstance;
  stockBaseUrl?: string;
  demo?: DemoFile;
  demoFile?: string;
  stop(): Promise<void>;
}


function deploymentPath(config: AppConfig): string {
  return config.deploymentFile ?? path.join(config.dataDir, 'deployments', `${config.chainId}.json`);
}

export async function startStack(config: AppConfig, opts: { role: Role; logger: Logger }): Promise<StackHandle> {
  const { logger, role } = opts;
  const runs = (r: Role) => role === 'all' || role === r;
  if (!['all', 'stock-api', 'marketdata', 'indexer', 'executor'].includes(role)) {
    throw new AppError('INTERNAL', `role ${role}: not available in this version`);
  }
  fs.mkdirSync(config.dataDir, { recursive: true });
  const stops: Array<() => Promise<void>> = [];
  const stop = async () => {
    for (const s of stops.reverse()) {
      try {
        await s();
      } catch (err) {
        logger.warn({ err }, 'shutdown step failed');
      }
    }
  };

  try {
    // Chain: an embedded anvil whose state lives in the data directory, or the given RPC.
    let anvil: AnvilHandle | undefined;
    let rpcUrl: string;
    if (config.rpcUrl) {
      rpcUrl = config.rpcUrl;
    } else {
      anvil = await startAnvil({
        port: config.anvilPort ?? 0,
        host: '127.0.0.1',
        chainId: config.chainId,
        stateFile: path.join(config.dataDir, 'anvil-state.json'),
        logger,
      });
      stops.push(() => anvil!.stop());
      rpcUrl = anvil.rpcUrl;
      logger.info({ rpcUrl }, 'anvil started');
    }
    const operatorKey = config.operatorPrivateKey ?? (anvil ? OPERATOR_ACCOUNT.privateKey : undefined);
    const clients = createChainClients({ rpcUrl, chainId: config.chainId, operatorPrivateKey: operatorKey });

    const depFile = deploymentPath(config);
    let deployment: Deployment | undefined = await readDeployment(depFile);
    if (deployment && !(await isDeploymentLive(clients.publicClient, deployment))) {
      logger.warn({ depFile }, 'recorded deployment has no code on this chain; deploying again');
      deployment = undefined;
    }
    if (!deployment) {
      if (!clients.walletClient) throw new AppError('INTERNAL', 'no deployment recorded for this chain and no OPERATOR_PRIVATE_KEY to deploy with');
      deployment = await deployStack({
        publicClient: clients.publicClient,
        walletClient: clients.walletClient,
        symbols: DEMO_SYMBOLS,
        demoWallets: config.demoMode ? DEMO_WALLETS.map((w) => w.address) : [],
      });
      await writeDeployment(depFile, deployment);
      logger.info({ depFile, contracts: deployment.contracts }, 'contracts deployed');
    } else {
      logger.info({ depFile }, 'reusing deployed contracts');
    }

    const db = await openAppDatabase(config);
    stops.push(() => db.close());
    const keys = openKeyService(config, db);

    const calendar = createMarketCalendar(config.marketCalendar);
    let quotes: QuoteReader;
    if (runs('marketdata')) {
      const md = createMarketDataService({
        db,
        symbols: DEMO_SYMBOLS,
        calendar,
        seed: config.marketDataSeed,
        tickMs: config.marketDataTickMs,
        historyDays: config.historyDays,
        logger,
      });
      await md.start();
      stops.push(() => md.stop());
      quotes = md;
    } else {
      const cache = createQuoteCache({ db, refreshMs: 1_000 });
      await cache.start();
      stops.push(async () => cache.stop());
      quotes = cache;
    }

    const handle: StackHandle = { config, rpcUrl, deployment, db, keys, stop };

    if (runs('indexer')) {
      const indexer = createStockIndexer({
        db,
        publicClient: clients.publicClient,
        deployment,
        confirmations: config.indexer.confirmations,
        pollMs: config.indexer.pollMs,
        batchBlocks: config.indexer.batchBlocks,
        logger,
      });
      await indexer.start();
      stops.push(() => indexer.stop());
    }

    if (runs('executor')) {
      if (!clients.walletClient) throw new AppError('INTERNAL', 'the executor needs OPERATOR_PRIVATE_KEY');
      const s = config.executor;
      const executor = createStockExecutor({
        db,
        publicClient: clients.publicClient,
        walletClient: clients.walletClient,
        deployment,
        quotes,
        calendar,
        logger,
        tickMs: s.tickMs,
        batchSize: s.batchSize,
        cashSettleDelayMs: s.cashSettleDelayMs,
        maxBatchGas: s.maxBatchGas,
        maxInFlightBatches: s.maxInFlightBatches,
        simulateFirst: s.simulateFirst,
        maxFill: s.maxFill,
        quoteMaxAgeMs: s.quoteMaxAgeMs,
        noQuoteTimeoutMs: s.noQuoteTimeoutMs,
      });
      await executor.start();
      stops.push(() => executor.stop());
    }

    if (runs('stock-api')) {
      let redis: Redis | undefined;
      let nonces: NonceStore;
      if (config.redisUrl) {
        redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: true });
        await redis.connect();
        stops.push(async () => void redis!.disconnect());
        nonces = createRedisNonceStore(redis);
      } else {
        nonces = createMemoryNonceStore();
        stops.push(() => nonces.close());
      }
      const chain = createStockChainReader({
        publicClient: clients.publicClient,
        deployment,
        refreshMs: config.chainConfigRefreshMs,
        logger,
      });
      stops.push(async () => chain.stop());
      await chain.start();
      const corporate = await loadCorporateActions(config.corporateActionsFile);
      const calldataJournal = createCalldataJournal({ db, logger });
      stops.push(() => calldataJournal.close());
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
          stocks: createStockDirectory(DEMO_SYMBOLS, deployment.contracts.stocks),
          quotes,
          chain,
          calendar,
          corporateActions: (symbol) => corporate.list(symbol),
        },
        keys,
        nonces,
        logger,
        bodyLimitBytes: config.bodyLimitBytes,
        trustedProxies: config.trustedProxies,
      });
      const address = await app.listen({ host: config.host, port: config.stockApiPort });
      stops.push(() => app.close());
      handle.stockApi = app;
      handle.stockBaseUrl = address + config.stockApiPrefix;
    }

    if (config.demoMode && handle.stockBaseUrl) {
      handle.demo = await writeDemoFile(config, handle, rpcUrl, keys, db);
      handle.demoFile = path.join(config.dataDir, 'demo.json');
    }
    return handle;
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * Dev mode only: the demo keys are created once (their ids kept in meta) and their secrets written
 * to DATA_DIR/demo.json so the README's examples work. Only in DEMO_MODE (the embedded anvil by default).
 */
async function writeDemoFile(config: AppConfig, h: StackHandle, rpcUrl: string, keys: ApiKeyService, db: Db): Promise<DemoFile> {
  const demoUser = DEMO_WALLETS[0].address.toLowerCase() as Address;
  const file = path.join(config.dataDir, 'demo.json');
  const previous = fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as DemoFile) : undefined;
  const ids = JSON.parse((await getMeta(db, 'demo.stockKeys')) ?? '{}') as { readOnly?: string; writable?: string };
  type Cred = { apiKey: string; apiSecret: string };
  // Keeps the previous run's demo key when it is still valid, so demo.json stays stable across restarts.
  const ensure = async (id: string | undefined, secret: string | undefined, create: () => Promise<Cred>): Promise<Cred> => {
    if (id && secret) {
      const key = await keys.lookupForAuth(id);
      if (key && key.active && key.secret === secret) return { apiKey: id, apiSecret: secret };
    }
    return create();
  };
  const common = { ipWhitelist: ['127.0.0.1', '::1'], chainId: config.chainId, product: config.stockProduct };
  const readOnly = await ensure(ids.readOnly, previous?.stock.keys.readOnly.apiSecret, async () => {
    const r = await keys.create({ ...common, permission: 'READ_ONLY', label: 'demo read-only' });
    return { apiKey: r.key.apiKey, apiSecret: r.apiSecret };
  });
  const writable = await ensure(ids.writable, previous?.stock.keys.writable.apiSecret, async () => {
    const r = await keys.create({ ...common, permission: 'WRITABLE', label: 'demo writable', userAddress: demoUser });
    return { apiKey: r.key.apiKey, apiSecret: r.apiSecret };
  });
  await setMeta(db, 'demo.stockKeys', JSON.stringify({ readOnly: readOnly.apiKey, writable: writable.apiKey }));

  const c = h.deployment.contracts;
  const demo: DemoFile = {
    chainId: config.chainId,
    rpcUrl,
    wallets: DEMO_WALLETS.map((w) => ({ address: w.address, privateKey: w.privateKey })),
    stock: {
      baseUrl: h.stockBaseUrl!,
      product: config.stockProduct,
      contracts: {
        stockRouter: c.stockRouter,
        oneClickRouter: c.oneClickRouter,
        cashier: c.cashier,
        cashToken: c.cashToken,
        accountLens: c.accountLens,
        stocks: c.stocks,
      },
      keys: { readOnly, writable: { ...writable, userAddress: demoUser } },
    },
  };
  fs.writeFileSync(file, JSON.stringify(demo, null, 2) + '\n', { mode: 0o600 });
  return demo;
}
