/**
 * Starts the real embedded stack (anvil from npm, contracts deployed, SQLite or PostgreSQL,
 * market data, the stock API and the perp API on free ports) in a temporary data directory, with the log lines
 * captured so tests can check what reached the log.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { loadConfig, type AppConfig, type Role } from '../../src/config/app-config.ts';
import { appendFileSync } from 'node:fs';
import { createLogger } from '../../src/lib/logger.ts';
import { startStack, type StackHandle } from '../../src/app/stack.ts';
import type { DemoFile } from '../../src/app/demo-file.ts';
import { PerpClient, StockClient } from '@tokex/sdk';
import { dropRedisKeys } from './redis-keys.ts';
import { noteMadeDataDir } from './made-data-dirs.ts';
import { ANVIL_ACCOUNTS } from '../../src/chain/anvil-accounts.ts';
import { startAnvil, type AnvilHandle } from '../../src/chain/anvil-process.ts';

export interface TestStack {
  stack: StackHandle;
  config: AppConfig;
  demo: DemoFile;
  dataDir: string;
  logs: string[];
  readOnly: StockClient;
  writable: StockClient;
  client(apiKey: string, apiSecret: string, opts?: { now?: () => number; product?: string; chainId?: number | string }): StockClient;
  /** `{perp_base_url}` when the perp API runs in the stack. */
  perpBaseUrl?: string;
  /** demo.json's perp trader key (wallets[0], READ TRADE TRANSFER), when the perp API runs. */
  perpTrader?: PerpClient;
  stop(): Promise<void>;
}

export async function startTestStack(env: Record<string, string> = {}, opts: { role?: Role | readonly Role[]; dataDir?: string; chains?: readonly number[] } = {}): Promise<TestStack> {
  let dataDir = opts.dataDir;
  if (dataDir === undefined) {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokex-stack-'));
    noteMadeDataDir(dataDir);
  }
  const config = loadConfig({
    DATA_DIR: dataDir,
    STOCK_API_PORT: '0',
    PERP_API_PORT: '0',
    HISTORY_DAYS: '2',
    MARKETDATA_TICK_MS: '250',
    API_KEY_CACHE_TTL_MS: '0',
    // Its own keys when the streams go through Redis, so stacks running side by side never meet.
    STREAM_PREFIX: `test-streams-${process.pid}-${Math.random().toString(36).slice(2, 10)}`,
    LOG_LEVEL: 'info',
    // Many stacks share a test process and two run at once: a free port each, never 9464.
    METRICS_PORT: '0',
    ...env,
  });
  const logs: string[] = [];
  const destination = new Writable({
    write(chunk, _enc, cb) {
      logs.push(...String(chunk).split('\n').filter(Boolean));
      // TEST_STACK_LOGS=<file>: every test stack's log lines also appended there (to read a failure's story).
      if (process.env.TEST_STACK_LOGS) appendFileSync(process.env.TEST_STACK_LOGS, String(chunk));
      cb();
    },
  });
  const logger = createLogger({ level: config.logLevel, destination });
  const stack = await startStack(config, { role: opts.role ?? 'all', logger, ...(opts.chains ? { chains: opts.chains } : {}) });
  if (!stack.demo || !stack.stockBaseUrl) throw new Error('test stack started without the stock API');
  const demo = stack.demo;
  const client: TestStack['client'] = (apiKey, apiSecret, o = {}) =>
    new StockClient({ baseUrl: stack.stockBaseUrl!, apiKey, apiSecret, chainId: o.chainId ?? demo.chainId, product: o.product ?? demo.stock.product, now: o.now });
  return {
    stack,
    config,
    demo,
    dataDir,
    logs,
    readOnly: client(demo.stock.keys.readOnly.apiKey, demo.stock.keys.readOnly.apiSecret),
    writable: client(demo.stock.keys.writable.apiKey, demo.stock.keys.writable.apiSecret),
    client,
    perpBaseUrl: stack.perpBaseUrl,
    perpTrader:
      stack.perpBaseUrl && demo.perp
        ? new PerpClient({ baseUrl: stack.perpBaseUrl, apiKey: demo.perp.keys.trader.apiKey, apiSecret: demo.perp.keys.trader.apiSecret, chainId: demo.chainId })
        : undefined,
    stop: async () => {
      await stack.stop();
      // Keys under a prefix this stack made up are its own; a prefix the test gave may be shared.
      // Hygiene only: a Redis gone by now fails no test.
      if (config.redisUrl && env.STREAM_PREFIX === undefined) await dropRedisKeys(config.redisUrl, `${config.streamPrefix}:`).catch(() => undefined);
    },
  };
}

/**
 * The demo stack on an anvil of the test's own (its state in a temp file), met as an external chain
 * (RPC_URL, the deployer's key): for the tests that pause, stop or move that chain. The caller stops
 * the stack, then the anvil.
 */
export async function startStackOnOwnAnvil(env: Record<string, string> = {}): Promise<{ anvil: AnvilHandle; t: TestStack }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokex-anvil-'));
  const anvil = await startAnvil({ port: 0, stateFile: path.join(dir, 'anvil-state.json') });
  try {
    const t = await startTestStack({ RPC_URL: anvil.rpcUrl, OPERATOR_PRIVATE_KEY: ANVIL_ACCOUNTS[9].privateKey, DEMO_MODE: 'true', ...env });
    return { anvil, t };
  } catch (err) {
    await anvil.stop();
    throw err;
  }
}
