/**
 * Issue 39, per-chain roles: the indexer's and the executor's throughput on each chain while two
 * chains run at once ÷ the same role on one chain alone, on one host.
 *
 *   BENCH_ONLY=multichain-roles npm run bench        (or npx tsx bench/chain-roles-bench.ts)
 *
 * Two fresh anvils, chain ids 31337 and 31338, the stack deployed on each as the single-chain
 * benches deploy it:
 *
 * 1. Indexer: bench/indexer-bench.ts's router events generated on both chains (the same number), then
 *    the indexer's catch-up from block 0 into a fresh SQLite database each time, in two worker
 *    processes that hold both chains (warmed by one catch-up each first). Each round runs three
 *    modes, their order rotating from round to round: chain 31337 alone; both chains at once in one
 *    process (what `tokex start --role indexer` runs); both at once, a process per chain (what
 *    `--chain <id>` workers run). Events a second = events ÷ that catch-up's own time.
 * 2. Executor: bench/executor-bench.ts's venue (8 funded users, its order mix, batch size 200) on
 *    each chain, both executors in this process (a process runs the executor of every chain it
 *    serves). After a warm-up round on each, each round: orders placed, then chain 31337's settlement
 *    alone, or both chains' settlements at once, the two modes alternating. Orders a second = a
 *    chain's orders ÷ its own settling time.
 *
 * Every figure is the best of its rounds, and beside each ratio the median of the rounds' own ratios
 * (bench/per-chain-ratio.ts). Beside them, the CPU the
 * anvils and the role processes used over the mode's wall time ("cores busy"), and the whole host's
 * (/proc/stat; 2 is all of a 2-core host), say whether the host's CPU is what bounds the together
 * figure, and how much of it other work took.
 *
 * BENCH_ROLES_EVENTS (router events a chain, default 15 000), BENCH_ROLES_ORDERS (orders a chain a
 * round, default 800), BENCH_ROLES_ROUNDS (default 3).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { OPERATOR_ACCOUNT } from '../src/chain/anvil-accounts.ts';
import { startAnvil, type AnvilHandle } from '../src/chain/anvil-process.ts';
import { createChainClients, type ChainPublicClient } from '../src/chain/chain-client.ts';
import type { Deployment } from '../src/chain/deploy-contracts.ts';
import { readDeployment, writeDeployment } from '../src/chain/deployment-file.ts';
import { openDatabase } from '../src/storage/database.ts';
import { cpuMsOf } from './bench-children.ts';
import { openSigners, prepareExecutorVenue, type ExecutorVenue } from './executor-bench.ts';
import { measureCatchUp, prepareIndexerChain, type IndexerBenchChain } from './indexer-bench.ts';
import { perChainRatio, type PerChainRatio } from './per-chain-ratio.ts';

/** The first chain (measured alone) and the second. */
export const ROLE_CHAINS = [31337, 31338] as const;
const [FIRST, SECOND] = ROLE_CHAINS;

export interface ChainRolesBenchOptions {
  /** Router events generated on each chain. Default 15 000. */
  events?: number;
  /** Orders placed on each chain a round. Default 800. */
  orders?: number;
  /** Measured rounds of each mode. Default 3. */
  rounds?: number;
  print?: (line: string) => void;
}

/** One role's figures in one layout. */
export interface RoleFigures extends PerChainRatio {
  role: 'indexer' | 'executor';
  layout: string;
  unit: string;
  /** Cores busy (anvils and role processes; the host's), the mean over rounds: alone, together. */
  coresAlone: Busy;
  coresTogether: Busy;
}

export interface ChainRolesBenchResult {
  rows: RoleFigures[];
  table: string;
}

const loadAverage = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

// ------------------------------------------------------------------ indexer worker (child process)

interface WorkerChain {
  chainId: number;
  rpcUrl: string;
  deploymentFile: string;
  head: number;
}

interface WorkerJob {
  dir: string;
  chains: WorkerChain[];
}

interface CatchUpRun {
  chainId: number;
  events: number;
  seconds: number;
}

