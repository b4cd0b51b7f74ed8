/**
 * Indexer catch-up benchmark: `npx tsx bench/indexer-bench.ts` (BENCH_INDEXER_EVENTS router
 * events, default 50 000; BENCH_INDEXER_RUNS, default 3; BENCH_INDEXER_BATCH_BLOCKS, default the
 * indexer's own). `runIndexerBench()` runs it from another bench.
 *
 * On a fresh anvil with the stack deployed, a bench-only trader contract
 * (contracts/bench/IndexerBenchTrader.sol, compiled here) places and cancels limit orders through
 * the StockRouter many at a time, and the operator fills and closes them in batches: every event
 * is a real router event (OrderPlaced, OrderFilled, OrderCancelRequested, OrderClosed), plus the
 * Stock's mint Transfer of every fill. Then, in a process of its own (as the indexer role runs),
 * best of BENCH_INDEXER_RUNS each:
 *   (a) ceiling: raw eth_getLogs over the same block ranges the indexer uses, plus JSON parsing;
 *   (b) the indexer's full catch-up into a fresh SQLite database (and PostgreSQL when
 *       DATABASE_URL is set): decode, project, write, checkpoint.
 * Both in events per second, and their ratio.
 *
 * `prepareIndexerChain` (a filled anvil of any chain id) and `measureCatchUp` serve
 * bench/chain-roles-bench.ts, which runs two chains' catch-ups side by side.
 */
import { fork } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { decodeEventLog, parseUnits, type Abi, type Address, type Hex } from 'viem';
import { cashTokenAbi, stockRouterAbi } from '../src/chain/abi/generated/index.ts';
import { ANVIL_CHAIN_ID, DEMO_WALLETS } from '../src/chain/anvil-accounts.ts';
import { startAnvil, type AnvilHandle } from '../src/chain/anvil-process.ts';
import { createChainClients, createChainWallet, type ChainPublicClient, type ChainWalletClient } from '../src/chain/chain-client.ts';
import type { Deployment } from '../src/chain/deploy-contracts.ts';
import { readDeployment, writeDeployment } from '../src/chain/deployment-file.ts';
import { createStockIndexer } from '../src/stock/indexer/stock-indexer.ts';
import { indexedAddresses } from '../src/stock/operation-id.ts';
import { countEvents } from '../src/storage/chain-block-store.ts';
import { decodeEvent, INDEXED_ABIS } from '../src/indexer/event-decoder.ts';
import { openDatabase, type Db } from '../src/storage/database.ts';
import { deployDemoStack } from '../test/support/chain-fixture.ts';
import { startCpuProfile } from './cpu-profile.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);

export interface IndexerBenchOptions {
  /** Router events to generate (at least). Default 50 000. */
  events?: number;
  /** The indexer's batchBlocks (the ceiling reads the ranges the indexer read). Default: the indexer's default. */
  batchBlocks?: number;
  /** Also measure PostgreSQL at this URL. Default: DATABASE_URL. */
  databaseUrl?: string;
  log?: (line: string) => void;
}

export interface IndexerCatchUp {
  engine: 'sqlite' | 'postgres';
  events: number;
  seconds: number;
  eventsPerSecond: number;
  /** (a) over the same ranges, measured alongside. */
  ceilingEventsPerSecond: number;
  ratio: number;
}

/**
 * The hand-made event decoder measured against viem's `decodeEventLog` on the same logs in the same
 * process: the project keeps hand-made replacements of library code only where they buy at least
 * 10 % on a headline figure, and this is the catch-up's.
 */
export interface DecoderComparison {
  events: number;
  fastSeconds: number;
  viemSeconds: number;
}

export interface IndexerBenchResult {
  events: number;
  blocks: number;
  generateSeconds: number;
  catchUp: IndexerCatchUp[];
  decoder: DecoderComparison;
}

// 80, not 100: a limit order placed through the trader cost about 171,000 gas at eab4c14 (eth_estimateGas),
// so 100 of them ran out of TX_GAS and the first placeMany reverted.
const ORDERS_PER_PLACE_TX = 80;
const ORDERS_PER_FILL_TX = 150;
const ORDERS_PER_CANCEL_TX = 600;
const ORDERS_PER_CLOSE_TX = 500;
const TX_GAS = 16_000_000n;
const RUNS = Number(process.env.BENCH_INDEXER_RUNS ?? 3);

