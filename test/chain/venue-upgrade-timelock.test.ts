/**
 * An upgrade in place through the venue's timelock with a delay (docs/upgrades.md, "Upgrades through
 * the timelock"), on a real anvil: the venue is handed over to its timelock with a one-hour delay;
 * the first `applyUpgrade` deploys the new implementation and schedules its installation, answering
 * `pending` with the exact time it becomes executable, while the proxy keeps its implementation; a
 * run before that time sends nothing and schedules nothing twice; once the chain's time has passed
 * the delay, a run executes the same operation and the record says the new implementation. The
 * same through `tokex upgrade --apply` against the chain as RPC_URL: it prints the ready time and
 * exits 0, a run before it changes nothing, and a run after it applies the upgrade. A start with
 * RPC_URL and AUTO_UPGRADE=on schedules it and refuses naming the time, until the time has passed.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parseAbiItem, type Address, type Hex } from 'viem';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { stockRouterAbi, venueTimelockAbi } from '../../src/chain/abi/generated/index.ts';
import { OPERATOR_ACCOUNT } from '../../src/chain/anvil-accounts.ts';
import { readDeploymentRecord, writeDeploymentRecord, type DeploymentRecord } from '../../src/chain/deployment-file.ts';
import { handOverToTimelock } from '../../src/chain/owner-actions.ts';
import { buildCodeHash } from '../../src/chain/venue-code.ts';
import { layoutManifestPath, recordDeployedLayouts } from '../../src/chain/upgrade-layout-check.ts';
import { applyUpgrade, IMPLEMENTATION_SLOT, implementationOf } from '../../src/chain/venue-upgrade.ts';
import { startChain } from '../../src/app/chain-wiring.ts';
import { createStopList } from '../../src/app/stop-list.ts';
import { loadConfig } from '../../src/config/app-config.ts';
import { APP_VERSION } from '../../src/config/build-info.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { DEMO_SYMBOLS } from '../../src/marketdata/symbol-catalog.ts';
import { startChainFixture, type ChainFixture } from '../support/chain-fixture.ts';

const run = promisify(execFile);
const DELAY = 3600;
const OLDER_RELEASE = '0.2.0-alpha.1';
const callScheduled = parseAbiItem('event CallScheduled(bytes32 indexed id, uint256 indexed index, address target, uint256 value, bytes data, bytes32 predecessor, uint256 delay)');
const callExecuted = parseAbiItem('event CallExecuted(bytes32 indexed id, uint256 indexed index, address target, uint256 value, bytes data)');

let f: ChainFixture;
let dir: string;
let timelock: Address;
/** The record after the hand-over: every stateful contract owned and upgraded by the timelock. */
let handedOver: DeploymentRecord;

beforeAll(async () => {
  f = await startChainFixture({ symbols: DEMO_SYMBOLS.slice(0, 1) });
  dir = mkdtempSync(path.join(os.tmpdir(), 'tokex-upgrade-timelock-'));
  const { chainId, ...stock } = f.deployment;
  handedOver = structuredClone({ chainId, venues: { stock } }) as DeploymentRecord;
  const r = await handOverToTimelock({ publicClient: f.publicClient, wallet: f.operator, record: handedOver, delaySeconds: DELAY });
  expect(r.pending).toEqual([]);
  expect(r.delaySet).toBe(DELAY);
  timelock = handedOver.venues.stock.timelock!.address as Address;
  expect(handedOver.venues.stock.timelock!.minDelay).toBe(DELAY);
}, 120_000);

