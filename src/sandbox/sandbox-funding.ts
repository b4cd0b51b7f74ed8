/**
 * `POST /sandbox/v1/fund` (docs/sandbox.md, "Fund"): mints the venue's cash token (USDC, also the
 * perpetual collateral) or a stock token into any wallet, as the deployment mints to the demo wallets
 * (src/chain/deploy-contracts.ts: `mint(wallet, amount)` by the token's owner).
 *
 * Who sends: the token's owner as the chain says now. The deployer's key when it owns the token (the
 * demo CashToken), through the process's one sender of that key so its nonces never collide with the
 * stack's own sends (splits use it too). Otherwise the owner is the venue's timelock (the Stock
 * proxies after the hand-over, docs/security.md), whose delay a sandbox does not wait out: the node
 * is asked to act as it (`anvil_impersonateAccount`), which only an anvil-compatible node does. The
 * timelock's ether is put back as it was afterwards, so the mint is the only change it sees.
 */
import { encodeFunctionData, getAddress, type Address, type Hex, type TransactionReceipt } from 'viem';
import { cashTokenAbi, stockAbi } from '../chain/abi/generated/index.ts';
import { toChainError, type ChainPublicClient, type ChainWalletClient } from '../chain/chain-client.ts';
import type { Deployment } from '../chain/deployment-file.ts';
import { senderFor } from '../chain/tx-sender.ts';
import { AppError, ChainRevertError, ChainUnavailableError, ConflictError, ValidationError } from '../errors/app-error.ts';
import { createLock } from '../lib/async.ts';
import { formatDecimal, parseDecimal } from '../lib/decimal.ts';
import type { Logger } from '../lib/logger.ts';

/** The asset name of the cash token. */
export const CASH_ASSET = 'USDC';
/** Whole tokens one fund call mints at most: far beyond any test, far below a supply overflow. */
export const MAX_FUND_TOKENS = 1_000_000_000_000n;
/** A mint is one storage write and a Transfer event; the limit leaves room for a proxy's hop. */
const MINT_GAS = 200_000n;
/** How long a fund waits for its transaction's receipt. */
const RECEIPT_WAIT_MS = 30_000;
/** Ether lent to an impersonated owner for the gas (taken back after the mint). */
const GAS_LOAN_WEI = 10n ** 18n;

export interface FundingDeps {
  publicClient: ChainPublicClient;
  deployment: Deployment;
  /** The deployer's wallet, when this process holds its key. */
  deployer?: ChainWalletClient;
  logger: Pick<Logger, 'info' | 'warn'>;
  /** Whether the chain is stalled on purpose (the chain-stall fault): a mint would not be mined. */
  stalled: () => boolean;
}

export interface FundResult {
  address: Address;
  asset: string;
  amount: string;
  txHash: Hex;
  balance: string;
}

interface Asset {
  name: string;
  token: Address;
  abi: typeof cashTokenAbi | typeof stockAbi;
}

function assetOf(deployment: Deployment, input: string): Asset {
  const name = input.trim().toUpperCase();
  if (name === CASH_ASSET) return { name, token: deployment.contracts.cashToken, abi: cashTokenAbi };
  const stock = deployment.contracts.stocks[name];
  if (stock) return { name, token: stock, abi: stockAbi };
  const listed = [CASH_ASSET, ...Object.keys(deployment.contracts.stocks)].join(', ');
  throw new ValidationError('asset', `${JSON.stringify(input.slice(0, 40))} is not an asset of this venue; one of ${listed}`);
}

type Rpc = (method: string, params: unknown[]) => Promise<unknown>;

export function createSandboxFunding(deps: FundingDeps) {
  const { publicClient, deployment, logger } = deps;
  const rpc: Rpc = (method, params) => publicClient.request({ method: method as never, params: params as never });
  // One mint at a time: an impersonation and its ether loan must not interleave with another's.
  const lock = createLock();

  const read = async <T>(fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      throw toChainError(err);
    }
  };

  /** Sends the mint as the owner the node impersonates; the owner's ether is restored afterwards. */
  const mintImpersonated = async (owner: Address, token: Address, data: Hex): Promise<TransactionReceipt> => {
    try {
      await rpc('anvil_impersonateAccount', [owner]);
    } catch (cause) {
      throw new ConflictError(`fund: the token's owner ${owner} is a contract (the venue's timelock) and this node does not impersonate accounts (anvil_impersonateAccount); fund from an anvil-compatible node`, { cause });
    }
    const before = await read(() => publicClient.getBalance({ address: owner }));
    try {
      await rpc('anvil_setBalance', [owner, `0x${(before + GAS_LOAN_WEI).toString(16)}`]);
      const hash = (await rpc('eth_sendTransaction', [{ from: owner, to: token, data, gas: `0x${MINT_GAS.toString(16)}` }])) as Hex;
      return await publicClient.waitForTransactionReceipt({ hash, timeout: RECEIPT_WAIT_MS });
    } finally {
      await rpc('anvil_setBalance', [owner, `0x${before.toString(16)}`]).catch((err: unknown) => logger.warn({ err: (err as Error).message, owner }, 'sandbox fund: the owner\'s ether could not be put back'));
      await rpc('anvil_stopImpersonatingAccount', [owner]).catch(() => undefined);
    }
  };

  return {
    async fund(input: { address: string; asset: string; amount: string }): Promise<FundResult> {
      const address = getAddress(input.address);
      const asset = assetOf(deployment, input.asset);
      if (deps.stalled()) throw new ConflictError('fund: the chain is stalled by the chain-stall fault, and the mint would not be mined; DELETE /sandbox/v1/faults first');
      const decimals = Number(await read(() => publicClient.readContract({ address: asset.token, abi: asset.abi, functionName: 'decimals' })));
      const amount = parseDecimal(input.amount, { field: 'amount', decimals, max: MAX_FUND_TOKENS * 10n ** BigInt(decimals) });
      return lock.run(async () => {
        const owner = getAddress(await read(() => publicClient.readContract({ address: asset.token, abi: asset.abi, functionName: 'owner' })));
        const data = encodeFunctionData({ abi: asset.abi, functionName: 'mint', args: [address, amount] });
        let receipt: TransactionReceipt;
        try {
          receipt =
            deps.deployer && deps.deployer.account.address === owner
              ? await senderFor({ publicClient, account: deps.deployer.account, logger }).send({ to: asset.token, data, gas: MINT_GAS })
              : await mintImpersonated(owner, asset.token, data);
        } catch (err) {
          if (err instanceof AppError) throw err;
          const mapped = toChainError(err);
          throw mapped.code === 'INTERNAL' ? new ChainUnavailableError({ cause: err }) : mapped;
        }
        if (receipt.status !== 'success') throw new ChainRevertError(undefined, { data: { txHash: receipt.transactionHash } });
        const balance = await read(() => publicClient.readContract({ address: asset.token, abi: asset.abi, functionName: 'balanceOf', args: [address], blockNumber: receipt.blockNumber }));
        logger.info({ asset: asset.name, amount: formatDecimal(amount, decimals), txHash: receipt.transactionHash }, 'sandbox: funded a wallet');
        return { address, asset: asset.name, amount: formatDecimal(amount, decimals), txHash: receipt.transactionHash, balance: formatDecimal(balance as bigint, decimals) };
      });
    },
  };
}

export type SandboxFunding = ReturnType<typeof createSandboxFunding>;
