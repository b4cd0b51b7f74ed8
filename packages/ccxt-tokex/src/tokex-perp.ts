/**
 * A CCXT exchange class for the tokex perpetual venue (`/v4/public/trader`, contract.md §B and
 * docs/perp-api.md), so code written against CCXT's unified API trades here unchanged.
 *
 * Requests carry the venue's HMAC headers; orders are built by the venue (`orders/build`), signed
 * by the wallet with EIP-712 (viem) and then placed. Values stay decimal strings until CCXT's own
 * safe* helpers turn them into numbers, so nothing is rounded on the way out: a size off the lot or
 * a price off the tick is refused before any request instead of being silently rounded.
 * watchOrderBook/watchTrades ride CCXT's own WebSocket client on the public streams, watchOrders/
 * watchPositions on the private ones after a signed `auth` (docs/streams.md).
 *
 * Split by concern as CCXT's larger exchanges are, each part a class extending the one below it:
 * tokex-perp-base.ts (`describe()`, signing, transport), tokex-perp-markets.ts (public reads),
 * tokex-perp-account.ts (balance, positions, margin, withdrawals, ledger), tokex-perp-orders.ts, and
 * here the streams, on top, as CCXT's Pro classes extend its REST ones.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { MAX_BATCH_ORDERS, requestWeight } from '@tokex/contract';
import { AuthenticationError, BadRequest, ExchangeError, OrderNotFound } from 'ccxt';
import type {
  Dict,
  Int,
  Market,
  Num,
  Order,
  OrderBook,
  OrderRequest,
  OrderSide,
  OrderType,
  Position,
  Str,
  Strings,
  Trade,
} from 'ccxt';
import { StreamCache } from './stream-cache.ts';
import type { Json } from './tokex-perp-base.ts';
import { TokexPerpOrders } from './tokex-perp-orders.ts';

/** The stream endpoint's path: what a stream `auth` signs, as a REST GET of it would be signed. */
const STREAM_PATH = '/v4/public/ws';

export class TokexPerp extends TokexPerpOrders {
  // ---------------------------------------------------------------- streams

  private wsUrl(): string {
    const explicit = this.safeString(this.options, 'wsUrl');
    if (explicit !== undefined) return explicit;
    return this.baseUrl().replace(/^http/, 'ws') + STREAM_PATH;
  }

  private wsRequestId = 0;

  /** Subscribes once per connection; `subscribeHash` names the venue stream, `messageHash` what the caller waits for. */
  private async subscribePublic(channel: 'depth' | 'trades', market: NonNullable<Market>, messageHash: string, limit: Int = undefined): Promise<any> {
    const url = this.wsUrl();
    // CCXT connects a plain ws:// URL through an http Agent it loads on demand.
    if (url.startsWith('ws://')) await this.loadHttpProxyAgent();
    const subscribeHash = `${channel}:${market.id}`;
    this.wsRequestId += 1;
    const id = `ccxt-${this.wsRequestId}`;
    const request = { op: 'subscribe', id, channel, symbol: market.id };
    return this.watch(url, messageHash, request, subscribeHash, { id, channel, symbol: market.id, messageHash, limit });
  }

  override async watchOrderBook(symbol: string, limit: Int = undefined, params: Dict = {}): Promise<OrderBook> {
    await this.loadMarkets();
    const market = this.market(symbol);
    // The book keeps the depth of the first watcher (the venue sends the top 200 levels a side).
    const orderbook = await this.subscribePublic('depth', market, `orderbook:${market.symbol}`, limit);
    return orderbook.limit();
  }

  override async watchTrades(symbol: string, since: Int = undefined, limit: Int = undefined, params: Dict = {}): Promise<Trade[]> {
    await this.loadMarkets();
    const market = this.market(symbol);
    const cache = (await this.subscribePublic('trades', market, `trades:${market.symbol}`)) as StreamCache<Trade>;
    return this.filterBySinceLimit(this.newUpdates ? cache.takeFresh() : cache.rows, since, limit, 'timestamp', true) as Trade[];
  }

