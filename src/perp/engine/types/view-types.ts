/**
 * The engine's read models for the API: orders, positions, accounts and margin as the API shows them.
 * Part of the engine's interface (engine-types.ts re-exports it whole).
 */
import type { MarginMode, OrderType, TimeInForce, TriggerBy } from '@tokex/contract';
import type { Side } from '../book/order-book.ts';

/** An order the engine holds, as its view and its snapshot (snapshot-types.ts) both carry it. */
export interface HeldOrderFields {
  orderId: number;
  account: string;
  symbol: string;
  side: Side;
  type: OrderType;
  timeInForce: TimeInForce;
  priceTicks: number;
  sizeLots: number;
  filledLots: number;
  remainingLots: number;
  reduceOnly: boolean;
  clientOrderId: string | null;
  createdTs: number;
  /**
   * Trigger orders only (UNTRIGGERED: waiting in the trigger index, not on the book; the order then
   * rests or trades as its LIMIT or MARKET self). A snapshot holds it only while UNTRIGGERED.
   */
  trigger?: { priceTicks: number; by: TriggerBy; closePosition: boolean };
}

export interface OrderView extends HeldOrderFields {
  status: 'UNTRIGGERED' | 'NEW' | 'PARTIALLY_FILLED';
  reserved: bigint;
}

export interface PositionView {
  symbol: string;
  sizeLots: number;
  entryNotional: bigint;
  isolatedMargin: bigint;
  marginMode: MarginMode;
  leverage: number;
  realisedPnl: bigint;
  /** Net funding (positive received). */
  funding: bigint;
  /** At the valuation price (mark, or last trade before any mark); 0 when flat. */
  unrealisedPnl: bigint;
  initialMargin: bigint;
  maintenanceMargin: bigint;
}

export interface AccountView {
  account: string;
  collateral: bigint;
  /** Margin reserved for open orders. */
  reserved: bigint;
  deposited: bigint;
  withdrawn: bigint;
  realisedPnl: bigint;
  feesPaid: bigint;
  feesReceived: bigint;
  funding: bigint;
  pendingWithdrawals: bigint;
  liquidationFees: bigint;
  badDebt: bigint;
  liquidity: bigint;
  positions: PositionView[];
}

export interface MarginSummary {
  collateral: bigint;
  /** collateral + unrealised PnL of cross positions + isolated margin and PnL of isolated positions. */
  equity: bigint;
  /** Unrealised PnL of cross positions. */
  crossUnrealisedPnl: bigint;
  crossInitialMargin: bigint;
  crossMaintenanceMargin: bigint;
  orderReserve: bigint;
  /** What new orders and margin moves may use (docs/perp-engine.md, "Free collateral"). */
  freeCollateral: bigint;
  /** What a withdrawal may take: min(balance, balance + cross uPnL) − IM − order reserves, ≥ 0 (Binance's rule). */
  withdrawable: bigint;
  /** Reserved for withdrawals not yet paid (already out of `collateral`). */
  pendingWithdrawals: bigint;
  /** Cross equity below cross maintenance margin, or an isolated position below its own. */
  liquidatable: boolean;
}
