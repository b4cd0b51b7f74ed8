/**
 * Every setting the processes read from the environment, parsed once into a typed object.
 * Defaults are the embedded stack of contract.md §0; scale-out swaps in DATABASE_URL, REDIS_URL and RPC_URL.
 */
import path from 'node:path';
import type { Hex } from 'viem';
import { loadExecutorSettings, type ExecutorSettings } from '../stock/executor/executor-config.ts';

export type Role = 'all' | 'stock-api' | 'perp-api' | 'indexer' | 'executor' | 'perp-engine' | 'marketdata';
export const ROLES: readonly Role[] = ['all', 'stock-api', 'perp-api', 'indexer', 'executor', 'perp-engine', 'marketdata'];

export type CalendarKind = 'always-open' | '24x5' | 'nyse';

export interface AppConfig {
  dataDir: string;
  host: string;
  stockApiPort: number;
  perpApiPort: number;
  /** Service path prefix in front of /api/v1 (e.g. `/stock`); the signed URI still starts at /api/v1/. */
  stockApiPrefix: string;
  stockProduct: string;
  chainId: number;
  /** Absent: the embedded stack spawns anvil. */
  rpcUrl?: string;
  anvilPort?: number;
  operatorPrivateKey?: Hex;
  /** Deployment record for an existing chain; default DATA_DIR/deployments/<chainId>.json. */
  deploymentFile?: string;
  databaseUrl?: string;
  /** PostgreSQL schema holding the tables (default: the connection's search_path). */
  databaseSchema?: string;
  redisUrl?: string;
  /** 32-byte key (hex or base64) that encrypts API secrets at rest; default DATA_DIR/master.key. */
  masterKey?: string;
  marketCalendar: CalendarKind;
  marketDataSeed: number;
  marketDataTickMs: number;
  historyDays: number;
  corporateActionsFile?: string;
  /** How long a cached on-chain config (buffers, fees, token supply) may be served. */
  chainConfigRefreshMs: number;
  /** How long an API key lookup is cached per instance; bounds how late a revocation takes effect. */
  apiKeyCacheTtlMs: number;
  /** Peer addresses whose X-Forwarded-For is trusted; none by default. */
  trustedProxies: string[];
  bodyLimitBytes: number;
  logLevel: string;
  /**
   * Dev mode: fund anvil's well-known wallets at deployment and write DATA_DIR/demo.json with demo
   * keys and their secrets. On by default only for the embedded anvil (DEMO_MODE overrides).
   */
  demoMode: boolean;
  indexer: {
    /** Blocks behind the head the indexer stays (reorg safety on real chains); 0 on anvil. */
    confirmations: number;
    pollMs: number;
    batchBlocks: number;
  };
  executor: ExecutorSettings;
  /** How long a tx-recording request waits for the indexer to reach the transaction's block. */
  indexWaitMs: number;
}

function int(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name}: must be a non-negative integer`);
  return n;
}

function str(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const raw = env[name];
  return raw === undefined || raw === '' ? undefined : raw;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const calendar = (str(env, 'MARKET_CALENDAR') ?? 'always-open') as CalendarKind;
  if (!['always-open', '24x5', 'nyse'].includes(calendar)) throw new Error('MARKET_CALENDAR: one of always-open, 24x5, nyse');
  const prefix = (str(env, 'STOCK_API_PREFIX') ?? '').replace(/\/+$/, '');
  if (prefix !== '' && !prefix.startsWith('/')) throw new Error('STOCK_API_PREFIX: must start with /');
  const operatorKey = str(env, 'OPERATOR_PRIVATE_KEY');
  if (operatorKey !== undefined && !/^0x[0-9a-fA-F]{64}$/.test(operatorKey)) {
    throw new Error('OPERATOR_PRIVATE_KEY: must be 0x followed by 64 hex digits');
  }
  return {
    dataDir: path.resolve(str(env, 'DATA_DIR') ?? './data'),
    host: str(env, 'HOST') ?? '127.0.0.1',
    stockApiPort: int(env, 'STOCK_API_PORT', 8080),
    perpApiPort: int(env, 'PERP_API_PORT', 8090),
    stockApiPrefix: prefix,
    stockProduct: str(env, 'STOCK_PRODUCT') ?? 'STOCK',
    chainId: int(env, 'CHAIN_ID', 31337),
    rpcUrl: str(env, 'RPC_URL'),
    anvilPort: str(env, 'ANVIL_PORT') === undefined ? undefined : int(env, 'ANVIL_PORT', 0),
    operatorPrivateKey: operatorKey as Hex | undefined,
    deploymentFile: str(env, 'DEPLOYMENT_FILE'),
    databaseUrl: str(env, 'DATABASE_URL'),
    databaseSchema: str(env, 'DATABASE_SCHEMA'),
    redisUrl: str(env, 'REDIS_URL'),
    masterKey: str(env, 'MASTER_KEY'),
    marketCalendar: calendar,
    marketDataSeed: int(env, 'MARKETDATA_SEED', 42),
    marketDataTickMs: int(env, 'MARKETDATA_TICK_MS', 1000),
    historyDays: int(env, 'HISTORY_DAYS', 30),
    corporateActionsFile: str(env, 'CORPORATE_ACTIONS_FILE'),
    chainConfigRefreshMs: int(env, 'CHAIN_CONFIG_REFRESH_MS', 15_000),
    apiKeyCacheTtlMs: int(env, 'API_KEY_CACHE_TTL_MS', 2_000),
    trustedProxies: (str(env, 'TRUSTED_PROXIES') ?? '').split(',').map((s) => s.trim()).filter(Boolean),
    bodyLimitBytes: int(env, 'BODY_LIMIT_BYTES', 64 * 1024),
    logLevel: str(env, 'LOG_LEVEL') ?? 'info',
    demoMode: str(env, 'DEMO_MODE') === undefined ? str(env, 'RPC_URL') === undefined : str(env, 'DEMO_MODE') === 'true',
    indexer: {
      confirmations: int(env, 'INDEXER_CONFIRMATIONS', 0),
      pollMs: int(env, 'INDEXER_POLL_MS', 500),
      batchBlocks: int(env, 'INDEXER_BATCH_BLOCKS', 2_000),
    },
    executor: loadExecutorSettings(env),
    indexWaitMs: int(env, 'INDEX_WAIT_MS', 10_000),
  };
}
