import {
  concat,
  encodeDeployData,
  encodeFunctionData,
  getAddress,
  getContractAddress,
  keccak256,
  parseUnits,
  toHex,
  WaitForTransactionReceiptTimeoutError,
  type Abi,
  type Address,
  type Hash,
  type Hex,
  type PrivateKeyAccount,
  type TransactionReceipt,
} from 'viem';
import { AppError, ChainRevertError } from '../errors/app-error.ts';
import {
  cashierAbi,
  cashTokenAbi,
  cashTokenBytecode,
  oneClickRouterAbi,
  priceFeedAbi,
  priceFeedBytecode,
  priceFeedHubAbi,
  stockAbi,
  stockRouterAbi,
  venueBootstrapAbi,
  venueBootstrapBytecode,
  venueProxyAbi,
  venueProxyBytecode,
} from './abi/generated/index.ts';
import { APP_VERSION } from '../config/build-info.ts';
import { deployedCodeOf, VENUE_CONTRACTS, type VenueContractName } from './venue-code.ts';
import { toChainError, type ChainPublicClient, type ChainWalletClient } from './chain-client.ts';
import type { ContractAddresses, DeployedCode, Deployment, DeploymentContracts, DeploymentRecord, StockVenueDeployment, VenueDeployment } from './deployment-file.ts';
import { queueDividendDistributor } from './deploy-dividend-distributor.ts';
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

// Explicit gas limits: a dependent transaction cannot be estimated before its predecessor is
// mined, and skipping estimation makes the deploy a single round trip per transaction.
const DEPLOY_GAS = 6_000_000n;
const CALL_GAS = 300_000n;
/** A proxy through the CREATE2 factory: the proxy's small code and the bootstrap's one slot. */
const PROXY_CREATE2_GAS = 1_000_000n;
/** The bootstrap's upgrade to the real implementation with its `initialize` (a Stock's name and symbol). */
const PROXY_UPGRADE_GAS = 800_000n;

// ----------------------------------------------------- deterministic addresses

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
/** What the presigned transaction costs its signer at most (gas × gas price): funded by the deployer. */
const CREATE2_FACTORY_DEPLOY_COST = 100_000n * 100_000_000_000n;
/** The ERC-1967 implementation slot. */
const IMPLEMENTATION_SLOT: Hex = '0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc';

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

function deterministicProxyInitcode(deployer: Address): Hex {
  const bootstrap = encodeFunctionData({ abi: venueBootstrapAbi, functionName: 'bootstrap', args: [deployer] });
  return encodeDeployData({ abi: venueProxyAbi, bytecode: venueProxyBytecode, args: [venueBootstrapAddress(), bootstrap] });
}

/** How a deployment says what it did about the deterministic addresses (the app logs it). */
export type DeployNote = (level: 'info' | 'warn', message: string, detail?: Record<string, unknown>) => void;

/**
 * The CREATE2 factory of the chain behind `publicClient`: present already, or deployed now with its
 * presigned transaction (offline: the transaction is a constant) after funding its signer from
 * `walletClient`. Answers undefined, with a note, when the chain has none and refuses that
 * transaction (a node that takes only EIP-155 transactions, a base fee above 100 gwei, the signer's
 * nonce used): the caller then deploys at nonce-derived addresses.
 */
export async function ensureCreate2Factory(params: {
  publicClient: ChainPublicClient;
  walletClient: ChainWalletClient;
  note?: DeployNote;
}): Promise<Address | undefined> {
  const { publicClient, walletClient, note } = params;
  const present = async () => {
    const code = await publicClient.getCode({ address: CREATE2_FACTORY });
    return code !== undefined && code !== '0x';
  };
  try {
    if (await present()) return CREATE2_FACTORY;
  } catch (err) {
    throw toChainError(err);
  }
  let reason: string;
  try {
    const [nonce, balance] = await Promise.all([
      publicClient.getTransactionCount({ address: CREATE2_FACTORY_SIGNER }),
      publicClient.getBalance({ address: CREATE2_FACTORY_SIGNER }),
    ]);
    if (nonce !== 0) {
      reason = `its signer's nonce 0 is used (nonce ${nonce}) without the factory at its address`;
    } else {
      if (balance < CREATE2_FACTORY_DEPLOY_COST) {
        const fund = await TxBatch.open(publicClient, walletClient);
        await fund.transfer('fund the CREATE2 factory\'s signer', CREATE2_FACTORY_SIGNER, CREATE2_FACTORY_DEPLOY_COST - balance);
        await fund.finish();
      }
      const hash = await publicClient.sendRawTransaction({ serializedTransaction: CREATE2_FACTORY_DEPLOY_TX });
      const receipt = await publicClient.waitForTransactionReceipt({ hash, timeout: 60_000 });
      if (receipt.status === 'success' && (await present())) {
        note?.('info', 'the chain had no CREATE2 factory: deployed it with its presigned transaction', { factory: CREATE2_FACTORY, txHash: hash });
        return CREATE2_FACTORY;
      }
      reason = 'its presigned transaction reverted';
    }
  } catch (err) {
    reason = `its presigned transaction was refused: ${(err as Error).message.split('\n')[0].slice(0, 200)}`;
  }
  note?.('warn', `the chain has no CREATE2 factory at ${CREATE2_FACTORY} and ${reason}: the venue is deployed at nonce-derived addresses, which differ from the other chains'`, { factory: CREATE2_FACTORY });
  return undefined;
}

