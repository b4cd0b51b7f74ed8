/**
 * Market data (seed §4A, 6 endpoints): config, symbols, quotes, K-lines, underlying quotes,
 * corporate actions. Every shape is the contract's (packages/contract); this module only routes.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  ListOf,
  pageOf,
  STOCK_DEFAULT_KLINE_LIMIT,
  STOCK_DEFAULT_PRICE_ADJUSTMENT,
  STOCK_MAX_UNIX_SECONDS,
  StockConfigSchema,
  StockCorporateActionQuerySchema,
  StockCorporateActionSchema,
  StockPriceHistoryQuerySchema,
  StockPriceHistorySchema,
  StockPriceParams,
  StockQuoteSchema,
  stockResponses,
  StockSymbolParams,
  StockSymbolSchema,
  StockUnderlyingPriceSchema,
  Type,
  type StockKlineInterval,
  type StockPriceAdjustment,
  type StockUnderlyingPrice,
} from '@tokex/contract';
import { NotFoundError, notListed, ValidationError } from '../../errors/app-error.ts';
import type { Quote } from '../../marketdata/market-types.ts';
import { readPriceHistory, type HistoryInterval, type PriceAdjustment } from '../../marketdata/price-history.ts';
import type { MarketConfigView, StockApiDeps, StockListing } from '../stock-deps.ts';
import { barView, marketStateAt, quoteStale, quoteView, STALE_QUOTE_MS } from '../quote-view.ts';
import { dataRenderer, JSON_UTF8, stockOkText } from '../stock-envelope.ts';
import { createMarketStats } from '../market-stats.ts';
import { symbolView } from '../symbol-view.ts';
import { symbolFlagsOf } from '../../marketdata/symbol-catalog.ts';
import { okExactReply, okReply } from './stock-reply.ts';
import { venueNow } from '../../lib/venue-clock.ts';

// The contract's intervals and adjustments are the history's: a list that drifts fails to compile here.
const sameIntervals: [StockKlineInterval, HistoryInterval] extends [HistoryInterval, StockKlineInterval] ? true : never = true;
const sameAdjustments: [StockPriceAdjustment, PriceAdjustment] extends [PriceAdjustment, StockPriceAdjustment] ? true : never = true;
void sameIntervals;
void sameAdjustments;

/**
 * A history time (Unix seconds, as Anchored documents) in ms. Above 4294967295 (the year 2106) it is
 * refused as what it almost surely is, milliseconds, rather than answering an empty window.
 */
export function historySecondsToMs(field: 'startTime' | 'endTime', seconds: number): number {
  if (seconds > STOCK_MAX_UNIX_SECONDS) {
    throw new ValidationError(field, `must be Unix seconds, at most ${STOCK_MAX_UNIX_SECONDS}: ${seconds} looks like milliseconds`);
  }
  return seconds * 1000;
}

export function listingOf(deps: StockApiDeps, symbol: string): StockListing {
  const listing = deps.stocks.bySymbol(symbol) ?? deps.stocks.bySymbol(symbol.toUpperCase());
  if (!listing) throw new NotFoundError('symbol', { reason: notListed(symbol) });
  return listing;
}

const TOKEN_ADDRESS = /^0X[0-9A-F]{40}$/;

/**
 * What `GET prices/{symbol}` names (anchored-reference.md §4.1): a stock symbol, the token's symbol
 * (the same ticker for every tokex token) or the token's address, upper-cased first as Anchored's
 * server does. An address no listed token has is 404 saying so.
 */
export function listingByKey(deps: StockApiDeps, key: string): StockListing {
  const upper = key.toUpperCase();
  if (TOKEN_ADDRESS.test(upper)) {
    const listing = deps.stocks.byAddress(upper.toLowerCase());
    if (!listing) throw new NotFoundError('symbol', { reason: `no listed token has the address ${key.toLowerCase()} on chain ${deps.chainId}` });
    return listing;
  }
  const bySymbol = deps.stocks.bySymbol(upper);
  if (bySymbol) return bySymbol;
  // A token symbol other than the ticker (tokex's deploy gives them the same one; a chain of another deploy may not).
  const token = deps.chain.cachedMarketConfig()?.stocks.find((s) => s.symbol.toUpperCase() === upper);
  const byToken = token && deps.stocks.byAddress(token.address);
  return byToken ?? listingOf(deps, key);
}

