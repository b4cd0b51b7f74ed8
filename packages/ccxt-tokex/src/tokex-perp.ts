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
 */
import { createHmac, randomUUID } from 'node:crypto';
import {
  canonicalQuery,
  MAX_BATCH_CANCEL,
  MAX_BATCH_ORDERS,
  OPEN_ORDER_STATUSES,
  orderBasicIssue,
  PERP_HEADERS,
  perpSignMessage,
  requestWeight,
  TIME_IN_FORCE_BY_TYPE,
  timeInForceAllowed,
  TRIGGER_ORDER_TYPES,
} from '@tokex/contract';
import {
  Exchange,
  Precise,
  ArgumentsRequired,
  AuthenticationError,
  BadRequest,
  BadSymbol,
  DuplicateOrderId,
  ExchangeError,
  ExchangeNotAvailable,
  InsufficientFunds,
  InvalidAddress,
  InvalidNonce,
  InvalidOrder,
  NotSupported,
  OperationRejected,
  OrderImmediatelyFillable,
  OrderNotFillable,
  OrderNotFound,
  PermissionDenied,
  RateLimitExceeded,
} from 'ccxt';
import type {
  Balances,
  Currencies,
  Currency,
  Dict,
  FundingRate,
  FundingRateHistory,
  FundingRates,
  Int,
  LedgerEntry,
  MarginModification,
  Market,
  Num,
  OHLCV,
  Order,
  OrderBook,
  OrderRequest,
  OrderSide,
  OrderType,
  Position,
  Str,
  Strings,
  Ticker,
  Tickers,
  Trade,
  Transaction,
} from 'ccxt';
import { privateKeyToAccount } from 'viem/accounts';

/** CCXT's TICK_SIZE precision mode: precision.amount and precision.price are step sizes. */
const TICK_SIZE = 4;
/** X-Chain-Id for a request signed before the chain id is known (the embedded anvil's). */
const DEFAULT_CHAIN_ID = '31337';
/** The address `api-keys/prepare` is asked about when the class has no wallet: it only reads the domain. */
const PLACEHOLDER_ADDRESS = '0x0000000000000000000000000000000000000001';
const API_PREFIX = '/v4/public/trader/';
/** The stream endpoint's path: what a stream `auth` signs, as a REST GET of it would be signed. */
const STREAM_PATH = '/v4/public/ws';
/** The venue's lists answer at most 100 rows a page. */
const PAGE_MAX = 100;
/** How many pages of order history fetchOrder reads before it gives up. */
const ORDER_SCAN_PAGES = 20;

type Json = any;

export class TokexPerp extends Exchange {
  /** The last X-Api-Ts sent: an identical signature inside the window is a replay (20007), so never reuse one. */
  private lastTs = 0;

  override describe(): any {
    return this.deepExtend(super.describe(), {
      id: 'tokex',
      name: 'Tokex Perp',
      countries: [],
      version: 'v4',
      // 120 requests a minute per key (PERP_RATE_LIMIT_PER_MIN).
      rateLimit: 500,
      certified: false,
      pro: false,
      dex: false,
      has: {
        CORS: undefined,
        spot: false,
        margin: false,
        swap: true,
        future: false,
        option: false,
        addMargin: true,
        cancelAllOrders: true,
        cancelOrder: true,
        cancelOrders: true,
        createOrder: true,
        createOrders: true,
        createMarketOrder: true,
        createLimitOrder: true,
        createPostOnlyOrder: true,
        createReduceOnlyOrder: true,
        createTriggerOrder: true,
        createStopOrder: true,
        createStopLossOrder: true,
        createTakeProfitOrder: true,
        createStopMarketOrder: true,
        createStopLimitOrder: true,
        editOrder: true,
        fetchBalance: true,
        fetchClosedOrders: true,
        fetchCurrencies: true,
        fetchDeposits: true,
        fetchDepositsWithdrawals: true,
        fetchFundingRate: true,
        fetchFundingRateHistory: true,
        fetchFundingRates: true,
        fetchLedger: true,
        fetchMarkets: true,
        fetchMyTrades: true,
        fetchOHLCV: true,
        fetchOpenOrders: true,
        fetchOrder: true,
        fetchOrderBook: true,
        fetchOrders: true,
        fetchPosition: false,
        fetchPositions: true,
        fetchTicker: true,
        fetchTickers: true,
        fetchTime: true,
        fetchTrades: true,
        fetchWithdrawals: true,
        reduceMargin: true,
        setLeverage: true,
        setMarginMode: true,
        withdraw: true,
        transfer: false,
        fetchDepositAddress: false,
        // The public streams of ws://<perp host>/v4/public/ws (docs/streams.md).
        ws: true,
        watchOrderBook: true,
        watchTrades: true,
        watchTicker: false,
        watchOHLCV: false,
        watchOrders: true,
        watchMyTrades: false,
        watchPositions: true,
        watchBalance: false,
        // Order entry on the private stream after auth (docs/streams.md "Order entry").
        createOrderWs: true,
        createOrdersWs: true,
        cancelOrderWs: true,
        editOrderWs: true,
      },
      timeframes: { '1m': '1m', '5m': '5m', '15m': '15m', '1h': '1h', '4h': '4h', '1d': '1d' },
      urls: {
        logo: undefined,
        api: { rest: 'http://127.0.0.1:8090' },
        www: undefined,
        doc: ['docs/perp-api.md'],
      },
      api: {
        public: { get: { time: 1 }, post: { 'api-keys/prepare': 1 } },
        private: {
          get: {
            instruments: 1,
            depth: 1,
            tickers: 1,
            klines: 1,
            'market-trades': 1,
            'funding-rates': 1,
            account: 1,
            'account/assets': 1,
            positions: 1,
            'account/deposits': 1,
            'account/withdrawals': 1,
            'account/transactions': 1,
            'orders/open': 1,
            'orders/history': 1,
            'orders/{orderId}': 1,
            'orders/client/{clientOrderId}': 1,
            trades: 1,
          },
          post: {
            'orders/build': 1,
            orders: 1,
            // 1 + ⌊n/10⌋ units on the venue (requestWeight); CCXT's throttle counts a call as one.
            'orders/batch': 1,
            'orders/amend/build': 1,
            'orders/amend': 1,
            'orders/batch-cancel': 1,
            'positions/adjust': 1,
            'positions/margin': 1,
            'account/withdrawals/build': 1,
            'account/withdrawals': 1,
          },
          delete: { 'orders/{orderId}': 1 },
        },
      },
      // apiKey/secret sign every private request; walletAddress/privateKey sign orders (EIP-712), so
      // reading the account needs only the first two (sign() checks those, createOrder the wallet).
      requiredCredentials: {
        apiKey: true,
        secret: true,
        walletAddress: true,
        privateKey: true,
      },
      precisionMode: TICK_SIZE,
      fees: { trading: { tierBased: false, percentage: true } },
      options: {
        baseUrl: undefined,
        chainId: undefined,
        defaultType: 'swap',
        // The collateral asset: the vault pays USDC 1:1 for the venue's USD.
        collateral: 'USDC',
        // CCXT network codes of the chains the venue may run on (by chain id); another chain's code
        // is its id (e.g. '31337', the local anvil).
        networksById: {
          '1': 'ETH',
          '10': 'OP',
          '56': 'BSC',
          '137': 'MATIC',
          '8453': 'BASE',
          '42161': 'ARB',
          '43114': 'AVAXC',
          '11155111': 'SEPOLIA',
          '84532': 'BASESEPOLIA',
        },
        // The stream endpoint; derived from baseUrl when not given.
        wsUrl: undefined,
        // Trades kept per symbol for watchTrades; orders and positions for watchOrders/watchPositions.
        tradesLimit: 1000,
        ordersLimit: 1000,
        positionsLimit: 1000,
      },
      streaming: {
        // The ws package pings every 20 s and the server answers; the server pings too.
        keepAlive: 20000,
      },
      exceptions: {
        exact: {
          '10000': BadRequest,
          '10001': BadRequest,
          '10002': OperationRejected,
          '10003': BadRequest,
          '20001': AuthenticationError,
          '20002': AuthenticationError,
          '20003': AuthenticationError,
          '20004': PermissionDenied,
          '20005': InvalidNonce,
          '20006': AuthenticationError,
          '20007': InvalidNonce,
          '20008': AuthenticationError,
          '30001': PermissionDenied,
          '40000': BadRequest,
          '40001': BadRequest,
          '40002': BadSymbol,
          '40003': OrderNotFound,
          '40004': BadRequest,
          '40005': BadRequest,
          '42900': RateLimitExceeded,
          '50000': ExchangeError,
          '50001': ExchangeNotAvailable,
          '50002': ExchangeNotAvailable,
          '51001': InsufficientFunds,
          '51002': InsufficientFunds,
          '51003': OrderImmediatelyFillable,
          '51004': InvalidOrder,
          '51005': OrderNotFillable,
          '51006': OrderNotFillable,
          '51007': OrderNotFound,
          '51008': DuplicateOrderId,
          '51009': BadRequest,
          '51010': InvalidOrder,
          '51011': InvalidOrder,
          '51012': InvalidOrder,
          '51013': InvalidOrder,
          '51014': AuthenticationError,
          '51015': PermissionDenied,
          '51016': BadRequest,
          '51017': OperationRejected,
          '51018': InsufficientFunds,
          '51019': OperationRejected,
          '51020': OperationRejected,
          '51021': BadRequest,
          '51022': BadRequest,
          '51023': OperationRejected,
          '51024': InsufficientFunds,
          '51025': OperationRejected,
          '51026': PermissionDenied,
          '51027': BadRequest,
          '51028': BadRequest,
          // A trigger already reached (Binance's -2021 "would immediately trigger").
          '51029': OrderImmediatelyFillable,
          '51030': OperationRejected,
          '51031': InvalidOrder,
          '52001': ExchangeError,
        },
        broad: {},
      },
    });
  }

