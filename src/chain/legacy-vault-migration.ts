/**
 * The perpetual vault's part of the migration from 0.1.0 (docs/upgrades.md, "Deployments from
 * before the proxies"; src/chain/legacy-migration.ts runs it). The 0.1.0 MarginVault has no pause
 * and no way to refuse a deposit, and its address is public: anyone can deposit into it at any
 * moment of the migration, and after it. So the move never counts on the old vault standing still:
 *
 *   - the engine's accounts are what its indexer credited: deposits up to `creditedThrough` (the
 *     block the database holds the old vault's events to; the snapshot's block without a database);
 *   - every deposit after that block is a **late deposit**: paid back to its depositor by the old
 *     vault itself (withdrawal id `lateDepositReturnId`), never moved, never credited, and kept out
 *     of the totals the new vault imports (the escape hatch's formula compares those with the
 *     engine's leaves);
 *   - the collateral moved is the old vault's balance at one block less the late deposits not yet
 *     returned at that block, so a deposit landing just before the move (a front-run) stays behind to
 *     be returned, and the returns are always funded;
 *   - a plain token transfer to the new vault is a surplus, reported, never a reason to stop;
 *   - at the end every operator of the old vault (the owner included) is revoked: it pays nothing
 *     more. A deposit after that is not credited (docs/upgrades.md says what to do).
 */
import { getAddress, keccak256, parseAbi, toHex, type Abi, type Address, type Hex } from 'viem';
import { cashTokenAbi, marginVaultAbi, reserveRegistryAbi } from './abi/generated/index.ts';
import type { ChainPublicClient, ChainWalletClient } from './chain-client.ts';
import { TxBatch } from './deploy-tx-batch.ts';
import { DEFAULT_WITHDRAWAL_CAP } from './deploy-perp-venue.ts';
import type { VenueDeployment } from './deployment-file.ts';
import { accountsSeen, CHUNK, mapChunked, send, type StepContext } from './legacy-migration-context.ts';
import type { LateDeposit } from './legacy-migration-journal.ts';
import { APP_VERSION } from '../config/build-info.ts';
import { timelockDeployArgs } from './owner-actions.ts';

/** The 0.1.0 MarginVault's payment, which later vaults replaced with the wallet-signed `payWithdrawal`. */
export const LEGACY_VAULT_ABI = parseAbi([
  'function withdraw(address account, uint256 amount, bytes32 withdrawalId)',
  'function withdrawalPaid(bytes32 withdrawalId) view returns (bool)',
  'function isOperator(address account) view returns (bool)',
  'function setOperator(address operator, bool enabled)',
  'event Withdrawn(address indexed account, uint256 amount, bytes32 indexed withdrawalId)',
]);

/** The withdrawal id under which the old vault pays its collateral to the new one. */
export const VAULT_MIGRATION_WITHDRAWAL_ID = keccak256(new TextEncoder().encode('tokex: vault migration to 0.2.0'));

/** The withdrawal id under which the old vault pays a late deposit back: one per deposit log, so each is paid back once. */
export function lateDepositReturnId(txHash: Hex, logIndex: number): Hex {
  return keccak256(toHex(`tokex: late deposit into the 0.1.0 vault returned: ${txHash.toLowerCase()}:${logIndex}`));
}

const s = (v: bigint) => v.toString();
const b = (v: string) => BigInt(v);
const depositedEvent = marginVaultAbi.find((e) => e.type === 'event' && e.name === 'Deposited')!;
const withdrawnEvent = marginVaultAbi.find((e) => e.type === 'event' && e.name === 'Withdrawn')!;

/**
 * Pays, from a 0.1.0 vault and under that release's rules (the operator's word, no wallet signature),
 * a withdrawal its engine reserved and did not pay before the stop, so that the migration leaves
 * nothing waiting on a vault that is about to move (the new vault pays only what a wallet signed).
 * The owner makes itself an operator of the old vault if it is not one. Idempotent: an id the old
 * vault paid already is answered with that payment. Answers where it was paid.
 */
