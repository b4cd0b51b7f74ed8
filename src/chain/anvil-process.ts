import { gunzipSync } from 'node:zlib';
import { rename, writeFile } from 'node:fs/promises';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, readlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import path from 'node:path';
import type { Logger } from '../lib/logger.ts';
import { AppError } from '../errors/app-error.ts';
import { sleep } from '../lib/async.ts';
import { ANVIL_CHAIN_ID } from './anvil-accounts.ts';

export interface StartAnvilOptions {
  /** 0 or undefined: a free port. */
  port?: number;
  host?: string;
  chainId?: number;
  /** anvil `--state`: loaded on start when present, dumped on exit and every `stateIntervalSeconds`. */
  stateFile?: string;
  /** How often anvil dumps `stateFile`, so that a kill -9 loses at most this much. Default 2. */
  stateIntervalSeconds?: number;
  /** How long to wait for the RPC to answer. Default 15 s. */
  startTimeoutMs?: number;
  /**
   * false: without the CREATE2 factory anvil predeploys (`--disable-default-create2-deployer`), as a
   * chain that lacks it (tests of the deterministic deployment). Default true.
   */
  create2Deployer?: boolean;
  logger?: Logger;
}

export interface AnvilHandle {
  rpcUrl: string;
  port: number;
  pid: number;
  /** SIGTERM (anvil then dumps its state file) and wait for the exit; SIGKILL after 10 s. Idempotent. */
  stop(): Promise<void>;
  /**
   * Writes the chain's state to the state file now (anvil_dumpState, written atomically), so that
   * what was mined so far survives a kill -9 of this process; a no-op without a state file. A step
   * that records its progress elsewhere (a migration's journal) calls it first, so the record never
   * runs ahead of the chain.
   */
  flushState(): Promise<void>;
}

const require = createRequire(import.meta.url);

const PLATFORM_PACKAGES: Record<string, Record<string, string>> = {
  darwin: { x64: '@foundry-rs/anvil-darwin-amd64', arm64: '@foundry-rs/anvil-darwin-arm64' },
  linux: { x64: '@foundry-rs/anvil-linux-amd64', arm64: '@foundry-rs/anvil-linux-arm64' },
  win32: { x64: '@foundry-rs/anvil-win32-amd64' },
};

/**
 * The anvil binary shipped by `@foundry-rs/anvil`, resolved the way its `bin.mjs` does. Spawning
 * the binary itself (not the node wrapper) lets our signals reach anvil directly.
 */
export function resolveAnvilBinary(): string {
  const binaryName = process.platform === 'win32' ? 'anvil.exe' : 'anvil';
  const platformPackage = PLATFORM_PACKAGES[process.platform]?.[process.arch];
  if (platformPackage) {
    try {
      const candidate = require.resolve(`${platformPackage}/bin/${binaryName}`);
      if (existsSync(candidate)) return candidate;
    } catch {
      // fall through to the wrapper's dist/ location
    }
  }
  const wrapperDir = path.dirname(require.resolve('@foundry-rs/anvil/package.json'));
  const fallback = path.join(wrapperDir, '..', 'dist', binaryName);
  if (existsSync(fallback)) return fallback;
  throw new AppError('INTERNAL', `anvil: no binary for ${process.platform}/${process.arch} (is @foundry-rs/anvil installed?)`);
}

async function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function portIsFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}

// Children still running when this process exits get SIGTERM, so that they dump state and go away.
// Each maps to its watchdog, which is stopped first so that anvil gets exactly one signal.
const liveChildren = new Map<ChildProcess, ChildProcess | undefined>();
let exitHookInstalled = false;
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const [child, watchdog] of liveChildren) {
      try {
        watchdog?.kill('SIGKILL');
        child.kill('SIGTERM');
      } catch {
        // already gone
      }
    }
  });
}

/**
 * A tiny shell that blocks on a pipe from this process and sends SIGTERM to anvil when the pipe
 * closes. The kernel closes the pipe however this process dies (including SIGKILL, when no
 * `exit` handler runs), so anvil is never orphaned.
 */
