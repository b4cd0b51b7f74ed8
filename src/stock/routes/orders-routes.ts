/**
 * Orders (seed §4A): calldata for market and limit orders and their with-deposit twins, their One
 * Click `send` variants (the same pre-checks, for the key's bound wallet, relayed), recording of
 * self-submitted order transactions, lookups, and cancel calldata or a relayed cancel.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Address, Hex } from 'viem';
import { NotFoundError, notListed, ValidationError } from '../../errors/app-error.ts';
import { formatDecimal, parseDecimal, rescale } from '../../lib/decimal.ts';
import { TX_HASH_PATTERN, UINT_PATTERN } from '../../http/schema-patterns.ts';
import { isBoundWallet } from '../../auth/api-key-model.ts';
import type { AuthKey } from '../../auth/api-key-service.ts';
import { getOrder, getOrderOwner, listOrderFills, listOrdersByTx, listOrdersForApiKey, type OrderStatus } from '../store/stock-order-store.ts';
import { getTxRecord } from '../store/tx-record-store.ts';
import { buyLock, lowerAddress, parseOrder, type OrderBody, type OrderIntent } from '../order-request.ts';
import { MUSD_DECIMALS } from '../stock-units.ts';
import { orderSchema, orderView } from '../order-view.ts';
import { loadCloseReasons } from '../store/order-reason-store.ts';
import { cancelCalldata, orderCalldata, orderWithDepositCalldata } from '../router-calldata.ts';
import type { StockApiDeps } from '../stock-deps.ts';
import { JSON_UTF8, stockOk, stockOkText } from '../stock-envelope.ts';
import { address, decimal, listOf, millis, pageOf, pageQueryProps, responses } from '../stock-schemas.ts';
import { recordOwnedTransaction, rememberCalldata, waitForProjection } from '../tx-recorder.ts';
import { parseGasLimit, type OneClickService } from '../one-click/one-click-service.ts';
import { gasLimitProp, orderSendSchema, orderSendView, sendHeaders, sendIdempotencyOf } from './one-click-routes.ts';

const orderBodyProps = {
  symbol: { type: 'string', minLength: 1, maxLength: 16, description: 'stock symbol (or stockAddress)' },
  stockAddress: address,
  side: { type: 'string', description: 'Buy or Sell (case-insensitive)' },
  type: { type: 'string', description: 'Market or Limit (case-insensitive)' },
  quantity: { ...decimal, description: 'stock quantity: market sell and limit orders' },
  notional: { ...decimal, description: 'mUSD to spend, fee included: market buy only' },
  price: { ...decimal, description: 'limit price in USD per share: limit orders' },
  timeInForce: { type: 'string', description: 'DAY (the only value accepted)' },
  deadline: { type: 'integer', description: 'Unix seconds, in the future, at most 30 days ahead' },
  userAddress: { ...address, description: 'wallet for the balance pre-checks (default: the key\'s bound wallet)' },
} as const;

export const calldataSchema = {
  type: 'object',
  required: ['toAddress', 'value', 'callData'],
  properties: {
    toAddress: { ...address, description: 'the StockRouter' },
    value: { type: 'string' },
    callData: { type: 'string' },
    spenderAddress: { ...address, description: 'the address to approve token allowances to (the StockRouter)' },
  },
} as const;

const txBody = {
  type: 'object',
  required: ['txHash'],
  additionalProperties: false,
  properties: { txHash: { type: 'string', pattern: TX_HASH_PATTERN } },
} as const;

const STATUSES: OrderStatus[] = ['Open', 'Canceling', 'Filled', 'Canceled', 'Expired', 'Rejected'];

function preCheckUser(req: { body: { userAddress?: string }; apiKey?: { userAddress: string | null } }): Address | undefined {
  const u = req.body.userAddress ?? req.apiKey?.userAddress ?? undefined;
  return u ? lowerAddress(u) : undefined;
}

type WithDepositBody = OrderBody & { tokenAddress?: string; tokenAmount?: string };

const withDepositProps = {
  ...orderBodyProps,
  tokenAddress: { ...address, description: 'buy: the cash token to deposit (default the configured cash token)' },
  tokenAmount: { ...decimal, description: 'buy: cash token amount to deposit (default: what the order locks)' },
} as const;

const sendUserProp = { ...address, description: 'optional; must be the key\'s bound wallet (a send acts only for it)' } as const;

export const ordersRoutes: FastifyPluginAsync<{ deps: StockApiDeps; oneClick: OneClickService }> = async (app, { deps, oneClick }) => {
  const now = deps.now ?? Date.now;
  const nowSeconds = () => Math.floor(now() / 1000);

  /**
   * Read access: the order if `key` recorded its placement or the order is of the key's bound
   * wallet, whoever recorded it. Any other order is not found, as in the list, so a key cannot
   * probe which order ids exist.
   */
  const readableOrder = async (orderId: string, key: AuthKey) => {
    const order = await getOrder(deps.db, orderId);
    if (!order) throw new NotFoundError('order');
    if (!isBoundWallet(key, order.userAddress) && (await getOrderOwner(deps.db, order.orderId)) !== key.apiKey) throw new NotFoundError('order');
    return order;
  };

  /** Only the key that recorded the placement cancels (seed §5A Ownership). */
  const ownOrder = async (orderId: string, key: AuthKey) => {
    const order = await readableOrder(orderId, key);
    if ((await getOrderOwner(deps.db, order.orderId)) !== key.apiKey) {
      // The key sees the order through its bound wallet: saying so tells it nothing new.
      throw new ValidationError('orderId', 'owned by another API key (the key that recorded the order cancels it)');
    }
    return order;
  };

  /** An order the key may cancel now: its own, a limit order, open and not already canceling. */
  const cancellableOrder = async (orderId: string, key: AuthKey) => {
    const order = await ownOrder(orderId, key);
    if (order.orderType !== 'Limit') throw new ValidationError('orderId', 'market orders cannot be cancelled');
    if (order.status === 'Canceling') throw new ValidationError('orderId', 'order is already canceling');
    if (order.status !== 'Open') throw new ValidationError('orderId', 'order is not open');
    return order;
  };

  /** Plain orders draw on the exchange balances: mUSD for a buy, exchange stock for a sell. */
  async function checkPlainOrder(intent: OrderIntent, user: Address): Promise<void> {
    const [account, cfg] = await Promise.all([deps.chain.account(user), deps.chain.marketConfig()]);
    if (intent.side === 'Buy') {
      const need = buyLock(intent, cfg.exchangeFeeConfig.limitFeeBps);
      if (need > account.mUsd.available) {
        const field = intent.type === 'Market' ? 'notional' : 'quantity';
        throw new ValidationError(field, `needs ${formatDecimal(need, MUSD_DECIMALS)} mUSD but the available mUsdBalance is ${formatDecimal(account.mUsd.available, MUSD_DECIMALS)}`);
      }
    } else {
      const b = account.stocks.find((s) => s.address.toLowerCase() === intent.stock.address.toLowerCase());
      const available = b?.exchangeBalance ?? 0n;
      if (intent.quantity > available) {
        throw new ValidationError('quantity', `exceeds the available exchangeBalance ${formatDecimal(available, intent.stock.decimals)} (deposit wallet stock first)`);
      }
    }
  }

  // Order calldata is the busiest write-side answer. Its data is written as text: the router's
  // address and the hex calldata need no escaping, and the test of this route checks the text
  // against what the response schema's serializer makes of it.
  const orderDataHead = `{"toAddress":${JSON.stringify(deps.contracts.stockRouter)},"value":"0","callData":"`;

  function orderAnswer(req: FastifyRequest, reply: FastifyReply, intent: OrderIntent): string {
    const callData = orderCalldata(intent);
    rememberCalldata(deps, req.apiKey!, callData, 'order');
    void reply.type(JSON_UTF8);
    return stockOkText(req.id, orderDataHead + callData + '"}');
  }

  app.post<{ Body: OrderBody }>(
    '/orders/calldata',
    {
      schema: {
        tags: ['orders'],
        summary: 'Calldata for a market or limit order (StockRouter.placeMarketOrder / placeLimitOrder)',
        body: { type: 'object', additionalProperties: false, properties: orderBodyProps },
        response: responses(calldataSchema),
      },
    },
    // Not async: without a balance pre-check (a key with no bound wallet) it answers synchronously.
    (req, reply) => {
      const intent = parseOrder(req.body, deps.stocks, nowSeconds());
      const user = preCheckUser(req);
      return user ? checkPlainOrder(intent, user).then(() => orderAnswer(req, reply, intent)) : orderAnswer(req, reply, intent);
    },
  );

  /** The with-deposit call for `intent`, after the pre-checks against `user`'s wallet when known. */
  async function withDepositCalldata(body: WithDepositBody, intent: OrderIntent, user: Address | undefined): Promise<Hex> {
    const cfg = await deps.chain.marketConfig();
    let callData: Hex;
    if (intent.side === 'Buy') {
      const tokenAddress = lowerAddress(body.tokenAddress ?? deps.contracts.cashToken);
      const token = cfg.cashierTokenConfig.find((t) => t.tokenAddress.toLowerCase() === tokenAddress);
      if (!token || !token.enabled) throw new ValidationError('tokenAddress', 'not a supported cash token');
      const lock = buyLock(intent, cfg.exchangeFeeConfig.limitFeeBps);
      const tokenAmount =
        body.tokenAmount !== undefined
          ? parseDecimal(body.tokenAmount, { field: 'tokenAmount', decimals: token.decimals })
          : rescale(lock, MUSD_DECIMALS, token.decimals, 'ceil');
      const musd = rescale(tokenAmount, token.decimals, MUSD_DECIMALS);
      const creditBuffer = parseDecimal(cfg.cashierBuffer.creditBuffer, { field: 'creditBuffer', decimals: MUSD_DECIMALS, positive: false, max: 2n ** 256n });
      if (musd > creditBuffer) throw new ValidationError('tokenAmount', 'not eligible for an instant deposit (the cashier credit buffer is lower)');
      if (user) {
        const account = await deps.chain.account(user, deps.contracts.stockRouter);
        const wallet = account.cashTokens.find((t) => t.address.toLowerCase() === tokenAddress);
        if ((wallet?.walletBalance ?? 0n) < tokenAmount) throw new ValidationError('tokenAmount', 'exceeds the wallet balance of the cash token');
        if ((wallet?.walletAllowance ?? 0n) < tokenAmount) {
          throw new ValidationError('tokenAmount', `exceeds the wallet's allowance to the spender ${deps.contracts.stockRouter}`);
        }
        if (lock > account.mUsd.available + musd) throw new ValidationError('tokenAmount', 'deposit plus available mUsdBalance does not cover the order');
      }
      callData = orderWithDepositCalldata(intent, { token: tokenAddress, amount: tokenAmount });
    } else {
      if (body.tokenAmount !== undefined || body.tokenAddress !== undefined) {
        throw new ValidationError('tokenAmount', 'not used for a sell: the order quantity is deposited');
      }
      if (user) {
        const account = await deps.chain.account(user, deps.contracts.stockRouter);
        const b = account.stocks.find((s) => s.address.toLowerCase() === intent.stock.address.toLowerCase());
        if ((b?.walletBalance ?? 0n) < intent.quantity) throw new ValidationError('quantity', 'exceeds the wallet balance of the stock token');
        if ((b?.walletAllowance ?? 0n) < intent.quantity) {
          throw new ValidationError('quantity', `exceeds the wallet's stock allowance to the spender ${deps.contracts.stockRouter}`);
        }
      }
      callData = orderWithDepositCalldata(intent);
    }
    return callData;
  }

  app.post<{ Body: WithDepositBody }>(
    '/orders/with-deposit/calldata',
    {
      schema: {
        tags: ['orders'],
        summary: 'Calldata for a deposit and an order in one transaction (depositAndMarketBuy, depositAndLimitBuy, depositStockAndMarketSell, depositStockAndLimitSell)',
        body: { type: 'object', additionalProperties: false, properties: withDepositProps },
        response: responses(calldataSchema),
      },
    },
    async (req) => {
      const intent = parseOrder(req.body, deps.stocks, nowSeconds());
      const callData = await withDepositCalldata(req.body, intent, preCheckUser(req));
      rememberCalldata(deps, req.apiKey!, callData, 'order');
      return stockOk(req.id, { toAddress: deps.contracts.stockRouter, value: '0', callData, spenderAddress: deps.contracts.stockRouter });
    },
  );

  type SendBody<B> = B & { gasLimit?: number | string };
  const sendSchema = (props: Record<string, unknown>, summary: string) => ({
    tags: ['orders', 'one-click'],
    summary,
    body: { type: 'object', additionalProperties: false, properties: { ...props, userAddress: sendUserProp, gasLimit: gasLimitProp } },
    headers: sendHeaders,
    response: responses(orderSendSchema),
  });

  app.post<{ Body: SendBody<OrderBody> }>(
    '/orders/send',
    { schema: sendSchema(orderBodyProps, 'One Click order for the bound wallet: the order calldata relayed through the One Click router, recorded for the key') },
    async (req) => {
      const key = req.apiKey!;
      const user = oneClick.sendingUser(key, req.body.userAddress);
      const idempotency = sendIdempotencyOf(req);
      const again = await oneClick.previousSend(key, idempotency);
      if (again) return stockOk(req.id, orderSendView(again));
      const gasLimit = parseGasLimit(req.body.gasLimit);
      const intent = parseOrder(req.body, deps.stocks, nowSeconds());
      const out = await oneClick.relay(key, user, { kind: 'order', routerCalldata: orderCalldata(intent), gasLimit, checks: [checkPlainOrder(intent, user)], idempotency });
      return stockOk(req.id, orderSendView(out));
    },
  );

  app.post<{ Body: SendBody<WithDepositBody> }>(
    '/orders/with-deposit/send',
    { schema: sendSchema(withDepositProps, 'One Click deposit and order in one transaction for the bound wallet, recorded for the key') },
    async (req) => {
      const key = req.apiKey!;
      const user = oneClick.sendingUser(key, req.body.userAddress);
      const idempotency = sendIdempotencyOf(req);
      const again = await oneClick.previousSend(key, idempotency);
      if (again) return stockOk(req.id, orderSendView(again));
      const gasLimit = parseGasLimit(req.body.gasLimit);
      const intent = parseOrder(req.body, deps.stocks, nowSeconds());
      const [routerCalldata] = await Promise.all([withDepositCalldata(req.body, intent, user), oneClick.assertEnabled(user)]);
      const out = await oneClick.relay(key, user, { kind: 'order', routerCalldata, gasLimit, idempotency });
      return stockOk(req.id, orderSendView(out));
    },
  );

  app.post<{ Body: { txHash: Hex } }>(
    '/orders/tx',
    {
      schema: {
        tags: ['orders'],
        summary: 'Record a self-submitted order transaction to the calling key; backfills the orderId',
        body: txBody,
        response: responses({
          type: 'object',
          required: ['txHash', 'orderIds', 'indexed'],
          properties: {
            txHash: { type: 'string' },
            orderId: { type: ['string', 'null'] },
            orderIds: { type: 'array', items: { type: 'string' } },
            indexed: { type: 'boolean', description: 'false when the indexer had not reached the block yet; poll GET orders/tx/{txHash}' },
          },
        }),
      },
    },
    async (req) => {
      const txHash = req.body.txHash.toLowerCase() as Hex;
      await recordOwnedTransaction(deps, req.apiKey!, txHash, 'order');
      const orders = await waitForProjection(deps, () => listOrdersByTx(deps.db, txHash));
      const orderIds = orders.map((o) => o.orderId);
      return stockOk(req.id, { txHash, orderId: orderIds[0] ?? null, orderIds, indexed: orders.length > 0 });
    },
  );

  app.get<{ Querystring: { symbol?: string; status?: string; state?: 'open' | 'history'; startTime?: number; endTime?: number; page?: number; limit?: number } }>(
    '/orders',
    {
      schema: {
        tags: ['orders'],
        summary: 'Orders mapped to the calling key, newest first',
        querystring: {
          type: 'object',
          properties: {
            symbol: { type: 'string', maxLength: 16 },
            status: { type: 'string', description: 'OPEN, CANCELING, FILLED, CANCELED, EXPIRED or REJECTED' },
            state: { type: 'string', enum: ['open', 'history'] },
            startTime: { ...millis, minimum: 0 },
            endTime: { ...millis, minimum: 0 },
            ...pageQueryProps,
          },
        },
        response: responses(listOf(orderSchema)),
      },
    },
    async (req) => {
      const { offset, limit } = pageOf(req.query);
      let stockAddress: string | undefined;
      if (req.query.symbol !== undefined) {
        const s = deps.stocks.bySymbol(req.query.symbol.toUpperCase());
        if (!s) throw new ValidationError('symbol', notListed(req.query.symbol));
        stockAddress = s.address.toLowerCase();
      }
      let status: OrderStatus | undefined;
      if (req.query.status !== undefined) {
        status = STATUSES.find((s) => s.toLowerCase() === req.query.status!.toLowerCase());
        if (!status) throw new ValidationError('status', `must be one of ${STATUSES.map((s) => s.toUpperCase()).join(', ')}`);
      }
      const page = await listOrdersForApiKey(deps.db, {
        apiKey: req.apiKey!.apiKey,
        userAddress: req.apiKey!.userAddress ?? undefined,
        stockAddress,
        state: req.query.state,
        status,
        startTime: req.query.startTime,
        endTime: req.query.endTime,
        offset,
        limit,
      });
      const reasons = await loadCloseReasons(deps.db, page.rows);
      const rows = await Promise.all(page.rows.map(async (o) => orderView(o, await listOrderFills(deps.db, o.orderId), deps.stocks, reasons.get(o.orderId) ?? null)));
      return stockOk(req.id, { total: page.total, rows });
    },
  );

  app.get<{ Params: { txHash: string } }>(
    '/orders/tx/:txHash',
    {
      schema: {
        tags: ['orders'],
        summary: 'Orders placed by a transaction',
        params: { type: 'object', required: ['txHash'], properties: { txHash: { type: 'string', pattern: TX_HASH_PATTERN } } },
        response: responses({ type: 'array', items: orderSchema }),
      },
    },
    async (req) => {
      const txHash = req.params.txHash.toLowerCase();
      const key = req.apiKey!;
      const all = await listOrdersByTx(deps.db, txHash);
      const recordedByKey = all.length > 0 && (await getTxRecord(deps.db, txHash))?.apiKey === key.apiKey;
      const orders = recordedByKey ? all : all.filter((o) => isBoundWallet(key, o.userAddress));
      if (orders.length === 0) throw new NotFoundError('order');
      const reasons = await loadCloseReasons(deps.db, orders);
      return stockOk(req.id, await Promise.all(orders.map(async (o) => orderView(o, await listOrderFills(deps.db, o.orderId), deps.stocks, reasons.get(o.orderId) ?? null))));
    },
  );

  const orderIdParam = {
    type: 'object',
    required: ['orderId'],
    properties: { orderId: { type: 'string', pattern: UINT_PATTERN, description: 'decimal on-chain order id' } },
  } as const;

  app.get<{ Params: { orderId: string } }>(
    '/orders/:orderId',
    { schema: { tags: ['orders'], summary: 'Order detail, open or historical', params: orderIdParam, response: responses(orderSchema) } },
    async (req) => {
      const order = await readableOrder(req.params.orderId, req.apiKey!);
      const [fills, reasons] = await Promise.all([listOrderFills(deps.db, order.orderId), loadCloseReasons(deps.db, [order])]);
      return stockOk(req.id, orderView(order, fills, deps.stocks, reasons.get(order.orderId) ?? null));
    },
  );

  app.delete<{ Params: { orderId: string } }>(
    '/orders/:orderId/calldata',
    {
      schema: {
        tags: ['orders'],
        summary: 'Cancel calldata for an open limit order of the calling key (StockRouter.cancelLimitOrder)',
        params: orderIdParam,
        response: responses(calldataSchema),
      },
    },
    async (req) => {
      const order = await cancellableOrder(req.params.orderId, req.apiKey!);
      return stockOk(req.id, { toAddress: deps.contracts.stockRouter, value: '0', callData: cancelCalldata(BigInt(order.orderId)) });
    },
  );

  app.delete<{ Params: { orderId: string }; Body: { gasLimit?: number | string } | undefined }>(
    '/orders/:orderId/send',
    {
      schema: {
        tags: ['orders', 'one-click'],
        summary: 'One Click cancel of an open limit order of the calling key, relayed for the bound wallet',
        params: orderIdParam,
        headers: sendHeaders,
        response: responses(orderSendSchema),
      },
    },
    async (req) => {
      const key = req.apiKey!;
      const user = oneClick.sendingUser(key);
      // A retried cancel answers the first attempt's transaction, before the order's state (now
      // cancelling) would refuse it.
      const idempotency = sendIdempotencyOf(req);
      const again = await oneClick.previousSend(key, idempotency);
      if (again) return stockOk(req.id, orderSendView(again, req.params.orderId));
      const body = req.body;
      if (body !== undefined && (typeof body !== 'object' || body === null || Array.isArray(body) || Object.keys(body).some((k) => k !== 'gasLimit'))) {
        throw new ValidationError('body', 'may only hold gasLimit');
      }
      const gasLimit = parseGasLimit(body?.gasLimit);
      const order = await cancellableOrder(req.params.orderId, key);
      if (order.userAddress.toLowerCase() !== user) {
        throw new ValidationError('orderId', `placed by ${order.userAddress}, not the bound wallet: One Click cancels only the bound wallet's orders`);
      }
      const out = await oneClick.relay(key, user, { kind: 'cancel', routerCalldata: cancelCalldata(BigInt(order.orderId)), gasLimit, cancels: order.orderId, idempotency });
      return stockOk(req.id, orderSendView(out, order.orderId));
    },
  );
};
