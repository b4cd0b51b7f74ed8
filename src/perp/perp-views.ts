/**
 * How the perpetual API shows the engine's integers (docs/perp-api.md): prices and sizes as exact
 * decimal strings of the instrument's steps, money as decimal USD strings (the collateral's 6
 * decimals), ids as decimal strings, times in ms. Pure functions, one per resource.
 */
import { OPEN_ORDER_STATUSES } from '@tokex/contract';
import type { AccountSummary, AccountTransaction, FundingRate, Kline, ListedOrder, MarketTrade, Order, Position, TimeInForce, Trade } from '@tokex/contract';
import type { PerpCandleRecord } from './store/perp-candle-store.ts';
import { formatDecimal } from '../lib/decimal.ts';
import { COLLATERAL_DECIMALS, stepsToDecimal, type InstrumentSpec } from './engine/instruments.ts';
import { parseScaled } from './engine/fixed-point.ts';
import type { AccountView, MarginSummary, OrderView, PositionView, TradeEvent } from './engine/engine-types.ts';
import { liquidationPriceTicks } from './pricing/liquidation-price.ts';
import type { FundingRateRecord, PerpOrderRecord, PerpTradeRecord, PerpTransactionRecord } from './store/perp-history-store.ts';

/** Extra decimals of an average price beyond the tick (an average is rarely on the tick). */
const AVERAGE_EXTRA_DECIMALS = 4;

export const usd = (micros: bigint): string => formatDecimal(micros, COLLATERAL_DECIMALS);
export const priceOf = (spec: InstrumentSpec, ticks: number | bigint): string => stepsToDecimal(Number(ticks), spec.tickSize);
export const sizeOf = (spec: InstrumentSpec, lots: number): string => stepsToDecimal(lots, spec.lotSize);

/**
 * When the mark and the index were last set (the index's time is its quote's own, from the market
 * data), null before the first, and whether the prices are stale: no mark or index yet, an index
 * older than the instrument's `indexStaleMs` (liquidation pauses), or a mark older than its
 * `markStaleMs` (market orders are refused). Tickers and the `mark` stream show it.
 */
export function priceFreshness(
  spec: Pick<InstrumentSpec, 'indexStaleMs' | 'markStaleMs'>,
  p: { markPriceTicks: number; indexPriceTicks: number; markTs: number; indexTs: number },
  t: number,
): { markTime: number | null; indexTime: number | null; stale: boolean } {
  const markTime = p.markPriceTicks > 0 && p.markTs > 0 ? p.markTs : null;
  const indexTime = p.indexPriceTicks > 0 && p.indexTs > 0 ? p.indexTs : null;
  const stale =
    markTime === null || indexTime === null || t - indexTime > spec.indexStaleMs || (spec.markStaleMs > 0 && t - markTime > spec.markStaleMs);
  return { markTime, indexTime, stale };
}

/** A rate in units of 1e-9 as a decimal fraction (`125000` → `"0.000125"`). */
export const rateOf = (rateE9: bigint): string => formatDecimal(rateE9, 9);

/** notional / size as a price, rounded down to the tick's decimals plus four. */
export function averagePrice(spec: InstrumentSpec, notionalMicros: bigint, lots: number): string | null {
  if (lots === 0) return null;
  const lot = parseScaled(spec.lotSize, 'lotSize');
  const decimals = parseScaled(spec.tickSize, 'tickSize').scale + AVERAGE_EXTRA_DECIMALS;
  // price = notional / 10^6 / (lots × lot.value / 10^lot.scale), scaled by 10^decimals.
  const scaled = (notionalMicros * 10n ** BigInt(lot.scale + decimals)) / (10n ** BigInt(COLLATERAL_DECIMALS) * BigInt(lots) * lot.value);
  return formatDecimal(scaled, decimals);
}

// The shapes are the contract's (packages/contract). These names stay for order-service.ts, which
// imports them: an order as `DELETE orders/{id}` answers it, a fill with its liquidation mark (the
// schema of each route leaves out what it does not print), a position.
export type OrderBody = Order;
export type FillBody = Trade;
export type PositionBody = Position;

/** What names an order and its kind, alike in the engine's view of it and in the history's record. */
function orderNames(o: Pick<OrderView | PerpOrderRecord, 'orderId' | 'clientOrderId' | 'symbol' | 'side' | 'type'>) {
  return { orderId: String(o.orderId), clientOrderId: o.clientOrderId, symbol: o.symbol, side: o.side, type: o.type };
}

