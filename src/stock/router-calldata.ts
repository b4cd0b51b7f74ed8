/**
 * Calldata for the StockRouter, the only contract the API's calldata targets (seed §1A), encoded
 * by viem from the ABI generated from the contracts' build.
 */
import { encodeFunctionData, type Address, type Hex } from 'viem';
import { stockRouterAbi } from '../chain/abi/generated/index.ts';
import { sideIndex, TIF_DAY, type OrderIntent } from './order-request.ts';

export interface CalldataResult {
  toAddress: Address;
  value: '0';
  callData: Hex;
}

export function orderCalldata(intent: OrderIntent): Hex {
  const stock = intent.stock.address;
  const side = sideIndex(intent.side);
  return intent.type === 'Market'
    ? encodeFunctionData({
        abi: stockRouterAbi,
        functionName: 'placeMarketOrder',
        args: [stock, side, intent.quantity, intent.notional, intent.deadline],
      })
    : encodeFunctionData({
        abi: stockRouterAbi,
        functionName: 'placeLimitOrder',
        args: [stock, side, intent.quantity, intent.price, TIF_DAY, intent.deadline],
      });
}

/** The four combined deposit-and-order calls; a buy deposits cash first, a sell deposits stock first. */
export function orderWithDepositCalldata(intent: OrderIntent, cash?: { token: Address; amount: bigint }): Hex {
  const stock = intent.stock.address;
  if (intent.side === 'Buy') {
    if (!cash) throw new Error('a buy with deposit needs the cash token and amount');
    return intent.type === 'Market'
      ? encodeFunctionData({
          abi: stockRouterAbi,
          functionName: 'depositAndMarketBuy',
          args: [cash.token, cash.amount, stock, intent.notional, intent.deadline],
        })
      : encodeFunctionData({
          abi: stockRouterAbi,
          functionName: 'depositAndLimitBuy',
          args: [cash.token, cash.amount, stock, intent.quantity, intent.price, TIF_DAY, intent.deadline],
        });
  }
  return intent.type === 'Market'
    ? encodeFunctionData({
        abi: stockRouterAbi,
        functionName: 'depositStockAndMarketSell',
        args: [stock, intent.quantity, intent.deadline],
      })
    : encodeFunctionData({
        abi: stockRouterAbi,
        functionName: 'depositStockAndLimitSell',
        args: [stock, intent.quantity, intent.price, TIF_DAY, intent.deadline],
      });
}

export function cancelCalldata(orderId: bigint): Hex {
  return encodeFunctionData({ abi: stockRouterAbi, functionName: 'cancelLimitOrder', args: [orderId] });
}

export function cashCalldata(kind: 'deposit' | 'withdrawal', token: Address, amount: bigint): Hex {
  return encodeFunctionData({ abi: stockRouterAbi, functionName: kind === 'deposit' ? 'deposit' : 'withdraw', args: [token, amount] });
}

export function stockMoveCalldata(kind: 'deposit' | 'withdrawal', stock: Address, amount: bigint): Hex {
  return encodeFunctionData({
    abi: stockRouterAbi,
    functionName: kind === 'deposit' ? 'depositStock' : 'withdrawStock',
    args: [stock, amount],
  });
}