afterAll(async () => {
  await f?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('an upgrade through a timelock with a delay', () => {
  let snap: Hex;
  beforeEach(async () => {
    snap = await f.snapshot();
  });
  afterEach(async () => {
    await f.revert(snap);
  });

  test('is scheduled with its exact ready time, changes nothing before it, and is executed by a run after it', async () => {
    const router = f.deployment.contracts.stockRouter;
    const oldImpl = f.deployment.code!.stockRouter.implementation!;
    expect(await f.publicClient.readContract({ address: router, abi: stockRouterAbi, functionName: 'upgrader' })).toBe(timelock);
    expect(await f.publicClient.readContract({ address: router, abi: stockRouterAbi, functionName: 'owner' })).toBe(timelock);
    expect(await f.publicClient.readContract({ address: timelock, abi: venueTimelockAbi, functionName: 'getMinDelay' })).toBe(BigInt(DELAY));

    // The record says the router runs an earlier release's code: one step, one timelock operation.
    const file = path.join(dir, 'timelock.json');
    const record = structuredClone(handedOver);
    record.venues.stock.release = OLDER_RELEASE;
    record.venues.stock.code!.stockRouter = { ...record.venues.stock.code!.stockRouter, codeHash: `0x${'55'.repeat(32)}` };
    await writeDeploymentRecord(file, record);
    const save = (r: DeploymentRecord) => writeDeploymentRecord(file, r);
    const slotBefore = await f.publicClient.getStorageAt({ address: router, slot: IMPLEMENTATION_SLOT });
    const fromBlock = (await f.publicClient.getBlockNumber()) + 1n;

    // 1. Deployed and scheduled, not installed.
    const first = await applyUpgrade({ publicClient: f.publicClient, upgraderWallet: f.operator, record, save });
    expect(first.done).toEqual([]);
    expect(first.pending).toHaveLength(1);
    const [p] = first.pending;
    expect(p.step).toMatchObject({ venue: 'stock', path: 'stockRouter', kind: 'implementation' });
    const scheduled = await f.publicClient.getLogs({ address: timelock, event: callScheduled, fromBlock });
    expect(scheduled).toHaveLength(1);
    const scheduledAt = Number((await f.publicClient.getBlock({ blockNumber: scheduled[0].blockNumber })).timestamp);
    expect(p.readyAt).toBe(scheduledAt + DELAY);
    expect(p.operationId).toBe(scheduled[0].args.id);
    expect(scheduled[0].args).toMatchObject({ target: router, delay: BigInt(DELAY) });
    expect(await f.publicClient.readContract({ address: timelock, abi: venueTimelockAbi, functionName: 'getTimestamp', args: [p.operationId] })).toBe(BigInt(p.readyAt));
    expect(await f.publicClient.getStorageAt({ address: router, slot: IMPLEMENTATION_SLOT })).toBe(slotBefore);
    expect((await implementationOf(f.publicClient, router)).toLowerCase()).toBe(oldImpl.toLowerCase());
    // The record notes the new implementation as `next`, keeps the installed one and the release.
    const halfway = (await readDeploymentRecord(file))!.record;
    const next = halfway.venues.stock.code!.stockRouter.next! as Address;
    expect(next).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect(next.toLowerCase()).not.toBe(oldImpl.toLowerCase());
    expect(halfway.venues.stock.code!.stockRouter.implementation!.toLowerCase()).toBe(oldImpl.toLowerCase());
    expect(halfway.venues.stock.release).toBe(OLDER_RELEASE);
    // The scheduled call is the router's upgradeToAndCall to exactly that implementation.
    expect(scheduled[0].args.data!.toLowerCase()).toContain(next.slice(2).toLowerCase());

    // 2. Before the ready time: nothing is sent, the same operation is answered.
    const nonce = await f.publicClient.getTransactionCount({ address: f.operator.account.address });
    const second = await applyUpgrade({ publicClient: f.publicClient, upgraderWallet: f.operator, record: halfway, save });
    expect(second.done).toEqual([]);
    expect(second.pending.map((w) => ({ readyAt: w.readyAt, operationId: w.operationId, path: w.step.path }))).toEqual([{ readyAt: p.readyAt, operationId: p.operationId, path: 'stockRouter' }]);
    expect(await f.publicClient.getTransactionCount({ address: f.operator.account.address })).toBe(nonce);
    expect(await f.publicClient.getLogs({ address: timelock, event: callScheduled, fromBlock })).toHaveLength(1);
    expect(await f.publicClient.getStorageAt({ address: router, slot: IMPLEMENTATION_SLOT })).toBe(slotBefore);
    expect((await readDeploymentRecord(file))!.record.venues.stock.release).toBe(OLDER_RELEASE);

    // One second short of the delay the operation is still waiting (OperationState.Waiting).
    const head = Number((await f.publicClient.getBlock()).timestamp);
    await f.testClient.setNextBlockTimestamp({ timestamp: BigInt(p.readyAt - 1) });
    await f.testClient.mine({ blocks: 1 });
    expect(Number((await f.publicClient.getBlock()).timestamp)).toBe(p.readyAt - 1);
    expect(p.readyAt - 1).toBeGreaterThan(head);
    expect(await f.publicClient.readContract({ address: timelock, abi: venueTimelockAbi, functionName: 'getOperationState', args: [p.operationId] })).toBe(1);

    // 3. The chain's time passes the delay: the run executes the operation and records it.
    await f.testClient.increaseTime({ seconds: 2 });
    await f.testClient.mine({ blocks: 1 });
    const third = await applyUpgrade({ publicClient: f.publicClient, upgraderWallet: f.operator, record: (await readDeploymentRecord(file))!.record, save });
    expect(third.pending).toEqual([]);
    expect(third.done.map((s) => s.path)).toEqual(['stockRouter']);
    expect((await implementationOf(f.publicClient, router)).toLowerCase()).toBe(next.toLowerCase());
    expect(await f.publicClient.readContract({ address: timelock, abi: venueTimelockAbi, functionName: 'getOperationState', args: [p.operationId] })).toBe(3);
    const executed = await f.publicClient.getLogs({ address: timelock, event: callExecuted, fromBlock });
    expect(executed.map((l) => l.args.id)).toEqual([p.operationId as Hex]);
    expect(await f.publicClient.getLogs({ address: timelock, event: callScheduled, fromBlock })).toHaveLength(1);
    const saved = (await readDeploymentRecord(file))!.record.venues.stock;
    expect(saved.release).toBe(APP_VERSION);
    expect(saved.code!.stockRouter).toEqual({ contract: 'StockRouter', implementation: next, codeHash: buildCodeHash('StockRouter') });
    // The timelock is still the upgrader, and the upgraded router still works behind the proxy.
    expect(await f.publicClient.readContract({ address: router, abi: stockRouterAbi, functionName: 'upgrader' })).toBe(timelock);
    expect(await f.publicClient.readContract({ address: router, abi: stockRouterAbi, functionName: 'cashier' })).toBe(f.deployment.contracts.cashier);

    // 4. Nothing left.
    const fourth = await applyUpgrade({ publicClient: f.publicClient, upgraderWallet: f.operator, record: (await readDeploymentRecord(file))!.record, save });
    expect(fourth).toMatchObject({ done: [], pending: [] });
  }, 120_000);

  /**
   * A data directory whose record says the router runs older code (`older` as its code hash, an
   * earlier release), its deployed layouts noted beside the record, the router's also under `older`.
   */
  async function stageOlderRouter(dataDir: string, older: Hex): Promise<string> {
    const file = path.join(dataDir, 'deployments', `${f.chainId}.json`);
    const current = structuredClone(handedOver);
    await writeDeploymentRecord(file, current);
    recordDeployedLayouts(current, file);
    const manifest = JSON.parse(readFileSync(layoutManifestPath(file), 'utf8')) as Record<string, unknown>;
    manifest[older] = manifest[buildCodeHash('StockRouter')];
    writeFileSync(layoutManifestPath(file), JSON.stringify(manifest));
    const record = structuredClone(handedOver);
    record.venues.stock.release = OLDER_RELEASE;
    record.venues.stock.code!.stockRouter = { ...record.venues.stock.code!.stockRouter, codeHash: older };
    await writeDeploymentRecord(file, record);
    return file;
  }

  test('tokex upgrade --apply prints the ready time and exits 0; a run after it applies the upgrade', async () => {
    const router = f.deployment.contracts.stockRouter;
    const oldImpl = f.deployment.code!.stockRouter.implementation!;
    const dataDir = mkdtempSync(path.join(dir, 'data-'));
    const file = await stageOlderRouter(dataDir, `0x${'66'.repeat(32)}`);

    const env = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      DATA_DIR: dataDir,
      RPC_URL: f.rpcUrl,
      CHAIN_ID: String(f.chainId),
      OPERATOR_PRIVATE_KEY: OPERATOR_ACCOUNT.privateKey,
      LOG_LEVEL: 'silent',
      UPGRADE_LOG_LEVEL: 'error',
    };
    const cli = async () => {
      try {
        const { stdout, stderr } = await run(process.execPath, ['bin/tokex.mjs', 'upgrade', '--apply'], { env, timeout: 120_000 });
        return { code: 0, stdout, stderr };
      } catch (err) {
        const e = err as { code?: number; stdout?: string; stderr?: string };
        return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
      }
    };
    const fromBlock = (await f.publicClient.getBlockNumber()) + 1n;

    const first = await cli();
    expect(first.code, `${first.stdout}\n${first.stderr}`).toBe(0);
    const scheduled = await f.publicClient.getLogs({ address: timelock, event: callScheduled, fromBlock });
    expect(scheduled).toHaveLength(1);
    const readyAt = Number((await f.publicClient.getBlock({ blockNumber: scheduled[0].blockNumber })).timestamp) + DELAY;
    const at = new Date(readyAt * 1000).toISOString();
    expect(first.stdout).toMatch(new RegExp(`^contracts: stock stockRouter: upgrade of StockRouter to 0x[0-9a-fA-F]{40} scheduled in the timelock, executable at ${at}; run tokex upgrade --apply again then$`, 'm'));
    expect(first.stdout).toContain(`contracts: 0 change(s) made; 1 upgrade(s) scheduled in the timelock, executable at ${at}: run tokex upgrade --apply again then`);
    expect((await implementationOf(f.publicClient, router)).toLowerCase()).toBe(oldImpl.toLowerCase());
    const halfway = (await readDeploymentRecord(file))!.record.venues.stock;
    expect(halfway.release).toBe(OLDER_RELEASE);
    const next = halfway.code!.stockRouter.next!;

    // Before the ready time: the same answer, nothing scheduled twice, nothing installed.
    const early = await cli();
    expect(early.code, `${early.stdout}\n${early.stderr}`).toBe(0);
    expect(early.stdout).toContain(`1 upgrade(s) scheduled in the timelock, executable at ${at}`);
    expect(await f.publicClient.getLogs({ address: timelock, event: callScheduled, fromBlock })).toHaveLength(1);
    expect((await implementationOf(f.publicClient, router)).toLowerCase()).toBe(oldImpl.toLowerCase());

    await f.testClient.increaseTime({ seconds: DELAY + 1 });
    await f.testClient.mine({ blocks: 1 });
    const later = await cli();
    expect(later.code, `${later.stdout}\n${later.stderr}`).toBe(0);
    expect(later.stdout).toContain(`contracts: stock stockRouter: StockRouter upgraded to ${next}`);
    expect(later.stdout).toContain(`contracts: 1 change(s) made; the record (${file}) says release ${APP_VERSION}`);
    expect((await implementationOf(f.publicClient, router)).toLowerCase()).toBe(next.toLowerCase());
    const saved = (await readDeploymentRecord(file))!.record.venues.stock;
    expect(saved.release).toBe(APP_VERSION);
    expect(saved.code!.stockRouter).toEqual({ contract: 'StockRouter', implementation: next, codeHash: buildCodeHash('StockRouter') });
  }, 300_000);

  test('a start with RPC_URL (AUTO_UPGRADE=on) schedules the upgrade and refuses naming the ready time until it has passed', async () => {
    const router = f.deployment.contracts.stockRouter;
    const oldImpl = f.deployment.code!.stockRouter.implementation!;
    const dataDir = mkdtempSync(path.join(dir, 'start-'));
    const file = await stageOlderRouter(dataDir, `0x${'77'.repeat(32)}`);
    const config = loadConfig({ DATA_DIR: dataDir, RPC_URL: f.rpcUrl, CHAIN_ID: String(f.chainId), OPERATOR_PRIVATE_KEY: OPERATOR_ACCOUNT.privateKey, AUTO_UPGRADE: 'on' });
    expect(config.timelockDelayS).toBe(172_800);
    const logger = createLogger({ name: 'upgrade-timelock-test', level: 'silent' });
    const start = async () => {
      const stops = createStopList(logger);
      try {
        return await startChain({ config, logger, stops, allInOneProcess: true, venues: () => [] });
      } finally {
        await stops.stopAll();
      }
    };
    const fromBlock = (await f.publicClient.getBlockNumber()) + 1n;

    let refusal = '';
    await start().then(
      () => (refusal = 'started'),
      (err: Error) => (refusal = err.message),
    );
    const scheduled = await f.publicClient.getLogs({ address: timelock, event: callScheduled, fromBlock });
    expect(scheduled).toHaveLength(1);
    const at = new Date((Number((await f.publicClient.getBlock({ blockNumber: scheduled[0].blockNumber })).timestamp) + DELAY) * 1000).toISOString();
    expect(refusal).toBe(`the contracts' upgrade to tokex ${APP_VERSION} is scheduled in the venues' timelock, executable at ${at} (1 contract(s)); start again, or run \`tokex upgrade --apply\`, after that time`);
    expect((await implementationOf(f.publicClient, router)).toLowerCase()).toBe(oldImpl.toLowerCase());

    // Again before the time: the same refusal, nothing scheduled twice.
    await expect(start()).rejects.toThrow(`executable at ${at} (1 contract(s))`);
    expect(await f.publicClient.getLogs({ address: timelock, event: callScheduled, fromBlock })).toHaveLength(1);

    await f.testClient.increaseTime({ seconds: DELAY + 1 });
    await f.testClient.mine({ blocks: 1 });
    const wiring = await start();
    const next = (await readDeploymentRecord(file))!.record.venues.stock.code!.stockRouter;
    expect(wiring.upgradeNotes).toEqual([`contracts upgraded in place to ${APP_VERSION} (1 change(s); the log has each step)`]);
    expect(next.codeHash).toBe(buildCodeHash('StockRouter'));
    expect((await implementationOf(f.publicClient, router)).toLowerCase()).toBe(next.implementation!.toLowerCase());
    expect(next.implementation!.toLowerCase()).not.toBe(oldImpl.toLowerCase());
  }, 120_000);
});
