/**
 * Market data (contract.md §B): server time (public) and the instruments the engine trades. The
 * other market-data endpoints (klines, depth, tickers, funding rates) join with the engine's feed.
 */
import type { FastifyPluginAsync } from 'fastify';
import { NotFoundError } from '../../errors/app-error.ts';
import { stepsToDecimal, type InstrumentSpec } from '../engine/instruments.ts';
import { perpOk } from '../perp-envelope.ts';
import { decimalOut, millis, responses } from '../perp-schemas.ts';

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

export const marketRoutes: FastifyPluginAsync<{ instruments: readonly InstrumentSpec[]; now: () => number }> = async (app, { instruments, now }) => {
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
      if (symbol !== undefined && list.length === 0) throw new NotFoundError('symbol');
      return perpOk(req.id, list.map(instrumentView));
    },
  );
};
