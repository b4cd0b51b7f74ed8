/**
 * Market data (seed §4A, 6 endpoints): config, symbols, quotes, K-lines, underlying quotes,
 * corporate actions. Every shape is the contract's (packages/contract); this module only routes.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  ListOf,
  pageOf,
  STOCK_DEFAULT_KLINE_INTERVAL,
  STOCK_DEFAULT_KLINE_LIMIT,
  StockConfigSchema,
  StockCorporateActionQuerySchema,
  StockCorporateActionSchema,
  StockPriceHistoryQuerySchema,
  StockPriceHistorySchema,
  StockQuoteSchema,
  stockResponses,
  StockSymbolParams,
  StockSymbolSchema,
  StockUnderlyingPriceSchema,
  Type,
  type StockKlineInterval,
  type StockUnderlyingPrice,
} from '@tokex/contract';
import { NotFoundError, notListed, ValidationError } from '../../errors/app-error.ts';
import type { Interval, Quote } from '../../marketdata/market-types.ts';
import { listCandles } from '../../storage/candle-store.ts';
import type { MarketConfigView, StockApiDeps, StockListing } from '../stock-deps.ts';
import { candleView, quoteStale, quoteView, STALE_QUOTE_MS } from '../quote-view.ts';
import { dataRenderer, JSON_UTF8, stockOkText } from '../stock-envelope.ts';
import { okReply } from './stock-reply.ts';

// The contract's intervals are the candle store's: a list that drifts from it fails to compile here.
const sameIntervals: [StockKlineInterval, Interval] extends [Interval, StockKlineInterval] ? true : never = true;
void sameIntervals;

export function listingOf(deps: StockApiDeps, symbol: string): StockListing {
  const listing = deps.stocks.bySymbol(symbol) ?? deps.stocks.bySymbol(symbol.toUpperCase());
  if (!listing) throw new NotFoundError('symbol', { reason: notListed(symbol) });
  return listing;
}

export const marketRoutes: FastifyPluginAsyncTypebox<{ deps: StockApiDeps }> = async (app, { deps }) => {
  const now = deps.now ?? Date.now;

  // A quote is read far more often than it changes: its data is rendered once per (quote, chain
  // snapshot, market status) by the schema's own serializer, and each request only wraps it.
  const renderQuoteData = dataRenderer(StockQuoteSchema);
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

  app.get('/config', { schema: { tags: ['market data'], summary: 'On-chain market config (cached)', response: stockResponses(StockConfigSchema) } }, async (req) => {
    const cfg = await deps.chain.marketConfig();
    return okReply(req.id, {
      chainId: deps.chainId,
      product: deps.product,
      cashierBuffer: cfg.cashierBuffer,
      exchangeFeeConfig: cfg.exchangeFeeConfig,
      cashierTokenConfig: cfg.cashierTokenConfig,
      blockNumber: cfg.blockNumber,
      updatedAt: cfg.updatedAt,
    });
  });

  app.get('/symbols', { schema: { tags: ['market data'], summary: 'Tradable stock tokens', response: stockResponses(Type.Array(StockSymbolSchema)) } }, async (req) => {
    return okReply(req.id, deps.stocks.list().map((s) => ({ ...s, tradable: true })));
  });

  // The reply is the envelope as text around the data its schema's own serializer rendered (above);
  // the schema is named to the route so the params are still typed from it.
  const quoteSchema = { tags: ['market data'], summary: 'Real-time quote with on-chain token context', params: StockSymbolParams, response: stockResponses(StockQuoteSchema) };
  app.get<{ Reply: string }, unknown, typeof quoteSchema>(
    '/prices/:symbol',
    { schema: quoteSchema },
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

  app.get(
    '/prices/:symbol/history',
    {
      schema: {
        tags: ['market data'],
        summary: 'K-line history',
        params: StockSymbolParams,
        querystring: StockPriceHistoryQuerySchema,
        response: stockResponses(StockPriceHistorySchema),
      },
    },
    async (req) => {
      const listing = listingOf(deps, req.params.symbol);
      const { interval = STOCK_DEFAULT_KLINE_INTERVAL, startTime, endTime, limit = STOCK_DEFAULT_KLINE_LIMIT } = req.query;
      if (startTime !== undefined && endTime !== undefined && startTime > endTime) {
        throw new ValidationError('startTime', 'must not be after endTime');
      }
      const candles = await listCandles(deps.db, { symbol: listing.symbol, interval, startTime, endTime, limit });
      return okReply(req.id, {
        symbol: listing.symbol,
        interval,
        candles: candles.map(candleView),
      });
    },
  );

  app.get(
    '/underlying/:symbol/price',
    {
      schema: {
        tags: ['market data'],
        summary: 'Quote of the underlying instrument',
        params: StockSymbolParams,
        response: stockResponses(StockUnderlyingPriceSchema),
      },
    },
    async (req) => {
      const listing = listingOf(deps, req.params.symbol);
      const quote = deps.quotes.getQuote(listing.symbol);
      if (!quote) throw new NotFoundError('quote');
      const t = now();
      return okReply<StockUnderlyingPrice>(req.id, {
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

  app.get(
    '/corporate-action',
    {
      schema: {
        tags: ['market data'],
        summary: 'Corporate actions (splits and dividends); may be empty',
        querystring: StockCorporateActionQuerySchema,
        response: stockResponses(ListOf(StockCorporateActionSchema)),
      },
    },
    async (req) => {
      const { limit, offset } = pageOf(req.query);
      const rows = deps.corporateActions(req.query.symbol?.toUpperCase()).slice().sort((a, b) => (a.exDate < b.exDate ? 1 : a.exDate > b.exDate ? -1 : 0));
      return okReply(req.id, { total: rows.length, rows: rows.slice(offset, offset + limit) });
    },
  );
};