  // ---------------------------------------------------------------- transport

  private baseUrl(): string {
    const url = this.safeString(this.options, 'baseUrl') ?? (this.urls as Json).api.rest;
    return String(url).replace(/\/+$/, '');
  }

  private chainId(): string {
    return this.safeString2(this.options, 'chainId', 'detectedChainId', DEFAULT_CHAIN_ID) as string;
  }

  private chainIdLoading: Promise<void> | undefined = undefined;

  /**
   * Reads the venue's chain id once, before the first private request: `POST api-keys/prepare` is
   * public and stores nothing, and its typed-data domain carries the chain the service runs on.
   * `options.chainId` skips it.
   */
  private async ensureChainId(): Promise<void> {
    if (this.safeString2(this.options, 'chainId', 'detectedChainId') !== undefined) return;
    if (this.chainIdLoading === undefined) {
      const address = this.walletAddress || (this.privateKey ? this.wallet().address : PLACEHOLDER_ADDRESS);
      this.chainIdLoading = (async () => {
        const response = await this.request('api-keys/prepare', 'public', 'POST', { address, permissions: ['READ'] });
        const chainId = this.safeString(this.safeDict(this.safeDict(this.safeDict(response, 'data'), 'typedData'), 'domain'), 'chainId');
        if (chainId === undefined) throw new ExchangeError(`${this.id} the venue did not tell its chain id; set options.chainId`);
        this.options['detectedChainId'] = chainId;
      })().finally(() => {
        this.chainIdLoading = undefined;
      });
    }
    await this.chainIdLoading;
  }

  private nextTs(): number {
    this.lastTs = Math.max(this.milliseconds(), this.lastTs + 1);
    return this.lastTs;
  }

  override sign(path: any, api: any = 'public', method = 'GET', params: Dict = {}, headers: any = undefined, body: any = undefined): Dict {
    const endpoint = API_PREFIX + this.implodeParams(path, params);
    const rest = this.omit(params, this.extractParams(path));
    let query = '';
    if (method === 'GET' || method === 'DELETE') {
      query = canonicalQuery(rest);
    } else {
      body = this.json(rest);
    }
    const requestPath = query === '' ? endpoint : `${endpoint}?${query}`;
    const url = this.baseUrl() + requestPath;
    const out: Dict = this.extend({}, headers ?? {});
    if (body !== undefined) out['Content-Type'] = 'application/json';
    if (api === 'private') {
      if (!this.apiKey || !this.secret) throw new AuthenticationError(`${this.id} requires "apiKey" and "secret" credentials`);
      const ts = String(this.nextTs());
      // request_path starts at /v4/, exactly as the URL sends it.
      const payload = perpSignMessage({ ts, method, requestPath, body: body ?? '' });
      out[PERP_HEADERS.key] = this.apiKey;
      out[PERP_HEADERS.ts] = ts;
      out[PERP_HEADERS.sign] = createHmac('sha256', String(this.secret)).update(payload, 'utf8').digest('base64');
      out[PERP_HEADERS.chainId] = this.chainId();
    }
    return { url, method, body, headers: out };
  }

