/**
 * How the trading commands print: human tables by default, `--json` for machines, and a progress
 * line while a command waits (on a terminal only; never mixed into JSON on stdout).
 */
import fs from 'node:fs';
import path from 'node:path';

export interface OutputOptions {
  json?: boolean;
}

/** Rows as an aligned text table; columns are the keys of the first row unless given. */
export function table(rows: ReadonlyArray<Record<string, unknown>>, columns?: string[]): string {
  if (rows.length === 0) return '(none)';
  const cols = columns ?? Object.keys(rows[0]);
  const cell = (v: unknown) => (v === null || v === undefined ? '-' : typeof v === 'object' ? JSON.stringify(v) : String(v));
  const widths = cols.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (values: string[]) => values.map((v, i) => v.padEnd(widths[i])).join('  ').trimEnd();
  return [line(cols), line(widths.map((w) => '-'.repeat(w))), ...rows.map((r) => line(cols.map((c) => cell(r[c]))))].join('\n');
}

/** An object as `key  value` lines. */
export function fields(obj: Record<string, unknown>): string {
  const width = Math.max(...Object.keys(obj).map((k) => k.length));
  return Object.entries(obj)
    .map(([k, v]) => `${k.padEnd(width)}  ${v === null || v === undefined ? '-' : typeof v === 'object' ? JSON.stringify(v) : String(v)}`)
    .join('\n');
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
  if (!fs.existsSync(file)) throw new Error(`no ${file}: start the stack (npm start) or give --url, --api-key and --api-secret`);
  return JSON.parse(fs.readFileSync(file, 'utf8'));
}
