/**
 * Every setting the processes read from the environment, parsed once into a typed object.
 * Defaults are the embedded stack of contract.md §0; scale-out swaps in DATABASE_URL, REDIS_URL and RPC_URL.
 */
import path from 'node:path';
import { getAddress, isAddress, type Address, type Hex } from 'viem';
import { AppError } from '../errors/app-error.ts';
import { parseMasterKey } from './master-key.ts';
import { envBool, envChoice, envInt, envList, envString, type Env } from './env.ts';
import { loadExecutorSettings, type ExecutorSettings } from './executor-settings.ts';
import { loadQuoteSourceSettings, type QuoteSourceSettings } from './quote-source-settings.ts';

export type Role = 'all' | 'stock-api' | 'perp-api' | 'indexer' | 'executor' | 'relayer' | 'perp-engine' | 'marketdata';
export const ROLES: readonly Role[] = ['all', 'stock-api', 'perp-api', 'indexer', 'executor', 'relayer', 'perp-engine', 'marketdata'];

export const CALENDAR_KINDS = ['always-open', '24x5', 'nyse', 'us-sessions'] as const;
export type CalendarKind = (typeof CALENDAR_KINDS)[number];

/**
 * The on-chain senders that get a key of their own, so that two processes never share a nonce
 * sequence (the chain layer's `SenderRole`; src/chain/operator-roles.ts decides which key applies).
 */
export type SenderRoleName = 'executor' | 'relayer' | 'perp-operator' | 'oracle-publisher';

export const TOKEX_ENVS = ['development', 'production'] as const;

/** The certificate files of HTTPS (TLS_CERT_FILE, TLS_KEY_FILE, TLS_CA_FILE); read by src/http/tls-options.ts. */
export interface TlsFiles {
  /** `TLS_CERT_FILE`: the PEM certificate served. */
  certFile: string;
  /** `TLS_KEY_FILE`: its PEM private key. */
  keyFile: string;
  /** `TLS_CA_FILE`: PEM intermediates appended to the served certificate (the chain clients need). */
  caFile?: string;
}