  override handleErrors(httpCode: number, reason: string, url: string, method: string, headers: Dict, body: string, response: any, requestHeaders: any, requestBody: any): any {
    if (response === undefined || response === null || typeof response !== 'object') return undefined;
    const code = this.safeString(response, 'code');
    if (code === undefined || code === '0') return undefined;
    const msg = this.safeString(response, 'msg', '');
    const feedback = `${this.id} ${code} ${msg}`;
    // A generic not-found on an order path is the order that is not there.
    if (code === '40000' && url.includes(`${API_PREFIX}orders`)) throw new OrderNotFound(feedback);
    this.throwExactlyMatchedException(this.exceptions['exact'], code, feedback);
    this.throwBroadlyMatchedException(this.exceptions['broad'], msg, feedback);
    throw new ExchangeError(feedback);
  }

  /** `weight`: the request's rate-limit units on the venue (a batch of n: 1 + ⌊n/10⌋), for CCXT's throttle. */
  private async call(method: 'GET' | 'POST' | 'DELETE', path: string, params: Dict = {}, api: 'public' | 'private' = 'private', headers: Dict | undefined = undefined, weight = 1): Promise<Json> {
    if (api === 'private') await this.ensureChainId();
    const response = await this.request(path, api, method, params, headers, undefined, { cost: weight });
    return this.safeValue(response, 'data');
  }

  /** State changes the key alone authorises take an Idempotency-Key; params.idempotencyKey keeps one across retries. */
  private idempotent(params: Dict): [Dict, Dict] {
    const key = this.safeString(params, 'idempotencyKey') ?? randomUUID();
    return [{ 'Idempotency-Key': key }, this.omit(params, 'idempotencyKey')];
  }

  private collateralCode(): string {
    return this.safeString(this.options, 'collateral', 'USDC') as string;
  }

  private pageParams(request: Dict, since: Int, limit: Int, params: Dict): Dict {
    if (since !== undefined) request['startTime'] = since;
    request['limit'] = limit === undefined ? PAGE_MAX : Math.min(limit, PAGE_MAX);
    const until = this.safeInteger(params, 'until');
    if (until !== undefined) request['endTime'] = until;
    return this.extend(request, this.omit(params, 'until'));
  }

  // ---------------------------------------------------------------- market data

  override async fetchTime(params: Dict = {}): Promise<Int> {
    const data = await this.call('GET', 'time', params, 'public');
    return this.safeInteger(data, 'serverTime');
  }

  override async fetchMarkets(params: Dict = {}): Promise<Market[]> {
    // Inside loadMarkets, fetchCurrencies has just read the instruments: no second request.
    const cached = this.options['cachedCurrencies'] !== undefined ? this.instrumentsRead : undefined;
    this.instrumentsRead = undefined;
    const data = cached ?? (await this.call('GET', 'instruments', params));
    return (data as Json[]).map((m) => this.parseMarket(m));
  }

  /** The instruments fetchCurrencies read, for the fetchMarkets of the same loadMarkets. */
  private instrumentsRead: Json[] | undefined = undefined;

  /** The CCXT network code of a chain id (`options.networksById`, else the id itself). */
  private networkCode(chainId: string): string {
    return this.safeString(this.safeDict(this.options, 'networksById', {}), chainId, chainId) as string;
  }

  /**
   * The venue's currencies: USDC, the one collateral (deposited into and withdrawn from the
   * MarginVault on the venue's chain, 6 decimals, no fee); USD, the unit of prices, PnL and fees
   * (the venue's dollar, paid 1:1 in USDC: neither deposited nor withdrawn); and each market's base
   * (the underlying of a perpetual: never held, so neither deposited nor withdrawn), its precision
   * the lot size.
   */
  override async fetchCurrencies(params: Dict = {}): Promise<Currencies> {
    const instruments = (await this.call('GET', 'instruments', params)) as Json[];
    this.instrumentsRead = instruments;
    const chainId = this.chainId();
    const network = this.networkCode(chainId);
    const micro = this.parseNumber('0.000001');
    const collateral = this.collateralCode();
    const limits = { deposit: { min: micro, max: undefined }, withdraw: { min: micro, max: undefined } };
    const result: Dict = {};
    result[collateral] = this.safeCurrencyStructure({
      id: collateral,
      code: collateral,
      name: 'USD Coin',
      type: 'crypto',
      active: true,
      deposit: true,
      withdraw: true,
      fee: this.parseNumber('0'),
      precision: micro,
      limits,
      networks: {
        [network]: { id: chainId, network, active: true, deposit: true, withdraw: true, fee: this.parseNumber('0'), precision: micro, limits, info: { chainId } },
      },
      info: { asset: collateral, chainId },
    });
    const quotes = new Set<string>();
    const bases = new Map<string, Json[]>();
    for (const m of instruments) {
      const base = this.safeString(m, 'base') as string;
      quotes.add(this.safeString(m, 'quote') as string);
      bases.set(base, [...(bases.get(base) ?? []), m]);
    }
    for (const quote of quotes) {
      const code = this.safeCurrencyCode(quote) as string;
      if (code in result) continue;
      result[code] = this.safeCurrencyStructure({
        id: quote, code, name: code === 'USD' ? 'US dollar' : code, type: code === 'USD' ? 'fiat' : 'other',
        active: true, deposit: false, withdraw: false, precision: micro, info: { asset: quote, settledIn: collateral },
      });
    }
    for (const [base, markets] of bases) {
      const code = this.safeCurrencyCode(base) as string;
      if (code in result) continue;
      const lots = markets.map((m) => this.safeString(m, 'lotSize') as string).filter((x) => x !== undefined);
      const lot = lots.reduce((a, b) => (Precise.stringLt(b, a) ? b : a), lots[0]);
      result[code] = this.safeCurrencyStructure({
        id: base, code, name: code, type: 'other', active: true, deposit: false, withdraw: false,
        precision: this.parseNumber(lot), info: { asset: base, markets: markets.map((m) => this.safeString(m, 'symbol')) },
      });
    }
    return result as Currencies;
  }

