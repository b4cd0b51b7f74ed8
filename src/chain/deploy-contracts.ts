import {
  encodeDeployData,
  encodeFunctionData,
  getContractAddress,
  parseUnits,
  type Abi,
  type Address,
  type Hash,
  type Hex,
  type TransactionReceipt,
} from 'viem';
import { AppError } from '../errors/app-error.ts';
import type { SymbolSpec } from '../marketdata/symbol-catalog.ts';
import {
  accountLensAbi,
  accountLensBytecode,
  cashierAbi,
  cashierBytecode,
  cashTokenAbi,
  cashTokenBytecode,
  oneClickRouterAbi,
  oneClickRouterBytecode,
  stockAbi,
  stockBytecode,
  stockRouterAbi,
  stockRouterBytecode,
} from './abi/generated/index.ts';
import { toChainError, type ChainPublicClient, type ChainWalletClient } from './chain-client.ts';

export interface DeploymentContracts {
  stockRouter: Address;
  oneClickRouter: Address;
  cashier: Address;
  cashToken: Address;
  accountLens: Address;
  /** Stock token per symbol (`AAPL` → 0x…). */
  stocks: Record<string, Address>;
}

export interface Deployment {
  chainId: number;
  /** Block of the last deployment transaction, decimal string. */
  blockNumber: string;
  /** When the deployment finished, ms since the epoch. */
  deployedAt: number;
  /** Deployer, owner and operator. */
  operator: Address;
  contracts: DeploymentContracts;
}

/** Overrides of the demo configuration; amounts are bigint in the units named. */
export interface DeployStackOptions {
  /** Treasury account (counterparty of every settlement). Default: the deployer. */
  treasury?: Address;
  /** Extra operators besides the deployer. */
  operators?: Address[];
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

interface FeeFields {
  maxFeePerGas?: bigint;
  maxPriorityFeePerGas?: bigint;
  gasPrice?: bigint;
}

/**
 * Sends transactions back to back with locally managed nonces and waits for all receipts at the
 * end (a mined nonce n implies every nonce below it is mined).
 */
class TxBatch {
  private readonly sent: Array<{ label: string; hash: Hash; contract?: Address }> = [];

  private constructor(
    private readonly publicClient: ChainPublicClient,
    private readonly walletClient: ChainWalletClient,
    private readonly chainId: number,
    private nonce: number,
    private readonly fees: FeeFields,
  ) {}

  static async open(publicClient: ChainPublicClient, walletClient: ChainWalletClient): Promise<TxBatch> {
    const from = walletClient.account.address;
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
    return new TxBatch(publicClient, walletClient, chainId, nonce, fees);
  }

  get chain(): number {
    return this.chainId;
  }

  get from(): Address {
    return this.walletClient.account.address;
  }

  async deploy(label: string, abi: Abi, bytecode: Hex, args: readonly unknown[]): Promise<Address> {
    const contract = getContractAddress({ from: this.from, nonce: BigInt(this.nonce) });
    const data = encodeDeployData({ abi, bytecode, args });
    await this.send(label, undefined, data, DEPLOY_GAS, contract);
    return contract;
  }

  async call(label: string, to: Address, abi: Abi, functionName: string, args: readonly unknown[]): Promise<void> {
    await this.send(label, to, encodeFunctionData({ abi, functionName, args }), CALL_GAS);
  }

  private async send(label: string, to: Address | undefined, data: Hex, gas: bigint, contract?: Address): Promise<void> {
    const nonce = this.nonce++;
    const account = this.walletClient.account;
    const base = { chainId: this.chainId, nonce, gas, to, data } as const;
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
    this.sent.push({ label, hash, contract });
  }

