/**
 * The liquidity pool and the insurance fund (docs/perp-api.md "Liquidity pool", "Insurance fund"):
 * additions and removals of pool shares, the holder's shares and their value, and the fund's
 * balance with its movements. Shares are decimal strings with 6 decimals (1 share = 1 USD into an
 * empty pool).
 */
import { ListOf } from '../common/paging.ts';
import { DecimalIn, DecimalOut, Millis, Nullable, StringEnum, Type, type Static } from '../common/schema-kit.ts';
import { INSURANCE_REASONS, LIQUIDITY_ACTIONS } from './perp-enums.ts';

/** Pool shares: a decimal string with up to 6 decimals (1 share = 1 USD into an empty pool). */
export const SharesOut = (options: { description?: string } = {}) =>
  Type.String({ description: 'pool shares, exact decimal string (6 decimals)', ...options });

export const LiquidityAddBodySchema = Type.Object(
  { amount: DecimalIn({ description: 'USD, at most 6 decimals, at most the withdrawable collateral' }) },
  { additionalProperties: false },
);
export type LiquidityAddBody = Static<typeof LiquidityAddBodySchema>;

export const LiquidityRemoveBodySchema = Type.Object(
  { shares: DecimalIn({ description: 'pool shares, at most 6 decimals, at most those the account holds' }) },
  { additionalProperties: false },
);
export type LiquidityRemoveBody = Static<typeof LiquidityRemoveBodySchema>;

export const LiquidityMoveSchema = Type.Object({
  action: StringEnum(LIQUIDITY_ACTIONS),
  amount: DecimalOut({ description: 'USD moved into (ADD) or paid out of (REMOVE) the pool' }),
  shares: SharesOut({ description: 'shares minted (ADD) or burned (REMOVE)' }),
  lockedUntil: Millis({ description: "until when the holder's shares are locked" }),
  ts: Millis({ description: "when the move was applied (the first request's time on a retry with the same Idempotency-Key)" }),
});
export type LiquidityMove = Static<typeof LiquidityMoveSchema>;

export const LiquidityPositionSchema = Type.Object({
  shares: SharesOut(),
  value: DecimalOut({ description: 'shares × pool equity ÷ total shares, rounded down (USD)' }),
  netDeposited: DecimalOut({ description: 'USD added minus USD removed' }),
  pnl: DecimalOut({ description: 'value − netDeposited (USD)' }),
  lockedUntil: Nullable(Type.Integer(), { description: 'until when the shares are locked (ms); null without shares' }),
  poolEquity: DecimalOut({ description: "the pool's equity: collateral + isolated margin + unrealised PnL at the mark (USD)" }),
  totalShares: SharesOut(),
});
export type LiquidityPosition = Static<typeof LiquidityPositionSchema>;

export const LiquidityHistorySchema = Type.Object({
  id: Type.String({ description: 'the engine event seq of the move' }),
  action: StringEnum(LIQUIDITY_ACTIONS),
  amount: DecimalOut(),
  shares: SharesOut(),
  holderShares: SharesOut({ description: "the account's shares after the move" }),
  totalShares: SharesOut({ description: 'all shares after the move' }),
  poolEquity: DecimalOut({ description: 'pool equity after the move (USD)' }),
  lockedUntil: Millis(),
  ts: Millis(),
});
export type LiquidityHistoryRow = Static<typeof LiquidityHistorySchema>;

export const InsuranceMoveSchema = Type.Object({
  id: Type.String({ description: 'the engine event seq of the movement' }),
  reason: StringEnum(INSURANCE_REASONS),
  account: Type.String({ description: 'the account liquidated, or whose bad debt was paid' }),
  delta: DecimalOut({ description: 'signed USD: positive into the fund' }),
  balance: DecimalOut({ description: "the fund's balance after" }),
  ts: Millis(),
});
export type InsuranceMove = Static<typeof InsuranceMoveSchema>;

/** `GET insurance-fund` (public). */
export const InsuranceFundSchema = Type.Object({
  balance: DecimalOut({ description: "the fund's collateral (USD)" }),
  feesReceived: DecimalOut({ description: 'liquidation fees received, all time (USD)' }),
  badDebtPaid: DecimalOut({ description: 'bad debt paid, all time (USD)' }),
  openBadDebt: Type.Integer({ description: 'accounts with bad debt not yet resolved (withdrawals pause while any exist)' }),
  openBadDebtAccounts: Type.Array(Type.String(), { description: 'those accounts, sorted' }),
  movements: Type.Object(ListOf(InsuranceMoveSchema).properties, { description: "the fund's movements in the page asked for, newest first" }),
});
export type InsuranceFund = Static<typeof InsuranceFundSchema>;