function compileTrader(): { abi: Abi; bytecode: Hex } {
  const solc = require('solc') as { compile(input: string, cb: { import: (p: string) => { contents: string } | { error: string } }): string };
  const unit = 'contracts/bench/IndexerBenchTrader.sol';
  const input = {
    language: 'Solidity',
    sources: { [unit]: { content: readFileSync(path.join(ROOT, unit), 'utf8') } },
    settings: { optimizer: { enabled: true, runs: 200 }, evmVersion: 'cancun', outputSelection: { [unit]: { IndexerBenchTrader: ['abi', 'evm.bytecode.object'] } } },
  };
  const findImport = (p: string) => {
    try {
      return { contents: readFileSync(p.startsWith('@') ? require.resolve(p) : path.join(ROOT, p), 'utf8') };
    } catch {
      return { error: `not found: ${p}` };
    }
  };
  const out = JSON.parse(solc.compile(JSON.stringify(input), { import: findImport })) as {
    errors?: Array<{ severity: string; formattedMessage: string }>;
    contracts: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>;
  };
  const errors = (out.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) throw new Error(errors.map((e) => e.formattedMessage).join('\n'));
  const c = out.contracts[unit].IndexerBenchTrader;
  return { abi: c.abi, bytecode: `0x${c.evm.bytecode.object}` };
}

/** Sends transactions back to back with explicit nonces and gas, then waits for the last receipt. */
class Sender {
  private nonce = 0;
  private hashes: Hex[] = [];
  constructor(
    private readonly wallet: ChainWalletClient,
    private readonly publicClient: ChainPublicClient,
  ) {}
  async init(): Promise<this> {
    this.nonce = await this.publicClient.getTransactionCount({ address: this.wallet.account.address, blockTag: 'pending' });
    return this;
  }
  async send(address: Address, abi: Abi, functionName: string, args: readonly unknown[]): Promise<void> {
    const hash = await this.wallet.writeContract({
      address,
      abi,
      functionName,
      args,
      nonce: this.nonce++,
      gas: TX_GAS,
      maxFeePerGas: 10_000_000_000n,
      maxPriorityFeePerGas: 1n,
    } as never);
    this.hashes.push(hash);
  }
  async settle(): Promise<void> {
    const hashes = this.hashes;
    this.hashes = [];
    for (const hash of hashes.slice(-1)) {
      const receipt = await this.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 });
      if (receipt.status !== 'success') throw new Error(`bench transaction ${hash} reverted`);
    }
    // Every transaction of the batch must have succeeded, not only the last.
    for (const hash of hashes) {
      const receipt = await this.publicClient.getTransactionReceipt({ hash });
      if (receipt.status !== 'success') throw new Error(`bench transaction ${hash} reverted`);
    }
  }
}

export async function generateBenchEvents(
  publicClient: ChainPublicClient,
  operator: ChainWalletClient,
  user: ChainWalletClient,
  deployment: Deployment,
  targetEvents: number,
): Promise<void> {
  const trader = compileTrader();
  const c = deployment.contracts;
  const stock = Object.values(c.stocks)[0];
  const deployHash = await user.deployContract({ abi: trader.abi, bytecode: trader.bytecode, args: [c.stockRouter] });
  const deployed = await publicClient.waitForTransactionReceipt({ hash: deployHash });
  const traderAddress = deployed.contractAddress as Address;

  const orders = Math.ceil(targetEvents / 4);
  const quantity = parseUnits('0.002', 18);
  const limitPrice = parseUnits('1', 18);
  const fillQuantity = quantity / 2n;
  const cash = parseUnits('100', 6) + BigInt(Math.ceil(orders / 100)) * parseUnits('1', 6);
  const u = await new Sender(user, publicClient).init();
  await u.send(c.cashToken, cashTokenAbi as Abi, 'approve', [traderAddress, cash]);
  await u.send(traderAddress, trader.abi, 'fund', [c.cashToken, cash]);
  await u.settle();

  const firstId = (await publicClient.readContract({ address: c.stockRouter, abi: stockRouterAbi, functionName: 'nextOrderId' })) as bigint;
  const block = await publicClient.getBlock();
  const deadline = Number(block.timestamp) + 86_400;
  for (let i = 0; i < orders; i += ORDERS_PER_PLACE_TX) {
    await u.send(traderAddress, trader.abi, 'placeMany', [stock, BigInt(Math.min(ORDERS_PER_PLACE_TX, orders - i)), quantity, limitPrice, deadline]);
  }
  await u.settle();
  const op = await new Sender(operator, publicClient).init();
  for (let i = 0; i < orders; i += ORDERS_PER_FILL_TX) {
    const n = Math.min(ORDERS_PER_FILL_TX, orders - i);
    const fills = Array.from({ length: n }, (_, k) => ({ orderId: firstId + BigInt(i + k), quantity: fillQuantity, price: limitPrice }));
    await op.send(c.stockRouter, stockRouterAbi as Abi, 'settleOrders', [fills, []]);
  }
  await op.settle();
  for (let i = 0; i < orders; i += ORDERS_PER_CANCEL_TX) {
    await u.send(traderAddress, trader.abi, 'cancelMany', [firstId + BigInt(i), BigInt(Math.min(ORDERS_PER_CANCEL_TX, orders - i))]);
  }
  await u.settle();
  for (let i = 0; i < orders; i += ORDERS_PER_CLOSE_TX) {
    const n = Math.min(ORDERS_PER_CLOSE_TX, orders - i);
    const closes = Array.from({ length: n }, (_, k) => ({ orderId: firstId + BigInt(i + k), status: 4 /* Canceled */ }));
    await op.send(c.stockRouter, stockRouterAbi as Abi, 'settleOrders', [[], closes]);
  }
  await op.settle();
}

