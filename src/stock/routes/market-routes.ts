/** Market data (seed §4A, 6 endpoints): config, symbols, quotes, K-lines, underlying quotes, corporate actions. */
import type { FastifyPluginAsync } from 'fastify';
import { NotFoundError, notListed, ValidationError } from '../../errors/app-error.ts';
import { INTERVALS, INTERVAL_MS, type Interval, type Quote } from '../../marketdata/market-types.ts';
import { listCandles } from '../../storage/candle-store.ts';
import type { MarketConfigView, StockApiDeps, StockListing } from '../stock-deps.ts';
import { candleView, quoteStale, quoteView, STALE_QUOTE_MS } from '../quote-view.ts';
import { dataRenderer, JSON_UTF8, stockOk, stockOkText } from '../stock-envelope.ts';
import { address, decimalOut, listOf, millis, pageOf, pageQueryProps, responses, symbolParam } from '../stock-schemas.ts';

const tokenContext = {
  type: 'object',
  required: ['address', 'decimals', 'totalSupply'],
  properties: { address, decimals: { type: 'integer' }, totalSupply: decimalOut },
} as const;

const staleProp = {
  type: 'boolean',
  description: 'true when the quote is older than the executor fills against (EXECUTOR_QUOTE_MAX_AGE_MS, default 30 s): the market data stopped, and a market order would wait, then be rejected',
} as const;

export const quoteData = {
  type: 'object',
  required: ['symbol', 'bid', 'ask', 'last', 'timestamp', 'marketStatus', 'token', 'stale'],
  properties: {
    symbol: { type: 'string' },
    bid: decimalOut,
    ask: decimalOut,
    last: decimalOut,
    timestamp: millis,
    marketStatus: { type: 'string', enum: ['open', 'closed'] },
    token: tokenContext,
    stale: staleProp,
  },
} as const;

const configData = {
  type: 'object',
  required: ['chainId', 'product', 'cashierBuffer', 'exchangeFeeConfig', 'cashierTokenConfig', 'blockNumber', 'updatedAt'],
  properties: {
    chainId: { type: 'integer' },
    product: { type: 'string' },
    cashierBuffer: {
      type: 'object',
      required: ['creditBuffer', 'totalQueuedDeposits', 'totalQueuedWithdrawals', 'feeBalance', 'treasuryBalance'],
      properties: {
        creditBuffer: { ...decimalOut, description: 'mUSD that can still be credited instantly' },
        totalQueuedDeposits: { ...decimalOut, description: 'mUSD of deposits waiting for the operator' },
        totalQueuedWithdrawals: { ...decimalOut, description: 'mUSD of withdrawals waiting for the operator' },
        feeBalance: { ...decimalOut, description: 'fees collected, mUSD' },
        treasuryBalance: { ...decimalOut, description: 'the platform account that is the counterparty of settlements, mUSD' },
      },
    },
    exchangeFeeConfig: {
      type: 'object',
      required: ['marketFeeBps', 'limitFeeBps'],
      properties: {
        marketFeeBps: { type: 'integer', description: 'fee on market orders, basis points of the fill notional' },
        limitFeeBps: { type: 'integer', description: 'fee on limit orders, basis points of the fill notional' },
      },
    },
    cashierTokenConfig: {
      type: 'array',
      items: {
        type: 'object',
        required: ['tokenAddress', 'symbol', 'decimals', 'enabled', 'minAmount', 'withdrawBuffer', 'cashierBalance'],
        properties: {
          tokenAddress: address,
          symbol: { type: 'string' },
          decimals: { type: 'integer' },
          enabled: { type: 'boolean' },
          minAmount: decimalOut,
          withdrawBuffer: { ...decimalOut, description: 'token amount that can still be withdrawn instantly' },
          cashierBalance: decimalOut,
        },
      },
    },
    blockNumber: { type: 'string' },
    updatedAt: millis,
  },
} as const;