export interface AppConfig {
  dataDir: string;
  host: string;
  /**
   * `TOKEX_ENV=production`: an API never serves plain HTTP on a host others can reach, only HTTPS
   * (TLS_CERT_FILE) or behind TRUSTED_PROXIES that forward HTTPS (docs/deployment.md).
   */
  production: boolean;
  /**
   * `TLS_CERT_FILE`, `TLS_KEY_FILE` (both or neither) and optional `TLS_CA_FILE`: both APIs serve
   * HTTPS and WSS. Paths only here; the files are checked when an API starts and on each reload.
   */
  tls?: TlsFiles;
  stockApiPort: number;
  perpApiPort: number;
  /** `PERP_RATE_LIMIT_PER_MIN`: requests a minute per perp API key (per address for public calls). */
  perpRateLimitPerMin: number;
  /** Service path prefix in front of /api/v1 (e.g. `/stock`); the signed URI still starts at /api/v1/. */
  stockApiPrefix: string;
  stockProduct: string;
  chainId: number;
  /** Absent: the embedded stack spawns anvil. */
  rpcUrl?: string;
  /**
   * The chains whose stock venue this deployment serves (docs/deployment.md, "Several chains"):
   * the first is always `chainId` with `rpcUrl` (today's single chain, its data dir and database as
   * they were); the others come from `EMBEDDED_CHAIN_IDS` (an embedded anvil each) or `STOCK_CHAINS`
   * with `RPC_URL_<id>`. One entry without either setting.
   */
  stockChains: StockChainSetting[];
  anvilPort?: number;
  /** `RPC_BATCH`: the APIs' concurrent chain reads travel as one JSON-RPC batch (default true). */
  rpcBatch: boolean;
  /**
   * `AUTO_UPGRADE`: a start that finds the contracts behind their proxies on an earlier release's
   * code upgrades them itself. Default: on for the embedded anvil, off for RPC_URL (docs/upgrades.md).
   */
  autoUpgrade: boolean;
  /**
   * `PERP_WITHDRAWAL_CAP_USDC` per `PERP_WITHDRAWAL_CAP_PERIOD_S`: what the margin vault a deployment
   * makes pays at most per period, however many valid signed requests arrive (docs/security.md).
   * Default 1,000,000 USDC a day. Later changes are the owner's `setWithdrawalCap`.
   */
  perpWithdrawalCap: { amount: bigint; periodSeconds: number };
  /**
   * `GUARDIAN_ADDRESS`: the StockRouter's guardian, who can pause new orders, fills and operator
   * actions (users' exits stay open; docs/security.md "Guardian"), named when the venue is deployed.
   * Unset: anvil account 4 on the embedded chain (the stack's choice), none with RPC_URL.
   */
  guardianAddress?: Address;
  /**
   * `TIMELOCK_DELAY_S`: how long an owner change or an upgrade waits in the venues' timelock before
   * it may be executed (docs/security.md, "Owner and upgrader"): what users get to see it coming and
   * leave. Default 172800 (2 days) with RPC_URL; 0 on the embedded anvil, a single-machine demo whose
   * start configures its contracts at once (and whose tests stay fast). At most 30 days.
   */
  timelockDelayS: number;
  /**
   * `OPERATOR_PRIVATE_KEY`: deployer and owner of the contracts, and the key of every sending role
   * in a process that runs them all. Private keys are never logged or put in an error message.
   */
  operatorPrivateKey?: Hex;
  /**
   * `UPGRADER_PRIVATE_KEY`: the upgrade authority's key for `tokex upgrade --apply` (docs/upgrades.md).
   * Absent: OPERATOR_PRIVATE_KEY (on a new deployment the deployer holds the authority).
   */
  upgraderPrivateKey?: Hex;
  /**
   * Each sending role's own key: `EXECUTOR_PRIVATE_KEY`, `RELAYER_PRIVATE_KEY`,
   * `PERP_OPERATOR_PRIVATE_KEY`, `ORACLE_PUBLISHER_PRIVATE_KEY`. A role running in a process of its
   * own needs its own.
   */
  roleKeys: Partial<Record<SenderRoleName, Hex>>;
  /**
   * `EXECUTOR_ADDRESS`, `RELAYER_ADDRESS`, `PERP_OPERATOR_ADDRESS`, `ORACLE_PUBLISHER_ADDRESS`: a
   * role's address where its key is not held.
   */
  roleAddresses: Partial<Record<SenderRoleName, Address>>;
  /** Deployment record for an existing chain; default DATA_DIR/deployments/<chainId>.json. */
  deploymentFile?: string;
  databaseUrl?: string;
  /** PostgreSQL schema holding the tables (default: the connection's search_path). */
  databaseSchema?: string;
  redisUrl?: string;
  /**
   * `STREAM_PREFIX`: the Redis key prefix of the WebSocket streams (`<prefix>:perp:…`,
   * `<prefix>:stock:…`) when REDIS_URL is set; every instance of one venue uses the same. Default
   * `tokex:streams`.
   */
  streamPrefix: string;
  /**
   * `STREAM_RETAINED`: updates kept per private stream for `since` resumes (default 10 000, the
   * contract's floor; between that and twice it in memory). Lower only for tests and soaks.
   */
  streamRetained: number;
  /** WebSocket heartbeat (docs/streams.md): `STREAM_PING_MS` (20 s) between pings, `STREAM_IDLE_MS` (60 s) of silence before a close. */
  streamPingMs: number;
  streamIdleMs: number;
  /** 32-byte key (hex or base64) that encrypts API secrets at rest; default DATA_DIR/master.key. */
  masterKey?: string;
  /**
   * `MASTER_KEY_PREVIOUS`: comma-separated older master keys (hex or base64) that only decrypt,
   * for secrets not yet re-encrypted by `tokex keys rotate-master`; DATA_DIR/master.key.previous
   * adds more (docs/api-keys-secrets.md).
   */
  masterKeyPrevious: string[];
  marketCalendar: CalendarKind;
  /**
   * `STOCK_SESSION_FLAGS`: per symbol, the session flags that differ from the default (all `true`)
   * under `MARKET_CALENDAR=us-sessions`, e.g. `TSLA:overnight=false,fractionalEh=false;SPY:fractionable=false`
   * (docs/stock-api.md, "Trading sessions"). The other calendars ignore it.
   */
  stockSessionFlags: Record<string, SessionFlagOverrides>;
  /**
   * `MARKET_CLOCK_START` (an ISO 8601 instant with its offset, or Unix ms): the market calendar's
   * clock reads this instant when the process starts and runs on at wall speed from it, so a demo
   * or a test sees the pre-market or a holiday now. Quotes, orders and chain times stay on the wall
   * clock. Refused with `TOKEX_ENV=production`.
   */
  marketClockStart?: number;
  /** `MARKETDATA_SEED` (default 42), or `SANDBOX_SEED` when set: the simulator's seed. */
  marketDataSeed: number;
  marketDataTickMs: number;
  historyDays: number;
  corporateActionsFile?: string;
  /**
   * `DIVIDEND_WITHHOLDING_BPS`: the share of a cash dividend withheld from its holders, in basis
   * points (0–10000; default 3000, the US 30% rate on dividends paid to foreign persons without a
   * treaty). docs/corporate-actions.md has the arithmetic.
   */
  dividendWithholdingBps: number;
  /** `CORPORATE_ACTIONS_TICK_MS`: how often the executor looks for a due corporate action. Default 5000. */
  corporateActionsTickMs: number;
  /** How long a cached on-chain config (buffers, fees, token supply) may be served. */
  chainConfigRefreshMs: number;
  /** How long an API key lookup is cached per instance; bounds how late a revocation takes effect. */
  apiKeyCacheTtlMs: number;
  /** Peer addresses whose X-Forwarded-For is trusted; none by default. */
  trustedProxies: string[];
  bodyLimitBytes: number;
  /**
   * `SIGNATURE_WORKERS`: worker threads of an API process that recover signed messages' signers
   * (signed perp orders, API-key creation, One Click): 0 (default: every recovery on the thread that
   * takes the request), a number, or `auto` (one for each core beyond the first, at most 4). The
   * default is what measured best on the 2-core machines (docs/performance.md, "Signature recovery
   * on every core").
   */
  signatureWorkers: 'auto' | number;
  logLevel: string;
  /**
   * One log line per HTTP request (LOG_REQUESTS): off by default in the embedded demo, whose
   * terminal would otherwise be mostly request lines; on by default elsewhere (docs/operations.md).
   */
  logRequests?: boolean;
  /** LOG_FORMAT: `auto` (pretty lines on a terminal, JSON otherwise), `pretty` or `json`. */
  logFormat?: 'auto' | 'pretty' | 'json';
  /**
   * Dev mode: fund anvil's well-known wallets at deployment and write DATA_DIR/demo.json with demo
   * keys and their secrets. On by default only for the embedded anvil (DEMO_MODE overrides).
   */
  demoMode: boolean;
  /**
   * `SANDBOX`: the sandbox control API under the stock API's `/sandbox/v1` (docs/sandbox.md): prices
   * pinned at once, tokens minted to any wallet, faults injected. On by default on the embedded
   * stack (no RPC_URL, no DATABASE_URL) outside production; `SANDBOX=1` turns it on with a chain or
   * database of one's own. Refused with `TOKEX_ENV=production`: its routes must not exist there.
   */
  sandbox: boolean;
  /**
   * `SANDBOX_SEED` (0 to 2^32 - 1, sandbox only): a deterministic venue (docs/sandbox.md
   * "Determinism"): it starts with its clock frozen at a whole minute, the simulator takes this seed
   * and counts its walk from its history's first minute, and the venue's own random choices a
   * client sees come from it. Unset: as without it.
   */
  sandboxSeed?: number;
  indexer: {
    /** Blocks behind the head the indexer stays (reorg safety on real chains); 0 on anvil. */
    confirmations: number;
    pollMs: number;
    batchBlocks: number;
  };
  /** The perpetual venue. */
  perp: {
    /** Blocks behind the head the perp indexer stays before a collateral movement counts (PERP_CONFIRMATIONS); 0 on anvil. */
    confirmations: number;
    /** `PERP_MARKET_MAKER`: run the demo market maker and the demo taker in the perp-engine role (default: demo mode). */
    marketMaker: boolean;
    /** `PERP_DEMO_TAKER_MS`: how often the demo taker trades (default 10 000). */
    demoTakerMs: number;
    /** `PERP_FUNDING_INTERVAL_MS`: overrides every instrument's funding interval (default: theirs, 1 h). */
    fundingIntervalMs?: number;
    /** `PERP_MARK_INTERVAL_MS`: how often index and mark prices are computed (default 1 000). */
    markIntervalMs: number;
    /** `PERP_FUNDING_SAMPLE_MS`: how often the funding premium is sampled (default 5 000). */
    fundingSampleMs: number;
    /**
     * `PERP_LP_LOCKUP_MS`: how long liquidity added to the pool stays locked, counted from the
     * holder's latest addition (default 345 600 000, 4 days, as Hyperliquid's HLP; at most a year).
     */
    lpLockupMs: number;
    /**
     * `PERP_ENGINE_STREAM`: the Redis Streams prefix (`<prefix>:commands`, `<prefix>:events`) over
     * which the engine serves perp APIs running in other processes (with REDIS_URL). Unset: the
     * engine serves only a perp API in its own process.
     */
    engineStream?: string;
    /**
     * `PERP_ENGINE_EVENTS` (default off): with `PERP_ENGINE_STREAM`, the engine also writes every
     * durable event to `<prefix>:events` for readers of the engine's event stream outside this
     * release's roles (none of which reads it: the projector and the streams run beside the engine).
     */
    engineEvents: boolean;
    /**
     * `PERP_EVENT_BUFFER` and `PERP_RECENT_RESULTS`: the engine's in-memory buffers of recent events
     * (for late subscribers) and answers (for resubmissions), 100 000 each by default. Both are
     * bounded: the engine's memory grows until they are full, then stays flat.
     */
    eventBuffer: number;
    recentResults: number;
    /**
     * `PERP_PROJECTOR`: where the history projection is written: `worker` (a worker thread with its
     * own database connection, off the thread that takes orders), `thread` (the engine's own
     * thread), or `auto` (default): the worker, but on an in-memory SQLite database, which a worker
     * cannot open (docs/perp-sequencer.md "The projector").
     */
    projector: 'worker' | 'thread' | 'auto';
    /**
     * `PERP_JOURNAL_WRITER`: where the journal's group commits run: `worker` (a worker thread with
     * its own connection to the SQLite file, so the order thread's loop is not stopped by the commit's
     * fsync), `thread` (the engine's own thread), or `auto` (default): the worker for a SQLite file,
     * except on a host of two cores or fewer whose disk syncs in a millisecond or less (measured at
     * start), where the thread is faster; the thread for PostgreSQL (whose commits do not block the
     * loop) and for an in-memory file (docs/perp-sequencer.md "The journal's writer").
     */
    journalWriter: 'worker' | 'thread' | 'auto';
  };
  executor: ExecutorSettings;
  /**
   * The on-chain oracle (docs/market-data.md, "On-chain oracle"): the publisher beside the executor
   * writes the quotes to the price feeds on a heartbeat or a deviation, and the StockRouter refuses
   * a fill further than the tolerance from its stock's feed or on an answer older than `maxAgeMs`.
   */
  oracle: {
    /** `ORACLE_TOLERANCE_BPS` (default 100, at most 5 000): 0 turns the check off (the router's feeds removed, nothing published). */
    toleranceBps: number;
    /** `ORACLE_HEARTBEAT_MS` (default 60 000): a feed gets a round at least this often. */
    heartbeatMs: number;
    /** `ORACLE_DEVIATION_BPS` (default 25): a move this large from the last answer publishes at once. */
    deviationBps: number;
    /** `ORACLE_MAX_AGE_MS` (default 3 × the heartbeat): the router's maximum answer age, whole seconds on chain. */
    maxAgeMs: number;
  };
  /**
   * `QUOTE_SOURCE` (`simulator` or `alpaca`) with `ALPACA_*` and the `QUOTE_*` guard settings: where
   * the stock quotes come from and when a symbol halts (docs/market-data.md).
   */
  quoteSource: QuoteSourceSettings;
  /**
   * `LEASE_TTL_MS`: how long a singleton role's lease outlives its holder's last renewal before a
   * waiting copy takes over (default 10 000; docs/deployment.md "Leases").
   */
  leaseTtlMs: number;
  /**
   * `READINESS_STALE_MS`: a role that made no progress for longer makes `/readyz` answer 503 and
   * `tokex status` exit non-zero (default 15 000; docs/operations.md).
   */
  readinessStaleMs: number;
  /** `STATUS_PUBLISH_MS`: how often a process writes its roles' progress for the probes (default 2 000). */
  statusPublishMs: number;
  /**
   * `METRICS_HOST` (default 127.0.0.1) and `METRICS_PORT` (default 9464): the Prometheus listener
   * of this process, apart from the APIs; `METRICS_PORT=0` picks a free port (tests), `off` none.
   */
  metrics?: { host: string; port: number };
  /** How long a tx-recording request waits for the indexer to reach the transaction's block. */
  indexWaitMs: number;
  /** One Click relaying (docs/one-click.md). */
  relay: {
    /** How long a send call waits for its receipt before answering `pending`. */
    waitMs: number;
    /** How often the relay journal is read (by the relayer for new requests, by the API for results). */
    pollMs: number;
    /** Relayed transactions followed at once. */
    maxInFlight: number;
    /** A request the relayer has not signed within this long is failed instead of sent late. */
    maxQueueMs: number;
  };
}

