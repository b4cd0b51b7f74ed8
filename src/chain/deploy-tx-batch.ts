/**
 * The deployer's batch: transactions sent back to back from one account with nonces kept here, the
 * receipts awaited at the end, and what each deployed address runs noted for the record's `code`
 * section. Every venue's deployment (deploy-stock-venue.ts, deploy-perp-venue.ts), the oracle's set-up
 * and the migrations send through it.
 */
import {
  concat,
  encodeDeployData,
  encodeFunctionData,
  getContractAddress,
  WaitForTransactionReceiptTimeoutError,
  type Abi,
  type Address,
  type Hash,
  type Hex,
  type PrivateKeyAccount,
  type TransactionReceipt,
} from 'viem';
import { AppError } from '../errors/app-error.ts';
import { venueBootstrapAbi, venueBootstrapBytecode, venueProxyAbi, venueProxyBytecode } from './abi/generated/index.ts';
import type { ChainPublicClient, ChainWalletClient } from './chain-client.ts';
import {
  CREATE2_FACTORY,
  deterministicAddress,
  deterministicProxyInitcode,
  deterministicSalt,
  venueBootstrapAddress,
  type DeployNote,
} from './deploy-deterministic-address.ts';
import type { ContractAddresses, DeployedCode } from './deployment-file.ts';
import { deployedCodeOf, VENUE_CONTRACTS, type VenueContractName } from './venue-code.ts';

// Explicit gas limits: a dependent transaction cannot be estimated before its predecessor is
// mined, and skipping estimation makes the deploy a single round trip per transaction.
const DEPLOY_GAS = 6_000_000n;
const CALL_GAS = 300_000n;
/** A proxy through the CREATE2 factory: the proxy's small code and the bootstrap's one slot. */
const PROXY_CREATE2_GAS = 1_000_000n;
/** The bootstrap's upgrade to the real implementation with its `initialize` (a Stock's name and symbol). */
const PROXY_UPGRADE_GAS = 800_000n;
/** The ERC-1967 implementation slot. */
const IMPLEMENTATION_SLOT: Hex = '0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc';

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