function spawnWatchdog(anvilPid: number): ChildProcess | undefined {
  if (process.platform === 'win32') return undefined;
  try {
    const dog = spawn('/bin/sh', ['-c', 'read _ ; kill -TERM "$1" 2>/dev/null', 'anvil-watchdog', String(anvilPid)], {
      stdio: ['pipe', 'ignore', 'ignore'],
    });
    dog.on('error', () => undefined);
    dog.unref();
    (dog.stdin as unknown as { unref?: () => void } | null)?.unref?.();
    return dog;
  } catch {
    return undefined;
  }
}

/** `<stateFile>.pid`: the anvil that writes the state file now. */
const ownerFileOf = (stateFile: string) => `${stateFile}.pid`;

/** Whether `pid` is alive and, where /proc tells, an anvil on `stateFile`. */
function runsOnStateFile(pid: number, stateFile: string): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(stateFile);
  } catch {
    return true; // no /proc here: alive is all that can be told
  }
}

/**
 * One anvil per state file. An anvil whose process died by SIGKILL gets SIGTERM from its watchdog
 * and writes its state as it exits; a new anvil started on the same file meanwhile would have what
 * it then mines overwritten by that late write (a deployment recorded, its contracts gone: a
 * `tokex upgrade --apply` killed and run again showed it). So a start waits for the previous owner
 * to be gone, and refuses if it stays (another process runs it).
 */
async function waitForStateFileOwner(stateFile: string, logger: Logger | undefined, timeoutMs = 30_000): Promise<void> {
  let pid: number;
  try {
    pid = Number(readFileSync(ownerFileOf(stateFile), 'utf8').trim());
  } catch {
    return;
  }
  if (!Number.isSafeInteger(pid) || pid <= 0 || !runsOnStateFile(pid, stateFile)) return;
  logger?.warn({ pid, stateFile }, 'anvil: the previous anvil of this state file is still running (it writes the file as it exits): waiting for it');
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    await sleep(100);
    if (!runsOnStateFile(pid, stateFile)) return;
  }
  throw new AppError('INTERNAL', `anvil: another anvil (pid ${pid}) runs on the state file ${stateFile}; stop the process that started it first`);
}

/**
 * Whether process `pid` holds a listening TCP socket on `port`: its socket descriptors against the
 * kernel's tables (`/proc/<pid>/net/tcp`, `tcp6`). Undefined where /proc cannot tell (not Linux).
 * On Linux a process whose /proc entries cannot be read (it exited, even if its `exit` event has
 * not reached this loop yet) listens on nothing: false, never undefined, or a child that died of
 * "address in use" while another anvil answered the probe would pass for ready.
 */
