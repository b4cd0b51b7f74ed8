/**
 * The CCXT class's orders (tokex-perp.ts): create (one or a batch), edit, cancel, the order lists and
 * the account's trades. Nothing is rounded: a size off the lot or a price off the tick is refused
 * before any request.
 */
import {
  MAX_BATCH_CANCEL,
  MAX_BATCH_ORDERS,
  OPEN_ORDER_STATUSES,
  orderBasicIssue,
  requestWeight,
  TIME_IN_FORCE_BY_TYPE,
  timeInForceAllowed,
  TRIGGER_ORDER_TYPES,
} from '@tokex/contract';
import {
  Precise,
  ArgumentsRequired,
  AuthenticationError,
  BadRequest,
  InvalidOrder,
  NotSupported,
  OrderNotFound,
} from 'ccxt';
import type { Dict, Int, Market, Num, Order, OrderRequest, OrderSide, OrderType, Str, Trade } from 'ccxt';
import { PAGE_MAX, type Json } from './tokex-perp-base.ts';
import { TokexPerpAccount } from './tokex-perp-account.ts';

/** How many pages of order history fetchOrder reads before it gives up. */
const ORDER_SCAN_PAGES = 20;

/** Orders: checked here as the venue checks them, built by the venue, signed by the wallet (EIP-712), placed. */
export class TokexPerpOrders extends TokexPerpAccount {
  // ---------------------------------------------------------------- orders