  override parseMarket(m: Dict): Market {
    const id = this.safeString(m, 'symbol') as string;
    const baseId = this.safeString(m, 'base') as string;
    const quoteId = this.safeString(m, 'quote') as string;
    const base = this.safeCurrencyCode(baseId);
    const quote = this.safeCurrencyCode(quoteId);
    const settle = quote;
    return this.safeMarketStructure({
      id,
      symbol: `${base}/${quote}:${settle}`,
      base,
      quote,
      settle,
      baseId,
      quoteId,
      settleId: quoteId,
      type: 'swap',
      spot: false,
      margin: false,
      swap: true,
      future: false,
      option: false,
      active: true,
      contract: true,
      linear: true,
      inverse: false,
      taker: this.safeNumber(m, 'takerFeeRate'),
      maker: this.safeNumber(m, 'makerFeeRate'),
      contractSize: this.parseNumber('1'),
      expiry: undefined,
      expiryDatetime: undefined,
      strike: undefined,
      optionType: undefined,
      precision: {
        amount: this.safeNumber(m, 'lotSize'),
        price: this.safeNumber(m, 'tickSize'),
      },
      limits: {
        leverage: { min: this.parseNumber('1'), max: this.safeNumber(m, 'maxLeverage') },
        amount: { min: this.safeNumber(m, 'minSize'), max: this.safeNumber(m, 'maxSize') },
        price: { min: undefined, max: undefined },
        cost: { min: undefined, max: undefined },
      },
      marginModes: { cross: true, isolated: true },
      created: undefined,
      info: m,
    });
  }

  override async fetchTickers(symbols: Strings = undefined, params: Dict = {}): Promise<Tickers> {
    await this.loadMarkets();
    const request: Dict = {};
    if (symbols !== undefined && symbols.length === 1) request['symbol'] = this.marketId(symbols[0]);
    const data = await this.call('GET', 'tickers', this.extend(request, params));
    return this.parseTickers(data, symbols);
  }

  override async fetchTicker(symbol: string, params: Dict = {}): Promise<Ticker> {
    await this.loadMarkets();
    const market = this.market(symbol);
    const data = await this.call('GET', 'tickers', this.extend({ symbol: market.id }, params));
    return this.parseTicker(data[0], market);
  }

  override parseTicker(t: Dict, market: Market = undefined): Ticker {
    const marketId = this.safeString(t, 'symbol');
    market = this.safeMarket(marketId, market);
    const ts = this.safeInteger(t, 'ts');
    return this.safeTicker(
      {
        symbol: market.symbol,
        timestamp: ts,
        datetime: this.iso8601(ts),
        high: this.safeString(t, 'high24h'),
        low: this.safeString(t, 'low24h'),
        bid: this.safeString(t, 'bestBid'),
        bidVolume: undefined,
        ask: this.safeString(t, 'bestAsk'),
        askVolume: undefined,
        vwap: undefined,
        open: this.safeString(t, 'open24h'),
        close: this.safeString(t, 'lastPrice'),
        last: this.safeString(t, 'lastPrice'),
        previousClose: undefined,
        change: undefined,
        percentage: undefined,
        average: undefined,
        baseVolume: this.safeString(t, 'volume24h'),
        quoteVolume: this.safeString(t, 'turnover24h'),
        markPrice: this.safeString(t, 'markPrice'),
        indexPrice: this.safeString(t, 'indexPrice'),
        info: t,
      },
      market,
    );
  }

  override async fetchOrderBook(symbol: string, limit: Int = undefined, params: Dict = {}): Promise<OrderBook> {
    await this.loadMarkets();
    const market = this.market(symbol);
    const request: Dict = { symbol: market.id };
    if (limit !== undefined) request['limit'] = limit;
    const data = await this.call('GET', 'depth', this.extend(request, params));
    const ts = this.safeInteger(data, 'ts');
    const book = this.parseOrderBook(data, market.symbol, ts);
    book.nonce = this.safeInteger(data, 'seq');
    return book;
  }

  override async fetchOHLCV(symbol: string, timeframe = '1m', since: Int = undefined, limit: Int = undefined, params: Dict = {}): Promise<OHLCV[]> {
    await this.loadMarkets();
    const market = this.market(symbol);
    const interval = this.safeString(this.timeframes, timeframe);
    if (interval === undefined) throw new BadRequest(`${this.id} fetchOHLCV() does not support the timeframe ${timeframe}`);
    const request: Dict = { symbol: market.id, interval };
    if (since !== undefined) request['startTime'] = since;
    if (limit !== undefined) request['limit'] = Math.min(limit, 1000);
    const until = this.safeInteger(params, 'until');
    if (until !== undefined) request['endTime'] = until;
    const data = await this.call('GET', 'klines', this.extend(request, this.omit(params, 'until')));
    return this.parseOHLCVs(data, market, timeframe, since, limit);
  }

  override parseOHLCV(k: any, market: Market = undefined): OHLCV {
    return [
      this.safeInteger(k, 'openTime') as number,
      this.safeNumber(k, 'open') as number,
      this.safeNumber(k, 'high') as number,
      this.safeNumber(k, 'low') as number,
      this.safeNumber(k, 'close') as number,
      this.safeNumber(k, 'volume') as number,
    ];
  }

  override async fetchTrades(symbol: string, since: Int = undefined, limit: Int = undefined, params: Dict = {}): Promise<Trade[]> {
    await this.loadMarkets();
    const market = this.market(symbol);
    const data = await this.call('GET', 'market-trades', this.pageParams({ symbol: market.id }, since, limit, params));
    return this.parseTrades(this.safeList(data, 'rows', []) as Json[], market, since, limit);
  }

  override parseTrade(t: Dict, market: Market = undefined): Trade {
    const marketId = this.safeString(t, 'symbol');
    market = this.safeMarket(marketId, market);
    const ts = this.safeInteger(t, 'ts');
    const feeCost = this.safeString(t, 'fee');
    const role = this.safeStringLower(t, 'role');
    return this.safeTrade(
      {
        id: this.safeString2(t, 'tradeId', 'id'),
        order: this.safeString(t, 'orderId'),
        timestamp: ts,
        datetime: this.iso8601(ts),
        symbol: market.symbol,
        type: undefined,
        // market-trades: the taker's side; trades: the account's own side.
        side: this.safeStringLower(t, 'side'),
        takerOrMaker: role,
        price: this.safeString(t, 'price'),
        amount: this.safeString(t, 'size'),
        cost: this.safeString(t, 'notional'),
        fee: feeCost === undefined ? undefined : { cost: feeCost, currency: this.collateralCode() },
        info: t,
      },
      market,
    );
  }

  override async fetchFundingRates(symbols: Strings = undefined, params: Dict = {}): Promise<FundingRates> {
    await this.loadMarkets();
    const data = await this.call('GET', 'tickers', params);
    const rates = (data as Json[]).map((t) => this.parseFundingRate(t));
    return this.filterByArray(rates, 'symbol', symbols) as FundingRates;
  }

