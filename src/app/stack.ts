/**
 * Runs one role of the system, or all of them, in this process: first the foundation every role
 * shares (chain with the venues deployed or reused, storage, API keys, calendar), then the roles
 * asked for, in the order of ROLE_MODULES. Each role lives in its own module under ./roles; adding
 * one is a module plus a line here.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { AppConfig, Role, StockChainSetting } from '../config/app-config.ts';
import type { Logger } from '../lib/logger.ts';
import { AppError } from '../errors/app-error.ts';
import type { ApiKeyService } from '../auth/api-key-service.ts';
import { DEMO_TAKER_ACCOUNT, DEMO_WALLETS, guardianAddressOf, MARKET_MAKER_ACCOUNT } from '../chain/anvil-accounts.ts';
import { stockDeploymentOf, stockVenueDeployer, type Deployment } from '../chain/deploy-contracts.ts';
import { APP_VERSION } from '../config/build-info.ts';
import { migrateLegacyDeployment, migrationRoles } from './legacy-venue-migration.ts';
import { DEMO_PERP_DEPOSIT, DEMO_TAKER_DEPOSIT, MARKET_MAKER_DEPOSIT, MARKET_MAKER_GAS, perpVenueDeployer } from '../chain/deploy-perp-venue.ts';
import { createVenueCalendar, DEMO_SYMBOLS, withSessionFlags, type VenueCalendar } from '../marketdata/symbol-catalog.ts';
import { createMarketCalendar } from '../marketdata/market-calendar.ts';
import type { Db } from '../storage/database.ts';
import { deploymentPath, startChain, type ChainWiring, type Signer } from './chain-wiring.ts';
import type { Address } from 'viem';
import { chainVenueConfig } from './chain-venues.ts';
import { sealOwnership } from './seal-ownership.ts';
import { writeDeploymentRecord } from '../chain/deployment-file.ts';
import { demoFilePath, writeDemoFile, type DemoFile } from './demo-file.ts';
import { createStackContext, type StartRole, type UnstartedChain } from './stack-context.ts';
import { createStopList } from './stop-list.ts';
import { leasedRole } from './leased-role.ts';
import { newHolderId } from '../storage/lease-keeper.ts';
import { createRoleStatusRegistry } from '../observability/role-status.ts';
import { startStatusPublisher } from '../observability/status-publisher.ts';
import { startMetrics } from './metrics-wiring.ts';
import { apiTransportFor, reloadServerTls, type TlsReloadResult } from '../http/tls-options.ts';
import type { Server as HttpsServer } from 'node:https';
import { openAppDatabase, openKeyService } from './storage-wiring.ts';
import { startMarketDataRole } from './roles/marketdata-role.ts';
import { startIndexerRole } from './roles/indexer-role.ts';
import { startExecutorRole } from './roles/executor-role.ts';
import { startStockApiRole } from './roles/stock-api-role.ts';
import { startRelayerRole } from './roles/relayer-role.ts';
import { startPerpApiRole } from './roles/perp-api-role.ts';
import { startPerpEngineRole } from './roles/perp-engine-role.ts';
import { configureSignatureRecovery, signatureRecoveryPool, signatureWorkerCount } from '../chain/signature-recovery-pool.ts';
import { createSandboxState } from '../sandbox/sandbox-state.ts';
import { createSandboxClock, SANDBOX_CLOCK_FILE } from '../sandbox/sandbox-clock.ts';
import { resetVenueClock } from '../lib/venue-clock.ts';
import { setVenueClockAdvancer } from '../lib/venue-clock-walk.ts';
import { DEFAULT_INSTRUMENTS } from '../perp/engine/instruments.ts';
import { newYorkDate } from '../marketdata/corporate-actions.ts';
import { SANDBOX_PATH } from '@tokex/contract';
import { startRevertibleStack, type KeptParts } from './revertible-stack.ts';
import { endSeededSandbox, startSeededSandbox } from '../sandbox/sandbox-seed.ts';
import { setVenueSeed } from '../lib/seeded-random.ts';

/**
 * The roles this version runs, in start order: market data first, so that the roles after it in
 * the same process read its live quotes instead of the table.
 */
