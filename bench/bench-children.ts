/**
 * The benchmark server processes (bench-server.ts) as the benches start and stop them: forked with
 * tsx, ready when they say so over IPC, stopped by message (SIGKILL after 20 s).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { DemoFile } from '../src/app/demo-file.ts';
import type { BenchUser } from './one-click-bench.ts';

export interface Server {
  child: ChildProcess;
  url: string;
  demo?: DemoFile;
  users?: BenchUser[];
  unbound?: { apiKey: string; apiSecret: string };
  dataDir?: string;
  rpcUrl?: string;
}

export type ServerMode = 'bare' | 'stack' | 'api' | 'oneclick';

/**
 * A bench-server.ts in `mode`; with `tree`, that checkout's own, run from its directory so that its
 * tsconfig paths resolve there (bench/stock-ab-bench.ts compares two trees).
 */
export function startBenchServer(mode: ServerMode, env: Record<string, string> = {}, tree?: string): Promise<Server> {
  const script = tree === undefined ? new URL('./bench-server.ts', import.meta.url).pathname : path.join(tree, 'bench/bench-server.ts');
  const child = fork(script, [mode], {
    ...(tree === undefined ? {} : { cwd: tree }),
    // BENCH_NODE_FLAGS: V8 or Node flags for the servers only (some, such as
    // --no-allocation-site-pretenuring, are not allowed in NODE_OPTIONS).
    execArgv: ['--import', 'tsx', ...(process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean)],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    env: { ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'info', ...env },
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`${mode} server${tree === undefined ? '' : ` of ${tree}`} exited with ${code}`)));
    child.on('message', (m: any) => {
      if (m?.ready) resolve({ child, url: m.url, demo: m.demo, users: m.users, unbound: m.unbound, dataDir: m.dataDir, rpcUrl: m.rpcUrl });
    });
  });
}

/** Asks each server process to stop (SIGKILL after 20 s) and waits for it to exit. */
export function stopServers(servers: Server[]): Promise<unknown> {
  return Promise.all(
    servers.map((s) => {
      s.child.removeAllListeners('exit');
      const exited = new Promise((resolve) => s.child.once('exit', resolve));
      s.child.send('stop');
      const timer = setTimeout(() => s.child.kill('SIGKILL'), 20_000);
      return exited.finally(() => clearTimeout(timer));
    }),
  );
}

export const median = (xs: number[]): number => {
  const v = [...xs].sort((a, b) => a - b);
  return v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
};

/** CPU ms of process `pid` so far (user + system, from /proc; 10 ms resolution): anvil's or a bench child's. */
export function cpuMsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of the line, 12 and 13 after the command's name.
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}