/** The flags `STOCK_SESSION_FLAGS` sets for one symbol (the names of `GET symbols`). */
export interface SessionFlagOverrides {
  overnightTradable?: boolean;
  fractionable?: boolean;
  fractionalEhEnabled?: boolean;
}

/** Each flag's names in `STOCK_SESSION_FLAGS`: the short one and Anchored's field, any case. */
const SESSION_FLAG_NAMES: Record<string, keyof SessionFlagOverrides> = {
  overnight: 'overnightTradable',
  overnighttradable: 'overnightTradable',
  fractionable: 'fractionable',
  fractionaleh: 'fractionalEhEnabled',
  fractionalehenabled: 'fractionalEhEnabled',
};

/**
 * `SYMBOL:flag=true|false[,flag=…][;SYMBOL:…]`, symbols upper-cased. Which symbols are listed is
 * the stack's to check (src/app/stack.ts), so a typo there is refused at start as well.
 */
export function parseSessionFlags(raw: string | undefined, name = 'STOCK_SESSION_FLAGS'): Record<string, SessionFlagOverrides> {
  const out: Record<string, SessionFlagOverrides> = {};
  if (raw === undefined) return out;
  const bad = (why: string) => new AppError('VALIDATION', `${name}: ${why} (e.g. TSLA:overnight=false,fractionalEh=false;SPY:fractionable=false)`);
  for (const entry of raw.split(';').map((e) => e.trim()).filter((e) => e !== '')) {
    const colon = entry.indexOf(':');
    if (colon < 0) throw bad(`${JSON.stringify(entry)} must be SYMBOL:flag=true|false`);
    const symbol = entry.slice(0, colon).trim().toUpperCase();
    if (!/^[A-Z0-9.\-]{1,20}$/.test(symbol)) throw bad(`${JSON.stringify(entry.slice(0, colon).trim())} is not a symbol`);
    if (out[symbol] !== undefined) throw bad(`${symbol} is given twice`);
    const flags: SessionFlagOverrides = {};
    const pairs = entry.slice(colon + 1).split(',').map((p) => p.trim());
    if (pairs.every((p) => p === '')) throw bad(`${symbol} names no flag`);
    for (const pair of pairs) {
      const m = /^([A-Za-z]+)\s*=\s*(\w+)$/.exec(pair);
      const flag = m ? SESSION_FLAG_NAMES[m[1].toLowerCase()] : undefined;
      if (!m || flag === undefined) throw bad(`${JSON.stringify(pair)}: the flags are overnight, fractionable and fractionalEh, each =true or =false`);
      const value = m[2].toLowerCase();
      if (value !== 'true' && value !== 'false') throw bad(`${symbol} ${m[1]}: must be true or false`);
      if (flags[flag] !== undefined) throw bad(`${symbol} ${m[1]} is given twice`);
      flags[flag] = value === 'true';
    }
    out[symbol] = flags;
  }
  return out;
}

