/**
 * Orders (seed §4A): calldata for market and limit orders and their with-deposit twins, their One
 * Click `send` variants (the same pre-checks, for the key's bound wallet, relayed), recording of
 * self-submitted order transactions, lookups, and cancel calldata or a relayed cancel. Every shape
 * is the contract's (packages/contract); this module only routes.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  ListOf,
  pageOf,
  STOCK_ORDER_STATUSES,
  StockCalldataSchema,
  StockOrderBodySchema,
  StockOrderIdParams,
  StockOrderListQuerySchema,
  StockOrderSchema,
  StockOrderSendBodySchema,
  StockOrderSendSchema,
  StockOrderWithDepositBodySchema,
  StockOrderWithDepositSendBodySchema,
  StockRecordedOrderTxSchema,
  stockResponses,
  StockSendHeaders,
  StockTxBodySchema,
  StockTxHashParams,
  Type,
  type StockCancelSendBody,
  type StockOrderStatus,
  type StockOrderWithDepositBody,
} from '@tokex/contract';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Address, Hex } from 'viem';
import { NotFoundError, notListed, ValidationError } from '../../errors/app-error.ts';
import { formatDecimal, parseDecimal, rescale } from '../../lib/decimal.ts';
import { isBoundWallet } from '../../auth/api-key-model.ts';
import type { AuthKey } from '../../auth/api-key-service.ts';
import { getOrder, getOrderOwner, listOrderFills, listOrdersByTx, listOrdersForApiKey, type OrderStatus } from '../store/stock-order-store.ts';
import { getTxRecord } from '../store/tx-record-store.ts';
import { buyLock, checkOrderSession, lowerAddress, parseOrder, parseStockAmount, withWorstPrice, type OrderBody, type OrderIntent } from '../order-request.ts';
import { usableQuote } from '../quote-prices.ts';
import { MUSD_DECIMALS } from '../stock-units.ts';
import { orderView } from '../order-view.ts';
import { loadCloseReasons } from '../store/order-reason-store.ts';
import { CANCEL_METHOD, cancelCalldata, orderCalldata, orderMethod, orderWithDepositCalldata, orderWithDepositMethod } from '../router-calldata.ts';
import type { StockApiDeps } from '../stock-deps.ts';
import { JSON_UTF8, stockOkText } from '../stock-envelope.ts';
import { okReply } from './stock-reply.ts';
import { recordOwnedTransaction, rememberCalldata, waitForProjection } from '../tx-recorder.ts';
import { parseGasLimit, type OneClickService } from '../one-click/one-click-service.ts';
import { orderSendView, sendIdempotencyOf } from './one-click-routes.ts';
import { venueNow } from '../../lib/venue-clock.ts';

/** The store's spelling of each status `GET orders?status=` takes. */
const STORE_STATUS: Record<StockOrderStatus, OrderStatus> = {
  OPEN: 'Open',
  CANCELING: 'Canceling',
  FILLED: 'Filled',
  CANCELED: 'Canceled',
  EXPIRED: 'Expired',
  REJECTED: 'Rejected',
};

function preCheckUser(req: { body: { userAddress?: string }; apiKey?: { userAddress: string | null } }): Address | undefined {
  const u = req.body.userAddress ?? req.apiKey?.userAddress ?? undefined;
  return u ? lowerAddress(u) : undefined;
}

type WithDepositBody = StockOrderWithDepositBody;

