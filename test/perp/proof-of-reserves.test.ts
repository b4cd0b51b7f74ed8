/**
 * Proof of reserves (docs/proof-of-reserves.md) on a real anvil and real databases: the
 * ReserveRegistry's rules, the reserves task (built, stored, posted exactly once, solvency checked,
 * a crash between send and record resumed from the chain), the stored proof against the verifier
 * of examples/verify-reserves.ts, a deployment record without the registry completed; then the
 * embedded stack: the example run against it and `GET account/proof`'s refusal for an account not
 * in the tree.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { erc20Abi, parseUnits, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { PerpApiError, PerpClient, readPublishedLeaves } from '@tokex/sdk';
import { reserveRegistryAbi } from '../../src/chain/abi/generated/index.ts';
import { ensureReserveRegistry, ensureVaultEscapeHatch, type PerpDeployment, type PerpVenueDeployment } from '../../src/chain/deploy-perp-venue.ts';
import { marginVaultAbi } from '../../src/chain/abi/generated/index.ts';
import { GUARDIAN_ACCOUNT } from '../../src/chain/anvil-accounts.ts';
import { createTxSender } from '../../src/chain/tx-sender.ts';
import type { MarginSummary } from '../../src/perp/engine/engine-types.ts';
import { build, verify } from '../../src/perp/reserves/merkle-sum-tree.ts';
import { accountProof } from '../../src/perp/reserves/proof-service.ts';
import { getReserveEpoch, insertReserveEpoch, latestReserveEpoch } from '../../src/perp/store/reserves-store.ts';
import { snapshotLiabilities } from '../../src/perp/reserves/liabilities-snapshot.ts';
import { fundingTimeAt } from '../../src/perp/workers/funding-task.ts';
import { createReservesTask } from '../../src/perp/workers/reserves-task.ts';
import type { Db } from '../../src/storage/database.ts';
import { verifyProof } from '../../examples/verify-reserves.ts';
import { useChainFixture } from '../support/chain-fixture.ts';
import { deployPerpVenue, PERP_OPERATOR, perpOperatorWallet, registryLeaves } from '../support/perp-venue.ts';
import { confirm } from '../chain/chain-test-helpers.ts';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';
import { testDatabases, useFreshDatabase } from '../support/test-databases.ts';

const usdc = (v: string) => parseUnits(v, 6);
const INTERVAL = 60_000;
const T0 = fundingTimeAt(Date.parse('2026-01-05T10:00:30Z'), INTERVAL);

const A = '0x00000000000000000000000000000000000000a1';
const B = '0x00000000000000000000000000000000000000b2';
const C = '0x00000000000000000000000000000000000000c3';

/** The engine's reads the task uses, over a fixed book of accounts (equity may be negative). */
function engineOf(accounts: Record<string, { equity: bigint; pending?: bigint; deposited?: bigint; withdrawn?: bigint }>, seq = 7) {
  return {
    lastSeq: seq,
    lpValues: () => new Map<string, bigint>(),
    accountAddresses: () => Object.keys(accounts),
    marginSummary: (a: string) => {
      const x = accounts[a.toLowerCase()];
      return x ? ({ equity: x.equity, pendingWithdrawals: x.pending ?? 0n } as MarginSummary) : undefined;
    },
    vaultFlows: (a: string) => (accounts[a.toLowerCase()] ? { deposited: accounts[a.toLowerCase()].deposited ?? 0n, withdrawn: accounts[a.toLowerCase()].withdrawn ?? 0n } : undefined),
  };
}

function capture() {
  const lines: Array<{ level: string; fields: Record<string, unknown>; msg: string }> = [];
  const at = (level: string) => (fields: object, msg?: string) => void lines.push({ level, fields: fields as Record<string, unknown>, msg: msg ?? '' });
  return { lines, logger: { info: at('info'), warn: at('warn'), error: at('error') } };
}