/** `YYYY-MM-DDTHH:MM[:SS[.fff]]` with `Z` or `±HH:MM`, every field in range (Date.parse rolls 02-30 over to March). */
function isoInstantMs(raw: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/i.exec(raw);
  if (!m) return Number.NaN;
  const [y, mo, d, h, mi, sec] = m.slice(1, 7).map((v) => Number(v ?? 0));
  const day = new Date(Date.UTC(y, mo - 1, d));
  if (day.getUTCFullYear() !== y || day.getUTCMonth() !== mo - 1 || day.getUTCDate() !== d || h > 23 || mi > 59 || sec > 59) return Number.NaN;
  return Date.parse(raw);
}

/** An instant as ISO 8601 with an explicit offset (or Z), or as Unix ms. */
/** Reads `SIGNATURE_WORKERS`: `auto` or a number of worker threads from 0 to 256; unset, 0. */
export function parseSignatureWorkers(raw: string | undefined): 'auto' | number {
  if (raw === undefined || raw.trim() === '') return 0;
  const v = raw.trim().toLowerCase();
  if (v === 'auto') return 'auto';
  if (/^\d{1,3}$/.test(v) && Number(v) <= 256) return Number(v);
  throw new AppError('VALIDATION', `SIGNATURE_WORKERS must be auto or a number of worker threads from 0 to 256, not ${JSON.stringify(raw)}`);
}