export const ordersRoutes: FastifyPluginAsyncTypebox<{ deps: StockApiDeps; oneClick: OneClickService }> = async (app, { deps, oneClick }) => {
  const now = deps.now ?? venueNow;
  /** The order a body asks for, accepted now: valid, and placeable in the session on (us-sessions). */
  const orderOf = (body: OrderBody): OrderIntent => {
    const t = now();
    const intent = parseOrder(body, deps.stocks, Math.floor(t / 1000));
    checkOrderSession(intent, deps.calendar, t);
    // A market order carries the user's worst price: the body's, or the last quote moved by
    // slippageBps. A stale quote still bounds the order (the executor fills only on a fresh one, and
    // never beyond the bound), so only a symbol never quoted needs the body's.
    return intent.type === 'Market' && intent.worstPrice === undefined
      ? withWorstPrice(intent, usableQuote(deps.quotes.getQuote(intent.stock.symbol), t, Number.POSITIVE_INFINITY))
      : intent;
  };

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

  /** What every calldata answer says beside the call (anchored-reference.md §4.3). */
  const callContext = { chainId: deps.chainId, productType: deps.product };

  // Order calldata is the busiest write-side answer. Its data is written as text: the router's
  // address and the hex calldata need no escaping, and the test of this route checks the text
  // against what the response schema's serializer makes of it.
  // Made at the first answer: a chain started after the API was built has its router only then.
  let orderDataHead: string | undefined;
  const orderDataTail = (type: OrderIntent['type']) =>
    `","method":${JSON.stringify(orderMethod({ type }))},"chainId":${deps.chainId},"productType":${JSON.stringify(deps.product)}}`;
  const orderDataTails = { Market: orderDataTail('Market'), Limit: orderDataTail('Limit') };

  function orderAnswer(req: FastifyRequest, reply: FastifyReply, intent: OrderIntent): string {
    const callData = orderCalldata(intent);
    rememberCalldata(deps, req.apiKey!, callData, 'order');
    void reply.type(JSON_UTF8);
    orderDataHead ??= `{"toAddress":${JSON.stringify(deps.contracts.stockRouter)},"value":"0","callData":"`;
    return stockOkText(req.id, orderDataHead + callData + orderDataTails[intent.type]);
  }

  // The reply is the envelope as text (orderAnswer); the schema is named to the route so the body
  // is still typed from it.
  const orderCalldataSchema = {
    tags: ['orders'],
    summary: 'Calldata for a market or limit order (StockRouter.placeMarketOrder / placeLimitOrder)',
    body: StockOrderBodySchema,
    response: stockResponses(StockCalldataSchema),
  };
  app.post<{ Reply: string }, unknown, typeof orderCalldataSchema>(
    '/orders/calldata',
    { schema: orderCalldataSchema },
    // Not async: without a balance pre-check (a key with no bound wallet) it answers synchronously.
    (req, reply) => {
      const intent = orderOf(req.body);
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
          ? parseStockAmount(body.tokenAmount, 'tokenAmount', token.decimals)
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

  app.post(
    '/orders/with-deposit/calldata',
    {
      schema: {
        tags: ['orders'],
        summary: 'Calldata for a deposit and an order in one transaction (depositAndMarketBuy, depositAndLimitBuy, depositStockAndMarketSell, depositStockAndLimitSell)',
        body: StockOrderWithDepositBodySchema,
        response: stockResponses(StockCalldataSchema),
      },
    },
    async (req) => {
      const intent = orderOf(req.body);
      const callData = await withDepositCalldata(req.body, intent, preCheckUser(req));
      rememberCalldata(deps, req.apiKey!, callData, 'order');
      return okReply(req.id, {
        toAddress: deps.contracts.stockRouter,
        value: '0',
        callData,
        method: orderWithDepositMethod(intent),
        ...callContext,
        spenderAddress: deps.contracts.stockRouter,
      });
    },
  );

  const sendTags = ['orders', 'one-click'];

  /**
   * A One Click order send: a retry under its Idempotency-Key answers the first attempt; otherwise
   * the order is read and `call` makes the router calldata (and the send's own checks) relayed for
   * the wallet bound to the key.
   */
  async function sendOrder(
    req: FastifyRequest,
    body: OrderBody & { userAddress?: string; gasLimit?: unknown },
    call: (intent: OrderIntent, user: Address) => Promise<{ routerCalldata: Hex; checks?: ReadonlyArray<Promise<void>> }>,
  ) {
    const key = req.apiKey!;
    const user = oneClick.sendingUser(key, body.userAddress);
    const idempotency = sendIdempotencyOf(req);
    const again = await oneClick.previousSend(key, idempotency);
    if (again) return okReply(req.id, orderSendView(again));
    const gasLimit = parseGasLimit(body.gasLimit);
    const intent = orderOf(body);
    const out = await oneClick.relay(key, user, { kind: 'order', ...(await call(intent, user)), gasLimit, idempotency });
    return okReply(req.id, orderSendView(out));
  }

  app.post(
    '/orders/send',
    {
      schema: {
        tags: sendTags,
        summary: 'One Click order for the bound wallet: the order calldata relayed through the One Click router, recorded for the key',
        body: StockOrderSendBodySchema,
        headers: StockSendHeaders,
        response: stockResponses(StockOrderSendSchema),
      },
    },
    (req) => sendOrder(req, req.body, async (intent, user) => ({ routerCalldata: orderCalldata(intent), checks: [checkPlainOrder(intent, user)] })),
  );

  app.post(
    '/orders/with-deposit/send',
    {
      schema: {
        tags: sendTags,
        summary: 'One Click deposit and order in one transaction for the bound wallet, recorded for the key',
        body: StockOrderWithDepositSendBodySchema,
        headers: StockSendHeaders,
        response: stockResponses(StockOrderSendSchema),
      },
    },
    (req) =>
      sendOrder(req, req.body, async (intent, user) => {
        const [routerCalldata] = await Promise.all([withDepositCalldata(req.body, intent, user), oneClick.assertEnabled(user)]);
        return { routerCalldata };
      }),
  );

  app.post(
    '/orders/tx',
    {
      schema: {
        tags: ['orders'],
        summary: 'Record a self-submitted order transaction to the calling key; backfills the orderId',
        body: StockTxBodySchema,
        response: stockResponses(StockRecordedOrderTxSchema),
      },
    },
    async (req) => {
      const txHash = req.body.txHash.toLowerCase() as Hex;
      await recordOwnedTransaction(deps, req.apiKey!, txHash, 'order');
      const orders = await waitForProjection(deps, () => listOrdersByTx(deps.db, txHash));
      const orderIds = orders.map((o) => o.orderId);
      const indexed = orders.length > 0;
      return okReply(req.id, { txHash, orderId: orderIds[0] ?? null, orderIds, indexed, mappingStatus: indexed ? ('Indexed' as const) : ('Pending' as const) });
    },
  );

  app.get(
    '/orders',
    {
      schema: {
        tags: ['orders'],
        summary: 'Orders mapped to the calling key, newest first',
        querystring: StockOrderListQuerySchema,
        response: stockResponses(ListOf(StockOrderSchema)),
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
        const asked = STOCK_ORDER_STATUSES.find((s) => s.toLowerCase() === req.query.status!.toLowerCase());
        if (!asked) throw new ValidationError('status', `must be one of ${STOCK_ORDER_STATUSES.join(', ')}`);
        status = STORE_STATUS[asked];
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
      return okReply(req.id, { total: page.total, rows });
    },
  );

  app.get(
    '/orders/tx/:txHash',
    {
      schema: {
        tags: ['orders'],
        summary: 'Orders placed by a transaction',
        params: StockTxHashParams,
        response: stockResponses(Type.Array(StockOrderSchema)),
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
      return okReply(req.id, await Promise.all(orders.map(async (o) => orderView(o, await listOrderFills(deps.db, o.orderId), deps.stocks, reasons.get(o.orderId) ?? null))));
    },
  );

  app.get(
    '/orders/:orderId',
    { schema: { tags: ['orders'], summary: 'Order detail, open or historical', params: StockOrderIdParams, response: stockResponses(StockOrderSchema) } },
    async (req) => {
      const order = await readableOrder(req.params.orderId, req.apiKey!);
      const [fills, reasons] = await Promise.all([listOrderFills(deps.db, order.orderId), loadCloseReasons(deps.db, [order])]);
      return okReply(req.id, orderView(order, fills, deps.stocks, reasons.get(order.orderId) ?? null));
    },
  );

  app.delete(
    '/orders/:orderId/calldata',
    {
      schema: {
        tags: ['orders'],
        summary: 'Cancel calldata for an open limit order of the calling key (StockRouter.cancelLimitOrder)',
        params: StockOrderIdParams,
        response: stockResponses(StockCalldataSchema),
      },
    },
    async (req) => {
      const order = await cancellableOrder(req.params.orderId, req.apiKey!);
      return okReply(req.id, { toAddress: deps.contracts.stockRouter, value: '0', callData: cancelCalldata(BigInt(order.orderId)), method: CANCEL_METHOD, ...callContext });
    },
  );

  app.delete(
    '/orders/:orderId/send',
    {
      schema: {
        tags: sendTags,
        summary: 'One Click cancel of an open limit order of the calling key, relayed for the bound wallet',
        params: StockOrderIdParams,
        headers: StockSendHeaders,
        response: stockResponses(StockOrderSendSchema),
      },
    },
    async (req) => {
      const key = req.apiKey!;
      const user = oneClick.sendingUser(key);
      // A retried cancel answers the first attempt's transaction, before the order's state (now
      // cancelling) would refuse it.
      const idempotency = sendIdempotencyOf(req);
      const again = await oneClick.previousSend(key, idempotency);
      if (again) return okReply(req.id, orderSendView(again, req.params.orderId));
      // The route declares no body (a DELETE's body is optional): it is checked here.
      const body = req.body as StockCancelSendBody | undefined;
      if (body !== undefined && (typeof body !== 'object' || body === null || Array.isArray(body) || Object.keys(body).some((k) => k !== 'gasLimit'))) {
        throw new ValidationError('body', 'may only hold gasLimit');
      }
      const gasLimit = parseGasLimit(body?.gasLimit);
      const order = await cancellableOrder(req.params.orderId, key);
      if (order.userAddress.toLowerCase() !== user) {
        throw new ValidationError('orderId', `placed by ${order.userAddress}, not the bound wallet: One Click cancels only the bound wallet's orders`);
      }
      const out = await oneClick.relay(key, user, { kind: 'cancel', routerCalldata: cancelCalldata(BigInt(order.orderId)), gasLimit, cancels: order.orderId, idempotency });
      return okReply(req.id, orderSendView(out, order.orderId));
    },
  );
};