interface FeeFields {
  maxFeePerGas?: bigint;
  maxPriorityFeePerGas?: bigint;
  gasPrice?: bigint;
}

/** How long `TxBatch.finish` waits for the batch's last receipt in all. */
export const TX_BATCH_RECEIPT_TIMEOUT_MS = 120_000;
/** How long it waits before it broadcasts again what the node has not mined. */
export const TX_BATCH_REBROADCAST_AFTER_MS = 10_000;

/**
 * Sends transactions back to back with locally managed nonces and waits for all receipts at the
 * end (a mined nonce n implies every nonce below it is mined). For deployments and other one-off
 * set-up only: the sending roles use tx-sender.ts.
 */
export class TxBatch {
  private readonly sent: Array<{ label: string; hash: Hash; nonce: number; serialized: Hex; contract?: Address }> = [];
  /** Implementations deployed in this batch by contract and constructor arguments: proxies of one kind share one. */
  private readonly implementations = new Map<string, Address>();
  /** What each address deployed in this batch runs, for the record's `code` section. */
  readonly code = new Map<Address, DeployedCode>();
  /** The earliest block among the receipts, once `finish` has answered. */
  firstBlock: bigint | undefined;
  /** Set by `deterministic`: proxies and `deployDeterministic` go through the CREATE2 factory. */
  private create2?: { note?: DeployNote };
  /** Addresses this batch creates through the factory: checked for code once mined. */
  private readonly created = new Set<Address>();
  /** What each deterministic address was found to hold before this batch (read once). */
  private readonly found = new Map<Address, Hex | undefined>();

  private constructor(
    private readonly publicClient: ChainPublicClient,
    private readonly account: PrivateKeyAccount,
    private readonly chainId: number,
    private nonce: number,
    private readonly fees: FeeFields,
  ) {}

  /** `signer`: a wallet client, or a local account (a user's wallet in a demo set-up). */
  static async open(publicClient: ChainPublicClient, signer: ChainWalletClient | PrivateKeyAccount): Promise<TxBatch> {
    const account = 'account' in signer ? signer.account : signer;
    const from = account.address;
    const [chainId, nonce, fees] = await Promise.all([
      publicClient.getChainId(),
      publicClient.getTransactionCount({ address: from, blockTag: 'pending' }),
      publicClient.estimateFeesPerGas().then(
        (f): FeeFields => ({ maxFeePerGas: f.maxFeePerGas, maxPriorityFeePerGas: f.maxPriorityFeePerGas }),
        async (): Promise<FeeFields> => ({ gasPrice: await publicClient.getGasPrice() }),
      ),
    ]);
    // Head-room so that a rising base fee during the deploy does not strand a transaction.
    if (fees.maxFeePerGas !== undefined) fees.maxFeePerGas *= 2n;
    return new TxBatch(publicClient, account, chainId, nonce, fees);
  }

  get chain(): number {
    return this.chainId;
  }

  get from(): Address {
    return this.account.address;
  }

  async deploy(label: string, abi: Abi, bytecode: Hex, args: readonly unknown[]): Promise<Address> {
    const contract = getContractAddress({ from: this.from, nonce: BigInt(this.nonce) });
    const data = encodeDeployData({ abi, bytecode, args });
    await this.send(label, undefined, data, DEPLOY_GAS, contract);
    return contract;
  }

