/**
 * How the trading commands print: human tables by default, `--json` for machines, and a progress
 * line while a command waits (on a terminal only; never mixed into JSON on stdout).
 */
import fs from 'node:fs';
import path from 'node:path';
import { formatDisplayAmount } from '@tokex/contract';
import { ValidationError } from '../errors/app-error.ts';

export interface OutputOptions {
  json?: boolean;
}

/** A time field of an answer (`createdAt`, `updatedAt`, `ts`, `timestamp`, …): the perpetual API answers Unix ms. */
const TIME_KEY = /(?:At|Time|^ts|^time|[tT]imestamp)$/;

/** Unix ms from 2001 on as an ISO time, or undefined (a block number, seconds, anything else). */
function isoTime(v: unknown): string | undefined {
  if (typeof v !== 'number' && !(typeof v === 'string' && /^\d+$/.test(v))) return undefined;
  const ms = Number(v);
  return ms >= 1e12 && ms < 1e14 ? new Date(ms).toISOString() : undefined;
}

/**
 * One value as a table or field shows it: ms timestamps of time fields as ISO times (as the stock
 * tables print them), objects as JSON (their own time fields ISO as well, e.g. an order's `fills`),
 * nothing as `-`.
 */
export function cellText(key: string, v: unknown): string {
  if (v === null || v === undefined) return '-';
  if (TIME_KEY.test(key)) {
    const iso = isoTime(v);
    if (iso !== undefined) return iso;
  }
  if (typeof v === 'object') return JSON.stringify(v, (k, x) => (k !== '' && TIME_KEY.test(k) ? (isoTime(x) ?? x) : x));
  return String(v);
}

/**
 * Rows as an aligned text table with a header row; columns are the keys of the first row unless
 * given. No rows: `(none)`, under the header when the columns are given (so an empty
 * `perp positions` still says what it would list).
 */
export function table(rows: ReadonlyArray<Record<string, unknown>>, columns?: string[]): string {
  if (rows.length === 0 && columns === undefined) return '(none)';
  const cols = columns ?? Object.keys(rows[0]);
  const text = rows.map((r) => cols.map((c) => cellText(c, r[c])));
  const widths = cols.map((c, i) => Math.max(c.length, ...text.map((t) => t[i].length)));
  const line = (values: string[]) => values.map((v, i) => v.padEnd(widths[i])).join('  ').trimEnd();
  return [line(cols), line(widths.map((w) => '-'.repeat(w))), ...(text.length > 0 ? text.map(line) : ['(none)'])].join('\n');
}

/** An object as `key  value` lines. */
export function fields(obj: Record<string, unknown>): string {
  const width = Math.max(...Object.keys(obj).map((k) => k.length));
  return Object.entries(obj)
    .map(([k, v]) => `${k.padEnd(width)}  ${cellText(k, v)}`)
    .join('\n');
}

/**
 * An exact amount of `token` (a decimal string of the API) as a person reads it: the token's
 * display precision, truncated toward zero (@tokex/contract DISPLAY_PRECISION). `--json` keeps
 * the exact amounts.
 */
export function amount(v: unknown, token: string): unknown {
  return typeof v === 'string' ? formatDisplayAmount(v, token) : v;
}

/** `obj` with the named fields shown at `token`'s display precision. */
export function amounts<T extends Record<string, unknown>>(obj: T, token: string, keys: readonly string[]): T {
  const out: Record<string, unknown> = { ...obj };
  for (const k of keys) if (k in out) out[k] = amount(out[k], token);
  return out as T;
}

export function print(o: OutputOptions, value: unknown, human: () => string): void {
  process.stdout.write(`${o.json ? JSON.stringify(value, null, 2) : human()}\n`);
}

/**
 * Runs `wait` (an SDK flow that polls) with a spinner and the latest state it reported on stderr,
 * when stderr is a terminal; the line is cleared when the wait ends either way.
 */
export async function withProgress<T>(label: string, wait: (onWait: (state: string) => void) => Promise<T>): Promise<T> {
  const frames = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
  const tty = process.stderr.isTTY === true;
  let i = 0;
  const onWait = (state: string) => {
    if (tty) process.stderr.write(`\r${frames[i++ % frames.length]} ${label}: ${state}   `);
  };
  try {
    return await wait(onWait);
  } finally {
    if (tty) process.stderr.write('\r\x1b[K');
  }
}

/** demo.json of the data directory (`DATA_DIR`, default ./data): where the demo stack's URLs and keys are. */
export function readDemo(dataDir = process.env.DATA_DIR ?? 'data'): any {
  const file = path.join(dataDir, 'demo.json');
  if (!fs.existsSync(file)) throw new ValidationError('DATA_DIR', `no ${file}: start the stack (npm start) or give --url, --api-key and --api-secret`);
  return JSON.parse(fs.readFileSync(file, 'utf8'));
}