  /**
   * The `orders/build` request of a CCXT createOrder call, checked here as the venue would check it
   * (nothing is rounded): the lot, the size limits, the tick, the time in force, the contract's
   * stateless rules. Trigger orders as Binance's class maps them: `params.stopLossPrice` makes a
   * STOP_MARKET (type `market`) or STOP_LIMIT (type `limit`), `params.takeProfitPrice` a
   * TAKE_PROFIT_MARKET / TAKE_PROFIT_LIMIT, `params.triggerPrice` (or `stopPrice`) alone a stop, or
   * with `params.triggerDirection` (`above`/`up`, `below`/`down`) the type that fires on that move;
   * the venue's own type names (`stop_market`, ...) with `triggerPrice` work too.
   * `params.triggerBy` (`MARK`/`LAST`), CCXT's `triggerPriceType` (`mark`/`last`) or Binance's
   * `workingType` (`MARK_PRICE`/`CONTRACT_PRICE`) pick the price watched; `params.closePosition`
   * closes the whole position when it fires (the amount is then not sent).
   */
  protected orderRequest(symbol: string, type: OrderType | string, side: OrderSide | string, amount: Num, price: Num, params: Dict, method = 'createOrder'): [Dict, Dict, Market] {
    const market = this.market(symbol);
    let orderType = String(type).toUpperCase();
    const orderSide = String(side).toUpperCase();
    if (orderSide !== 'BUY' && orderSide !== 'SELL') throw new InvalidOrder(`${this.id} ${method}() side must be buy or sell`);
    if (this.safeValue(params, 'stopLoss') !== undefined || this.safeValue(params, 'takeProfit') !== undefined) {
      throw new NotSupported(`${this.id} ${method}() attaches no stop-loss or take-profit to an order: place them as their own trigger orders (stopLossPrice, takeProfitPrice)`);
    }
    const stopLossPrice = this.safeString(params, 'stopLossPrice');
    const takeProfitPrice = this.safeString(params, 'takeProfitPrice');
    const genericTrigger = this.safeString2(params, 'triggerPrice', 'stopPrice');
    if ([stopLossPrice, takeProfitPrice, genericTrigger].filter((x) => x !== undefined).length > 1) {
      throw new InvalidOrder(`${this.id} ${method}() takes one of triggerPrice, stopLossPrice and takeProfitPrice`);
    }
    const triggerPrice = stopLossPrice ?? takeProfitPrice ?? genericTrigger;
    const isTriggerType = (TRIGGER_ORDER_TYPES as readonly string[]).includes(orderType);
    if (triggerPrice !== undefined && !isTriggerType) {
      if (orderType !== 'LIMIT' && orderType !== 'MARKET') throw new InvalidOrder(`${this.id} ${method}() type must be limit or market`);
      let stop = takeProfitPrice === undefined;
      const direction = this.safeStringLower(params, 'triggerDirection');
      if (genericTrigger !== undefined && direction !== undefined) {
        const rise = direction === 'above' || direction === 'up' || direction === 'ascending';
        const fall = direction === 'below' || direction === 'down' || direction === 'descending';
        if (!rise && !fall) throw new InvalidOrder(`${this.id} ${method}() triggerDirection must be above or below`);
        // A BUY stop and a SELL take-profit fire on a rise.
        stop = rise === (orderSide === 'BUY');
      }
      orderType = `${stop ? 'STOP' : 'TAKE_PROFIT'}_${orderType}`;
    } else if (isTriggerType && (stopLossPrice !== undefined || takeProfitPrice !== undefined) && orderType.startsWith('STOP_') !== (stopLossPrice !== undefined)) {
      throw new InvalidOrder(`${this.id} ${method}() a ${orderType} order takes ${orderType.startsWith('STOP_') ? 'stopLossPrice' : 'takeProfitPrice'} or triggerPrice`);
    } else if (isTriggerType && triggerPrice === undefined) {
      throw new ArgumentsRequired(`${this.id} ${method}() a ${orderType} order requires params.triggerPrice`);
    } else if (!isTriggerType && orderType !== 'LIMIT' && orderType !== 'MARKET') {
      throw new InvalidOrder(`${this.id} ${method}() type must be limit, market or one of ${TRIGGER_ORDER_TYPES.join(', ').toLowerCase()}`);
    }
    const trigger = triggerPrice !== undefined;
    const closePosition = this.safeBool(params, 'closePosition', false) as boolean;
    if (closePosition && !trigger) throw new InvalidOrder(`${this.id} ${method}() closePosition is for trigger orders (stopLossPrice, takeProfitPrice, triggerPrice)`);
    const request: Dict = { symbol: market.id, side: orderSide, type: orderType };
    if (!closePosition) {
      const size = this.numberToString(amount) as string;
      this.checkStep('amount', size, this.safeString(market.info, 'lotSize') as string, method);
      const minSize = this.safeString(market.info, 'minSize');
      const maxSize = this.safeString(market.info, 'maxSize');
      if (minSize !== undefined && Precise.stringLt(size, minSize)) throw new InvalidOrder(`${this.id} ${method}() amount ${size} is below the minimum ${minSize} of ${market.symbol}`);
      if (maxSize !== undefined && Precise.stringGt(size, maxSize)) throw new InvalidOrder(`${this.id} ${method}() amount ${size} is above the maximum ${maxSize} of ${market.symbol}`);
      request['size'] = size;
    } else {
      request['closePosition'] = true;
    }
    const tick = this.safeString(market.info, 'tickSize') as string;
    const isMarket = !orderType.endsWith('LIMIT');
    if (!isMarket) {
      if (price === undefined || price === null) throw new ArgumentsRequired(`${this.id} ${method}() requires a price for a ${orderType.toLowerCase()} order`);
      const priceStr = this.numberToString(price);
      this.checkStep('price', priceStr, tick, method);
      request['price'] = priceStr;
    } else {
      // A market order takes price only as an explicit worst price (params.worstPrice).
      const worst = this.safeString(params, 'worstPrice');
      if (worst !== undefined) {
        this.checkStep('worstPrice', worst, tick, method);
        request['price'] = worst;
      }
    }
    if (trigger) {
      const t = this.numberToString(triggerPrice);
      this.checkStep('triggerPrice', t, tick, method);
      request['triggerPrice'] = t;
      const triggerBy = this.triggerBy(params, method);
      if (triggerBy !== undefined) request['triggerBy'] = triggerBy;
    }
    let timeInForce = this.safeStringUpper(params, 'timeInForce');
    if (timeInForce === 'PO') timeInForce = 'POST_ONLY';
    const postOnly = this.safeBool(params, 'postOnly', false) || timeInForce === 'POST_ONLY';
    if (postOnly) {
      if (isMarket) throw new InvalidOrder(`${this.id} ${method}() postOnly is for limit orders`);
      timeInForce = 'POST_ONLY';
    }
    if (timeInForce !== undefined) {
      if (!timeInForceAllowed(orderType, timeInForce)) {
        throw new InvalidOrder(`${this.id} ${method}() timeInForce ${timeInForce} is not allowed for a ${orderType} order (${TIME_IN_FORCE_BY_TYPE[orderType as keyof typeof TIME_IN_FORCE_BY_TYPE].join(', ')})`);
      }
      request['timeInForce'] = timeInForce;
    }
    if (this.safeBool(params, 'reduceOnly', false)) request['reduceOnly'] = true;
    const clientOrderId = this.safeString2(params, 'clientOrderId', 'clientOid');
    if (clientOrderId !== undefined) request['clientOrderId'] = clientOrderId;
    const expiry = this.safeInteger(params, 'expiry');
    if (expiry !== undefined) request['expiry'] = expiry;
    const extra = this.omit(params, [
      'timeInForce', 'postOnly', 'reduceOnly', 'clientOrderId', 'clientOid', 'expiry', 'worstPrice', 'stopLossPrice', 'takeProfitPrice', 'triggerPrice',
      'stopPrice', 'triggerDirection', 'triggerBy', 'triggerPriceType', 'workingType', 'closePosition', 'idempotencyKey',
    ]);
    // The venue's stateless rules (the contract's), refused here exactly as the server would.
    const issue = orderBasicIssue({
      side: request['side'], type: request['type'], size: request['size'], price: request['price'], timeInForce: request['timeInForce'], clientOrderId: request['clientOrderId'],
      triggerPrice: request['triggerPrice'], triggerBy: request['triggerBy'], closePosition: request['closePosition'],
    });
    if (issue !== undefined) throw new InvalidOrder(`${this.id} ${method}() ${issue.field}: ${issue.reason}`);
    return [request, extra, market];
  }