  /**
   * From now on, `deployProxy` and `deployDeterministic` create their contracts through the CREATE2
   * factory (which the caller made sure the chain has: `ensureCreate2Factory`), at addresses that are
   * the same on every chain (docs/contracts.md, "Same addresses on every chain"). An address already
   * taken on this chain (this deployer deployed the venue here before) falls back to a nonce-derived
   * one, with a note.
   */
  deterministic(note?: DeployNote): void {
    this.create2 = { note };
  }

  /**
   * Deploys `contract`'s implementation (once per constructor arguments in this batch) and a
   * VenueProxy in front of it that runs `initialize(...initArgs)` in its constructor, so the proxy
   * is never seen uninitialized. Answers the proxy's address. In a deterministic batch the proxy is
   * created through the CREATE2 factory in front of the VenueBootstrap, then upgraded by this
   * batch's account to the implementation with `initialize(...initArgs)`: only that account can.
   */
  async deployProxy(label: string, contract: VenueContractName, ctorArgs: readonly unknown[], initArgs: readonly unknown[]): Promise<Address> {
    const code = VENUE_CONTRACTS[contract];
    const implementation = await this.deployImplementation(contract, ctorArgs);
    const init = encodeFunctionData({ abi: code.abi as Abi, functionName: 'initialize', args: initArgs });
    const proxy =
      (this.create2 && (await this.deterministicProxy(label, implementation, init))) ??
      (await this.deploy(label, venueProxyAbi, venueProxyBytecode, [implementation, init]));
    this.code.set(proxy, deployedCodeOf(contract, implementation));
    return proxy;
  }

  /**
   * Deploys a contract through the CREATE2 factory with `label`'s salt in a deterministic batch (at
   * a nonce-derived address otherwise, or when that address is taken on this chain). For a contract
   * whose constructor arguments are the same on every chain (the venue's timelock).
   */
  async deployDeterministic(label: string, abi: Abi, bytecode: Hex, args: readonly unknown[]): Promise<Address> {
    if (this.create2) {
      const initcode = encodeDeployData({ abi, bytecode, args });
      const address = deterministicAddress(initcode, deterministicSalt(label));
      if ((await this.codeBefore(address)) === undefined) {
        await this.create(label, initcode, deterministicSalt(label), address, DEPLOY_GAS);
        return address;
      }
      this.taken(label, address);
    }
    return this.deploy(label, abi, bytecode, args);
  }

  /** The deterministic proxy of `label` upgraded to `implementation` with `init`; undefined when its address is taken. */
  private async deterministicProxy(label: string, implementation: Address, init: Hex): Promise<Address | undefined> {
    const bootstrap = venueBootstrapAddress();
    if ((await this.codeBefore(bootstrap)) === undefined) {
      // One per chain, stateless: deployed by the first deterministic batch (any deployer's).
      await this.create('VenueBootstrap', venueBootstrapBytecode, deterministicSalt('VenueBootstrap'), bootstrap, DEPLOY_GAS);
    }
    const salt = deterministicSalt(label);
    const initcode = deterministicProxyInitcode(this.from);
    const proxy = deterministicAddress(initcode, salt);
    if ((await this.codeBefore(proxy)) === undefined) {
      await this.create(label, initcode, salt, proxy, PROXY_CREATE2_GAS);
    } else if (!(await this.stillBootstrapped(proxy, bootstrap))) {
      this.taken(label, proxy);
      return undefined;
    }
    // Created by someone else with this deployer (a copy of our own transaction): still ours alone to upgrade.
    await this.send(`${label} upgradeToAndCall`, proxy, encodeFunctionData({ abi: venueBootstrapAbi, functionName: 'upgradeToAndCall', args: [implementation, init] }), PROXY_UPGRADE_GAS);
    return proxy;
  }

  /** Whether the proxy at `proxy` still runs the bootstrap with this batch's account as its deployer. */
  private async stillBootstrapped(proxy: Address, bootstrap: Address): Promise<boolean> {
    if (this.created.has(proxy)) return false;
    const slot = await this.publicClient.getStorageAt({ address: proxy, slot: IMPLEMENTATION_SLOT });
    if (slot === undefined || BigInt(slot) !== BigInt(bootstrap)) return false;
    const deployer = await this.publicClient.readContract({ address: proxy, abi: venueBootstrapAbi, functionName: 'deployer' });
    return deployer.toLowerCase() === this.from.toLowerCase();
  }

