/**
 * The perpetual API's stateless checks, as dYdX's `ValidateBasic`: what can be said of a request
 * without the instrument, the account or the book. The server runs them before the engine is asked
 * and the clients before anything is sent, so a client refuses exactly what the server would, with
 * the same field and reason. The checks that need state (lot and tick of the instrument, the price
 * band, margin) stay with the server and the engine.
 */
import { DECIMAL_PATTERN } from '../common/patterns.ts';
import {
  CLIENT_ORDER_ID_PATTERN, defaultTimeInForce, isTriggerType, MAX_CLIENT_ORDER_ID, MAX_ORDER_TTL_MS, ORDER_SIDES, ORDER_TYPES, TIME_IN_FORCE_BY_TYPE, timeInForceAllowed, TRIGGER_BY,
  triggeredType, type OrderType,
} from './perp-enums.ts';

/** A refusal: the field (as the request names it) and why. */
export interface FieldIssue {
  field: string;
  reason: string;
}

/** An order as `orders/build` takes it, before any check: values may be of any type. */
export interface OrderBasics {
  side: unknown;
  type: unknown;
  /** Absent (or empty) only for a closePosition trigger. */
  size?: unknown;
  price?: unknown;
  timeInForce?: unknown;
  clientOrderId?: unknown;
  triggerPrice?: unknown;
  triggerBy?: unknown;
  closePosition?: unknown;
}

const DECIMAL = new RegExp(DECIMAL_PATTERN);
const CLIENT_ORDER_ID = new RegExp(CLIENT_ORDER_ID_PATTERN);
const includes = (list: readonly string[], v: unknown): v is string => typeof v === 'string' && list.includes(v);

/**
 * The first stateless rule an order breaks, or undefined: side and type known, the time in force
 * allowed for the type (market orders IOC or FOK), size a decimal, price a decimal and present for
 * a LIMIT order (empty or absent means none), clientOrderId 1 to 64 visible ASCII characters when
 * given (empty means none).
 */
export function orderBasicIssue(o: OrderBasics): FieldIssue | undefined {
  if (!includes(ORDER_SIDES, o.side)) return { field: 'side', reason: 'must be BUY or SELL' };
  if (!includes(ORDER_TYPES, o.type)) return { field: 'type', reason: `must be one of ${ORDER_TYPES.join(', ')}` };
  const type = o.type as OrderType;
  const tif = o.timeInForce ?? defaultTimeInForce(type);
  if (typeof tif !== 'string' || !timeInForceAllowed(type, tif)) {
    return { field: 'timeInForce', reason: `must be one of ${TIME_IN_FORCE_BY_TYPE[type].join(', ')} for a ${type} order` };
  }
  const trigger = isTriggerType(type);
  const close = o.closePosition ?? false;
  if (typeof close !== 'boolean') return { field: 'closePosition', reason: 'must be a boolean' };
  if (close && !trigger) return { field: 'closePosition', reason: 'only a trigger order (STOP_* or TAKE_PROFIT_*) closes the position' };
  if (close) {
    if (o.size !== undefined && o.size !== '') return { field: 'size', reason: 'must be omitted with closePosition: the whole position is closed' };
  } else if (typeof o.size !== 'string' || !DECIMAL.test(o.size)) return { field: 'size', reason: 'must be a decimal string like "0.5"' };
  if (o.price === undefined || o.price === '') {
    if (triggeredType(type) === 'LIMIT') return { field: 'price', reason: `required for a ${type} order` };
  } else if (typeof o.price !== 'string' || !DECIMAL.test(o.price)) return { field: 'price', reason: 'must be a decimal string like "50000.5"' };
  if (trigger) {
    if (o.triggerPrice === undefined || o.triggerPrice === '') return { field: 'triggerPrice', reason: `required for a ${type} order` };
    if (typeof o.triggerPrice !== 'string' || !DECIMAL.test(o.triggerPrice)) return { field: 'triggerPrice', reason: 'must be a decimal string like "50000.5"' };
    if (o.triggerBy !== undefined && o.triggerBy !== '' && !includes(TRIGGER_BY, o.triggerBy)) return { field: 'triggerBy', reason: 'must be MARK or LAST' };
  } else {
    if (o.triggerPrice !== undefined && o.triggerPrice !== '') return { field: 'triggerPrice', reason: `only a trigger order (STOP_* or TAKE_PROFIT_*) has one, not a ${type} order` };
    if (o.triggerBy !== undefined && o.triggerBy !== '') return { field: 'triggerBy', reason: `only a trigger order has one, not a ${type} order` };
  }
  if (o.clientOrderId !== undefined && o.clientOrderId !== '' && (typeof o.clientOrderId !== 'string' || !CLIENT_ORDER_ID.test(o.clientOrderId))) {
    return { field: 'clientOrderId', reason: `must be 1 to ${MAX_CLIENT_ORDER_ID} visible ASCII characters` };
  }
  return undefined;
}

/** The first rule a signed order's `expiry` (ms) breaks at `now`: in the future, at most 30 days ahead. */
export function orderExpiryIssue(expiry: unknown, now: number): FieldIssue | undefined {
  if (typeof expiry !== 'number' || !Number.isSafeInteger(expiry) || expiry <= now) return { field: 'expiry', reason: 'must be a time in ms in the future' };
  if (expiry > now + MAX_ORDER_TTL_MS) return { field: 'expiry', reason: 'must be at most 30 days ahead' };
  return undefined;
}