  /** The price a trigger watches: `triggerBy` (MARK, LAST), CCXT's `triggerPriceType` or Binance's `workingType`. */
  private triggerBy(params: Dict, method: string): string | undefined {
    const raw = this.safeStringUpper(params, 'triggerBy') ?? this.safeStringUpper(params, 'triggerPriceType') ?? this.safeStringUpper(params, 'workingType');
    if (raw === undefined) return undefined;
    const by = this.safeString({ MARK: 'MARK', LAST: 'LAST', MARK_PRICE: 'MARK', CONTRACT_PRICE: 'LAST' } as Dict, raw);
    if (by === undefined) throw new InvalidOrder(`${this.id} ${method}() a trigger watches the mark or the last price (triggerPriceType mark or last), not ${raw.toLowerCase()}`);
    return by;
  }

  /** `orders/build` then the wallet's EIP-712 signature: the body `POST orders` takes. */
  protected async buildAndSign(request: Dict, extra: Dict): Promise<{ message: Dict; signature: string }> {
    const wallet = this.wallet();
    const built = await this.call('POST', 'orders/build', this.extend(request, extra));
    return this.signBuilt(built.typedData, wallet);
  }

  /** Signs typed data the venue built (an order, a trigger order, an amendment) with the key's own wallet. */
  protected async signBuilt(typedData: Json, wallet = this.wallet()): Promise<{ message: Dict; signature: string }> {
    const domainChain = this.safeString(typedData.domain, 'chainId');
    if (domainChain !== undefined && this.safeString(this.options, 'chainId') === undefined) this.options['detectedChainId'] = domainChain;
    if (String(typedData.message.account).toLowerCase() !== wallet.address.toLowerCase()) {
      throw new AuthenticationError(`${this.id} the API key is bound to another wallet than privateKey`);
    }
    const signature = await wallet.signTypedData(typedData);
    return { message: typedData.message, signature };
  }

  override async createOrder(symbol: string, type: OrderType, side: OrderSide, amount: number, price: Num = undefined, params: Dict = {}): Promise<Order> {
    await this.loadMarkets();
    const [request, extra, market] = this.orderRequest(symbol, type, side, amount, price, params);
    const signed = await this.buildAndSign(request, extra);
    const placed = await this.call('POST', 'orders', signed);
    return this.parseOrder(placed, market);
  }

