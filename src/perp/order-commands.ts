/**
 * The engine commands of signed order and amendment messages (order-service.ts), every field checked
 * against the instrument: on its tick and lot, within its prices and sizes, and the contract's
 * stateless rules. Pure: the service finds the instrument and the order first.
 */
import { isTriggerType, orderBasicIssue, type TriggerBy } from '@tokex/contract';
import { RejectedError, ValidationError } from '../errors/app-error.ts';
import { decimalToSteps, type InstrumentSpec } from './engine/instruments.ts';
import type { AmendOrderCommand, OrderType, PlaceOrderCommand, Side, TimeInForce } from './engine/engine-types.ts';
import type { AmendMessage, OrderMessage } from './order-typed-data.ts';
import { priceOf, sizeOf } from './perp-views.ts';

/** `value` in ticks of `s`: on the tick and within the instrument's prices, or refused naming `field`. */
export function ticksOf(s: InstrumentSpec, field: string, value: string): number {
  const ticks = decimalToSteps(value, s.tickSize);
  if (ticks === null) throw new RejectedError('PRICE_OUT_OF_RANGE', `${field}: ${value} is off the tick: not a multiple of the tick size ${s.tickSize}`);
  if (ticks <= 0 || ticks > s.maxPriceTicks) {
    throw new RejectedError('PRICE_OUT_OF_RANGE', `${field}: ${value} is outside ${s.symbol}'s prices ${priceOf(s, 1)} to ${priceOf(s, s.maxPriceTicks)}`);
  }
  return ticks;
}

/** `value` in lots of `s`: on the lot and within the instrument's sizes, or refused. */
export function lotsOf(s: InstrumentSpec, value: string): number {
  const lots = decimalToSteps(value, s.lotSize);
  if (lots === null) throw new RejectedError('SIZE_OUT_OF_RANGE', `size: ${value} is not a multiple of the lot size ${s.lotSize}`);
  if (lots < s.minSizeLots || lots > s.maxSizeLots) {
    throw new RejectedError('SIZE_OUT_OF_RANGE', `size: ${value} is outside ${s.symbol}'s sizes ${sizeOf(s, s.minSizeLots)} to ${sizeOf(s, s.maxSizeLots)}`);
  }
  return lots;
}

/** What an order message's command is made of. */
export type OrderCommandFields = Pick<OrderMessage, 'symbol' | 'side' | 'orderType' | 'size' | 'price' | 'timeInForce' | 'reduceOnly' | 'clientOrderId' | 'triggerPrice' | 'triggerBy' | 'closePosition'>;

/** The engine command of an order message on instrument `s`, every field checked against it; `prefix` names a batch position. */
export function placeCommandOf(s: InstrumentSpec, m: OrderCommandFields, prefix: string) {
  // The stateless rules are the contract's (the clients refuse the same before sending); the
  // signed message names the type `orderType`.
  const issue = orderBasicIssue({
    side: m.side, type: m.orderType, size: m.size, price: m.price, timeInForce: m.timeInForce, clientOrderId: m.clientOrderId,
    triggerPrice: m.triggerPrice, triggerBy: m.triggerBy, closePosition: m.closePosition,
  });
  if (issue) throw new ValidationError(`${prefix}${prefix && issue.field === 'type' ? 'orderType' : issue.field}`, issue.reason);
  const trigger = isTriggerType(m.orderType);
  const lots = m.closePosition === true ? 0 : lotsOf(s, m.size);
  const priceTicks = m.price !== '' ? ticksOf(s, 'price', m.price) : undefined;
  const cmd: Omit<PlaceOrderCommand, 'id' | 'ts' | 'account'> = {
    kind: 'placeOrder',
    symbol: s.symbol,
    side: m.side as Side,
    type: m.orderType as OrderType,
    sizeLots: lots,
    timeInForce: m.timeInForce as TimeInForce,
    reduceOnly: m.reduceOnly,
    ...(priceTicks !== undefined ? { priceTicks } : {}),
    ...(m.clientOrderId !== '' ? { clientOrderId: m.clientOrderId } : {}),
    ...(trigger
      ? {
          triggerPriceTicks: ticksOf(s, 'triggerPrice', m.triggerPrice as string),
          triggerBy: (m.triggerBy || 'MARK') as TriggerBy,
          ...(m.closePosition === true ? { closePosition: true } : {}),
        }
      : {}),
  };
  return { spec: s, cmd };
}

/** The engine command of an amendment of order `orderId` on instrument `s`, its fields checked against it. */
export function amendCommandFor(s: InstrumentSpec, orderId: number, m: Pick<AmendMessage, 'price' | 'size'>, prefix: string) {
  if (m.price === '' && m.size === '') throw new ValidationError(`${prefix}price`, 'give a new price, a new size, or both');
  const issue = (field: string, v: string) => {
    if (v !== '' && !/^(0|[1-9][0-9]*)(\.[0-9]+)?$/.test(v)) throw new ValidationError(`${prefix}${field}`, 'must be a decimal string like "50000.5"');
  };
  issue('price', m.price);
  issue('size', m.size);
  const cmd: Omit<AmendOrderCommand, 'id' | 'ts' | 'account'> = {
    kind: 'amendOrder',
    orderId,
    ...(m.price !== '' ? { priceTicks: ticksOf(s, 'price', m.price) } : {}),
    ...(m.size !== '' ? { sizeLots: lotsOf(s, m.size) } : {}),
  };
  return { spec: s, cmd };
}
