/**
 * Chain reads of the stock API. The market config (buffers, fees, token configs, stock supplies)
 * is one AccountLens call, cached and refreshed on a timer so quote and config reads never wait
 * for the chain; balances are one AccountLens call per request (viem's `readContract`) and never
 * cached. Chain failures
 * surface as ChainUnavailableError (a 503 in the envelope) and the process keeps running.
 */
import type { Address, Hex, PublicClient } from 'viem';
import { accountLensAbi, oneClickRouterAbi } from '../chain/abi/generated/index.ts';
import { toChainError } from '../chain/chain-client.ts';
import type { Deployment } from '../chain/deploy-contracts.ts';
import { ChainUnavailableError } from '../errors/app-error.ts';
import { formatDecimal } from '../lib/decimal.ts';
import type { Logger } from '../lib/logger.ts';
import type { AccountView, MarketConfigView, MinedTransaction, OneClickView, StockChainReader } from './stock-deps.ts';
import { MUSD_DECIMALS } from './stock-units.ts';


/** viem signals an unknown hash with these errors; anything else is a real failure. */
function notFoundAsUndefined(err: unknown): undefined {
  const name = (err as { name?: string }).name ?? '';
  if (name === 'TransactionNotFoundError' || name === 'TransactionReceiptNotFoundError') return undefined;
  throw err;
}
const ZERO = '0x0000000000000000000000000000000000000000' as Address;

export interface StockChainReaderHandle extends StockChainReader {
  start(): Promise<void>;
  stop(): void;
  /** Forces a read now (after a config change made by this process). */
  refresh(): Promise<MarketConfigView>;
}

