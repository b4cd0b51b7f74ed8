/**
 * The Monday-shaped half of the perpetual API (docs/perp-api.md "Monday Trade clients"): clients
 * written for Monday Trade's trader API call `market/instruments`, `market/funding/history`,
 * `order/market` and `order/limit` with `BASE/USDC` names, numeric sides and the perpetual expiry
 * sentinel. Nothing here trades or prices on its own: each call is translated into the venue's own
 * shape and answered by the same services (the instruments' view, the funding history, and the order
 * service's placeDelegated, which takes the signed orders' path from the engine command on), so risk
 * checks, price bands, rate limits, idempotency and streams are the venue's.
 */
import {
  MONDAY_PERPETUAL_EXPIRY, MONDAY_SIDE_LONG, MONDAY_SIDE_SHORT, mondayInstrumentName,
  type MondayFundingHistoryQuery, type MondayFundingPoint, type MondayInstrument, type MondayLimitOrderBody, type MondayMarketOrderBody, type MondayOrderResult,
} from '@tokex/contract';
import { NotFoundError, notListed, RejectedError, ValidationError } from '../errors/app-error.ts';
import type { AuthKey } from '../auth/api-key-service.ts';
import { decimalToSteps, type InstrumentSpec } from './engine/instruments.ts';
import type { MarketService } from './market-service.ts';
import type { DelegatedOrderInput, OrderService } from './order-service.ts';
import { priceOf } from './perp-views.ts';
import type { PerpVenue } from './perp-venue.ts';
import { instrumentView } from './routes/market-routes.ts';

/** Default slippage tolerance of a market order without `slippageBps` (the real client's default). */
export const DEFAULT_SLIPPAGE_BPS = 10;
const BPS = 10_000n;

export interface MondayOrderService {
  instruments(symbol?: string): MondayInstrument[];
  fundingHistory(q: MondayFundingHistoryQuery): Promise<MondayFundingPoint[]>;
  market(caller: AuthKey, body: MondayMarketOrderBody, idempotencyKey?: string): Promise<MondayOrderResult>;
  limit(caller: AuthKey, body: MondayLimitOrderBody, idempotencyKey?: string): Promise<MondayOrderResult>;
}

/** The instrument named `BTC/USDC` (or by the venue symbol `BTC-USD`) in `list`; 40002 naming the listed ones otherwise. */
export function resolveInstrument(list: readonly InstrumentSpec[], name: string, field: string): InstrumentSpec {
  const found = list.find((s) => mondayInstrumentName(s.symbol) === name || s.symbol === name);
  if (found) return found;
  const listed = list.map((s) => mondayInstrumentName(s.symbol)).join(', ');
  throw new NotFoundError(field === 'symbol' ? 'symbol' : 'instrument', { reason: `${notListed(name)}; listed: ${listed}` });
}