type Range = { from: number; to: number };

/** (a) Raw eth_getLogs over `ranges`, JSON parsed; nothing else. */
async function measureCeiling(rpcUrl: string, addresses: string[], ranges: readonly Range[]): Promise<{ events: number; seconds: number }> {
  const started = performance.now();
  let events = 0;
  let id = 1;
  for (const { from, to } of ranges) {
    const res = await fetch(rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: id++, method: 'eth_getLogs', params: [{ fromBlock: `0x${from.toString(16)}`, toBlock: `0x${to.toString(16)}`, address: addresses }] }),
    });
    const body = JSON.parse(await res.text()) as { result: unknown[] };
    events += body.result.length;
  }
  return { events, seconds: (performance.now() - started) / 1000 };
}

function fixedRanges(head: number, blocks: number): Range[] {
  const out: Range[] = [];
  for (let from = 0; from <= head; from += blocks) out.push({ from, to: Math.min(head, from + blocks - 1) });
  return out;
}

let profileRun = 0;

/** (b) The indexer's catch-up from block 0 to `head` into `db`; also returns the ranges it fetched. */
export async function measureCatchUp(
  db: Db,
  publicClient: ChainPublicClient,
  deployment: Deployment,
  head: number,
  batchBlocks: number | undefined,
): Promise<{ events: number; seconds: number; ranges: Range[] }> {
  const ranges: Range[] = [];
  const indexer = createStockIndexer({ db, publicClient, deployment, batchBlocks, startBlock: 0, onRange: (r) => ranges.push({ from: r.from, to: r.to }) });
  // BENCH_CPU_PROF=1: a profile of each catch-up alone, not the setup around it.
  const profiler = process.env.BENCH_CPU_PROF ? await startCpuProfile() : undefined;
  const started = performance.now();
  const { head: indexed } = await indexer.syncOnce();
  const seconds = (performance.now() - started) / 1000;
  await profiler?.stop(`bench-profiles/indexer-catchup-${db.dialect}.${profileRun++}.cpuprofile`);
  if (Number(indexed) < head) throw new Error(`indexer stopped at ${indexed}, head ${head}`);
  return { events: await countEvents(db, 'stock'), seconds, ranges };
}

/** A fresh anvil of `chainId` with the stack deployed and at least `targetEvents` router events on it. */
export interface IndexerBenchChain {
  anvil: AnvilHandle;
  deployment: Deployment;
  /** The last block. */
  head: number;
  generateSeconds: number;
}

/** Starts the anvil and fills it; the caller stops the anvil (stopped here if the filling fails). */
export async function prepareIndexerChain(chainId: number, targetEvents: number): Promise<IndexerBenchChain> {
  const anvil = await startAnvil({ chainId });
  try {
    // Fills at the bench's own prices, without price feeds, with the deployer's key.
    const { chain, publicClient, operator, deployment } = await deployDemoStack(anvil.rpcUrl, chainId, 60_000);
    const user = createChainWallet(DEMO_WALLETS[0].privateKey, { chain, rpcUrl: anvil.rpcUrl, pollingIntervalMs: 20, timeoutMs: 60_000 });

    const genStarted = performance.now();
    await generateBenchEvents(publicClient, operator, user, deployment, targetEvents);
    const generateSeconds = (performance.now() - genStarted) / 1000;
    const head = Number(await publicClient.getBlockNumber());
    return { anvil, deployment, head, generateSeconds };
  } catch (err) {
    await anvil.stop();
    throw err;
  }
}