/** A resting order as the engine holds it (its fills' notional and fees come from the history). */
export function openOrderBody(spec: InstrumentSpec, o: OrderView, history?: PerpOrderRecord): ListedOrder {
  return {
    ...orderNames(o),
    timeInForce: o.timeInForce,
    // A waiting market-type trigger without a worst price has none (the engine keeps 0).
    price: o.priceTicks === 0 ? null : priceOf(spec, o.priceTicks),
    size: sizeOf(spec, o.sizeLots),
    filledSize: sizeOf(spec, o.filledLots),
    remainingSize: sizeOf(spec, o.remainingLots),
    avgPrice: history ? averagePrice(spec, history.filledNotional, history.filledLots) : null,
    fee: usd(history?.fee ?? 0n),
    status: o.status,
    reason: null,
    reduceOnly: o.reduceOnly,
    // Waiting: the engine's trigger; fired (now an ordinary resting order): the history's.
    ...triggerFields(spec, o.trigger ? { triggerPriceTicks: o.trigger.priceTicks, triggerBy: o.trigger.by, closePosition: o.trigger.closePosition, triggeredAt: null } : history),
    createdAt: o.createdTs,
    updatedAt: history?.updatedAt ?? o.createdTs,
    // A liquidation order is an IOC and never rests; the history says so if one ever did.
    liquidation: history?.liquidation ?? false,
  };
}

type TriggerFacts = Pick<PerpOrderRecord, 'triggerPriceTicks' | 'triggerBy' | 'closePosition' | 'triggeredAt'>;

/** The trigger fields of an order: null (and false) for a LIMIT or MARKET order. */
export function triggerFields(spec: InstrumentSpec, t: TriggerFacts | undefined): Pick<Order, 'triggerPrice' | 'triggerBy' | 'triggeredAt' | 'closePosition'> {
  if (t === undefined || t.triggerPriceTicks === null) return { triggerPrice: null, triggerBy: null, triggeredAt: null, closePosition: false };
  return { triggerPrice: priceOf(spec, t.triggerPriceTicks), triggerBy: t.triggerBy, triggeredAt: t.triggeredAt, closePosition: t.closePosition };
}

/** An order as the history holds it. */
export function orderBody(spec: InstrumentSpec, o: PerpOrderRecord): ListedOrder {
  const open = (OPEN_ORDER_STATUSES as readonly string[]).includes(o.status);
  return {
    ...orderNames(o),
    // The history holds what the engine accepted, a time in force of the enum.
    timeInForce: o.timeInForce as TimeInForce,
    price: o.priceTicks === null ? null : priceOf(spec, o.priceTicks),
    size: sizeOf(spec, o.sizeLots),
    filledSize: sizeOf(spec, o.filledLots),
    remainingSize: sizeOf(spec, open ? o.sizeLots - o.filledLots : 0),
    avgPrice: averagePrice(spec, o.filledNotional, o.filledLots),
    fee: usd(o.fee),
    status: o.status,
    reason: o.reason,
    reduceOnly: o.reduceOnly,
    ...triggerFields(spec, o),
    createdAt: o.createdAt,
    updatedAt: o.updatedAt,
    liquidation: o.liquidation,
  };
}

/** A fill of the account; the liquidated account's side of its liquidation order's fill is marked. */
export function fillBody(spec: InstrumentSpec, t: PerpTradeRecord): Trade {
  return {
    tradeId: String(t.tradeId),
    orderId: String(t.orderId),
    symbol: t.symbol,
    side: t.side,
    role: t.role,
    price: priceOf(spec, t.priceTicks),
    size: sizeOf(spec, t.sizeLots),
    notional: usd(t.notional),
    fee: usd(t.fee),
    realisedPnl: usd(t.realisedPnl),
    ts: t.ts,
    liquidation: t.liquidation,
  };
}

/** The taker's side of a fill the engine just answered (a user's order: never a liquidation). */
export function takerFill(spec: InstrumentSpec, e: TradeEvent): Trade {
  return fillBody(spec, {
    tradeId: e.seq, role: 'TAKER', account: e.takerAccount, symbol: e.symbol, orderId: e.takerOrderId, side: e.takerSide,
    priceTicks: e.priceTicks, sizeLots: e.sizeLots, notional: e.notional, fee: e.takerFee, realisedPnl: e.takerRealisedPnl, ts: e.ts,
    liquidation: false,
  });
}

/** A trade of the public tape, as `GET market-trades` and the `trades` stream show it (the taker's side). */
export function tradeBody(spec: InstrumentSpec, t: PerpTradeRecord): MarketTrade {
  return { id: String(t.tradeId), symbol: t.symbol, price: priceOf(spec, t.priceTicks), size: sizeOf(spec, t.sizeLots), side: t.side, ts: t.ts, liquidation: t.liquidation };
}

/** A candle as `GET klines` and the `klines:<interval>` stream show it. */
export function klineBody(spec: InstrumentSpec, c: PerpCandleRecord): Kline {
  return {
    openTime: c.openTime,
    open: priceOf(spec, c.openTicks),
    high: priceOf(spec, c.highTicks),
    low: priceOf(spec, c.lowTicks),
    close: priceOf(spec, c.closeTicks),
    volume: sizeOf(spec, c.volumeLots),
    turnover: usd(c.turnover),
    trades: c.trades,
  };
}

