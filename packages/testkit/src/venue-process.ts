/**
 * One run of the embedded venue as a child process: `node <tokex bin> start` in a data directory,
 * waited for as the project's own start-up tests wait (demo.json written and the banner's first line,
 * `tokex all running`, on stdout), stopped as the README's Ctrl-C stops it (SIGINT, then the
 * process's own clean shutdown: anvil's state written to `anvil-state.json`, the database closed).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DemoFile } from './demo-file.ts';

/** The banner's first line as the stack prints it (src/app/start-banner.ts): the stack is serving. */
const BANNER = 'tokex all running';
/** How much of the child's output is kept, for the error that says why a start failed. */
const OUTPUT_KEEP = 64 * 1024;

export interface VenuePorts {
  stock: number;
  perp: number;
  anvil: number;
}

export interface VenueProcessOptions {
  tokexBin: string;
  dataDir: string;
  /** Extra environment on top of the kit's (which wins only for DATA_DIR and the ports). */
  env?: Record<string, string | undefined>;
  /** The ports to bind; 0 (any free port) for each one not given. */
  ports?: Partial<VenuePorts>;
  /** How long a start may take before it is abandoned (default 240 s: a cold start on a busy 2-core machine). */
  startTimeoutMs?: number;
  /** How long a clean stop may take before SIGKILL (default 30 s). */
  stopTimeoutMs?: number;
}

export interface VenueProcess {
  child: ChildProcess;
  demo: DemoFile;
  ports: VenuePorts;
  /** Wall ms from spawn to the banner. */
  startMs: number;
  /** The child's output so far (the last 64 KiB). */
  output(): string;
  /** SIGINT, then waits for the exit (SIGKILL after `stopTimeoutMs`). Resolves the wall ms it took. */
  stop(): Promise<number>;
}

/**
 * The tokex CLI to start: `TOKEX_BIN`, else the `bin/tokex.mjs` of the package named `tokex` found
 * as a dependency, or above the working directory or this package (a checkout of the repository,
 * where this kit is a workspace).
 */
export function resolveTokexBin(): string {
  if (process.env.TOKEX_BIN) return path.resolve(process.env.TOKEX_BIN);
  const fromPackage = (pkgFile: string): string | undefined => {
    try {
      const pkg = JSON.parse(fs.readFileSync(pkgFile, 'utf8')) as { name?: string; bin?: string | Record<string, string> };
      if (pkg.name !== 'tokex') return undefined;
      const bin = typeof pkg.bin === 'string' ? pkg.bin : pkg.bin?.tokex;
      return bin ? path.resolve(path.dirname(pkgFile), bin) : undefined;
    } catch {
      return undefined;
    }
  };
  try {
    const found = fromPackage(createRequire(import.meta.url).resolve('tokex/package.json'));
    if (found) return found;
  } catch {
    // Not installed as a dependency: look upwards.
  }
  for (const start of [process.cwd(), path.dirname(fileURLToPath(import.meta.url))]) {
    for (let dir = start; ; dir = path.dirname(dir)) {
      const found = fromPackage(path.join(dir, 'package.json'));
      if (found) return found;
      if (path.dirname(dir) === dir) break;
    }
  }
  throw new Error('@tokex/testkit: no tokex package found (not a dependency, nor above the working directory); pass tokexBin or set TOKEX_BIN to its bin/tokex.mjs');
}

/** The port of a URL (`http://127.0.0.1:41234/...` → 41234). */
function portOf(url: string): number {
  return Number(new URL(url).port);
}

export async function startVenueProcess(opts: VenueProcessOptions): Promise<VenueProcess> {
  const startTimeoutMs = opts.startTimeoutMs ?? 240_000;
  const stopTimeoutMs = opts.stopTimeoutMs ?? 30_000;
  const env: NodeJS.ProcessEnv = { ...process.env };
  // The embedded venue: its own anvil and SQLite, nothing shared with the caller's environment.
  for (const k of ['DATABASE_URL', 'REDIS_URL', 'RPC_URL', 'SANDBOX', 'SANDBOX_SEED', 'TOKEX_ENV']) delete env[k];
  for (const [k, v] of Object.entries(opts.env ?? {})) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  env.DATA_DIR = opts.dataDir;
  env.STOCK_API_PORT = String(opts.ports?.stock ?? 0);
  env.PERP_API_PORT = String(opts.ports?.perp ?? 0);
  env.METRICS_PORT = env.METRICS_PORT === 'off' ? 'off' : '0';
  if (opts.ports?.anvil !== undefined) env.ANVIL_PORT = String(opts.ports.anvil);
  else delete env.ANVIL_PORT;

  const demoFile = path.join(opts.dataDir, 'demo.json');
  const startedAt = Date.now();
  const child = spawn(process.execPath, [opts.tokexBin, 'start'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const keep = (d: Buffer) => {
    out += d.toString();
    if (out.length > OUTPUT_KEEP * 2) out = out.slice(-OUTPUT_KEEP);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // A test process that ends without stop() (a crash, a forgotten afterAll) still stops its venue:
  // SIGTERM, which the venue answers with its own clean shutdown after this process is gone.
  const orphanGuard = () => child.kill('SIGTERM');
  process.once('exit', orphanGuard);
  child.once('exit', () => process.off('exit', orphanGuard));
  let exitNote: string | undefined;
  child.once('exit', (code, signal) => (exitNote = `exited with ${signal ?? code}`));
  const output = () => out.slice(-OUTPUT_KEEP);

  const stop = async (): Promise<number> => {
    const t0 = Date.now();
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGINT');
      const killer = setTimeout(() => child.kill('SIGKILL'), stopTimeoutMs);
      await exited;
      clearTimeout(killer);
    }
    return Date.now() - t0;
  };

  // The banner follows demo.json's writing (src/app/stack.ts, run-stack.ts): both, or the exit.
  try {
    await new Promise<void>((resolve, reject) => {
      const deadline = setTimeout(() => finish(new Error(`not running within ${startTimeoutMs} ms`)), startTimeoutMs);
      const check = () => {
        if (out.includes(BANNER) && fs.existsSync(demoFile)) finish();
      };
      const onExit = () => finish(new Error(`the venue ${exitNote ?? 'exited'} before it was running`));
      function finish(err?: Error) {
        clearTimeout(deadline);
        child.stdout!.off('data', check);
        child.off('exit', onExit);
        if (err) reject(err);
        else resolve();
      }
      child.stdout!.on('data', check);
      child.once('exit', onExit);
      check();
    });
  } catch (err) {
    await stop();
    throw new Error(`@tokex/testkit: ${(err as Error).message} (DATA_DIR ${opts.dataDir})\n${output().slice(-4000)}`);
  }
  const startMs = Date.now() - startedAt;
  const demo = JSON.parse(fs.readFileSync(demoFile, 'utf8')) as DemoFile;
  const ports: VenuePorts = { stock: portOf(demo.stock.baseUrl), perp: portOf(demo.perp?.baseUrl ?? demo.stock.baseUrl), anvil: portOf(demo.rpcUrl) };
  return { child, demo, ports, startMs, output, stop };
}
