/**
 * What the engine answers a command: accepted (with what it did) or rejected (with a code).
 * Part of the engine's interface (engine-types.ts re-exports it whole).
 */
import type { Side } from '../book/order-book.ts';
import type { RejectCode } from '../result-codes.ts';
import type { OrderStatus, TradeEvent, EngineEvent } from './event-types.ts';

export interface Rejected {
  ok: false;
  code: RejectCode;
  message: string;
  /** Always empty: a rejected command changes nothing. */
  events: [];
  /** Facts the API needs to word the refusal for the client (the engine speaks ticks; the API, prices). */
  detail?: RejectDetail;
}

/**
 * What a refusal carries beyond its code, for the API to render. `priceBand`: a limit price beyond
 * the band around the mark (PRICE_OUT_OF_RANGE), with the band's edges as they stood.
 */
export interface RejectDetail {
  priceBand?: { side: Side; priceTicks: number; lowTicks: number; highTicks: number; markTicks: number; bandPpm: number };
}

export interface Accepted {
  ok: true;
  code: 'OK';
  events: EngineEvent[];
}

/** The outcome of a placed order at the end of the placing command. */
export interface OrderOutcome {
  orderId: number;
  status: OrderStatus;
  sizeLots: number;
  filledLots: number;
  /** Lots resting after the command (0 unless status is NEW or PARTIALLY_FILLED). */
  remainingLots: number;
}

export interface PlaceOrderAccepted extends Accepted {
  order: OrderOutcome;
  /** The fills of this command (a subset of `events`). */
  fills: TradeEvent[];
  /** True when this answers a repeated clientOrderId: nothing happened now and `events`/`fills` are empty. */
  duplicate: boolean;
}

export interface AmendAccepted extends Accepted {
  order: OrderOutcome;
  /** Taker fills of a re-queued order whose new price crossed the book. */
  fills: TradeEvent[];
}

export interface CancelOutcome {
  orderId: number;
  code: 'OK' | 'ORDER_NOT_FOUND' | 'ORDER_NOT_OPEN' | 'INVALID';
}

export interface CancelOrdersAccepted extends Accepted {
  cancels: CancelOutcome[];
}

export interface CancelAllAccepted extends Accepted {
  canceledOrderIds: number[];
}

export interface WithdrawalAccepted extends Accepted {
  withdrawalId: string;
  status: 'PENDING' | 'PAID' | 'FAILED';
  /** True when the id was requested before with the same amount: nothing happened now. */
  duplicate: boolean;
}

export interface LiquidityAccepted extends Accepted {
  /** Shares minted or burned, micro-USD moved, and the lock-up end: decimal strings (results stay JSON-plain). */
  shares: string;
  amount: string;
  lockedUntil: number;
}

export interface SplitAccepted extends Accepted {
  /** True when the action id was applied to the instrument before: nothing happened now. */
  duplicate: boolean;
}

export type PlaceOrderResult = PlaceOrderAccepted | Rejected;
export type AmendOrderResult = AmendAccepted | Rejected;
export type CancelOrdersResult = CancelOrdersAccepted | Rejected;
export type CancelAllResult = CancelAllAccepted | Rejected;
export type CommandResult = Accepted | PlaceOrderAccepted | AmendAccepted | CancelOrdersAccepted | CancelAllAccepted | WithdrawalAccepted | LiquidityAccepted | SplitAccepted | Rejected;
