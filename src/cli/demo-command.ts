/**
 * `tokex demo reset`: the embedded demo back to its seeded state (README "A way back"), without
 * deleting `data/` by hand. It removes what the embedded stack wrote in its data directory (the
 * anvil chain's state, the SQLite database, the deployment record, the master key, the sandbox's
 * token and clock and demo.json),
 * so the next `npm start` deploys, seeds and funds everything afresh: prices on their seeded path
 * (no pin, no crash played with `set-price`), the demo wallets' balances, no orders or positions,
 * new demo API keys.
 *
 * It is safe by refusing rather than guessing: only a demo data directory (demo.json present) of
 * the embedded chain and SQLite (no RPC_URL, no DATABASE_URL), and never while the stack that wrote
 * it answers (its APIs or its anvil): stop `npm start` (Ctrl-C) first. Files it does not know are
 * left where they are.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Command } from 'commander';
import { ValidationError } from '../errors/app-error.ts';

/** What an embedded stack writes in DATA_DIR: these and only these are removed. */
const DEMO_ENTRIES = [/^anvil-state\.json$/, /^demo\.json$/, /^deployments$/, /^tokex\.sqlite(-wal|-shm|-journal)?$/, /^perp-history\.sqlite(-wal|-shm|-journal)?$/, /^master\.key(\.previous)?$/, /^sandbox\.token$/, /^sandbox-clock\.json$/, /^sandbox-seed(\.partial)?$/, /^sandbox-snapshots$/];

export interface DemoResetResult {
  dataDir: string;
  removed: string[];
  kept: string[];
}

/** Whether something answers at `url` within `timeoutMs` (any HTTP answer counts). */
async function answers(url: string, init: RequestInit = {}, timeoutMs = 1500): Promise<boolean> {
  try {
    await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    return true;
  } catch {
    return false;
  }
}

/** The URLs of demo.json that answer: the stack (or its chain) is running. */
async function runningParts(demo: { stock?: { baseUrl?: string }; perp?: { baseUrl?: string }; rpcUrl?: string }): Promise<string[]> {
  const probes: Array<[string, Promise<boolean>]> = [];
  if (demo.stock?.baseUrl) probes.push([demo.stock.baseUrl, answers(new URL('/healthz', demo.stock.baseUrl).href)]);
  if (demo.perp?.baseUrl) probes.push([demo.perp.baseUrl, answers(new URL('/healthz', demo.perp.baseUrl).href)]);
  if (demo.rpcUrl) {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] });
    probes.push([demo.rpcUrl, answers(demo.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body })]);
  }
  const up = await Promise.all(probes.map(async ([url, p]) => ((await p) ? url : undefined)));
  return up.filter((u): u is string => u !== undefined);
}

/** Removes the embedded demo's state from `dataDir` (see the module comment for what it refuses). */
export async function resetDemo(dataDir: string, env: NodeJS.ProcessEnv = process.env): Promise<DemoResetResult> {
  if (env.RPC_URL) throw new ValidationError('RPC_URL', 'set: the demo reset is for the embedded chain only (a chain of your own is not reset by deleting files)');
  if (env.DATABASE_URL) throw new ValidationError('DATABASE_URL', 'set: the demo reset is for the embedded SQLite database only');
  if (!fs.existsSync(dataDir)) return { dataDir, removed: [], kept: [] };
  const demoFile = path.join(dataDir, 'demo.json');
  if (!fs.existsSync(demoFile)) {
    throw new ValidationError('DATA_DIR', `${dataDir} has no demo.json: not the embedded demo's data directory, nothing removed`);
  }
  let demo: Parameters<typeof runningParts>[0] = {};
  try {
    demo = JSON.parse(fs.readFileSync(demoFile, 'utf8'));
  } catch {
    // An unreadable demo.json names no URL to probe; the files are the demo's all the same.
  }
  const up = await runningParts(demo);
  if (up.length > 0) {
    throw new ValidationError('stack', `the demo stack is running (answering at ${up.join(', ')}): stop it first (Ctrl-C in the terminal of npm start), then reset`);
  }
  const removed: string[] = [];
  const kept: string[] = [];
  for (const name of fs.readdirSync(dataDir).sort()) {
    if (DEMO_ENTRIES.some((re) => re.test(name))) {
      fs.rmSync(path.join(dataDir, name), { recursive: true, force: true });
      removed.push(name);
    } else kept.push(name);
  }
  return { dataDir, removed, kept };
}

export function demoCommand(): Command {
  const demo = new Command('demo').description('the embedded demo: `demo reset` returns it to its seeded state');
  demo
    .command('reset')
    .description('return the embedded demo to its seeded state: removes the chain, database, keys and demo.json npm start wrote in DATA_DIR (refused while the stack runs); the next npm start seeds it afresh')
    .option('--json', 'machine-readable output')
    .action(async (o: { json?: boolean }) => {
      const dataDir = process.env.DATA_DIR ?? 'data';
      const r = await resetDemo(dataDir);
      if (o.json) process.stdout.write(`${JSON.stringify(r)}\n`);
      else if (r.removed.length === 0) process.stdout.write(`${dataDir}: nothing to reset; npm start seeds a fresh demo\n`);
      else {
        process.stdout.write(`reset ${dataDir}: removed ${r.removed.join(', ')}\nthe next npm start deploys and seeds the demo afresh (new demo keys in demo.json)\n`);
        if (r.kept.length > 0) process.stdout.write(`left in place (not the demo's): ${r.kept.join(', ')}\n`);
      }
    });
  return demo;
}