type WorkerReply = { ready: true } | { results: CatchUpRun[] } | { error: string };

/**
 * In the child: the chains' clients and deployments, then one catch-up of each chain a request names,
 * all at once, each into a fresh SQLite file removed afterwards.
 */
async function worker(job: WorkerJob): Promise<void> {
  const venues = new Map<number, { publicClient: ChainPublicClient; deployment: Deployment; head: number }>();
  for (const c of job.chains) {
    const deployment = await readDeployment(c.deploymentFile);
    if (!deployment) throw new Error(`no deployment for chain ${c.chainId}`);
    const { publicClient } = createChainClients({ rpcUrl: c.rpcUrl, chainId: c.chainId, pollingIntervalMs: 20, timeoutMs: 60_000 });
    venues.set(c.chainId, { publicClient, deployment, head: c.head });
  }
  let run = 0;
  const catchUp = async (chainId: number): Promise<CatchUpRun> => {
    const v = venues.get(chainId);
    if (!v) throw new Error(`worker holds no chain ${chainId}`);
    const sqlitePath = path.join(job.dir, `catch-up-${process.pid}-${run++}-${chainId}.sqlite`);
    const db = await openDatabase({ sqlitePath });
    try {
      const r = await measureCatchUp(db, v.publicClient, v.deployment, v.head, undefined);
      return { chainId, events: r.events, seconds: r.seconds };
    } finally {
      await db.close();
      for (const suffix of ['', '-wal', '-shm']) rmSync(`${sqlitePath}${suffix}`, { force: true });
    }
  };
  process.on('message', (m: { run: number[] } | 'stop') => {
    if (m === 'stop') process.exit(0);
    Promise.all(m.run.map(catchUp)).then(
      (results) => process.send!({ results } satisfies WorkerReply),
      (err: unknown) => process.send!({ error: err instanceof Error ? (err.stack ?? err.message) : String(err) } satisfies WorkerReply),
    );
  });
  process.send!({ ready: true } satisfies WorkerReply);
}

/** A worker process as the parent drives it: one request at a time. */
class IndexerWorker {
  private pending?: { resolve: (r: CatchUpRun[]) => void; reject: (e: Error) => void };
  private constructor(readonly child: ChildProcess) {
    child.on('message', (m: WorkerReply) => {
      const p = this.pending;
      this.pending = undefined;
      if ('results' in m) p?.resolve(m.results);
      else if ('error' in m) p?.reject(new Error(`indexer worker: ${m.error}`));
    });
    child.once('exit', (code) => this.pending?.reject(new Error(`indexer worker exited with ${code}`)));
  }

  static start(job: WorkerJob): Promise<IndexerWorker> {
    const child = fork(fileURLToPath(import.meta.url), ['--indexer-worker', JSON.stringify(job)], {
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    return new Promise((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (code) => reject(new Error(`indexer worker exited with ${code} before it was ready`)));
      child.once('message', (m: WorkerReply) => ('ready' in m ? resolve(new IndexerWorker(child)) : reject(new Error(`indexer worker: ${JSON.stringify(m)}`))));
    });
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** One catch-up of each chain named, all at once in this worker. */
  run(chains: number[]): Promise<CatchUpRun[]> {
    if (this.pending) throw new Error('indexer worker: a request is already running');
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject };
      this.child.send({ run: chains });
    });
  }

  stop(): Promise<void> {
    if (this.child.exitCode !== null) return Promise.resolve();
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.pending = undefined;
    this.child.send('stop');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    return exited.finally(() => clearTimeout(timer));
  }
}

// ------------------------------------------------------------------ the two parts

/** CPU ms the whole host has spent so far, every core (/proc/stat: all but idle and iowait). */
function hostCpuMs(): number {
  const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
  const busy = ticks.slice(0, 8).reduce((a, b) => a + b, 0) - ticks[3] - ticks[4];
  return (busy * 1000) / 100;
}

/** Cores busy over some work: the bench's own processes (anvils, role processes), and the whole host's. */
interface Busy {
  own: number;
  host: number;
}

