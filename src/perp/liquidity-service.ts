/**
 * The liquidity pool and the insurance fund on the perpetual API (docs/perp-api.md "Liquidity pool",
 * "Insurance fund"; the rules: docs/perp-risk.md "The liquidity pool").
 *
 * - `add` moves withdrawable collateral of the key's wallet into the pool (`addLiquidity`, locked
 *   for `lockupMs` from now) and answers the shares minted; `remove` burns shares for their value
 *   (`removeLiquidity`). Both are authorised by the API key alone (TRANSFER permission) and made
 *   idempotent by the request's Idempotency-Key (idempotency.ts, scopes `lp-add` and `lp-remove`).
 * - `positions` reads the holder's shares and their value from the engine's live state; `history`
 *   the holder's additions and removals, and `insuranceFund` the fund's movements, from the
 *   projected `liquidity` and `insurance` events (store/liquidity-store.ts).
 *
 * Shares are shown with 6 decimals, as USDC: the first addition into an empty pool mints one
 * micro-share per micro-USD, so a share starts at 1 USD and follows pool equity ÷ shares after.
 */
import type { InsuranceFund, InsuranceMove, LiquidityHistoryRow, LiquidityMove, LiquidityPosition, Page } from '@tokex/contract';
import { RejectedError, ValidationError, type AppError } from '../errors/app-error.ts';
import type { AuthKey } from '../auth/api-key-service.ts';
import { formatDecimal, parseDecimal } from '../lib/decimal.ts';
import type { Db } from '../storage/database.ts';
import type { AddLiquidityCommand, LiquidityAccepted, RemoveLiquidityCommand } from './engine/engine-types.ts';
import { COLLATERAL_DECIMALS } from './engine/instruments.ts';
import { commandIdFor, submitOnce } from './idempotency.ts';
import { engineError, readYourWrites, walletOf } from './venue-calls.ts';
import type { PerpVenue } from './perp-venue.ts';
import { usd } from './perp-views.ts';
import { listInsuranceMoves, listLiquidityMoves, type InsuranceMoveRecord, type LiquidityMoveRecord } from './store/liquidity-store.ts';

/** Decimals of a pool share as the API shows it (the collateral's: 1 share = 10⁶ micro-shares). */
export const SHARE_DECIMALS = COLLATERAL_DECIMALS;
/** Default lock-up of an addition: 4 days, as Hyperliquid's HLP (PERP_LP_LOCKUP_MS). */
export const DEFAULT_LP_LOCKUP_MS = 4 * 86_400_000;

export const sharesOf = (microShares: bigint): string => formatDecimal(microShares, SHARE_DECIMALS);

export interface LiquidityListQuery {
  offset: number;
  limit: number;
  startTime?: number;
  endTime?: number;
}

export interface LiquidityService {
  add(caller: AuthKey, input: { amount: string }, idempotencyKey?: string): Promise<LiquidityMove>;
  remove(caller: AuthKey, input: { shares: string }, idempotencyKey?: string): Promise<LiquidityMove>;
  positions(caller: AuthKey): LiquidityPosition;
  history(caller: AuthKey, q: LiquidityListQuery): Promise<Page<LiquidityHistoryRow>>;
  insuranceFund(q: LiquidityListQuery): Promise<InsuranceFund>;
}

export function liquidityHistoryRow(m: LiquidityMoveRecord): LiquidityHistoryRow {
  return {
    id: String(m.seq), action: m.action, amount: usd(m.amount), shares: sharesOf(m.shares), holderShares: sharesOf(m.holderShares),
    totalShares: sharesOf(m.totalShares), poolEquity: usd(m.poolEquity), lockedUntil: m.lockedUntil, ts: m.ts,
  };
}

export function insuranceMoveRow(m: InsuranceMoveRecord): InsuranceMove {
  return { id: String(m.seq), reason: m.reason, account: m.account, delta: usd(m.delta), balance: usd(m.balance), ts: m.ts };
}

/**
 * The API's error for a refused addition or removal. The engine's messages speak micro-units; the
 * client gets USD, decimal shares and, for a lock-up, when it ends (also as `data.lockedUntil`).
 */