  override async fetchFundingRate(symbol: string, params: Dict = {}): Promise<FundingRate> {
    await this.loadMarkets();
    const market = this.market(symbol);
    const data = await this.call('GET', 'tickers', this.extend({ symbol: market.id }, params));
    return this.parseFundingRate(data[0], market);
  }

  override parseFundingRate(t: any, market: Market = undefined): FundingRate {
    const marketId = this.safeString(t, 'symbol');
    market = this.safeMarket(marketId, market);
    const ts = this.safeInteger(t, 'ts');
    const next = this.safeInteger(t, 'nextFundingTime');
    const intervalMs = this.safeInteger(market.info, 'fundingInterval');
    return {
      info: t,
      symbol: market.symbol,
      markPrice: this.safeNumber(t, 'markPrice'),
      indexPrice: this.safeNumber(t, 'indexPrice'),
      interestRate: undefined,
      estimatedSettlePrice: undefined,
      timestamp: ts,
      datetime: this.iso8601(ts),
      // The last rate applied, per funding interval.
      fundingRate: this.safeNumber(t, 'fundingRate'),
      fundingTimestamp: next,
      fundingDatetime: this.iso8601(next),
      nextFundingRate: undefined,
      nextFundingTimestamp: undefined,
      nextFundingDatetime: undefined,
      previousFundingRate: undefined,
      previousFundingTimestamp: undefined,
      previousFundingDatetime: undefined,
      interval: intervalMs === undefined ? undefined : intervalLabel(intervalMs),
    } as FundingRate;
  }

  override async fetchFundingRateHistory(symbol: Str = undefined, since: Int = undefined, limit: Int = undefined, params: Dict = {}): Promise<FundingRateHistory[]> {
    if (symbol === undefined) throw new ArgumentsRequired(`${this.id} fetchFundingRateHistory() requires a symbol argument`);
    await this.loadMarkets();
    const market = this.market(symbol);
    const request: Dict = { symbol: market.id };
    if (since !== undefined) request['startTime'] = since;
    if (limit !== undefined) request['limit'] = limit;
    const until = this.safeInteger(params, 'until');
    if (until !== undefined) request['endTime'] = until;
    const data = (await this.call('GET', 'funding-rates', this.extend(request, this.omit(params, 'until')))) as Json[];
    const rows = data.map((r) => {
      const ts = this.safeInteger(r, 'fundingTime');
      return { info: r, symbol: market.symbol, fundingRate: this.safeNumber(r, 'fundingRate'), timestamp: ts, datetime: this.iso8601(ts) };
    });
    const sorted = this.sortBy(rows, 'timestamp');
    return this.filterBySymbolSinceLimit(sorted, market.symbol, since, limit) as FundingRateHistory[];
  }

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

  // ---------------------------------------------------------------- account

  override async fetchBalance(params: Dict = {}): Promise<Balances> {
    const data = await this.call('GET', 'account', params);
    return this.parseBalance(data);
  }

  override parseBalance(a: Json): Balances {
    const code = this.safeCurrencyCode(this.safeString(a, 'asset', this.collateralCode())) as string;
    const total = this.safeString(a, 'equity');
    const free = this.safeString(a, 'freeCollateral');
    const result: Dict = { info: a };
    // Like Binance's futures balance: total is the margin balance (equity), free what orders may use.
    result[code] = { free, used: Precise.stringSub(total, free), total };
    return this.safeBalance(result);
  }

  override async fetchPositions(symbols: Strings = undefined, params: Dict = {}): Promise<Position[]> {
    await this.loadMarkets();
    const request: Dict = { limit: PAGE_MAX };
    if (symbols !== undefined && symbols.length === 1) request['symbol'] = this.marketId(symbols[0]);
    const data = await this.call('GET', 'positions', this.extend(request, params));
    const rows = (this.safeList(data, 'rows', []) as Json[]).filter((p) => this.safeString(p, 'side') !== 'FLAT');
    const positions = rows.map((p) => this.parsePosition(p));
    return this.filterByArrayPositions(positions, 'symbol', symbols, false);
  }

  /**
   * A position is the engine's live state when the venue answers (REST or stream): its values are
   * those of that moment, so `timestamp` is when the answer arrived (the venue's row has no time of
   * its own; a `ts` in the row would be taken).
   */
  override parsePosition(p: Dict, market: Market = undefined): Position {
    const marketId = this.safeString(p, 'symbol');
    market = this.safeMarket(marketId, market);
    const ts = this.safeInteger(p, 'ts') ?? this.milliseconds();
    const notional = this.safeString(p, 'notional');
    const margin = this.safeString(p, 'margin');
    const maintenance = this.safeString(p, 'maintenanceMargin');
    const ratio = (a: Str, b: Str) => (a === undefined || b === undefined || !Precise.stringGt(b, '0') ? undefined : this.parseNumber(Precise.stringDiv(a, b, 8)));
    return this.safePosition({
      info: p,
      id: undefined,
      symbol: market.symbol,
      timestamp: ts,
      datetime: this.iso8601(ts),
      isolated: this.safeString(p, 'marginMode') === 'isolated',
      hedged: false,
      side: this.safeStringLower(p, 'side'),
      contracts: this.safeNumber(p, 'size'),
      contractSize: this.parseNumber('1'),
      entryPrice: this.safeNumber(p, 'entryPrice'),
      markPrice: this.safeNumber(p, 'markPrice'),
      notional: this.safeNumber(p, 'notional'),
      leverage: this.safeNumber(p, 'leverage'),
      collateral: this.safeNumber(p, 'margin'),
      initialMargin: this.safeNumber(p, 'margin'),
      maintenanceMargin: this.safeNumber(p, 'maintenanceMargin'),
      // Of the notional, as CCXT defines them.
      initialMarginPercentage: ratio(margin, notional),
      maintenanceMarginPercentage: ratio(maintenance, notional),
      unrealizedPnl: this.safeNumber(p, 'unrealisedPnl'),
      realizedPnl: this.safeNumber(p, 'realisedPnl'),
      liquidationPrice: this.safeNumber(p, 'liquidationPrice'),
      marginMode: this.safeString(p, 'marginMode'),
      // Maintenance margin / the collateral backing it: an isolated position's own margin; a cross
      // position is backed by the whole account (GET account's marginRatio), so none here.
      marginRatio: this.safeString(p, 'marginMode') === 'isolated' ? ratio(maintenance, margin) : undefined,
      percentage: undefined,
      lastUpdateTimestamp: undefined,
      lastPrice: undefined,
      stopLossPrice: undefined,
      takeProfitPrice: undefined,
    });
  }