  /** The code at `address` before this batch, or undefined when none; an address this batch creates counts as taken. */
  private async codeBefore(address: Address): Promise<Hex | undefined> {
    if (this.created.has(address)) return '0x00';
    if (!this.found.has(address)) {
      const code = await this.publicClient.getCode({ address });
      this.found.set(address, code === undefined || code === '0x' ? undefined : code);
    }
    return this.found.get(address);
  }

  private async create(label: string, initcode: Hex, salt: Hex, address: Address, gas: bigint): Promise<void> {
    this.created.add(address);
    await this.send(`${label} (CREATE2)`, CREATE2_FACTORY, concat([salt, initcode]), gas);
  }

  private taken(label: string, address: Address): void {
    this.create2?.note?.('warn', `${label}: its deterministic address ${address} is taken on this chain (a venue this deployer deployed here before): deployed at a nonce-derived address instead, which differs from the other chains'`, { contract: label, address });
  }

  /** Deploys a contract without a proxy (a stateless one) and notes its code for the record. */
  async deployPlain(label: string, contract: VenueContractName, args: readonly unknown[]): Promise<Address> {
    const code = VENUE_CONTRACTS[contract];
    const address = await this.deploy(label, code.abi, code.bytecode, args);
    this.code.set(address, deployedCodeOf(contract));
    return address;
  }

  /** `contract`'s implementation for `ctorArgs`, deployed now unless this batch already did. */
  async deployImplementation(contract: VenueContractName, ctorArgs: readonly unknown[]): Promise<Address> {
    const key = `${contract}:${JSON.stringify(ctorArgs, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))}`;
    const known = this.implementations.get(key);
    if (known) return known;
    const code = VENUE_CONTRACTS[contract];
    const implementation = await this.deploy(`${contract} implementation`, code.abi, code.bytecode, ctorArgs);
    this.implementations.set(key, implementation);
    return implementation;
  }

  /** The record's `code` section for the named addresses of `contracts` (nested groups as dotted paths). */
  codeOf(contracts: ContractAddresses): Record<string, DeployedCode> {
    const out: Record<string, DeployedCode> = {};
    const walk = (group: ContractAddresses, prefix: string) => {
      for (const [name, value] of Object.entries(group)) {
        if (typeof value === 'string') {
          const code = this.code.get(value);
          if (code) out[`${prefix}${name}`] = code;
        } else {
          walk(value, `${prefix}${name}.`);
        }
      }
    };
    walk(contracts, '');
    return out;
  }

  /** `gas`: the limit when the call may need more than a set-up call's (an estimate, with head-room). */
  async call(label: string, to: Address, abi: Abi, functionName: string, args: readonly unknown[], gas = CALL_GAS): Promise<void> {
    await this.send(label, to, encodeFunctionData({ abi, functionName, args }), gas);
  }

  /** Sends `value` wei of the native coin to `to` (gas for a demo wallet anvil did not fund). */
  async transfer(label: string, to: Address, value: bigint): Promise<void> {
    await this.send(label, to, '0x', 21_000n, undefined, value);
  }

  private async send(label: string, to: Address | undefined, data: Hex, gas: bigint, contract?: Address, value = 0n): Promise<void> {
    const nonce = this.nonce++;
    const account = this.account;
    const base = { chainId: this.chainId, nonce, gas, to, data, value } as const;
    const request =
      this.fees.gasPrice !== undefined
        ? { ...base, type: 'legacy' as const, gasPrice: this.fees.gasPrice }
        : {
            ...base,
            type: 'eip1559' as const,
            maxFeePerGas: this.fees.maxFeePerGas as bigint,
            maxPriorityFeePerGas: this.fees.maxPriorityFeePerGas as bigint,
          };
    const serialized = await account.signTransaction(request);
    const hash = await this.publicClient.sendRawTransaction({ serializedTransaction: serialized });
    this.sent.push({ label, hash, nonce, serialized, contract });
  }

