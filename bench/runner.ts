/**
 * The one bench runner: every suite of `npm run bench` goes through it. A suite starts what it
 * measures, loads it, measures CPU and latency with its baseline in the same run, and answers rows
 * of {figure, value, unit, baseline, ratio, target}; the runner prints them and writes them into
 * docs/performance.md between the bench:latest markers. A run of some suites (BENCH_ONLY) replaces
 * those suites' rows and leaves the others' rows with their own date, so the table always says
 * which figure comes from which run.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';

export interface Row {
  figure: string;
  value: number | string;
  unit: string;
  /** What the figure is measured against in the same run ("bare Fastify GET 15.2 µs"). */
  baseline?: string;
  ratio?: number;
  /** "≥ 0.5", "≤ 2.5", "report"… */
  target?: string;
  met?: boolean;
}

export interface SuiteContext {
  log(line: string): void;
  /** A numeric setting from the environment, or its default. */
  num(name: string, fallback: number): number;
}

export interface Suite {
  /** The BENCH_ONLY key. */
  key: string;
  name: string;
  /** Environment variables the suite needs; without them it is skipped, its earlier rows kept. */
  needs?: string[];
  run(ctx: SuiteContext): Promise<Row[]>;
}

export const DOC = path.join(path.dirname(new URL(import.meta.url).pathname), '..', 'docs', 'performance.md');
export const START = '<!-- bench:latest:start -->';
export const END = '<!-- bench:latest:end -->';

/** CPU (user + system, µs) and event-loop busy time (ms, when the child reports it) of a bench child so far: it answers `cpu` over IPC. */
export function childUsage(child: ChildProcess): Promise<{ us: number; activeMs: number }> {
  return new Promise((resolve) => {
    const on = (m: any) => {
      if (m?.cpu) {
        child.off('message', on);
        resolve({ us: m.cpu.user + m.cpu.system, activeMs: m.elu?.active ?? 0 });
      }
    };
    child.on('message', on);
    child.send('cpu');
  });
}

export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  cpuUsPerReq: number;
  errors: number;
}

/** One closed-loop autocannon round against a child, its CPU per request read around it. */
export async function measureLoad(child: ChildProcess, opts: autocannon.Options): Promise<LoadResult> {
  const u0 = await childUsage(child);
  const r = await autocannon(opts);
  const u1 = await childUsage(child);
  const requests = r.requests.total;
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, requests, cpuUsPerReq: (u1.us - u0.us) / Math.max(1, requests), errors: r.errors + r.non2xx };
}

const fmt = (v: number | string) => (typeof v === 'string' ? v : Math.abs(v) >= 100 ? Math.round(v).toLocaleString('en-US') : Number(v.toPrecision(3)).toString());
const cell = (s: string) => s.replace(/\|/g, '\\|');

/** A row as a line of the table: suite, figure, value, baseline, ratio, target, when and where it was measured. */
export function rowLine(key: string, r: Row, stamp: string): string {
  const target = r.target ? `${r.target}${r.met === undefined ? '' : r.met ? ', met' : ', **not met**'}` : '';
  const ratio = r.ratio === undefined ? '' : r.ratio.toFixed(r.ratio >= 10 ? 1 : 3);
  return `| ${key} | ${cell(r.figure)} | ${fmt(r.value)} ${r.unit} | ${cell(r.baseline ?? '')} | ${ratio} | ${target} | ${stamp} |`;
}

/** The table between the markers: the rows of `ran` replaced by `fresh`, the other rows kept, in the suites' order. */
export function mergeTable(doc: string, order: string[], ran: Set<string>, fresh: Map<string, string[]>, heading: string): string {
  const a = doc.indexOf(START);
  const b = doc.indexOf(END);
  if (a < 0 || b < a) throw new Error(`bench: ${DOC} has no ${START} … ${END} block`);
  const kept = new Map<string, string[]>();
  for (const line of doc.slice(a + START.length, b).split('\n')) {
    const key = /^\| ([a-z0-9-]+) \|/.exec(line)?.[1];
    // The header and its separator row (`| --- |`) are written anew below, never kept as a suite's.
    if (!key || key === 'suite' || /^-+$/.test(key) || ran.has(key)) continue;
    kept.set(key, [...(kept.get(key) ?? []), line]);
  }
  const keys = [...order, ...[...kept.keys()].filter((k) => !order.includes(k))];
  const lines = keys.flatMap((k) => fresh.get(k) ?? kept.get(k) ?? []);
  const table = [heading, '', '| suite | figure | value | baseline (same run) | ratio | target | measured |', '| --- | --- | ---: | --- | ---: | --- | --- |', ...lines];
  return `${doc.slice(0, a + START.length)}\n${table.join('\n')}\n${doc.slice(b)}`;
}

/** Runs the suites BENCH_ONLY names (a comma list; all when unset), prints each one's rows and writes the table. */
export async function runSuites(suites: Suite[], env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const only = env.BENCH_ONLY?.split(',').map((k) => k.trim()).filter(Boolean);
  const unknown = only?.filter((k) => !suites.some((s) => s.key === k)) ?? [];
  if (unknown.length > 0) throw new Error(`BENCH_ONLY: unknown ${unknown.join(', ')}; keys: ${suites.map((s) => s.key).join(', ')}`);
  const chosen = suites.filter((s) => !only || only.includes(s.key));
  const when = new Date().toISOString().slice(0, 16).replace('T', ' ');
  const stamp = `${when.slice(0, 10)}, ${os.availableParallelism()} cores, Node ${process.version}`;
  const ctx: SuiteContext = { log: (l) => console.log(`  ${l}`), num: (name, fallback) => (env[name] ? Number(env[name]) : fallback) };
  const fresh = new Map<string, string[]>();
  const failed: string[] = [];
  for (const s of chosen) {
    const missing = (s.needs ?? []).filter((n) => !env[n]);
    if (missing.length > 0) {
      console.log(`\n${s.key}: skipped (set ${missing.join(' and ')}); its earlier rows stay`);
      continue;
    }
    console.log(`\n${s.key}: ${s.name}`);
    const t0 = Date.now();
    try {
      const rows = await s.run(ctx);
      fresh.set(s.key, rows.map((r) => rowLine(s.key, r, stamp)));
      console.table(rows.map((r) => ({ figure: r.figure, value: `${fmt(r.value)} ${r.unit}`, baseline: r.baseline ?? '', ratio: r.ratio?.toFixed(3) ?? '', target: r.target ? `${r.target} ${r.met === undefined ? '' : r.met ? 'met' : 'NOT met'}` : '' })));
    } catch (e) {
      // A failed suite keeps its earlier rows; the heading says it failed.
      console.error(`${s.key} failed: ${(e as Error).stack ?? e}`);
      failed.push(`${s.key} (${String((e as Error).message ?? e).slice(0, 80)})`);
    }
    console.log(`  (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
  }
  if (fresh.size === 0 || env.BENCH_WRITE === 'off') return;
  const heading = `Last run ${when} UTC: ${[...fresh.keys()].join(', ')} on ${os.availableParallelism()} cores (load average ${os.loadavg()[0].toFixed(1)}), Node ${process.version}.${failed.length ? ` Failed, earlier rows kept: ${failed.join('; ')}.` : ''} Each row says when it was measured.`;
  fs.writeFileSync(DOC, mergeTable(fs.readFileSync(DOC, 'utf8'), suites.map((s) => s.key), new Set(fresh.keys()), fresh, heading));
  console.log(`\nwritten to ${path.relative(process.cwd(), DOC)} (${START})`);
}