export async function payFromLegacyVault(p: {
  publicClient: ChainPublicClient;
  ownerWallet: ChainWalletClient;
  vault: Address;
  account: Address;
  amount: bigint;
  withdrawalId: Hex;
  fromBlock: bigint;
}): Promise<{ txHash: Hex; blockNumber: bigint } | undefined> {
  const { publicClient: client, vault } = p;
  const read = <T>(functionName: 'withdrawalPaid' | 'isOperator', args: readonly unknown[]) =>
    client.readContract({ address: vault, abi: LEGACY_VAULT_ABI, functionName, args } as never) as Promise<T>;
  const paidLog = async () => {
    const logs = await client.getLogs({ address: vault, event: LEGACY_VAULT_ABI[4], args: { withdrawalId: p.withdrawalId }, fromBlock: p.fromBlock });
    const last = logs[logs.length - 1];
    return last ? { txHash: last.transactionHash, blockNumber: last.blockNumber } : undefined;
  };
  if (await read<boolean>('withdrawalPaid', [p.withdrawalId])) return paidLog();
  const owner = p.ownerWallet.account.address;
  const tx = await TxBatch.open(client, p.ownerWallet);
  if (!(await read<boolean>('isOperator', [owner]))) await tx.call('old vault.setOperator(owner)', vault, LEGACY_VAULT_ABI as unknown as Abi, 'setOperator', [owner, true]);
  await tx.call('old vault pays a pending withdrawal', vault, LEGACY_VAULT_ABI as unknown as Abi, 'withdraw', [p.account, p.amount, p.withdrawalId], 120_000n);
  const receipt = await tx.finish();
  return { txHash: receipt.transactionHash, blockNumber: receipt.blockNumber };
}

/** Deposits into the old vault after `creditedThrough`, up to `toBlock`, with whether each was paid back at `toBlock`. */
async function lateDeposits(client: ChainPublicClient, vault: Address, creditedThrough: bigint, toBlock: bigint): Promise<Array<LateDeposit & { returnedAt: boolean }>> {
  if (toBlock <= creditedThrough) return [];
  const logs = (await client.getLogs({ address: vault, event: depositedEvent as never, fromBlock: creditedThrough + 1n, toBlock })) as unknown as Array<{ args: { account: Address; amount: bigint }; transactionHash: Hex; logIndex: number; blockNumber: bigint }>;
  return mapChunked(logs, async (l) => {
    const { account, amount } = l.args;
    const id = lateDepositReturnId(l.transactionHash, l.logIndex);
    const returnedAt = (await client.readContract({ address: vault, abi: LEGACY_VAULT_ABI, functionName: 'withdrawalPaid', args: [id], blockNumber: toBlock })) as boolean;
    return { account: getAddress(account), amount: s(amount), block: s(l.blockNumber), txHash: l.transactionHash, logIndex: l.logIndex, returnId: id, returnedAt };
  });
}

async function ensureOwnerOperator(ctx: StepContext, vault: Address): Promise<void> {
  const owner = ctx.ownerWallet.account.address;
  if (!(await ctx.publicClient.readContract({ address: vault, abi: LEGACY_VAULT_ABI, functionName: 'isOperator', args: [owner] }))) {
    await send(ctx, 'old vault.setOperator(owner)', vault, LEGACY_VAULT_ABI as unknown as Abi, 'setOperator', [owner, true]);
  }
}

/** Pays back every late deposit in `deposits` not paid back yet (its own id: a rerun pays none twice), and notes it in the journal. */
async function returnLateDeposits(ctx: StepContext, vault: Address, deposits: ReadonlyArray<LateDeposit>): Promise<void> {
  const j = ctx.journal.perp!;
  for (const d of deposits) {
    const paid = await ctx.publicClient.readContract({ address: vault, abi: LEGACY_VAULT_ABI, functionName: 'withdrawalPaid', args: [d.returnId] });
    if (!paid) {
      await ensureOwnerOperator(ctx, vault);
      await send(ctx, 'old vault returns a late deposit', vault, LEGACY_VAULT_ABI as unknown as Abi, 'withdraw', [d.account, b(d.amount), d.returnId]);
    }
    if (!(j.lateDeposits ?? []).some((x) => x.returnId === d.returnId)) {
      j.lateDeposits = [...(j.lateDeposits ?? []), d];
      await ctx.save();
      ctx.say(`perp: a deposit of ${d.amount} units by ${d.account} into the old vault after block ${j.creditedThrough} (tx ${d.txHash}) was returned to it`);
    }
  }
}