export function liquidityError(r: { code: string; message: string }): AppError {
  const number = (/(-?\d+)/.exec(r.message.replace(/^[a-zA-Z]+: /, '')) ?? [])[1];
  switch (r.code) {
    case 'LIQUIDITY_LOCKED': {
      const until = Number(number);
      const when = Number.isSafeInteger(until) ? `${new Date(until).toISOString()} (${until} ms)` : 'the end of the lock-up';
      return new RejectedError('LIQUIDITY_LOCKED', `shares: locked until ${when}, counted from the latest addition`, {
        detail: { engine: r.message },
        ...(Number.isSafeInteger(until) ? { data: { lockedUntil: until } } : {}),
      });
    }
    case 'INSUFFICIENT_SHARES':
      return new RejectedError('INSUFFICIENT_SHARES', `shares: more than the ${number === undefined ? '0' : sharesOf(BigInt(number))} the account holds`, {
        detail: { engine: r.message },
      });
    case 'POOL_MARGIN':
      return new RejectedError(
        'POOL_MARGIN',
        `shares: the pool can pay out at most ${number === undefined ? '0' : usd(BigInt(number))} USD now without falling below the initial margin of its positions and orders`,
        { detail: { engine: r.message }, ...(number !== undefined ? { data: { maxAmount: usd(BigInt(number)) } } : {}) },
      );
    case 'INSUFFICIENT_BALANCE':
      return new RejectedError(
        'INSUFFICIENT_BALANCE',
        number === undefined ? 'amount: the account has no withdrawable collateral' : `amount: more than the ${usd(BigInt(number))} USD the account can withdraw`,
        { detail: { engine: r.message } },
      );
    case 'INVALID': {
      const m = /^(amount|shares): (.*)$/.exec(r.message);
      if (m) return new ValidationError(m[1], m[2]);
      break;
    }
  }
  return engineError(r);
}

export function createLiquidityService(opts: { db: Db; /** The projection's history (storage-wiring.ts openHistoryDatabase); default `db`. */ history?: Db; venue: PerpVenue; lockupMs?: number; now?: () => number }): LiquidityService {
  const { db, venue } = opts;
  const historyDb = opts.history ?? db;
  const now = opts.now ?? Date.now;
  const lockupMs = opts.lockupMs ?? DEFAULT_LP_LOCKUP_MS;

  const { submit, once } = readYourWrites(db, venue);

  const moved = (action: 'ADD' | 'REMOVE', r: LiquidityAccepted, appliedAt: number): LiquidityMove => ({
    action,
    amount: usd(BigInt(r.amount)),
    shares: sharesOf(BigInt(r.shares)),
    lockedUntil: r.lockedUntil,
    ts: appliedAt,
  });

  return {
    async add(caller, input, idempotencyKey) {
      const account = walletOf(caller);
      const amount = parseDecimal(input.amount, { field: 'amount', decimals: COLLATERAL_DECIMALS });
      const cmd: AddLiquidityCommand = { kind: 'addLiquidity', id: commandIdFor('lp-add', account, idempotencyKey), ts: now(), account, amount, lockupMs };
      const { result: r, appliedAt } = await submitOnce(once, cmd, idempotencyKey);
      if (!r.ok) throw liquidityError(r);
      return moved('ADD', r as LiquidityAccepted, appliedAt);
    },

    async remove(caller, input, idempotencyKey) {
      const account = walletOf(caller);
      const shares = parseDecimal(input.shares, { field: 'shares', decimals: SHARE_DECIMALS });
      const cmd: RemoveLiquidityCommand = { kind: 'removeLiquidity', id: commandIdFor('lp-remove', account, idempotencyKey), ts: now(), account, shares };
      const { result: r, appliedAt } = await submitOnce(once, cmd, idempotencyKey);
      if (!r.ok) throw liquidityError(r);
      return moved('REMOVE', r as LiquidityAccepted, appliedAt);
    },

    positions(caller) {
      const account = walletOf(caller);
      const engine = venue.engine();
      const pool = engine.pool();
      const lp = engine.lpPosition(account);
      const value = lp?.value ?? 0n;
      const net = lp?.netDeposited ?? 0n;
      return {
        shares: sharesOf(lp?.shares ?? 0n),
        value: usd(value),
        netDeposited: usd(net),
        pnl: usd(value - net),
        lockedUntil: lp === undefined ? null : lp.lockedUntil,
        poolEquity: usd(pool.equity),
        totalShares: sharesOf(pool.totalShares),
      };
    },

    async history(caller, q) {
      const account = walletOf(caller);
      await venue.historyCaughtUp?.();
      const page = await listLiquidityMoves(historyDb, { account, ...q });
      return { total: page.total, rows: page.rows.map(liquidityHistoryRow) };
    },

    async insuranceFund(q) {
      const fund = venue.engine().insuranceFund();
      const page = await listInsuranceMoves(historyDb, q);
      return {
        balance: usd(fund.balance),
        feesReceived: usd(fund.feesReceived),
        badDebtPaid: usd(fund.badDebtPaid),
        openBadDebt: fund.openBadDebt.length,
        openBadDebtAccounts: fund.openBadDebt,
        movements: { total: page.total, rows: page.rows.map(insuranceMoveRow) },
      };
    },
  };
}