function envInstant(env: Env, name: string): number | undefined {
  const raw = envString(env, name)?.trim();
  if (raw === undefined) return undefined;
  const ms = /^\d+$/.test(raw) ? Number(raw) : isoInstantMs(raw);
  if (!Number.isSafeInteger(ms)) throw new AppError('VALIDATION', `${name}: must be an ISO 8601 instant with its offset (2026-03-10T08:00:00-04:00) or Unix ms`);
  return ms;
}

const PRIVATE_KEY = /^0x[0-9a-fA-F]{64}$/;

function privateKey(env: Env, name: string): Hex | undefined {
  const raw = envString(env, name);
  // The message names the variable only: the value is a secret even when malformed.
  if (raw !== undefined && !PRIVATE_KEY.test(raw)) throw new AppError('VALIDATION', `${name}: must be 0x followed by 64 hex digits`);
  return raw as Hex | undefined;
}

function address(env: Env, name: string): Address | undefined {
  const raw = envString(env, name);
  if (raw !== undefined && !isAddress(raw, { strict: false })) throw new AppError('VALIDATION', `${name}: must be a 0x address of 40 hex digits`);
  return raw === undefined ? undefined : getAddress(raw);
}

/** Set entries only, so a role without a key has no key at all (not `undefined` under its name). */
/** envInt with an upper bound too (the engine refuses a longer lock-up, so every addition would fail). */
/** A USDC amount (at most 6 decimals) in token units. */
function usdcUnits(env: Env, name: string, fallback: string): bigint {
  const raw = (envString(env, name) ?? fallback).trim();
  const m = /^(\d{1,15})(?:\.(\d{1,6}))?$/.exec(raw);
  if (!m) throw new AppError('VALIDATION', `${name}: must be a USDC amount with at most 6 decimals`);
  return BigInt(m[1]) * 1_000_000n + BigInt((m[2] ?? '').padEnd(6, '0'));
}

function envIntAtMost(env: Env, name: string, fallback: number, maximum: number): number {
  const n = envInt(env, name, fallback);
  if (n > maximum) throw new AppError('VALIDATION', `${name}: must be at most ${maximum}`);
  return n;
}

function defined<T>(entries: Record<string, T | undefined>): Record<string, T> {
  return Object.fromEntries(Object.entries(entries).filter(([, v]) => v !== undefined)) as Record<string, T>;
}

/** `ORACLE_*`: the maximum age defaults to three heartbeats and must exceed one (a push per heartbeat keeps it fresh). */
function oracleSettings(env: Env): AppConfig['oracle'] {
  const toleranceBps = envIntAtMost(env, 'ORACLE_TOLERANCE_BPS', 100, 5_000);
  const heartbeatMs = envInt(env, 'ORACLE_HEARTBEAT_MS', 60_000, 1_000);
  const deviationBps = envIntAtMost(env, 'ORACLE_DEVIATION_BPS', 25, 5_000);
  if (deviationBps < 1) throw new AppError('VALIDATION', 'ORACLE_DEVIATION_BPS: must be at least 1');
  const maxAgeMs = envInt(env, 'ORACLE_MAX_AGE_MS', 3 * heartbeatMs, 1_000);
  // The router keeps it in whole seconds, in 32 bits; a week is already far beyond any use.
  if (maxAgeMs > 7 * 86_400_000) throw new AppError('VALIDATION', 'ORACLE_MAX_AGE_MS: must be at most 604800000 (a week)');
  if (maxAgeMs <= heartbeatMs) throw new AppError('VALIDATION', 'ORACLE_MAX_AGE_MS: must be longer than ORACLE_HEARTBEAT_MS');
  if (toleranceBps > 0 && deviationBps >= toleranceBps) {
    throw new AppError('VALIDATION', 'ORACLE_DEVIATION_BPS: must be below ORACLE_TOLERANCE_BPS (a move the publisher has not pushed yet would already be refused)');
  }
  return { toleranceBps, heartbeatMs, deviationBps, maxAgeMs };
}