export async function runIndexerBench(opts: IndexerBenchOptions = {}): Promise<IndexerBenchResult> {
  const log = opts.log ?? ((line: string) => console.log(line));
  const targetEvents = opts.events ?? 50_000;
  const databaseUrl = opts.databaseUrl ?? process.env.DATABASE_URL;
  const { anvil, deployment, head, generateSeconds } = await prepareIndexerChain(ANVIL_CHAIN_ID, targetEvents);
  const dir = mkdtempSync(path.join(tmpdir(), 'tokex-indexer-bench-'));
  try {
    // The catch-ups run in a process of their own, as the indexer role does in production: this
    // one has just built 60 000 events with viem (and, under `npm run bench`, run the HTTP load),
    // and the collection of that garbage would otherwise land in the measured catch-ups.
    const deploymentFile = path.join(dir, 'deployment.json');
    await writeDeployment(deploymentFile, deployment);
    const job: MeasureJob = { rpcUrl: anvil.rpcUrl, deploymentFile, head, dir, databaseUrl, batchBlocks: opts.batchBlocks, runs: RUNS };
    const measured = await inChild(job);
    log(`indexer bench: ${measured.events} events in ${head + 1} blocks (generated in ${generateSeconds.toFixed(1)} s)`);
    for (const r of measured.catchUp) {
      log(`  ${r.engine}: ${r.ranges} ranges (the indexer's own sizes, ${Math.round(r.events / r.ranges)} events each on average)`);
      log(`    (a) ceiling, raw eth_getLogs + JSON parse over those ranges: ${r.ceilingEventsPerSecond.toFixed(0)} events/s (${(r.events / r.ceilingEventsPerSecond).toFixed(3)} s)`);
      log(`    (b) indexer catch-up into ${r.engine}: ${r.eventsPerSecond.toFixed(0)} events/s (${r.seconds.toFixed(3)} s)`);
      log(`    ratio (b)/(a): ${r.ratio.toFixed(3)} (target >= 0.5)`);
    }
    const d = measured.decoder;
    const sqlite = measured.catchUp.find((r) => r.engine === 'sqlite');
    log(`  decoding ${d.events} logs: event-decoder.ts ${(d.events / d.fastSeconds).toFixed(0)} events/s, viem decodeEventLog ${(d.events / d.viemSeconds).toFixed(0)} events/s`);
    if (sqlite) {
      const extra = d.viemSeconds - d.fastSeconds;
      log(`    with viem's decoder the SQLite catch-up would take ${extra.toFixed(3)} s more: +${((extra / sqlite.seconds) * 100).toFixed(0)} % on ${sqlite.seconds.toFixed(3)} s`);
    }
    return { events: measured.events, blocks: head + 1, generateSeconds, catchUp: measured.catchUp.map(({ ranges: _, ...r }) => r), decoder: d };
  } finally {
    await anvil.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

interface MeasureJob {
  rpcUrl: string;
  deploymentFile: string;
  head: number;
  dir: string;
  databaseUrl?: string;
  batchBlocks?: number;
  runs: number;
}

type Measured = { events: number; catchUp: Array<IndexerCatchUp & { ranges: number }>; decoder: DecoderComparison };

/** Every log of the chain, as the node answers them. */
async function fetchLogs(rpcUrl: string, addresses: string[], ranges: readonly Range[]): Promise<Array<{ topics: Hex[]; data: Hex }>> {
  const out: Array<{ topics: Hex[]; data: Hex }> = [];
  for (const { from, to } of ranges) {
    const res = await fetch(rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_getLogs', params: [{ fromBlock: `0x${from.toString(16)}`, toBlock: `0x${to.toString(16)}`, address: addresses }] }),
    });
    out.push(...(JSON.parse(await res.text()) as { result: Array<{ topics: Hex[]; data: Hex }> }).result);
  }
  return out;
}

/** Best of `runs` for each decoder over the same logs, alternating. */
function compareDecoders(logs: ReadonlyArray<{ topics: Hex[]; data: Hex }>, runs: number): DecoderComparison {
  const abi = INDEXED_ABIS.flat() as Abi;
  let fastSeconds = Infinity;
  let viemSeconds = Infinity;
  for (let run = 0; run < runs; run++) {
    let started = performance.now();
    let decoded = 0;
    for (const l of logs) if (decodeEvent(l.topics, l.data)) decoded++;
    fastSeconds = Math.min(fastSeconds, (performance.now() - started) / 1000);
    started = performance.now();
    let viemDecoded = 0;
    for (const l of logs) {
      decodeEventLog({ abi, topics: l.topics as [Hex, ...Hex[]], data: l.data, strict: true });
      viemDecoded++;
    }
    viemSeconds = Math.min(viemSeconds, (performance.now() - started) / 1000);
    if (decoded !== viemDecoded) throw new Error(`decoders disagree: ${decoded} against ${viemDecoded}`);
  }
  return { events: logs.length, fastSeconds, viemSeconds };
}

function inChild(job: MeasureJob): Promise<Measured> {
  const child = fork(fileURLToPath(import.meta.url), ['--measure', JSON.stringify(job)], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    let result: Measured | undefined;
    child.once('error', reject);
    child.on('message', (m) => (result = m as Measured));
    child.once('exit', (code) => (result && code === 0 ? resolve(result) : reject(new Error(`indexer bench child exited with ${code}`))));
  });
}

