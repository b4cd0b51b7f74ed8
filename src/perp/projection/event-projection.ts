/**
 * The fold from engine events to history rows, pure: events in, the rows they create or change
 * out. The projector (perp-projector.ts) loads the stored orders and candles a batch touches, runs
 * this, and writes the result with its cursor in one transaction.
 *
 * - orders: `orderAccepted` creates the row; each `trade` adds to the maker's and the taker's
 *   filled size, notional and fee; `orderDone` sets the final status and reason.
 * - trades: one row per side of each fill (the trade's event seq is its id).
 * - transactions: deposits and withdrawals (`balanceChanged`), each side's fee and realised PnL
 *   (`trade`), funding payments (`fundingPayment`). The fee account's income is not an account
 *   transaction (it is the venue's), so it is left out.
 * - funding rates: `fundingApplied`.
 * - candles: trades into `trade` candles, marks and indices into `mark` and `index` candles, in
 *   every interval.
 */
import type { EngineEvent } from '../engine/engine-types.ts';
import { INTERVAL_MS, INTERVALS } from '../../marketdata/market-types.ts';
import type { CandleInterval } from '../../storage/candle-store.ts';
import type { FundingRateRecord, PerpOrderRecord, PerpTradeRecord, PerpTransactionRecord } from '../store/perp-history-store.ts';
import { perpCandleKey, type PerpCandleKind, type PerpCandleRecord } from '../store/perp-candle-store.ts';

/** The prefix of the engine command ids that credit a MarginVault deposit: `dep:<txHash>-<logIndex>`. */
export const DEPOSIT_COMMAND_PREFIX = 'dep:';

export interface ProjectedBatch {
  /** Every order the batch created or changed, in its state after the batch. */
  orders: Map<number, PerpOrderRecord>;
  trades: PerpTradeRecord[];
  transactions: PerpTransactionRecord[];
  fundingRates: FundingRateRecord[];
  /** Candle aggregates of this batch alone, by perpCandleKey (merge with stored ones: mergeCandle). */
  candles: Map<string, PerpCandleRecord>;
  /** The highest event seq folded. */
  lastSeq: number;
}

/** Ids of the orders the events change without creating them (load these before folding). */
export function referencedOrderIds(events: readonly EngineEvent[]): number[] {
  const created = new Set<number>();
  const wanted = new Set<number>();
  for (const e of events) {
    if (e.type === 'orderAccepted') created.add(e.orderId);
    else if (e.type === 'trade') {
      if (!created.has(e.makerOrderId)) wanted.add(e.makerOrderId);
      if (!created.has(e.takerOrderId)) wanted.add(e.takerOrderId);
    } else if (e.type === 'orderDone' && !created.has(e.orderId)) wanted.add(e.orderId);
  }
  return [...wanted];
}

function candlePoint(out: Map<string, PerpCandleRecord>, symbol: string, kind: PerpCandleKind, ts: number, ticks: number, lots: number, turnover: bigint, trades: number): void {
  for (const interval of INTERVALS as readonly CandleInterval[]) {
    const step = INTERVAL_MS[interval];
    const openTime = Math.floor(ts / step) * step;
    const key = perpCandleKey({ symbol, kind, interval, openTime });
    const c = out.get(key);
    if (c === undefined) {
      out.set(key, { symbol, kind, interval, openTime, openTicks: ticks, highTicks: ticks, lowTicks: ticks, closeTicks: ticks, volumeLots: lots, turnover, trades });
    } else {
      if (ticks > c.highTicks) c.highTicks = ticks;
      if (ticks < c.lowTicks) c.lowTicks = ticks;
      c.closeTicks = ticks;
      c.volumeLots += lots;
      c.turnover += turnover;
      c.trades += trades;
    }
  }
}

/** A stored candle followed by the same bar's aggregate of a later batch. */
export function mergeCandle(stored: PerpCandleRecord | undefined, later: PerpCandleRecord): PerpCandleRecord {
  if (stored === undefined) return later;
  return {
    ...stored,
    highTicks: Math.max(stored.highTicks, later.highTicks),
    lowTicks: Math.min(stored.lowTicks, later.lowTicks),
    closeTicks: later.closeTicks,
    volumeLots: stored.volumeLots + later.volumeLots,
    turnover: stored.turnover + later.turnover,
    trades: stored.trades + later.trades,
  };
}

/**
 * Folds `events` (in seq order) onto `known`, the stored rows of the orders they reference. An
 * order the events change but that is neither in `known` nor created in the batch is skipped: it
 * was placed before projection began (a database that only kept part of the history).
 */