/** A list of master keys, each checked now so a typo fails at start; errors never show a value. */
function masterKeyList(env: Env, name: string): string[] {
  const list = envList(env, name);
  list.forEach((v, i) => {
    try {
      parseMasterKey(v, name);
    } catch {
      throw new AppError('VALIDATION', `${name}: entry ${i + 1} must be 32 bytes as hex or base64`);
    }
  });
  return list;
}

/** The TLS file paths, resolved; one of cert and key without the other is a mistake. */
function tlsFiles(env: Env): TlsFiles | undefined {
  const certFile = envString(env, 'TLS_CERT_FILE');
  const keyFile = envString(env, 'TLS_KEY_FILE');
  const caFile = envString(env, 'TLS_CA_FILE');
  if (certFile === undefined && keyFile === undefined) {
    if (caFile !== undefined) throw new AppError('VALIDATION', 'TLS_CA_FILE: needs TLS_CERT_FILE and TLS_KEY_FILE');
    return undefined;
  }
  if (certFile === undefined) throw new AppError('VALIDATION', 'TLS_CERT_FILE: required with TLS_KEY_FILE');
  if (keyFile === undefined) throw new AppError('VALIDATION', 'TLS_KEY_FILE: required with TLS_CERT_FILE');
  return { certFile: path.resolve(certFile), keyFile: path.resolve(keyFile), ...(caFile === undefined ? {} : { caFile: path.resolve(caFile) }) };
}

/** One chain of `stockChains`: its id and its node (undefined: an embedded anvil). */
export interface StockChainSetting {
  chainId: number;
  rpcUrl?: string;
}

/** A comma-separated list of distinct chain ids (positive integers), or undefined when unset or empty. */
function chainIdList(env: Env, name: string): number[] | undefined {
  const raw = envString(env, name);
  if (raw === undefined || raw.trim() === '') return undefined;
  const ids = raw.split(',').map((part) => {
    const t = part.trim();
    const n = Number(t);
    if (!/^\d{1,15}$/.test(t) || !Number.isSafeInteger(n) || n < 1) throw new AppError('VALIDATION', `${name}: "${t}" is not a chain id (a positive integer); expected e.g. 31337,31338`);
    return n;
  });
  const dup = ids.find((id, i) => ids.indexOf(id) !== i);
  if (dup !== undefined) throw new AppError('VALIDATION', `${name}: chain ${dup} is listed twice`);
  return ids;
}

/**
 * `CHAIN_ID` and the chains served (`stockChains`), from `EMBEDDED_CHAIN_IDS` or `STOCK_CHAINS`
 * (docs/deployment.md, "Several chains"). The first listed is the deployment's first chain: it must
 * equal CHAIN_ID when that is set, and CHAIN_ID takes it when not. Each chain after the first of
 * STOCK_CHAINS needs its own `RPC_URL_<id>`; the first uses RPC_URL. Embedded and external chains do
 * not mix in one deployment.
 */
export function parseStockChains(env: Env): { chainId: number; stockChains: StockChainSetting[] } {
  const rpcUrl = envString(env, 'RPC_URL');
  const explicit = envString(env, 'CHAIN_ID') === undefined ? undefined : envInt(env, 'CHAIN_ID', 31337);
  const embedded = chainIdList(env, 'EMBEDDED_CHAIN_IDS');
  const external = chainIdList(env, 'STOCK_CHAINS');
  if (embedded && external) throw new AppError('VALIDATION', 'EMBEDDED_CHAIN_IDS and STOCK_CHAINS: set one of them (embedded and external chains do not mix in one deployment)');
  const listed = embedded ?? external;
  const name = embedded ? 'EMBEDDED_CHAIN_IDS' : 'STOCK_CHAINS';
  if (!listed) {
    const chainId = explicit ?? 31337;
    return { chainId, stockChains: [{ chainId, ...(rpcUrl === undefined ? {} : { rpcUrl }) }] };
  }
  if (explicit !== undefined && explicit !== listed[0]) {
    throw new AppError('VALIDATION', `${name}: the first chain (${listed[0]}) must be CHAIN_ID (${explicit}): it keeps the data directory and database of a single-chain deployment`);
  }
  if (embedded) {
    if (rpcUrl !== undefined) throw new AppError('VALIDATION', 'EMBEDDED_CHAIN_IDS: not with RPC_URL (use STOCK_CHAINS with RPC_URL and RPC_URL_<id> for chains on nodes)');
    return { chainId: listed[0], stockChains: listed.map((chainId) => ({ chainId })) };
  }
  if (rpcUrl === undefined) throw new AppError('VALIDATION', `STOCK_CHAINS: the first chain (${listed[0]}) needs RPC_URL`);
  return {
    chainId: listed[0],
    stockChains: listed.map((chainId, i) => {
      const url = i === 0 ? rpcUrl : envString(env, `RPC_URL_${chainId}`);
      if (url === undefined) throw new AppError('VALIDATION', `STOCK_CHAINS: chain ${chainId} needs RPC_URL_${chainId}`);
      if (!/^(https?|wss?):\/\/\S+$/.test(url)) throw new AppError('VALIDATION', `${i === 0 ? 'RPC_URL' : `RPC_URL_${chainId}`}: must be an http(s) or ws(s) URL`);
      return { chainId, rpcUrl: url };
    }),
  };
}

