/**
 * `tokex status` (src/cli/status-command.ts, docs/operations.md) as an operator runs it, the real
 * CLI in a process of its own: against a running stack every role fresh and exit code 0; against
 * the same stack stopped, every lease released, a line saying so and exit code 1; against a place
 * with no stack, or an API that does not answer, one clear line and exit code 2.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { STATUS_ROLES } from '../support/role-process.ts';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';

let t: TestStack;
let stopped = false;

beforeAll(async () => {
  t = await startTestStack({ STATUS_PUBLISH_MS: '200' });
});
afterAll(async () => {
  if (!stopped) await t?.stop();
});

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function status(args: string[], env: NodeJS.ProcessEnv): Promise<Run> {
  const full: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'silent', ...env };
  delete full.DATABASE_URL;
  return new Promise((resolve) => {
    execFile(process.execPath, ['bin/tokex.mjs', 'status', ...args], { env: full }, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

it('reports every role of a running stack fresh with its lease holder, and exits 0', async () => {
  let run: Run;
  for (let i = 0; ; i++) {
    run = await status(['--json'], { DATA_DIR: t.dataDir });
    if (run.code === 0) break;
    if (i > 60) throw new Error(`never all fresh: ${run.stdout}${run.stderr}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  const report = JSON.parse(run.stdout);
  expect(report.ok).toBe(true);
  expect(report.roles.map((r: { role: string; state: string; lease: string }) => [r.role, r.state, r.lease])).toEqual(STATUS_ROLES.map((role) => [role, 'fresh', 'held']));
  // The holder is the lease's, this process (the test runs the stack).
  for (const r of report.roles) expect(r.holder).toMatch(new RegExp(`^${os.hostname()}:${process.pid}:[0-9a-f]{8}$`));
  const human = await status([], { DATA_DIR: t.dataDir });
  expect(human.code).toBe(0);
  expect(human.stdout).toMatch(/^role\s+state\s+last progress\s+age\s+lease\s+holder\s+figures$/m);
  expect(human.stdout).toContain('all 7 roles fresh (stale after 15 s)');
});

it('says a stopped stack is stopped and exits 1', async () => {
  await t.stop();
  stopped = true;
  const run = await status([], { DATA_DIR: t.dataDir });
  expect(run.code).toBe(1);
  expect(run.stdout).toContain('the stack is stopped: every role released its lease');
  expect(run.stdout).toMatch(/^marketdata\s+stale\s+\S+\s+[\d.]+ (s|min)\s+released\s+\(released\)/m);
});

it('answers one clear line and exit code 2 where there is no stack', async () => {
  const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'tokex-nostack-'));
  const none = await status([], { DATA_DIR: empty });
  expect(none).toMatchObject({ code: 2, stdout: '' });
  expect(none.stderr).toBe(`error: no tokex data in ${empty}: the stack has never run there (start it with npm start, or set DATA_DIR / DATABASE_URL, or give --url)\n`);
  expect(fs.readdirSync(empty)).toEqual([]);

  // A port nobody listens on.
  const port = await new Promise<number>((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const p = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(p));
    });
  });
  const away = await status(['--url', `http://127.0.0.1:${port}`], { DATA_DIR: empty });
  expect(away.code).toBe(2);
  expect(away.stderr).toBe(`error: cannot reach http://127.0.0.1:${port}/readyz (ECONNREFUSED): is the stack running there?\n`);
});
