/**
 * The perpetual venue's contracts: the MarginVault, whose collateral is the stock venue's cash token
 * (the demo USDC), with the perpetual operator granted the right to pay withdrawals; and the
 * ReserveRegistry, where the same operator posts the proof-of-reserves roots
 * (docs/proof-of-reserves.md). In demo mode a
 * demo wallet deposits collateral the way any user does (approve, then `deposit` from the wallet),
 * so the engine starts with a funded account and the deposit path is exercised from the first run.
 */
import { getAddress, parseUnits, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { AppError } from '../errors/app-error.ts';
import { cashTokenAbi, marginVaultAbi, reserveRegistryAbi } from './abi/generated/index.ts';
import { APP_VERSION } from '../config/build-info.ts';
import { toChainError, type ChainPublicClient, type ChainWalletClient } from './chain-client.ts';
import { stockDeploymentOf } from './deploy-stock-venue.ts';
import { TxBatch } from './deploy-tx-batch.ts';
import type { VenueDeployer } from './deploy-venues.ts';
import type { DeploymentRecord, VenueDeployment } from './deployment-file.ts';
import { ownerCalls, timelockDeployArgs, type OwnerCallResult } from './owner-actions.ts';

// A type, not an interface: it must fit the record's generic address map.
export type PerpContracts = {
  marginVault: Address;
  /** The ERC-20 the vault takes (the stock venue's cash token). */
  collateralToken: Address;
  /**
   * Where the proof-of-reserves roots are posted. Absent from a record written before it existed:
   * ensureReserveRegistry deploys it then, next to the venue's other contracts.
   */
  reserveRegistry?: Address;
};

/** The perpetual venue's section of the deployment record. */
export type PerpVenueDeployment = VenueDeployment<PerpContracts>;

/** The perpetual venue as the roles take it: its section with the chain id beside it. */
export interface PerpDeployment extends PerpVenueDeployment {
  chainId: number;
}

/** A demo wallet's deposit made at deployment. */
export interface DemoCollateralDeposit {
  /** The wallet's key (a public anvil key: demo mode only). */
  privateKey: Hex;
  /** Collateral-token units (6 decimals). */
  amount: bigint;
  /** Wei the deployer sends the wallet first, for its gas (a wallet the chain did not fund). */
  gas?: bigint;
}

/** The demo deposit of `DEMO_WALLETS[0]`: 10,000 USDC. */
export const DEMO_PERP_DEPOSIT = parseUnits('10000', 6);
/** The demo market maker's collateral: 1,000,000 USDC, for several levels on every book. */
export const MARKET_MAKER_DEPOSIT = parseUnits('1000000', 6);
/** The demo taker's collateral: 100,000 USDC. */
export const DEMO_TAKER_DEPOSIT = parseUnits('100000', 6);
/** Gas money the deployer gives the demo market maker's and taker's wallets (anvil does not fund them). */
export const MARKET_MAKER_GAS = parseUnits('1', 18);

export interface PerpVenueParams {
  /** Accounts made operators of the vault (the perp-operator role's address). */
  operators: readonly Address[];
  /**
   * The collateral token. Default: the cash token of the record's stock venue, which must then be
   * listed before this one.
   */
  collateralToken?: Address;
  /** Deposits demo wallets make right after the deployment (demo mode). */
  demoDeposits?: readonly DemoCollateralDeposit[];
  /** The upgrade authority of the venue's proxies (docs/upgrades.md). Default: the deployer. */
  upgrader?: Address;
  /** Opens the vault's migration window (it takes over a vault from before the proxies). Default false. */
  migrating?: boolean;
  /** What the vault pays at most per period (docs/security.md). Default {@link DEFAULT_WITHDRAWAL_CAP}. */
  withdrawalCap?: { amount: bigint; periodSeconds: number };
  /** Who can pause the vault's payments (docs/security.md, "Guardian"). Default: none. */
  guardian?: Address;
}

/** 1,000,000 USDC a day: the vault's cap on payments unless the deployment says otherwise. */
export const DEFAULT_WITHDRAWAL_CAP = { amount: parseUnits('1000000', 6), periodSeconds: 86_400 };

/** The stock venue's section name: the collateral comes from there. */
const STOCK_VENUE = 'stock';

/**
 * The perpetual venue: a MarginVault over the stock venue's cash token. List it after the stock
 * venue (ensureVenues deploys in order; the collateral is read from the record built so far). Each
 * demo deposit's amount is minted to its wallet by the deployer (the cash token's owner), then the
 * wallet approves and deposits itself, as a user does.
 */
export function perpVenueDeployer(params: PerpVenueParams): VenueDeployer {
  return {
    venue: 'perp',
    dependsOn: params.collateralToken ? [] : [STOCK_VENUE],
    async deploy({ publicClient, walletClient, record }) {
      const collateralToken = params.collateralToken ?? stockDeploymentOf(record)?.contracts.cashToken;
      if (!collateralToken) {
        throw new AppError('INTERNAL', 'the perp venue needs the stock venue deployed first: its cash token is the collateral');
      }
      try {
        const tx = await TxBatch.open(publicClient, walletClient);
        const me = tx.from;
        const upgrader = params.upgrader ?? me;
        const marginVault = await tx.deployProxy('MarginVault', 'MarginVault', [collateralToken], [me, upgrader, params.migrating ?? false]);
        const reserveRegistry = await tx.deployProxy('ReserveRegistry', 'ReserveRegistry', [], [me, upgrader]);
        const cap = params.withdrawalCap ?? DEFAULT_WITHDRAWAL_CAP;
        await tx.call('vault.setWithdrawalCap', marginVault, marginVaultAbi, 'setWithdrawalCap', [cap.amount, BigInt(cap.periodSeconds)]);
        // The escape hatch pays against this registry's roots (docs/security.md, "Perpetual vault escape hatch").
        await tx.call('vault.setReserveRegistry', marginVault, marginVaultAbi, 'setReserveRegistry', [reserveRegistry]);
        if (params.guardian) await tx.call('vault.setGuardian', marginVault, marginVaultAbi, 'setGuardian', [params.guardian]);
        const operators = [...new Set(params.operators.map((a) => getAddress(a)))];
        for (const operator of operators) {
          await tx.call('vault.setOperator', marginVault, marginVaultAbi, 'setOperator', [operator, true]);
          await tx.call('registry.setOperator', reserveRegistry, reserveRegistryAbi, 'setOperator', [operator, true]);
        }
        // The deposit is minted to the wallet first (the deployer owns the cash token): the wallet
        // keeps the stock venue's demo cash as it was, and its deposit cannot fail on the balance.
        const deposits = (params.demoDeposits ?? []).filter((d) => d.amount > 0n);
        for (const d of deposits) {
          const wallet = privateKeyToAccount(d.privateKey).address;
          if (d.gas !== undefined && d.gas > 0n) await tx.transfer('gas for a demo wallet', wallet, d.gas);
          await tx.call('mint demo collateral', collateralToken, cashTokenAbi, 'mint', [wallet, d.amount]);
        }
        // The venue's owner-to-be: delay 0 until handOverToTimelock (docs/security.md, "Owner and upgrader").
        const timelockCode = timelockDeployArgs(me);
        const timelock = await tx.deploy('VenueTimelock', timelockCode.abi, timelockCode.bytecode, timelockCode.args);
        const deployedIn = await tx.finish();

        // The section's block is the vault's set-up: the demo deposits after it are user actions
        // the perp indexer picks up like any other.
        for (const d of deposits) {
          const user = await TxBatch.open(publicClient, privateKeyToAccount(d.privateKey));
          await user.call('approve collateral', collateralToken, cashTokenAbi, 'approve', [marginVault, d.amount]);
          await user.call('vault.deposit', marginVault, marginVaultAbi, 'deposit', [d.amount]);
          await user.finish();
        }
        const contracts = { marginVault, collateralToken, reserveRegistry };
        const section: PerpVenueDeployment = {
          release: APP_VERSION,
          code: tx.codeOf(contracts),
          blockNumber: deployedIn.blockNumber.toString(),
          firstBlockNumber: tx.firstBlock!.toString(),
          deployedAt: Date.now(),
          operator: me,
          contracts,
          timelock: { address: timelock, minDelay: 0 },
        };
        return section;
      } catch (err) {
        throw toChainError(err);
      }
    },
  };
}

/** The perpetual venue of a record as the roles take it, or undefined when the record has none. */
export function perpDeploymentOf(record: DeploymentRecord): PerpDeployment | undefined {
  const perp = record.venues.perp as PerpVenueDeployment | undefined; // shape checked when read
  return perp ? { chainId: record.chainId, ...perp } : undefined;
}

/**
 * Makes each account an operator of the MarginVault where it is not one yet (a vault deployed
 * before the perp operator's address was known here). `walletClient` must be the owner. Answers the
 * accounts granted now.
 */
export async function grantPerpOperators(params: {
  publicClient: ChainPublicClient;
  walletClient: ChainWalletClient;
  deployment: Pick<PerpDeployment, 'contracts'>;
  accounts: readonly Address[];
}): Promise<Address[]> {
  const { publicClient, walletClient } = params;
  const vault = params.deployment.contracts.marginVault;
  try {
    const missing: Address[] = [];
    for (const account of new Set(params.accounts.map((a) => getAddress(a)))) {
      const granted = await publicClient.readContract({ address: vault, abi: marginVaultAbi, functionName: 'isOperator', args: [account] });
      if (!granted) missing.push(account);
    }
    if (missing.length === 0) return [];
    // Through the venue's timelock when it owns the vault (src/chain/owner-actions.ts).
    const r = await ownerCalls({ publicClient, wallet: walletClient, label: 'vault operators', calls: missing.map((account) => ({ target: vault, abi: marginVaultAbi, functionName: 'setOperator', args: [account, true] })) });
    return r.done ? missing : [];
  } catch (err) {
    throw err instanceof AppError ? err : toChainError(err);
  }
}

/**
 * Makes the venue's ReserveRegistry present and `operators` its operators: a record written before
 * the registry existed gets one deployed now (owned by `walletClient`, the deployer), added to the
 * record's perp section in place; the caller writes the record back when `deployed` says so. A
 * registry deployed before the operator's address was known gets the operator granted. Answers the
 * registry's address, whether it was deployed now and the operators granted now.
 */
export async function ensureReserveRegistry(params: {
  publicClient: ChainPublicClient;
  walletClient: ChainWalletClient;
  record: DeploymentRecord;
  operators: readonly Address[];
}): Promise<{ reserveRegistry: Address; deployed: boolean; granted: Address[]; scheduled?: OwnerCallResult[] }> {
  const { publicClient, walletClient } = params;
  const section = params.record.venues.perp as PerpVenueDeployment | undefined;
  if (!section) throw new AppError('INTERNAL', 'the deployment record has no perp venue');
  try {
    let reserveRegistry = section.contracts.reserveRegistry;
    const operators = [...new Set(params.operators.map((a) => getAddress(a)))];
    const missing: Address[] = [];
    if (reserveRegistry === undefined) {
      const tx = await TxBatch.open(publicClient, walletClient);
      reserveRegistry = await tx.deployProxy('ReserveRegistry', 'ReserveRegistry', [], [tx.from, tx.from]);
      for (const operator of operators) await tx.call('registry.setOperator', reserveRegistry, reserveRegistryAbi, 'setOperator', [operator, true]);
      await tx.finish();
      section.contracts = { ...section.contracts, reserveRegistry };
      section.code = { ...section.code, ...tx.codeOf({ reserveRegistry }) };
      return { reserveRegistry, deployed: true, granted: operators };
    }
    for (const operator of operators) {
      const granted = await publicClient.readContract({ address: reserveRegistry, abi: reserveRegistryAbi, functionName: 'isOperator', args: [operator] });
      if (!granted) missing.push(operator);
    }
    if (missing.length > 0) {
      // Through the venue's timelock when it owns the registry (src/chain/owner-actions.ts).
      const r = await ownerCalls({ publicClient, wallet: walletClient, label: 'reserve registry operators', calls: missing.map((operator) => ({ target: reserveRegistry!, abi: reserveRegistryAbi, functionName: 'setOperator', args: [operator, true] })) });
      if (!r.done) return { reserveRegistry, deployed: false, granted: [], scheduled: r.results };
    }
    return { reserveRegistry, deployed: false, granted: missing };
  } catch (err) {
    throw err instanceof AppError ? err : toChainError(err);
  }
}

/**
 * Points the vault's escape hatch at the venue's ReserveRegistry and names its guardian where a
 * vault deployed before 0.2.0's escape hatch has neither (or another registry): through the venue's
 * timelock when it owns the vault, so with a delay these are scheduled and done at a later start.
 * Answers what it set now, or the scheduled calls.
 */
export async function ensureVaultEscapeHatch(params: {
  publicClient: ChainPublicClient;
  walletClient: ChainWalletClient;
  deployment: Pick<PerpDeployment, 'contracts'>;
  registry: Address;
  guardian?: Address;
}): Promise<{ set: Array<'registry' | 'guardian'>; scheduled?: OwnerCallResult[] }> {
  const { publicClient, walletClient } = params;
  const vault = params.deployment.contracts.marginVault;
  try {
    const [registry, guardian] = await Promise.all([
      publicClient.readContract({ address: vault, abi: marginVaultAbi, functionName: 'reserveRegistry' }),
      publicClient.readContract({ address: vault, abi: marginVaultAbi, functionName: 'guardian' }),
    ]);
    const calls: Array<{ what: 'registry' | 'guardian'; functionName: 'setReserveRegistry' | 'setGuardian'; args: [Address] }> = [];
    if (getAddress(registry) !== getAddress(params.registry)) calls.push({ what: 'registry', functionName: 'setReserveRegistry', args: [params.registry] });
    // Only a vault without one gets the configured guardian: a guardian the owner named stays.
    if (params.guardian && BigInt(guardian) === 0n) calls.push({ what: 'guardian', functionName: 'setGuardian', args: [params.guardian] });
    if (calls.length === 0) return { set: [] };
    const r = await ownerCalls({
      publicClient, wallet: walletClient, label: 'vault escape hatch',
      calls: calls.map((c) => ({ target: vault, abi: marginVaultAbi, functionName: c.functionName, args: c.args })),
    });
    return r.done ? { set: calls.map((c) => c.what) } : { set: [], scheduled: r.results };
  } catch (err) {
    throw err instanceof AppError ? err : toChainError(err);
  }
}
