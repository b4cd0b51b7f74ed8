/**
 * The fold from engine events to history rows, pure: events in, the rows they create or change
 * out. The projector (perp-projector.ts) loads the stored orders and candles a batch touches, runs
 * this, and writes the result with its cursor in one transaction.
 *
 * - orders: `orderAccepted` creates the row (marked when it is the engine's liquidation order); each
 *   `trade` adds to the maker's and the taker's filled size, notional and fee; `orderDone` sets the
 *   final status and reason (LIQUIDATION and CANCEL_AFTER included). A trigger order is created
 *   UNTRIGGERED; `orderTriggered` makes it NEW with the size and price it entered with and stamps
 *   triggeredAt; `orderAmended` sets the new price and size.
 * - trades: one row per side of each fill (the trade's event seq is its id); the taker side of a
 *   liquidation order's fill is marked. A backstop takeover or an ADL close moves a position at a
 *   price without an order: it is not a trade (nor on the tape or in candles), it shows in
 *   transactions and positions.
 * - transactions: each side's fee and realised PnL (`trade`), funding payments (`fundingPayment`),
 *   withdrawals reserved and released (`withdrawal`), liquidation fees (`liquidation`, naming the
 *   order), and the other balance changes by reason (BALANCE_REASONS). The venue's own fee account
 *   and insurance fund are not accounts of anyone, so their movements are left out.
 * - funding rates: `fundingApplied`.
 * - liquidity moves and insurance-fund moves: `liquidity` and `insurance`, one row per event.
 * - candles: trades into `trade` candles, marks and indices into `mark` and `index` candles, in
 *   every interval.
 */
import type { BalanceReason, EngineEvent } from '../engine/engine-types.ts';
import { INSURANCE_ACCOUNT, POOL_ACCOUNT } from '../engine/state/engine-state.ts';
import { INTERVAL_MS, INTERVALS } from '../../marketdata/market-types.ts';
import type { CandleInterval } from '../../storage/candle-store.ts';
import type { FundingRateRecord, PerpOrderRecord, PerpTradeRecord, PerpTransactionRecord, PerpTransactionType } from '../store/perp-history-store.ts';
import { perpCandleKey, type PerpCandleKind, type PerpCandleRecord } from '../store/perp-candle-store.ts';
import type { InsuranceMoveRecord, LiquidityMoveRecord } from '../store/liquidity-store.ts';

/** The prefix of the engine command ids that credit a MarginVault deposit: `dep:<txHash>-<logIndex>`. */
export { DEPOSIT_COMMAND_PREFIX } from '../store/collateral-event-store.ts';
import { DEPOSIT_COMMAND_PREFIX } from '../store/collateral-event-store.ts';

/**
 * What each balance reason of the engine becomes in `account/transactions` (docs/perp-api.md):
 * - a type: a transaction of the `balanceChanged` itself, amount its delta, ref its command id
 *   (`LIQUIDITY`: LIQUIDITY_ADD when collateral leaves for the pool, LIQUIDITY_REMOVE when it comes
 *   back; the pool's own side mirrors the holder's and is left out);
 * - null: recorded from the event that says more, or not money in or out of the account.
 * Keyed by every BalanceReason, so a reason the engine adds fails to compile until it is mapped; a
 * reason this build does not know at all (a newer journal) becomes OTHER and is reported.
 */
export const BALANCE_REASONS: Readonly<Record<BalanceReason, PerpTransactionType | 'LIQUIDITY' | null>> = {
  deposit: 'DEPOSIT',
  withdraw: 'WITHDRAWAL',
  // FEE and REALISED_PNL of the `trade` event, per order.
  trade: null,
  // The fee account's income.
  fee: null,
  // FUNDING of the `fundingPayment` event, with its symbol.
  funding: null,
  // Isolated margin moved between the balance and a position: still the account's.
  margin: null,
  // WITHDRAWAL and WITHDRAWAL_RELEASE of the `withdrawal` event, which names the withdrawal.
  withdrawalReserve: null,
  // LIQUIDATION_FEE of the `liquidation` event, which names the order and the symbol.
  liquidationFee: null,
  liquidity: 'LIQUIDITY',
  badDebt: 'BAD_DEBT',
  liquidation: 'LIQUIDATION',
  adl: 'ADL',
  // A split's remainder closed against the pool at the mark: realised PnL of the account's position.
  split: 'REALISED_PNL',
};