export async function migratePerpVenue(ctx: StepContext & { collateralFallback?: Address }): Promise<VenueDeployment> {
  const { publicClient: client, journal, save, say } = ctx;
  const j = journal.perp!;
  const oldVault = j.old.marginVault as Address;
  const token = (j.old.collateralToken as Address | undefined) ?? ctx.collateralFallback!;
  const owner = ctx.ownerWallet.account.address;
  const section = ctx.record.venues.perp;
  const firstBlock = BigInt(section.firstBlockNumber ?? section.blockNumber);
  const head = () => client.getBlockNumber({ cacheTime: 0 });

  // Likewise the old vault only until its collateral has moved (the move is not a user's withdrawal).
  // The database's last block of the old vault's events is asked once: a deposit after it is late
  // for good, even if a resumed run's indexer would now see it (it is returned, not credited).
  const movedOnChain = await client.readContract({ address: oldVault, abi: marginVaultAbi, functionName: 'withdrawalPaid', args: [VAULT_MIGRATION_WITHDRAWAL_ID] });
  if (!j.moved && !movedOnChain && j.creditedThrough === undefined) {
    const through = await ctx.beforeVaultMoved?.();
    if (typeof through === 'bigint') {
      j.creditedThrough = s(through);
      await save();
    }
  }
  if (!j.snapshot) {
    // The head now (cacheTime 0): the pending withdrawal just paid above is in a block newer than
    // viem's cached one, and a snapshot at the cached block still counted its collateral as held,
    // so the reconciliation found the vault 25 USDC short of it (CI).
    const block = await head();
    const at = { blockNumber: block } as const;
    const seen = await accountsSeen(client, [oldVault], firstBlock, block);
    const accounts = (
      await mapChunked(seen, async (account) => {
        const [deposited, withdrawn] = await Promise.all([
          client.readContract({ address: oldVault, abi: marginVaultAbi, functionName: 'depositedOf', args: [account], ...at }),
          client.readContract({ address: oldVault, abi: marginVaultAbi, functionName: 'withdrawnOf', args: [account], ...at }),
        ]);
        return { account, deposited: s(deposited), withdrawn: s(withdrawn) };
      })
    ).filter((a) => a.deposited !== '0' || a.withdrawn !== '0');
    const paidLogs = await client.getLogs({ address: oldVault, event: withdrawnEvent as never, fromBlock: firstBlock, toBlock: block });
    const paid = paidLogs.map((l) => (l as unknown as { args: { withdrawalId: Hex } }).args.withdrawalId);
    const held = await client.readContract({ address: token, abi: cashTokenAbi, functionName: 'balanceOf', args: [oldVault], ...at });
    j.snapshot = { block: s(block), held: s(held), accounts, paid };
    j.creditedThrough ??= s(block);
    // What the engine's accounts own at the snapshot: the vault's balance less the deposits it never credited.
    j.owed = s(held - (await lateDeposits(client, oldVault, b(j.creditedThrough), block)).reduce((n, d) => n + b(d.amount), 0n));
    await save();
    say(`perp: snapshot of the vault at block ${block}: ${accounts.length} account(s), ${held} units held, ${j.owed} owed to the engine's accounts (credited through block ${j.creditedThrough})`);
  }
  const snap = j.snapshot;
  const creditedThrough = b(j.creditedThrough ?? snap.block);

  const vaultCode = j.deployed ? await client.getCode({ address: j.deployed.contracts.marginVault as Address }) : undefined;
  if (!j.deployed || vaultCode === undefined || vaultCode === '0x') {
    j.imported = false;
    const operators: Address[] = [];
    for (const account of snap.accounts.map((a) => a.account).concat([owner])) {
      const isOp = await client.readContract({ address: oldVault, abi: marginVaultAbi, functionName: 'isOperator', args: [account] });
      if (isOp) operators.push(account);
    }
    const tx = await TxBatch.open(client, ctx.ownerWallet);
    const marginVault = await tx.deployProxy('MarginVault', 'MarginVault', [token], [owner, owner, true]);
    const cap = ctx.withdrawalCap ?? DEFAULT_WITHDRAWAL_CAP;
    await tx.call('vault.setWithdrawalCap', marginVault, marginVaultAbi, 'setWithdrawalCap', [cap.amount, BigInt(cap.periodSeconds)]);
    const reserveRegistry = await tx.deployProxy('ReserveRegistry', 'ReserveRegistry', [], [owner, owner]);
    // The configured perp operator; without one, the old vault's operators but the owner (the admin
    // key holds no operator role: docs/security.md, "Who holds which role").
    const opsSet = new Set<string>([owner.toLowerCase()]);
    for (const op of ctx.roles?.perp ?? [...operators, ...(await operatorsOf(client, oldVault, firstBlock))]) {
      if (opsSet.has(op.toLowerCase())) continue;
      opsSet.add(op.toLowerCase());
      await tx.call('vault.setOperator', marginVault, marginVaultAbi, 'setOperator', [op, true]);
      await tx.call('registry.setOperator', reserveRegistry, reserveRegistryAbi, 'setOperator', [op, true]);
    }
    // The escape hatch pays against this registry's roots, from the first post on.
    await tx.call('vault.setReserveRegistry', marginVault, marginVaultAbi, 'setReserveRegistry', [reserveRegistry]);
    if (ctx.roles?.guardian) await tx.call('vault.setGuardian', marginVault, marginVaultAbi, 'setGuardian', [ctx.roles.guardian]);
    // The venue's owner-to-be (docs/security.md, "Owner and upgrader"): the migration ends by handing over to it.
    const timelockCode = timelockDeployArgs(owner);
    const timelock = await tx.deploy('VenueTimelock', timelockCode.abi, timelockCode.bytecode, timelockCode.args);
    const last = await tx.finish();
    const contracts = { ...j.old, marginVault, collateralToken: token, reserveRegistry };
    j.deployed = { release: APP_VERSION, code: tx.codeOf({ marginVault, reserveRegistry }), blockNumber: s(last.blockNumber), firstBlockNumber: s(tx.firstBlock!), deployedAt: Date.now(), operator: owner, contracts, timelock: { address: timelock, minDelay: 0 } };
    await save();
    say(`perp: the new vault is deployed behind a proxy (${marginVault})`);
  }
  const next = j.deployed;
  const newVault = next.contracts.marginVault as Address;

  if (!(await client.readContract({ address: oldVault, abi: marginVaultAbi, functionName: 'withdrawalPaid', args: [VAULT_MIGRATION_WITHDRAWAL_ID] }))) {
    // One block's view: its balance less the late deposits not paid back at that block. What lands
    // after it (a deposit racing the move) stays in the old vault, to be paid back below.
    const at = await head();
    const late = await lateDeposits(client, oldVault, creditedThrough, at);
    const held = await client.readContract({ address: token, abi: cashTokenAbi, functionName: 'balanceOf', args: [oldVault], blockNumber: at });
    const amount = held - late.filter((d) => !d.returnedAt).reduce((n, d) => n + b(d.amount), 0n);
    j.movedAmount = s(amount);
    await save();
    await returnLateDeposits(ctx, oldVault, late);
    if (amount > 0n) {
      await ensureOwnerOperator(ctx, oldVault);
      // The 0.1.0 vault's operator payment (it took no signature): the old vault's own ABI.
      await send(ctx, 'old vault pays the new vault', oldVault, LEGACY_VAULT_ABI as unknown as Abi, 'withdraw', [newVault, amount, VAULT_MIGRATION_WITHDRAWAL_ID]);
    }
  }
  if (!j.moved) {
    j.moved = true;
    await save();
    say(`perp: the old vault's collateral is in the new vault (${j.movedAmount ?? '?'} units)`);
  }
  await ctx.afterVaultMoved?.();
  if (await client.readContract({ address: newVault, abi: marginVaultAbi, functionName: 'migrating' })) {
    // Totals as the old vault holds them at one block, less every late deposit and its return: the
    // new vault's books hold what the engine credited and paid, so an escape (leaf vs. totals) pays
    // a late deposit nowhere twice. A payment that landed after the snapshot (signed for the old
    // vault before the stop) counts, and so does its id below.
    const at = await head();
    const late = await lateDeposits(client, oldVault, creditedThrough, at);
    await returnLateDeposits(ctx, oldVault, late);
    const returnIds = new Set(late.map((d) => d.returnId.toLowerCase()));
    const paidLogs = (await client.getLogs({ address: oldVault, event: withdrawnEvent as never, fromBlock: firstBlock, toBlock: at })) as unknown as Array<{ args: { account: Address; amount: bigint; withdrawalId: Hex } }>;
    const lateOf = (account: Address) => late.filter((d) => d.account.toLowerCase() === account.toLowerCase()).reduce((n, d) => n + b(d.amount), 0n);
    const returnedOf = (account: Address) =>
      paidLogs.filter((l) => returnIds.has(l.args.withdrawalId.toLowerCase()) && l.args.account.toLowerCase() === account.toLowerCase()).reduce((n, l) => n + l.args.amount, 0n);
    const accounts = await mapChunked(snap.accounts, async (a) => {
      const [deposited, withdrawn] = await Promise.all([
        client.readContract({ address: oldVault, abi: marginVaultAbi, functionName: 'depositedOf', args: [a.account], blockNumber: at }),
        client.readContract({ address: oldVault, abi: marginVaultAbi, functionName: 'withdrawnOf', args: [a.account], blockNumber: at }),
      ]);
      return { account: a.account, deposited: deposited - lateOf(a.account), withdrawn: withdrawn - returnedOf(a.account) };
    });
    for (let i = 0; i < accounts.length; i += CHUNK) {
      const part = accounts.slice(i, i + CHUNK);
      await send(ctx, 'vault.migrateAccounts', newVault, marginVaultAbi, 'migrateAccounts', [part.map((a) => a.account), part.map((a) => a.deposited), part.map((a) => a.withdrawn)]);
    }
    // Every id the old vault paid to the engine's accounts, read after the move: the old vault pays
    // none of them again, so none can be paid again here.
    const paid = [...new Set(paidLogs.map((l) => l.args.withdrawalId))].filter((id) => id !== VAULT_MIGRATION_WITHDRAWAL_ID && !returnIds.has(id.toLowerCase()));
    for (let i = 0; i < paid.length; i += CHUNK) {
      await send(ctx, 'vault.migrateWithdrawalsPaid', newVault, marginVaultAbi, 'migrateWithdrawalsPaid', [paid.slice(i, i + CHUNK)]);
    }
    j.imported = true;
    await save();
  }
  {
    const open = await client.readContract({ address: newVault, abi: marginVaultAbi, functionName: 'migrating' });
    if (open) await send(ctx, 'vault.finishMigration', newVault, marginVaultAbi, 'finishMigration', []);
    if (!j.finished) {
      j.finished = true;
      await save();
    }
  }
  if (!j.retired) {
    // The last late deposits paid back, then the old vault pays nothing more: every operator goes.
    await returnLateDeposits(ctx, oldVault, await lateDeposits(client, oldVault, creditedThrough, await head()));
    for (const op of new Set([...(await operatorsOf(client, oldVault, firstBlock)), getAddress(owner)])) {
      if (await client.readContract({ address: oldVault, abi: marginVaultAbi, functionName: 'isOperator', args: [op] })) {
        await send(ctx, 'old vault.setOperator(false)', oldVault, LEGACY_VAULT_ABI as unknown as Abi, 'setOperator', [op, false]);
      }
    }
    j.retired = true;
    await save();
    say('perp: the old vault has no operator left: it pays nothing more');
  }
  return next;
}

async function operatorsOf(client: ChainPublicClient, vault: Address, fromBlock: bigint): Promise<Address[]> {
  const logs = await client.getLogs({ address: vault, event: marginVaultAbi.find((e) => e.type === 'event' && e.name === 'OperatorSet') as never, fromBlock });
  const out: Address[] = [];
  for (const l of logs) {
    const { operator } = (l as unknown as { args: { operator: Address } }).args;
    if (await client.readContract({ address: vault, abi: marginVaultAbi, functionName: 'isOperator', args: [operator] })) out.push(getAddress(operator));
  }
  return [...new Set(out)];
}
