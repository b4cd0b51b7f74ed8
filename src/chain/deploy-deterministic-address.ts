/**
 * Where a venue's contracts land when deployed through the CREATE2 factory: addresses that depend on
 * the deployer and the contract's label only, the same on every chain (docs/contracts.md, "Same
 * addresses on every chain"). Pure computations and constants; the factory itself is put on a chain
 * by deploy-create2-factory.ts and used by deploy-tx-batch.ts.
 */
import { encodeDeployData, encodeFunctionData, getContractAddress, keccak256, toHex, type Address, type Hex } from 'viem';
import { venueBootstrapAbi, venueBootstrapBytecode, venueProxyAbi, venueProxyBytecode } from './abi/generated/index.ts';

/**
 * The deterministic deployment proxy (github.com/Arachnid/deterministic-deployment-proxy): called
 * with `salt ‖ initcode`, it creates the contract with CREATE2 and reverts when the creation fails.
 * It is at this address on every chain that has it (anvil predeploys it, most public chains have it),
 * because it is deployed by a presigned transaction without a chain id.
 */
export const CREATE2_FACTORY: Address = '0x4e59b44847b379578588920ca78fbf26c0b4956c';
/** That presigned transaction (the signer's nonce 0, 100,000 gas at 100 gwei, no chain id) and its signer. */
export const CREATE2_FACTORY_DEPLOY_TX: Hex =
  '0xf8a58085174876e800830186a08080b853604580600e600039806000f350fe7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe03601600081602082378035828234f58015156039578182fd5b8082525050506014600cf31ba02222222222222222222222222222222222222222222222222222222222222222a02222222222222222222222222222222222222222222222222222222222222222';
export const CREATE2_FACTORY_SIGNER: Address = '0x3fab184622dc19b6109349b94811493bf2a45362';

/** The CREATE2 salt of a venue contract: its name in the batch (`StockRouter`, `Stock AAPL`). */
export function deterministicSalt(label: string): Hex {
  return keccak256(toHex(`tokex.venue:${label}`));
}

/** What the factory creates from `initcode` with `salt`. */
export function deterministicAddress(initcode: Hex, salt: Hex): Address {
  return getContractAddress({ opcode: 'CREATE2', from: CREATE2_FACTORY, salt, bytecode: initcode });
}

/** The VenueBootstrap implementation every deterministic proxy starts with (one per chain, no arguments). */
export function venueBootstrapAddress(): Address {
  return deterministicAddress(venueBootstrapBytecode, deterministicSalt('VenueBootstrap'));
}

/**
 * Where the deterministic proxy of `label` deployed by `deployer` is, on any chain: it depends on
 * VenueProxy's and VenueBootstrap's code, the deployer and the label only.
 */
export function deterministicProxyAddress(deployer: Address, label: string): Address {
  return deterministicAddress(deterministicProxyInitcode(deployer), deterministicSalt(label));
}

/** A deterministic proxy's initcode: the VenueProxy in front of the VenueBootstrap, which only `deployer` can upgrade. */
export function deterministicProxyInitcode(deployer: Address): Hex {
  const bootstrap = encodeFunctionData({ abi: venueBootstrapAbi, functionName: 'bootstrap', args: [deployer] });
  return encodeDeployData({ abi: venueProxyAbi, bytecode: venueProxyBytecode, args: [venueBootstrapAddress(), bootstrap] });
}

/** How a deployment says what it did about the deterministic addresses (the app logs it). */
export type DeployNote = (level: 'info' | 'warn', message: string, detail?: Record<string, unknown>) => void;
