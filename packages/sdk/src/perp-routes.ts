/**
 * Every endpoint of the perpetual API (openapi/perp-api.json) and the PerpClient method that calls
 * it: one method per operation. `signed: false` marks the calls a wallet signature or nothing
 * authorises; `idempotent` the calls the client may resend (see retry-policy.ts).
 */
import type { PerpClient } from './perp-client.ts';

export interface RouteEntry<Name extends string = string> {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** The path as the OpenAPI document writes it, `{name}` for a path parameter. */
  path: string;
  name: Name;
  signed: boolean;
  /**
   * `always` (GETs, the calls whose signed body is its own key: a batch of signed orders, a
   * signed amendment; and `account/withdrawals/build`, which stores nothing), `key` (an
   * Idempotency-Key, clientOrderId or clientWithdrawalId makes it safe), `never`.
   */
  idempotent: 'always' | 'key' | 'never';
}

type PerpMethod = { [K in keyof PerpClient]: PerpClient[K] extends (...args: any[]) => any ? K : never }[keyof PerpClient] & string;

const R = (method: RouteEntry['method'], path: string, name: PerpMethod, idempotent: RouteEntry['idempotent'], signed = true): RouteEntry<PerpMethod> => ({
  method,
  path: `/v4/public/trader/${path}`,
  name,
  signed,
  idempotent,
});

export const PERP_ROUTES: ReadonlyArray<RouteEntry<PerpMethod>> = [
  R('GET', 'time', 'getServerTime', 'always', false),
  R('GET', 'instruments', 'getInstruments', 'always'),
  R('GET', 'depth', 'getDepth', 'always'),
  R('GET', 'tickers', 'getTickers', 'always'),
  R('GET', 'klines', 'getKlines', 'always'),
  R('GET', 'market-trades', 'getMarketTrades', 'always'),
  R('GET', 'funding-rates', 'getFundingRates', 'always'),
  R('POST', 'api-keys/prepare', 'prepareApiKey', 'never', false),
  R('POST', 'api-keys', 'submitApiKey', 'never', false),
  R('GET', 'api-keys', 'listApiKeys', 'always'),
  R('PATCH', 'api-keys/{apiKey}', 'updateApiKey', 'never'),
  R('DELETE', 'api-keys/{apiKey}', 'deleteApiKey', 'never'),
  R('POST', 'orders/build', 'buildOrder', 'never'),
  R('POST', 'orders', 'submitOrder', 'key'),
  R('POST', 'orders/fill', 'fillOrder', 'key'),
  R('POST', 'orders/batch', 'submitBatchOrders', 'always'),
  R('POST', 'orders/amend/build', 'buildAmend', 'never'),
  R('POST', 'orders/amend', 'submitAmend', 'always'),
  R('GET', 'orders/{orderId}', 'getOrder', 'always'),
  R('GET', 'orders/client/{clientOrderId}', 'getOrderByClientId', 'always'),
  R('POST', 'positions/close', 'submitClosePosition', 'key'),
  R('DELETE', 'orders/{orderId}', 'cancelOrder', 'key'),
  R('POST', 'orders/batch-cancel', 'batchCancel', 'key'),
  R('POST', 'positions/adjust', 'setLeverage', 'key'),
  R('POST', 'positions/margin', 'adjustMargin', 'key'),
  R('POST', 'orders/cancel-all-after', 'cancelAllAfter', 'key'),
  R('GET', 'one-click', 'getOneClick', 'always'),
  R('POST', 'one-click/prepare', 'prepareOneClick', 'never'),
  R('POST', 'one-click/enable', 'submitOneClick', 'never'),
  R('POST', 'one-click/disable', 'disableOneClick', 'never'),
  R('GET', 'account', 'getAccount', 'always'),
  R('GET', 'account/assets', 'getAssets', 'always'),
  R('GET', 'account/proof', 'getAccountProof', 'always'),
  R('GET', 'positions', 'getPositions', 'always'),
  R('GET', 'account/deposits', 'listDeposits', 'always'),
  R('POST', 'account/withdrawals/build', 'buildWithdrawal', 'always'),
  R('POST', 'account/withdrawals', 'submitWithdrawal', 'key'),
  R('GET', 'account/withdrawals', 'listWithdrawals', 'always'),
  R('GET', 'account/transactions', 'listTransactions', 'always'),
  R('GET', 'orders/open', 'getOpenOrders', 'always'),
  R('GET', 'orders/history', 'listOrderHistory', 'always'),
  R('GET', 'trades', 'listTrades', 'always'),
  R('POST', 'approve/prepare', 'prepareApprove', 'never'),
  R('POST', 'approve/submit', 'submitApprove', 'never'),
  R('GET', 'approve/{txHash}', 'getApprove', 'always'),
  R('POST', 'deposit/prepare', 'prepareDeposit', 'never'),
  R('POST', 'deposit/submit', 'submitDeposit', 'never'),
  R('GET', 'deposit/{txHash}', 'getDeposit', 'always'),
  R('POST', 'liquidity/add', 'addLiquidity', 'key'),
  R('POST', 'liquidity/remove', 'removeLiquidity', 'key'),
  R('GET', 'liquidity/positions', 'liquidityPositions', 'always'),
  R('GET', 'liquidity/history', 'liquidityHistory', 'always'),
  R('GET', 'insurance-fund', 'getInsuranceFund', 'always', false),
];