  /**
   * Up to 20 orders in one `POST orders/batch`: each built and signed first (all checked here
   * before the first request), then placed in order and journalled together. Each order is
   * answered on its own: one the venue refused is `status: 'rejected'` with the venue's
   * `{code, msg}` in `info`, the others are placed.
   */
  override async createOrders(orders: OrderRequest[], params: Dict = {}): Promise<Order[]> {
    await this.loadMarkets();
    if (!Array.isArray(orders) || orders.length === 0 || orders.length > MAX_BATCH_ORDERS) {
      throw new BadRequest(`${this.id} createOrders() takes 1 to ${MAX_BATCH_ORDERS} orders`);
    }
    const prepared = orders.map((o) => this.orderRequest(o.symbol, o.type, o.side, o.amount, o.price, this.extend(params, o.params ?? {}), 'createOrders'));
    const signed: Array<{ message: Dict; signature: string }> = [];
    for (const [request, extra] of prepared) signed.push(await this.buildAndSign(request, extra));
    const data = await this.call('POST', 'orders/batch', { orders: signed }, 'private', undefined, requestWeight(signed.length));
    const results = this.safeList(data, 'results', []) as Json[];
    return results.map((r, i) => {
      const market = prepared[i][2];
      if (this.safeInteger(r, 'code') === 0) return this.parseOrder(this.safeDict(r, 'order') as Dict, market);
      return this.safeOrder({ info: r, status: 'rejected', symbol: market!.symbol, clientOrderId: this.safeString(prepared[i][0], 'clientOrderId') }, market);
    });
  }

  /**
   * Amends an open order (`orders/amend/build`, signed by the wallet, `orders/amend`): a new price
   * and/or a new total `amount` (more than what has filled). The order keeps its id; a smaller size
   * at the same price keeps its place in the queue, anything else queues it again. `type` and `side`
   * cannot change (they are not sent); `symbol`, when given, checks the lot and tick first.
   */
  override async editOrder(id: string, symbol: string, type: OrderType, side: OrderSide, amount: Num = undefined, price: Num = undefined, params: Dict = {}): Promise<Order> {
    await this.loadMarkets();
    const typedData = (await this.call('POST', 'orders/amend/build', this.amendRequest(id, symbol, amount, price, params))).typedData;
    const placed = await this.call('POST', 'orders/amend', await this.signBuilt(typedData));
    return this.parseOrder(placed, symbol === undefined ? undefined : this.market(symbol));
  }

  protected amendRequest(id: string, symbol: Str, amount: Num, price: Num, params: Dict): Dict {
    const market = symbol === undefined || symbol === null ? undefined : this.market(symbol);
    const request: Dict = { orderId: String(id) };
    if (amount !== undefined && amount !== null) {
      const size = this.numberToString(amount) as string;
      this.checkStep('amount', size, market === undefined ? (undefined as unknown as string) : (this.safeString(market.info, 'lotSize') as string), 'editOrder');
      request['size'] = size;
    }
    if (price !== undefined && price !== null) {
      const p = this.numberToString(price);
      this.checkStep('price', p, market === undefined ? (undefined as unknown as string) : (this.safeString(market.info, 'tickSize') as string), 'editOrder');
      request['price'] = p;
    }
    if (request['size'] === undefined && request['price'] === undefined) throw new ArgumentsRequired(`${this.id} editOrder() requires a new amount or price`);
    const expiry = this.safeInteger(params, 'expiry');
    if (expiry !== undefined) request['expiry'] = expiry;
    return request;
  }

  /** Refuses a value off its step: the venue would refuse it (51010/51011), and rounding it here would change the order. */
  private checkStep(field: string, value: string, step: string, method = 'createOrder'): void {
    // NaN, Infinity or a word would reach Precise's BigInt as a SyntaxError: refuse it as CCXT would.
    if (typeof value !== 'string' || !/^-?\d+(\.\d+)?$/.test(value)) throw new InvalidOrder(`${this.id} ${method}() ${field} ${value} is not a number`);
    if (!Precise.stringGt(value, '0')) throw new InvalidOrder(`${this.id} ${method}() ${field} must be above zero`);
    if (step !== undefined && Precise.stringMod(value, step) !== '0') {
      throw new InvalidOrder(`${this.id} ${method}() ${field} ${value} is not a multiple of ${step}`);
    }
  }


  override async cancelOrder(id: string, symbol: Str = undefined, params: Dict = {}): Promise<Order> {
    await this.loadMarkets();
    const [headers, rest] = this.idempotent(params);
    const data = await this.call('DELETE', 'orders/{orderId}', this.extend({ orderId: id }, rest), 'private', headers);
    return this.parseOrder(data);
  }