const ROLE_MODULES: ReadonlyArray<readonly [Exclude<Role, 'all'>, StartRole]> = [
  // The singletons run under a lease each: a second copy waits on stand-by (docs/deployment.md).
  ['marketdata', leasedRole('marketdata', startMarketDataRole)],
  ['indexer', leasedRole('indexer', startIndexerRole)],
  ['executor', leasedRole('executor', startExecutorRole)],
  ['relayer', leasedRole('relayer', startRelayerRole)],
  // Before the perp API: a process running both serves the engine to it in process.
  ['perp-engine', leasedRole('perp-engine', startPerpEngineRole)],
  ['stock-api', startStockApiRole],
  ['perp-api', startPerpApiRole],
];

/**
 * The roles that run once per chain served, each under its own lease in its chain's namespace; the
 * others run on the first chain only (docs/deployment.md, "Several chains").
 */
const PER_CHAIN_ROLES: ReadonlySet<Role> = new Set<Role>(['indexer', 'executor', 'relayer']);

/**
 * Whether this process runs the per-chain roles of a chain: every chain served without `chains`;
 * otherwise the chains named, each of which must be served (a typo would run nothing and say
 * nothing), and only with a per-chain role among those asked (else `--chain` would select nothing).
 */
function chainSelection(config: AppConfig, chains: readonly number[] | undefined, perChainRoles: boolean): (chainId: number) => boolean {
  if (chains === undefined) return () => true;
  const served = config.stockChains.map((c) => c.chainId);
  const unknown = chains.filter((id) => !served.includes(id));
  if (unknown.length > 0) {
    throw new AppError('VALIDATION', `--chain: chain ${unknown.join(', ')} is not served by this configuration; it serves ${served.join(', ')} (EMBEDDED_CHAIN_IDS or STOCK_CHAINS)`);
  }
  if (!perChainRoles) throw new AppError('VALIDATION', `--chain: selects the chains of the per-chain roles (${[...PER_CHAIN_ROLES].join(', ')} or all), and none of them is asked`);
  return (chainId) => chains.includes(chainId);
}

/** A chain venue of this process (the first chain's and each other's), as tests and the banner read it. */
export interface StackChain {
  chainId: number;
  rpcUrl: string;
  deployment: Deployment;
  db: Db;
  /** DATA_DIR for the first chain, DATA_DIR/chains/<chainId> for the others. */
  dataDir: string;
}