  /** Waits for every receipt; throws naming the first step that reverted. */
  async finish(): Promise<TransactionReceipt> {
    const last = this.sent[this.sent.length - 1];
    if (!last) throw new AppError('INTERNAL', 'deploy: nothing was sent');
    const lastReceipt = await this.publicClient.waitForTransactionReceipt({ hash: last.hash, timeout: 120_000 });
    const receipts = await Promise.all(
      this.sent.slice(0, -1).map((tx) => this.publicClient.getTransactionReceipt({ hash: tx.hash })),
    );
    receipts.push(lastReceipt);
    receipts.forEach((receipt, i) => {
      const tx = this.sent[i];
      if (receipt.status !== 'success') {
        throw new AppError('INTERNAL', `deploy: step "${tx.label}" reverted`, { detail: { txHash: tx.hash } });
      }
      if (tx.contract && receipt.contractAddress?.toLowerCase() !== tx.contract.toLowerCase()) {
        throw new AppError('INTERNAL', `deploy: step "${tx.label}" created an unexpected address`);
      }
    });
    return lastReceipt;
  }
}

/**
 * Deploys and wires the whole stock stack and funds the demo wallets. The caller's wallet becomes
 * owner, operator and (unless overridden) treasury. Only the caller's account sends transactions;
 * it must be a local account (private key).
 */
export async function deployStack(params: {
  publicClient: ChainPublicClient;
  walletClient: ChainWalletClient;
  symbols: readonly SymbolSpec[];
  demoWallets: readonly Address[];
  options?: DeployStackOptions;
}): Promise<Deployment> {
  const { publicClient, walletClient, symbols, demoWallets } = params;
  const o = { ...DEMO_DEFAULTS, ...params.options };
  try {
    const tx = await TxBatch.open(publicClient, walletClient);
    const me = tx.from;

    const cashToken = await tx.deploy('CashToken', cashTokenAbi, cashTokenBytecode, [me]);
    const oneClickRouter = await tx.deploy('OneClickRouter', oneClickRouterAbi, oneClickRouterBytecode, [me]);
    const cashier = await tx.deploy('Cashier', cashierAbi, cashierBytecode, [me]);
    const stockRouter = await tx.deploy('StockRouter', stockRouterAbi, stockRouterBytecode, [cashier, oneClickRouter, me]);
    const accountLens = await tx.deploy('AccountLens', accountLensAbi, accountLensBytecode, [cashier, stockRouter]);
    const stocks: Record<string, Address> = {};
    for (const s of symbols) {
      stocks[s.symbol] = await tx.deploy(`Stock ${s.symbol}`, stockAbi, stockBytecode, [s.name, s.symbol, me]);
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
    for (const operator of [me, ...(o.operators ?? [])]) {
      await tx.call('router.setOperator', stockRouter, stockRouterAbi, 'setOperator', [operator, true]);
      await tx.call('cashier.setOperator', cashier, cashierAbi, 'setOperator', [operator, true]);
    }
    if (o.treasury && o.treasury.toLowerCase() !== me.toLowerCase()) {
      await tx.call('setTreasury', cashier, cashierAbi, 'setTreasury', [o.treasury]);
    }
    if (o.treasuryFunding > 0n) {
      await tx.call('mint treasury funding', cashToken, cashTokenAbi, 'mint', [me, o.treasuryFunding]);
      await tx.call('approve treasury funding', cashToken, cashTokenAbi, 'approve', [cashier, o.treasuryFunding]);
      await tx.call('fundTreasury', cashier, cashierAbi, 'fundTreasury', [cashToken, o.treasuryFunding]);
    }
    for (const wallet of demoWallets) {
      if (o.walletCash > 0n) await tx.call('mint USDC', cashToken, cashTokenAbi, 'mint', [wallet, o.walletCash]);
      if (o.walletStock > 0n) {
        for (const [symbol, stock] of Object.entries(stocks)) {
          await tx.call(`mint ${symbol}`, stock, stockAbi, 'mint', [wallet, o.walletStock]);
        }
      }
    }

    const last = await tx.finish();
    return {
      chainId: tx.chain,
      blockNumber: last.blockNumber.toString(),
      deployedAt: Date.now(),
      operator: me,
      contracts: { stockRouter, oneClickRouter, cashier, cashToken, accountLens, stocks },
    };
  } catch (err) {
    throw toChainError(err);
  }
}

/** Whether the chain behind `publicClient` is the deployment's chain and has code at every address. */
export async function isDeploymentLive(publicClient: ChainPublicClient, deployment: Deployment): Promise<boolean> {
  const chainId = await publicClient.getChainId();
  if (chainId !== deployment.chainId) return false;
  const { stocks, ...core } = deployment.contracts;
  const addresses = [...Object.values(core), ...Object.values(stocks)];
  const codes = await Promise.all(addresses.map((address) => publicClient.getCode({ address })));
  return codes.every((code) => code !== undefined && code !== '0x');
}