export function projectEvents(events: readonly EngineEvent[], known: ReadonlyMap<number, PerpOrderRecord>, feeAccount: string): ProjectedBatch {
  const orders = new Map<number, PerpOrderRecord>();
  const batch: ProjectedBatch = { orders, trades: [], transactions: [], fundingRates: [], candles: new Map(), lastSeq: 0 };
  const order = (id: number): PerpOrderRecord | undefined => {
    let o = orders.get(id);
    if (o === undefined) {
      const stored = known.get(id);
      if (stored !== undefined) orders.set(id, (o = { ...stored }));
    }
    return o;
  };
  const tx = (t: PerpTransactionRecord) => {
    if (t.account !== feeAccount) batch.transactions.push(t);
  };

  for (const e of events) {
    batch.lastSeq = e.seq;
    switch (e.type) {
      case 'orderAccepted':
        orders.set(e.orderId, {
          orderId: e.orderId,
          account: e.account,
          symbol: e.symbol,
          side: e.side,
          type: e.orderType,
          timeInForce: e.timeInForce,
          priceTicks: e.priceTicks,
          sizeLots: e.sizeLots,
          requestedSizeLots: e.requestedSizeLots,
          filledLots: 0,
          filledNotional: 0n,
          fee: 0n,
          status: 'NEW',
          reason: null,
          reduceOnly: e.reduceOnly,
          clientOrderId: e.clientOrderId,
          createdAt: e.ts,
          updatedAt: e.ts,
        });
        break;
      case 'trade': {
        const makerSide: 'BUY' | 'SELL' = e.takerSide === 'BUY' ? 'SELL' : 'BUY';
        const sides = [
          { role: 'MAKER' as const, account: e.makerAccount, orderId: e.makerOrderId, side: makerSide, fee: e.makerFee, pnl: e.makerRealisedPnl, tag: 'M' },
          { role: 'TAKER' as const, account: e.takerAccount, orderId: e.takerOrderId, side: e.takerSide, fee: e.takerFee, pnl: e.takerRealisedPnl, tag: 'T' },
        ];
        for (const s of sides) {
          batch.trades.push({
            tradeId: e.seq, role: s.role, account: s.account, symbol: e.symbol, orderId: s.orderId, side: s.side,
            priceTicks: e.priceTicks, sizeLots: e.sizeLots, notional: e.notional, fee: s.fee, realisedPnl: s.pnl, ts: e.ts,
          });
          const o = order(s.orderId);
          if (o !== undefined) {
            o.filledLots += e.sizeLots;
            o.filledNotional += e.notional;
            o.fee += s.fee;
            if (o.status === 'NEW') o.status = 'PARTIALLY_FILLED';
            o.updatedAt = e.ts;
          }
          const ref = String(s.orderId);
          if (s.fee !== 0n) tx({ txId: `${e.seq}:FEE:${s.tag}`, account: s.account, type: 'FEE', symbol: e.symbol, amount: -s.fee, ref, ts: e.ts });
          if (s.pnl !== 0n) tx({ txId: `${e.seq}:REALISED_PNL:${s.tag}`, account: s.account, type: 'REALISED_PNL', symbol: e.symbol, amount: s.pnl, ref, ts: e.ts });
        }
        candlePoint(batch.candles, e.symbol, 'trade', e.ts, e.priceTicks, e.sizeLots, e.notional, 1);
        break;
      }
      case 'orderDone': {
        const o = order(e.orderId);
        if (o !== undefined) {
          o.status = e.status;
          o.reason = e.reason;
          o.updatedAt = e.ts;
        }
        break;
      }
      case 'balanceChanged':
        if (e.reason === 'deposit') {
          const ref = e.commandId.startsWith(DEPOSIT_COMMAND_PREFIX) ? e.commandId.slice(DEPOSIT_COMMAND_PREFIX.length).split('-')[0] : e.commandId;
          tx({ txId: `${e.seq}:DEPOSIT`, account: e.account, type: 'DEPOSIT', symbol: null, amount: e.delta, ref, ts: e.ts });
        } else if (e.reason === 'withdraw') {
          tx({ txId: `${e.seq}:WITHDRAWAL`, account: e.account, type: 'WITHDRAWAL', symbol: null, amount: e.delta, ref: e.commandId, ts: e.ts });
        }
        break;
      case 'fundingPayment':
        if (e.amount !== 0n) tx({ txId: `${e.seq}:FUNDING`, account: e.account, type: 'FUNDING', symbol: e.symbol, amount: e.amount, ref: String(e.ts), ts: e.ts });
        break;
      case 'fundingApplied':
        batch.fundingRates.push({ symbol: e.symbol, fundingTime: e.ts, rateE9: e.rateE9, markPriceTicks: e.markPriceTicks });
        break;
      case 'markPrice':
        candlePoint(batch.candles, e.symbol, 'mark', e.ts, e.markPriceTicks, 0, 0n, 0);
        if (e.indexPriceTicks > 0) candlePoint(batch.candles, e.symbol, 'index', e.ts, e.indexPriceTicks, 0, 0n, 0);
        break;
      default:
        // orderResting, positionChanged, leverageChanged: live state, read from the engine.
        break;
    }
  }
  return batch;
}