describe('ReserveRegistry and the reserves task (anvil)', () => {
  let perp: PerpDeployment;
  const f = useChainFixture(async () => {
    perp = await deployPerpVenue(f);
  }, {}, 60_000);

  const registry = () => perp.contracts.reserveRegistry as Address;
  const read = <T>(functionName: 'latest' | 'epochCount', args?: never) =>
    f.publicClient.readContract({ address: registry(), abi: reserveRegistryAbi, functionName, ...(args ? { args } : {}) }) as Promise<T>;

  it('is deployed with the venue, the perp operator its only poster; it builds the root from the published leaves; epochs strictly increase', async () => {
    expect(registry()).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect(await f.publicClient.readContract({ address: registry(), abi: reserveRegistryAbi, functionName: 'isOperator', args: [PERP_OPERATOR.address] })).toBe(true);
    const op = perpOperatorWallet(f);
    const snap = snapshotLiabilities(engineOf({ [A]: { equity: 4n, deposited: 9n }, [B]: { equity: 3n, pending: 2n }, [C]: { equity: 1n, withdrawn: 5n } }));
    const leaves = registryLeaves(snap.leaves);
    type Leaves = typeof leaves;
    const post = (w: typeof op, epoch: bigint, ls: Leaves = leaves) =>
      f.publicClient.simulateContract({ account: w.account, address: registry(), abi: reserveRegistryAbi, functionName: 'postReservesWithLeaves', args: [epoch, 1n, ls] });
    await expect(post(f.operator, 5n)).rejects.toThrow(/NotOperator/);
    await expect(post(op, 0n)).rejects.toThrow(/EpochNotIncreasing/);
    await expect(post(op, 5n, [{ ...leaves[0]!, equity: 1n << 128n }, ...leaves.slice(1)])).rejects.toThrow(/ReservesValueOutOfRange/);
    // Only in account order, each account once: what lets the vault see an account has no leaf.
    await expect(post(op, 5n, [leaves[1]!, leaves[0]!, leaves[2]!])).rejects.toThrow(/LeavesNotSorted/);
    await expect(post(op, 5n, [leaves[0]!, leaves[0]!])).rejects.toThrow(/LeavesNotSorted/);
    // A root without its leaves is refused since 0.3.0: nobody could rebuild a proof from it.
    await expect(
      f.publicClient.readContract({ account: op.account, address: registry(), abi: reserveRegistryAbi, functionName: 'postReserves', args: [5n, snap.tree.root, snap.tree.total, 3n, 1n] }),
    ).rejects.toThrow(/LeavesRequired/);
    const { request } = await post(op, 5n);
    expect((await f.publicClient.waitForTransactionReceipt({ hash: await op.writeContract(request) })).status).toBe('success');
    await expect(post(op, 5n)).rejects.toThrow(/EpochNotIncreasing/);
    await expect(post(op, 4n)).rejects.toThrow(/EpochNotIncreasing/);
    // The chain's root is the off-chain builder's, to the hash.
    expect(await read('latest')).toEqual({ epoch: 5n, root: snap.tree.root, total: 10n, leafCount: 3n, timestamp: 1n });
    expect(await f.publicClient.readContract({ address: registry(), abi: reserveRegistryAbi, functionName: 'leavesPublished', args: [5n] })).toBe(true);
    await expect(f.publicClient.readContract({ address: registry(), abi: reserveRegistryAbi, functionName: 'rootOf', args: [6n] })).rejects.toThrow(/UnknownEpoch/);
    const logs = await f.publicClient.getContractEvents({ address: registry(), abi: reserveRegistryAbi, eventName: 'ReservesPosted', fromBlock: 0n });
    expect(logs.map((l) => l.args)).toEqual([{ epoch: 5n, root: snap.tree.root, total: 10n, leafCount: 3n, timestamp: 1n }]);
    // The leaves, as published, are every field of every leaf in the tree's order.
    expect(await readPublishedLeaves(f.publicClient, registry(), 5n)).toEqual(leaves);
    // An empty tree is a record too: root 0, total 0.
    await confirm(f, op.writeContract({ address: registry(), abi: reserveRegistryAbi, functionName: 'postReservesWithLeaves', args: [6n, 1n, []] }));
    expect(await read('latest')).toEqual({ epoch: 6n, root: `0x${'00'.repeat(32)}`, total: 0n, leafCount: 0n, timestamp: 1n });
  });

  it("points an upgraded vault's escape hatch at the venue's registry and names its guardian, once", async () => {
    const vaultRead = <T>(functionName: 'reserveRegistry' | 'guardian' | 'lastOperatorActivity') =>
      f.publicClient.readContract({ address: perp.contracts.marginVault, abi: marginVaultAbi, functionName }) as Promise<T>;
    // The deployment set the registry; a vault upgraded from before the hatch has another (none).
    expect(await vaultRead<Address>('reserveRegistry')).toBe(registry());
    expect(BigInt(await vaultRead<Address>('guardian'))).toBe(0n);
    const { reserveRegistry: _, ...withoutRegistry } = perp.contracts;
    const section: PerpVenueDeployment = { blockNumber: perp.blockNumber, deployedAt: perp.deployedAt, operator: perp.operator, contracts: withoutRegistry };
    const other = (await ensureReserveRegistry({ publicClient: f.publicClient, walletClient: f.operator, record: { chainId: f.chainId, venues: { perp: section } }, operators: [] })).reserveRegistry;
    const args = { publicClient: f.publicClient, walletClient: f.operator, deployment: perp, guardian: GUARDIAN_ACCOUNT.address };
    const before = (await f.publicClient.getBlock()).timestamp;
    expect(await ensureVaultEscapeHatch({ ...args, registry: other })).toEqual({ set: ['registry', 'guardian'] });
    expect(await vaultRead<Address>('reserveRegistry')).toBe(other);
    expect(await vaultRead<Address>('guardian')).toBe(GUARDIAN_ACCOUNT.address);
    // Setting the registry restarted the silence clock: its block's time, which on a busy machine
    // may be a second before the guardian's block (the latest).
    const activity = await vaultRead<bigint>('lastOperatorActivity');
    expect(activity).toBeGreaterThanOrEqual(before);
    expect(activity).toBeLessThanOrEqual((await f.publicClient.getBlock()).timestamp);
    expect(activity).toBeGreaterThan(0n);
    expect(await ensureVaultEscapeHatch({ ...args, registry: other })).toEqual({ set: [] });
    // A guardian the owner named stays; the registry follows the record.
    expect(await ensureVaultEscapeHatch({ ...args, registry: registry(), guardian: PERP_OPERATOR.address })).toEqual({ set: ['registry'] });
    expect(await vaultRead<Address>('guardian')).toBe(GUARDIAN_ACCOUNT.address);
  });

  it('deploys the registry beside a perp venue recorded without it, and grants the operator', async () => {
    const { reserveRegistry: _, ...older } = perp.contracts;
    const section: PerpVenueDeployment = { blockNumber: perp.blockNumber, deployedAt: perp.deployedAt, operator: perp.operator, contracts: older };
    const record = { chainId: f.chainId, venues: { perp: section } };
    const r = await ensureReserveRegistry({ publicClient: f.publicClient, walletClient: f.operator, record, operators: [PERP_OPERATOR.address] });
    expect(r.deployed).toBe(true);
    expect(r.reserveRegistry).not.toBe(perp.contracts.reserveRegistry);
    expect((record.venues.perp.contracts as Record<string, string>).reserveRegistry).toBe(r.reserveRegistry);
    expect(record.venues.perp.contracts.marginVault).toBe(perp.contracts.marginVault);
    expect(await f.publicClient.readContract({ address: r.reserveRegistry, abi: reserveRegistryAbi, functionName: 'isOperator', args: [PERP_OPERATOR.address] })).toBe(true);
    // Present now: nothing more is deployed.
    const again = await ensureReserveRegistry({ publicClient: f.publicClient, walletClient: f.operator, record, operators: [PERP_OPERATOR.address] });
    expect(again).toEqual({ reserveRegistry: r.reserveRegistry, deployed: false, granted: [] });
  });

  describe.each(testDatabases)('the task ($name)', ({ open }) => {
    let db: Db;
    useFreshDatabase(open, (d) => (db = d));

    const taskFor = (engine: ReturnType<typeof engineOf>, now: () => number, logger?: ReturnType<typeof capture>['logger']) =>
      createReservesTask({
        db, engine: () => engine, publicClient: f.publicClient,
        sender: createTxSender({ publicClient: f.publicClient, account: privateKeyToAccount(PERP_OPERATOR.privateKey) }),
        chainId: f.chainId, registry: registry(), vault: perp.contracts.marginVault, collateralToken: perp.contracts.collateralToken,
        intervalMs: INTERVAL, now, logger,
      });

    it('posts each interval once, negative equity committed at 0 and counted as bad debt, and checks the vault covers it', async () => {
      const vaultBalance = await f.publicClient.readContract({ address: perp.contracts.collateralToken, abi: erc20Abi, functionName: 'balanceOf', args: [perp.contracts.marginVault] });
      expect(vaultBalance).toBe(usdc('10000'));
      const engine = engineOf({ [A]: { equity: usdc('4000'), pending: usdc('1000') }, [B]: { equity: usdc('-250') }, [C]: { equity: usdc('2000.5') } });
      let t = T0 + 1_234;
      const { lines, logger } = capture();
      const task = taskFor(engine, () => t, logger);

      const e = (await task.runEpoch())!;
      expect(e).toMatchObject({ epoch: T0, status: 'POSTED', total: usdc('7000.5'), leafCount: 3, badDebt: usdc('250'), engineSeq: 7, snapshotTs: T0 + 1_234, vaultBalance: usdc('10000'), solvent: true });
      expect(e.txHash).toMatch(/^0x[0-9a-f]{64}$/);
      const onChain = await read<{ epoch: bigint; root: Hex; total: bigint; leafCount: bigint; timestamp: bigint }>('latest');
      expect(onChain).toEqual({ epoch: BigInt(T0), root: e.root, total: usdc('7000.5'), leafCount: 3n, timestamp: BigInt(T0 + 1_234) });
      expect(lines.find((l) => l.msg.includes('covers'))?.fields).toMatchObject({ epoch: T0, liabilities: '7000500000', reserves: '10000000000', badDebt: '250000000' });

      // The same interval again (a restart, or the next poll): nothing new, nothing sent.
      t = T0 + 50_000;
      expect((await task.runEpoch())!.txHash).toBe(e.txHash);
      expect(await read('epochCount')).toBe(1n);

      // The negative account is a leaf of value 0; every proof verifies against the chain's record.
      for (const account of [A, B, C]) {
        const p = await accountProof(db, account);
        expect(p.root).toBe(onChain.root);
        expect(BigInt(p.total)).toBe(onChain.total);
        expect(verifyProof(p)).toBe(true);
        expect(verify({ salt: p.salt, account: p.account as Address, equity: BigInt(p.equity), pendingWithdrawals: BigInt(p.pendingWithdrawals), deposited: BigInt(p.deposited!), withdrawn: BigInt(p.withdrawn!) }, p.path.map((s) => ({ ...s, sum: BigInt(s.sum) })), p.root, BigInt(p.total))).toBe(true);
        if (account === B) expect(p).toMatchObject({ equity: '0', value: '0', pendingWithdrawals: '0' });
        if (account === A) expect(p).toMatchObject({ equity: '4000000000', pendingWithdrawals: '1000000000', value: '5000000000', leafCount: 3, badDebt: '250000000', solvent: true, vaultBalance: '10000000000' });
      }
      await expect(accountProof(db, '0x00000000000000000000000000000000000000d4')).rejects.toThrow(/proof: not found/);

      // The next interval: a new epoch, the vault now short of the liabilities (recorded and warned).
      engine.accountAddresses = () => [A, C];
      engine.marginSummary = (a: string) => ({ equity: a === A ? usdc('9000') : usdc('1500'), pendingWithdrawals: 0n }) as MarginSummary;
      t = T0 + INTERVAL + 10;
      const next = (await task.runEpoch())!;
      expect(next).toMatchObject({ epoch: T0 + INTERVAL, status: 'POSTED', total: usdc('10500'), solvent: false, vaultBalance: usdc('10000'), badDebt: 0n });
      expect(lines.find((l) => l.level === 'warn')).toMatchObject({ msg: expect.stringContaining('LESS'), fields: { liabilities: '10500000000', reserves: '10000000000' } });
      expect(await read('epochCount')).toBe(2n);
      expect((await accountProof(db, A)).epoch).toBe(T0 + INTERVAL);
      await expect(accountProof(db, B)).rejects.toThrow(/not found/);
    });

    it('a tampered proof is refused by the verifier', async () => {
      const task = taskFor(engineOf({ [A]: { equity: usdc('10') }, [B]: { equity: usdc('20') }, [C]: { equity: usdc('30'), pending: usdc('1') } }), () => T0 + 5);
      await task.runEpoch();
      const p = await accountProof(db, B);
      expect(verifyProof(p)).toBe(true);
      expect(verifyProof({ ...p, equity: (BigInt(p.equity) + 1n).toString() })).toBe(false);
      expect(verifyProof({ ...p, pendingWithdrawals: '1' })).toBe(false);
      expect(verifyProof({ ...p, salt: `0x${'00'.repeat(32)}` })).toBe(false);
      expect(verifyProof({ ...p, account: A })).toBe(false);
      expect(verifyProof({ ...p, total: (BigInt(p.total) - 1n).toString() })).toBe(false);
      expect(verifyProof({ ...p, path: p.path.map((s, i) => (i === 0 ? { ...s, side: s.side === 'left' ? 'right' : 'left' } : s)) })).toBe(false);
      expect(verifyProof({ ...p, path: [...p.path].reverse() })).toBe(false);
      // A sibling lowered to hide liabilities, and one "negative" (wrapped) to cancel them: the first
      // sibling that holds something (a zero leaf has nothing to lower).
      const k = p.path.findIndex((s) => BigInt(s.sum) > 0n);
      expect(k).toBeGreaterThanOrEqual(0);
      expect(verifyProof({ ...p, path: p.path.map((s, i) => (i === k ? { ...s, sum: '0' } : s)), total: (BigInt(p.total) - BigInt(p.path[k].sum)).toString() })).toBe(false);
      expect(verifyProof({ ...p, path: p.path.map((s, i) => (i === 0 ? { ...s, sum: '-1' } : s)) })).toBe(false);
      expect(verifyProof({ ...p, path: p.path.map((s, i) => (i === 0 ? { ...s, sum: ((1n << 256n) - 1n).toString() } : s)) })).toBe(false);
    });

    it('after a crash between the post and its record, the epoch is found on chain, not posted again', async () => {
      const engine = engineOf({ [A]: { equity: usdc('1') }, [B]: { equity: usdc('2') } });
      const snap = snapshotLiabilities(engine);
      const stored = { epoch: T0, tree: snap.tree, leaves: snap.leaves, badDebt: 0n, snapshotTs: T0 + 1, engineSeq: 7, chainId: f.chainId, registry: registry(), vault: perp.contracts.marginVault, collateralToken: perp.contracts.collateralToken };
      expect(await insertReserveEpoch(db, stored, T0 + 1)).toBe(true);
      expect(await insertReserveEpoch(db, stored, T0 + 1)).toBe(false);
      // The post landed, the process died before it marked the row.
      const op = perpOperatorWallet(f);
      const hash = await op.writeContract({ address: registry(), abi: reserveRegistryAbi, functionName: 'postReservesWithLeaves', args: [BigInt(T0), BigInt(T0 + 1), registryLeaves(snap.leaves)] });
      await f.publicClient.waitForTransactionReceipt({ hash });
      expect((await getReserveEpoch(db, T0))!.status).toBe('BUILT');

      const e = (await taskFor(engine, () => T0 + 30_000).runEpoch())!;
      expect(e).toMatchObject({ epoch: T0, status: 'POSTED', root: snap.tree.root, solvent: true });
      expect(await read('epochCount')).toBe(1n);

      // An older epoch still BUILT when a later one is on chain is SKIPPED, never posted out of order.
      await insertReserveEpoch(db, { ...stored, epoch: T0 - INTERVAL }, T0);
      const { lines, logger } = capture();
      await taskFor(engine, () => T0 + 40_000, logger).runEpoch();
      expect((await getReserveEpoch(db, T0 - INTERVAL))!.status).toBe('SKIPPED');
      expect(lines.some((l) => l.msg.includes('skipped'))).toBe(true);
      expect((await latestReserveEpoch(db, 'POSTED'))!.epoch).toBe(T0);
      expect(await read('epochCount')).toBe(1n);
    });

    it('skips an epoch an earlier release stored with its leaves in salt order, and posts the next interval with its leaves', async () => {
      const engine = engineOf({ [A]: { equity: usdc('1') }, [B]: { equity: usdc('2') } });
      const snap = snapshotLiabilities(engine);
      // 0.2.0 ordered the leaves by salt: here B before A, which the registry no longer takes.
      const swapped = [{ ...snap.leaves[1]!, leafIndex: 0 }, { ...snap.leaves[0]!, leafIndex: 1 }];
      const tree = build(swapped);
      await insertReserveEpoch(db, { epoch: T0, tree, leaves: swapped, badDebt: 0n, snapshotTs: T0 + 1, engineSeq: 7, chainId: f.chainId, registry: registry(), vault: perp.contracts.marginVault, collateralToken: perp.contracts.collateralToken }, T0 + 1);
      const { lines, logger } = capture();
      const task = taskFor(engine, () => T0 + 30_000, logger);
      expect(await task.runEpoch()).toMatchObject({ epoch: T0, status: 'SKIPPED' });
      expect(lines.some((l) => l.msg.includes('earlier release'))).toBe(true);
      expect(await read('epochCount')).toBe(0n);
      const next = (await taskFor(engine, () => T0 + INTERVAL + 5).runEpoch())!;
      expect(next).toMatchObject({ epoch: T0 + INTERVAL, status: 'POSTED', total: usdc('3') });
      const published = await readPublishedLeaves(f.publicClient, registry(), BigInt(T0 + INTERVAL));
      expect(published.map((l) => l.account.toLowerCase())).toEqual([A, B]);
    });
  });
});

