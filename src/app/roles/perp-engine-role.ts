/**
 * Role `perp-engine`: the perpetual venue's single writer (docs/perp-sequencer.md) and the workers
 * that feed it: the sequencer around the pure engine, journalled in the database; the projector of
 * its events into the history tables; the collateral task crediting the MarginVault's indexed
 * deposits; the mark-price and funding tasks fed by market data (stock quotes for the stock
 * perpetuals, the simulator's BTC and ETH), with the stock perpetuals' closed-market flag and the
 * split task that applies stock splits to them at the ex-date; the liquidity pool's quoter; and, in demo mode, the
 * market maker and a demo taker whose small market orders give a new install trades. One per
 * database.
 *
 * A perp API in the same process reaches it in process (`ctx.perpVenue`); with REDIS_URL and
 * PERP_ENGINE_STREAM the engine is also served over Redis Streams to perp APIs elsewhere.
 */
import { openRedis } from '../../storage/redis-client.ts';
import { DEMO_TAKER_ACCOUNT, MARKET_MAKER_ACCOUNT } from '../../chain/anvil-accounts.ts';
import { ensureReserveRegistry, ensureVaultEscapeHatch, perpDeploymentOf } from '../../chain/deploy-perp-venue.ts';
import { guardianAddressOf } from '../../chain/anvil-accounts.ts';
import { writeDeploymentRecord } from '../../chain/deployment-file.ts';
import { describePending } from '../../chain/owner-actions.ts';
import { deploymentPath } from '../chain-wiring.ts';
import { sealOwnership } from '../seal-ownership.ts';
import { createReservesTask } from '../../perp/workers/reserves-task.ts';
import { DEFAULT_INSTRUMENTS, withFundingInterval } from '../../perp/engine/instruments.ts';
import { indexedBlockInfo, projectorCaughtUp } from '../../perp/perp-venue.ts';
import { indexSymbolOf, midTicks } from '../../perp/pricing/index-price.ts';
import { createPerpProjector } from '../../perp/projection/perp-projector.ts';
import { projectorOnWorker, workerProjectionWriter } from '../../perp/projection/projection-worker-client.ts';
import { journalOnWorker, workerJournalWriter } from '../../perp/sequencer/journal-writer.ts';
import { EngineSequencer } from '../../perp/sequencer/engine-sequencer.ts';
import { NONCE_RETENTION_MS, createJournalNonceLedger, createOrderNonceClaimer } from '../../perp/store/order-nonce-store.ts';
import { createInProcessGateway } from '../../perp/sequencer/engine-gateway.ts';
import { perpStreams, serveEngineOverRedis } from '../../perp/sequencer/redis-stream-transport.ts';
import { createCollateralTask } from '../../perp/workers/collateral-task.ts';
import { createWithdrawalTask } from '../../perp/workers/withdrawal-task.ts';
import { createForcedWithdrawalTask } from '../../perp/workers/forced-withdrawal-task.ts';
import { senderFor } from '../../chain/tx-sender.ts';
import { createFundingTask } from '../../perp/workers/funding-task.ts';
import { createDemoPoolSeedTask } from '../../perp/workers/demo-pool-seed-task.ts';
import { createDemoTakerTask } from '../../perp/workers/demo-taker-task.ts';
import { createMarketMakerTask } from '../../perp/workers/market-maker-task.ts';
import { createPoolQuoterTask } from '../../perp/workers/pool-quoter-task.ts';
import { createMarkPriceTask, type IndexSource } from '../../perp/workers/mark-price-task.ts';
import type { StackContext } from '../stack-context.ts';
import { createStreamPublisher } from '../../streams/stream-publisher.ts';
import { perpChannels } from '../../perp/streams/perp-stream-channels.ts';
import { createPerpStreamTask, type PerpStreamTask } from '../../perp/streams/perp-stream-task.ts';
import { createMarketService } from '../../perp/market-service.ts';
import { startGuarded } from '../stop-list.ts';
import { startIndexOracle } from '../oracle-wiring.ts';
import { loadCorporateActions, newYorkDate } from '../../marketdata/corporate-actions.ts';
import { quoteSessionOpen } from '../../marketdata/live-quote-service.ts';
import { createSplitTask } from '../../perp/workers/split-task.ts';
import { listCorporateActions } from '../../stock/corporate-actions/corporate-action-store.ts';
import { onVenueClockStep, venueNow } from '../../lib/venue-clock.ts';
import { venueClockStep } from '../../lib/venue-clock-walk.ts';

