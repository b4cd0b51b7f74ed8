/**
 * A server process for the benchmark, so the parent can read this process's own CPU time:
 * `bare` is a plain Fastify JSON route (the baseline); `stack` is the embedded stack (anvil,
 * market data, indexer, executor and an API); `api` is one stateless `stock-api` instance beside
 * that stack (same data directory and chain), as a scaled-out deployment runs it: its CPU time is
 * the API's alone, not the background workers'.
 * Talks to the parent over IPC: sends {ready, ...} once listening, answers 'cpu' with cpuUsage().
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Fastify from 'fastify';
import { loadConfig } from '../src/config/app-config.ts';
import { createLogger } from '../src/lib/logger.ts';
import { startStack } from '../src/app/stack.ts';
import { applyServingV8Flags } from '../src/app/v8-serving-flags.ts';

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

process.on('message', (msg: any) => {
  if (msg === 'cpu') send({ cpu: process.cpuUsage() });
  if (msg === 'stop') void stop().then(() => process.exit(0));
});
