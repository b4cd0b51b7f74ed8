/**
 * An earlier commit of this repository, installed and run as its own README says, for the upgrade
 * tests (issue 38, "The upgrade test"): a `git worktree` of the commit under
 * `<repo>/.cache/releases/<commit>` (gitignored), installed once with `npm install` and reused by
 * every later run (and by a second vitest worker asking at the same moment), and its
 * `node bin/tokex.mjs start` on a data directory of the test's.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const REPO_ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..');
const RELEASES_DIR = path.join(REPO_ROOT, '.cache', 'releases');
const MARKER = '.tokex-release-installed.json';

export interface EarlierRelease {
  /** The worktree, `<repo>/.cache/releases/<full commit hash>`. */
  dir: string;
  /** The full commit hash. */
  commit: string;
}

/**
 * The environment a child of this test gets: the machine's basics only. Neither the test run's own
 * settings (DATABASE_URL, REDIS_URL, RPC_URL and the like, which CI exports for other suites) nor
 * npm's (`npm test` exports `npm_config_local_prefix=<this repo>`, which would point a nested
 * `npm install` at this checkout's node_modules) reach it.
 */
export function baseChildEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const k of ['PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'LC_ALL', 'TMPDIR', 'TMP', 'TEMP', 'TZ', 'SystemRoot']) {
    if (process.env[k] !== undefined) env[k] = process.env[k];
  }
  return { ...env, ...extra };
}

async function git(args: string[], cwd = REPO_ROOT): Promise<string> {
  const { stdout } = await run('git', args, { cwd, maxBuffer: 16 * 1024 * 1024 });
  return stdout.trim();
}

/**
 * The full hash of `commit`, or an error that says how to get it (CI clones main with its whole
 * history). A shallow clone first fetches the rest of its history from its origin.
 */
