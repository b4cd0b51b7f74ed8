/**
 * Calldata for the StockRouter, the only contract the API's calldata targets (seed §1A). Encoding
 * uses the ABI generated from the contracts' build; every router entry point the API builds takes
 * static words only, so selectors are computed once (src/chain/static-call-encoder.ts, kept as
 * hand-made code for what it buys on the calldata figure: docs/performance.md).
 */
import type { StockRouterMethod } from '@tokex/contract';
import type { Address, Hex } from 'viem';
import { stockRouterAbi } from '../chain/abi/generated/index.ts';
import { staticCallEncoder } from '../chain/static-call-encoder.ts';
import { sideIndex, TIF_DAY, type OrderIntent } from './order-request.ts';

export interface CalldataResult {
  toAddress: Address;
  value: '0';
  callData: Hex;
}

const encode = {
  placeMarketOrder: staticCallEncoder(stockRouterAbi, 'placeMarketOrder'),
  placeLimitOrder: staticCallEncoder(stockRouterAbi, 'placeLimitOrder'),
  depositAndMarketBuy: staticCallEncoder(stockRouterAbi, 'depositAndMarketBuy'),
  depositAndLimitBuy: staticCallEncoder(stockRouterAbi, 'depositAndLimitBuy'),
  depositStockAndMarketSell: staticCallEncoder(stockRouterAbi, 'depositStockAndMarketSell'),
  depositStockAndLimitSell: staticCallEncoder(stockRouterAbi, 'depositStockAndLimitSell'),
  cancelLimitOrder: staticCallEncoder(stockRouterAbi, 'cancelLimitOrder'),
  deposit: staticCallEncoder(stockRouterAbi, 'deposit'),
  withdraw: staticCallEncoder(stockRouterAbi, 'withdraw'),
  depositStock: staticCallEncoder(stockRouterAbi, 'depositStock'),
  withdrawStock: staticCallEncoder(stockRouterAbi, 'withdrawStock'),
};

/** The StockRouter function each builder below calls: a calldata answer's `method`. */
export function orderMethod(intent: Pick<OrderIntent, 'type'>): StockRouterMethod {
  return intent.type === 'Market' ? 'placeMarketOrder' : 'placeLimitOrder';
}

export function orderWithDepositMethod(intent: Pick<OrderIntent, 'type' | 'side'>): StockRouterMethod {
  if (intent.side === 'Buy') return intent.type === 'Market' ? 'depositAndMarketBuy' : 'depositAndLimitBuy';
  return intent.type === 'Market' ? 'depositStockAndMarketSell' : 'depositStockAndLimitSell';
}

export const CANCEL_METHOD: StockRouterMethod = 'cancelLimitOrder';

export function cashMethod(kind: 'deposit' | 'withdrawal'): StockRouterMethod {
  return kind === 'deposit' ? 'deposit' : 'withdraw';
}

export function stockMoveMethod(kind: 'deposit' | 'withdrawal'): StockRouterMethod {
  return kind === 'deposit' ? 'depositStock' : 'withdrawStock';
}

/** A market order's worst price: the route set it (withWorstPrice) before any calldata is built. */
function worstOf(intent: OrderIntent): bigint {
  if (intent.worstPrice === undefined) throw new Error('a market order needs its worst price (withWorstPrice) before its calldata');
  return intent.worstPrice;
}

export function orderCalldata(intent: OrderIntent): Hex {
  const stock = intent.stock.address;
  if (intent.type === 'Market') {
    return encode.placeMarketOrder(stock, sideIndex(intent.side), intent.quantity, intent.notional, worstOf(intent), intent.deadline);
  }
  return encode.placeLimitOrder(stock, sideIndex(intent.side), intent.quantity, intent.price, TIF_DAY, intent.deadline);
}

/** The four combined deposit-and-order calls; a buy deposits cash first, a sell deposits stock first. */
export function orderWithDepositCalldata(intent: OrderIntent, cash?: { token: Address; amount: bigint }): Hex {
  const stock = intent.stock.address;
  if (intent.side === 'Buy') {
    if (!cash) throw new Error('a buy with deposit needs the cash token and amount');
    return intent.type === 'Market'
      ? encode.depositAndMarketBuy(cash.token, cash.amount, stock, intent.notional, worstOf(intent), intent.deadline)
      : encode.depositAndLimitBuy(cash.token, cash.amount, stock, intent.quantity, intent.price, TIF_DAY, intent.deadline);
  }
  return intent.type === 'Market'
    ? encode.depositStockAndMarketSell(stock, intent.quantity, worstOf(intent), intent.deadline)
    : encode.depositStockAndLimitSell(stock, intent.quantity, intent.price, TIF_DAY, intent.deadline);
}

export function cancelCalldata(orderId: bigint): Hex {
  return encode.cancelLimitOrder(orderId);
}

export function cashCalldata(kind: 'deposit' | 'withdrawal', token: Address, amount: bigint): Hex {
  return kind === 'deposit' ? encode.deposit(token, amount) : encode.withdraw(token, amount);
}

export function stockMoveCalldata(kind: 'deposit' | 'withdrawal', stock: Address, amount: bigint): Hex {
  return kind === 'deposit' ? encode.depositStock(stock, amount) : encode.withdrawStock(stock, amount);
}