/** Wall time and CPU of the processes given (anvils, role processes) and of the host over `work`. */
async function timedCores<T>(pids: () => number, work: () => Promise<T>): Promise<{ value: T; busy: Busy }> {
  const cpu0 = pids();
  const host0 = hostCpuMs();
  const started = performance.now();
  const value = await work();
  const wallMs = performance.now() - started;
  return { value, busy: { own: (pids() - cpu0) / wallMs, host: (hostCpuMs() - host0) / wallMs } };
}

const meanBusy = (xs: Busy[]): Busy => ({ own: mean(xs.map((x) => x.own)), host: mean(xs.map((x) => x.host)) });
const busyText = (b: Busy) => `${b.own.toFixed(2)} cores busy, host ${b.host.toFixed(2)}`;

type IndexerMode = 'alone' | 'one process' | 'a process per chain';

/** The indexer's rows, and the events each chain holds. */
async function indexerPart(events: number, rounds: number, print: (line: string) => void): Promise<{ rows: RoleFigures[]; events: number }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'tokex-chain-roles-indexer-'));
  const chains: IndexerBenchChain[] = [];
  const workers: IndexerWorker[] = [];
  try {
    // Both chains filled at once (not measured): each anvil mines its own blocks.
    const prepared = await Promise.allSettled(ROLE_CHAINS.map((id) => prepareIndexerChain(id, events)));
    for (const p of prepared) if (p.status === 'fulfilled') chains.push(p.value);
    const failed = prepared.find((p) => p.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
    const job: WorkerJob = { dir, chains: [] };
    for (const [i, c] of chains.entries()) {
      const deploymentFile = path.join(dir, `deployment-${ROLE_CHAINS[i]}.json`);
      await writeDeployment(deploymentFile, c.deployment);
      job.chains.push({ chainId: ROLE_CHAINS[i], rpcUrl: c.anvil.rpcUrl, deploymentFile, head: c.head });
    }
    workers.push(await IndexerWorker.start(job), await IndexerWorker.start(job));
    // Warm-up, not measured: each worker's JIT on its own chain, and the count each run must match.
    const [[firstWarm], [secondWarm]] = await Promise.all([workers[0].run([FIRST]), workers[1].run([SECOND])]);
    const expected: Record<number, number> = { [FIRST]: firstWarm.events, [SECOND]: secondWarm.events };
    print(
      `indexer: ${expected[FIRST]} and ${expected[SECOND]} events in ${chains[0].head + 1} and ${chains[1].head + 1} blocks on chains ${FIRST} and ${SECOND} ` +
        `(generated in ${chains[0].generateSeconds.toFixed(1)} and ${chains[1].generateSeconds.toFixed(1)} s, at once)`,
    );
    const anvilPids = chains.map((c) => c.anvil.pid);
    const cpu = (pids: number[]) => () => pids.reduce((sum, pid) => sum + cpuMsOf(pid), 0);
    const modes: Record<IndexerMode, { pids: number[]; run: () => Promise<CatchUpRun[]> }> = {
      alone: { pids: [...anvilPids, workers[0].pid], run: () => workers[0].run([FIRST]) },
      'one process': { pids: [...anvilPids, workers[0].pid], run: () => workers[0].run([FIRST, SECOND]) },
      'a process per chain': {
        pids: [...anvilPids, workers[0].pid, workers[1].pid],
        run: async () => (await Promise.all([workers[0].run([FIRST]), workers[1].run([SECOND])])).flat(),
      },
    };
    const order = Object.keys(modes) as IndexerMode[];
    const alone: number[] = [];
    const together: Record<Exclude<IndexerMode, 'alone'>, Array<Record<number, number>>> = { 'one process': [], 'a process per chain': [] };
    const cores: Record<IndexerMode, Busy[]> = { alone: [], 'one process': [], 'a process per chain': [] };
    for (let round = 0; round < rounds; round++) {
      const line: string[] = [];
      for (let k = 0; k < order.length; k++) {
        const mode = order[(round + k) % order.length];
        const { value: runs, busy } = await timedCores(cpu(modes[mode].pids), modes[mode].run);
        cores[mode].push(busy);
        const rates: Record<number, number> = {};
        for (const r of runs) {
          if (r.events !== expected[r.chainId]) throw new Error(`chain roles bench: chain ${r.chainId} indexed ${r.events} events, ${expected[r.chainId]} before`);
          rates[r.chainId] = r.events / r.seconds;
        }
        if (mode === 'alone') alone.push(rates[FIRST]);
        else together[mode].push(rates);
        line.push(`${mode} ${Object.entries(rates).map(([id, rate]) => `${id} ${Math.round(rate)}`).join(', ')} events/s (${busyText(busy)})`);
      }
      print(`indexer round ${round + 1}/${rounds}: ${line.join('; ')}`);
    }
    const rows = (['one process', 'a process per chain'] as const).map((layout) => ({
      role: 'indexer' as const,
      layout,
      unit: 'events/s',
      ...perChainRatio(alone, together[layout]),
      coresAlone: meanBusy(cores.alone),
      coresTogether: meanBusy(cores[layout]),
    }));
    return { rows, events: expected[FIRST] };
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
    await Promise.all(chains.map((c) => c.anvil.stop()));
    rmSync(dir, { recursive: true, force: true });
  }
}

