/**
 * The engine's commands: every command has a caller-chosen `id` (echoed on its events as `commandId`)
 * and `ts`, the time in ms the caller assigns (the engine never reads a clock).
 * Part of the engine's interface (engine-types.ts re-exports it whole).
 */
import type { MarginMode, OrderType, TimeInForce, TriggerBy } from '@tokex/contract';
import type { InstrumentConfig } from '../instruments.ts';
import type { Side } from '../book/order-book.ts';

interface CommandBase {
  id: string;
  ts: number;
}

export interface DepositCommand extends CommandBase {
  kind: 'deposit';
  account: string;
  /** Micro-USD, > 0. */
  amount: bigint;
}

export interface WithdrawCommand extends CommandBase {
  kind: 'withdraw';
  account: string;
  /** Micro-USD, > 0, at most the account's withdrawable amount. */
  amount: bigint;
}

export interface PlaceOrderCommand extends CommandBase {
  kind: 'placeOrder';
  account: string;
  symbol: string;
  side: Side;
  type: OrderType;
  /** LIMIT: the limit price (required). MARKET: optional worst price. */
  priceTicks?: number;
  sizeLots: number;
  /** LIMIT: default GTC. MARKET: IOC (default) or FOK. */
  timeInForce?: TimeInForce;
  reduceOnly?: boolean;
  /** Idempotency key per account: a repeat answers the first order's result. */
  clientOrderId?: string;
  /** The signed order's expiry (ms); an order arriving after it is refused with ORDER_EXPIRED. */
  expiresAtMs?: number;
  /** STOP_* and TAKE_PROFIT_*: the price that fires the order (docs/perp-engine.md "Trigger orders"). */
  triggerPriceTicks?: number;
  /** The price the trigger watches; default MARK. */
  triggerBy?: TriggerBy;
  /** A trigger that closes the whole position when it fires (reduce-only; `sizeLots` is ignored, send 0). */
  closePosition?: boolean;
}

/**
 * A new price and/or total size for an open order under the same id (docs/perp-engine.md "Amend"):
 * a smaller size at the same price keeps the order's place in the queue; anything else re-queues it
 * (and a new price that crosses the book trades as a taker first, as a new order would).
 */
export interface AmendOrderCommand extends CommandBase {
  kind: 'amendOrder';
  account: string;
  orderId: number;
  /** The new limit price; omitted: unchanged. */
  priceTicks?: number;
  /** The new total size (filled lots included), above what has filled; omitted: unchanged. */
  sizeLots?: number;
  /** The signed amendment's expiry (ms). */
  expiresAtMs?: number;
}

export interface CancelOrderCommand extends CommandBase {
  kind: 'cancelOrder';
  account: string;
  orderId: number;
}

export interface CancelOrdersCommand extends CommandBase {
  kind: 'cancelOrders';
  account: string;
  /** At most MAX_BATCH_CANCEL ids. */
  orderIds: number[];
}

export interface CancelAllCommand extends CommandBase {
  kind: 'cancelAll';
  account: string;
  symbol?: string;
}

export interface SetLeverageCommand extends CommandBase {
  kind: 'setLeverage';
  account: string;
  symbol: string;
  /** Integer 1..maxLeverage. */
  leverage: number;
  /** Omitted: unchanged. A change needs a flat position and no open orders on the symbol. */
  marginMode?: MarginMode;
}

export interface AdjustMarginCommand extends CommandBase {
  kind: 'adjustMargin';
  account: string;
  symbol: string;
  /** Micro-USD moved into (positive) or out of (negative) the isolated position's margin. */
  amount: bigint;
}

export interface SetMarkPriceCommand extends CommandBase {
  kind: 'setMarkPrice';
  symbol: string;
  markPriceTicks: number;
  indexPriceTicks: number;
  /** When the index was observed (ms); default `ts`. Liquidation pauses on an index older than indexStaleMs. */
  indexTs?: number;
  /**
   * Whether the underlying's market is open (default true). `false` while a stock perpetual trades
   * on a closed market's last index: its price band widens (risk/price-band.ts, docs/perp-risk.md).
   * The caller reads the market calendar; the engine keeps no clock.
   */
  marketOpen?: boolean;
}

/**
 * A stock split applied to the stock perpetual on it (docs/perp-risk.md "Stock splits"): `ratioTo`
 * new shares for every `ratioFrom` old ones. Positions, open orders, trigger orders, mark, index and
 * last trade are rescaled in this one command; a repeat of the action id on the instrument is a
 * no-op (answered `duplicate: true`).
 */
