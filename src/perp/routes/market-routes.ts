/**
 * Market data (contract.md §B): server time (public), the instruments the engine trades, the book,
 * 24-hour tickers with mark, index, funding and open interest, candles of trades, marks and indices,
 * the instrument's trades, and the funding rate history. Every shape is the contract's
 * (packages/contract).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  DepthQuerySchema,
  DepthSchema,
  FundingRateSchema,
  FundingRatesQuerySchema,
  InstrumentSchema,
  InstrumentsQuerySchema,
  KlineSchema,
  KlinesQuerySchema,
  ListOf,
  MarketTradeSchema,
  MarketTradesQuerySchema,
  pageOf,
  perpResponses,
  ServerTimeSchema,
  TickerSchema,
  TickersQuerySchema,
  Type,
  type Instrument,
} from '@tokex/contract';
import { NotFoundError, notListed } from '../../errors/app-error.ts';
import { stepsToDecimal, type InstrumentSpec } from '../engine/instruments.ts';
import { perpOk } from '../perp-envelope.ts';
import type { MarketService } from '../market-service.ts';
import { available } from './trading-routes.ts';

const PPM_STEP = '0.000001';

export function instrumentView(spec: InstrumentSpec): Instrument {
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

export const marketRoutes: FastifyPluginAsyncTypebox<{ instruments: readonly InstrumentSpec[]; now: () => number; market?: MarketService }> = async (
  app,
  { instruments, now, market: service },
) => {
  const market = () => available(service);
  const tags = ['market data'];

  app.get(
    '/time',
    {
      config: { auth: false },
      schema: { tags, summary: 'Server time (no authentication): align X-Api-Ts with it', security: [], response: perpResponses(ServerTimeSchema) },
    },
    async (req) => perpOk(req.id, { serverTime: now() }),
  );

  app.get(
    '/instruments',
    {
      schema: { tags, summary: 'Instruments and their trading rules (READ)', querystring: InstrumentsQuerySchema, response: perpResponses(Type.Array(InstrumentSchema)) },
    },
    async (req) => {
      const { symbol } = req.query;
      const list = symbol === undefined ? instruments : instruments.filter((i) => i.symbol === symbol);
      if (symbol !== undefined && list.length === 0) throw new NotFoundError('symbol', { reason: notListed(symbol) });
      return perpOk(req.id, list.map(instrumentView));
    },
  );

  app.get(
    '/depth',
    { schema: { tags, summary: 'The order book, aggregated by price, best first (READ)', querystring: DepthQuerySchema, response: perpResponses(DepthSchema) } },
    async (req) => perpOk(req.id, market().depth(req.query.symbol, req.query.limit ?? 50)),
  );

  app.get(
    '/tickers',
    {
      schema: {
        tags,
        summary: '24-hour statistics, mark and index prices, funding and open interest (READ)',
        querystring: TickersQuerySchema,
        response: perpResponses(Type.Array(TickerSchema)),
      },
    },
    async (req) => perpOk(req.id, await market().tickers(req.query.symbol)),
  );

  app.get(
    '/klines',
    {
      schema: {
        tags,
        summary: "Candles of the instrument's trades, or of its mark or index price (READ)",
        querystring: KlinesQuerySchema,
        response: perpResponses(Type.Array(KlineSchema)),
      },
    },
    async (req) => {
      const q = req.query;
      return perpOk(req.id, await market().klines({ symbol: q.symbol, interval: q.interval, type: q.type ?? 'trade', startTime: q.startTime, endTime: q.endTime, limit: q.limit ?? 100 }));
    },
  );

  app.get(
    '/market-trades',
    {
      schema: {
        tags,
        summary: "The instrument's trades, newest first; side is the taker's (READ)",
        querystring: MarketTradesQuerySchema,
        response: perpResponses(ListOf(MarketTradeSchema)),
      },
    },
    async (req) => {
      const q = req.query;
      const { offset, limit } = pageOf(q);
      return perpOk(req.id, await market().marketTrades({ symbol: q.symbol, startTime: q.startTime, endTime: q.endTime, offset, limit }));
    },
  );

  app.get(
    '/funding-rates',
    {
      schema: {
        tags,
        summary: 'Funding rates applied, newest first (READ)',
        querystring: FundingRatesQuerySchema,
        response: perpResponses(Type.Array(FundingRateSchema)),
      },
    },
    async (req) => perpOk(req.id, await market().fundingRates({ symbol: req.query.symbol, startTime: req.query.startTime, endTime: req.query.endTime, limit: req.query.limit ?? 100 })),
  );
};