  /**
   * Waits for every receipt; throws naming the first step that reverted.
   *
   * A node can accept a transaction and then lose it (evicted from its pool, restarted before it
   * was mined). Every later transaction of the batch then waits behind the gap and is never mined.
   * So while the last receipt is missing, every `rebroadcastAfterMs` the signed transactions from the
   * account's next unmined nonce on are sent again: the same bytes, so nothing can be mined twice.
   * Past `timeoutMs` the error names the step the batch is stuck at.
   */
  async finish(opts: { timeoutMs?: number; rebroadcastAfterMs?: number } = {}): Promise<TransactionReceipt> {
    const last = this.sent[this.sent.length - 1];
    if (!last) throw new AppError('INTERNAL', 'deploy: nothing was sent');
    const lastReceipt = await this.lastReceipt(last.hash, opts.timeoutMs ?? TX_BATCH_RECEIPT_TIMEOUT_MS, opts.rebroadcastAfterMs ?? TX_BATCH_REBROADCAST_AFTER_MS);
    const receipts = await Promise.all(
      this.sent.slice(0, -1).map((tx) => this.publicClient.getTransactionReceipt({ hash: tx.hash })),
    );
    receipts.push(lastReceipt);
    this.firstBlock = receipts.reduce((min, r) => (r.blockNumber < min ? r.blockNumber : min), lastReceipt.blockNumber);
    receipts.forEach((receipt, i) => {
      const tx = this.sent[i];
      if (receipt.status !== 'success') {
        throw new AppError('INTERNAL', `deploy: step "${tx.label}" reverted`, { detail: { txHash: tx.hash } });
      }
      if (tx.contract && receipt.contractAddress?.toLowerCase() !== tx.contract.toLowerCase()) {
        throw new AppError('INTERNAL', `deploy: step "${tx.label}" created an unexpected address`);
      }
    });
    // The factory reverts when its CREATE2 fails; a contract without code would still be a surprise.
    for (const address of this.created) {
      const code = await this.publicClient.getCode({ address });
      if (code === undefined || code === '0x') throw new AppError('INTERNAL', `deploy: no code at the deterministic address ${address}`);
    }
    return lastReceipt;
  }

  private async lastReceipt(hash: Hash, timeoutMs: number, rebroadcastAfterMs: number): Promise<TransactionReceipt> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const wait = Math.max(1, Math.min(rebroadcastAfterMs, deadline - Date.now()));
      try {
        return await this.publicClient.waitForTransactionReceipt({ hash, timeout: wait });
      } catch (err) {
        if (!(err instanceof WaitForTransactionReceiptTimeoutError)) throw err;
      }
      const mined = await this.publicClient.getTransactionCount({ address: this.from, blockTag: 'latest' });
      const unmined = this.sent.filter((tx) => tx.nonce >= mined);
      if (Date.now() >= deadline) {
        const stuck = unmined[0];
        if (stuck === undefined) {
          // Every nonce is mined, yet the node has no receipt for the last: it answers from a stale or another view.
          const lastTx = this.sent[this.sent.length - 1];
          throw new AppError('CHAIN_UNAVAILABLE', `deploy: the node has mined every transaction of the batch but did not answer the receipt of step "${lastTx.label}" within ${Math.round(timeoutMs / 1000)} s`, {
            retryable: true,
            detail: { txHash: lastTx.hash, nonce: lastTx.nonce, minedNonce: mined },
          });
        }
        throw new AppError(
          'CHAIN_UNAVAILABLE',
          `deploy: step "${stuck.label}" (nonce ${stuck.nonce}) was not mined within ${Math.round(timeoutMs / 1000)} s; the node has mined this account's nonces below ${mined}, and ${unmined.length} of the batch's ${this.sent.length} transactions are not mined`,
          { retryable: true, detail: { txHash: stuck.hash, nonce: stuck.nonce, minedNonce: mined } },
        );
      }
      for (const tx of unmined) {
        try {
          await this.publicClient.sendRawTransaction({ serializedTransaction: tx.serialized });
        } catch {
          // "already known" (the node still holds it) or a refusal: the next wait decides.
        }
      }
    }
  }
}

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

/** Whether the chain behind `publicClient` is the deployment's chain and has code at every address. */
export async function isDeploymentLive(publicClient: ChainPublicClient, deployment: Deployment): Promise<boolean> {
  const chainId = await publicClient.getChainId();
  if (chainId !== deployment.chainId) return false;
  // Groups (the stocks, the price feeds) nest one level: every address counts.
  const addresses = addressesOf(deployment.contracts);
  const codes = await Promise.all(addresses.map((address) => publicClient.getCode({ address })));
  return codes.every((code) => code !== undefined && code !== '0x');
}

/** What a venue's deployment gets: the clients, and the record as built so far (the venues before it). */
export interface VenueDeployContext {
  publicClient: ChainPublicClient;
  walletClient: ChainWalletClient;
  /** Where a deployment says what it could not do as planned (the app's log). */
  note?: DeployNote;
  /** The record with every venue listed before this one present (kept or just deployed). */
  record: DeploymentRecord;
}