  override async cancelAllOrders(symbol: Str = undefined, params: Dict = {}): Promise<Order[]> {
    await this.loadMarkets();
    let request: Dict;
    let market: Market = undefined;
    if (symbol !== undefined) {
      market = this.market(symbol);
      request = { symbol: market.id };
    } else {
      // Without a symbol: the open orders' ids, 100 a batch, until none is left.
      const result: Order[] = [];
      for (let round = 0; round < ORDER_SCAN_PAGES; round++) {
        const open = await this.fetchOpenOrders(undefined, undefined, PAGE_MAX, {});
        if (open.length === 0) break;
        const batch = await this.batchCancel({ orderIds: open.map((o) => o.id) }, this.omit(params, 'idempotencyKey'), undefined);
        for (const o of batch) o.symbol = open.find((x) => x.id === o.id)?.symbol as string;
        result.push(...batch);
        if (batch.length === 0) break;
      }
      return result;
    }
    return this.batchCancel(request, params, market);
  }

  private async batchCancel(request: Dict, params: Dict, market: Market, withFailures = false): Promise<Order[]> {
    const [headers, rest] = this.idempotent(params);
    const ids = this.safeList(request, 'orderIds');
    const data = await this.call('POST', 'orders/batch-cancel', this.extend(request, rest), 'private', headers, requestWeight(ids === undefined ? 1 : ids.length));
    const canceled = (this.safeList(data, 'canceled', []) as string[]).map((orderId) =>
      this.safeOrder({ info: { orderId }, id: orderId, status: 'canceled', symbol: market?.symbol }, market),
    );
    if (!withFailures) return canceled;
    // An id the venue could not cancel (not open, not the account's): CCXT's partial-failure shape.
    const failed = (this.safeList(data, 'failed', []) as Json[]).map((f) =>
      this.safeOrder({ info: f, id: this.safeString(f, 'orderId'), status: 'rejected', symbol: market?.symbol }, market),
    );
    return [...canceled, ...failed];
  }

  /**
   * `POST orders/batch-cancel` of up to 100 ids: the canceled ones `status: 'canceled'`, an id the
   * venue could not cancel `status: 'rejected'` with its `{orderId, code, msg}` in `info`.
   */
  override async cancelOrders(ids: string[], symbol: Str = undefined, params: Dict = {}): Promise<Order[]> {
    await this.loadMarkets();
    if (!Array.isArray(ids) || ids.length === 0 || ids.length > MAX_BATCH_CANCEL) throw new BadRequest(`${this.id} cancelOrders() takes 1 to ${MAX_BATCH_CANCEL} ids`);
    const market = symbol === undefined ? undefined : this.market(symbol);
    return this.batchCancel({ orderIds: ids.map(String) }, params, market, true);
  }

  /**
   * `GET orders/{orderId}`: the order in any state (a resting trigger, open, done); with
   * `params.clientOrderId` (and any id) `GET orders/client/{clientOrderId}`.
   */
  override async fetchOrder(id: string, symbol: Str = undefined, params: Dict = {}): Promise<Order> {
    await this.loadMarkets();
    const market = symbol === undefined ? undefined : this.market(symbol);
    const clientOrderId = this.safeString2(params, 'clientOrderId', 'clientOid');
    const rest = this.omit(params, ['clientOrderId', 'clientOid']);
    const data =
      clientOrderId !== undefined
        ? await this.call('GET', 'orders/client/{clientOrderId}', this.extend({ clientOrderId: encodeURIComponent(clientOrderId) }, rest))
        : await this.call('GET', 'orders/{orderId}', this.extend({ orderId: String(id) }, rest));
    const order = this.parseOrder(data, market);
    if (market !== undefined && order.symbol !== market.symbol) throw new OrderNotFound(`${this.id} fetchOrder() order ${id} is not on ${market.symbol}`);
    return order;
  }

  /** `GET orders/history`: every order of the account, open and done, as the history has it (one write behind the engine). */
  override async fetchOrders(symbol: Str = undefined, since: Int = undefined, limit: Int = undefined, params: Dict = {}): Promise<Order[]> {
    const { rows, market } = await this.accountRows('orders/history', symbol, since, limit, params);
    return this.parseOrders(rows, market, since, limit);
  }

