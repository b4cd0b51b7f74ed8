/**
 * The sandbox's snapshots, revert and reset (docs/sandbox.md, "Snapshots, revert and reset") for a
 * process that runs the whole venue on the embedded storage: the venue is stopped, its files and
 * chains put back (src/sandbox/sandbox-snapshots.ts), and started again in this process, on the same
 * ports, with the same anvils and the same sandbox state (token, faults registry). Everything held
 * in memory (the perpetual engine, caches, nonce windows, stream sequences) is rebuilt from the
 * restored files as at any start, so nothing of the time after the snapshot survives a revert.
 *
 * The caller's handle follows the venue running now: its fields are read through to the latest start.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { AppConfig } from '../config/app-config.ts';
import type { Logger } from '../lib/logger.ts';
import { ConflictError } from '../errors/app-error.ts';
import { startAnvil, type AnvilHandle } from '../chain/anvil-process.ts';
import type { SandboxState, SandboxVenueControl } from '../sandbox/sandbox-state.ts';
import { chainRpc, copyLiveDir, createSnapshotStore, mirrorDir, readSeedClock, SEED_CLOCK_FILE, SEED_DIR } from '../sandbox/sandbox-snapshots.ts';
import { resetVenueClock, restoreVenueClock, venueClockState } from '../lib/venue-clock.ts';
import type { Db } from '../storage/database.ts';
import { listRoleStatus } from '../storage/role-status-store.ts';
import { STATUS_ROLES } from '../observability/role-status.ts';
import { awaitRolesFresh } from './await-roles-fresh.ts';
import type { ChainSetUps } from './chain-wiring.ts';

/** What the wrapper needs of a started venue (stack.ts's StackHandle has it). */
export interface RestartableStack {
  config: AppConfig;
  db: Db;
  /** Writes the process's role statuses now. */
  publishStatus(): Promise<void>;
  chains: ReadonlyArray<{ rpcUrl: string }>;
  stockBaseUrl?: string;
  perpBaseUrl?: string;
  metricsUrl?: string;
  stop(): Promise<void>;
}

export interface KeptParts {
  anvils: Map<string, AnvilHandle>;
  /** Made by the first start (which checks its settings before it writes anything) and kept by the next. */
  sandbox?: SandboxState;
  chainKeepsTime: boolean;
  /** The process's first start of the venue (a seeded venue freezes its clock then only). */
  firstStart: boolean;
  /** The chains' set-up as the process's starts share it (chain-wiring.ts `setUpOnce`). */
  setUps: ChainSetUps;
  /**
   * What a start made for the process rather than for itself (the signature workers): kept by the
   * starts after it, stopped with the last (last first).
   */
  processStops: Array<() => Promise<void>>;
}

/**
 * Starts the venue through `start` and answers a handle that follows its restarts. On a data
 * directory's first start (no deployment record yet) the seeded venue's files are kept for `reset`.
 */