  /**
   * Signs in once per connection: the REST signature of `GET /v4/public/ws` (docs/streams.md). A
   * refused auth rejects the watches waiting on it, with the REST code's CCXT error.
   */
  private async authenticate(url: string): Promise<void> {
    if (!this.apiKey || !this.secret) throw new AuthenticationError(`${this.id} requires "apiKey" and "secret" credentials`);
    const client = this.client(url);
    if (client.subscriptions['authenticated'] === undefined) {
      const ts = this.nextTs();
      const sign = createHmac('sha256', String(this.secret)).update(`${ts}GET${STREAM_PATH}`, 'utf8').digest('base64');
      this.wsRequestId += 1;
      const id = `ccxt-${this.wsRequestId}`;
      return this.watch(url, 'authenticated', { op: 'auth', id, apiKey: this.apiKey, ts, sign }, 'authenticated', { id, messageHash: 'authenticated' });
    }
    return client.futures['authenticated'] ?? client.future('authenticated');
  }

  /**
   * An `order` message on the private stream (after `auth`): `{op: 'order', id, action, body}`,
   * answered by the `result` frame of the same id with what REST answers (docs/streams.md "Order
   * entry"); a refusal rejects with the REST code's CCXT error.
   */
  private async orderOverStream(action: 'place' | 'batch' | 'cancel' | 'amend', body: Dict): Promise<Json> {
    const url = this.wsUrl();
    if (url.startsWith('ws://')) await this.loadHttpProxyAgent();
    await this.authenticate(url);
    // Each order message counts against the key's REST budget, with the REST call's weight.
    const items = action === 'batch' ? (this.safeList(body, 'orders', []) as Json[]).length : 1;
    if (this.enableRateLimit) await this.throttle(requestWeight(items));
    this.wsRequestId += 1;
    const id = `ccxt-${this.wsRequestId}`;
    return this.watch(url, id, { op: 'order', id, action, body }, id, { id, messageHash: id, action });
  }

  /** createOrder over the stream: built and signed as createOrder does (`orders/build` is REST), placed by a `place` message. */
  override async createOrderWs(symbol: string, type: OrderType, side: OrderSide, amount: number, price: Num = undefined, params: Dict = {}): Promise<Order> {
    await this.loadMarkets();
    const [request, extra, market] = this.orderRequest(symbol, type, side, amount, price, params, 'createOrderWs');
    const signed = await this.buildAndSign(request, extra);
    return this.parseOrder(await this.orderOverStream('place', signed), market);
  }

  /** createOrders over the stream: one `batch` message. */
  override async createOrdersWs(orders: OrderRequest[], params: Dict = {}): Promise<Order[]> {
    await this.loadMarkets();
    if (!Array.isArray(orders) || orders.length === 0 || orders.length > MAX_BATCH_ORDERS) {
      throw new BadRequest(`${this.id} createOrdersWs() takes 1 to ${MAX_BATCH_ORDERS} orders`);
    }
    const prepared = orders.map((o) => this.orderRequest(o.symbol, o.type, o.side, o.amount, o.price, this.extend(params, o.params ?? {}), 'createOrdersWs'));
    const signed: Array<{ message: Dict; signature: string }> = [];
    for (const [request, extra] of prepared) signed.push(await this.buildAndSign(request, extra));
    const data = await this.orderOverStream('batch', { orders: signed });
    return (this.safeList(data, 'results', []) as Json[]).map((r, i) => {
      const market = prepared[i][2];
      if (this.safeInteger(r, 'code') === 0) return this.parseOrder(this.safeDict(r, 'order') as Dict, market);
      return this.safeOrder({ info: r, status: 'rejected', symbol: market!.symbol, clientOrderId: this.safeString(prepared[i][0], 'clientOrderId') }, market);
    });
  }

  /** cancelOrder over the stream: a `cancel` message, its `idempotencyKey` REST's Idempotency-Key (`params.idempotencyKey` to retry one). */
  override async cancelOrderWs(id: string, symbol: Str = undefined, params: Dict = {}): Promise<Order> {
    await this.loadMarkets();
    const key = this.safeString(params, 'idempotencyKey') ?? randomUUID();
    const data = await this.orderOverStream('cancel', { orderId: String(id), idempotencyKey: key });
    return this.parseOrder(data, symbol === undefined ? undefined : this.market(symbol));
  }