/**
 * A position with its liquidation price: a cross position is backed by the collateral and the other
 * cross positions' uPnL − MM, an isolated one by its own margin (pricing/liquidation-price.ts).
 */
export function positionBody(spec: InstrumentSpec, p: PositionView, account: AccountView, markTicks: number): Position {
  let backing: bigint;
  if (p.marginMode === 'isolated') backing = p.isolatedMargin;
  else {
    backing = account.collateral;
    for (const q of account.positions) {
      if (q.symbol !== p.symbol && q.marginMode === 'cross' && q.sizeLots !== 0) backing += q.unrealisedPnl - q.maintenanceMargin;
    }
  }
  const liq = liquidationPriceTicks({
    sizeLots: p.sizeLots, entryNotional: p.entryNotional, unitMicros: spec.unitMicros, mmrPpm: BigInt(spec.maintenanceMarginRatioPpm), backing,
  });
  const abs = Math.abs(p.sizeLots);
  return {
    symbol: p.symbol,
    side: p.sizeLots > 0 ? 'LONG' : p.sizeLots < 0 ? 'SHORT' : 'FLAT',
    size: sizeOf(spec, abs),
    entryPrice: averagePrice(spec, p.entryNotional, abs),
    markPrice: markTicks > 0 ? priceOf(spec, markTicks) : null,
    notional: usd(BigInt(abs) * BigInt(markTicks) * spec.unitMicros),
    unrealisedPnl: usd(p.unrealisedPnl),
    realisedPnl: usd(p.realisedPnl),
    funding: usd(p.funding),
    margin: usd(p.marginMode === 'isolated' ? p.isolatedMargin : p.initialMargin),
    maintenanceMargin: usd(p.maintenanceMargin),
    leverage: p.leverage,
    marginMode: p.marginMode,
    liquidationPrice: liq === undefined ? null : priceOf(spec, liq > BigInt(spec.maxPriceTicks) ? BigInt(spec.maxPriceTicks) : liq),
  };
}

/**
 * `GET account` but for `pendingWithdrawals`, which the caller adds from the engine's reservations
 * (account-service.ts accountOf). An account that never deposited reads as empty.
 */
export function accountBody(address: string, a: AccountView | undefined, m: MarginSummary | undefined): Omit<AccountSummary, 'pendingWithdrawals'> {
  const zero = '0';
  if (a === undefined || m === undefined) {
    return {
      account: address, asset: 'USDC', balance: zero, equity: zero, unrealisedPnl: zero, freeCollateral: zero, withdrawable: zero,
      orderMargin: zero, positionMargin: zero, maintenanceMargin: zero, marginRatio: null, liquidatable: false, deposited: zero,
      withdrawn: zero, realisedPnl: zero, fees: zero, funding: zero,
    };
  }
  let isolated = 0n;
  let isolatedMm = 0n;
  for (const p of a.positions) {
    if (p.marginMode === 'isolated') {
      isolated += p.isolatedMargin;
      isolatedMm += p.maintenanceMargin;
    }
  }
  const unrealised = m.equity - m.collateral - isolated;
  const maintenance = m.crossMaintenanceMargin + isolatedMm;
  // Maintenance margin over equity, rounded up, as exchanges show it: 1 (100 %) is the liquidation
  // line; null when equity is not positive.
  const marginRatio = m.equity > 0n ? formatDecimal((maintenance * 1_000_000n + m.equity - 1n) / m.equity, 6) : null;
  return {
    account: address,
    asset: 'USDC',
    balance: usd(m.collateral),
    equity: usd(m.equity),
    unrealisedPnl: usd(unrealised),
    freeCollateral: usd(m.freeCollateral),
    withdrawable: usd(m.withdrawable < 0n ? 0n : m.withdrawable),
    orderMargin: usd(m.orderReserve),
    positionMargin: usd(m.crossInitialMargin + isolated),
    maintenanceMargin: usd(maintenance),
    marginRatio,
    liquidatable: m.liquidatable,
    deposited: usd(a.deposited),
    withdrawn: usd(a.withdrawn),
    realisedPnl: usd(a.realisedPnl),
    fees: usd(a.feesPaid),
    funding: usd(a.funding),
  };
}

/** A movement with the account's running balance after it (perp-history-store.ts transactionBalancesAfter). */
export function transactionBody(t: PerpTransactionRecord, balanceAfter: bigint): AccountTransaction {
  return { id: t.txId, type: t.type, symbol: t.symbol, amount: usd(t.amount), asset: 'USDC', ref: t.ref, ts: t.ts, account: t.account, balanceAfter: usd(balanceAfter) };
}

export function fundingRateBody(spec: InstrumentSpec, r: FundingRateRecord): FundingRate {
  return { symbol: r.symbol, fundingRate: rateOf(r.rateE9), fundingTime: r.fundingTime, markPrice: priceOf(spec, r.markPriceTicks) };
}