export async function startRevertibleStack<H extends RestartableStack>(p: {
  config: AppConfig;
  logger: Logger;
  deploymentFile: string;
  start: (config: AppConfig, kept: KeptParts) => Promise<H>;
}): Promise<H> {
  const { logger } = p;
  // The perpetual history's writes on the venue's own thread unless PERP_PROJECTOR says otherwise:
  // each snapshot, revert and reset starts the roles again, and a projection worker's start (its
  // thread, modules and connection) was 50 to 100 ms of CPU of every revert on 2 cores, where an
  // integrator's test is far from the order rates the worker is for (docs/sandbox.md, "Snapshots").
  const config: AppConfig = p.config.perp.projector === 'auto' ? { ...p.config, perp: { ...p.config.perp, projector: 'thread' } } : p.config;
  const dataDir = config.dataDir;
  const fresh = !fs.existsSync(p.deploymentFile);
  const anvils = new Map<string, AnvilHandle>();
  const seedDir = path.join(dataDir, SEED_DIR);
  const processStops: KeptParts['processStops'] = [];
  const setUps: ChainSetUps = { results: new Map(), asSetUp: false };
  const kept: KeptParts = { anvils, chainKeepsTime: false, firstStart: true, processStops, setUps };
  const stopProcessParts = async () => {
    for (const stop of processStops.splice(0).reverse()) await stop().catch((err) => logger.warn({ err }, 'shutdown step failed'));
  };
  let current: H;
  try {
    current = await p.start(config, kept);
  } catch (err) {
    // The start stopped what it had started but the anvils and the process's parts, this wrapper's.
    await stopProcessParts();
    for (const anvil of anvils.values()) await anvil.stop();
    throw err;
  }
  const sandbox = kept.sandbox!;
  const snapshots = createSnapshotStore(dataDir);
  // The starts after the first bind the ports the first one got (0 asks for a free one).
  const portOf = (url: string | undefined) => (url === undefined ? undefined : Number(new URL(url).port));
  const first = current;
  const again: AppConfig = {
    ...config,
    stockApiPort: portOf(first.stockBaseUrl) ?? config.stockApiPort,
    perpApiPort: portOf(first.perpBaseUrl) ?? config.perpApiPort,
    ...(config.metrics && first.metricsUrl ? { metrics: { ...config.metrics, port: portOf(first.metricsUrl)! } } : {}),
  };
  let restarting = false;
  /** Set by a reset: its anvils were started again on their state file, so they run on the wall clock. */
  let anvilsOnWallClock = false;
  let stopped = false;
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const run = queue.then(() => {
      if (stopped) throw new ConflictError('snapshots: the venue is stopping');
      return work();
    });
    queue = run.catch(() => undefined);
    return run;
  };

  /**
   * Stops the venue, runs `between` on its still files and chains, and starts it again (also when
   * `between` failed: a venue left stopped would answer nothing). Streams are told first (1012).
   * `asSetUp`: the chains are left as this process set them up (a snapshot, a revert), not put back
   * to the seed (a reset), so their set-up is not checked again.
   */
  async function restart<T>(asSetUp: boolean, between: () => Promise<T>): Promise<T> {
    restarting = true;
    try {
      try {
        sandbox.faults.add({ kind: 'stream-drop', stream: 'all', mode: 'close' });
      } catch {
        // No stream served or none open: nothing to tell.
      }
      const clock = venueClockState();
      await current.stop();
      // The stop put the process's clock back to the wall clock: the venue's clock as it was, unless
      // `between` puts the snapshot's (a revert) or the seed's (a reset).
      restoreVenueClock(clock);
      let result: T;
      let failure: unknown;
      try {
        result = await between();
      } catch (err) {
        failure = err;
      }
      // Also after a failure: a venue left stopped would answer nothing.
      // Anvils kept running keep the venue's time; ones a reset started again are moved to it.
      const chainKeepsTime = anvils.size > 0 && !anvilsOnWallClock;
      anvilsOnWallClock = false;
      // A failed `between` may have left the chains anywhere between: checked again.
      setUps.asSetUp = asSetUp && failure === undefined;
      current = await p.start(again, { anvils, sandbox, chainKeepsTime, firstStart: false, processStops, setUps });
      // Answered once the venue serves, as the banner waits at a start: every role fresh, the
      // leased ones (the perpetual engine among them) holding their leases again.
      const running = current;
      const notFresh = await awaitRolesFresh({
        roles: STATUS_ROLES,
        publish: () => running.publishStatus(),
        read: () => listRoleStatus(running.db),
        staleMs: config.readinessStaleMs,
        timeoutMs: 20_000,
      });
      if (notFresh) logger.warn({ roles: notFresh }, 'sandbox: the venue started again, but not every role is fresh yet');
      if (failure !== undefined) throw failure;
      return result!;
    } finally {
      restarting = false;
    }
  }

  const control: SandboxVenueControl = {
    get restarting() {
      return restarting;
    },
    snapshot: () =>
      serial(async () => {
        const started = performance.now();
        const rpcUrls = current.chains.map((c) => c.rpcUrl);
        const snap = await restart(true, () => snapshots.take(venueClockState(), sandbox.faults.save(), rpcUrls, Date.now()));
        logger.info({ id: snap.id }, 'sandbox: snapshot taken');
        return { id: snap.id, createdAt: snap.createdAt, ms: Math.round(performance.now() - started) };
      }),
    list: () => snapshots.list().map(({ id, createdAt }) => ({ id, createdAt })),
    revert: (id) =>
      serial(async () => {
        snapshots.get(id);
        const started = performance.now();
        // The chains' snapshots were taken of the running chains' URLs: a reset since would have dropped it.
        const { dropped } = await restart(true, async () => {
          const done = await snapshots.revert(id);
          sandbox.faults.restore(done.snapshot.faults);
          restoreVenueClock(done.snapshot.clock);
          return done;
        });
        logger.info({ id, dropped }, 'sandbox: venue reverted');
        return { id, dropped, ms: Math.round(performance.now() - started) };
      }),
    drop: (id) => snapshots.drop(id),
    reset: () =>
      serial(async () => {
        if (!fs.existsSync(seedDir)) {
          throw new ConflictError(
            anvils.size < current.chains.length
              ? 'reset: a chain of one\'s own (RPC_URL or STOCK_CHAINS) cannot be put back to the seeded state; revert to a snapshot taken at the start instead'
              : 'reset: this data directory has no seeded state (it was made before reset existed); with the stack stopped, `tokex demo reset` makes a fresh one',
          );
        }
        const started = performance.now();
        const dropped = await restart(false, async () => {
          const ids = snapshots.list().map((s) => s.id);
          snapshots.clear();
          sandbox.faults.clear();
          // The anvils stopped first (each writes its state file as it exits), then the seed's files
          // put in place, then the anvils started again on them, on their ports (the venue's URLs stay).
          const toStart = [];
          for (const [stateFile, anvil] of anvils) {
            toStart.push({ stateFile, port: anvil.port, chainId: Number(await chainRpc(anvil.rpcUrl, 'eth_chainId')) });
            await anvil.stop();
          }
          anvils.clear();
          mirrorDir(seedDir, dataDir, { withChainState: true });
          for (const a of toStart) anvils.set(a.stateFile, await startAnvil({ host: '127.0.0.1', ...a, logger }));
          anvilsOnWallClock = true;
          // The clock as the first start left it: the wall clock, or a seeded venue's frozen instant
          // (so a script run twice from reset sees the same prices, docs/sandbox.md "Determinism").
          const seeded = readSeedClock(seedDir);
          if (seeded) restoreVenueClock(seeded);
          else resetVenueClock();
          return ids;
        });
        logger.info({ dropped }, 'sandbox: venue reset to its seeded state');
        return { dropped, ms: Math.round(performance.now() - started) };
      }),
  };
  sandbox.venue = control;

  // Only where every chain is an embedded anvil: a node of one's own cannot be put back to the seed.
  if (fresh && !fs.existsSync(seedDir) && anvils.size === first.chains.length) {
    // The seeded venue as its first start left it, copied while it runs: a stop and a start here
    // would cost every fresh venue a second start. The databases first, then the chains' state:
    // a chain ahead of its indexer's checkpoint is caught up at the next start, a checkpoint ahead
    // of its chain would skip the blocks mined again under it.
    const partial = `${seedDir}.partial`;
    fs.rmSync(partial, { recursive: true, force: true });
    await copyLiveDir(dataDir, partial);
    for (const [stateFile, anvil] of anvils) {
      await anvil.flushState();
      const relative = path.relative(dataDir, stateFile);
      fs.mkdirSync(path.dirname(path.join(partial, relative)), { recursive: true });
      fs.copyFileSync(stateFile, path.join(partial, relative));
    }
    fs.writeFileSync(path.join(partial, SEED_CLOCK_FILE), `${JSON.stringify(venueClockState())}\n`);
    fs.renameSync(partial, seedDir);
    logger.info({ dir: seedDir }, 'sandbox: the seeded venue kept for POST /sandbox/v1/reset');
  }

  const stop = async () => {
    stopped = true;
    await queue;
    try {
      await current.stop();
    } finally {
      await stopProcessParts();
      for (const anvil of anvils.values()) await anvil.stop();
      snapshots.clear();
    }
  };
  // The caller's handle: the running venue's fields, read at each access; stop stops the anvils too.
  return new Proxy(first, {
    get: (_target, key) => (key === 'stop' ? stop : Reflect.get(current, key)),
  }) as H;
}