  /** editOrder over the stream: the amendment built (REST) and signed as editOrder does, applied by an `amend` message. */
  override async editOrderWs(id: string, symbol: string, type: OrderType, side: OrderSide, amount: Num = undefined, price: Num = undefined, params: Dict = {}): Promise<Order> {
    await this.loadMarkets();
    const typedData = (await this.call('POST', 'orders/amend/build', this.amendRequest(id, symbol, amount, price, params))).typedData;
    const data = await this.orderOverStream('amend', await this.signBuilt(typedData));
    return this.parseOrder(data, symbol === undefined ? undefined : this.market(symbol));
  }

  /** The answer to an `order` message: its data, or the REST code's CCXT error; the one-off subscription is dropped. */
  private handleOrderResult(client: any, message: Dict): void {
    const id = this.safeString(message, 'id');
    if (id === undefined) return;
    const sub = client.subscriptions[id];
    delete client.subscriptions[id];
    const code = this.safeString(message, 'code', '') as string;
    if (code === '0') {
      client.resolve(message['data'], id);
      return;
    }
    const feedback = `${this.id} ${code} ${this.safeString(message, 'msg', '')}`;
    let error: Error;
    try {
      // A generic not-found of an order call is the order that is not there, as on REST.
      if (code === '40000' && typeof sub === 'object' && sub !== null) throw new OrderNotFound(feedback);
      this.throwExactlyMatchedException(this.exceptions['exact'], code, feedback);
      error = new ExchangeError(feedback);
    } catch (e) {
      error = e as Error;
    }
    client.reject(error, id);
  }

  /** A private stream of the key's wallet: auth, then one subscribe per connection. */
  private async subscribePrivate(channel: 'orders' | 'positions', messageHash: string): Promise<any> {
    const url = this.wsUrl();
    if (url.startsWith('ws://')) await this.loadHttpProxyAgent();
    await this.authenticate(url);
    this.wsRequestId += 1;
    const id = `ccxt-${this.wsRequestId}`;
    return this.watch(url, messageHash, { op: 'subscribe', id, channel }, channel, { id, channel, messageHash });
  }

  /** The key's orders as they change (the snapshot's open orders first); CCXT's Order structures. */
  override async watchOrders(symbol: Str = undefined, since: Int = undefined, limit: Int = undefined, params: Dict = {}): Promise<Order[]> {
    await this.loadMarkets();
    const market = symbol === undefined ? undefined : this.market(symbol);
    const cache = (await this.subscribePrivate('orders', market === undefined ? 'orders' : `orders:${market.symbol}`)) as StreamCache<Order>;
    const rows = this.newUpdates ? cache.takeFresh() : cache.rows;
    return this.filterBySymbolSinceLimit(rows, market?.symbol, since, limit, true) as Order[];
  }

  /** The key's positions as they change (a closed one with contracts 0); CCXT's Position structures. */
  override async watchPositions(symbols: Strings = undefined, since: Int = undefined, limit: Int = undefined, params: Dict = {}): Promise<Position[]> {
    await this.loadMarkets();
    const wanted = symbols === undefined ? undefined : this.marketSymbols(symbols);
    const cache = (await this.subscribePrivate('positions', 'positions')) as StreamCache<Position>;
    let rows = this.newUpdates ? cache.takeFresh() : cache.rows;
    if (wanted !== undefined) rows = rows.filter((p) => p.symbol !== undefined && wanted.includes(p.symbol));
    return this.filterBySinceLimit(rows, since, limit, 'timestamp', true) as Position[];
  }

