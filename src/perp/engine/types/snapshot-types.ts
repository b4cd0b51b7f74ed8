/**
 * The engine's snapshot, JSON-safe (bigints as decimal strings), and `toJsonSafe`, which converts
 * events and results the same way for a journal.
 * Part of the engine's interface (engine-types.ts re-exports it whole).
 */
import type { MarginMode } from '@tokex/contract';
import type { InstrumentConfig } from '../instruments.ts';
import type { OrderOutcome } from './result-types.ts';
import type { HeldOrderFields } from './view-types.ts';

export interface PositionSnapshot {
  symbol: string;
  sizeLots: number;
  entryNotional: string;
  isolatedMargin: string;
  marginMode: MarginMode;
  leverage: number;
  realisedPnl: string;
  funding: string;
}

export interface AccountSnapshot {
  account: string;
  collateral: string;
  reserved: string;
  deposited: string;
  withdrawn: string;
  realisedPnl: string;
  feesPaid: string;
  feesReceived: string;
  funding: string;
  pendingWithdrawals: string;
  liquidationFees: string;
  badDebt: string;
  liquidity: string;
  lastLiquidationTs: number;
  cancelAfterTs: number;
  positions: PositionSnapshot[];
}

export interface OrderSnapshot extends HeldOrderFields {
  reservePerLot: string;
}

export interface InstrumentStateSnapshot {
  config: InstrumentConfig;
  markPriceTicks: number;
  indexPriceTicks: number;
  markTs: number;
  indexTs: number;
  lastTradePriceTicks: number;
  lastFundingTs: number;
  lastFundingRateE9: string;
  /** Present (true) only while the underlying's market is closed: a snapshot without it is one from before the rule. */
  marketClosed?: true;
  /** Present only once a split was applied: the action ids, sorted. */
  splits?: string[];
}

export interface ClientOrderSnapshot extends OrderOutcome {
  account: string;
  clientOrderId: string;
}

export interface WithdrawalSnapshot {
  withdrawalId: string;
  account: string;
  amount: string;
  status: 'PENDING' | 'PAID' | 'FAILED';
  requestedTs: number;
  /** Present (true) only on a forced withdrawal. */
  forced?: true;
}

export interface LpSnapshot {
  account: string;
  shares: string;
  lockedUntil: number;
  netDeposited: string;
}

export interface EngineSnapshot {
  version: 2;
  nextSeq: number;
  nextOrderId: number;
  feeAccount: string;
  defaultLeverage: number;
  instruments: InstrumentStateSnapshot[];
  /** Sorted by address. */
  accounts: AccountSnapshot[];
  /** Resting orders sorted by id (= time priority within a price level). */
  orders: OrderSnapshot[];
  /** Sorted by account, then clientOrderId. */
  clientOrders: ClientOrderSnapshot[];
  /** Sorted by id. */
  withdrawals: WithdrawalSnapshot[];
  totalShares: string;
  /** Sorted by account. */
  lps: LpSnapshot[];
  /** Sorted. */
  badDebtAccounts: string[];
  /** ENGINE_RULES the state is under; absent for 1, so a snapshot from before versions hashes as it did. */
  rules?: number;
}

/** Deep copy with every bigint as its decimal string (for journals and JSON answers). */
export function toJsonSafe<T>(value: T): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (Array.isArray(value)) return value.map((v) => toJsonSafe(v));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = toJsonSafe(v);
    return out;
  }
  return value;
}
