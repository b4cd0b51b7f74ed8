/**
 * The perpetual venue on a chain fixture (test/support/chain-fixture.ts): the MarginVault deployed by
 * ensureVenues beside the fixture's stock venue, with the perp operator (anvil account 6) and the
 * demo deposit of `DEMO_WALLETS[0]` as the embedded stack makes them.
 */
import type { Address, Hex, TransactionReceipt } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { PERP_DOMAIN_NAME, PERP_DOMAIN_VERSION, WITHDRAWAL_FIELDS } from '@tokex/contract';
import { expect } from 'vitest';
import { cashTokenAbi, marginVaultAbi, reserveRegistryAbi } from '../../src/chain/abi/generated/index.ts';
import { DEMO_WALLETS } from '../../src/chain/anvil-accounts.ts';
import type { ChainPublicClient, ChainWalletClient } from '../../src/chain/chain-client.ts';
import { ensureVenues } from '../../src/chain/deploy-contracts.ts';
import { DEMO_PERP_DEPOSIT, perpDeploymentOf, perpVenueDeployer, type PerpDeployment } from '../../src/chain/deploy-perp-venue.ts';
import { SENDER_ROLE_SPECS } from '../../src/chain/operator-roles.ts';
import { testWallet, type ChainFixture, type ChainUser } from './chain-fixture.ts';
import type { Logger } from '../../src/lib/logger.ts';
import { createVaultTransactionService } from '../../src/perp/vault-transaction-service.ts';
import type { PerpHarness, PerpHarnessVariant } from './perp-api-harness.ts';

export const PERP_OPERATOR = SENDER_ROLE_SPECS['perp-operator'].devAccount;

export async function deployPerpVenue(f: ChainFixture, opts: { demoDeposit?: boolean } = {}): Promise<PerpDeployment> {
  const { chainId, ...stock } = f.deployment;
  const { record, deployed } = await ensureVenues({
    publicClient: f.publicClient,
    walletClient: f.operator,
    record: { chainId, venues: { stock } },
    venues: [
      perpVenueDeployer({
        operators: [PERP_OPERATOR.address],
        demoDeposits: opts.demoDeposit === false ? [] : [{ privateKey: DEMO_WALLETS[0].privateKey, amount: DEMO_PERP_DEPOSIT }],
      }),
    ],
  });
  expect(deployed).toEqual(['perp']);
  return perpDeploymentOf(record)!;
}

export function perpOperatorWallet(f: ChainFixture): ChainWalletClient {
  return testWallet(PERP_OPERATOR.privateKey, f.chain, f.rpcUrl);
}

/**
 * Relays a signed withdrawal with the gas limit the withdrawal task gives it: its estimate and
 * 30 %. An exact estimate can run short: `payWithdrawal` writes the operator's last activity and
 * the cap window, and a write that is a no-op at the estimate's block time costs more at the
 * mined block's (a loaded CI machine made that happen).
 */
export async function relayWithdrawal(
  f: ChainFixture,
  perp: PerpDeployment,
  request: { account: Address; recipient: Address; amount: bigint; withdrawalId: Hex; deadline: bigint },
  signature: Hex,
  by: ChainWalletClient = perpOperatorWallet(f),
): Promise<Hex> {
  const call = { address: perp.contracts.marginVault, abi: marginVaultAbi, functionName: 'payWithdrawal', args: [request, signature] } as const;
  const gas = await f.publicClient.estimateContractGas({ ...call, account: by.account! });
  return by.writeContract({ ...call, gas: (gas * 13n) / 10n });
}

async function mined(f: ChainFixture, hash: `0x${string}`): Promise<TransactionReceipt> {
  const receipt = await f.publicClient.waitForTransactionReceipt({ hash });
  expect(receipt.status).toBe('success');
  return receipt;
}

/** `user` approves the vault and deposits `amount` (two transactions, as a wallet does). */
export async function vaultDeposit(f: ChainFixture, perp: PerpDeployment, user: ChainUser, amount: bigint): Promise<TransactionReceipt> {
  const { marginVault, collateralToken } = perp.contracts;
  await mined(f, await user.wallet.writeContract({ address: collateralToken, abi: cashTokenAbi, functionName: 'approve', args: [marginVault, amount] }));
  return mined(f, await user.wallet.writeContract({ address: marginVault, abi: marginVaultAbi, functionName: 'deposit', args: [amount] }));
}

