/**
 * A wallet's balances as the API shows them (`GET users/{id}/balance`, and the `balances` stream):
 * mUSD available and locked, every listed stock's wallet and exchange balances, every cash token's
 * wallet balance, and the allowances to the spender. The shape is the contract's StockBalance:
 * tokex's fields and Anchored's (anchored-reference.md §4.2), whose mUSD balance is answered under
 * both spellings its documentation uses, and whose `tokenBalances` also list the cash tokens
 * (`isStock: false`), since Anchored's clients check the cash token's `walletAllowance` there before
 * a deposit.
 */
import type { StockBalance, StockCashTokenBalance, StockTokenBalance } from '@tokex/contract';
import type { Address } from 'viem';
import { formatDecimal } from '../lib/decimal.ts';
import type { QuoteReader } from '../marketdata/market-types.ts';
import { exactNumberOrNull } from './exact-number.ts';
import type { AccountView, MarketConfigView, StockDirectory } from './stock-deps.ts';
import { MUSD_DECIMALS } from './stock-units.ts';

/** Anchored's default `spenderAddress` (anchored-reference.md §4.2): nobody, so every allowance is 0. */
export const NO_SPENDER: Address = '0x0000000000000000000000000000000000000000';

/** A balance the chain did not report (a token the lens was not asked about) is zero. */
const amountOr0 = (v: bigint | undefined, decimals: number): string => formatDecimal(v ?? 0n, decimals);

/** The chain and product a balance is of (`chainId`, `productType`). */
export interface BalanceVenue {
  chainId: number;
  product: string;
}

export interface BalanceViewOptions {
  /** Whose allowances `walletAllowance` reports; the account must have been read with it. Default: none (0). */
  spender?: Address;
  /** Where each stock's `price` comes from; without it (the `balances` stream) the prices are null. */
  quotes?: QuoteReader;
}

/** A balance without `chainId` and `productType`: a stream whose process was not told them. */
export type StockBalanceWithoutVenue = Omit<StockBalance, 'chainId' | 'productType'> & Partial<Pick<StockBalance, 'chainId' | 'productType'>>;

export function balanceView(user: Address, account: AccountView, cfg: MarketConfigView, stocks: StockDirectory, venue: BalanceVenue, opts?: BalanceViewOptions): StockBalance;
export function balanceView(user: Address, account: AccountView, cfg: MarketConfigView, stocks: StockDirectory, venue: BalanceVenue | undefined, opts?: BalanceViewOptions): StockBalanceWithoutVenue;
export function balanceView(
  user: Address,
  account: AccountView,
  cfg: MarketConfigView,
  stocks: StockDirectory,
  venue: BalanceVenue | undefined,
  opts: BalanceViewOptions = {},
): StockBalanceWithoutVenue {
  const spender = opts.spender;
  const withAllowance = spender !== undefined && spender.toLowerCase() !== NO_SPENDER;
  const held = new Map<string, AccountView['stocks'][number]>();
  for (const b of account.stocks) held.set(b.address.toLowerCase(), b);
  const stockRows = stocks.list().map((s): StockTokenBalance => {
    const b = held.get(s.address.toLowerCase());
    return {
      symbol: s.symbol,
      tokenAddress: s.address,
      decimals: s.decimals,
      walletBalance: amountOr0(b?.walletBalance, s.decimals),
      exchangeBalance: amountOr0(b?.exchangeBalance, s.decimals),
      lockedExchangeBalance: amountOr0(b?.lockedExchangeBalance, s.decimals),
      walletAllowance: withAllowance ? amountOr0(b?.walletAllowance, s.decimals) : '0',
      address: s.address,
      name: s.name,
      stockSymbol: s.symbol,
      isStock: true,
      price: exactNumberOrNull(opts.quotes?.getQuote(s.symbol)?.last),
    };
  });
  const cashRows: StockTokenBalance[] = [];
  const cashTokenBalances = cfg.cashierTokenConfig.map((t): StockCashTokenBalance => {
    const b = account.cashTokens.find((x) => x.address.toLowerCase() === t.tokenAddress.toLowerCase());
    const walletBalance = amountOr0(b?.walletBalance, t.decimals);
    const walletAllowance = withAllowance ? amountOr0(b?.walletAllowance, t.decimals) : '0';
    cashRows.push({
      symbol: t.symbol,
      tokenAddress: t.tokenAddress,
      decimals: t.decimals,
      walletBalance,
      exchangeBalance: '0',
      lockedExchangeBalance: '0',
      walletAllowance,
      address: t.tokenAddress,
      name: t.symbol,
      stockSymbol: null,
      isStock: false,
      price: null,
    });
    return { symbol: t.symbol, tokenAddress: t.tokenAddress, decimals: t.decimals, walletBalance, ...(withAllowance ? { walletAllowance } : {}) };
  });
  const { available, locked } = account.mUsd;
  const musd = formatDecimal(available, MUSD_DECIMALS);
  return {
    userId: user,
    ...(venue ? { chainId: venue.chainId, productType: venue.product } : {}),
    address: user,
    musdBalance: musd,
    mUsdBalance: musd,
    mUsdDetail: { available: musd, locked: formatDecimal(locked, MUSD_DECIMALS), total: formatDecimal(available + locked, MUSD_DECIMALS) },
    tokenBalances: [...stockRows, ...cashRows],
    cashTokenBalances,
    spenderAddress: spender ?? NO_SPENDER,
  };
}
