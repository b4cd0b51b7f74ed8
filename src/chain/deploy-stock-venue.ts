/**
 * The stock venue's deployment (docs/contracts.md): the routers, the Cashier, the cash token, the
 * account lens, one token per listed stock, the dividend distributor and the venue's timelock, wired
 * and funded in one batch (deploy-tx-batch.ts); its VenueDeployer for ensureVenues
 * (deploy-venues.ts); its operators granted later to a recorded deployment.
 */
import { getAddress, parseUnits, type Address } from 'viem';
import { AppError } from '../errors/app-error.ts';
import { cashierAbi, cashTokenAbi, cashTokenBytecode, oneClickRouterAbi, stockAbi, stockRouterAbi } from './abi/generated/index.ts';
import { APP_VERSION } from '../config/build-info.ts';
import { toChainError, type ChainPublicClient, type ChainWalletClient } from './chain-client.ts';
import { ensureCreate2Factory } from './deploy-create2-factory.ts';
import type { DeployNote } from './deploy-deterministic-address.ts';
import { queueDividendDistributor } from './deploy-dividend-distributor.ts';
import { TxBatch } from './deploy-tx-batch.ts';
import type { VenueDeployer } from './deploy-venues.ts';
import type { Deployment, DeploymentRecord, StockVenueDeployment } from './deployment-file.ts';
import { ownerCalls, timelockDeployArgs, type OwnerCallResult, type OwnerCallSpec } from './owner-actions.ts';

/** What the chain needs to list a stock: its token's symbol and name (the caller's catalog has more). */
export interface StockListing {
  symbol: string;
  name: string;
}

// The stock venue's shapes live with the record they are read from and written to.
export type { Deployment, DeploymentContracts, StockVenueDeployment } from './deployment-file.ts';

/** Overrides of the demo configuration; amounts are bigint in the units named. */
export interface DeployStackOptions {
  /** Treasury account (counterparty of every settlement). Default: the deployer. */
  treasury?: Address;
  /**
   * The operators of the StockRouter, the Cashier and the DividendDistributor: the executor's
   * address in the app (src/chain/venue-roles.ts; docs/security.md, "Who holds which role"). The
   * deployer is not one unless `deployerOperator` says so.
   */
  operators?: Address[];
  /**
   * Make the deployer an operator too. Default false: the admin key (OPERATOR_PRIVATE_KEY) proposes
   * owner changes through the timelock and settles nothing (issue 60). Test fixtures and benches whose
   * one key deploys and settles opt in explicitly, as they opt out of `requireOracle`.
   */
  deployerOperator?: boolean;
  /** mUSD (18 decimals). Default 1,000,000. */
  creditBuffer?: bigint;
  /** USDC units (6 decimals). Default 250,000. */
  withdrawBuffer?: bigint;
  /** USDC units. Default 1. */
  minAmount?: bigint;
  /** USDC units minted to the deployer and credited to the treasury. Default 5,000,000. */
  treasuryFunding?: bigint;
  /** USDC units minted to each demo wallet. Default 100,000. */
  walletCash?: bigint;
  /** Stock units (18 decimals) of every stock minted to each demo wallet. Default 100. */
  walletStock?: bigint;
  marketFeeBps?: number;
  limitFeeBps?: number;
  /** The upgrade authority of every proxy (docs/upgrades.md). Default: the deployer. */
  upgrader?: Address;
  /** The StockRouter's first order id. Default 1; a migrated venue continues its predecessor's numbering. */
  firstOrderId?: bigint;
  /** An existing cash token (a migrated venue keeps its predecessor's). Default: a demo CashToken is deployed. */
  cashToken?: Address;
  /**
   * Opens the migration window of the Cashier, the Stocks and the OneClickRouter: they take over a
   * deployment from before the proxies (docs/upgrades.md). Default false.
   */
  migrating?: boolean;
  /**
   * The StockRouter's `requireOracle` (docs/security.md, "Executor key"): true, the contract's own
   * default, refuses fills of a stock without a price feed. false is an explicit opt-out for a chain
   * whose stocks are filled without feeds (test fixtures that fill at arbitrary prices); the app
   * leaves it to `ensurePriceFeeds`, which turns it off only with `ORACLE_TOLERANCE_BPS=0`.
   */
  requireOracle?: boolean;
  /** The StockRouter's guardian, who can pause (docs/security.md, "Guardian"). Default: none. */
  guardian?: Address;
  /**
   * Deploy the venue's proxies and timelock through the CREATE2 factory, at addresses that depend on
   * the deployer only, the same on every chain (docs/contracts.md, "Same addresses on every chain").
   * Default true; false deploys at the deployer's nonce-derived addresses, as releases before did.
   */
  deterministic?: boolean;
}

export const DEMO_DEFAULTS = {
  creditBuffer: parseUnits('1000000', 18),
  withdrawBuffer: parseUnits('250000', 6),
  minAmount: parseUnits('1', 6),
  treasuryFunding: parseUnits('5000000', 6),
  walletCash: parseUnits('100000', 6),
  walletStock: parseUnits('100', 18),
  marketFeeBps: 10,
  limitFeeBps: 5,
} as const;

