/**
 * A ReserveRegistry that a perp-engine-only process deploys beside an existing perpetual venue (a
 * record from before the registry) goes to the venue's timelock at once, as every other contract did
 * at the admin's start; it used to stay with the admin key until the admin's next start
 * (docs/security.md, "Owner and upgrader"). The real embedded stack, started twice on one data
 * directory: once whole, then as the perp engine alone.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { createPublicClient, getAddress, http, parseAbi, type Address } from 'viem';
import { afterAll, expect, test } from 'vitest';
import { startStack, type StackHandle } from '../../src/app/stack.ts';
import { loadConfig } from '../../src/config/app-config.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { until } from '../support/poll.ts';
import { startTestStack } from '../support/stock-stack.ts';

const ownable = parseAbi(['function owner() view returns (address)', 'function upgrader() view returns (address)']);
let perpOnly: StackHandle | undefined;
afterAll(async () => {
  await perpOnly?.stop();
});

test('the perp engine alone deploys a missing registry and hands it to the venue timelock at once', async () => {
  const first = await startTestStack();
  const dataDir = first.dataDir;
  await first.stop();

  const recordFile = path.join(dataDir, 'deployments', `${first.demo.chainId}.json`);
  const record = JSON.parse(fs.readFileSync(recordFile, 'utf8'));
  const perp = record.venues.perp;
  const before = getAddress(perp.contracts.reserveRegistry) as Address;
  const timelock = getAddress(perp.timelock.address) as Address;
  // A record from before the registry: the perp section without it.
  delete perp.contracts.reserveRegistry;
  if (perp.code) delete perp.code.reserveRegistry;
  fs.writeFileSync(recordFile, JSON.stringify(record, null, 2));

  const logs: string[] = [];
  const destination = new Writable({ write: (chunk, _e, cb) => void (logs.push(String(chunk)), cb()) });
  const config = loadConfig({ DATA_DIR: dataDir, STOCK_API_PORT: '0', PERP_API_PORT: '0', METRICS_PORT: 'off', HISTORY_DAYS: '2', LOG_LEVEL: 'info' });
  perpOnly = await startStack(config, { role: 'perp-engine', logger: createLogger({ level: 'info', destination }) });

  // The role deploys it while it starts its work: wait for the record to name the new one and the hand-over's line.
  const named = await until(
    async () => (logs.some((l) => l.includes('owner and upgrader of the venues')) ? (JSON.parse(fs.readFileSync(recordFile, 'utf8')).venues.perp.contracts.reserveRegistry as string | undefined) : undefined),
    (r) => r !== undefined,
    60_000,
  );
  const after = getAddress(named!) as Address;
  expect(after).not.toBe(before);
  const client = createPublicClient({ transport: http(perpOnly.rpcUrl) });
  expect(await client.readContract({ address: after, abi: ownable, functionName: 'owner' })).toBe(timelock);
  expect(await client.readContract({ address: after, abi: ownable, functionName: 'upgrader' })).toBe(timelock);
}, 240_000);
