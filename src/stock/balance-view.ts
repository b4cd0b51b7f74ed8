/**
 * A wallet's balances as the API shows them (`GET users/{id}/balance`, and the `balances` stream):
 * mUSD available and locked, every listed stock's wallet and exchange balances, every cash token's
 * wallet balance; with a spender, the allowances too. The shape is the contract's StockBalance.
 */
import type { StockBalance, StockCashTokenBalance, StockTokenBalance } from '@tokex/contract';
import type { Address } from 'viem';
import { formatDecimal } from '../lib/decimal.ts';
import type { AccountView, MarketConfigView, StockDirectory } from './stock-deps.ts';
import { MUSD_DECIMALS } from './stock-units.ts';

/** A balance the chain did not report (a token the lens was not asked about) is zero. */
const amountOr0 = (v: bigint | undefined, decimals: number): string => formatDecimal(v ?? 0n, decimals);

export function balanceView(user: Address, account: AccountView, cfg: MarketConfigView, stocks: StockDirectory, spender?: Address): StockBalance {
  const withAllowance = spender !== undefined;
  const held = new Map<string, AccountView['stocks'][number]>();
  for (const b of account.stocks) held.set(b.address.toLowerCase(), b);
  const tokenBalances = stocks.list().map((s): StockTokenBalance => {
    const b = held.get(s.address.toLowerCase());
    return {
      symbol: s.symbol,
      tokenAddress: s.address,
      decimals: s.decimals,
      walletBalance: amountOr0(b?.walletBalance, s.decimals),
      exchangeBalance: amountOr0(b?.exchangeBalance, s.decimals),
      lockedExchangeBalance: amountOr0(b?.lockedExchangeBalance, s.decimals),
      ...(withAllowance ? { walletAllowance: amountOr0(b?.walletAllowance, s.decimals) } : {}),
    };
  });
  const cashTokenBalances = cfg.cashierTokenConfig.map((t): StockCashTokenBalance => {
    const b = account.cashTokens.find((x) => x.address.toLowerCase() === t.tokenAddress.toLowerCase());
    return {
      symbol: t.symbol,
      tokenAddress: t.tokenAddress,
      decimals: t.decimals,
      walletBalance: amountOr0(b?.walletBalance, t.decimals),
      ...(withAllowance ? { walletAllowance: amountOr0(b?.walletAllowance, t.decimals) } : {}),
    };
  });
  const { available, locked } = account.mUsd;
  return {
    userId: user,
    mUsdBalance: { available: formatDecimal(available, MUSD_DECIMALS), locked: formatDecimal(locked, MUSD_DECIMALS), total: formatDecimal(available + locked, MUSD_DECIMALS) },
    tokenBalances,
    cashTokenBalances,
    ...(withAllowance ? { spenderAddress: spender } : {}),
  };
}