export const CASH_TOKEN_DECIMALS = 6;

/**
 * Deploys and wires the whole stock stack and funds the demo wallets. The caller's wallet becomes
 * owner and (unless overridden) treasury; the operators are `options.operators` (the deployer only
 * with `deployerOperator`). Only the caller's account sends transactions;
 * it must be a local account (private key).
 */
export async function deployStack(params: {
  publicClient: ChainPublicClient;
  walletClient: ChainWalletClient;
  symbols: readonly StockListing[];
  demoWallets: readonly Address[];
  options?: DeployStackOptions;
  /** Told about the deterministic addresses where they could not be had (the app logs it). */
  note?: DeployNote;
}): Promise<Deployment> {
  const { publicClient, walletClient, symbols, demoWallets, note } = params;
  const o = { ...DEMO_DEFAULTS, ...params.options };
  try {
    // Before the batch: deploying the factory takes transactions of its own.
    const factory = o.deterministic === false ? undefined : await ensureCreate2Factory({ publicClient, walletClient, note });
    const tx = await TxBatch.open(publicClient, walletClient);
    if (factory) tx.deterministic(note);
    const me = tx.from;

    const upgrader = o.upgrader ?? me;
    const migrating = o.migrating ?? false;

    // The demo's cash token is not the venue's (on a real chain it is USDC): no proxy.
    const cashToken = o.cashToken ?? (await tx.deploy('CashToken', cashTokenAbi, cashTokenBytecode, [me]));
    const oneClickRouter = await tx.deployProxy('OneClickRouter', 'OneClickRouter', [], [me, upgrader, migrating]);
    const cashier = await tx.deployProxy('Cashier', 'Cashier', [], [me, upgrader, migrating]);
    const stockRouter = await tx.deployProxy('StockRouter', 'StockRouter', [cashier, oneClickRouter], [me, upgrader, o.firstOrderId ?? 1n]);
    const accountLens = await tx.deployPlain('AccountLens', 'AccountLens', [cashier, stockRouter]);
    const stocks: Record<string, Address> = {};
    for (const s of symbols) {
      stocks[s.symbol] = await tx.deployProxy(`Stock ${s.symbol}`, 'Stock', [], [s.name, s.symbol, me, upgrader, migrating]);
    }

    await tx.call('setStockRouter', oneClickRouter, oneClickRouterAbi, 'setStockRouter', [stockRouter]);
    await tx.call('cashier.setRouter', cashier, cashierAbi, 'setRouter', [stockRouter]);
    for (const [symbol, stock] of Object.entries(stocks)) {
      await tx.call(`${symbol}.setRouter`, stock, stockAbi, 'setRouter', [stockRouter]);
      await tx.call(`listStock ${symbol}`, stockRouter, stockRouterAbi, 'listStock', [stock]);
    }
    await tx.call('configureToken', cashier, cashierAbi, 'configureToken', [
      cashToken,
      true,
      CASH_TOKEN_DECIMALS,
      o.minAmount,
      o.withdrawBuffer,
    ]);
    await tx.call('setCreditBuffer', cashier, cashierAbi, 'setCreditBuffer', [o.creditBuffer]);
    await tx.call('setFeeConfig', stockRouter, stockRouterAbi, 'setFeeConfig', [
      { marketFeeBps: o.marketFeeBps, limitFeeBps: o.limitFeeBps },
    ]);
    if (o.requireOracle === false) await tx.call('setRequireOracle', stockRouter, stockRouterAbi, 'setRequireOracle', [false]);
    if (o.guardian) await tx.call('setGuardian', stockRouter, stockRouterAbi, 'setGuardian', [o.guardian]);
    const operators = venueOperators(me, o);
    for (const operator of operators) {
      await tx.call('router.setOperator', stockRouter, stockRouterAbi, 'setOperator', [operator, true]);
      await tx.call('cashier.setOperator', cashier, cashierAbi, 'setOperator', [operator, true]);
    }
    if (o.treasury && o.treasury.toLowerCase() !== me.toLowerCase()) {
      await tx.call('setTreasury', cashier, cashierAbi, 'setTreasury', [o.treasury]);
    }
    if (o.treasuryFunding > 0n) {
      // fundTreasury is an operator's call: a deployer that is not one is made one for this call
      // only and revoked in the same batch, so the deployment ends with the operators configured.
      const temporary = !operators.some((a) => a.toLowerCase() === me.toLowerCase());
      if (temporary) await tx.call('cashier.setOperator(deployer) for the funding', cashier, cashierAbi, 'setOperator', [me, true]);
      await tx.call('mint treasury funding', cashToken, cashTokenAbi, 'mint', [me, o.treasuryFunding]);
      await tx.call('approve treasury funding', cashToken, cashTokenAbi, 'approve', [cashier, o.treasuryFunding]);
      await tx.call('fundTreasury', cashier, cashierAbi, 'fundTreasury', [cashToken, o.treasuryFunding]);
      if (temporary) await tx.call('cashier.setOperator(deployer, false)', cashier, cashierAbi, 'setOperator', [me, false]);
    }
    for (const wallet of demoWallets) {
      if (o.walletCash > 0n) await tx.call('mint USDC', cashToken, cashTokenAbi, 'mint', [wallet, o.walletCash]);
      if (o.walletStock > 0n) {
        for (const [symbol, stock] of Object.entries(stocks)) {
          await tx.call(`mint ${symbol}`, stock, stockAbi, 'mint', [wallet, o.walletStock]);
        }
      }
    }

    // Dividends (docs/corporate-actions.md): paid by the operators, so each is one of the distributor's.
    const dividendDistributor = await queueDividendDistributor(tx, { operators, cashToken, demo: demoWallets.length > 0, upgrader });

    // The venue's owner-to-be (docs/security.md, "Owner and upgrader"): delay 0 until
    // handOverToTimelock, after the deployment's configuration, hands the contracts over and sets it.
    const timelockCode = timelockDeployArgs(me);
    const timelock = await tx.deployDeterministic('VenueTimelock', timelockCode.abi, timelockCode.bytecode, timelockCode.args);

    const last = await tx.finish();
    const contracts = { stockRouter, oneClickRouter, cashier, cashToken, accountLens, stocks, dividendDistributor };
    return {
      chainId: tx.chain,
      timelock: { address: timelock, minDelay: 0 },
      release: APP_VERSION,
      blockNumber: last.blockNumber.toString(),
      firstBlockNumber: tx.firstBlock!.toString(),
      deployedAt: Date.now(),
      operator: me,
      contracts,
      code: tx.codeOf(contracts),
    };
  } catch (err) {
    throw err instanceof AppError ? err : toChainError(err);
  }
}