export interface ProjectedBatch {
  /** Every order the batch created or changed, in its state after the batch. */
  orders: Map<number, PerpOrderRecord>;
  trades: PerpTradeRecord[];
  transactions: PerpTransactionRecord[];
  fundingRates: FundingRateRecord[];
  /** Additions to and removals from the liquidity pool (`liquidity` events). */
  liquidityMoves: LiquidityMoveRecord[];
  /** Movements of the insurance fund (`insurance` events). */
  insuranceMoves: InsuranceMoveRecord[];
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
    } else if ((e.type === 'orderDone' || e.type === 'orderTriggered' || e.type === 'orderAmended') && !created.has(e.orderId)) wanted.add(e.orderId);
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
export function projectEvents(
  events: readonly EngineEvent[],
  known: ReadonlyMap<number, PerpOrderRecord>,
  feeAccount: string,
  /** Called with each balance reason BALANCE_REASONS lacks (its movement is recorded as OTHER). */
  onUnknownReason?: (reason: string) => void,
): ProjectedBatch {
  const orders = new Map<number, PerpOrderRecord>();
  const batch: ProjectedBatch = { orders, trades: [], transactions: [], fundingRates: [], liquidityMoves: [], insuranceMoves: [], candles: new Map(), lastSeq: 0 };
  const order = (id: number): PerpOrderRecord | undefined => {
    let o = orders.get(id);
    if (o === undefined) {
      const stored = known.get(id);
      if (stored !== undefined) orders.set(id, (o = { ...stored }));
    }
    return o;
  };
  const tx = (t: PerpTransactionRecord) => {
    if (t.account !== feeAccount && t.account !== INSURANCE_ACCOUNT) batch.transactions.push(t);
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
          status: e.triggerPriceTicks !== undefined ? 'UNTRIGGERED' : 'NEW',
          reason: null,
          reduceOnly: e.reduceOnly,
          clientOrderId: e.clientOrderId,
          createdAt: e.ts,
          updatedAt: e.ts,
          liquidation: e.liquidation === true,
          triggerPriceTicks: e.triggerPriceTicks ?? null,
          triggerBy: e.triggerBy ?? null,
          closePosition: e.closePosition === true,
          triggeredAt: null,
        });
        break;
      case 'orderTriggered': {
        const o = order(e.orderId);
        if (o !== undefined) {
          o.status = 'NEW';
          o.triggeredAt = e.ts;
          o.sizeLots = e.sizeLots;
          o.priceTicks = e.priceTicks;
          o.updatedAt = e.ts;
        }
        break;
      }
      case 'orderAmended': {
        const o = order(e.orderId);
        if (o !== undefined) {
          o.priceTicks = e.priceTicks;
          o.sizeLots = e.sizeLots;
          // A split rescales a waiting trigger order's trigger too.
          if (e.triggerPriceTicks !== undefined) o.triggerPriceTicks = e.triggerPriceTicks;
          o.updatedAt = e.ts;
        }
        break;
      }
      case 'trade': {
        const makerSide: 'BUY' | 'SELL' = e.takerSide === 'BUY' ? 'SELL' : 'BUY';
        const sides = [
          { role: 'MAKER' as const, account: e.makerAccount, orderId: e.makerOrderId, side: makerSide, fee: e.makerFee, pnl: e.makerRealisedPnl, tag: 'M' },
          { role: 'TAKER' as const, account: e.takerAccount, orderId: e.takerOrderId, side: e.takerSide, fee: e.takerFee, pnl: e.takerRealisedPnl, tag: 'T' },
        ];
        for (const s of sides) {
          const o = order(s.orderId);
          batch.trades.push({
            tradeId: e.seq, role: s.role, account: s.account, symbol: e.symbol, orderId: s.orderId, side: s.side,
            priceTicks: e.priceTicks, sizeLots: e.sizeLots, notional: e.notional, fee: s.fee, realisedPnl: s.pnl, ts: e.ts,
            // A liquidation order never rests, so it is always the taker.
            liquidation: o?.liquidation ?? false,
          });
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
      case 'balanceChanged': {
        const reasons: Readonly<Record<string, PerpTransactionType | 'LIQUIDITY' | null>> = BALANCE_REASONS;
        const listed = Object.hasOwn(reasons, e.reason);
        if (!listed) onUnknownReason?.(e.reason);
        const mapped = listed ? reasons[e.reason] : 'OTHER';
        if (mapped === null || e.delta === 0n) break;
        let type: PerpTransactionType;
        let ref = e.commandId;
        if (mapped === 'LIQUIDITY') {
          if (e.account === POOL_ACCOUNT) break;
          type = e.delta < 0n ? 'LIQUIDITY_ADD' : 'LIQUIDITY_REMOVE';
        } else {
          type = mapped;
          if (type === 'DEPOSIT' && ref.startsWith(DEPOSIT_COMMAND_PREFIX)) ref = ref.slice(DEPOSIT_COMMAND_PREFIX.length).split('-')[0];
        }
        tx({ txId: `${e.seq}:${type}`, account: e.account, type, symbol: null, amount: e.delta, ref, ts: e.ts });
        break;
      }
      case 'withdrawal':
        // The reservation takes the amount out of the balance at once; a failed payment gives it
        // back; a paid one moves nothing more.
        if (e.status === 'PENDING') {
          tx({ txId: `${e.seq}:WITHDRAWAL`, account: e.account, type: 'WITHDRAWAL', symbol: null, amount: -e.amount, ref: e.withdrawalId, ts: e.ts });
        } else if (e.status === 'FAILED') {
          tx({ txId: `${e.seq}:WITHDRAWAL_RELEASE`, account: e.account, type: 'WITHDRAWAL_RELEASE', symbol: null, amount: e.amount, ref: e.withdrawalId, ts: e.ts });
        }
        break;
      case 'liquidation':
        if (e.fee !== 0n) {
          const ref = e.orderId === null ? e.commandId : String(e.orderId);
          tx({ txId: `${e.seq}:LIQUIDATION_FEE`, account: e.account, type: 'LIQUIDATION_FEE', symbol: e.symbol, amount: -e.fee, ref, ts: e.ts });
        }
        break;
      case 'fundingPayment':
        if (e.amount !== 0n) tx({ txId: `${e.seq}:FUNDING`, account: e.account, type: 'FUNDING', symbol: e.symbol, amount: e.amount, ref: String(e.ts), ts: e.ts });
        break;
      case 'fundingApplied':
        batch.fundingRates.push({ symbol: e.symbol, fundingTime: e.ts, rateE9: e.rateE9, markPriceTicks: e.markPriceTicks });
        break;
      case 'liquidity':
        batch.liquidityMoves.push({
          seq: e.seq, account: e.account, action: e.action, amount: e.amount, shares: e.shares, holderShares: e.holderShares,
          totalShares: e.totalShares, poolEquity: e.poolEquity, lockedUntil: e.lockedUntil, ts: e.ts,
        });
        break;
      case 'insurance':
        batch.insuranceMoves.push({ seq: e.seq, reason: e.reason, account: e.account, delta: e.delta, balance: e.balance, ts: e.ts });
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
