/**
 * The start measures the chain's clock (issue 60 item 7; docs/operations.md, "The chain's clock"): a
 * real `tokex start` on an external anvil (RPC_URL) whose clock runs 220 s ahead of the wall clock, as
 * Hardhat's node did after a deployment burst. The stack deploys and every role reports, but the
 * banner's `roles` line names the executor blocked, with the chain's time, its block, the wall time
 * and the oracle's bound, and the executor logs it at error level: the stall is visible from the
 * first screen, not only once someone asks `/readyz` or `tokex status`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createPublicClient, http } from 'viem';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startAnvil, type AnvilHandle } from '../../src/chain/anvil-process.ts';
import { noteMadeDataDir } from '../support/made-data-dirs.ts';
import { roleProcessEnv, startRoleProcess, type RoleProcess } from '../support/role-process.ts';

const AHEAD_S = 220;
let anvil: AnvilHandle;
let stack: RoleProcess | undefined;
let startedAt: number;

beforeAll(async () => {
  anvil = await startAnvil({ port: 0 });
  const c = createPublicClient({ transport: http(anvil.rpcUrl) });
  // Every block from here on is stamped 220 s after the wall clock (anvil keeps the offset).
  await c.request({ method: 'evm_increaseTime' as never, params: [AHEAD_S] as never });
  await c.request({ method: 'evm_mine' as never, params: [] as never });
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokex-clock-banner-'));
  noteMadeDataDir(dataDir);
  startedAt = Date.now();
  stack = await startRoleProcess('all', { ...roleProcessEnv(dataDir, anvil.rpcUrl), LOG_LEVEL: 'error', STATUS_PUBLISH_MS: '250' }, 'tokex start (chain 220 s ahead)');
}, 240_000);

afterAll(async () => {
  await stack?.kill('SIGTERM');
  await anvil?.stop();
});

it("names the executor blocked on the banner's roles line, with both times, the block and the oracle's bound, and logs it", async () => {
  const out = stack!.output();
  const line = out.split('\n').find((l) => l.startsWith('  roles '));
  expect(line, out.slice(-3000)).toBeDefined();
  const m = /^ {2}roles {6}not fresh yet: executor blocked: chain clock (\d+) s ahead \(chain (\S+) at block (\d+), wall (\S+)\); (.*) \(npx tokex status\)$/.exec(line!);
  expect(m, line).not.toBeNull();
  const [skewS, chainIso, block, wallIso, bound] = [Number(m![1]), m![2]!, BigInt(m![3]!), m![4]!, m![5]!];
  expect(bound).toBe("stock fills are refused past the oracle's 180 s age (maxAge); the executor allows at most 165 s ahead: the oracle's age less its 15 s margin");
  // The chain's time is that block's own stamp; the wall time is this host's clock during the start.
  const stamp = (await createPublicClient({ transport: http(anvil.rpcUrl) }).getBlock({ blockNumber: block })).timestamp;
  expect(Date.parse(chainIso)).toBe(Number(stamp) * 1000);
  expect(Date.parse(wallIso)).toBeGreaterThanOrEqual(startedAt);
  expect(Date.parse(wallIso)).toBeLessThanOrEqual(Date.now());
  expect(skewS).toBe(Math.round((Date.parse(chainIso) - Date.parse(wallIso)) / 1000));
  // At most the 220 s the node adds (less the age of the latest block at the read: anvil mines only
  // on a transaction), and past the 165 s the executor allows.
  expect(skewS).toBeGreaterThan(165);
  expect(skewS).toBeLessThanOrEqual(AHEAD_S + 1);
  // Only the executor: every other role came up fresh.
  expect(line!.split(': ')[1]).toBe('executor blocked');
  // The executor's own error line says the same.
  expect(out).toMatch(/chain clock: chain clock \d+ s ahead \(chain \S+ at block \d+, wall \S+\); stock fills are refused past the oracle's 180 s age/);
});
