/**
 * Start-up: `tokex --help` and `tokex start` until its banner on an existing data directory, the
 * compiled build (bin/tokex.mjs, what `npm start` and every role process run) against the
 * TypeScript sources through tsx (what they ran before), alternating in the same run.
 *
 *   npx tsx bench/startup-bench.ts     (BENCH_STARTUP_HELP_RUNS=10, BENCH_STARTUP_RUNS=5)
 *
 * `npm start` execs the same node command, so npm's own start (a constant a few hundred ms) is left
 * out of both sides. The start figure is wall time from spawn to the banner and the started process's
 * own CPU time until then (from /proc, so the busy 2-core machine's other work counts less); the
 * first start, which creates the data directory and deploys the contracts, is not measured.
 * `runStartupBench()` is exported for the main bench.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { appBuildIsFresh, buildApp } from '../scripts/build-app.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SIDES = {
  compiled: [process.execPath, 'bin/tokex.mjs'],
  tsx: [process.execPath, '--import', 'tsx', 'src/cli/main.ts'],
} as const;
type Side = keyof typeof SIDES;

export interface StartupFigures {
  /** Median wall time of `tokex --help`, ms. */
  helpMs: Record<Side, number>;
  /** Median wall time from spawn to the banner, ms. */
  startMs: Record<Side, number>;
  /** Median CPU time (user + system) of the started process until the banner, ms. */
  startCpuMs: Record<Side, number>;
}

export interface StartupBenchResult {
  figures: StartupFigures;
  table: string;
}

const median = (xs: number[]) => {
  const v = [...xs].sort((a, b) => a - b);
  return v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
};

/** CPU time of a live process so far, ms, or NaN where /proc is not there. */
function cpuMsOf(pid: number): number {
  try {
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
    const after = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(after[11]) + Number(after[12])) * 1000) / 100;
  } catch {
    return Number.NaN;
  }
}

/** Runs to completion; its wall time, ms. */
function timeRun(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  const t0 = performance.now();
  const child = spawn(argv[0], argv.slice(1), { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d) => (err += String(d)));
  return new Promise((resolve, reject) => {
    child.on('exit', (code) => (code === 0 ? resolve(performance.now() - t0) : reject(new Error(`${argv.join(' ')} exited with ${code}: ${err}`))));
  });
}

/** Starts the stack, waits for its banner, stops it with SIGTERM (which must exit 0). */
async function timeStart(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<{ wallMs: number; cpuMs: number }> {
  const t0 = performance.now();
  const child = spawn(argv[0], [...argv.slice(1), 'start'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr.on('data', (d) => (err += String(d)));
  const exited = new Promise<number | string | null>((resolve) => child.on('exit', (code, signal) => resolve(signal ?? code)));
  const banner = await new Promise<{ wallMs: number; cpuMs: number }>((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += String(d);
      if (out.includes('tokex all running')) resolve({ wallMs: performance.now() - t0, cpuMs: cpuMsOf(child.pid!) });
    });
    void exited.then((code) => reject(new Error(`${argv.join(' ')} start exited with ${code} before its banner:\n${out.slice(-2000)}\n${err.slice(-2000)}`)));
  });
  child.kill('SIGTERM');
  const code = await exited;
  if (code !== 0) throw new Error(`${argv.join(' ')} start exited with ${code} on SIGTERM:\n${err.slice(-2000)}`);
  return banner;
}

export async function runStartupBench(opts: { helpRuns?: number; startRuns?: number; print?: (line: string) => void } = {}): Promise<StartupBenchResult> {
  const helpRuns = opts.helpRuns ?? Number(process.env.BENCH_STARTUP_HELP_RUNS ?? 10);
  const startRuns = opts.startRuns ?? Number(process.env.BENCH_STARTUP_RUNS ?? 5);
  const print = opts.print ?? (() => undefined);
  // The build is current before anything is timed: no side pays for a rebuild.
  print(await buildApp());

  const help: Record<Side, number[]> = { compiled: [], tsx: [] };
  for (let i = 0; i < helpRuns; i++) {
    for (const side of Object.keys(SIDES) as Side[]) {
      // A source edited meanwhile (on a shared checkout) is built here, not inside a timed run.
      if (!appBuildIsFresh()) await buildApp();
      help[side].push(await timeRun([...SIDES[side], '--help'], process.env));
    }
  }

  const dataDir = mkdtempSync(join(tmpdir(), 'tokex-startup-bench-'));
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, STOCK_API_PORT: '0', PERP_API_PORT: '0', METRICS_PORT: 'off', LOG_LEVEL: 'warn' };
  delete env.DATABASE_URL;
  delete env.REDIS_URL;
  delete env.RPC_URL;
  const start: Record<Side, Array<{ wallMs: number; cpuMs: number }>> = { compiled: [], tsx: [] };
  try {
    await timeStart(SIDES.compiled, env); // creates the data directory and deploys: not measured
    for (let i = 0; i < startRuns; i++) {
      for (const side of Object.keys(SIDES) as Side[]) {
        if (!appBuildIsFresh()) await buildApp();
        start[side].push(await timeStart(SIDES[side], env));
      }
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }

  const figures: StartupFigures = {
    helpMs: { compiled: median(help.compiled), tsx: median(help.tsx) },
    startMs: { compiled: median(start.compiled.map((r) => r.wallMs)), tsx: median(start.tsx.map((r) => r.wallMs)) },
    startCpuMs: { compiled: median(start.compiled.map((r) => r.cpuMs)), tsx: median(start.tsx.map((r) => r.cpuMs)) },
  };
  const ms = (n: number) => (Number.isNaN(n) ? '-' : `${Math.round(n).toLocaleString('en-US')} ms`);
  const row = (name: string, f: Record<Side, number>, runs: string) => `| ${name} | ${runs} | ${ms(f.tsx)} | ${ms(f.compiled)} | ${(f.compiled / f.tsx).toFixed(3)} |`;
  const table = [
    'start-up: the compiled build (bin/tokex.mjs) against the sources through tsx, alternating, medians',
    '| figure | runs | through tsx | compiled | compiled ÷ tsx |',
    '| --- | ---: | ---: | ---: | ---: |',
    row('`tokex --help`, wall', figures.helpMs, String(helpRuns)),
    row('`tokex start` to its banner, existing data directory, wall', figures.startMs, String(startRuns)),
    row('  same, CPU of the process until the banner', figures.startCpuMs, String(startRuns)),
  ].join('\n');
  print(table);
  return { figures, table };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await runStartupBench({ print: (l) => console.log(l) });
}
