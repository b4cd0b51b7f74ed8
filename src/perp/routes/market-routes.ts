/**
 * Market data (contract.md §B): server time (public), the instruments the engine trades, the book,
 * 24-hour tickers with mark, index, funding and open interest, candles of trades, marks and indices,
 * the instrument's trades, and the funding rate history.
 */
import type { FastifyPluginAsync } from 'fastify';
import { NotFoundError, notListed } from '../../errors/app-error.ts';
import { listOf, pageOf, pageQueryProps } from '../../http/list-paging.ts';
import { stepsToDecimal, type InstrumentSpec } from '../engine/instruments.ts';
import { perpOk } from '../perp-envelope.ts';
import { INTERVALS } from '../../marketdata/market-types.ts';
import type { CandleInterval } from '../../storage/candle-store.ts';
import type { MarketService } from '../market-service.ts';
import { decimalOut, millis, responses, symbolProp, timeRangeProps } from '../perp-schemas.ts';
import type { PerpCandleKind } from '../store/perp-candle-store.ts';
import { available } from './trading-routes.ts';

const PPM_STEP = '0.000001';

const instrumentSchema = {
  type: 'object',
  required: [
    'symbol', 'base', 'quote', 'tickSize', 'lotSize', 'minSize', 'maxSize', 'maxLeverage',
    'initialMarginRatio', 'maintenanceMarginRatio', 'makerFeeRate', 'takerFeeRate', 'fundingInterval',
  ],
  properties: {
    symbol: { type: 'string', description: 'e.g. BTC-USD' },
    base: { type: 'string' },
    quote: { type: 'string' },
    tickSize: { ...decimalOut, description: 'price step (quote per base)' },
    lotSize: { ...decimalOut, description: 'size step (base units)' },
    minSize: { ...decimalOut, description: 'smallest order size (base units)' },
    maxSize: { ...decimalOut, description: 'largest order size (base units)' },
    maxLeverage: { ...decimalOut, description: 'highest leverage an account may choose' },
    initialMarginRatio: { ...decimalOut, description: 'floor of the initial margin, a fraction of notional (0.02 = 2%)' },
    maintenanceMarginRatio: { ...decimalOut, description: 'maintenance margin, a fraction of notional' },
    makerFeeRate: { ...decimalOut, description: 'fraction of notional' },
    takerFeeRate: { ...decimalOut, description: 'fraction of notional' },
    fundingInterval: { type: 'integer', description: 'milliseconds between funding payments' },
  },
} as const;

export function instrumentView(spec: InstrumentSpec) {
  const [base, quote] = spec.symbol.split('-');
  return {
    symbol: spec.symbol,
    base,
    quote,
    tickSize: spec.tickSize,
    lotSize: spec.lotSize,
    minSize: stepsToDecimal(spec.minSizeLots, spec.lotSize),
    maxSize: stepsToDecimal(spec.maxSizeLots, spec.lotSize),
    maxLeverage: String(spec.maxLeverage),
    initialMarginRatio: stepsToDecimal(spec.initialMarginRatioPpm, PPM_STEP),
    maintenanceMarginRatio: stepsToDecimal(spec.maintenanceMarginRatioPpm, PPM_STEP),
    makerFeeRate: stepsToDecimal(spec.makerFeeRatePpm, PPM_STEP),
    takerFeeRate: stepsToDecimal(spec.takerFeeRatePpm, PPM_STEP),
    fundingInterval: spec.fundingIntervalMs,
  };
}