/** The stock venue's operators a deployment grants: `operators`, and the deployer only when asked (deduplicated). */
function venueOperators(me: Address, o: Pick<DeployStackOptions, 'operators' | 'deployerOperator'>): Address[] {
  const out: Address[] = [];
  for (const a of [...(o.deployerOperator ? [me] : []), ...(o.operators ?? [])]) {
    if (!out.some((x) => x.toLowerCase() === a.toLowerCase())) out.push(getAddress(a));
  }
  return out;
}

/** The stock venue: routers, cashier, cash token, account lens and one token per listed stock. */
export function stockVenueDeployer(params: {
  symbols: readonly StockListing[];
  demoWallets: readonly Address[];
  options?: DeployStackOptions;
}): VenueDeployer {
  return {
    venue: 'stock',
    async deploy({ publicClient, walletClient, note }) {
      const { chainId: _chainId, ...section } = await deployStack({ publicClient, walletClient, note, ...params });
      return section;
    },
  };
}

/** The stock venue of a record as the roles take it, or undefined when the record has none. */
export function stockDeploymentOf(record: DeploymentRecord): Deployment | undefined {
  const stock = record.venues.stock as StockVenueDeployment | undefined; // shape checked when read
  return stock ? { chainId: record.chainId, ...stock } : undefined;
}

/**
 * Makes each account an operator of the stock venue's StockRouter and Cashier where it is not one
 * yet (a deployment recorded before the account had a key of its own). `walletClient` must be the owner.
 * Answers the accounts granted now.
 */
export async function grantStockOperators(params: {
  publicClient: ChainPublicClient;
  walletClient: ChainWalletClient;
  deployment: Pick<Deployment, 'contracts'>;
  accounts: readonly Address[];
  /** Called when the grant is scheduled in the venue's timelock rather than made now (a delay > 0). */
  onScheduled?: (results: OwnerCallResult[]) => void;
}): Promise<Address[]> {
  const { publicClient, walletClient } = params;
  const { stockRouter, cashier } = params.deployment.contracts;
  try {
    const missing: Address[] = [];
    for (const account of params.accounts) {
      const [onRouter, onCashier] = await Promise.all([
        publicClient.readContract({ address: stockRouter, abi: stockRouterAbi, functionName: 'isOperator', args: [account] }),
        publicClient.readContract({ address: cashier, abi: cashierAbi, functionName: 'isOperator', args: [account] }),
      ]);
      if (onRouter && onCashier) continue;
      missing.push(account);
    }
    if (missing.length === 0) return [];
    // Through the timelock when it owns the venue (src/chain/owner-actions.ts).
    const calls: OwnerCallSpec[] = missing.flatMap((account) => [
      { target: stockRouter, abi: stockRouterAbi, functionName: 'setOperator', args: [account, true] },
      { target: cashier, abi: cashierAbi, functionName: 'setOperator', args: [account, true] },
    ]);
    const r = await ownerCalls({ publicClient, wallet: walletClient, calls, label: 'stock venue operators' });
    if (!r.done) {
      params.onScheduled?.(r.results);
      return [];
    }
    return missing;
  } catch (err) {
    throw err instanceof AppError ? err : toChainError(err);
  }
}
