/**
 * A server process for the benchmark, so the parent can read this process's own CPU time:
 * `bare` is a plain Fastify JSON route (the baseline); `stack` is the embedded stack (anvil,
 * market data, indexer, executor and an API); `api` is one stateless `stock-api` instance beside
 * that stack (same data directory and chain), as a scaled-out deployment runs it: its CPU time is
 * the API's alone, not the background workers'.
 * Talks to the parent over IPC: sends {ready, ...} once listening, answers 'cpu' with cpuUsage() and
 * 'gc' with its collections by kind and its heap.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PerformanceObserver, constants as perfConstants } from 'node:perf_hooks';
import v8 from 'node:v8';
import Fastify from 'fastify';
import { loadConfig } from '../src/config/app-config.ts';
import { createLogger } from '../src/lib/logger.ts';
import { startStack } from '../src/app/stack.ts';
import { applyServingV8Flags } from '../src/app/v8-serving-flags.ts';
import { startCpuProfile, type CpuProfile } from './cpu-profile.ts';

const mode = process.argv[2];
const send = (msg: unknown) => process.send?.(msg);
let stop: () => Promise<void> = async () => {};

if (mode === 'bare') {
  const app = Fastify({ logger: false });
  app.get('/bare', async () => ({ code: 200, errMsg: '', data: { ok: true } }));
  // The same for a POST with a JSON body: what the framework alone costs a calldata request.
  app.post('/bare', async () => ({ code: 200, errMsg: '', data: { ok: true } }));
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  stop = () => app.close();
  send({ ready: true, url });
} else if (mode === 'stack') {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokex-bench-'));
  const config = loadConfig({ ...process.env, DATA_DIR: dataDir, STOCK_API_PORT: '0', PERP_API_PORT: '0', HISTORY_DAYS: '1' });
  // Production logging (a JSON line per request at info) into this process's stdout, which the
  // parent discards: the cost of logging is part of what is measured.
  const logger = createLogger({ level: config.logLevel });
  const stack = await startStack(config, { role: 'all', logger });
  stop = () => stack.stop();
  // An integrator-style WRITABLE key without a bound wallet: calldata without balance pre-checks.
  await fundExchange(stack.demo!);
  // With several chains (EMBEDDED_CHAIN_IDS, the multichain bench) it may write on each.
  const chainIds = stack.demo?.stock.chains.map((c) => c.chainId) ?? [config.chainId];
  const unbound = await stack.keys.create({
    scopes: chainIds.map((chainId) => ({ chainId, productType: config.stockProduct, access: 'WRITABLE' as const })),
    ipWhitelist: ['127.0.0.1', '::1'],
    label: 'bench unbound',
  });
  send({ ready: true, url: stack.stockBaseUrl, demo: stack.demo, unbound: { apiKey: unbound.key.apiKey, apiSecret: unbound.apiSecret }, dataDir, rpcUrl: stack.rpcUrl });
} else if (mode === 'oneclick') {
  // The whole stack, relayer included, and users ready to send (bench/one-click-bench.ts).
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokex-bench-oc-'));
  const config = loadConfig({ ...process.env, DATA_DIR: dataDir, STOCK_API_PORT: '0', PERP_API_PORT: '0', HISTORY_DAYS: '1' });
  const logger = createLogger({ level: config.logLevel });
  const stack = await startStack(config, { role: 'all', logger });
  stop = () => stack.stop();
  const { prepareOneClickUsers } = await import('./one-click-bench.ts');
  const users = await prepareOneClickUsers(stack, Number(process.env.BENCH_ONE_CLICK_USERS ?? 16));
  send({ ready: true, url: stack.stockBaseUrl, demo: stack.demo, users, dataDir });
} else if (mode === 'api') {
  const config = loadConfig({ ...process.env, STOCK_API_PORT: '0', DEMO_MODE: 'false' });
  const logger = createLogger({ level: config.logLevel });
  // As `tokex start --role stock-api` does before its stack (src/app/run-stack.ts).
  applyServingV8Flags(['stock-api']);
  const api = await startStack(config, { role: 'stock-api', logger });
  stop = () => api.stop();
  send({ ready: true, url: api.stockBaseUrl });
} else {
  throw new Error(`unknown mode ${mode}`);
}

/** Gives the demo wallet mUSD so the pre-checked calldata benchmark passes its balance check. */
async function fundExchange(demo: NonNullable<Awaited<ReturnType<typeof startStack>>['demo']>) {
  const { createPublicClient, createWalletClient, http, maxUint256, parseUnits, erc20Abi } = await import('viem');
  const { privateKeyToAccount } = await import('viem/accounts');
  const { stockRouterAbi } = await import('../src/chain/abi/generated/index.ts');
  const chain = { id: demo.chainId, name: 'anvil', nativeCurrency: { name: 'ETH', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [demo.rpcUrl] } } };
  const wallet = createWalletClient({ account: privateKeyToAccount(demo.wallets[0].privateKey), chain, transport: http(demo.rpcUrl) });
  const pub = createPublicClient({ chain, transport: http(demo.rpcUrl) });
  const c = demo.stock.contracts;
  await pub.waitForTransactionReceipt({ hash: await wallet.writeContract({ address: c.cashToken, abi: erc20Abi, functionName: 'approve', args: [c.stockRouter, maxUint256] }) });
  await pub.waitForTransactionReceipt({ hash: await wallet.writeContract({ address: c.stockRouter, abi: stockRouterAbi, functionName: 'deposit', args: [c.cashToken, parseUnits('50000', 6)] }) });
}