export function createMondayOrderService(opts: {
  chainId: number;
  /** The configured instruments (as `GET instruments` lists them, engine or not). */
  instruments: readonly InstrumentSpec[];
  venue?: PerpVenue;
  orders?: OrderService;
  market?: MarketService;
  /** The venue's own One-Click Trade delegate (one-click-service.ts venueDelegateAddress). */
  venueDelegate: string;
  unavailable: () => Error;
}): MondayOrderService {
  const need = <T>(v: T | undefined): T => {
    if (v === undefined) throw opts.unavailable();
    return v;
  };
  const listed = (): readonly InstrumentSpec[] => (opts.venue ? opts.venue.engine().instrumentList() : opts.instruments);

  function common(body: MondayMarketOrderBody | MondayLimitOrderBody): { spec: InstrumentSpec; side: 'BUY' | 'SELL'; leverage?: number } {
    if (body.expiry !== MONDAY_PERPETUAL_EXPIRY) throw new ValidationError('expiry', `must be ${MONDAY_PERPETUAL_EXPIRY} (perpetual): the venue lists perpetuals only`);
    if (body.side !== MONDAY_SIDE_SHORT && body.side !== MONDAY_SIDE_LONG) throw new ValidationError('side', `must be ${MONDAY_SIDE_SHORT} (short) or ${MONDAY_SIDE_LONG} (long)`);
    const spec = resolveInstrument(listed(), body.instrument, 'instrument');
    let leverage: number | undefined;
    if (body.leverage !== undefined) {
      const text = String(body.leverage);
      if (!/^[1-9][0-9]{0,5}$/.test(text)) throw new ValidationError('leverage', 'must be a whole number from 1, e.g. "5"');
      leverage = Number(text);
    }
    return { spec, side: body.side === MONDAY_SIDE_LONG ? 'BUY' : 'SELL', leverage };
  }

  /** The mark in ticks; refused as the venue refuses a market order without a mark. */
  function markTicks(spec: InstrumentSpec): bigint {
    const prices = need(opts.venue).engine().prices(spec.symbol);
    const mark = prices?.markPriceTicks ?? 0;
    if (!mark || mark <= 0) throw new RejectedError('MARK_STALE', `${mondayInstrumentName(spec.symbol)} has no mark price yet; retry when it has one`);
    return BigInt(mark);
  }

  async function place(caller: AuthKey, spec: InstrumentSpec, input: Omit<DelegatedOrderInput, 'symbol'>, idempotencyKey?: string): Promise<MondayOrderResult> {
    const order = await need(opts.orders).placeDelegated(caller, { ...input, symbol: spec.symbol }, opts.venueDelegate, idempotencyKey);
    return { ...order, instrument: mondayInstrumentName(spec.symbol), txHash: null };
  }

  return {
    instruments(symbol) {
      const list = symbol === undefined ? opts.instruments : [resolveInstrument(opts.instruments, symbol, 'symbol')];
      return list.map((s) => ({ instrument: mondayInstrumentName(s.symbol), expiry: MONDAY_PERPETUAL_EXPIRY, ...instrumentView(s) }));
    },

    async fundingHistory(q) {
      if (q.chainId !== opts.chainId) throw new ValidationError('chainId', `must be ${opts.chainId}, the chain this service runs on`);
      const spec = resolveInstrument(listed(), q.symbol, 'symbol');
      const rows = await need(opts.market).fundingRates({ symbol: spec.symbol, startTime: q.startTime, endTime: q.endTime, limit: q.limit ?? 100 });
      // The venue's rate is what longs pay (positive: longs pay shorts); shorts pay its negation.
      return rows.map((r) => ({ timestamp: r.fundingTime, long: r.fundingRate, short: negate(r.fundingRate) }));
    },

    async market(caller, body, idempotencyKey) {
      const { spec, side, leverage } = common(body);
      const bps = BigInt(body.slippageBps ?? DEFAULT_SLIPPAGE_BPS);
      const mark = markTicks(spec);
      // Rounded inside the tolerance: down for a buy's ceiling, up for a sell's floor.
      let worst = side === 'BUY' ? (mark * (BPS + bps)) / BPS : (mark * (BPS - bps) + BPS - 1n) / BPS;
      if (worst < 1n) worst = 1n;
      if (worst > BigInt(spec.maxPriceTicks)) worst = BigInt(spec.maxPriceTicks);
      return place(caller, spec, { side, type: 'MARKET', size: body.size, price: priceOf(spec, Number(worst)), timeInForce: 'IOC', leverage }, idempotencyKey);
    },

    async limit(caller, body, idempotencyKey) {
      const { spec, side, leverage } = common(body);
      const buffer = body.markPriceBufferInBps ?? 0;
      if (buffer > 0) {
        const ticks = decimalToSteps(body.price, spec.tickSize);
        const mark = markTicks(spec);
        if (ticks !== null) {
          const p = BigInt(ticks);
          const b = BigInt(buffer);
          if (side === 'BUY' && p * BPS > mark * (BPS + b)) {
            throw new RejectedError('PRICE_OUT_OF_RANGE', `price: ${body.price} is above the mark ${priceOf(spec, Number(mark))} by more than markPriceBufferInBps (${buffer})`);
          }
          if (side === 'SELL' && p * BPS < mark * (BPS - b)) {
            throw new RejectedError('PRICE_OUT_OF_RANGE', `price: ${body.price} is below the mark ${priceOf(spec, Number(mark))} by more than markPriceBufferInBps (${buffer})`);
          }
        }
      }
      return place(caller, spec, { side, type: 'LIMIT', size: body.size, price: body.price, timeInForce: body.postOnly === true ? 'POST_ONLY' : 'GTC', leverage }, idempotencyKey);
    },
  };
}

function negate(decimal: string): string {
  if (/^-?0(\.0*)?$/.test(decimal)) return decimal.replace(/^-/, '');
  return decimal.startsWith('-') ? decimal.slice(1) : `-${decimal}`;
}
