/**
 * Every endpoint of the tokenized-stock API (openapi/stock-api.json) and the StockClient method
 * that calls it: one method per operation. All are signed; only GETs are resent on failure.
 */
import type { StockClient } from './stock-client.ts';
import type { RouteEntry } from './perp-routes.ts';

type StockMethod = { [K in keyof StockClient]: StockClient[K] extends (...args: any[]) => any ? K : never }[keyof StockClient] & string;

const R = (method: RouteEntry['method'], path: string, name: StockMethod): RouteEntry<StockMethod> => ({
  method,
  path: `/api/v1/${path}`,
  name,
  signed: true,
  idempotent: method === 'GET' ? 'always' : 'never',
});

export const STOCK_ROUTES: ReadonlyArray<RouteEntry<StockMethod>> = [
  R('GET', 'config', 'getConfig'),
  R('GET', 'symbols', 'getSymbols'),
  R('GET', 'prices/{symbol}', 'getPrice'),
  R('GET', 'prices/{symbol}/history', 'getPriceHistory'),
  R('GET', 'underlying/{symbol}/price', 'getUnderlyingPrice'),
  R('GET', 'corporate-action', 'getCorporateActions'),
  R('GET', 'users/{userId}', 'getUser'),
  R('GET', 'users/{userId}/balance', 'getBalance'),
  R('GET', 'users/{userId}/positions', 'getPositions'),
  R('POST', 'orders/calldata', 'orderCalldata'),
  R('POST', 'orders/with-deposit/calldata', 'orderWithDepositCalldata'),
  R('POST', 'orders/send', 'sendOrder'),
  R('POST', 'orders/with-deposit/send', 'sendOrderWithDeposit'),
  R('POST', 'orders/tx', 'recordOrderTx'),
  R('GET', 'orders', 'listOrders'),
  R('GET', 'orders/tx/{txHash}', 'getOrdersByTx'),
  R('GET', 'orders/{orderId}', 'getOrder'),
  R('DELETE', 'orders/{orderId}/calldata', 'cancelOrderCalldata'),
  R('DELETE', 'orders/{orderId}/send', 'sendCancelOrder'),
  R('POST', 'cash/deposits/calldata', 'cashDepositCalldata'),
  R('POST', 'cash/deposits/send', 'sendCashDeposit'),
  R('POST', 'cash/deposits/tx', 'recordCashDepositTx'),
  R('GET', 'cash/deposits', 'listCashDeposits'),
  R('GET', 'cash/deposits/{operationId}', 'getCashDeposit'),
  R('POST', 'cash/withdrawals/calldata', 'cashWithdrawalCalldata'),
  R('POST', 'cash/withdrawals/send', 'sendCashWithdrawal'),
  R('POST', 'cash/withdrawals/tx', 'recordCashWithdrawalTx'),
  R('GET', 'cash/withdrawals', 'listCashWithdrawals'),
  R('GET', 'cash/withdrawals/{operationId}', 'getCashWithdrawal'),
  R('POST', 'stock/deposits/calldata', 'stockDepositCalldata'),
  R('POST', 'stock/deposits/send', 'sendStockDeposit'),
  R('POST', 'stock/deposits/tx', 'recordStockDepositTx'),
  R('GET', 'stock/deposits', 'listStockDeposits'),
  R('GET', 'stock/deposits/{operationId}', 'getStockDeposit'),
  R('POST', 'stock/withdrawals/calldata', 'stockWithdrawalCalldata'),
  R('POST', 'stock/withdrawals/send', 'sendStockWithdrawal'),
  R('POST', 'stock/withdrawals/tx', 'recordStockWithdrawalTx'),
  R('GET', 'stock/withdrawals', 'listStockWithdrawals'),
  R('GET', 'stock/withdrawals/{operationId}', 'getStockWithdrawal'),
  R('GET', '1ct/status', 'getOneClickStatus'),
  R('POST', '1ct/prepare', 'prepareOneClick'),
  R('POST', '1ct/enable', 'submitOneClick'),
  R('POST', '1ct/disable', 'disableOneClick'),
];