export async function startPerpEngineRole(ctx: StackContext): Promise<() => Promise<void>> {
  const { config, logger, db } = ctx;
  if (!perpDeploymentOf(ctx.chain.record)) {
    logger.warn('perp-engine: the deployment has no perp venue; not started');
    return async () => {};
  }
  const { stop } = await startGuarded(logger, async (stops) => {
    const instruments = withFundingInterval(DEFAULT_INSTRUMENTS, config.perp.fundingIntervalMs);
    // Order nonces are claimed in the journal's commits unless perp APIs in other processes claim
    // them too (they reach the engine over Redis and claim in commits of their own).
    const nonceLedger = config.redisUrl && config.perp.engineStream ? undefined : (ctx.perpNonceLedger ??= createJournalNonceLedger(db, { retentionMs: NONCE_RETENTION_MS }));
    // The journal's group commits run on a worker thread of their own for a SQLite file, so that the
    // commit's fsync does not stop this thread's loop (docs/perp-sequencer.md "The journal's writer").
    const journalWriter = journalOnWorker(config.perp.journalWriter, db.location) ? workerJournalWriter({ database: db.location, logger }) : undefined;
    if (journalWriter) stops.add(() => journalWriter.close());
    logger.info({ journalWriter: journalWriter ? 'worker' : 'thread', setting: config.perp.journalWriter }, 'perp journal: where the group commits run (PERP_JOURNAL_WRITER)');
    const sequencer = new EngineSequencer({ db, engineOptions: { instruments }, eventBuffer: config.perp.eventBuffer, recentResults: config.perp.recentResults, logger, ...(nonceLedger ? { nonceLedger } : {}), ...(journalWriter ? { journalWriter } : {}) });
    await sequencer.start();
    stops.add(() => sequencer.stop());
    const gateway = createInProcessGateway(sequencer);
    const engine = () => sequencer.engine;

    // The history projection is written from a worker thread of its own, off the thread that takes
    // orders (on SQLite behind the file's write gate, so this thread's commits never wait inside
    // SQLite for the worker's); from this thread with PERP_PROJECTOR=thread, or on an in-memory
    // SQLite database, which a worker cannot open (docs/perp-sequencer.md "The projector").
    // On SQLite the history has a file of its own (perp-history.sqlite), so that the projection's
    // writes hold its write lock, not the one the journal's commits of orders need
    // (docs/perp-sequencer.md "The history's own file").
    const historyDb = await ctx.perpHistoryDb();
    const feeAccount = sequencer.engine.feeAccountAddress;
    const projector = createPerpProjector({
      db: historyDb, gateway, feeAccount, logger,
      ...(projectorOnWorker(config.perp.projector, historyDb.location) ? { writer: (onUnknownReason: (reason: string) => void) => workerProjectionWriter({ database: historyDb.location, feeAccount, onUnknownReason, logger }) } : {}),
    });
    await projector.start();
    stops.add(() => projector.stop());

    // The venue's streams, seeded from the engine before anything below submits a command
    // (docs/streams.md).
    // The process's broker, not one of this role's tenure: a perp API of this process keeps
    // reading it when the role loses its lease and takes it back (a new epoch then begins).
    let streams: PerpStreamTask | undefined;
    const shared = await ctx.streamBroker('perp');
    const broker = shared.broker;
    const offLost = shared.onLost((err) => {
      logger.error({ err }, 'perp streams: the broker lost a batch; starting a new epoch');
      void streams?.resync();
    });
    stops.add(async () => offLost());
    const publisher = createStreamPublisher({ broker, catalog: perpChannels(), logger });
    const market = createMarketService({ db: historyDb, venue: { gateway, engine, blockInfo: async () => undefined }, fundingIntervalMs: config.perp.fundingIntervalMs });
    streams = createPerpStreamTask({ engine, gateway, db: historyDb, publisher, market, fundingIntervalMs: config.perp.fundingIntervalMs, logger });
    await streams.start();
    const started = streams;
    stops.add(() => started.stop());
    ctx.perpStreams = broker;
    stops.add(async () => {
      ctx.perpStreams = undefined;
    });

    if (config.redisUrl && config.perp.engineStream) {
      // Perp APIs in other processes reach the engine over Redis Streams (docs/perp-sequencer.md).
      const redis = openRedis(config.redisUrl, { maxRetriesPerRequest: null, lazyConnect: true }, logger, 'perp engine commands');
      await redis.connect();
      stops.add(async () => void redis.disconnect());
      // Perp APIs of this release send each order's nonce claim with it (protocol 2) and the engine
      // makes it here, with the statement APIs of the previous release still make on their own.
      const nonces = createOrderNonceClaimer(db, { retentionMs: NONCE_RETENTION_MS });
      const served = await serveEngineOverRedis(sequencer, redis, { ...perpStreams(config.perp.engineStream), publishEvents: config.perp.engineEvents, eventsMaxLen: config.perp.eventBuffer, nonces, onError: (err) => logger.warn({ err }, 'perp engine: Redis transport') });
      stops.add(() => served.stop());
    }

    const collateral = createCollateralTask({ db, gateway, logger });
    collateral.start();
    stops.add(() => collateral.stop());

    // Withdrawals the engine reserved, paid from the vault with the perp operator's key through the
    // process's shared sender (docs/perp-risk.md "Withdrawals"); without the key they stay PENDING.
    let perpOperator: ReturnType<typeof ctx.chain.walletFor>;
    try {
      perpOperator = ctx.chain.walletFor('perp-operator');
    } catch (err) {
      logger.warn({ err: (err as Error).message }, 'perp-engine: no perp operator key; withdrawals are reserved but not paid');
    }
    if (perpOperator) {
      const vaultTasks = {
        db, gateway, engine, logger, publicClient: ctx.chain.publicClient,
        sender: senderFor({ publicClient: ctx.chain.publicClient, account: perpOperator.account, logger }),
        marginVault: perpDeploymentOf(ctx.chain.record)!.contracts.marginVault,
        fromBlock: BigInt(perpDeploymentOf(ctx.chain.record)!.blockNumber),
      };
      const withdrawals = createWithdrawalTask(vaultTasks);
      withdrawals.start();
      stops.add(() => withdrawals.stop());
      // Forced withdrawals filed on chain: paid or rejected before the vault lets anyone freeze it.
      const forced = createForcedWithdrawalTask(vaultTasks);
      forced.start();
      stops.add(() => forced.stop());

      // Proof of reserves (docs/proof-of-reserves.md): the perp operator posts each funding
      // interval's liabilities root. A deployment recorded before the registry existed gets it now.
      const venue = perpDeploymentOf(ctx.chain.record)!;
      let registry = venue.contracts.reserveRegistry;
      const deployer = ctx.chain.walletFor('deployer');
      if (deployer) {
        try {
          registry = await ctx.chain.setUpOnce(`reserve registry ${perpOperator.account.address}`, async () => {
            const r = await ensureReserveRegistry({ publicClient: ctx.chain.publicClient, walletClient: deployer, record: ctx.chain.record, operators: [perpOperator.account.address] });
            if (r.deployed) {
              await writeDeploymentRecord(deploymentPath(config), ctx.chain.record);
              logger.info({ reserveRegistry: r.reserveRegistry }, 'perp-engine: reserve registry deployed beside the existing perp venue');
              // To the venue's timelock now, as the admin's start would: not left with the deployer key.
              await sealOwnership({ config, logger, chain: ctx.chain });
            } else if (r.scheduled) {
              logger.warn({ operator: perpOperator.account.address }, `perp-engine: the reserve registry's operator grant is ${describePending(r.scheduled)}; reserves are not posted until then`);
            } else if (r.granted.length > 0) {
              logger.info({ operators: r.granted }, 'perp-engine: perp operator made an operator of the reserve registry');
            }
            return r.reserveRegistry;
          });
        } catch (err) {
          logger.warn({ err: (err as Error).message }, 'perp-engine: the reserve registry could not be set up; reserves are not posted');
        }
        if (registry) {
          // A vault from before the escape hatch learns its registry and guardian (docs/upgrades.md).
          try {
            const at = registry;
            await ctx.chain.setUpOnce(`vault escape hatch ${at}`, async () => {
              const e = await ensureVaultEscapeHatch({ publicClient: ctx.chain.publicClient, walletClient: deployer, deployment: venue, registry: at, guardian: guardianAddressOf(config) });
              if (e.scheduled) logger.warn(`perp-engine: the vault's escape hatch set-up is ${describePending(e.scheduled)}`);
              else if (e.set.length > 0) logger.info({ set: e.set }, 'perp-engine: vault escape hatch set up');
            });
          } catch (err) {
            logger.warn({ err: (err as Error).message }, "perp-engine: the vault's escape hatch could not be set up");
          }
        }
      }
      if (registry) {
        const reserves = createReservesTask({
          db, engine, logger, publicClient: ctx.chain.publicClient,
          sender: senderFor({ publicClient: ctx.chain.publicClient, account: perpOperator.account, logger }),
          chainId: ctx.chain.chainId, registry, vault: venue.contracts.marginVault, collateralToken: venue.contracts.collateralToken,
          intervalMs: config.perp.fundingIntervalMs ?? Math.min(...instruments.map((i) => i.fundingIntervalMs)),
        });
        reserves.start();
        stops.add(() => reserves.stop());
      } else {
        logger.warn('perp-engine: no reserve registry in the deployment and no deployer key to deploy it; reserves are not posted');
      }
    }

    const quotes = await ctx.quotes();
    const indexTime = (symbol: string) => quotes.getQuote(indexSymbolOf(symbol))?.timestamp;
    // Stock splits (docs/perp-risk.md "Stock splits"): applied to the stock perpetuals at the ex-date
    // moment on the market calendar's clock; until then, and for a quote from before it, the index
    // of that instrument is withheld (no mark, no funding sample), so post-split prices never meet
    // pre-split positions. One round first, so the table's splits are known before any mark.
    const stockVenueStart = ctx.chain.deployment.deployedAt;
    const perpVenueStart = perpDeploymentOf(ctx.chain.record)!.deployedAt;
    const splits = createSplitTask({
      listStored: () => listCorporateActions(db), gateway, engine, fileActions: (await loadCorporateActions(config.corporateActionsFile)).list(),
      venueStartDate: newYorkDate(Math.max(stockVenueStart, perpVenueStart)), quotesStartDate: newYorkDate(stockVenueStart), clockOffsetMs: ctx.calendar.clockOffsetMs, logger,
    });
    await splits.runOnce().catch((err) => logger.warn({ err }, 'perp splits: first round failed'));
    splits.start();
    stops.add(() => splits.stop());
    const index: IndexSource = (symbol, tickSize) => {
      const q = quotes.getQuote(indexSymbolOf(symbol));
      if (splits.indexPaused(symbol, q)) return undefined;
      return q ? midTicks(q.bid, q.ask, tickSize) : undefined;
    };
    // A stock perpetual trades 24/7; while its stock's market is closed (the calendar the stock
    // side and its quotes follow) its band is wider (docs/perp-risk.md "Closed-market band").
    const sessionOpen = new Map(ctx.symbols.map((spec) => [spec.symbol, quoteSessionOpen(ctx.calendar, spec)]));
    const marketOpen = (symbol: string) => sessionOpen.get(indexSymbolOf(symbol))?.(venueNow() + ctx.calendar.clockOffsetMs) ?? true;
    // The index is checked against the on-chain price feeds the executor's fills are (docs/market-data.md,
    // "On-chain oracle"): read only, no key; an index too far from its feed is withheld.
    const indexOracle = await startIndexOracle(ctx);
    stops.add(() => indexOracle.stop());
    const mark = createMarkPriceTask({ gateway, engine, index, indexTime, marketOpen, intervalMs: config.perp.markIntervalMs, logger, oracle: indexOracle.oracle });
    mark.start();
    stops.add(() => mark.stop());
    const funding = createFundingTask({ gateway, engine, index, sampleMs: config.perp.fundingSampleMs, intervalMs: config.perp.fundingIntervalMs, logger });
    funding.start();
    stops.add(() => funding.stop());
    // A sandbox's clock advance runs these at each step, so every mark, expiry, funding interval and
    // split in the jump happens, in order (docs/sandbox.md "What an advance runs").
    if (ctx.sandbox) {
      // The marks' and funding's commands are handed to the engine as their stages run (so it
      // takes each step's marks before its funding, and the steps in order), and their answers, the
      // journal's commits, are awaited at the calendar steps and the last: the steps between share
      // commits (a long advance was two commits a step). A round that fails is logged as the
      // task's own timer logs it; one that fails at a calendar step is counted there.
      let marks: Promise<void> = Promise.resolve();
      let unanswered: Array<Promise<void>> = [];
      const off = [
        onVenueClockStep({
          stage: 'marks and expiries',
          name: 'perp marks',
          run: async () => {
            marks = mark.runOnce().catch((err: unknown) => logger.warn({ err }, 'perp mark price: round failed'));
          },
        }),
        onVenueClockStep({
          stage: 'funding',
          name: 'perp funding',
          run: async () => {
            const paid = funding.runOnce();
            unanswered.push(marks);
            if (venueClockStep()?.calendar === false) {
              unanswered.push(paid.catch((err: unknown) => logger.warn({ err }, 'perp funding: round failed')));
              return;
            }
            const earlier = unanswered;
            unanswered = [];
            await Promise.all(earlier);
            await paid;
          },
        }),
        onVenueClockStep({ stage: 'corporate actions', name: 'perp splits', run: () => splits.runOnce(), every: 'calendar' }),
      ];
      stops.add(async () => off.forEach((f) => f()));
    }
    // The liquidity pool quotes every book from its own equity (docs/perp-risk.md "The liquidity pool").
    const poolQuoter = createPoolQuoterTask({ gateway, engine, logger });
    poolQuoter.start();
    stops.add(() => poolQuoter.stop());

    if (config.perp.marketMaker) {
      const mm = createMarketMakerTask({ gateway, engine, account: MARKET_MAKER_ACCOUNT.address, logger });
      mm.start();
      stops.add(() => mm.stop());
      const taker = createDemoTakerTask({ gateway, engine, account: DEMO_TAKER_ACCOUNT.address, everyMs: config.perp.demoTakerMs, logger });
      taker.start();
      stops.add(() => taker.stop());
      // A pool that quotes and backstops from the first minute: $200,000 of the market maker's $1,000,000.
      const seed = createDemoPoolSeedTask({ gateway, engine, account: MARKET_MAKER_ACCOUNT.address, amount: 200_000_000_000n, lockupMs: config.perp.lpLockupMs, logger });
      seed.start();
      stops.add(() => seed.stop());
    }

    // Readiness (docs/operations.md): the engine progresses when its sequence moves (the mark task
    // submits at least every 10 s per instrument); the projector when it has caught up or written.
    let seen = { seq: -1, at: 0 };
    const untrackEngine = ctx.status.track('perp-engine', () => {
      const e = sequencer.engine;
      if (e.lastSeq !== seen.seq) seen = { seq: e.lastSeq, at: Date.now() };
      const subjects: Record<string, number> = {};
      const index: Record<string, number> = {};
      for (const spec of e.instrumentList()) {
        const p = e.prices(spec.symbol);
        if (!p) continue;
        if (p.markTs > 0) subjects[spec.symbol] = p.markTs;
        if (p.indexTs > 0) index[spec.symbol] = p.indexTs;
      }
      return { progressAt: seen.at, detail: { seq: e.lastSeq, indexAt: index }, subjects };
    });
    stops.add(async () => untrackEngine());
    const untrackProjector = ctx.status.track('projector', () => {
      const lag = Math.max(0, sequencer.engine.lastSeq - projector.projectedSeq);
      return { progressAt: lag === 0 ? Date.now() : projector.writtenAt, detail: { projectedSeq: projector.projectedSeq, lag } };
    });
    stops.add(async () => untrackProjector());

    ctx.perpVenue = {
      gateway, engine, blockInfo: () => indexedBlockInfo(db), readable: () => sequencer.readBarrier(),
      historyCaughtUp: () => projectorCaughtUp((seq) => projector.caughtUp(seq), sequencer.lastDurableEventSeq),
      ...(nonceLedger ? { nonces: nonceLedger } : {}),
    };
    stops.add(async () => {
      ctx.perpVenue = undefined;
    });
  });
  return stop;
}
