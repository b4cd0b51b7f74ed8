/**
 * `startVenue()`: an embedded tokex venue for a test run, as a child process in a data directory of
 * its own, with the SDK's clients for the demo keys and typed helpers over the sandbox control API
 * (docs/sandbox.md). `snapshot()`, `revert(id)` and `reset()` are the server's (POST /sandbox/v1/snapshots,
 * /snapshots/{id}/revert, /reset): the venue starts again inside its process, on the same URLs.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type {
  SandboxClockAdvance,
  SandboxClockState,
  SandboxReset,
  SandboxRevert,
  SandboxSnapshot,
  SandboxCorporateAction,
  SandboxCorporateActionRequest,
  SandboxFault,
  SandboxFaultList,
  SandboxFaultRequest,
  SandboxFaultsCleared,
  SandboxFund,
  SandboxPrice,
  SandboxPricePath,
} from '@tokex/contract';
import { PerpClient, StockClient } from '@tokex/sdk';
import type { DemoFile } from './demo-file.ts';
import { sandboxCall, sandboxData, type SandboxAnswer } from './sandbox-http.ts';
import { resolveTokexBin, startVenueProcess, type VenuePorts, type VenueProcess } from './venue-process.ts';

export interface StartVenueOptions {
  /** The data directory to run in. Default: a fresh temporary one, removed by `stop()`. */
  dataDir?: string;
  /** Environment for the venue (e.g. `{ MARKETDATA_TICK_MS: '250' }`); `undefined` removes a variable. */
  env?: Record<string, string | undefined>;
  /** A data directory left by `prepareTemplate()`: copied into the venue's data directory before the start (no deployment, no history seed). */
  template?: string;
  /** The tokex CLI (`bin/tokex.mjs`). Default: `TOKEX_BIN`, else the `tokex` package's (see resolveTokexBin). */
  tokexBin?: string;
  /** How long one start may take (default 240 s). */
  startTimeoutMs?: number;
  /**
   * A deterministic venue (`SANDBOX_SEED`, docs/sandbox.md "Determinism"): 0 to 2^32 - 1. The venue
   * starts with its clock frozen at a whole hour, and the same script run from the same seed gets
   * the same prices, fills, order ids and balances. A snapshot, revert or reset keeps it (the venue starts again in the same process).
   */
  seed?: number;
  /**
   * Days of one-minute price history a cold start seeds (`HISTORY_DAYS`; its candles and the
   * 24-hour figures stand on it). Default 7, where `npm start` seeds 30: a test's charts need days,
   * and the seed is most of a cold start (docs/testkit.md, "Templates"). An `env.HISTORY_DAYS` wins.
   */
  historyDays?: number;
}

/** A cold start's history in a test venue, unless `historyDays` says otherwise. */
export const TESTKIT_HISTORY_DAYS = 7;

export interface VenueBaseUrls {
  /** The stock API (`/api/v1` follows). */
  stock: string;
  /** The perpetual API (`/v4/public/trader` follows). */
  perp: string;
  /** The sandbox control API (`/clock`, `/prices`, … follow). */
  sandbox: string;
  stockWs: string;
  perpWs: string;
  /** The embedded anvil's JSON-RPC. */
  rpc: string;
}

/** What a CCXT exchange of ccxt-tokex needs for this venue (the kit does not depend on CCXT). */
export interface CcxtConfig {
  apiKey: string;
  secret: string;
  /** The wallet the trader key is bound to, which signs the orders. */
  walletAddress: string;
  privateKey: string;
  options: { baseUrl: string; chainId: number };
}

export interface PriceStep {
  price: string | number;
  afterMs: number;
}