  override async setLeverage(leverage: number, symbol: Str = undefined, params: Dict = {}): Promise<{}> {
    if (symbol === undefined) throw new ArgumentsRequired(`${this.id} setLeverage() requires a symbol argument`);
    await this.loadMarkets();
    const market = this.market(symbol);
    if (!Number.isInteger(leverage) || leverage < 1) throw new BadRequest(`${this.id} setLeverage() leverage must be a whole number from 1`);
    const [headers, rest] = this.idempotent(params);
    const request: Dict = { symbol: market.id, leverage };
    const data = await this.call('POST', 'positions/adjust', this.extend(request, rest), 'private', headers);
    this.rememberLeverage(market.symbol, this.safeInteger(data, 'leverage', leverage) as number);
    return data;
  }

  override async setMarginMode(marginMode: string, symbol: Str = undefined, params: Dict = {}): Promise<{}> {
    if (symbol === undefined) throw new ArgumentsRequired(`${this.id} setMarginMode() requires a symbol argument`);
    const mode = marginMode.toLowerCase();
    if (mode !== 'cross' && mode !== 'isolated') throw new BadRequest(`${this.id} setMarginMode() marginMode must be cross or isolated`);
    await this.loadMarkets();
    const market = this.market(symbol);
    // positions/adjust sets leverage and mode together: keep the leverage the account has.
    let leverage = this.safeInteger(params, 'leverage');
    if (leverage === undefined) {
      const positions = await this.fetchPositions([market.symbol]);
      leverage = positions.length > 0 ? positions[0].leverage : this.safeInteger(this.safeDict(this.options, 'leverages', {}), market.symbol);
    }
    if (leverage === undefined) {
      const max = this.safeInteger(market.limits.leverage, 'max', 10) as number;
      leverage = Math.min(10, max);
    }
    const [headers, rest] = this.idempotent(this.omit(params, 'leverage'));
    const request: Dict = { symbol: market.id, leverage, marginMode: mode };
    const data = await this.call('POST', 'positions/adjust', this.extend(request, rest), 'private', headers);
    this.rememberLeverage(market.symbol, leverage as number);
    return data;
  }

  private rememberLeverage(symbol: string, leverage: number): void {
    const leverages = this.safeDict(this.options, 'leverages', {}) as Dict;
    leverages[symbol] = leverage;
    this.options['leverages'] = leverages;
  }

  override async addMargin(symbol: string, amount: number, params: Dict = {}): Promise<MarginModification> {
    return this.modifyMargin(symbol, this.numberToString(amount), 'add', params);
  }

  override async reduceMargin(symbol: string, amount: number, params: Dict = {}): Promise<MarginModification> {
    return this.modifyMargin(symbol, Precise.stringNeg(this.numberToString(amount)) as string, 'reduce', params);
  }

  private async modifyMargin(symbol: string, amount: string, type: 'add' | 'reduce', params: Dict): Promise<MarginModification> {
    await this.loadMarkets();
    const market = this.market(symbol);
    const [headers, rest] = this.idempotent(params);
    const data = await this.call('POST', 'positions/margin', this.extend({ symbol: market.id, amount }, rest), 'private', headers);
    return {
      info: data,
      symbol: market.symbol,
      type,
      marginMode: 'isolated',
      amount: this.parseNumber(Precise.stringAbs(amount)),
      total: this.safeNumber(data, 'margin'),
      code: this.collateralCode(),
      status: 'ok',
      timestamp: undefined,
      datetime: undefined,
    } as MarginModification;
  }

  // ---------------------------------------------------------------- orders