export function createStockChainReader(opts: {
  publicClient: PublicClient;
  deployment: Deployment;
  refreshMs: number;
  logger: Logger;
  now?: () => number;
}): StockChainReaderHandle {
  const { publicClient, deployment, logger } = opts;
  const now = opts.now ?? Date.now;
  const lens = deployment.contracts.accountLens;
  const stockAddresses = Object.values(deployment.contracts.stocks);
  let cached: MarketConfigView | undefined;
  let cashTokens: Address[] = [deployment.contracts.cashToken];
  let timer: NodeJS.Timeout | undefined;
  let inflight: Promise<MarketConfigView> | undefined;

  async function readConfig(): Promise<MarketConfigView> {
    let raw;
    try {
      raw = await publicClient.readContract({ address: lens, abi: accountLensAbi, functionName: 'getMarketConfig' });
    } catch (err) {
      throw toChainError(err);
    }
    const view: MarketConfigView = {
      cashierBuffer: {
        creditBuffer: formatDecimal(raw.creditBuffer, MUSD_DECIMALS),
        totalQueuedDeposits: formatDecimal(raw.totalQueuedDeposits, MUSD_DECIMALS),
        totalQueuedWithdrawals: formatDecimal(raw.totalQueuedWithdrawals, MUSD_DECIMALS),
        feeBalance: formatDecimal(raw.feeBalance, MUSD_DECIMALS),
        treasuryBalance: formatDecimal(raw.treasuryBalance, MUSD_DECIMALS),
      },
      exchangeFeeConfig: { marketFeeBps: Number(raw.marketFeeBps), limitFeeBps: Number(raw.limitFeeBps) },
      cashierTokenConfig: raw.cashTokens.map((t) => ({
        tokenAddress: t.token,
        symbol: t.symbol,
        decimals: Number(t.decimals),
        enabled: t.enabled,
        minAmount: formatDecimal(t.minAmount, Number(t.decimals)),
        withdrawBuffer: formatDecimal(t.withdrawBuffer, Number(t.decimals)),
        cashierBalance: formatDecimal(t.cashierTokenBalance, Number(t.decimals)),
      })),
      stocks: raw.stocks.map((s) => ({
        symbol: s.symbol,
        address: s.stock,
        decimals: Number(s.decimals),
        totalSupply: formatDecimal(s.totalSupply, Number(s.decimals)),
      })),
      blockNumber: raw.blockNumber.toString(),
      updatedAt: now(),
    };
    cashTokens = raw.cashTokens.map((t) => t.token as Address);
    cached = view;
    return view;
  }

  // The fee market moves per block; one read a second serves every send's funds check.
  let fee: { value: bigint; at: number } | undefined;
  async function feesNow(): Promise<bigint> {
    if (fee && now() - fee.at < 1_000) return fee.value;
    const f = await publicClient.estimateFeesPerGas().catch(async () => ({ maxFeePerGas: await publicClient.getGasPrice() }));
    // The relayer's sender signs with three times the market's fee cap (head-room for rising base fees).
    const value = (f.maxFeePerGas ?? 0n) * 3n;
    fee = { value, at: now() };
    return value;
  }

  function refresh(): Promise<MarketConfigView> {
    inflight ??= readConfig().finally(() => {
      inflight = undefined;
    });
    return inflight;
  }

  return {
    async start() {
      try {
        await refresh();
      } catch (err) {
        // The API still starts; config reads answer 503 until the chain answers.
        logger.warn({ code: (err as { code?: string }).code }, 'initial chain config read failed');
      }
      timer = setInterval(() => {
        refresh().catch((err) => logger.warn({ code: (err as { code?: string }).code }, 'chain config refresh failed'));
      }, opts.refreshMs);
      timer.unref();
    },
    stop() {
      if (timer) clearInterval(timer);
    },
    refresh,
    cachedMarketConfig() {
      return cached;
    },
    async marketConfig() {
      if (cached) return cached;
      try {
        return await refresh();
      } catch (err) {
        throw err instanceof ChainUnavailableError ? err : toChainError(err);
      }
    },
    async account(user: Address, spender?: Address): Promise<AccountView> {
      try {
        const a = await publicClient.readContract({
          address: lens,
          abi: accountLensAbi,
          functionName: 'getAccount',
          args: [user, stockAddresses, cashTokens, spender ?? ZERO],
        });
        return {
          mUsd: { available: a.freeMusd, locked: a.lockedMusd },
          stocks: a.stocks.map((s) => ({
            address: s.stock,
            walletBalance: s.wallet,
            exchangeBalance: s.exchange,
            lockedExchangeBalance: s.locked,
            walletAllowance: s.allowance,
          })),
          cashTokens: a.cashTokens.map((t) => ({ address: t.token, walletBalance: t.wallet, walletAllowance: t.allowance })),
        };
      } catch (err) {
        throw toChainError(err);
      }
    },
    async transaction(hash: Hex): Promise<MinedTransaction | undefined> {
      try {
        const [tx, receipt] = await Promise.all([
          publicClient.getTransaction({ hash }).catch(notFoundAsUndefined),
          publicClient.getTransactionReceipt({ hash }).catch(notFoundAsUndefined),
        ]);
        if (!tx || !receipt) return undefined;
        return {
          hash,
          from: tx.from,
          to: tx.to,
          input: tx.input,
          status: receipt.status,
          blockNumber: receipt.blockNumber,
          logs: receipt.logs.map((l) => ({ address: l.address, topics: l.topics as Hex[], data: l.data, logIndex: l.logIndex })),
        };
      } catch (err) {
        throw toChainError(err);
      }
    },
    async oneClickNonce(user: Address, delegatee: Address): Promise<bigint> {
      try {
        return await publicClient.readContract({
          address: deployment.contracts.oneClickRouter,
          abi: oneClickRouterAbi,
          functionName: 'delegationNonce',
          args: [user, delegatee],
        });
      } catch (err) {
        throw toChainError(err);
      }
    },
    async estimateGas(call) {
      try {
        return await publicClient.estimateGas({ account: call.from, to: call.to, data: call.data });
      } catch (err) {
        throw toChainError(err);
      }
    },
    async gasFunds(account: Address) {
      try {
        const [balance, fees] = await Promise.all([publicClient.getBalance({ address: account }), feesNow()]);
        return { balance, maxFeePerGas: fees };
      } catch (err) {
        throw toChainError(err);
      }
    },
    async oneClick(user: Address): Promise<OneClickView> {
      try {
        // An expired delegation is no delegation: the router refuses its delegatee's calls.
        const [delegatee, expiresAt] = await publicClient.readContract({
          address: deployment.contracts.oneClickRouter,
          abi: oneClickRouterAbi,
          functionName: 'activeDelegateOf',
          args: [user],
        });
        const active = delegatee !== ZERO;
        return { status: active ? 'enabled' : 'disabled', delegatee, expiresAt: active ? Number(expiresAt) : 0 };
      } catch (err) {
        throw toChainError(err);
      }
    },
  };
}
