/**
 * Every walkthrough of README.md runs as written (issue 41): each shell block in a real `bash`,
 * exactly as printed, in order, in a fresh checkout directory against the README's own `npm start`;
 * each TypeScript or JavaScript snippet saved as a file of its own and run with `npx tsx`, as the
 * README tells a reader. The rule (what `npm start`, `live`, `stopped` and `not-run` mean) is in
 * readme-blocks.ts; readme-walkthrough-runner.ts runs the blocks.
 *
 * The README names fixed ports (8080, 8090, 9464): the run goes into a network namespace of its own
 * (`unshare -rn`, with its own loopback) when the machine allows one, so a stack already running
 * elsewhere on the machine cannot collide with it; otherwise those ports must be free.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readmeBlocks } from './readme-blocks.ts';
import type { BlockResult } from './readme-walkthrough-runner.ts';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..');
const README = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const RUNNER = path.join(ROOT, 'test', 'readme', 'readme-walkthrough-runner.ts');

let checkout: string;
let outDir: string;
let results: BlockResult[] = [];
let after: { positions: { stdout: string }; account: { stdout: string } } | undefined;

/** A fresh clone as a reader has it after `npm install`: the project's files and node_modules, no data/. */
function freshCheckout(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokex-readme-'));
  for (const name of fs.readdirSync(ROOT)) {
    if (['data', '.git'].includes(name) || name.startsWith('readme-snippet-')) continue;
    fs.symlinkSync(path.join(ROOT, name), path.join(dir, name));
  }
  return dir;
}