async function executorPart(orders: number, rounds: number, print: (line: string) => void): Promise<RoleFigures> {
  const batchSize = 200;
  const dir = mkdtempSync(path.join(tmpdir(), 'tokex-chain-roles-executor-'));
  const anvils: AnvilHandle[] = [];
  const venues: ExecutorVenue[] = [];
  try {
    const started = await Promise.allSettled(ROLE_CHAINS.map((chainId) => startAnvil({ chainId })));
    for (const s of started) if (s.status === 'fulfilled') anvils.push(s.value);
    const failed = started.find((s) => s.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
    // Deployed and funded one chain after the other (not measured), so that a failure leaves no
    // half-prepared venue behind unclosed.
    for (const [i, chainId] of ROLE_CHAINS.entries()) {
      const { publicClient, walletClient } = createChainClients({
        rpcUrl: anvils[i].rpcUrl,
        chainId,
        operatorPrivateKey: OPERATOR_ACCOUNT.privateKey,
        pollingIntervalMs: 20,
        timeoutMs: 30_000,
      });
      const signers = await openSigners(publicClient, 8, chainId);
      venues.push(
        await prepareExecutorVenue({ rpcUrl: anvils[i].rpcUrl, publicClient, walletClient: walletClient!, signers, batchSize, sqlitePath: path.join(dir, `executor-${chainId}.sqlite`) }),
      );
    }
    const [first, second] = venues;
    // Warm-up: each executor learns its venue's gas per order (it simulates until then), the JIT warms.
    for (const v of venues) {
      await v.place(200);
      await v.settle();
    }
    const ownCpuMs = () => {
      const u = process.cpuUsage();
      return (u.user + u.system) / 1000;
    };
    const pids = () => anvils.reduce((sum, a) => sum + cpuMsOf(a.pid), 0) + ownCpuMs();
    const rate = (r: { orders: number; settleMs: number }) => {
      if (r.orders !== orders) throw new Error(`chain roles bench: ${orders} orders placed, ${r.orders} closed`);
      return r.orders / (r.settleMs / 1000);
    };
    const alone: number[] = [];
    const together: Array<Record<number, number>> = [];
    const cores = { alone: [] as Busy[], together: [] as Busy[] };
    for (let round = 0; round < rounds; round++) {
      const line: string[] = [];
      for (const mode of round % 2 === 0 ? (['alone', 'together'] as const) : (['together', 'alone'] as const)) {
        if (mode === 'alone') {
          await first.place(orders);
          const { value, busy } = await timedCores(pids, () => first.settle());
          alone.push(rate(value));
          cores.alone.push(busy);
          line.push(`alone ${FIRST} ${Math.round(rate(value))} orders/s (${busyText(busy)})`);
        } else {
          await first.place(orders);
          await second.place(orders);
          const { value, busy } = await timedCores(pids, () => Promise.all([first.settle(), second.settle()]));
          together.push({ [FIRST]: rate(value[0]), [SECOND]: rate(value[1]) });
          cores.together.push(busy);
          line.push(`together ${FIRST} ${Math.round(rate(value[0]))}, ${SECOND} ${Math.round(rate(value[1]))} orders/s (${busyText(busy)})`);
        }
      }
      print(`executor round ${round + 1}/${rounds}, ${orders} orders a chain: ${line.join('; ')}`);
    }
    for (const [i, v] of venues.entries()) {
      const statuses = await v.statuses();
      if (statuses.Filled !== v.placed) throw new Error(`chain roles bench: not every order filled on chain ${ROLE_CHAINS[i]} (${JSON.stringify(statuses)})`);
    }
    return {
      role: 'executor',
      layout: 'one process',
      unit: 'orders/s',
      ...perChainRatio(alone, together),
      coresAlone: meanBusy(cores.alone),
      coresTogether: meanBusy(cores.together),
    };
  } finally {
    for (const v of venues) await v.close();
    await Promise.all(anvils.map((a) => a.stop()));
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function runChainRolesBench(opts: ChainRolesBenchOptions = {}): Promise<ChainRolesBenchResult> {
  const print = opts.print ?? ((line: string) => console.log(line));
  const events = opts.events ?? 15_000;
  const orders = opts.orders ?? 800;
  const rounds = Math.max(1, opts.rounds ?? 3);
  const startedAt = new Date().toISOString().slice(0, 16).replace('T', ' ');
  const loadBefore = loadAverage();
  const t0 = performance.now();
  const indexer = await indexerPart(events, rounds, print);
  const t1 = performance.now();
  const rows = [...indexer.rows, await executorPart(orders, rounds, print)];
  const took = `the indexer part took ${((t1 - t0) / 1000).toFixed(0)} s, the executor part ${((performance.now() - t1) / 1000).toFixed(0)} s`;
  const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
  const lines = [
    `indexer and executor with two chains (issue 39), ${startedAt} UTC; load average ${loadBefore} before, ${loadAverage()} after; ` +
      `${rounds} rounds of each mode, best round each; indexer catch-up of ${fmt(indexer.events)} events a chain into a fresh SQLite database, executor ${fmt(orders)} orders a chain a round; ${took}`,
    '',
    `| role | both chains run | alone (${FIRST}) | ${FIRST} with both | ÷ alone: best (median of rounds) | ${SECOND} with both | ÷ alone: best (median) | both summed ÷ alone: best (median) | cores busy alone / with both: the bench's processes (the host's) |`,
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows.map((r) => {
      const [a, b] = r.chains;
      return (
        `| ${r.role}, ${r.unit} | ${r.layout} | ${fmt(r.alone)} | ${fmt(a.rate)} | **${a.ratio.toFixed(2)}** (${a.medianRatio.toFixed(2)}) | ${fmt(b.rate)} | **${b.ratio.toFixed(2)}** (${b.medianRatio.toFixed(2)}) | ` +
        `${r.totalRatio.toFixed(2)} (${r.medianTotalRatio.toFixed(2)}) | ${r.coresAlone.own.toFixed(2)} / ${r.coresTogether.own.toFixed(2)} (${r.coresAlone.host.toFixed(2)} / ${r.coresTogether.host.toFixed(2)}) |`
      );
    }),
  ];
  return { rows, table: lines.join('\n') };
}

if (process.argv[2] === '--indexer-worker') {
  worker(JSON.parse(process.argv[3]) as WorkerJob).catch((err) => {
    console.error(err);
    process.exit(1);
  });
} else if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const num = (v: string | undefined) => (v ? Number(v) : undefined);
  runChainRolesBench({ events: num(process.env.BENCH_ROLES_EVENTS), orders: num(process.env.BENCH_ROLES_ORDERS), rounds: num(process.env.BENCH_ROLES_ROUNDS) }).then(
    (r) => {
      console.log(r.table);
      process.exit(0);
    },
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