export function listensOn(pid: number, port: number): boolean | undefined {
  if (process.platform !== 'linux') return undefined;
  const hexPort = `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  const inodes = new Set<string>();
  let tables = 0;
  for (const table of ['tcp', 'tcp6']) {
    let text: string;
    try {
      text = readFileSync(`/proc/${pid}/net/${table}`, 'utf8');
    } catch {
      continue;
    }
    tables++;
    for (const line of text.split('\n').slice(1)) {
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
      const f = line.trim().split(/\s+/);
      if (f.length > 9 && f[3] === '0A' && f[1].endsWith(hexPort)) inodes.add(f[9]);
    }
  }
  if (tables === 0) return false;
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return false;
  }
  for (const fd of fds) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m && inodes.has(m[1])) return true;
    } catch {
      // closed meanwhile
    }
  }
  return false;
}

/** One JSON-RPC call to anvil without parameters: its `result` (undefined when it answered none), within `timeoutMs` when given. */
async function anvilRpc(rpcUrl: string, method: string, timeoutMs?: number): Promise<unknown> {
  const res = await fetch(rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: [] }),
    ...(timeoutMs === undefined ? {} : { signal: AbortSignal.timeout(timeoutMs) }),
  });
  if (!res.ok) return undefined;
  return ((await res.json()) as { result?: unknown }).result;
}

async function rpcAnswers(rpcUrl: string): Promise<number | undefined> {
  try {
    const result = await anvilRpc(rpcUrl, 'eth_chainId', 1000);
    return typeof result === 'string' && result ? Number.parseInt(result, 16) : undefined;
  } catch {
    return undefined;
  }
}

function urlHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

interface Attempt {
  handle?: AnvilHandle;
  /** Set when the port was taken between choosing and binding it: try another. */
  portTaken?: boolean;
  error?: Error;
}

async function attempt(binary: string, port: number, opts: Required<Pick<StartAnvilOptions, 'host' | 'chainId'>> & StartAnvilOptions): Promise<Attempt> {
  const args = ['--port', String(port), '--host', opts.host, '--chain-id', String(opts.chainId), '--silent'];
  if (opts.create2Deployer === false) args.push('--disable-default-create2-deployer');
  // Absolute, so that the owner check can find it in the process's command line.
  const stateFile = opts.stateFile ? path.resolve(opts.stateFile) : undefined;
  if (stateFile) {
    mkdirSync(path.dirname(stateFile), { recursive: true });
    await waitForStateFileOwner(stateFile, opts.logger);
    args.push('--state', stateFile, '--state-interval', String(opts.stateIntervalSeconds ?? 2));
  }
  const child = spawn(binary, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  let exited = false;
  let exitCode: number | null = null;
  const exitPromise = new Promise<void>((resolve) => {
    child.once('exit', (code) => {
      exited = true;
      exitCode = code;
      liveChildren.delete(child);
      if (stateFile && child.pid !== undefined) {
        try {
          if (readFileSync(ownerFileOf(stateFile), 'utf8').trim() === String(child.pid)) unlinkSync(ownerFileOf(stateFile));
        } catch {
          // none, or another's now
        }
      }
      resolve();
    });
  });
  const spawnError = await new Promise<Error | undefined>((resolve) => {
    child.once('spawn', () => resolve(undefined));
    child.once('error', (err) => resolve(err));
  });
  if (spawnError || child.pid === undefined) {
    return { error: new AppError('INTERNAL', 'anvil: failed to start', { cause: spawnError }) };
  }
  const pid = child.pid;
  if (stateFile) writeFileSync(ownerFileOf(stateFile), String(pid));
  const watchdog = spawnWatchdog(pid);
  liveChildren.set(child, watchdog);
  installExitHook();
  void exitPromise.then(() => watchdog?.kill('SIGKILL'));

  const rpcUrl = `http://${urlHost(opts.host === '0.0.0.0' ? '127.0.0.1' : opts.host)}:${port}`;
  const deadline = Date.now() + (opts.startTimeoutMs ?? 15_000);
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      if (exited) return;
      watchdog?.kill('SIGKILL');
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exitPromise;
      clearTimeout(timer);
      opts.logger?.info({ pid, port }, 'anvil stopped');
    })();
    return stopping;
  };

  while (Date.now() < deadline) {
    if (exited) {
      const portTaken = /address already in use|os error 98|os error 48/i.test(stderr);
      return {
        portTaken,
        error: new AppError('INTERNAL', `anvil: exited during start (code ${exitCode})`, { detail: { stderr: stderr.trim() } }),
      };
    }
    const chainId = await rpcAnswers(rpcUrl);
    // Another anvil may hold the port (chosen free, then taken by another process's anvil before
    // this one bound it): it answers with the same chain id while this child is about to exit with
    // "address in use". Only an answer from this child's own socket counts.
    if (chainId !== undefined && listensOn(pid, port) !== false && !exited) {
      if (chainId !== opts.chainId) {
        await stop();
        return { error: new AppError('INTERNAL', `anvil: answered chain id ${chainId}, expected ${opts.chainId}`) };
      }
      child.stderr?.on('data', (chunk: string) => opts.logger?.warn({ pid }, `anvil: ${chunk.trim()}`));
      void exitPromise.then(() => {
        if (!stopping) opts.logger?.error({ pid, port, code: exitCode }, 'anvil exited unexpectedly');
      });
      opts.logger?.info({ pid, port, rpcUrl, stateFile: opts.stateFile }, 'anvil started');
      const flushState = async (): Promise<void> => {
        if (!opts.stateFile) return;
        const state = await anvilRpc(rpcUrl, 'anvil_dumpState');
        if (typeof state !== 'string') throw new AppError('INTERNAL', 'anvil: anvil_dumpState gave no state');
        // The same JSON anvil writes itself on exit and every --state-interval, gzipped and hex-encoded.
        const json = gunzipSync(Buffer.from(state.slice(2), 'hex'));
        const tmp = `${opts.stateFile}.${process.pid}.tmp`;
        await writeFile(tmp, json);
        await rename(tmp, opts.stateFile);
      };
      const unwatch = watchAutomine(rpcUrl, opts.logger);
      void exitPromise.then(unwatch);
      return { handle: { rpcUrl, port, pid, stop, flushState } };
    }
    await sleep(50);
  }
  await stop();
  return { error: new AppError('INTERNAL', 'anvil: RPC did not answer in time', { detail: { stderr: stderr.trim() } }) };
}

