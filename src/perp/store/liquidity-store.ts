/**
 * The liquidity pool's and the insurance fund's history as the projector writes it (migration
 * 0014) and the API pages through it: every addition to and removal from the pool per holder
 * (`liquidity` events) and every movement of the insurance fund (`insurance` events). Keyed by the
 * engine event seq, written insert-or-ignore, so a batch replayed after a crash changes nothing.
 * Money is micro-USD and shares micro-shares, as integer strings; lists answer `{total, rows}`,
 * newest first.
 */
import type { Selectable } from 'kysely';
import { bulkInsert, type BulkTable } from '../../storage/bulk-sql.ts';
import { kyselyOf, type DbExecutor } from '../../storage/database.ts';
import { listPage } from '../../storage/list-query.ts';
import type { PerpInsuranceMovesTable, PerpLiquidityMovesTable } from '../../storage/schema.ts';
import type { Page, TimeRange } from './perp-history-store.ts';

// ---------------------------------------------------------------------------- liquidity moves

/** Both tables are keyed by the engine event seq: it breaks ties of time. */
const BY_SEQ_NEWEST_FIRST = { time: 'ts', newestFirst: ['ts', 'seq'] } as const;

export interface LiquidityMoveRecord {
  /** The engine event seq. */
  seq: number;
  account: string;
  action: 'ADD' | 'REMOVE';
  /** Collateral moved (micro-USD). */
  amount: bigint;
  /** Shares minted (ADD) or burned (REMOVE). */
  shares: bigint;
  /** The holder's shares after the move. */
  holderShares: bigint;
  totalShares: bigint;
  /** Pool equity after the move (micro-USD). */
  poolEquity: bigint;
  lockedUntil: number;
  ts: number;
}

const LIQUIDITY_INSERT: BulkTable = {
  table: 'perp_liquidity_moves',
  columns: ['seq', 'account', 'action', 'amount', 'shares', 'holder_shares', 'total_shares', 'pool_equity', 'locked_until', 'ts'],
  onConflict: { columns: ['seq'], update: 'nothing' },
};

function liquidityFromRow(r: Selectable<PerpLiquidityMovesTable>): LiquidityMoveRecord {
  return {
    seq: Number(r.seq),
    account: r.account,
    action: r.action as LiquidityMoveRecord['action'],
    amount: BigInt(r.amount),
    shares: BigInt(r.shares),
    holderShares: BigInt(r.holder_shares),
    totalShares: BigInt(r.total_shares),
    poolEquity: BigInt(r.pool_equity),
    lockedUntil: Number(r.locked_until),
    ts: Number(r.ts),
  };
}

export async function insertLiquidityMoves(db: DbExecutor, moves: readonly LiquidityMoveRecord[]): Promise<void> {
  await bulkInsert(
    db,
    LIQUIDITY_INSERT,
    moves.map((m) => [
      m.seq, m.account, m.action, m.amount.toString(), m.shares.toString(), m.holderShares.toString(), m.totalShares.toString(),
      m.poolEquity.toString(), m.lockedUntil, m.ts,
    ]),
  );
}

/** The account's additions and removals, newest first. */
export async function listLiquidityMoves(db: DbExecutor, q: Page & TimeRange & { account: string }): Promise<{ total: number; rows: LiquidityMoveRecord[] }> {
  const base = kyselyOf(db).selectFrom('perp_liquidity_moves').where('account', '=', q.account.toLowerCase());
  return listPage(base, BY_SEQ_NEWEST_FIRST, q, liquidityFromRow);
}

// ---------------------------------------------------------------------------- insurance moves

export interface InsuranceMoveRecord {
  seq: number;
  reason: 'liquidationFee' | 'badDebt';
  account: string;
  /** Signed micro-USD: positive into the fund. */
  delta: bigint;
  /** The fund's balance after. */
  balance: bigint;
  ts: number;
}

const INSURANCE_INSERT: BulkTable = {
  table: 'perp_insurance_moves',
  columns: ['seq', 'reason', 'account', 'delta', 'balance', 'ts'],
  onConflict: { columns: ['seq'], update: 'nothing' },
};

function insuranceFromRow(r: Selectable<PerpInsuranceMovesTable>): InsuranceMoveRecord {
  return {
    seq: Number(r.seq),
    reason: r.reason as InsuranceMoveRecord['reason'],
    account: r.account,
    delta: BigInt(r.delta),
    balance: BigInt(r.balance),
    ts: Number(r.ts),
  };
}

export async function insertInsuranceMoves(db: DbExecutor, moves: readonly InsuranceMoveRecord[]): Promise<void> {
  await bulkInsert(db, INSURANCE_INSERT, moves.map((m) => [m.seq, m.reason, m.account, m.delta.toString(), m.balance.toString(), m.ts]));
}

/** The fund's movements, newest first. */
export async function listInsuranceMoves(db: DbExecutor, q: Page & TimeRange): Promise<{ total: number; rows: InsuranceMoveRecord[] }> {
  return listPage(kyselyOf(db).selectFrom('perp_insurance_moves'), BY_SEQ_NEWEST_FIRST, q, insuranceFromRow);
}
