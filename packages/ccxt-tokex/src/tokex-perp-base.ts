/**
 * The base of the CCXT class for the tokex perpetual venue (tokex-perp.ts has the whole picture):
 * `describe()`, the HMAC request signature, error mapping and the transport helpers, and the wallet
 * that signs orders and withdrawals.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { canonicalQuery, PERP_HEADERS, perpSignMessage } from '@tokex/contract';
import {
  Exchange,
  AuthenticationError,
  BadRequest,
  BadSymbol,
  DuplicateOrderId,
  ExchangeError,
  ExchangeNotAvailable,
  InsufficientFunds,
  InvalidNonce,
  InvalidOrder,
  OperationRejected,
  OrderImmediatelyFillable,
  OrderNotFillable,
  OrderNotFound,
  PermissionDenied,
  RateLimitExceeded,
} from 'ccxt';
import type { Dict, Int } from 'ccxt';
import { privateKeyToAccount } from 'viem/accounts';

/** CCXT's TICK_SIZE precision mode: precision.amount and precision.price are step sizes. */
const TICK_SIZE = 4;
/** X-Chain-Id for a request signed before the chain id is known (the embedded anvil's). */
const DEFAULT_CHAIN_ID = '31337';
/** The address `api-keys/prepare` is asked about when the class has no wallet: it only reads the domain. */
const PLACEHOLDER_ADDRESS = '0x0000000000000000000000000000000000000001';
const API_PREFIX = '/v4/public/trader/';
/** The venue's lists answer at most 100 rows a page. */
export const PAGE_MAX = 100;

export type Json = any;

/**
 * The class's foundation: what CCXT knows of the venue (`describe()`: endpoints, rate limits, the error
 * table), the request signature, and the helpers every other part uses. The venue's concerns sit
 * on top, each a class of its own, as CCXT's Pro classes extend its REST ones: markets, account,
 * orders, then streams (tokex-perp.ts, the class exported).
 */
export class TokexPerpBase extends Exchange {
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

  protected baseUrl(): string {
    const url = this.safeString(this.options, 'baseUrl') ?? (this.urls as Json).api.rest;
    return String(url).replace(/\/+$/, '');
  }

  protected chainId(): string {
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

  protected nextTs(): number {
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
  protected async call(method: 'GET' | 'POST' | 'DELETE', path: string, params: Dict = {}, api: 'public' | 'private' = 'private', headers: Dict | undefined = undefined, weight = 1): Promise<Json> {
    if (api === 'private') await this.ensureChainId();
    const response = await this.request(path, api, method, params, headers, undefined, { cost: weight });
    return this.safeValue(response, 'data');
  }

  /** State changes the key alone authorises take an Idempotency-Key; params.idempotencyKey keeps one across retries. */
  protected idempotent(params: Dict): [Dict, Dict] {
    const key = this.safeString(params, 'idempotencyKey') ?? randomUUID();
    return [{ 'Idempotency-Key': key }, this.omit(params, 'idempotencyKey')];
  }

  protected collateralCode(): string {
    return this.safeString(this.options, 'collateral', 'USDC') as string;
  }

  protected pageParams(request: Dict, since: Int, limit: Int, params: Dict): Dict {
    if (since !== undefined) request['startTime'] = since;
    request['limit'] = limit === undefined ? PAGE_MAX : Math.min(limit, PAGE_MAX);
    const until = this.safeInteger(params, 'until');
    if (until !== undefined) request['endTime'] = until;
    return this.extend(request, this.omit(params, 'until'));
  }


  protected wallet() {
    const pk = this.privateKey;
    if (pk === undefined || pk === '') throw new AuthenticationError(`${this.id} requires privateKey (the wallet that signs orders)`);
    const account = privateKeyToAccount((pk.startsWith('0x') ? pk : `0x${pk}`) as `0x${string}`);
    if (this.walletAddress && this.walletAddress.toLowerCase() !== account.address.toLowerCase()) {
      throw new AuthenticationError(`${this.id} privateKey is not the key of walletAddress`);
    }
    return account;
  }
}