/** Spawns the real anvil binary and resolves once its RPC answers `eth_chainId`. */
/** How often the automine watchdog looks at anvil's pool. */
export const AUTOMINE_CHECK_MS = 1_000;

/**
 * anvil's automine sometimes leaves a ready transaction in its pool unmined (foundry-rs/foundry#10122,
 * seen here on a loaded machine: a migration's transaction waited out its 120 s receipt timeout).
 * Every {@link AUTOMINE_CHECK_MS} the watchdog reads `txpool_status` and the block number; a ready
 * (`pending`) transaction seen at two checks in a row with no block mined between them is mined
 * with `evm_mine`, and a warning says so, if automine is on (`anvil_getAutomine`: with it off the
 * caller holds transactions on purpose). An automine that works mines a ready transaction within
 * milliseconds, so the watchdog never acts on one; a queued transaction (a nonce gap) is not
 * ready and is left alone. Answers the function that stops it.
 */
export function watchAutomine(rpcUrl: string, logger?: Pick<Logger, 'warn'>, intervalMs = AUTOMINE_CHECK_MS): () => void {
  const rpc = (method: string) => anvilRpc(rpcUrl, method, 5_000);
  let stuckAt: string | undefined;
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    void (async () => {
      const [status, block] = await Promise.all([rpc('txpool_status'), rpc('eth_blockNumber')]);
      const pending = Number((status as { pending?: string } | undefined)?.pending ?? 0);
      if (pending === 0 || typeof block !== 'string') {
        stuckAt = undefined;
        return;
      }
      if (stuckAt !== block) {
        stuckAt = block;
        return;
      }
      stuckAt = undefined;
      // Only under automine: a caller that turned it off (tests of pending transactions) holds them on purpose.
      if ((await rpc('anvil_getAutomine')) !== true) return;
      logger?.warn({ pending, block: Number(block) }, 'anvil: ready transactions left unmined by automine (foundry-rs/foundry#10122); mining a block');
      await rpc('evm_mine');
    })()
      .catch(() => {
        // anvil busy, stopping or gone: the next check asks again.
      })
      .finally(() => {
        busy = false;
      });
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

export async function startAnvil(options: StartAnvilOptions = {}): Promise<AnvilHandle> {
  const binary = resolveAnvilBinary();
  const opts = { ...options, host: options.host ?? '127.0.0.1', chainId: options.chainId ?? ANVIL_CHAIN_ID };
  const fixedPort = options.port !== undefined && options.port !== 0;
  let last: Attempt = {};
  if (fixedPort && !(await portIsFree(opts.host, options.port as number))) {
    // Checked up front: otherwise whatever already listens there could answer our readiness probe.
    throw new AppError('INTERNAL', `anvil: port ${options.port} is already in use`);
  }
  for (let i = 0; i < (fixedPort ? 1 : 5); i++) {
    const port = fixedPort ? (options.port as number) : await freePort(opts.host);
    last = await attempt(binary, port, opts);
    if (last.handle) return last.handle;
    if (!last.portTaken) break;
  }
  throw last.error ?? new AppError('INTERNAL', 'anvil: failed to start');
}