/** In the child: warm-up, then RUNS alternating catch-ups (best taken) and ceilings over the same ranges. */
async function measure(job: MeasureJob): Promise<Measured> {
  const deployment = await readDeployment(job.deploymentFile);
  if (!deployment) throw new Error('no deployment');
  const { publicClient } = createChainClients({ rpcUrl: job.rpcUrl, chainId: ANVIL_CHAIN_ID, pollingIntervalMs: 20, timeoutMs: 60_000 });
  const addresses = indexedAddresses(deployment);
  // Warm-up of the node and of this process (JIT), not measured.
  const warm = await measureCeiling(job.rpcUrl, addresses, fixedRanges(job.head, 20));

  const sqlitePath = path.join(job.dir, 'bench.sqlite');
  const engines: Array<{ engine: 'sqlite' | 'postgres'; open: () => Promise<Db>; schema?: string }> = [
    // BENCH_SQLITE_PAGE_SIZE: a new file's page size other than the release's (the 4 KiB ÷ 64 KiB A/B, docs/performance.md).
    // BENCH_SQLITE_TEMP_STORE=file: statement journals in temporary files, SQLite's default (the A/B).
    {
      engine: 'sqlite',
      open: () =>
        openDatabase({
          sqlitePath,
          ...(process.env.BENCH_SQLITE_PAGE_SIZE ? { pageSize: Number(process.env.BENCH_SQLITE_PAGE_SIZE) } : {}),
          ...(process.env.BENCH_SQLITE_TEMP_STORE === 'file' ? { tempStore: 'file' as const } : {}),
        }),
    },
  ];
  if (job.databaseUrl) {
    const schema = `indexer_bench_${process.pid}_${Date.now().toString(36)}`;
    const url = job.databaseUrl;
    engines.push({ engine: 'postgres', open: () => openDatabase({ url, schema }), schema });
  }
  const catchUp: Measured['catchUp'] = [];
  for (const { engine, open, schema } of engines) {
    // Best of RUNS for both, measured alternately: a shared machine's noise hits them alike.
    let best: { events: number; seconds: number; ranges: Range[] } | undefined;
    let bestCeiling: { events: number; seconds: number } | undefined;
    for (let run = 0; run < job.runs; run++) {
      const db = await open();
      try {
        const r = await measureCatchUp(db, publicClient, deployment, job.head, job.batchBlocks);
        if (r.events !== warm.events) throw new Error(`${engine}: indexed ${r.events} events, the chain has ${warm.events}`);
        if (!best || r.seconds < best.seconds) best = r;
      } finally {
        if (schema) await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(db.kysely).catch(() => undefined);
        await db.close();
        if (!schema) for (const suffix of ['', '-wal', '-shm']) rmSync(`${sqlitePath}${suffix}`, { force: true });
      }
      const c = await measureCeiling(job.rpcUrl, addresses, best.ranges);
      if (!bestCeiling || c.seconds < bestCeiling.seconds) bestCeiling = c;
    }
    if (!best || !bestCeiling) throw new Error('no run');
    const ceilingEventsPerSecond = bestCeiling.events / bestCeiling.seconds;
    const eventsPerSecond = best.events / best.seconds;
    catchUp.push({
      engine,
      events: best.events,
      seconds: best.seconds,
      eventsPerSecond,
      ceilingEventsPerSecond,
      ratio: eventsPerSecond / ceilingEventsPerSecond,
      ranges: best.ranges.length,
    });
  }
  const decoder = compareDecoders(await fetchLogs(job.rpcUrl, addresses, fixedRanges(job.head, 20)), job.runs);
  return { events: warm.events, catchUp, decoder };
}

if (process.argv[2] === '--measure') {
  measure(JSON.parse(process.argv[3]) as MeasureJob).then(
    (r) => process.send?.(r, () => process.exit(0)),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
} else if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const events = Number(process.env.BENCH_INDEXER_EVENTS ?? 50_000);
  const batchBlocks = process.env.BENCH_INDEXER_BATCH_BLOCKS ? Number(process.env.BENCH_INDEXER_BATCH_BLOCKS) : undefined;
  runIndexerBench({ events, batchBlocks }).then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