  override handleMessage(client: any, message: any): void {
    const type = this.safeString(message, 'type');
    if (type === 'error') return this.handleStreamError(client, message);
    if (type === 'result') return this.handleOrderResult(client, message);
    if (type === 'authenticated') {
      // Resolved and kept (client.resolve would drop it): later watches on this connection await
      // the same settled future instead of a new one no frame will ever resolve.
      const future = client.futures['authenticated'];
      if (future !== undefined) future.resolve(message);
      return;
    }
    const channel = this.safeString(message, 'channel');
    if (type !== 'subscribed' && type !== 'update') return;
    if (channel === 'depth') this.handleDepth(client, message, type === 'subscribed');
    else if (channel === 'trades') this.handleTradesFrame(client, message, type === 'subscribed');
    else if (channel === 'orders' || channel === 'positions') this.handlePrivateFrame(client, channel, message, type === 'subscribed');
  }

  /** A public stream's subscription is `channel:symbol`; a private one is its channel alone. */
  private subscriptionOf(client: any, channel: string, marketId: string | undefined): Dict | undefined {
    const sub = client.subscriptions[marketId === undefined ? channel : `${channel}:${marketId}`];
    return typeof sub === 'object' ? sub : undefined;
  }

  /**
   * Orders and positions: the snapshot replaces what was kept, each update is one row. A seq that
   * skips one subscribes again with `since`, so the venue replays what was missed.
   */
  private handlePrivateFrame(client: any, channel: 'orders' | 'positions', message: Dict, snapshot: boolean): void {
    const sub = this.subscriptionOf(client, channel, undefined);
    const seq = this.safeInteger(message, 'seq') as number;
    const limit = this.safeInteger(this.options, channel === 'orders' ? 'ordersLimit' : 'positionsLimit', 1000) as number;
    const holder = channel === 'orders' ? 'orderCache' : 'positionCache';
    let cache = (this as any)[holder] as StreamCache<any> | undefined;
    if (snapshot) {
      if (sub !== undefined) sub['awaitingSnapshot'] = false;
      // A resume (`resumed: true`) carries no data: the missed updates follow it.
      if (message['resumed'] !== true) {
        cache = channel === 'orders' ? new StreamCache<Order>(limit, (o) => String(o.id)) : new StreamCache<Position>(limit, (p) => `${p.symbol} ${p.marginMode}`);
        (this as any)[holder] = cache;
      }
    } else {
      if (cache === undefined || sub?.['awaitingSnapshot']) return;
      const last = sub?.['seq'] as number | undefined;
      if (last !== undefined && seq !== last + 1) {
        this.resubscribePrivate(client, channel, last);
        return;
      }
    }
    if (sub !== undefined) sub['seq'] = seq;
    if (cache === undefined) return;
    const data = message['data'];
    const rows = snapshot ? ((Array.isArray(data) ? data : []) as Json[]) : [data as Json];
    const changed = new Set<string>();
    for (const row of rows) {
      if (row === null || typeof row !== 'object') continue;
      const parsed = channel === 'orders' ? this.parseOrder(row) : this.parsePosition(row);
      cache.put(parsed);
      if (parsed.symbol) changed.add(parsed.symbol);
    }
    client.resolve(cache, channel);
    if (channel === 'orders') for (const symbol of changed) client.resolve(cache, `orders:${symbol}`);
  }

  /** Subscribes a private stream again: with `since` it resumes after the last seq seen, without it from a new snapshot. */
  private resubscribePrivate(client: any, channel: string, since: number | undefined): void {
    const sub = this.subscriptionOf(client, channel, undefined);
    if (sub === undefined) return;
    sub['awaitingSnapshot'] = true;
    this.wsRequestId += 1;
    sub['id'] = `ccxt-${this.wsRequestId}`;
    const failed = (e: Error) => client.onError(e);
    client.send({ op: 'unsubscribe', channel }).catch(failed);
    client.send({ op: 'subscribe', id: sub['id'], channel, ...(since !== undefined ? { since } : {}) }).catch(failed);
  }