export interface ApplySplitCommand extends CommandBase {
  kind: 'applySplit';
  symbol: string;
  /** The corporate action's id (`AAPL-2026-11-26`): the idempotency key, kept in the engine's state. */
  actionId: string;
  /** New shares, a positive integer ≤ 1 000 000 (`10` of 10:1). */
  ratioTo: number;
  /** Old shares, a positive integer ≤ 1 000 000, not equal to ratioTo. */
  ratioFrom: number;
}

/**
 * The rules the engine applies from this command on (ENGINE_RULES): journalled, so that a journal
 * replays under the rules its commands were applied under, and a rule change takes effect at a
 * known row. Rules only rise, one release's at a time or more; the sequencer journals it at start.
 */
export interface SetRulesCommand extends CommandBase {
  kind: 'setRules';
  rules: number;
}

/**
 * The engine's rules: what a replay must apply to reproduce the journal. A journal starts at 1 (a
 * genesis engine); its `setRules` rows raise them. What each version changed:
 * - 1: the rules before versions existed.
 * - 2: an account with open bad debt is checked at every mark update of its instruments
 *   (risk/liquidation-index.ts `armAccount`), so that its debt resolves at the same command on an
 *   engine restored from a snapshot as on the one that ran.
 * - 3: open bad debt is settled again whenever money arrives to pay it: after any command that
 *   changes the debtor's account (a deposit to it), and whenever the insurance fund receives money
 *   (a liquidation fee, a deposit to it). Before, a flat account's debt the fund could
 *   not pay when it arose stayed open for good, and withdrawals with it (risk/liquidation.ts
 *   `rearmDirty`).
 */
export const ENGINE_RULES = 3;

/** Lists an instrument (journalled, so a replay reproduces the settings the venue traded under). */
export interface AddInstrumentCommand extends CommandBase {
  kind: 'addInstrument';
  config: InstrumentConfig;
}

/** Changes a listed instrument's settings; tick and lot size cannot change. */
export interface UpdateInstrumentCommand extends CommandBase {
  kind: 'updateInstrument';
  config: InstrumentConfig;
}

/** Reserves `amount` of the account's withdrawable collateral for an on-chain payment. */
export interface RequestWithdrawalCommand extends CommandBase {
  kind: 'requestWithdrawal';
  account: string;
  /** Unique forever: the vault's withdrawal id is derived from it. */
  withdrawalId: string;
  amount: bigint;
  /**
   * The account's forced withdrawal filed on chain (IMarginVault.requestForcedWithdrawal): reserved
   * up to the account's equity rather than its withdrawable amount, so that a venue can always
   * answer one it owes (the account's positions, left with less margin, are then liquidated as any
   * other's would be). Withdrawals still pause while bad debt is open.
   */
  forced?: boolean;
}

/** Settles a pending withdrawal: paid on chain (the reserve leaves), or failed (released once). */
export interface SettleWithdrawalCommand extends CommandBase {
  kind: 'settleWithdrawal';
  withdrawalId: string;
  outcome: 'PAID' | 'FAILED';
}

export interface AddLiquidityCommand extends CommandBase {
  kind: 'addLiquidity';
  account: string;
  /** Micro-USD of free collateral moved into the pool. */
  amount: bigint;
  /** Lock-up of this addition (ms): removals wait until ts + lockupMs. */
  lockupMs: number;
}

export interface RemoveLiquidityCommand extends CommandBase {
  kind: 'removeLiquidity';
  account: string;
  shares: bigint;
}

/** Dead man's switch: cancel every open order of the account at ts + timeoutMs unless re-armed; 0 disarms. */
export interface CancelAllAfterCommand extends CommandBase {
  kind: 'cancelAllAfter';
  account: string;
  timeoutMs: number;
}

export interface ApplyFundingCommand extends CommandBase {
  kind: 'applyFunding';
  symbol: string;
  /** Signed funding rate in units of 1e-9 per interval: positive, longs pay shorts. |rate| ≤ 1e8 (10 %). */
  rateE9: bigint;
}

export type EngineCommand =
  | DepositCommand
  | WithdrawCommand
  | PlaceOrderCommand
  | AmendOrderCommand
  | CancelOrderCommand
  | CancelOrdersCommand
  | CancelAllCommand
  | SetLeverageCommand
  | AdjustMarginCommand
  | SetMarkPriceCommand
  | ApplyFundingCommand
  | AddInstrumentCommand
  | UpdateInstrumentCommand
  | RequestWithdrawalCommand
  | SettleWithdrawalCommand
  | AddLiquidityCommand
  | RemoveLiquidityCommand
  | CancelAllAfterCommand
  | ApplySplitCommand
  | SetRulesCommand;

export type CommandKind = EngineCommand['kind'];