export const marketRoutes: FastifyPluginAsyncTypebox<{ deps: StockApiDeps }> = async (app, { deps }) => {
  const now = deps.now ?? venueNow;

  // A quote is read far more often than it changes: its data is rendered once per (quote, chain
  // snapshot, market status) by the schema's own serializer, and each request only wraps it.
  const renderQuoteData = dataRenderer(StockQuoteSchema);
  const renderedQuotes = new WeakMap<Quote, { cfg: MarketConfigView; open: boolean; session: string; stale: boolean; json: string }>();
  const maxAgeMs = deps.quoteMaxAgeMs ?? STALE_QUOTE_MS;

  function quoteJson(listing: StockListing, quote: Quote, cfg: MarketConfigView): string {
    const t = now();
    const market = marketStateAt(deps.calendar, t);
    const stale = quoteStale(quote, t, maxAgeMs);
    const hit = renderedQuotes.get(quote);
    if (hit !== undefined && hit.cfg === cfg && hit.open === market.open && hit.session === market.session && hit.stale === stale) return hit.json;
    const json = renderQuoteData(quoteView(listing, quote, cfg, market, stale));
    renderedQuotes.set(quote, { cfg, open: market.open, session: market.session, stale, json });
    return json;
  }

  app.get('/config', { schema: { tags: ['market data'], summary: 'On-chain market config (cached)', response: stockResponses(StockConfigSchema) } }, async (req) => {
    const [cfg, scheduled] = await Promise.all([deps.chain.marketConfig(), deps.scheduledChanges?.() ?? []]);
    return okReply(req.id, {
      chainId: deps.chainId,
      product: deps.product,
      productType: deps.product,
      cashierBuffer: cfg.cashierBuffer,
      exchangeFeeConfig: { ...cfg.exchangeFeeConfig, chainId: deps.chainId, productType: deps.product },
      cashierTokenConfig: cfg.cashierTokenConfig,
      blockNumber: cfg.blockNumber,
      updatedAt: cfg.updatedAt,
      scheduled,
    });
  });

  const dayStats = createMarketStats({ db: deps.historyDb ?? deps.db, quotes: deps.quotes, now });

  app.get(
    '/symbols',
    { schema: { tags: ['market data'], summary: 'Tradable stock tokens, with their 24-hour figures', response: stockResponses(Type.Array(StockSymbolSchema)) } },
    async (req, reply) => {
      const listings = deps.stocks.list();
      const figures = await dayStats.of(listings.map((s) => s.symbol));
      // The chain's decimals when its snapshot is there; the listing's otherwise (the same 18).
      const cfg = deps.chain.cachedMarketConfig();
      return okExactReply(reply, req.id, listings.map((s) => symbolView(s, cfg, figures.get(s.symbol)!, symbolFlagsOf(deps.calendar, s.symbol))));
    },
  );

  // The reply is the envelope as text around the data its schema's own serializer rendered (above);
  // the schema is named to the route so the params are still typed from it.
  const quoteSchema = {
    tags: ['market data'],
    summary: 'Real-time quote with on-chain token context, by stock symbol, token symbol or token address',
    params: StockPriceParams,
    response: stockResponses(StockQuoteSchema),
  };
  app.get<{ Reply: string }, unknown, typeof quoteSchema>(
    '/prices/:symbol',
    { schema: quoteSchema },
    // Not async: with the chain snapshot cached (the normal case) the quote is answered without a
    // promise; only the first read after start waits for the chain.
    (req, reply) => {
      const listing = listingByKey(deps, req.params.symbol);
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
    async (req, reply) => {
      const listing = listingOf(deps, req.params.symbol);
      const { interval, limit = STOCK_DEFAULT_KLINE_LIMIT, adjustment = STOCK_DEFAULT_PRICE_ADJUSTMENT } = req.query;
      const endTime = historySecondsToMs('endTime', req.query.endTime);
      const startTime = req.query.startTime === undefined ? undefined : historySecondsToMs('startTime', req.query.startTime);
      if (startTime !== undefined && startTime > endTime) throw new ValidationError('startTime', 'must not be after endTime');
      const candles = await readPriceHistory(deps.historyDb ?? deps.db, await deps.corporateActions(listing.symbol), {
        symbol: listing.symbol,
        interval,
        startTime,
        endTime,
        limit,
        adjustment,
        now: now(),
      });
      return okExactReply(reply, req.id, { symbol: listing.symbol, interval, adjustment, candles: candles.map(barView) });
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
        summary: 'Corporate actions (splits and dividends) with their state; a dividend carries the asked wallet\'s DIVIDEND operations; may be empty',
        querystring: StockCorporateActionQuerySchema,
        response: stockResponses(ListOf(StockCorporateActionSchema)),
      },
    },
    async (req) => {
      const { limit, offset } = pageOf(req.query);
      // A dividend's rows carry the DIVIDEND operations of the asked wallet, by default the key's own.
      const userAddress = (req.query.userAddress ?? req.apiKey?.userAddress ?? undefined)?.toLowerCase();
      const listed = await deps.corporateActions(req.query.symbol?.toUpperCase(), userAddress ? { userAddress } : undefined);
      const rows = listed.slice().sort((a, b) => (a.exDate < b.exDate ? 1 : a.exDate > b.exDate ? -1 : 0));
      return okReply(req.id, { total: rows.length, rows: rows.slice(offset, offset + limit) });
    },
  );
};