export interface Venue {
  /** demo.json: wallets, contracts, demo keys, the sandbox's token. The same across snapshot and revert. */
  readonly demo: DemoFile;
  /** The stock API with the demo WRITABLE key (bound to `demo.wallets[0]`). */
  readonly stock: StockClient;
  /** The stock API with the demo READ_ONLY key. */
  readonly stockReadOnly: StockClient;
  /** The perpetual API with the demo trader key (`demo.wallets[0]`: READ, TRADE, TRANSFER). */
  readonly perp: PerpClient;
  readonly baseUrls: VenueBaseUrls;
  /**
   * The settings of a CCXT exchange for the perpetual API with the demo trader key (HMAC key and
   * secret, the wallet that signs orders, the venue's URL and chain): `new TokexPerp(venue.ccxtConfig)`
   * with the `ccxt-tokex` package, or `venue.ccxt(TokexPerp)`.
   */
  readonly ccxtConfig: CcxtConfig;
  /** An instance of a CCXT exchange class (ccxt-tokex's `TokexPerp`) made with `ccxtConfig` and `extra` over it. */
  ccxt<E>(Exchange: new (config: CcxtConfig & Record<string, unknown>) => E, extra?: Record<string, unknown>): E;
  /** The ports bound at the start: a snapshot, revert or reset keeps them. */
  readonly ports: VenuePorts;
  readonly dataDir: string;
  /** Wall ms of the last start: spawn to the banner. */
  readonly lastStartMs: number;
  /** Any sandbox route, raw: the HTTP status, headers and the whole envelope. */
  sandbox<T = unknown>(method: string, route: string, body?: unknown, headers?: Record<string, string>): Promise<SandboxAnswer<T>>;
  clock: {
    /** The venue's time in ms (`GET /clock` `now`). */
    now(): Promise<number>;
    get(): Promise<SandboxClockState>;
    /** Moves the venue's time (and its chain's) forward; answers once everything due has run. */
    advance(seconds: number): Promise<SandboxClockAdvance>;
    /** Stops (`true`, the default) or restarts the venue's time. */
    freeze(frozen?: boolean): Promise<SandboxClockState>;
  };
  prices: {
    /** Pins an underlying (`BTC`, `AAPL`, or a perpetual's name); answered once the quote and index show it. */
    set(symbol: string, price: string | number): Promise<SandboxPrice>;
    /** Hands the underlying back to the simulator. */
    release(symbol: string): Promise<SandboxPrice>;
    /** Pins each price in turn, `afterMs` after the call; answered at once with the schedule. */
    path(symbol: string, steps: PriceStep[]): Promise<SandboxPricePath>;
  };
  /** Mints `amount` of `USDC` or a stock into `address`; answered once mined. */
  fund(address: string, asset: string, amount: string | number, opts?: { idempotencyKey?: string }): Promise<SandboxFund>;
  faults: {
    add(spec: SandboxFaultRequest): Promise<SandboxFault>;
    list(): Promise<SandboxFault[]>;
    /** Clears every fault; answers them as they were. */
    clear(): Promise<SandboxFault[]>;
  };
  corporateActions: {
    /** A split or dividend; effective now by default, answered once the chain has it. */
    add(body: SandboxCorporateActionRequest): Promise<SandboxCorporateAction>;
  };
  /**
   * `POST /sandbox/v1/snapshots`: the whole venue (chain, databases, perpetual engine, clock) kept
   * as it is now; answers the snapshot's id. The venue stops and starts again in its process for it
   * (a third of a second or so; open WebSocket connections are closed with 1012).
   */
  snapshot(): Promise<string>;
  /**
   * `POST /sandbox/v1/snapshots/{id}/revert`: the whole venue back to the snapshot, on the same URLs
   * (every client of this kit goes on working), faults as they were then; the id stays usable, and the
   * snapshots taken after it are dropped. Answers what the server did.
   */
  revert(id: string): Promise<SandboxRevert>;
  /** `DELETE /sandbox/v1/snapshots/{id}`. */
  dropSnapshot(id: string): Promise<void>;
  /** `POST /sandbox/v1/reset`: the venue as its first start seeded it; every snapshot dropped. */
  reset(): Promise<SandboxReset>;
  /** The venue's output (the last 64 KiB of its current run). */
  output(): string;
  /** Stops the venue; removes its data directory and snapshots when the kit made them. */
  stop(): Promise<void>;
}