export async function resolveCommit(commit: string): Promise<string> {
  try {
    return await git(['rev-parse', '--verify', '--quiet', `${commit}^{commit}`]);
  } catch {
    // Not here: a shallow clone (or one without the commit) asks its origin for the history.
    try {
      if ((await git(['rev-parse', '--is-shallow-repository'])) === 'true') await git(['fetch', '--quiet', '--unshallow']);
      else await git(['fetch', '--quiet', 'origin']);
      return await git(['rev-parse', '--verify', '--quiet', `${commit}^{commit}`]);
    } catch {
      // fall through to the message below
    }
    let shallow = '';
    try {
      shallow = (await git(['rev-parse', '--is-shallow-repository'])) === 'true' ? ' This clone is shallow: run `git fetch --unshallow` (or clone with full history).' : '';
    } catch {
      // Not a git checkout at all: the message below says enough.
    }
    throw new Error(`earlier release ${commit}: no such commit in the clone at ${REPO_ROOT}; the upgrade test needs the repository's history.${shallow}`);
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The install of `commit`: created on first use (`git worktree add --detach`, `npm install
 * --no-audit --no-fund`, whose `prepare` compiles the contracts and builds the packages, all that
 * release's README asks before `npm start`), then reused: a marker file written last says the
 * install is whole. Concurrent callers (two vitest workers, two suites) take a lock file created
 * with O_EXCL; the others wait for the marker, and take over a lock whose holder died.
 */
export async function installEarlierRelease(commit: string, opts: { log?: (line: string) => void; timeoutMs?: number } = {}): Promise<EarlierRelease> {
  const full = await resolveCommit(commit);
  const dir = path.join(RELEASES_DIR, full);
  const marker = path.join(dir, MARKER);
  const lock = path.join(RELEASES_DIR, `${full}.lock`);
  const log = opts.log ?? (() => {});
  const deadline = Date.now() + (opts.timeoutMs ?? 20 * 60_000);
  fs.mkdirSync(RELEASES_DIR, { recursive: true });

  for (;;) {
    if (fs.existsSync(marker)) return { dir, commit: full };
    let fd: number | undefined;
    try {
      fd = fs.openSync(lock, fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_WRONLY, 0o644);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    if (fd === undefined) {
      // Another caller installs: wait for its marker, unless it died holding the lock.
      let holder: { pid?: number; host?: string } = {};
      try {
        holder = JSON.parse(fs.readFileSync(lock, 'utf8')) as typeof holder;
      } catch {
        // Created but not written yet: its holder is alive a moment ago.
      }
      // Its holder died: a process of this host that is gone, or a lock never written for a minute.
      const unwritten = holder.pid === undefined && Date.now() - (fs.statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now()) > 60_000;
      if (unwritten || (holder.pid !== undefined && holder.host === os.hostname() && !isAlive(holder.pid))) {
        log(`earlier release ${full.slice(0, 7)}: the install of process ${holder.pid ?? '?'} died; taking over`);
        fs.rmSync(lock, { force: true });
        continue;
      }
      if (Date.now() > deadline) throw new Error(`earlier release ${full.slice(0, 7)}: still being installed by process ${holder.pid ?? '?'} after ${opts.timeoutMs ?? 20 * 60_000} ms (lock ${lock})`);
      await sleep(1_000);
      continue;
    }
    try {
      fs.writeSync(fd, JSON.stringify({ pid: process.pid, host: os.hostname(), since: new Date().toISOString() }));
      fs.closeSync(fd);
      if (!fs.existsSync(marker)) await install(full, dir, marker, log);
      return { dir, commit: full };
    } finally {
      fs.rmSync(lock, { force: true });
    }
  }
}

async function install(full: string, dir: string, marker: string, log: (line: string) => void): Promise<void> {
  const started = Date.now();
  // A worktree left by an interrupted install is reused when it is at the commit (npm install picks
  // up where it stopped); anything else there is removed and made again.
  let reuse = false;
  if (fs.existsSync(dir)) {
    try {
      reuse = (await git(['rev-parse', 'HEAD'], dir)) === full;
    } catch {
      reuse = false;
    }
    if (!reuse) {
      await git(['worktree', 'remove', '--force', dir]).catch(() => undefined);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
  if (!reuse) {
    await git(['worktree', 'prune']);
    log(`earlier release ${full.slice(0, 7)}: git worktree add --detach ${path.relative(REPO_ROOT, dir)}`);
    await git(['worktree', 'add', '--detach', dir, full]);
  }

  // The release's own quick start: `npm install && npm start`; its `prepare` compiles the contracts
  // and builds the workspace packages, and its `start` runs the TypeScript through tsx, so nothing
  // else is built (its README: "That is all").
  log(`earlier release ${full.slice(0, 7)}: npm install --no-audit --no-fund`);
  await runLogged('npm', ['install', '--no-audit', '--no-fund'], dir, baseChildEnv({ CI: 'true' }));
  for (const needed of ['node_modules/tsx', 'node_modules/@foundry-rs/anvil', 'packages/sdk/dist']) {
    if (!fs.existsSync(path.join(dir, needed))) throw new Error(`earlier release ${full.slice(0, 7)}: npm install finished without ${needed}`);
  }
  fs.writeFileSync(marker, JSON.stringify({ commit: full, node: process.version, installedAt: new Date().toISOString(), tookMs: Date.now() - started }, null, 2) + '\n');
  log(`earlier release ${full.slice(0, 7)}: installed in ${Math.round((Date.now() - started) / 1000)} s`);
}

/** Runs a command to its end; its output goes to a log file beside the worktree, named in the error. */
async function runLogged(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<void> {
  const logFile = `${cwd}.install.log`;
  const out = fs.openSync(logFile, 'w');
  try {
    const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', out, out] });
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (c) => resolve(c));
    });
    if (code !== 0) {
      const tail = fs.readFileSync(logFile, 'utf8').slice(-4000);
      throw new Error(`${cmd} ${args.join(' ')} in ${cwd} exited with ${code} (log: ${logFile}):\n${tail}`);
    }
  } finally {
    fs.closeSync(out);
  }
}

/** A `tokex start` of any checkout (an earlier release's, or this one's) as a child process. */
export interface RunningStack {
  child: ChildProcess;
  /** Everything it printed so far, stdout and stderr. */
  output(): string;
  /** From its banner: `http://host:port`. */
  stockBaseUrl: string;
  perpBaseUrl: string;
  /** `DATA_DIR/demo.json` as it stood when the banner showed. */
  demo: EarlierDemoFile;
  /** SIGTERM, then the exit awaited (SIGKILL after `graceMs`, default 60 s; the answer says which). */
  stop(graceMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null; killed: boolean }>;
}

/**
 * DATA_DIR/demo.json as 374f31d writes it (src/app/demo-file.ts there); later releases only add
 * fields. Only what the upgrade test reads is named.
 */
export interface EarlierDemoFile {
  chainId: number;
  rpcUrl: string;
  wallets: Array<{ address: `0x${string}`; privateKey: `0x${string}` }>;
  stock: {
    baseUrl: string;
    wsUrl: string;
    product: string;
    contracts: { stockRouter: `0x${string}`; oneClickRouter: `0x${string}`; cashier: `0x${string}`; cashToken: `0x${string}`; accountLens: `0x${string}`; stocks: Record<string, `0x${string}`> };
    keys: { readOnly: { apiKey: string; apiSecret: string }; writable: { apiKey: string; apiSecret: string; userAddress: `0x${string}` } };
  };
  perp?: {
    baseUrl: string;
    wsUrl: string;
    contracts?: { marginVault: `0x${string}`; collateralToken: `0x${string}`; reserveRegistry?: `0x${string}` };
    keys: { trader: { apiKey: string; apiSecret: string; address: `0x${string}` } };
  };
}

export interface StartStackOptions {
  /** The checkout whose `bin/tokex.mjs` runs (an earlier release's worktree, or REPO_ROOT). */
  dir: string;
  dataDir: string;
  /** Added to the child's environment (over `baseChildEnv()` and the free ports). */
  env?: Record<string, string>;
  /** How long the start may take before the banner (default 5 min: a cold start compiles the contracts). */
  timeoutMs?: number;
  label?: string;
}

/**
 * `node bin/tokex.mjs start` (role all: embedded anvil, SQLite in DATA_DIR) of `dir`, with both
 * APIs on free ports (port 0: the banner and demo.json say which) and the metrics on a free port
 * (releases before them ignore METRICS_PORT). Resolves once the banner is printed in full and
 * demo.json names the URLs of the banner; rejects, with what it printed, if it exits first.
 */
export function startEarlierStack(opts: StartStackOptions): Promise<RunningStack> {
  const label = opts.label ?? path.basename(opts.dir);
  const env = baseChildEnv({
    DATA_DIR: opts.dataDir,
    STOCK_API_PORT: '0',
    PERP_API_PORT: '0',
    METRICS_PORT: '0',
    LOG_LEVEL: 'info',
    ...opts.env,
  });
  const child = spawn(process.execPath, ['bin/tokex.mjs', 'start'], { cwd: opts.dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      exited = { code, signal };
      resolve(exited);
    }),
  );
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));

  const stop: RunningStack['stop'] = async (graceMs = 60_000) => {
    if (exited) return { ...exited, killed: false };
    child.kill('SIGTERM');
    let killed = false;
    const timer = setTimeout(() => {
      killed = true;
      child.kill('SIGKILL');
    }, graceMs);
    const r = await exit;
    clearTimeout(timer);
    return { ...r, killed };
  };

  return new Promise<RunningStack>((resolve, reject) => {
    const deadline = Date.now() + (opts.timeoutMs ?? 5 * 60_000);
    const demoPath = path.join(opts.dataDir, 'demo.json');
    let done = false;
    const fail = (why: string) => {
      done = true;
      reject(new Error(`${label}: ${why}\n--- its output (last 4000 characters) ---\n${out.slice(-4000)}`));
    };
    void exit.then((e) => {
      if (!done) fail(`exited with ${e.code ?? e.signal} before its banner`);
    });
    const look = () => {
      if (done) return;
      const stock = /stock API\s+(https?:\/\/\S+)\/api\/v1/.exec(out);
      const perp = /perp API\s+(https?:\/\/\S+)\/v4\/public\/trader/.exec(out);
      if (/tokex all running/.test(out) && out.includes('Ctrl-C') && stock && perp && fs.existsSync(demoPath)) {
        let demo: EarlierDemoFile | undefined;
        try {
          demo = JSON.parse(fs.readFileSync(demoPath, 'utf8')) as EarlierDemoFile;
        } catch {
          demo = undefined;
        }
        // demo.json is written before the banner; this start's URLs, not a previous start's.
        if (demo && new URL(demo.stock.baseUrl).origin === new URL(stock[1]).origin && demo.perp?.baseUrl === perp[1]) {
          done = true;
          resolve({ child, output: () => out, stockBaseUrl: stock[1], perpBaseUrl: perp[1], demo, stop });
          return;
        }
      }
      if (Date.now() > deadline) {
        child.kill('SIGTERM');
        fail(`no banner within ${opts.timeoutMs ?? 5 * 60_000} ms`);
        return;
      }
      setTimeout(look, 200);
    };
    look();
  });
}