export function loadConfig(env: Env = process.env): AppConfig {
  const prefix = (envString(env, 'STOCK_API_PREFIX') ?? '').replace(/\/+$/, '');
  if (prefix !== '' && !prefix.startsWith('/')) throw new AppError('VALIDATION', 'STOCK_API_PREFIX: must start with /');
  const rpcUrl = envString(env, 'RPC_URL');
  const production = envChoice(env, 'TOKEX_ENV', TOKEX_ENVS, 'development') === 'production';
  const marketClockStart = envInstant(env, 'MARKET_CLOCK_START');
  const { chainId, stockChains } = parseStockChains(env);
  if (marketClockStart !== undefined && production) {
    throw new AppError('VALIDATION', 'MARKET_CLOCK_START: not with TOKEX_ENV=production (it moves the trading calendar away from the real time)');
  }
  const sandbox = envBool(env, 'SANDBOX', rpcUrl === undefined && envString(env, 'DATABASE_URL') === undefined && !production);
  if (sandbox && production) {
    throw new AppError('VALIDATION', 'SANDBOX: not with TOKEX_ENV=production (its routes move prices, mint tokens and inject faults); unset SANDBOX or set SANDBOX=0');
  }
  const sandboxSeed = envString(env, 'SANDBOX_SEED') === undefined ? undefined : envIntAtMost(env, 'SANDBOX_SEED', 0, 0xffffffff);
  if (sandboxSeed !== undefined && !sandbox) {
    throw new AppError('VALIDATION', 'SANDBOX_SEED: only with the sandbox on (the embedded stack, or SANDBOX=1); unset SANDBOX_SEED');
  }
  return {
    dataDir: path.resolve(envString(env, 'DATA_DIR') ?? './data'),
    host: envString(env, 'HOST') ?? '127.0.0.1',
    production,
    tls: tlsFiles(env),
    stockApiPort: envInt(env, 'STOCK_API_PORT', 8080),
    perpApiPort: envInt(env, 'PERP_API_PORT', 8090),
    perpRateLimitPerMin: envInt(env, 'PERP_RATE_LIMIT_PER_MIN', 120, 1),
    stockApiPrefix: prefix,
    stockProduct: envString(env, 'STOCK_PRODUCT') ?? 'STOCK',
    chainId,
    rpcUrl,
    stockChains,
    anvilPort: envString(env, 'ANVIL_PORT') === undefined ? undefined : envInt(env, 'ANVIL_PORT', 0),
    rpcBatch: envBool(env, 'RPC_BATCH', true),
    autoUpgrade: envBool(env, 'AUTO_UPGRADE', false),
    guardianAddress: address(env, 'GUARDIAN_ADDRESS'),
    perpWithdrawalCap: {
      amount: usdcUnits(env, 'PERP_WITHDRAWAL_CAP_USDC', '1000000'),
      periodSeconds: envInt(env, 'PERP_WITHDRAWAL_CAP_PERIOD_S', 86_400, 60),
    },
    timelockDelayS: envIntAtMost(env, 'TIMELOCK_DELAY_S', rpcUrl ? 172_800 : 0, 2_592_000),
    operatorPrivateKey: privateKey(env, 'OPERATOR_PRIVATE_KEY'),
    upgraderPrivateKey: privateKey(env, 'UPGRADER_PRIVATE_KEY'),
    roleKeys: defined({
      executor: privateKey(env, 'EXECUTOR_PRIVATE_KEY'),
      relayer: privateKey(env, 'RELAYER_PRIVATE_KEY'),
      'perp-operator': privateKey(env, 'PERP_OPERATOR_PRIVATE_KEY'),
      'oracle-publisher': privateKey(env, 'ORACLE_PUBLISHER_PRIVATE_KEY'),
    }),
    roleAddresses: defined({
      executor: address(env, 'EXECUTOR_ADDRESS'),
      relayer: address(env, 'RELAYER_ADDRESS'),
      'perp-operator': address(env, 'PERP_OPERATOR_ADDRESS'),
      'oracle-publisher': address(env, 'ORACLE_PUBLISHER_ADDRESS'),
    }),
    deploymentFile: envString(env, 'DEPLOYMENT_FILE'),
    databaseUrl: envString(env, 'DATABASE_URL'),
    databaseSchema: envString(env, 'DATABASE_SCHEMA'),
    redisUrl: envString(env, 'REDIS_URL'),
    streamPrefix: envString(env, 'STREAM_PREFIX') ?? 'tokex:streams',
    streamRetained: envInt(env, 'STREAM_RETAINED', 10_000, 100),
    streamPingMs: envInt(env, 'STREAM_PING_MS', 20_000, 10),
    streamIdleMs: envInt(env, 'STREAM_IDLE_MS', 60_000, 10),
    masterKey: envString(env, 'MASTER_KEY'),
    masterKeyPrevious: masterKeyList(env, 'MASTER_KEY_PREVIOUS'),
    marketCalendar: envChoice(env, 'MARKET_CALENDAR', CALENDAR_KINDS, 'always-open'),
    stockSessionFlags: parseSessionFlags(envString(env, 'STOCK_SESSION_FLAGS')),
    ...(marketClockStart === undefined ? {} : { marketClockStart }),
    marketDataSeed: sandboxSeed ?? envInt(env, 'MARKETDATA_SEED', 42),
    marketDataTickMs: envInt(env, 'MARKETDATA_TICK_MS', 1000),
    historyDays: envInt(env, 'HISTORY_DAYS', 30),
    corporateActionsFile: envString(env, 'CORPORATE_ACTIONS_FILE'),
    dividendWithholdingBps: envIntAtMost(env, 'DIVIDEND_WITHHOLDING_BPS', 3_000, 10_000),
    corporateActionsTickMs: envInt(env, 'CORPORATE_ACTIONS_TICK_MS', 5_000, 10),
    chainConfigRefreshMs: envInt(env, 'CHAIN_CONFIG_REFRESH_MS', 15_000),
    apiKeyCacheTtlMs: envInt(env, 'API_KEY_CACHE_TTL_MS', 2_000),
    trustedProxies: envList(env, 'TRUSTED_PROXIES'),
    bodyLimitBytes: envInt(env, 'BODY_LIMIT_BYTES', 64 * 1024),
    signatureWorkers: parseSignatureWorkers(envString(env, 'SIGNATURE_WORKERS')),
    logLevel: envString(env, 'LOG_LEVEL') ?? 'info',
    logRequests: envBool(env, 'LOG_REQUESTS', !envBool(env, 'DEMO_MODE', rpcUrl === undefined)),
    logFormat: envChoice(env, 'LOG_FORMAT', ['auto', 'pretty', 'json'] as const, 'auto'),
    demoMode: envBool(env, 'DEMO_MODE', rpcUrl === undefined),
    sandbox,
    ...(sandboxSeed === undefined ? {} : { sandboxSeed }),
    indexer: {
      confirmations: envInt(env, 'INDEXER_CONFIRMATIONS', 0),
      pollMs: envInt(env, 'INDEXER_POLL_MS', 500),
      batchBlocks: envInt(env, 'INDEXER_BATCH_BLOCKS', 2_000),
    },
    perp: {
      confirmations: envInt(env, 'PERP_CONFIRMATIONS', 0),
      marketMaker: envBool(env, 'PERP_MARKET_MAKER', envBool(env, 'DEMO_MODE', rpcUrl === undefined)),
      demoTakerMs: envInt(env, 'PERP_DEMO_TAKER_MS', 10_000, 10),
      fundingIntervalMs: envString(env, 'PERP_FUNDING_INTERVAL_MS') === undefined ? undefined : envInt(env, 'PERP_FUNDING_INTERVAL_MS', 3_600_000, 1_000),
      markIntervalMs: envInt(env, 'PERP_MARK_INTERVAL_MS', 1_000, 10),
      fundingSampleMs: envInt(env, 'PERP_FUNDING_SAMPLE_MS', 5_000, 10),
      lpLockupMs: envIntAtMost(env, 'PERP_LP_LOCKUP_MS', 4 * 86_400_000, 366 * 86_400_000),
      engineStream: envString(env, 'PERP_ENGINE_STREAM'),
      engineEvents: envBool(env, 'PERP_ENGINE_EVENTS', false),
      eventBuffer: envInt(env, 'PERP_EVENT_BUFFER', 100_000, 1_000),
      recentResults: envInt(env, 'PERP_RECENT_RESULTS', 100_000, 1_000),
      projector: envChoice(env, 'PERP_PROJECTOR', ['auto', 'worker', 'thread'] as const, 'auto'),
      journalWriter: envChoice(env, 'PERP_JOURNAL_WRITER', ['auto', 'worker', 'thread'] as const, 'auto'),
    },
    executor: loadExecutorSettings(env),
    oracle: oracleSettings(env),
    quoteSource: loadQuoteSourceSettings(env, { staleAfterMs: loadExecutorSettings(env).quoteMaxAgeMs }),
    leaseTtlMs: envInt(env, 'LEASE_TTL_MS', 10_000, 500),
    readinessStaleMs: envInt(env, 'READINESS_STALE_MS', 15_000, 100),
    statusPublishMs: envInt(env, 'STATUS_PUBLISH_MS', 2_000, 10),
    metrics: envString(env, 'METRICS_PORT') === 'off' ? undefined : { host: envString(env, 'METRICS_HOST') ?? '127.0.0.1', port: envInt(env, 'METRICS_PORT', 9464) },
    indexWaitMs: envInt(env, 'INDEX_WAIT_MS', 10_000),
    relay: {
      waitMs: envInt(env, 'RELAY_WAIT_MS', 30_000),
      pollMs: envInt(env, 'RELAY_POLL_MS', 50),
      maxInFlight: envInt(env, 'RELAY_MAX_IN_FLIGHT', 64),
      maxQueueMs: envInt(env, 'RELAY_MAX_QUEUE_MS', 60_000),
    },
  };
}