export interface StackHandle {
  config: AppConfig;
  rpcUrl: string;
  deployment: Deployment;
  db: Db;
  /**
   * The perpetual venue's history (docs/perp-sequencer.md "The history's own file"): on SQLite
   * `perp-history.sqlite`, on PostgreSQL `db`. Opened at the first call if no perp role did.
   */
  perpHistoryDb(): Promise<Db>;
  /** Every chain served, the first (the fields above) first. */
  chains: StackChain[];
  /** Chains on a node that did not answer at start, until it answers (retried in the background). */
  unstartedChains: Array<{ chainId: number; reason: string }>;
  keys: ApiKeyService;
  stockApi?: FastifyInstance;
  stockBaseUrl?: string;
  perpApi?: FastifyInstance;
  /** `{perp_base_url}`: the perp API's paths (`/v4/public/trader/...`) follow it. */
  perpBaseUrl?: string;
  demo?: DemoFile;
  demoFile?: string;
  /** The market calendar every role here reads (its clock: the wall clock or `MARKET_CLOCK_START`'s). */
  calendar: VenueCalendar;
  /** What this start upgraded or migrated (the banner says so); empty when nothing. */
  upgradeNotes: string[];
  /** `GET /metrics` of this process (METRICS_HOST/METRICS_PORT); undefined with METRICS_PORT=off. */
  metricsUrl?: string;
  /** The sandbox control API's base URL (docs/sandbox.md) when it is on and this process serves the stock API. */
  sandboxUrl?: string;
  /**
   * Reads TLS_CERT_FILE / TLS_KEY_FILE / TLS_CA_FILE again for both APIs' new connections (open
   * ones keep theirs); a bad file keeps the running certificate and is logged. `tokex start` calls
   * it on SIGHUP. Empty without TLS.
   */
  reloadTls(): TlsReloadResult[];
  /** Writes this process's role statuses (the first chain's) now, not at the publisher's next tick. */
  publishStatus(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The calendar every role of this process reads, and the listing with the operator's session flags.
 * A `STOCK_SESSION_FLAGS` naming an unlisted symbol stops the start; under a calendar other than
 * us-sessions the flags are ignored (with a warning), as `GET symbols` keeps those calendars' meaning.
 */
function venueCalendar(config: AppConfig, logger: Logger) {
  let symbols;
  try {
    symbols = withSessionFlags(DEMO_SYMBOLS, config.stockSessionFlags);
  } catch (err) {
    throw new AppError('VALIDATION', (err as Error).message);
  }
  if (Object.keys(config.stockSessionFlags).length > 0 && config.marketCalendar !== 'us-sessions') {
    logger.warn({ calendar: config.marketCalendar }, 'STOCK_SESSION_FLAGS applies only with MARKET_CALENDAR=us-sessions; ignored');
  }
  // The calendar's clock is set once: from then on it runs at wall speed.
  const clockOffsetMs = config.marketClockStart === undefined ? 0 : config.marketClockStart - Date.now();
  if (clockOffsetMs !== 0) {
    logger.warn({ marketClockStart: new Date(config.marketClockStart!).toISOString(), clockOffsetMs }, 'MARKET_CLOCK_START: the market calendar runs on a shifted clock');
  }
  return { calendar: createVenueCalendar(createMarketCalendar(config.marketCalendar), { symbols, clockOffsetMs }), symbols };
}

/**
 * Starts `role` in this process: `all`, one role, or several (a deployment that co-locates some,
 * or a test that runs a role apart from the others).
 */
export async function startStack(config: AppConfig, opts: StartStackOptions): Promise<StackHandle> {
  const asked: readonly Role[] = typeof opts.role === 'string' ? [opts.role] : opts.role;
  // Snapshots, revert and reset (docs/sandbox.md): a sandbox that runs every role here on the
  // embedded storage can stop its venue and start it again in this process.
  if (config.sandbox && asked.includes('all') && config.databaseUrl === undefined && opts.kept === undefined) {
    return startRevertibleStack({
      config,
      logger: opts.logger,
      deploymentFile: deploymentPath(config),
      start: (again, kept) => startStackOnce(again, { ...opts, kept }),
    });
  }
  return startStackOnce(config, opts);
}

interface StartStackOptions {
  role: Role | readonly Role[];
  logger: Logger;
  /**
   * `tokex start --chain` (docs/deployment.md, "Several chains"): the chains whose per-chain roles
   * (indexer, executor, relayer) this process runs; every chain served when absent. The other
   * roles, the stock API among them, are not per chain and run as asked.
   */
  chains?: readonly number[];
  /**
   * What outlives this start when the sandbox starts the venue again in the same process (a
   * revert, src/app/revertible-stack.ts): the embedded anvils, the sandbox's state, and whether
   * the anvils were already moved to the venue's time (they were unless they were just started).
   */
  kept?: KeptParts;
}

async function startStackOnce(config: AppConfig, opts: StartStackOptions): Promise<StackHandle> {
  const { logger } = opts;
  const asked: readonly Role[] = typeof opts.role === 'string' ? [opts.role] : opts.role;
  const roles = ROLE_MODULES.filter(([name]) => asked.includes('all') || asked.includes(name));
  if (roles.length === 0) throw new AppError('INTERNAL', `role ${asked.join(',')}: not available in this version`);
  const runsChain = chainSelection(config, opts.chains, roles.some(([name]) => PER_CHAIN_ROLES.has(name)));
  // A bad certificate file, or plain HTTP where production mode forbids it, stops the start before
  // anything runs (each API role checks again as it starts).
  for (const [name] of roles) if (name === 'stock-api' || name === 'perp-api') apiTransportFor(config, name === 'stock-api' ? 'stock API' : 'perp API');
  const { calendar, symbols } = venueCalendar(config, logger);
  fs.mkdirSync(config.dataDir, { recursive: true });
  const stops = createStopList(logger);
  try {
    // The executor's address is the venue's one operator (src/chain/venue-roles.ts): the deployer is
    // not made one, unless the shared key stands in for the executor's own (then it is the executor).
    const stockVenue = (addressOf: (signer: Signer) => Address | undefined) => {
      const executor = addressOf('executor');
      return stockVenueDeployer({
        symbols: DEMO_SYMBOLS.map(({ symbol, name }) => ({ symbol, name })),
        demoWallets: config.demoMode ? DEMO_WALLETS.map((w) => w.address) : [],
        options: { operators: executor ? [executor] : [], guardian: guardianAddressOf(config) },
      });
    };
    const chain = await startChain({
      config,
      logger,
      stops,
      ...(opts.kept ? { keptAnvils: opts.kept.anvils, setUps: opts.kept.setUps } : {}),
      allInOneProcess: asked.includes('all'),
      venues: ({ addressOf }) => {
        // The perp operator pays withdrawals; without its address configured here none is granted yet.
        const perpOperator = addressOf('perp-operator');
        return [
          stockVenue(addressOf),
          // After the stock venue: its cash token is the collateral.
          perpVenueDeployer({
            operators: perpOperator ? [perpOperator] : [],
            withdrawalCap: config.perpWithdrawalCap,
            guardian: guardianAddressOf(config),
            demoDeposits: config.demoMode
              ? [
                  { privateKey: DEMO_WALLETS[0].privateKey, amount: DEMO_PERP_DEPOSIT },
                  // The demo market maker deposits through the vault like any user.
                  { privateKey: MARKET_MAKER_ACCOUNT.privateKey, amount: MARKET_MAKER_DEPOSIT, gas: MARKET_MAKER_GAS },
                  { privateKey: DEMO_TAKER_ACCOUNT.privateKey, amount: DEMO_TAKER_DEPOSIT, gas: MARKET_MAKER_GAS },
                ]
              : [],
          }),
        ];
      },
    });
    const db = await openAppDatabase(config);
    stops.add(() => db.close());
    // A venue deployed before the proxies moves to upgradeable contracts before any role reads it
    // (startChain refused already where that is not to happen at start).
    // Only in a process running every role: startChain refused elsewhere, so no legacy venue is left here otherwise.
    const migrated = !asked.includes('all') ? undefined : await migrateLegacyDeployment({
      db,
      publicClient: chain.publicClient,
      ownerWallet: chain.walletFor('deployer')!,
      record: chain.record,
      file: deploymentPath(config),
      logger,
      durable: chain.flushState,
      withdrawalCap: config.perpWithdrawalCap,
      roles: migrationRoles(chain.addressOf, guardianAddressOf(config)),
    });
    if (migrated) {
      chain.record = migrated.record;
      chain.deployment = stockDeploymentOf(migrated.record)!;
      logger.info({ release: APP_VERSION, reconciliation: migrated.journal.reconciliation }, 'venues migrated to upgradeable contracts');
      const balanced = migrated.journal.reconciliation?.every((r) => r.ok) ?? false;
      chain.upgradeNotes.push(`venues of 0.1.0 migrated to upgradeable contracts (${APP_VERSION}); reconciliation ${balanced ? 'balanced to the unit' : 'see the journal'}: ${deploymentPath(config).replace(/\.json$/, '')}.migration.json`);
    }
    const keys = openKeyService(config, db, logger);
    const status = createRoleStatusRegistry(newHolderId());
    // The sandbox's token and faults (docs/sandbox.md), one for the process and every chain's roles.
    const sandbox = config.sandbox ? (opts.kept?.sandbox ?? createSandboxState({ dataDir: config.dataDir, allInOne: asked.includes('all'), stockApiPrefix: config.stockApiPrefix })) : undefined;
    // A start again in this process (revertible-stack.ts) keeps the first one's token and faults.
    if (opts.kept && sandbox) opts.kept.sandbox = sandbox;
    if (sandbox && config.sandboxSeed !== undefined) {
      // A seeded venue (docs/sandbox.md "Determinism") starts frozen at a whole funding step, before
      // the clock below moves the chain to it. A start again in this process (a snapshot, revert or
      // reset) keeps the clock it was given: only the seed is set again.
      if (opts.kept?.firstStart === false) setVenueSeed(config.sandboxSeed);
      else startSeededSandbox({ seed: config.sandboxSeed, clockFile: path.join(config.dataDir, SANDBOX_CLOCK_FILE), alignMs: clockStepMs(config) });
      stops.add(async () => endSeededSandbox());
    }
    if (sandbox) {
      // Before the roles: the advances of earlier runs on this data directory are back before any
      // role reads the clock. The stop puts the process's clock back to the wall clock.
      sandbox.clock = await createSandboxClock({
        publicClient: chain.publicClient,
        file: path.join(config.dataDir, SANDBOX_CLOCK_FILE),
        nodeKeepsTime: config.rpcUrl !== undefined || opts.kept?.chainKeepsTime === true,
        allInOne: sandbox.allInOne,
        calendarMark: (ms) => `${newYorkDate(ms + calendar.clockOffsetMs)} ${calendar.session(ms)}`,
        stepMs: clockStepMs(config),
        logger,
      });
      // Back to the wall clock, and no advancer left behind: a later stack in this process (a test's,
      // a sandbox restart's) registers its own clock's, and a stopped one must not be called.
      stops.add(async () => {
        setVenueClockAdvancer(undefined);
        resetVenueClock();
      });
    }
    const ctx = createStackContext({ config, logger, chain, db, keys, calendar, symbols, status, sandbox }, stops);
    // The perpetual history's file opened, and an earlier release's history moved into it, before
    // any role holds a lease: on SQLite the move's statements run on this thread, like the
    // migrations above, and for a long history they take a while (docs/perp-sequencer.md "The
    // history's own file").
    if (roles.some(([name]) => name === 'perp-engine' || name === 'perp-api')) await ctx.perpHistoryDb();
    // Before the roles, so it stops after them and its last write records their released leases.
    const publisher = startStatusPublisher({ db, registry: status, intervalMs: config.statusPublishMs, logger });
    stops.add(() => publisher.stop());
    const publishers = [publisher];
    // The other chains' venues (docs/deployment.md, "Several chains"): the stock venue only, with
    // its own chain, deployment record, storage namespace and role status; the key service, the
    // quotes and the calendar are the first chain's.
    // Only where a role of theirs runs: a process of marketdata, the perpetual roles or both never touches them.
    // With --chain, only the chains named (and every chain where the stock API runs: it serves them all).
    const servesChain = (chainId: number) => roles.some(([name]) => (PER_CHAIN_ROLES.has(name) && runsChain(chainId)) || name === 'stock-api');
    const startOther = (setting: StockChainSetting) => startChain({
      config: chainVenueConfig(config, setting),
      logger: logger.child({ chainId: setting.chainId }),
      stops,
      ...(opts.kept ? { keptAnvils: opts.kept.anvils, setUps: opts.kept.setUps } : {}),
      allInOneProcess: asked.includes('all'),
      venues: ({ addressOf }) => [stockVenue(addressOf)],
    });
    /** The context of a chain after the first once its chain is up (its database opened already or now). */
    const otherContext = async (setting: StockChainSetting, other: ChainWiring, db?: Db) => {
      const chainConfig = chainVenueConfig(config, setting);
      const chainLogger = logger.child({ chainId: setting.chainId });
      const otherDb = db ?? (await openAppDatabase(chainConfig));
      if (!db) stops.add(() => otherDb.close());
      // The sandbox's clock moves every chain of the venue (docs/sandbox.md, "Clock"): this one too,
      // to the venue's time before its roles start (an embedded anvil starts on the wall clock).
      await sandbox?.clock?.addChain(other.publicClient, setting.rpcUrl !== undefined || opts.kept?.chainKeepsTime === true);
      const otherStatus = createRoleStatusRegistry(newHolderId());
      const otherCtx = createStackContext({ config: chainConfig, logger: chainLogger, chain: other, db: otherDb, keys, calendar, symbols, status: otherStatus, sandbox }, stops, ctx);
      const otherPublisher = startStatusPublisher({ db: otherDb, registry: otherStatus, intervalMs: config.statusPublishMs, logger: chainLogger });
      stops.add(() => otherPublisher.stop());
      publishers.push(otherPublisher);
      return otherCtx;
    };
    const unstartedSettings = new Map<number, StockChainSetting>();
    for (const setting of config.stockChains.slice(1).filter((c) => servesChain(c.chainId))) {
      const chainConfig = chainVenueConfig(config, setting);
      const chainLogger = logger.child({ chainId: setting.chainId });
      fs.mkdirSync(chainConfig.dataDir, { recursive: true });
      let other: ChainWiring;
      try {
        other = await startOther(setting);
      } catch (err) {
        // A chain on a node that does not answer leaves the others to start: /readyz names it, and
        // it is tried again in the background until its node answers (below). An embedded anvil
        // that fails is this machine's problem, and stops the start as on a single chain.
        if (setting.rpcUrl === undefined) throw err;
        const reason = reasonOf(err);
        chainLogger.error({ err, rpcUrl: setting.rpcUrl }, `chain ${setting.chainId} did not start: tried again every ${LATE_CHAIN_RETRY_MS / 1000} s until its node answers (docs/deployment.md, "Several chains")`);
        // Its database needs no node: opened now, so that the API's routes for the chain exist from the start.
        const db = await openAppDatabase(chainConfig);
        stops.add(() => db.close());
        ctx.unstartedChains.push({ chainId: setting.chainId, reason, db, onStarted: [] });
        unstartedSettings.set(setting.chainId, setting);
        continue;
      }
      ctx.otherChains.push(await otherContext(setting, other));
    }
    const metrics = await startMetrics(ctx);
    stops.add(() => metrics.stop());
    // The APIs recover the signers of signed requests (orders, key creation, One Click): on worker
    // threads when SIGNATURE_WORKERS leaves any (docs/performance.md, "Signature recovery on every core").
    if (roles.some(([name]) => name === 'stock-api' || name === 'perp-api')) {
      const workers = signatureWorkerCount(config.signatureWorkers);
      // A start again in the process (a sandbox revert) keeps the pool the first start made: its
      // workers hold nothing of the venue's state, and starting them again costs a revert's CPU.
      if (workers > 0 && !(opts.kept && signatureRecoveryPool())) {
        await configureSignatureRecovery({ workers, logger });
        const stopPool = () => configureSignatureRecovery({ workers: 0 }).then(() => undefined);
        if (opts.kept) opts.kept.processStops.push(stopPool);
        else stops.add(stopPool);
      }
    }
    for (const [name, start] of roles) {
      // A per-chain role starts on the other chains before the first's, so that the stock API
      // (started after them) finds every chain's venue running.
      if (!PER_CHAIN_ROLES.has(name)) {
        stops.add(await start(ctx));
        continue;
      }
      for (const other of ctx.otherChains) if (runsChain(other.config.chainId)) stops.add(await start(other));
      if (runsChain(config.chainId)) stops.add(await start(ctx));
    }
    // After the configuration the roles made (operators, feeds): the venues' contracts pass to their
    // timelocks and the delay is set (docs/security.md, "Owner and upgrader"). Idempotent; only where
    // the owner's configuration runs, so separate role processes do not race with the admin key.
    // The admin's processes: the deployer's key is where owner changes are made.
    // With --chain, on the chains named: the process running a chain's executor configures that chain.
    // A start again in the process (a sandbox snapshot, revert or reset) finds the chains as the
    // first start sealed them: each is put back only to a state taken after that start.
    // (A chain that comes up late is sealed as it starts, whichever start it is.)
    const sealsLate = asked.includes('all') || asked.includes('executor');
    const seals = sealsLate && opts.kept?.firstStart !== false;
    if (seals) {
      if (runsChain(config.chainId)) await sealOwnership({ config, logger, chain });
      for (const other of ctx.otherChains) if (runsChain(other.config.chainId)) await sealOwnership({ config: other.config, logger: other.logger, chain: other.chain });
    }
    // The chains whose node did not answer: tried again in the background; once one answers, its
    // venue, its roles, ownership and the API's routes start as they would have at start.
    for (const entry of [...ctx.unstartedChains]) {
      const setting = unstartedSettings.get(entry.chainId)!;
      const late = retryLateChain({
        entry,
        logger: logger.child({ chainId: entry.chainId }),
        start: async () => {
          const otherCtx = await otherContext(setting, await startOther(setting), entry.db);
          const runs = runsChain(entry.chainId);
          for (const [name, start] of roles) if (PER_CHAIN_ROLES.has(name) && runs) stops.add(await start(otherCtx));
          if (sealsLate && runs) await sealOwnership({ config: otherCtx.config, logger: otherCtx.logger, chain: otherCtx.chain });
          ctx.otherChains.push(otherCtx);
          for (const listener of entry.onStarted) await listener(otherCtx);
          ctx.unstartedChains.splice(ctx.unstartedChains.indexOf(entry), 1);
        },
      });
      stops.add(() => late.stop());
    }

    const reloadTls = (): TlsReloadResult[] => {
      const tls = config.tls;
      if (!tls) return [];
      const apis = [['stock API', ctx.endpoints.stock?.app], ['perp API', ctx.endpoints.perp?.app]] as const;
      return apis.flatMap(([what, app]) => (app ? [reloadServerTls(app.server as unknown as HttpsServer, tls, logger, what)] : []));
    };
    const handle: StackHandle = {
      config, rpcUrl: chain.rpcUrl, deployment: chain.deployment, db, perpHistoryDb: ctx.perpHistoryDb,
      // A chain started late joins the list.
      get chains(): StackChain[] {
        return [ctx, ...ctx.otherChains].map((c) => ({ chainId: c.chain.chainId, rpcUrl: c.chain.rpcUrl, deployment: c.chain.deployment, db: c.db, dataDir: c.config.dataDir }));
      },
      unstartedChains: ctx.unstartedChains, keys, calendar, metricsUrl: metrics.url, upgradeNotes: chain.upgradeNotes, reloadTls,
      publishStatus: () => publisher.publishOnce(),
      stop: () => stops.stopAll(),
    };
    const perpApi = ctx.endpoints.perp;
    if (perpApi) {
      handle.perpApi = perpApi.app;
      handle.perpBaseUrl = perpApi.baseUrl;
    }
    const stockApi = ctx.endpoints.stock;
    if (stockApi) {
      handle.stockApi = stockApi.app;
      handle.stockBaseUrl = stockApi.baseUrl;
      if (sandbox) handle.sandboxUrl = `${stockApi.baseUrl}${SANDBOX_PATH}`;
      if (config.demoMode) {
        handle.demo = await writeDemoFile(ctx, stockApi.baseUrl);
        handle.demoFile = demoFilePath(config.dataDir);
      }
    }
    // The roles' first statuses written now, not at the publishers' next tick (up to
    // STATUS_PUBLISH_MS away): /readyz and `tokex status` read right after a start see every role
    // this process runs, not "has never reported" (the publishers' first tick came before the roles).
    await Promise.all(publishers.map((p) => p.publishOnce().catch((err: unknown) => logger.warn({ err: (err as Error).message }, 'role status: could not publish; retrying'))));
    return handle;
  } catch (err) {
    await stops.stopAll();
    throw err;
  }
}

/** The sandbox clock's step: the shortest funding interval. */
function clockStepMs(config: AppConfig): number {
  return config.perp.fundingIntervalMs ?? Math.min(...DEFAULT_INSTRUMENTS.map((i) => i.fundingIntervalMs));
}

/** How often a chain whose node did not answer at start is tried again. */
export const LATE_CHAIN_RETRY_MS = 10_000;

function reasonOf(err: unknown): string {
  return (err as Error).message.split('\n')[0].slice(0, 300);
}

/**
 * Tries `start` every LATE_CHAIN_RETRY_MS until it succeeds, logging once per change of the reason
 * (not every attempt): a node down for a day writes one line, not 8,640. `stop` ends the tries and
 * waits for one under way.
 */
function retryLateChain(p: { entry: UnstartedChain; logger: Logger; start: () => Promise<void> }): { stop(): Promise<void> } {
  const { entry, logger } = p;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let attempt: Promise<void> | undefined;
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      attempt = (async () => {
        try {
          await p.start();
          logger.info(`chain ${entry.chainId} started: its node answers, its venue and roles run and the API serves it`);
        } catch (err) {
          if (stopped) return;
          const reason = reasonOf(err);
          if (reason !== entry.reason) {
            entry.reason = reason;
            logger.warn({ err }, `chain ${entry.chainId} still did not start: tried again every ${LATE_CHAIN_RETRY_MS / 1000} s`);
          }
          schedule();
        }
      })();
    }, LATE_CHAIN_RETRY_MS);
    timer.unref?.();
  };
  schedule();
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await attempt;
    },
  };
}