export const marketRoutes: FastifyPluginAsync<{ instruments: readonly InstrumentSpec[]; now: () => number; market?: MarketService }> = async (app, { instruments, now, market: service }) => {
  const market = () => available(service);
  const tags = ['market data'];

  app.get(
    '/time',
    {
      config: { auth: false },
      schema: {
        tags,
        summary: 'Server time (no authentication): align X-Api-Ts with it',
        security: [],
        response: responses({ type: 'object', required: ['serverTime'], properties: { serverTime: millis } }),
      },
    },
    async (req) => perpOk(req.id, { serverTime: now() }),
  );

  app.get<{ Querystring: { symbol?: string } }>(
    '/instruments',
    {
      schema: {
        tags,
        summary: 'Instruments and their trading rules (READ)',
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: { symbol: { type: 'string', minLength: 1, maxLength: 33, description: 'only this instrument (e.g. BTC-USD)' } },
        },
        response: responses({ type: 'array', items: instrumentSchema }),
      },
    },
    async (req) => {
      const { symbol } = req.query;
      const list = symbol === undefined ? instruments : instruments.filter((i) => i.symbol === symbol);
      if (symbol !== undefined && list.length === 0) throw new NotFoundError('symbol', { reason: notListed(symbol) });
      return perpOk(req.id, list.map(instrumentView));
    },
  );

  const priceOrNull = { type: ['string', 'null'] } as const;
  const level = { type: 'array', minItems: 2, maxItems: 2, items: { type: 'string' }, description: '[price, size]' } as const;

  app.get<{ Querystring: { symbol: string; limit?: number } }>(
    '/depth',
    {
      schema: {
        tags,
        summary: 'The order book, aggregated by price, best first (READ)',
        querystring: {
          type: 'object',
          required: ['symbol'],
          additionalProperties: false,
          properties: { symbol: symbolProp, limit: { type: 'integer', minimum: 1, maximum: 500, description: 'levels per side (default 50)' } },
        },
        response: responses({
          type: 'object',
          required: ['symbol', 'bids', 'asks', 'seq', 'ts'],
          properties: {
            symbol: { type: 'string' },
            bids: { type: 'array', items: level },
            asks: { type: 'array', items: level },
            seq: { type: 'integer', description: 'the engine event seq the book is at' },
            ts: millis,
          },
        }),
      },
    },
    async (req) => perpOk(req.id, market().depth(req.query.symbol, req.query.limit ?? 50)),
  );

  app.get<{ Querystring: { symbol?: string } }>(
    '/tickers',
    {
      schema: {
        tags,
        summary: '24-hour statistics, mark and index prices, funding and open interest (READ)',
        querystring: { type: 'object', additionalProperties: false, properties: { symbol: symbolProp } },
        response: responses({
          type: 'array',
          items: {
            type: 'object',
            required: [
              'symbol', 'lastPrice', 'open24h', 'high24h', 'low24h', 'volume24h', 'turnover24h', 'trades24h', 'bestBid', 'bestAsk',
              'markPrice', 'indexPrice', 'fundingRate', 'nextFundingTime', 'openInterest', 'ts', 'markTime', 'indexTime', 'stale',
            ],
            properties: {
              symbol: { type: 'string' },
              lastPrice: priceOrNull,
              open24h: priceOrNull,
              high24h: priceOrNull,
              low24h: priceOrNull,
              volume24h: { ...decimalOut, description: 'base units traded in the last 24 hours' },
              turnover24h: { ...decimalOut, description: 'USD traded in the last 24 hours' },
              trades24h: { type: 'integer' },
              bestBid: priceOrNull,
              bestAsk: priceOrNull,
              markPrice: priceOrNull,
              indexPrice: priceOrNull,
              fundingRate: { ...decimalOut, description: 'the last funding rate applied, per interval (0.0001 = 0.01 %)' },
              nextFundingTime: millis,
              openInterest: { ...decimalOut, description: 'base units held long (= short)' },
              ts: millis,
              markTime: { type: ['integer', 'null'], description: 'when the mark was last set (ms); null before the first' },
              indexTime: { type: ['integer', 'null'], description: "the time of the index's market-data quote (ms); null before the first" },
              stale: {
                type: 'boolean',
                description: "true when there is no mark or index yet, the index is older than the instrument's indexStaleMs (default 30 s: liquidation pauses) or the mark older than its markStaleMs (default 60 s: market orders are refused), as of `ts`",
              },
            },
          },
        }),
      },
    },
    async (req) => perpOk(req.id, await market().tickers(req.query.symbol)),
  );

  app.get<{ Querystring: { symbol: string; interval: CandleInterval; type?: PerpCandleKind; startTime?: number; endTime?: number; limit?: number } }>(
    '/klines',
    {
      schema: {
        tags,
        summary: "Candles of the instrument's trades, or of its mark or index price (READ)",
        querystring: {
          type: 'object',
          required: ['symbol', 'interval'],
          additionalProperties: false,
          properties: {
            symbol: symbolProp,
            interval: { type: 'string', enum: [...INTERVALS] },
            type: { type: 'string', enum: ['trade', 'mark', 'index'], description: 'default trade' },
            ...timeRangeProps,
            limit: { type: 'integer', minimum: 1, maximum: 1000, description: 'default 100: the newest candles of the range' },
          },
        },
        response: responses({
          type: 'array',
          items: {
            type: 'object',
            required: ['openTime', 'open', 'high', 'low', 'close', 'volume', 'turnover', 'trades'],
            properties: {
              openTime: millis,
              open: decimalOut,
              high: decimalOut,
              low: decimalOut,
              close: decimalOut,
              volume: decimalOut,
              turnover: decimalOut,
              trades: { type: 'integer' },
            },
          },
        }),
      },
    },
    async (req) => {
      const q = req.query;
      return perpOk(req.id, await market().klines({ symbol: q.symbol, interval: q.interval, type: q.type ?? 'trade', startTime: q.startTime, endTime: q.endTime, limit: q.limit ?? 100 }));
    },
  );

  app.get<{ Querystring: { symbol: string; page?: number; limit?: number; startTime?: number; endTime?: number } }>(
    '/market-trades',
    {
      schema: {
        tags,
        summary: "The instrument's trades, newest first; side is the taker's (READ)",
        querystring: {
          type: 'object',
          required: ['symbol'],
          additionalProperties: false,
          properties: { symbol: symbolProp, ...timeRangeProps, ...pageQueryProps },
        },
        response: responses(
          listOf({
            type: 'object',
            required: ['id', 'symbol', 'price', 'size', 'side', 'ts', 'liquidation'],
            properties: {
              id: { type: 'string', description: "the trade's id: the engine event seq of the fill (decimal string)" },
              symbol: { type: 'string' },
              price: decimalOut,
              size: { ...decimalOut, description: 'base units' },
              side: { type: 'string', enum: ['BUY', 'SELL'], description: "the taker's side" },
              ts: millis,
              liquidation: { type: 'boolean', description: "true when the taker was the engine's liquidation order of an account" },
            },
          }),
        ),
      },
    },
    async (req) => {
      const q = req.query;
      const { offset, limit } = pageOf(q);
      return perpOk(req.id, await market().marketTrades({ symbol: q.symbol, startTime: q.startTime, endTime: q.endTime, offset, limit }));
    },
  );

  app.get<{ Querystring: { symbol: string; startTime?: number; endTime?: number; limit?: number } }>(
    '/funding-rates',
    {
      schema: {
        tags,
        summary: 'Funding rates applied, newest first (READ)',
        querystring: {
          type: 'object',
          required: ['symbol'],
          additionalProperties: false,
          properties: { symbol: symbolProp, ...timeRangeProps, limit: { type: 'integer', minimum: 1, maximum: 1000, description: 'default 100' } },
        },
        response: responses({
          type: 'array',
          items: {
            type: 'object',
            required: ['symbol', 'fundingRate', 'fundingTime', 'markPrice'],
            properties: { symbol: { type: 'string' }, fundingRate: decimalOut, fundingTime: millis, markPrice: decimalOut },
          },
        }),
      },
    },
    async (req) => perpOk(req.id, await market().fundingRates({ symbol: req.query.symbol, startTime: req.query.startTime, endTime: req.query.endTime, limit: req.query.limit ?? 100 })),
  );
};