function canIsolateNetwork(): boolean {
  const r = spawnSync('unshare', ['-rn', 'sh', '-c', 'ip link set lo up'], { stdio: 'ignore' });
  return r.status === 0;
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

function block(heading: string, n = 0): BlockResult {
  const found = results.filter((r) => r.heading === heading && r.ran);
  if (!found[n]) throw new Error(`no block ${n} run under ${heading} (ran: ${results.map((r) => r.heading).join(' | ')})`);
  return found[n];
}

beforeAll(async () => {
  checkout = freshCheckout();
  outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokex-readme-out-'));
  const resultsFile = path.join(outDir, 'results.json');
  const node = [process.execPath, '--import', 'tsx', RUNNER, checkout, resultsFile];
  let cmd: string;
  let args: string[];
  if (canIsolateNetwork()) {
    cmd = 'unshare';
    args = ['-rn', 'bash', '-c', 'ip link set lo up && exec "$@"', 'readme', ...node];
  } else {
    for (const port of [8080, 8090, 9464]) {
      if (!(await portFree(port))) throw new Error(`port ${port} is taken and this machine has no network namespaces (unshare -rn): the README's stack needs it`);
    }
    [cmd, ...args] = node;
  }
  const child = spawn(cmd, args, { cwd: ROOT, stdio: ['ignore', 'inherit', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d) => {
    err += String(d);
    process.stderr.write(d);
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (fs.existsSync(resultsFile)) ({ results, after } = JSON.parse(fs.readFileSync(resultsFile, 'utf8')));
  if (code !== 0) {
    const log = path.join(outDir, 'stack.log');
    const tail = fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n').slice(-40).join('\n') : '';
    throw new Error(`the walkthrough runner exited with ${code}: ${err.slice(-2000)}\n--- stack.log ---\n${tail}`);
  }
}, 1_500_000);

afterAll(() => {
  if (checkout) fs.rmSync(checkout, { recursive: true, force: true });
  if (outDir && !process.env.KEEP_README_RUN) fs.rmSync(outDir, { recursive: true, force: true });
});

describe('README walkthroughs, run as written', () => {
  it('lists every sh, ts and js block, each run or marked not-run with a reason the rule allows', () => {
    const blocks = readmeBlocks(README);
    expect(results.map((r) => r.line)).toEqual(blocks.map((b) => b.line));
    const notRun = blocks.filter((b) => b.mode === 'not-run').map((b) => b.heading);
    expect(notRun).toEqual(['## Quick start', '## CLI trading', '## API keys', '## Market data', '## Upgrading']);
    // Nothing a reader would have to set first: the tour's stream reads data/demo.json itself.
    expect(README).not.toMatch(/DEMO=\$\(realpath data\/demo\.json\)\` first/);
  });

  it('every block that runs exits 0', () => {
    const failed = results.filter((r) => r.ran && r.mode !== 'live' && r.exitCode !== 0);
    expect(failed.map((r) => `README.md:${r.line} exit ${r.exitCode}\n${r.code}\n--- stdout\n${r.stdout.slice(-3000)}\n--- stderr\n${r.stderr.slice(-3000)}`)).toEqual([]);
  });

  it('the tour stream: a subscribed frame with the book, then updates, until Ctrl-C', () => {
    const r = block('## Five-minute tour');
    const lines = r.stdout.split('\n').filter(Boolean);
    expect(lines[0], r.stderr).toMatch(/^\{"type":"subscribed","id":"b","channel":"depth","symbol":"BTC-USD","seq":\d+/);
    expect(lines.slice(1).some((l) => l.includes('"type":"update"'))).toBe(true);
    expect(r.stderr).not.toMatch(/TypeError|ERR_INVALID_ARG_TYPE/);
  });

  it('the signed shell requests answer for the demo keys', () => {
    expect(JSON.parse(block('## A signed request from the shell').stdout)).toMatchObject({ code: 200, data: { symbol: 'AAPL' } });
    // After the CLI walkthrough traded and withdrew: the start-up deposit is still what was deposited.
    expect(JSON.parse(block('## A signed perpetual request from the shell').stdout)).toMatchObject({ code: 0, msg: 'ok', data: { deposited: '10000' } });
  });

  it('the TypeScript and JavaScript snippets run on their own', () => {
    expect(block('## The same from TypeScript').stdout.trim()).toMatch(/^AAPL \d+\.\d+ \d+\.\d+ \d+ \d+(\.\d+)?$/);
    expect(block('## CCXT').stdout.trim()).toMatch(/^open canceled best bid [\d.]+ best ask [\d.]+$/);
    expect(block('## One Click: sign once, the API sends', 1).stdout.trim()).toMatch(/^mined \d+ 0x[0-9a-f]{64}$/);
  });

  it('the CLI walkthrough opens the long its stop-loss protects, amends a resting bid and prints amounts a person reads', () => {
    const r = block('## CLI trading');
    const out = r.stdout;
    expect(out).toMatch(/^mUSD available \d+\.\d\d, locked \d+\.\d\d$/m);
    expect(out).toMatch(/^BTC-USD\s+LONG\s+0\.002\s/m);
    expect(out).toMatch(/^type\s+STOP_MARKET$/m);
    expect(out).toMatch(/^status\s+UNTRIGGERED$/m);
    expect(r.stderr).not.toContain('51016');
    // The amendment's answer: the new price and size, and its own updatedAt, after the placement.
    const lines = out.split('\n');
    const at = lines.findIndex((l) => /^price\s+94000\.00$/.test(l));
    expect(at).toBeGreaterThan(0);
    const answer = lines.slice(at - 8, at + 30);
    const time = (k: string) => Date.parse(answer.find((l) => l.startsWith(`${k} `))!.split(/\s+/)[1]);
    expect(answer.find((l) => l.startsWith('size '))).toMatch(/^size\s+0\.002$/);
    expect(time('updatedAt')).toBeGreaterThan(time('createdAt'));
    // Tables and answers show ISO times, never Unix milliseconds.
    expect(out).not.toMatch(/^(createdAt|updatedAt)\s+\d{13}$/m);
  });

  it('the CLI stream runs until Ctrl-C', () => {
    const r = block('## CLI trading', 1);
    expect(r.stdout).toContain('BTC-USD  seq ');
  });

  it('set-price pins and releases, saying what the price does next', () => {
    const out = block('## Market data').stdout;
    expect(out).toContain('BTC pinned at 60000.00');
    expect(out).toContain('BTC released at 60000.00: the simulator walks on from there');
  });

  it('a way back: demo reset (with the stack stopped), then npm start seeds the demo afresh', () => {
    const r = block('## A way back');
    expect(r.stdout).toMatch(/^reset data: removed .*anvil-state\.json.*demo\.json.*tokex\.sqlite/m);
    expect(r.stackStarts).toBe(block('## Market data').stackStarts + 1);
    // The fresh demo: no position from the CLI walkthrough, and wallets[0]'s seeded 10,000 in the vault.
    expect(JSON.parse(after!.positions.stdout).rows).toEqual([]);
    expect(JSON.parse(after!.account.stdout)).toMatchObject({ balance: '10000', withdrawn: '0' });
  });
});
