/**
 * The venue's contracts as deployable code (docs/upgrades.md): which ones sit behind a proxy, what
 * each implementation's constructor takes, and the hash of the code this build compiled. The deploy
 * functions, the deployment record's `code` section and the upgrade planner all read this one table.
 */
import type { Abi, Address, Hex } from 'viem';
import {
  accountLensAbi,
  accountLensBytecode,
  cashierAbi,
  cashierBytecode,
  contractCodeHashes,
  dividendDistributorAbi,
  dividendDistributorBytecode,
  marginVaultAbi,
  marginVaultBytecode,
  oneClickRouterAbi,
  oneClickRouterBytecode,
  priceFeedHubAbi,
  priceFeedHubBytecode,
  reserveRegistryAbi,
  reserveRegistryBytecode,
  stockAbi,
  stockBytecode,
  stockRouterAbi,
  stockRouterBytecode,
} from './abi/generated/index.ts';
import type { ChainPublicClient } from './chain-client.ts';
import type { DeployedCode } from './deployment-file.ts';

export interface VenueContractCode {
  abi: Abi;
  bytecode: Hex;
  /**
   * Behind a VenueProxy (UUPS): state survives an upgrade. A contract without a proxy holds no state
   * (AccountLens) and is deployed anew when its code changes.
   */
  upgradeable: boolean;
  /**
   * The implementation's constructor arguments (its immutables) as the deployed proxy at `address`
   * holds them, so that an upgrade builds the new implementation for the same venue.
   */
  constructorArgs(client: ChainPublicClient, address: Address): Promise<readonly unknown[]>;
}

const none = async (): Promise<readonly unknown[]> => [];

export const VENUE_CONTRACTS = {
  Cashier: { abi: cashierAbi, bytecode: cashierBytecode, upgradeable: true, constructorArgs: none },
  Stock: { abi: stockAbi, bytecode: stockBytecode, upgradeable: true, constructorArgs: none },
  OneClickRouter: { abi: oneClickRouterAbi, bytecode: oneClickRouterBytecode, upgradeable: true, constructorArgs: none },
  StockRouter: {
    abi: stockRouterAbi,
    bytecode: stockRouterBytecode,
    upgradeable: true,
    async constructorArgs(client, address) {
      const [cashier, forwarder] = await Promise.all([
        client.readContract({ address, abi: stockRouterAbi, functionName: 'cashier' }),
        client.readContract({ address, abi: stockRouterAbi, functionName: 'trustedForwarder' }),
      ]);
      return [cashier, forwarder];
    },
  },
  DividendDistributor: { abi: dividendDistributorAbi, bytecode: dividendDistributorBytecode, upgradeable: true, constructorArgs: none },
  PriceFeedHub: { abi: priceFeedHubAbi, bytecode: priceFeedHubBytecode, upgradeable: true, constructorArgs: none },
  MarginVault: {
    abi: marginVaultAbi,
    bytecode: marginVaultBytecode,
    upgradeable: true,
    async constructorArgs(client, address) {
      return [await client.readContract({ address, abi: marginVaultAbi, functionName: 'collateralToken' })];
    },
  },
  ReserveRegistry: { abi: reserveRegistryAbi, bytecode: reserveRegistryBytecode, upgradeable: true, constructorArgs: none },
  AccountLens: {
    abi: accountLensAbi,
    bytecode: accountLensBytecode,
    upgradeable: false,
    async constructorArgs(client, address) {
      const [cashier, router] = await Promise.all([
        client.readContract({ address, abi: accountLensAbi, functionName: 'cashier' }),
        client.readContract({ address, abi: accountLensAbi, functionName: 'router' }),
      ]);
      return [cashier, router];
    },
  },
} satisfies Record<string, VenueContractCode>;

export type VenueContractName = keyof typeof VENUE_CONTRACTS;

export function isVenueContract(name: string): name is VenueContractName {
  return Object.hasOwn(VENUE_CONTRACTS, name);
}

/** The hash of `contract`'s runtime code in this build. */
export function buildCodeHash(contract: VenueContractName): Hex {
  const hash = (contractCodeHashes as Record<string, Hex>)[contract];
  if (!hash) throw new Error(`build: no code hash for ${contract}`);
  return hash;
}

/** The record's entry for `contract` as this build deploys it. */
export function deployedCodeOf(contract: VenueContractName, implementation?: Address): DeployedCode {
  return { contract, ...(implementation ? { implementation } : {}), codeHash: buildCodeHash(contract) };
}