  private wallet() {
    const pk = this.privateKey;
    if (pk === undefined || pk === '') throw new AuthenticationError(`${this.id} requires privateKey (the wallet that signs orders)`);
    const account = privateKeyToAccount((pk.startsWith('0x') ? pk : `0x${pk}`) as `0x${string}`);
    if (this.walletAddress && this.walletAddress.toLowerCase() !== account.address.toLowerCase()) {
      throw new AuthenticationError(`${this.id} privateKey is not the key of walletAddress`);
    }
    return account;
  }

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
  private orderRequest(symbol: string, type: OrderType | string, side: OrderSide | string, amount: Num, price: Num, params: Dict, method = 'createOrder'): [Dict, Dict, Market] {
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
  private async buildAndSign(request: Dict, extra: Dict): Promise<{ message: Dict; signature: string }> {
    const wallet = this.wallet();
    const built = await this.call('POST', 'orders/build', this.extend(request, extra));
    return this.signBuilt(built.typedData, wallet);
  }

  /** Signs typed data the venue built (an order, a trigger order, an amendment) with the key's own wallet. */
  private async signBuilt(typedData: Json, wallet = this.wallet()): Promise<{ message: Dict; signature: string }> {
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

  private amendRequest(id: string, symbol: Str, amount: Num, price: Num, params: Dict): Dict {
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
    await this.loadMarkets();
    const request: Dict = {};
    let market: Market = undefined;
    if (symbol !== undefined) {
      market = this.market(symbol);
      request['symbol'] = market.id;
    }
    const data = await this.call('GET', 'orders/history', this.pageParams(request, since, limit, params));
    return this.parseOrders(this.safeList(data, 'rows', []) as Json[], market, since, limit);
  }

  override async fetchOpenOrders(symbol: Str = undefined, since: Int = undefined, limit: Int = undefined, params: Dict = {}): Promise<Order[]> {
    await this.loadMarkets();
    const request: Dict = {};
    let market: Market = undefined;
    if (symbol !== undefined) {
      market = this.market(symbol);
      request['symbol'] = market.id;
    }
    const data = await this.call('GET', 'orders/open', this.pageParams(request, since, limit, params));
    return this.parseOrders(this.safeList(data, 'rows', []) as Json[], market, since, limit);
  }

  override async fetchClosedOrders(symbol: Str = undefined, since: Int = undefined, limit: Int = undefined, params: Dict = {}): Promise<Order[]> {
    await this.loadMarkets();
    const request: Dict = {};
    let market: Market = undefined;
    if (symbol !== undefined) {
      market = this.market(symbol);
      request['symbol'] = market.id;
    }
    const data = await this.call('GET', 'orders/history', this.pageParams(request, since, undefined, params));
    const done = (this.safeList(data, 'rows', []) as Json[]).filter((r) => !(OPEN_ORDER_STATUSES as readonly string[]).includes(this.safeString(r, 'status') as string));
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
    await this.loadMarkets();
    const request: Dict = {};
    let market: Market = undefined;
    if (symbol !== undefined) {
      market = this.market(symbol);
      request['symbol'] = market.id;
    }
    const data = await this.call('GET', 'trades', this.pageParams(request, since, limit, params));
    return this.parseTrades(this.safeList(data, 'rows', []) as Json[], market, since, limit);
  }

  // ---------------------------------------------------------------- funding of the account

  /** What a withdrawal may name: the collateral only (USDC, or USD, the venue's dollar paid 1:1 in it). */
  private checkCode(code: Str): void {
    if (code !== undefined && code !== null && !['USDC', 'USD'].includes(code.toUpperCase())) {
      throw new BadRequest(`${this.id} the only collateral is ${this.collateralCode()} (USD 1:1), not ${code}`);
    }
  }

  /**
   * Whether a list asked for `code` holds the account's money movements. The venue has one
   * collateral: no code, `USDC` or `USD` mean it. Another code of `currencies` (a market's base such
   * as `BTC`, which is never held here) has none: its list is empty. A code CCXT does not know is
   * CCXT's own ExchangeError ("does not have currency code").
   */
  private listsCollateral(code: Str): boolean {
    if (code === undefined || code === null || ['USDC', 'USD'].includes(code.toUpperCase())) return true;
    this.currency(code);
    return false;
  }

  /**
   * Withdraws to the key's own wallet, signed by that wallet (`privateKey`): `account/withdrawals/build`,
   * the wallet's EIP-712 signature of the Withdrawal (checked first to be the one asked for, on the
   * venue's chain), then `POST account/withdrawals` with it; the margin vault pays only against it.
   * `params.clientWithdrawalId` names the withdrawal (default a new UUID): calling again with it answers
   * the same withdrawal. `params.deadline` (unix seconds, 300 s to 7 days ahead; default a day) bounds
   * when the vault may still pay it.
   */
  override async withdraw(code: string, amount: number, address: string, tag: Str = undefined, params: Dict = {}): Promise<Transaction> {
    this.checkCode(code);
    await this.loadMarkets();
    const payee = this.walletAddress || (this.privateKey ? this.wallet().address : undefined);
    // The vault pays only the wallet the key is bound to; the request names no address.
    if (address !== undefined && address !== null && payee !== undefined && address.toLowerCase() !== payee.toLowerCase()) {
      throw new InvalidAddress(`${this.id} withdraw() pays only the key's own wallet ${payee}`);
    }
    const value = this.numberToString(amount);
    const decimals = value.includes('.') ? value.split('.')[1].length : 0;
    if (!Precise.stringGt(value, '0') || decimals > 6) throw new BadRequest(`${this.id} withdraw() amount must be above zero with at most 6 decimals`);
    // The wallet signs every withdrawal: without privateKey nothing is asked.
    const wallet = this.wallet();
    const clientWithdrawalId = this.safeString(params, 'clientWithdrawalId') ?? randomUUID();
    const deadline = this.safeInteger(params, 'deadline');
    const request: Dict = { amount: value, clientWithdrawalId };
    if (deadline !== undefined) request['deadline'] = deadline;
    const built = await this.call('POST', 'account/withdrawals/build', this.extend(request, this.omit(params, ['clientWithdrawalId', 'deadline'])));
    const typedData = this.safeDict(built, 'typedData') as Json;
    const message = this.safeDict(typedData, 'message', {}) as Json;
    const account = String(message.account).toLowerCase();
    const domainChain = this.safeString(this.safeDict(typedData, 'domain'), 'chainId');
    if (domainChain !== this.chainId()) throw new ExchangeError(`${this.id} withdraw() the venue built the withdrawal for chain ${domainChain}, not ${this.chainId()}; not signed`);
    if (account !== wallet.address.toLowerCase()) {
      throw new AuthenticationError(`${this.id} the API key is bound to another wallet than privateKey (only that wallet signs its withdrawals; a One-Click session key cannot)`);
    }
    const [whole, fraction = ''] = value.split('.');
    const units = BigInt(whole + fraction.padEnd(6, '0')).toString();
    const asked =
      typedData.primaryType === 'Withdrawal' &&
      String(message.recipient).toLowerCase() === account &&
      String(message.amount) === units &&
      String(message.withdrawalId).toLowerCase() === String(this.safeString(built, 'withdrawalId')).toLowerCase() &&
      /^\d+$/.test(String(message.deadline)) &&
      (deadline === undefined || String(message.deadline) === String(deadline));
    if (!asked) throw new ExchangeError(`${this.id} withdraw() the venue built another withdrawal than the one asked; not signed`);
    const signature = await wallet.signTypedData(typedData);
    const data = await this.call('POST', 'account/withdrawals', { amount: value, clientWithdrawalId, deadline: Number(message.deadline), signature });
    return this.parseTransaction(data);
  }

  override async fetchWithdrawals(code: Str = undefined, since: Int = undefined, limit: Int = undefined, params: Dict = {}): Promise<Transaction[]> {
    await this.loadMarkets();
    if (!this.listsCollateral(code)) return [];
    const data = await this.call('GET', 'account/withdrawals', this.pageParams({}, since, limit, params));
    const rows = (this.safeList(data, 'rows', []) as Json[]).map((r) => this.parseTransaction(r));
    return this.filterBySinceLimit(this.sortBy(rows, 'timestamp'), since, limit) as Transaction[];
  }

  override async fetchDeposits(code: Str = undefined, since: Int = undefined, limit: Int = undefined, params: Dict = {}): Promise<Transaction[]> {
    await this.loadMarkets();
    if (!this.listsCollateral(code)) return [];
    const data = await this.call('GET', 'account/deposits', this.pageParams({}, since, limit, params));
    const rows = (this.safeList(data, 'rows', []) as Json[]).map((r) => this.parseTransaction(this.extend(r, { kind: 'deposit' })));
    return this.filterBySinceLimit(this.sortBy(rows, 'timestamp'), since, limit) as Transaction[];
  }

  /** Deposits and withdrawals together, oldest first: `limit` of the newest of both. */
  override async fetchDepositsWithdrawals(code: Str = undefined, since: Int = undefined, limit: Int = undefined, params: Dict = {}): Promise<Transaction[]> {
    const [deposits, withdrawals] = await Promise.all([this.fetchDeposits(code, since, limit, params), this.fetchWithdrawals(code, since, limit, params)]);
    const rows = this.sortBy(this.arrayConcat(deposits, withdrawals), 'timestamp');
    return this.filterBySinceLimit(rows, since, limit, 'timestamp', true) as Transaction[];
  }

  /**
   * A deposit (the vault's `Deposited` log, `updated` its block time: the venue keeps no other) or a
   * withdrawal (`updated` its last status change; `txid` once the payment is broadcast). `network`
   * is the venue's chain (`options.networksById`); the venue charges no fee on either (the operator
   * pays the payment's gas), so `fee` is 0 USDC.
   */
  override parseTransaction(t: Dict, currency: Currency = undefined): Transaction {
    const isWithdrawal = this.safeString(t, 'kind') !== 'deposit';
    const info = this.omit(t, 'kind');
    const ts = isWithdrawal ? this.safeInteger(t, 'createdAt') : this.safeInteger(t, 'ts');
    const statuses: Dict = isWithdrawal
      ? { PENDING: 'pending', SENT: 'pending', COMPLETED: 'ok', FAILED: 'failed' }
      : { PENDING: 'pending', CREDITED: 'ok', PAID: 'ok', REFUSED: 'failed' };
    const address = this.safeString(t, 'address');
    const code = this.safeCurrencyCode(this.safeString(t, 'asset', this.collateralCode())) as string;
    return {
      info,
      id: isWithdrawal ? this.safeString(t, 'withdrawalId') : this.safeString(t, 'id'),
      txid: this.safeString(t, 'txHash'),
      timestamp: ts,
      datetime: this.iso8601(ts),
      network: this.networkCode(this.chainId()),
      address,
      addressTo: address,
      addressFrom: undefined,
      tag: undefined,
      tagTo: undefined,
      tagFrom: undefined,
      type: isWithdrawal ? 'withdrawal' : 'deposit',
      amount: this.safeNumber(t, 'amount'),
      currency: code,
      status: this.safeString(statuses, this.safeString(t, 'status') as string, 'pending'),
      updated: isWithdrawal ? this.safeInteger(t, 'updatedAt') : ts,
      internal: false,
      comment: this.safeString(t, 'reason'),
      fee: { cost: this.parseNumber('0'), currency: code, rate: undefined },
    } as Transaction;
  }

  override async fetchLedger(code: Str = undefined, since: Int = undefined, limit: Int = undefined, params: Dict = {}): Promise<LedgerEntry[]> {
    await this.loadMarkets();
    if (!this.listsCollateral(code)) return [];
    const data = await this.call('GET', 'account/transactions', this.pageParams({}, since, limit, params));
    // The venue lists newest first; reversed before the (stable) sort, movements of one millisecond
    // stay in the venue's order, so each one's `before` is the previous one's `after`.
    const rows = (this.safeList(data, 'rows', []) as Json[]).map((r) => this.parseLedgerEntry(r)).reverse();
    return this.filterBySinceLimit(this.sortBy(rows, 'timestamp'), since, limit) as LedgerEntry[];
  }

  /**
   * A row of `account/transactions`. `account` is the venue's account (the wallet); `after` is the
   * row's `balanceAfter` (the sum of the account's movements up to this one: the balance after it,
   * isolated margins included) and `before` = `after` − the signed amount, so `before + amount =
   * after` for a credit and `before − amount = after` for a debit. Each movement is its own entry,
   * fees too (type `fee`): no fee is charged on a movement itself, so `fee` is 0 USDC.
   */
  override parseLedgerEntry(e: Dict, currency: Currency = undefined): LedgerEntry {
    const amount = this.safeString(e, 'amount', '0') as string;
    const ts = this.safeInteger(e, 'ts');
    // CCXT's ledger types: trade, transaction, margin, cashback, referral, transfer, fee.
    const types: Dict = {
      DEPOSIT: 'transaction',
      WITHDRAWAL: 'transaction',
      WITHDRAWAL_RELEASE: 'transaction',
      FEE: 'fee',
      REALISED_PNL: 'trade',
      FUNDING: 'fee',
      LIQUIDATION_FEE: 'fee',
      LIQUIDATION: 'trade',
      ADL: 'trade',
      // The insurance fund's money covering a negative balance.
      BAD_DEBT: 'transfer',
      LIQUIDITY_ADD: 'transfer',
      LIQUIDITY_REMOVE: 'transfer',
    };
    const venueType = this.safeString(e, 'type') as string;
    const code = this.safeCurrencyCode(this.safeString(e, 'asset', this.collateralCode())) as string;
    const after = this.safeString(e, 'balanceAfter');
    return this.safeLedgerEntry(
      {
        info: e,
        id: this.safeString(e, 'id'),
        timestamp: ts,
        datetime: this.iso8601(ts),
        direction: Precise.stringLt(amount, '0') ? 'out' : 'in',
        account: this.safeString(e, 'account'),
        referenceId: this.safeString(e, 'ref'),
        referenceAccount: undefined,
        type: this.safeString(types, venueType, 'other'),
        currency: code,
        amount: this.parseNumber(Precise.stringAbs(amount)),
        // Both given: safeLedgerEntry would otherwise take the unsigned amount from `after`.
        before: after === undefined ? undefined : Precise.stringSub(after, amount),
        after,
        status: 'ok',
        fee: { cost: '0', currency: code },
      },
      // safeLedgerEntry takes the code from this currency, not from the entry.
      this.safeCurrency(this.safeString(e, 'asset', this.collateralCode())),
    );
  }
}

/**
 * What a watch keeps from a stream: the latest row per key (a trade id, an order id, a position's
 * symbol), in the order they last changed, at most `max`; and which changed since the caller last read.
 */
class StreamCache<T> {
  private readonly byKey = new Map<string, T>();
  private readonly fresh = new Set<string>();
  constructor(
    private readonly max: number,
    private readonly keyOf: (row: T) => string,
  ) {}
  get rows(): T[] {
    return [...this.byKey.values()];
  }
  put(row: T): void {
    const key = this.keyOf(row);
    // Deleted first, so the map's order is the order of the last change.
    this.byKey.delete(key);
    this.byKey.set(key, row);
    this.fresh.add(key);
    if (this.byKey.size > this.max) {
      const oldest = this.byKey.keys().next().value as string;
      this.byKey.delete(oldest);
      this.fresh.delete(oldest);
    }
  }
  /** CCXT's newUpdates: the rows changed since the last read (the latest row when none did). */
  takeFresh(): T[] {
    const rows = this.rows;
    const out = this.fresh.size === 0 ? rows.slice(-1) : rows.filter((r) => this.fresh.has(this.keyOf(r)));
    this.fresh.clear();
    return out;
  }
}

function intervalLabel(ms: number): string {
  if (ms % 86_400_000 === 0) return `${ms / 86_400_000}d`;
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  return `${ms}ms`;
}

export default TokexPerp;