/**
 * CPU profiles of a measured window only (BENCH_CPU_PROF=1): {profile:'start'} starts V8's
 * sampler, {profile:'stop', file} writes what it saw.
 */
let profiler: CpuProfile | undefined;
async function onProfile(msg: { profile: 'start' | 'stop'; file?: string }) {
  if (msg.profile === 'start') profiler = await startCpuProfile();
  else if (profiler) {
    await profiler.stop(msg.file!);
    profiler = undefined;
  }
  send({ profiled: msg.profile });
}

/**
 * Garbage collections since the start, by kind (count and milliseconds): which kind a change made
 * dearer, when a profile shows only "(garbage collector)". Answered with the heap on 'gc'.
 */
const gcKinds: Record<string, { count: number; ms: number }> = {};
const GC_KIND: Record<number, string> = {
  [perfConstants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [perfConstants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [perfConstants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [perfConstants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
};
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    const kind = GC_KIND[(e as unknown as { detail?: { kind?: number } }).detail?.kind ?? -1] ?? 'other';
    const k = (gcKinds[kind] ??= { count: 0, ms: 0 });
    k.count++;
    k.ms += e.duration;
  }
}).observe({ entryTypes: ['gc'] });

let sampler: import('node:inspector/promises').Session | undefined;
/**
 * V8's sampling heap profiler over a window, counting only what survived the young collections
 * (collected by a major one, or still alive): `{ start: true }`, then `{ file }` to write the
 * .heapprofile.
 */
async function onHeapSample(m: { start?: boolean; file?: string }): Promise<void> {
  if (m.start) {
    const { Session } = await import('node:inspector/promises');
    sampler = new Session();
    sampler.connect();
    await sampler.post('HeapProfiler.enable');
    await sampler.post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: false });
    send({ heapSampling: 'started' });
  } else if (sampler && m.file) {
    const { profile } = await sampler.post('HeapProfiler.stopSampling');
    fs.writeFileSync(m.file, JSON.stringify(profile));
    sampler.disconnect();
    sampler = undefined;
    send({ heapSampling: m.file });
  }
}

process.on('message', (msg: any) => {
  if (msg === 'cpu') send({ cpu: process.cpuUsage() });
  if (msg === 'gc') send({ gc: structuredClone(gcKinds), heapUsed: process.memoryUsage().heapUsed, heap: v8.getHeapSpaceStatistics().map((s) => ({ space: s.space_name, used: s.space_used_size, size: s.space_size })), stats: v8.getHeapStatistics() });
  if (msg?.profile) void onProfile(msg);
  // Where the objects that outlive young collections are allocated (bench/heap-probe.ts).
  if (msg?.heapSample) void onHeapSample(msg.heapSample);
  // A heap snapshot to read what a process holds (bench/heap-diff.ts compares two).
  if (msg?.heapSnapshot) send({ heapSnapshot: v8.writeHeapSnapshot(msg.heapSnapshot) });
  if (msg === 'stop') void stop().then(() => process.exit(0));
});