const symbolRow = {
  type: 'object',
  required: ['symbol', 'name', 'underlying', 'exchange', 'address', 'decimals', 'tradable'],
  properties: {
    symbol: { type: 'string' },
    name: { type: 'string' },
    underlying: { type: 'string' },
    exchange: { type: 'string' },
    address,
    decimals: { type: 'integer' },
    tradable: { type: 'boolean' },
  },
} as const;

const candleRow = {
  type: 'object',
  required: ['openTime', 'closeTime', 'open', 'high', 'low', 'close', 'volume'],
  properties: { openTime: millis, closeTime: millis, open: decimalOut, high: decimalOut, low: decimalOut, close: decimalOut, volume: decimalOut },
} as const;

const corporateRow = {
  type: 'object',
  required: ['symbol', 'type', 'exDate'],
  properties: {
    symbol: { type: 'string' },
    type: { type: 'string', enum: ['SPLIT', 'DIVIDEND'] },
    exDate: { type: 'string', description: 'YYYY-MM-DD' },
    ratio: { type: 'string' },
    amount: decimalOut,
    currency: { type: 'string' },
  },
} as const;

export function listingOf(deps: StockApiDeps, symbol: string): StockListing {
  const listing = deps.stocks.bySymbol(symbol) ?? deps.stocks.bySymbol(symbol.toUpperCase());
  if (!listing) throw new NotFoundError('symbol', { reason: notListed(symbol) });
  return listing;
}

