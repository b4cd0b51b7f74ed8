/**
 * `tokex demo reset` (README "A way back"): refused while the demo stack runs, then removes only
 * what the stack wrote in DATA_DIR, and the next start seeds the demo afresh (no pin left, new keys).
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokex-demo-reset-'));
let t: TestStack | undefined;

function tokex(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const { DATABASE_URL: _d, DATABASE_SCHEMA: _s, REDIS_URL: _r, RPC_URL: _u, ...base } = process.env;
  return new Promise((resolve) => {
    execFile(process.execPath, ['bin/tokex.mjs', ...args], { env: { ...base, DATA_DIR: dataDir, LOG_LEVEL: 'silent', ...env } }, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

afterAll(async () => {
  await t?.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('tokex demo reset', () => {
  it('refuses while the stack runs, removes only the demo files once stopped, and the next start is the seeded demo', async () => {
    t = await startTestStack({}, { dataDir });
    const firstKey = t.demo.stock.keys.readOnly.apiKey;
    expect((await tokex(['marketdata', 'set-price', '--symbol', 'BTC', '--price', '60000'])).stdout).toMatch(/^BTC pinned at 60000\.00/);

    const running = await tokex(['demo', 'reset']);
    expect(running.code).toBe(1);
    expect(running.stderr).toMatch(/^error: stack: the demo stack is running \(answering at http:\/\/127\.0\.0\.1:\d+, /);
    expect(running.stderr.split('\n').filter(Boolean)).toHaveLength(1);
    expect(fs.existsSync(path.join(dataDir, 'demo.json'))).toBe(true);

    await t.stop();
    t = undefined;
    fs.writeFileSync(path.join(dataDir, 'notes.txt'), 'mine');
    // Not for a chain or a database of one's own.
    expect((await tokex(['demo', 'reset'], { RPC_URL: 'http://127.0.0.1:1' })).stderr).toMatch(/^error: RPC_URL: set: the demo reset is for the embedded chain only/);
    expect((await tokex(['demo', 'reset'], { DATABASE_URL: 'postgres://x@127.0.0.1/x' })).stderr).toMatch(/^error: DATABASE_URL: set/);

    const reset = await tokex(['demo', 'reset']);
    expect([reset.code, reset.stderr]).toEqual([0, '']);
    expect(reset.stdout).toMatch(new RegExp(`^reset ${dataDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: removed anvil-state\\.json, demo\\.json, deployments, master\\.key, perp-history\\.sqlite, sandbox-seed, sandbox\\.token, tokex\\.sqlite`, 'm'));
    expect(reset.stdout).toContain('left in place (not the demo\'s): notes.txt');
    expect(fs.readdirSync(dataDir)).toEqual(['notes.txt']);

    // Twice is harmless; a directory that is not a demo's is refused.
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'tokex-not-demo-'));
    fs.writeFileSync(path.join(empty, 'tokex.sqlite'), '');
    const notDemo = await tokex(['demo', 'reset'], { DATA_DIR: empty });
    expect([notDemo.code, notDemo.stderr]).toEqual([1, `error: DATA_DIR: ${empty} has no demo.json: not the embedded demo's data directory, nothing removed\n`]);
    expect(fs.existsSync(path.join(empty, 'tokex.sqlite'))).toBe(true);
    fs.rmSync(empty, { recursive: true, force: true });

    t = await startTestStack({}, { dataDir });
    expect(t.demo.stock.keys.readOnly.apiKey).not.toBe(firstKey);
    expect((await tokex(['marketdata', 'set-price', '--symbol', 'BTC', '--release'])).stdout).toBe('BTC was not pinned: nothing to release\n');
    expect(await t.perpTrader!.get('positions')).toMatchObject({ rows: [] });
  }, 180_000);
});