const copyDir = (from: string, to: string) => {
  // A reflink where the file system has them (a copy on write: instant), a plain copy elsewhere.
  fs.cpSync(from, to, { recursive: true, mode: fs.constants.COPYFILE_FICLONE });
};

export async function startVenue(opts: StartVenueOptions = {}): Promise<Venue> {
  if (opts.seed !== undefined && (!Number.isSafeInteger(opts.seed) || opts.seed < 0 || opts.seed > 0xffffffff)) {
    throw new Error(`@tokex/testkit: seed: ${opts.seed}: a whole number from 0 to 4294967295`);
  }
  const tokexBin = opts.tokexBin ?? resolveTokexBin();
  const ownDir = opts.dataDir === undefined;
  const dataDir = opts.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'tokex-venue-'));
  if (opts.template !== undefined) {
    if (!fs.existsSync(path.join(opts.template, 'demo.json'))) throw new Error(`@tokex/testkit: ${opts.template} is not a prepared template (no demo.json): prepareTemplate(dir) makes one`);
    fs.mkdirSync(dataDir, { recursive: true });
    if (fs.readdirSync(dataDir).length > 0) throw new Error(`@tokex/testkit: template: the data directory ${dataDir} is not empty`);
    copyDir(opts.template, dataDir);
  }
  if (opts.historyDays !== undefined && (!Number.isSafeInteger(opts.historyDays) || opts.historyDays < 1)) {
    throw new Error(`@tokex/testkit: historyDays: ${opts.historyDays}: a whole number of days, 1 or more`);
  }
  const env = {
    HISTORY_DAYS: String(opts.historyDays ?? TESTKIT_HISTORY_DAYS),
    ...opts.env,
    ...(opts.seed === undefined ? {} : { SANDBOX_SEED: String(opts.seed) }),
  };
  const base = { tokexBin, dataDir, env, startTimeoutMs: opts.startTimeoutMs };
  let run: VenueProcess;
  try {
    run = await startVenueProcess(base);
  } catch (err) {
    if (ownDir) fs.rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  const ports = run.ports;
  const demo = run.demo;
  if (!demo.sandbox) throw new Error('@tokex/testkit: demo.json has no sandbox: is SANDBOX=0 set in the environment?');
  if (!demo.perp) throw new Error('@tokex/testkit: demo.json has no perp venue: the embedded stack runs every role');
  const sandboxTarget = demo.sandbox;
  const baseUrls: VenueBaseUrls = {
    stock: demo.stock.baseUrl,
    perp: demo.perp.baseUrl,
    sandbox: demo.sandbox.baseUrl,
    stockWs: demo.stock.wsUrl,
    perpWs: demo.perp.wsUrl,
    rpc: demo.rpcUrl,
  };
  const stock = new StockClient({ baseUrl: demo.stock.baseUrl, chainId: demo.chainId, apiKey: demo.stock.keys.writable.apiKey, apiSecret: demo.stock.keys.writable.apiSecret });
  const stockReadOnly = new StockClient({ baseUrl: demo.stock.baseUrl, chainId: demo.chainId, apiKey: demo.stock.keys.readOnly.apiKey, apiSecret: demo.stock.keys.readOnly.apiSecret });
  const perp = new PerpClient({ baseUrl: demo.perp.baseUrl, chainId: demo.chainId, apiKey: demo.perp.keys.trader.apiKey, apiSecret: demo.perp.keys.trader.apiSecret });

  const trader = demo.wallets[0];
  const ccxtConfig: CcxtConfig = {
    apiKey: demo.perp.keys.trader.apiKey,
    secret: demo.perp.keys.trader.apiSecret,
    walletAddress: trader.address,
    privateKey: trader.privateKey,
    options: { baseUrl: demo.perp.baseUrl, chainId: demo.chainId },
  };

  let stopped = false;
  const live = () => {
    if (stopped) throw new Error('@tokex/testkit: the venue is stopped');
  };
  const data = <T>(method: string, route: string, body?: unknown, headers?: Record<string, string>) => sandboxData<T>(sandboxTarget, method, route, body, headers);
  const venue: Venue = {
    demo,
    stock,
    stockReadOnly,
    perp,
    baseUrls,
    ccxtConfig,
    // A fresh copy of the settings each time: CCXT keeps (and may change) the object it is given.
    ccxt: (Exchange, extra = {}) => new Exchange({ ...ccxtConfig, ...extra, options: { ...ccxtConfig.options, ...((extra.options as object | undefined) ?? {}) } }),
    ports,
    dataDir,
    get lastStartMs() {
      return run.startMs;
    },
    sandbox: (method, route, body, headers) => sandboxCall(sandboxTarget, method, route, body, headers),
    clock: {
      now: async () => (await data<SandboxClockState>('GET', '/clock')).now,
      get: () => data<SandboxClockState>('GET', '/clock'),
      advance: (seconds) => data<SandboxClockAdvance>('POST', '/clock/advance', { seconds }),
      freeze: (frozen = true) => data<SandboxClockState>('POST', '/clock/freeze', { frozen }),
    },
    prices: {
      set: (symbol, price) => data<SandboxPrice>('POST', '/prices', { symbol, price: String(price) }),
      release: (symbol) => data<SandboxPrice>('POST', '/prices', { symbol, release: true }),
      path: (symbol, steps) => data<SandboxPricePath>('POST', '/prices', { symbol, path: steps.map((s) => ({ price: String(s.price), afterMs: s.afterMs })) }),
    },
    fund: (address, asset, amount, o = {}) =>
      data<SandboxFund>('POST', '/fund', { address, asset, amount: String(amount) }, o.idempotencyKey ? { 'idempotency-key': o.idempotencyKey } : {}),
    faults: {
      add: (spec) => data<SandboxFault>('POST', '/faults', spec),
      list: async () => (await data<SandboxFaultList>('GET', '/faults')).faults,
      clear: async () => (await data<SandboxFaultsCleared>('DELETE', '/faults')).cleared,
    },
    corporateActions: {
      add: (body) => data<SandboxCorporateAction>('POST', '/corporate-actions', body),
    },
    snapshot: async () => {
      live();
      return (await data<SandboxSnapshot>('POST', '/snapshots')).id;
    },
    revert: async (id) => {
      live();
      return data<SandboxRevert>('POST', `/snapshots/${encodeURIComponent(id)}/revert`);
    },
    dropSnapshot: async (id) => {
      live();
      await data('DELETE', `/snapshots/${encodeURIComponent(id)}`);
    },
    reset: async () => {
      live();
      return data<SandboxReset>('POST', '/reset');
    },
    output: () => run.output(),
    stop: async () => {
      if (stopped) return;
      stopped = true;
      await run.stop();
      if (ownDir) fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return venue;
}

export interface PreparedTemplate {
  dir: string;
  /** Wall ms of the cold start that made it (deployment and history seed included). */
  coldStartMs: number;
}

/**
 * Starts a venue once in `dir` (which must be empty or absent), stops it cleanly and leaves its data
 * directory there: `startVenue({ template: dir })` then copies it and starts from it, a restart of a
 * seeded venue (the contracts deployed, the history seeded, the demo keys) rather than a cold start.
 */
export async function prepareTemplate(dir: string, opts: Omit<StartVenueOptions, 'dataDir' | 'template'> = {}): Promise<PreparedTemplate> {
  fs.mkdirSync(dir, { recursive: true });
  if (fs.readdirSync(dir).length > 0) throw new Error(`@tokex/testkit: prepareTemplate: ${dir} is not empty`);
  const started = Date.now();
  const venue = await startVenue({ ...opts, dataDir: dir });
  const coldStartMs = Date.now() - started;
  await venue.stop();
  return { dir, coldStartMs };
}