  override async fetchOpenOrders(symbol: Str = undefined, since: Int = undefined, limit: Int = undefined, params: Dict = {}): Promise<Order[]> {
    const { rows, market } = await this.accountRows('orders/open', symbol, since, limit, params);
    return this.parseOrders(rows, market, since, limit);
  }

  override async fetchClosedOrders(symbol: Str = undefined, since: Int = undefined, limit: Int = undefined, params: Dict = {}): Promise<Order[]> {
    const { rows, market } = await this.accountRows('orders/history', symbol, since, undefined, params);
    const done = rows.filter((r) => !(OPEN_ORDER_STATUSES as readonly string[]).includes(this.safeString(r, 'status') as string));
    return this.parseOrders(done, market, since, limit);
  }

  override parseOrder(o: Dict, market: Market = undefined): Order {
    const marketId = this.safeString(o, 'symbol');
    market = this.safeMarket(marketId, market);
    const ts = this.safeInteger(o, 'createdAt');
    const tif = this.safeString(o, 'timeInForce');
    const fills = this.safeList(o, 'fills');
    const fee = this.safeString(o, 'fee');
    // A resting trigger (UNTRIGGERED) is open, as Binance's untriggered stops are.
    const statuses: Dict = { UNTRIGGERED: 'open', NEW: 'open', PARTIALLY_FILLED: 'open', FILLED: 'closed', CANCELED: 'canceled', EXPIRED: 'expired' };
    const venueType = this.safeString(o, 'type', '') as string;
    const triggerPrice = this.safeString(o, 'triggerPrice');
    const closePosition = this.safeBool(o, 'closePosition', false) as boolean;
    // A trigger that only reduces (reduce-only, or closing the position) is its stop-loss or take-profit.
    const protective = triggerPrice !== undefined && (closePosition || this.safeBool(o, 'reduceOnly') === true);
    return this.safeOrder(
      {
        info: o,
        id: this.safeString(o, 'orderId'),
        clientOrderId: this.safeString(o, 'clientOrderId'),
        timestamp: ts,
        datetime: this.iso8601(ts),
        lastTradeTimestamp: undefined,
        lastUpdateTimestamp: this.safeInteger(o, 'updatedAt'),
        symbol: market.symbol,
        type: this.safeStringLower(o, 'type'),
        timeInForce: tif === 'POST_ONLY' ? 'PO' : tif,
        postOnly: tif === undefined ? undefined : tif === 'POST_ONLY',
        reduceOnly: closePosition ? true : this.safeBool(o, 'reduceOnly'),
        side: this.safeStringLower(o, 'side'),
        price: this.safeString(o, 'price'),
        triggerPrice,
        stopLossPrice: protective && venueType.startsWith('STOP_') ? triggerPrice : undefined,
        takeProfitPrice: protective && venueType.startsWith('TAKE_PROFIT_') ? triggerPrice : undefined,
        average: this.safeString(o, 'avgPrice'),
        amount: this.safeString(o, 'size'),
        filled: this.safeString(o, 'filledSize'),
        remaining: this.safeString(o, 'remainingSize'),
        cost: undefined,
        status: this.safeString(statuses, this.safeString(o, 'status') as string, this.safeStringLower(o, 'status')),
        fee: fee === undefined ? undefined : { cost: this.parseNumber(fee), currency: this.collateralCode() },
        trades: fills === undefined ? undefined : (fills as Json[]).map((f) => this.parseTrade(f, market)),
      },
      market,
    );
  }

  override async fetchMyTrades(symbol: Str = undefined, since: Int = undefined, limit: Int = undefined, params: Dict = {}): Promise<Trade[]> {
    const { rows, market } = await this.accountRows('trades', symbol, since, limit, params);
    return this.parseTrades(rows, market, since, limit);
  }

  /** One page of the account's rows at `path` (orders or trades), of `symbol`'s market when one is named. */
  private async accountRows(path: string, symbol: Str, since: Int, limit: Int, params: Dict): Promise<{ rows: Json[]; market: Market }> {
    await this.loadMarkets();
    const request: Dict = {};
    let market: Market = undefined;
    if (symbol !== undefined) {
      market = this.market(symbol);
      request['symbol'] = market.id;
    }
    const data = await this.call('GET', path, this.pageParams(request, since, limit, params));
    return { rows: this.safeList(data, 'rows', []) as Json[], market };
  }
}