  /** The stream ended (10003: a new epoch) or skipped a seq: subscribe again for a fresh snapshot. */
  private resubscribe(client: any, channel: string, marketId: string, unsubscribeFirst: boolean): void {
    const sub = this.subscriptionOf(client, channel, marketId);
    if (sub === undefined) return;
    sub['awaitingSnapshot'] = true;
    this.wsRequestId += 1;
    sub['id'] = `ccxt-${this.wsRequestId}`;
    const failed = (e: Error) => client.onError(e);
    if (unsubscribeFirst) client.send({ op: 'unsubscribe', channel, symbol: marketId }).catch(failed);
    client.send({ op: 'subscribe', id: sub['id'], channel, symbol: marketId }).catch(failed);
  }

  private handleStreamError(client: any, message: Dict): void {
    const code = this.safeString(message, 'code', '') as string;
    const channel = this.safeString(message, 'channel');
    const marketId = this.safeString(message, 'symbol');
    if (code === '10003' && channel !== undefined) {
      // The stream restarted or `since` is no longer kept: a fresh snapshot.
      if (marketId !== undefined) this.resubscribe(client, channel, marketId, false);
      else this.resubscribePrivate(client, channel, undefined);
      return;
    }
    const id = this.safeString(message, 'id');
    const feedback = `${this.id} ${code} ${this.safeString(message, 'msg', '')}`;
    let error: Error;
    try {
      this.throwExactlyMatchedException(this.exceptions['exact'], code, feedback);
      error = new ExchangeError(feedback);
    } catch (e) {
      error = e as Error;
    }
    // A refused subscribe: fail its watchers and forget it, so the next watch subscribes again.
    for (const [hash, sub] of Object.entries(client.subscriptions as Dict)) {
      if (typeof sub === 'object' && sub !== null && id !== undefined && (sub as Dict)['id'] === id) {
        delete client.subscriptions[hash];
        client.reject(error, (sub as Dict)['messageHash']);
        return;
      }
    }
    client.reject(error);
  }

  private handleDepth(client: any, message: Dict, snapshot: boolean): void {
    const marketId = this.safeString(message, 'symbol') as string;
    const market = this.safeMarket(marketId);
    const symbol = market.symbol;
    const sub = this.subscriptionOf(client, 'depth', marketId);
    const data = this.safeDict(message, 'data', {}) as Dict;
    const seq = this.safeInteger(message, 'seq');
    const ts = this.safeInteger(data, 'ts');
    if (snapshot) {
      if (sub !== undefined) sub['awaitingSnapshot'] = false;
      const book = this.orderBook({}, sub?.['limit']);
      book.reset(this.parseOrderBook(data, symbol, ts));
      book['nonce'] = seq;
      this.orderbooks[symbol] = book;
    } else {
      const book = this.orderbooks[symbol];
      if (book === undefined || sub?.['awaitingSnapshot']) return;
      if (seq !== (book['nonce'] as number) + 1) {
        this.resubscribe(client, 'depth', marketId, true);
        return;
      }
      for (const side of ['bids', 'asks'] as const) {
        for (const level of this.safeList(data, side, []) as string[][]) {
          (book[side] as any).store(this.parseNumber(level[0]), this.parseNumber(level[1]));
        }
      }
      book['nonce'] = seq;
      book['timestamp'] = ts;
      book['datetime'] = this.iso8601(ts);
    }
    client.resolve(this.orderbooks[symbol], `orderbook:${symbol}`);
  }

  private handleTradesFrame(client: any, message: Dict, snapshot: boolean): void {
    const marketId = this.safeString(message, 'symbol') as string;
    const market = this.safeMarket(marketId);
    const symbol = market.symbol;
    let cache = this.trades[symbol] as unknown as StreamCache<Trade> | undefined;
    if (snapshot || cache === undefined) {
      cache = new StreamCache<Trade>(this.safeInteger(this.options, 'tradesLimit', 1000) as number, (t) => String(t.id));
      this.trades[symbol] = cache as any;
    }
    // The snapshot is newest first; the cache keeps them oldest first.
    const rows = snapshot ? [...((this.safeList(message, 'data', []) as Json[]) ?? [])].reverse() : [this.safeDict(message, 'data')];
    for (const row of rows) if (row) cache.put(this.parseTrade(row, market));
    client.resolve(cache, `trades:${symbol}`);
  }
}

export default TokexPerp;
