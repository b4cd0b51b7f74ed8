/**
 * Runs README.md's blocks in order in a fresh checkout directory (argv[2]) with the rule of
 * readme-blocks.ts, and writes what each did to argv[3] as JSON. readme-walkthrough.test.ts starts
 * it, in a network namespace of its own when the machine allows one, so the README's fixed ports
 * (8080, 8090, 9464) are free whatever else runs on the machine.
 *
 * The blocks see the environment a reader's shell has (PATH, HOME, locale): no DATA_DIR, no DEMO,
 * nothing the README does not show.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { readmeBlocks, segments, type ReadmeBlock } from './readme-blocks.ts';

const [checkout, resultsFile] = process.argv.slice(2);
const readme = fs.readFileSync(path.join(checkout, 'README.md'), 'utf8');
const stackLog = path.join(path.dirname(resultsFile), 'stack.log');

/** A reader's shell: what a terminal has, nothing of the test's. */
const env: NodeJS.ProcessEnv = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => ['PATH', 'HOME', 'USER', 'LANG', 'LC_ALL', 'TERM', 'TMPDIR', 'SHELL'].includes(k)),
);

export interface BlockResult {
  index: number;
  heading: string;
  line: number;
  lang: string;
  mode: string;
  code: string;
  ran: boolean;
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  ms: number;
  /** How many times the stack had started (banners seen) when the block finished. */
  stackStarts: number;
}

let stack: ChildProcess | undefined;
let stackStarts = 0;

function log(line: string): void {
  process.stderr.write(`[readme] ${line}\n`);
}

async function startStack(): Promise<void> {
  if (stack) return;
  log('npm start');
  const out = fs.openSync(stackLog, 'a');
  const child = spawn('npm', ['start'], { cwd: checkout, env, detached: true, stdio: ['ignore', 'pipe', out] });
  stack = child;
  let seen = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('npm start printed no banner within 300 s')), 300_000);
    child.stdout!.on('data', (d: Buffer) => {
      fs.appendFileSync(stackLog, d);
      seen += String(d);
      if (seen.includes('Ctrl-C to stop')) {
        clearTimeout(timer);
        seen = '';
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`npm start exited with ${code} before its banner (log: ${stackLog})`));
    });
  });
  stackStarts++;
}

/** Ctrl-C in the terminal of npm start: SIGINT to its process group, then its exit. */
async function stopStack(): Promise<void> {
  const child = stack;
  if (!child) return;
  stack = undefined;
  log('Ctrl-C to npm start');
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  process.kill(-child.pid!, 'SIGINT');
  const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 60_000);
  await exited;
  clearTimeout(timer);
}

interface Ran {
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
}

function run(cmd: string, args: string[], opts: { live?: boolean; timeoutMs?: number } = {}): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: checkout, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let interrupted = false;
    const interrupt = () => {
      if (interrupted) return;
      interrupted = true;
      try {
        process.kill(-child.pid!, 'SIGINT');
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => {
      stderr += `\n[readme] still running after ${(opts.timeoutMs ?? 0) / 1000} s: interrupted\n`;
      interrupt();
      setTimeout(() => {
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          // already gone
        }
      }, 10_000).unref();
    }, opts.timeoutMs ?? 600_000);
    child.stdout!.on('data', (d: Buffer) => {
      stdout += String(d);
      // A live block: Ctrl-C once it has shown its first three lines.
      if (opts.live && stdout.split('\n').filter((l) => l.trim() !== '').length >= 3) interrupt();
    });
    child.stderr!.on('data', (d: Buffer) => (stderr += String(d)));
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ exitCode: code, signal, stdout, stderr });
    });
  });
}

async function runBlock(b: ReadmeBlock): Promise<BlockResult> {
  const t0 = Date.now();
  const result: BlockResult = { ...b, ran: false, exitCode: null, signal: null, stdout: '', stderr: '', ms: 0, stackStarts };
  if (b.mode === 'not-run') return result;
  result.ran = true;
  if (b.lang === 'ts' || b.lang === 'js') {
    await startStack();
    const file = `readme-snippet-${b.index}.${b.lang === 'ts' ? 'mts' : 'mjs'}`;
    fs.writeFileSync(path.join(checkout, file), `${b.code}\n`);
    Object.assign(result, await run('npx', ['tsx', file], { timeoutMs: 180_000 }));
  } else {
    // A block of `npm start` lines only runs nothing else: it succeeded once the banner showed.
    result.exitCode = 0;
    if (b.mode === 'stopped') await stopStack();
    for (const seg of segments(b.code)) {
      if (seg.script.trim() !== '') {
        if (b.mode !== 'stopped') await startStack();
        const r = await run('bash', ['-e', '-c', seg.script], { live: b.mode === 'live', timeoutMs: b.mode === 'live' ? 120_000 : 600_000 });
        result.stdout += r.stdout;
        result.stderr += r.stderr;
        result.exitCode = r.exitCode;
        result.signal = r.signal;
        if (r.exitCode !== 0 && b.mode !== 'live') break;
      }
      if (seg.startsStackAfter) await startStack();
    }
  }
  result.ms = Date.now() - t0;
  result.stackStarts = stackStarts;
  return result;
}

const results: BlockResult[] = [];
try {
  for (const b of readmeBlocks(readme)) {
    log(`README.md:${b.line} ${b.lang} ${b.mode} under ${b.heading}`);
    const r = await runBlock(b);
    results.push(r);
    fs.writeFileSync(resultsFile, JSON.stringify({ results }, null, 1));
    if (r.ran) log(`  exit ${r.exitCode}${r.signal ? ` (${r.signal})` : ''} in ${r.ms} ms`);
  }
  // What the stack holds after the last block (the README's "A way back" reset it): read with the
  // CLI, as a reader would check it; not a README block.
  const positions = await run('npx', ['tokex', 'perp', 'positions', '--json'], { timeoutMs: 60_000 });
  const account = await run('npx', ['tokex', 'perp', 'account', '--json'], { timeoutMs: 60_000 });
  fs.writeFileSync(resultsFile, JSON.stringify({ results, after: { positions, account } }, null, 1));
} finally {
  await stopStack();
}