export const marketRoutes: FastifyPluginAsync<{ deps: StockApiDeps }> = async (app, { deps }) => {
  const now = deps.now ?? Date.now;

  // A quote is read far more often than it changes: its data is rendered once per (quote, chain
  // snapshot, market status) by the schema's own serializer, and each request only wraps it.
  const renderQuoteData = dataRenderer(quoteData);
  const renderedQuotes = new WeakMap<Quote, { cfg: MarketConfigView; open: boolean; stale: boolean; json: string }>();
  const maxAgeMs = deps.quoteMaxAgeMs ?? STALE_QUOTE_MS;

  function quoteJson(listing: StockListing, quote: Quote, cfg: MarketConfigView): string {
    const t = now();
    const open = deps.calendar.isOpen(t);
    const stale = quoteStale(quote, t, maxAgeMs);
    const hit = renderedQuotes.get(quote);
    if (hit !== undefined && hit.cfg === cfg && hit.open === open && hit.stale === stale) return hit.json;
    const json = renderQuoteData(quoteView(listing, quote, cfg, open, stale));
    renderedQuotes.set(quote, { cfg, open, stale, json });
    return json;
  }

  app.get('/config', { schema: { tags: ['market data'], summary: 'On-chain market config (cached)', response: responses(configData) } }, async (req) => {
    const cfg = await deps.chain.marketConfig();
    return stockOk(req.id, {
      chainId: deps.chainId,
      product: deps.product,
      cashierBuffer: cfg.cashierBuffer,
      exchangeFeeConfig: cfg.exchangeFeeConfig,
      cashierTokenConfig: cfg.cashierTokenConfig,
      blockNumber: cfg.blockNumber,
      updatedAt: cfg.updatedAt,
    });
  });

  app.get('/symbols', { schema: { tags: ['market data'], summary: 'Tradable stock tokens', response: responses({ type: 'array', items: symbolRow }) } }, async (req) => {
    return stockOk(req.id, deps.stocks.list().map((s) => ({ ...s, tradable: true })));
  });

  app.get<{ Params: { symbol: string } }>(
    '/prices/:symbol',
    { schema: { tags: ['market data'], summary: 'Real-time quote with on-chain token context', params: symbolParam, response: responses(quoteData) } },
    // Not async: with the chain snapshot cached (the normal case) the quote is answered without a
    // promise; only the first read after start waits for the chain.
    (req, reply) => {
      const listing = listingOf(deps, req.params.symbol);
      const quote = deps.quotes.getQuote(listing.symbol);
      if (!quote) throw new NotFoundError('quote');
      const cfg = deps.chain.cachedMarketConfig();
      void reply.type(JSON_UTF8);
      return cfg
        ? stockOkText(req.id, quoteJson(listing, quote, cfg))
        : deps.chain.marketConfig().then((c) => stockOkText(req.id, quoteJson(listing, quote, c)));
    },
  );

  app.get<{ Params: { symbol: string }; Querystring: { interval?: Interval; startTime?: number; endTime?: number; limit?: number } }>(
    '/prices/:symbol/history',
    {
      schema: {
        tags: ['market data'],
        summary: 'K-line history',
        params: symbolParam,
        querystring: {
          type: 'object',
          properties: {
            interval: { type: 'string', enum: [...INTERVALS], default: '1m' },
            startTime: { ...millis, minimum: 0 },
            endTime: { ...millis, minimum: 0 },
            limit: { type: 'integer', minimum: 1, maximum: 1000, default: 500 },
          },
        },
        response: responses({
          type: 'object',
          required: ['symbol', 'interval', 'candles'],
          properties: { symbol: { type: 'string' }, interval: { type: 'string' }, candles: { type: 'array', items: candleRow } },
        }),
      },
    },
    async (req) => {
      const listing = listingOf(deps, req.params.symbol);
      const { interval = '1m', startTime, endTime, limit = 500 } = req.query;
      if (startTime !== undefined && endTime !== undefined && startTime > endTime) {
        throw new ValidationError('startTime', 'must not be after endTime');
      }
      const candles = await listCandles(deps.db, { symbol: listing.symbol, interval, startTime, endTime, limit });
      return stockOk(req.id, {
        symbol: listing.symbol,
        interval,
        candles: candles.map(candleView),
      });
    },
  );

  app.get<{ Params: { symbol: string } }>(
    '/underlying/:symbol/price',
    {
      schema: {
        tags: ['market data'],
        summary: 'Quote of the underlying instrument',
        params: symbolParam,
        response: responses({
          type: 'object',
          required: ['symbol', 'underlying', 'exchange', 'price', 'timestamp', 'marketStatus', 'stale'],
          properties: {
            symbol: { type: 'string' },
            underlying: { type: 'string' },
            exchange: { type: 'string' },
            price: decimalOut,
            timestamp: millis,
            marketStatus: { type: 'string', enum: ['open', 'closed'] },
            stale: staleProp,
          },
        }),
      },
    },
    async (req) => {
      const listing = listingOf(deps, req.params.symbol);
      const quote = deps.quotes.getQuote(listing.symbol);
      if (!quote) throw new NotFoundError('quote');
      const t = now();
      return stockOk(req.id, {
        symbol: listing.symbol,
        underlying: listing.underlying,
        exchange: listing.exchange,
        price: quote.last,
        timestamp: quote.timestamp,
        marketStatus: deps.calendar.isOpen(t) ? 'open' : 'closed',
        stale: quoteStale(quote, t, maxAgeMs),
      });
    },
  );

  app.get<{ Querystring: { symbol?: string; page?: number; limit?: number } }>(
    '/corporate-action',
    {
      schema: {
        tags: ['market data'],
        summary: 'Corporate actions (splits and dividends); may be empty',
        querystring: { type: 'object', properties: { symbol: { type: 'string', maxLength: 16 }, ...pageQueryProps } },
        response: responses(listOf(corporateRow)),
      },
    },
    async (req) => {
      const { limit, offset } = pageOf(req.query);
      const rows = deps.corporateActions(req.query.symbol?.toUpperCase()).slice().sort((a, b) => (a.exDate < b.exDate ? 1 : a.exDate > b.exDate ? -1 : 0));
      return stockOk(req.id, { total: rows.length, rows: rows.slice(offset, offset + limit) });
    },
  );
};