describe('proof of reserves in the stack', () => {
  let t: TestStack;
  // A short funding interval: the epoch posted at start precedes the demo deposits' credit, the next ones hold them.
  const env = { PERP_FUNDING_INTERVAL_MS: '3000' };
  beforeAll(async () => {
    t = await startTestStack(env);
  }, 120_000);
  afterAll(async () => {
    await t?.stop();
  });

  it('runs examples/verify-reserves.ts: inclusion, the root on chain and the reserves all check out', async () => {
    expect(t.demo.perp?.contracts?.reserveRegistry).toMatch(/^0x[0-9a-fA-F]{40}$/);
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'examples/verify-reserves.ts'], { env: { ...process.env, DATA_DIR: t.dataDir } });
    const lines = stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^epoch \d+: leaf \d+ of \d+, value \d+(\.\d+)? USDC$/);
    const [, x, y] = /^inclusion ok, root on chain ok, reserves (\S+) ≥ liabilities (\S+) ok$/.exec(lines[1])!;
    expect(parseUnits(x, 6) >= parseUnits(y, 6)).toBe(true);
    // The demo deposits are in the vault (at least wallets[0]'s, the market maker's and the taker's).
    expect(parseUnits(x, 6) >= usdc('1110000')).toBe(true);
    const proof = await t.perpTrader!.getAccountProof();
    expect(proof).toMatchObject({ account: t.demo.wallets[0].address.toLowerCase(), reserveRegistry: t.demo.perp!.contracts!.reserveRegistry!.toLowerCase(), chainId: t.demo.chainId, decimals: 6 });
    expect(t.logs.some((l) => l.includes('perp reserves: posted'))).toBe(true);
  }, 90_000);

  it('answers 40000 to an account the tree does not hold', async () => {
    const wallet = privateKeyToAccount(t.demo.wallets[1].privateKey as Hex);
    const created = await PerpClient.createApiKey(t.perpBaseUrl!, wallet, { label: 'no account', permissions: ['READ'], chainId: t.demo.chainId });
    const err = await PerpClient.forKey(t.perpBaseUrl!, created, t.demo.chainId).getAccountProof().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PerpApiError);
    expect(err).toMatchObject({ code: 40000, httpStatus: 404 });
  });

  it('a deployment file without the registry gets one deployed on the next start, the rest kept', async () => {
    const file = path.join(t.dataDir, 'deployments', '31337.json');
    const before = JSON.parse(fs.readFileSync(file, 'utf8'));
    await t.stop();
    delete before.venues.perp.contracts.reserveRegistry;
    fs.writeFileSync(file, JSON.stringify(before));
    t = await startTestStack(env, { dataDir: t.dataDir });
    const after = JSON.parse(fs.readFileSync(file, 'utf8'));
    expect(after.venues.perp.contracts.marginVault).toBe(before.venues.perp.contracts.marginVault);
    expect(after.venues.perp.contracts.reserveRegistry).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect(t.demo.perp?.contracts?.reserveRegistry).toBe(after.venues.perp.contracts.reserveRegistry);
    expect(t.logs.some((l) => l.includes('"msg":"deploying venue"'))).toBe(false);
    expect(t.logs.some((l) => l.includes('reserve registry deployed'))).toBe(true);
  }, 120_000);
});