/** Deploys one venue's contracts with the given wallet and answers its section of the record. */
export interface VenueDeployer {
  readonly venue: string;
  /**
   * Venues this one's contracts refer to (listed before it): when one of them is deployed anew,
   * this one is deployed anew too, so it never points at a previous deployment's contracts.
   */
  readonly dependsOn?: readonly string[];
  deploy(ctx: VenueDeployContext): Promise<VenueDeployment>;
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

function addressesOf(contracts: ContractAddresses): Address[] {
  return Object.values(contracts).flatMap((v) => (typeof v === 'string' ? [v] : addressesOf(v)));
}

/** Whether every contract of a venue section has code on the chain behind `publicClient`. */
export async function isVenueLive(publicClient: ChainPublicClient, venue: VenueDeployment): Promise<boolean> {
  const codes = await Promise.all(addressesOf(venue.contracts).map((address) => publicClient.getCode({ address })));
  return codes.every((code) => code !== undefined && code !== '0x');
}

/** Why ensureVenues deploys a venue. */
export type VenueDeployReason = 'missing' | 'code gone' | 'dependency redeployed';

export interface EnsureVenuesResult {
  record: DeploymentRecord;
  /** Venues deployed now (missing from the record, or their code gone from the chain). */
  deployed: string[];
}

/**
 * Makes every venue of `venues` present on the chain: a venue whose section is recorded and whose
 * contracts all have code is kept as it is; any other is deployed, one venue after another, with
 * `walletClient`. A venue is also deployed anew when a venue it depends on (`dependsOn`) was.
 * Sections of venues not asked for stay in the record untouched. A record of another chain id
 * counts as empty.
 */
export async function ensureVenues(params: {
  publicClient: ChainPublicClient;
  walletClient?: ChainWalletClient;
  record?: DeploymentRecord;
  venues: readonly VenueDeployer[];
  /** Called before a venue is (re)deployed, e.g. to log why. */
  onDeploy?: (venue: string, reason: VenueDeployReason) => void;
  /** What a venue's deployment could not do as planned (a deterministic address taken). */
  note?: DeployNote;
}): Promise<EnsureVenuesResult> {
  const { publicClient, walletClient } = params;
  let chainId: number;
  try {
    chainId = await publicClient.getChainId();
  } catch (err) {
    throw toChainError(err);
  }
  const kept = params.record && params.record.chainId === chainId ? params.record.venues : {};
  const record: DeploymentRecord = { chainId, venues: { ...kept } };
  const deployed: string[] = [];
  for (const deployer of params.venues) {
    const existing = record.venues[deployer.venue];
    let reason: VenueDeployReason = 'missing';
    if (existing && deployer.dependsOn?.some((v) => deployed.includes(v))) {
      reason = 'dependency redeployed';
    } else if (existing) {
      let live: boolean;
      try {
        live = await isVenueLive(publicClient, existing);
      } catch (err) {
        throw toChainError(err);
      }
      if (live) continue;
      reason = 'code gone';
    }
    if (!walletClient) {
      throw new AppError('INTERNAL', `the ${deployer.venue} venue is not deployed on chain ${chainId} and there is no OPERATOR_PRIVATE_KEY to deploy it with`);
    }
    params.onDeploy?.(deployer.venue, reason);
    record.venues[deployer.venue] = await deployer.deploy({ publicClient, walletClient, record, note: params.note });
    deployed.push(deployer.venue);
  }
  return { record, deployed };
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

// ----------------------------------------------------------------- the on-chain oracle

/** What the venue's oracle should look like (docs/contracts.md, "PriceFeedHub and PriceFeed"). */
export interface PriceFeedSetup {
  /** Every symbol that gets a feed: the listed stocks and others published too (the perp indices' BTC, ETH). */
  symbols: readonly string[];
  /** The listed stocks by symbol: the StockRouter checks their fills against their feeds. */
  stocks: Readonly<Record<string, Address>>;
  /** Accounts allowed to publish. */
  publishers: readonly Address[];
  /**
   * The StockRouter's tolerance (1..5000 bps); 0 removes the stocks' feeds from the router and turns
   * its `requireOracle` off (fills unchecked: the embedded demo's explicit opt-out), any other value
   * turns it on.
   */
  toleranceBps: number;
  /** The StockRouter's maximum answer age, seconds. */
  maxAgeSeconds: number;
}

export interface PriceFeedsResult {
  /** Undefined only when `create` was false and there is none. */
  hub?: Address;
  /** Feed per symbol (only the symbols that have one). */
  feeds: Record<string, Address>;
  /** What was done now, for the log: `hub`, `feed AAPL`, `publisher 0x…`, `router AAPL`. */
  changes: string[];
  /** What should be done but was not, for want of the owner's wallet. */
  missing: string[];
  /** Owner changes scheduled in the venue's timelock, not yet in effect (a delay > 0): the changes' names. */
  scheduled: string[];
  /** The timelock's answers for `scheduled` (when each is executable). */
  pending: OwnerCallResult[];
  /** The record's `code` entries of what was deployed now (`priceFeedHub` when the hub is new). */
  code: Record<string, DeployedCode>;
}

/** A venue feed's description: `AAPL / USD`. */
const feedDescriptionOf = (symbol: string): string => `${symbol} / USD`;
const symbolOfFeedDescription = (d: string): string | undefined => /^([A-Z0-9.\-]{1,20}) \/ USD$/.exec(d)?.[1];
const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000' as Address;
/** The decimals of the venue's feeds. */
const VENUE_FEED_DECIMALS = 8;

/**
 * Makes the oracle what `setup` says, reading the chain as the truth: the hub is `hub` (the
 * record's) when it has code, else the one the StockRouter's feeds name, else a new one; a
 * symbol without a feed on the hub gets one (deployed and listed); each publisher is granted; each
 * listed stock's router check is set to its feed with the tolerance and age (or removed with
 * tolerance 0) where it differs — except a stock the owner pointed at a feed of another hub
 * (a Chainlink feed), which is left as it is. Transactions go out with `walletClient`, which must own the hub
 * and the StockRouter; without it nothing is sent and `missing` says what is left. With `create`
 * false nothing is deployed (turning the check off needs no hub). Answers undefined when there is
 * no hub and no wallet to deploy one.
 */
export async function ensurePriceFeeds(params: {
  publicClient: ChainPublicClient;
  walletClient?: ChainWalletClient;
  stockRouter: Address;
  /** The hub the deployment record names, if any. */
  hub?: Address;
  /** A new hub's upgrade authority. Default: the wallet's account. */
  upgrader?: Address;
  setup: PriceFeedSetup;
  /** Deploy the hub and the missing feeds. Default true. */
  create?: boolean;
}): Promise<PriceFeedsResult | undefined> {
  const create = params.create ?? true;
  const { publicClient, walletClient, stockRouter, setup } = params;
  const hasCode = async (address: Address) => {
    const code = await publicClient.getCode({ address });
    return code !== undefined && code !== '0x';
  };
  try {
    const configs = new Map<string, { feed: Address; decimals: number; toleranceBps: number; maxAge: number }>();
    for (const [symbol, stock] of Object.entries(setup.stocks)) {
      configs.set(symbol, await publicClient.readContract({ address: stockRouter, abi: stockRouterAbi, functionName: 'priceFeedOf', args: [stock] }));
    }
    let hub: Address | undefined = params.hub !== undefined && (await hasCode(params.hub)) ? params.hub : undefined;
    for (const c of configs.values()) {
      if (hub !== undefined) break;
      if (c.feed === ZERO_ADDRESS || !(await hasCode(c.feed))) continue;
      const named = await publicClient.readContract({ address: c.feed, abi: priceFeedAbi, functionName: 'hub' }).catch(() => undefined);
      if (named !== undefined && (await hasCode(named))) hub = named;
    }
    const changes: string[] = [];
    const missing: string[] = [];
    /** Owner changes, sent after the batch's deployments through ownerCalls. */
    const owned: Array<{ change: string; call: OwnerCallSpec }> = [];
    const tx = walletClient ? await TxBatch.open(publicClient, walletClient) : undefined;
    if (hub === undefined && create) {
      if (!tx) return undefined;
      hub = await tx.deployProxy('PriceFeedHub', 'PriceFeedHub', [], [tx.from, params.upgrader ?? tx.from]);
      changes.push('hub');
    }
    const feeds: Record<string, Address> = {};
    const isNewHub = changes.includes('hub');
    if (hub !== undefined) {
      const at = hub;
      if (!isNewHub) {
        const listed = await publicClient.readContract({ address: at, abi: priceFeedHubAbi, functionName: 'feeds' });
        for (const feed of listed) {
          const symbol = symbolOfFeedDescription(await publicClient.readContract({ address: feed, abi: priceFeedAbi, functionName: 'description' }));
          if (symbol !== undefined && feeds[symbol] === undefined) feeds[symbol] = feed;
        }
      }
      for (const symbol of new Set(create ? setup.symbols : [])) {
        if (feeds[symbol] !== undefined) continue;
        if (!tx) {
          missing.push(`feed ${symbol}`);
          continue;
        }
        const feed = await tx.deploy(`PriceFeed ${symbol}`, priceFeedAbi, priceFeedBytecode, [at, feedDescriptionOf(symbol)]);
        owned.push({ change: `feed ${symbol}`, call: { target: at, abi: priceFeedHubAbi, functionName: 'listFeed', args: [feed] } });
        feeds[symbol] = feed;
      }
      for (const publisher of new Set(setup.publishers.map((a) => getAddress(a)))) {
        const granted = !isNewHub && (await publicClient.readContract({ address: at, abi: priceFeedHubAbi, functionName: 'isPublisher', args: [publisher] }));
        if (granted) continue;
        if (!tx) {
          missing.push(`publisher ${publisher}`);
          continue;
        }
        owned.push({ change: `publisher ${publisher}`, call: { target: at, abi: priceFeedHubAbi, functionName: 'setPublisher', args: [publisher, true] } });
      }
    }
    const venueFeeds = new Set(Object.values(feeds).map((f) => f.toLowerCase()));
    for (const [symbol, stock] of Object.entries(setup.stocks)) {
      const current = configs.get(symbol)!;
      // A feed the owner set by hand (a Chainlink feed, say) stays as the owner set it.
      if (current.feed !== ZERO_ADDRESS && !venueFeeds.has(current.feed.toLowerCase())) continue;
      const feed = setup.toleranceBps > 0 ? feeds[symbol] : undefined;
      const want = feed === undefined
        ? { feed: ZERO_ADDRESS, toleranceBps: 0, maxAge: 0 }
        : { feed, toleranceBps: setup.toleranceBps, maxAge: setup.maxAgeSeconds };
      const same = current.feed.toLowerCase() === want.feed.toLowerCase() &&
        (want.feed === ZERO_ADDRESS || (current.toleranceBps === want.toleranceBps && current.maxAge === want.maxAge && current.decimals === VENUE_FEED_DECIMALS));
      if (same) continue;
      if (!tx) {
        missing.push(`router ${symbol}`);
        continue;
      }
      owned.push({ change: `router ${symbol}`, call: { target: stockRouter, abi: stockRouterAbi, functionName: 'setPriceFeed', args: [stock, want.feed, want.toleranceBps, want.maxAge] } });
    }
    // The feeds are in place before the flag is turned on (a batch's transactions are mined in order).
    const required = await publicClient.readContract({ address: stockRouter, abi: stockRouterAbi, functionName: 'requireOracle' }).catch((err: unknown) => {
      // A router from before the flag (it reverts) has nothing to set.
      if (toChainError(err) instanceof ChainRevertError) return undefined;
      throw err;
    });
    const wantRequired = setup.toleranceBps > 0;
    if (required !== undefined && required !== wantRequired) {
      if (tx) {
        owned.push({ change: `router requireOracle ${wantRequired}`, call: { target: stockRouter, abi: stockRouterAbi, functionName: 'setRequireOracle', args: [wantRequired] } });
      } else {
        missing.push(`router requireOracle ${wantRequired}`);
      }
    }
    // Deployments first (the hub, the feeds: the admin's own transactions), then the owner changes,
    // through the timelock where it owns the contract (src/chain/owner-actions.ts).
    if (tx && (changes.includes('hub') || owned.some((o) => o.change.startsWith('feed ')))) await tx.finish();
    const scheduled: string[] = [];
    const pending: OwnerCallResult[] = [];
    if (walletClient && owned.length > 0) {
      const r = await ownerCalls({ publicClient, wallet: walletClient, calls: owned.map((o) => o.call), label: 'oracle set-up' });
      if (r.done) changes.push(...owned.map((o) => o.change));
      else {
        scheduled.push(...owned.map((o) => o.change));
        pending.push(...r.results.filter((x) => !x.done));
      }
    }
    return { hub, feeds, changes, missing, scheduled, pending, code: tx && hub !== undefined ? tx.codeOf({ priceFeedHub: hub }) : {} };
  } catch (err) {
    throw err instanceof AppError ? err : toChainError(err);
  }
}