/** A withdrawal request as the vault takes it (IMarginVault.WithdrawalRequest). */
export interface VaultWithdrawalRequest {
  account: Address;
  recipient: Address;
  amount: bigint;
  withdrawalId: Hex;
  deadline: bigint;
}

/** `signer`'s EIP-712 signature of `request` in the vault's domain (TokexPerp / 1 / chain / vault). */
export function signVaultWithdrawal(f: ChainFixture, perp: PerpDeployment, signer: Hex, request: VaultWithdrawalRequest): Promise<Hex> {
  return privateKeyToAccount(signer).signTypedData({
    domain: { name: PERP_DOMAIN_NAME, version: PERP_DOMAIN_VERSION, chainId: f.chainId, verifyingContract: perp.contracts.marginVault },
    types: { Withdrawal: WITHDRAWAL_FIELDS },
    primaryType: 'Withdrawal',
    message: request,
  });
}

/**
 * The perp operator relays `user`'s signed withdrawal of `amount` to `user` under `withdrawalId`
 * (a deadline an hour ahead of the chain's clock unless given).
 */
export async function vaultWithdraw(
  f: ChainFixture,
  perp: PerpDeployment,
  user: Pick<ChainUser, 'address' | 'privateKey'>,
  amount: bigint,
  withdrawalId: Hex,
  opts: { deadline?: bigint } = {},
): Promise<TransactionReceipt> {
  const operator = perpOperatorWallet(f);
  const deadline = opts.deadline ?? (await f.publicClient.getBlock({ blockTag: 'latest' })).timestamp + 3_600n;
  const request = { account: user.address, recipient: user.address, amount, withdrawalId, deadline };
  const signature = await signVaultWithdrawal(f, perp, user.privateKey, request);
  return mined(f, await relayWithdrawal(f, perp, request, signature, operator));
}

/**
 * The perp API of a harness variant with the approve/deposit relay over `perp` on the fixture's
 * chain (or over `publicClient`, an RPC of the test's choosing).
 */
export function startVaultApi(
  variant: PerpHarnessVariant,
  f: ChainFixture,
  perp: PerpDeployment,
  opts: { publicClient?: ChainPublicClient; waitMs?: number; logger?: Logger } = {},
): Promise<PerpHarness> {
  return variant.start({
    limit: 10_000,
    api: (db) => ({
      ...(opts.logger ? { logger: opts.logger } : {}),
      marginVault: perp.contracts.marginVault,
      vaultTransactions: createVaultTransactionService({
        db, publicClient: opts.publicClient ?? f.publicClient, chainId: f.chainId, contracts: perp.contracts, waitMs: opts.waitMs,
      }),
    }),
  });
}

/** A leaf as the registry takes it (IReserveRegistry.Leaf): the stored or snapshot leaf's fields. */
export interface RegistryLeaf {
  salt: Hex;
  account: Address;
  equity: bigint;
  pendingWithdrawals: bigint;
  deposited: bigint;
  withdrawn: bigint;
}

export const registryLeaves = (leaves: ReadonlyArray<Omit<RegistryLeaf, 'deposited' | 'withdrawn'> & { deposited?: bigint; withdrawn?: bigint }>): RegistryLeaf[] =>
  leaves.map((l) => ({ salt: l.salt, account: l.account, equity: l.equity, pendingWithdrawals: l.pendingWithdrawals, deposited: l.deposited ?? 0n, withdrawn: l.withdrawn ?? 0n }));

/** Posts `epoch` with its leaves from the perp operator, as the reserves task does; answers the mined receipt. */
export async function postReservesRoot(f: ChainFixture, perp: PerpDeployment, epoch: bigint, leaves: readonly RegistryLeaf[], timestamp = 1n): Promise<TransactionReceipt> {
  const hash = await perpOperatorWallet(f).writeContract({
    address: perp.contracts.reserveRegistry!, abi: reserveRegistryAbi, functionName: 'postReservesWithLeaves', args: [epoch, timestamp, leaves],
  });
  const receipt = await f.publicClient.waitForTransactionReceipt({ hash });
  expect(receipt.status).toBe('success');
  return receipt;
}
