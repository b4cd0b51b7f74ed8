/**
 * Adding to and removing from the liquidity pool (docs/perp-risk.md "Liquidity pool"). An addition
 * moves free collateral (never unrealised profit) into the pool account and mints shares at pool
 * equity ÷ shares; a removal after the lock-up pays shares × equity ÷ shares, and is refused when it
 * would leave the pool unable to carry its positions and orders.
 */
import type { AddLiquidityCommand, LiquidityAccepted, Rejected, RemoveLiquidityCommand } from '../engine-types.ts';
import { poolEquity, sharesFor, valueOf } from '../pool/liquidity-pool.ts';
import { withdrawable } from '../risk/margin.ts';
import { reject, type EngineState } from '../state/engine-state.ts';
import { MAX_AMOUNT, accountOf, checkAmount, checkBase, isRejected, isSafeNonNegInt } from '../state/validate.ts';

/** Longest lock-up a command may set (one year). */
const MAX_LOCKUP_MS = 366 * 86_400_000;

export function addLiquidityCommand(s: EngineState, cmd: AddLiquidityCommand): LiquidityAccepted | Rejected {
  const bad = checkBase(cmd) ?? checkAmount(cmd.amount, 'amount');
  if (bad) return bad;
  if (!isSafeNonNegInt(cmd.lockupMs) || cmd.lockupMs > MAX_LOCKUP_MS) return reject('INVALID', 'lockupMs: 0..one year');
  const acct = accountOf(s, cmd.account);
  if (isRejected(acct)) return acct.code === 'UNKNOWN_ACCOUNT' ? reject('INSUFFICIENT_BALANCE', 'amount: no free collateral') : acct;
  if (acct.system || acct === s.pool) return reject('ACCOUNT_RESERVED', 'account: the venue\'s own accounts do not hold pool shares');
  const free = withdrawable(acct);
  if (cmd.amount > free) return reject('INSUFFICIENT_BALANCE', `amount: more than the free ${free}`);
  const shares = sharesFor(s, cmd.amount);
  if (shares <= 0n) return reject('INVALID', 'amount: too small to mint a share');
  s.begin(cmd);
  const pool = s.pool;
  acct.collateral -= cmd.amount;
  acct.liquidity -= cmd.amount;
  pool.collateral += cmd.amount;
  pool.liquidity += cmd.amount;
  const holding = s.lps.get(acct.address) ?? { shares: 0n, lockedUntil: 0, netDeposited: 0n };
  holding.shares += shares;
  holding.netDeposited += cmd.amount;
  holding.lockedUntil = Math.max(holding.lockedUntil, cmd.ts + cmd.lockupMs);
  s.lps.set(acct.address, holding);
  s.totalShares += shares;
  s.markDirty(acct);
  s.markDirty(pool);
  s.emitBalance(acct, -cmd.amount, 'liquidity');
  s.emitBalance(pool, cmd.amount, 'liquidity');
  s.emit({
    type: 'liquidity', account: acct.address, action: 'ADD', amount: cmd.amount, shares, holderShares: holding.shares,
    totalShares: s.totalShares, poolEquity: poolEquity(s), lockedUntil: holding.lockedUntil,
  });
  return { ok: true, code: 'OK', events: s.end(), shares: shares.toString(), amount: cmd.amount.toString(), lockedUntil: holding.lockedUntil };
}

export function removeLiquidityCommand(s: EngineState, cmd: RemoveLiquidityCommand): LiquidityAccepted | Rejected {
  const bad = checkBase(cmd);
  if (bad) return bad;
  const shares = cmd.shares;
  if (typeof shares !== 'bigint' || shares <= 0n || shares > MAX_AMOUNT) return reject('INVALID', 'shares: a positive bigint');
  const acct = accountOf(s, cmd.account);
  if (isRejected(acct)) return acct.code === 'UNKNOWN_ACCOUNT' ? reject('INSUFFICIENT_SHARES', 'shares: the account holds none') : acct;
  const holding = s.lps.get(acct.address);
  if (holding === undefined || shares > holding.shares) return reject('INSUFFICIENT_SHARES', `shares: the account holds ${holding?.shares ?? 0n}`);
  if (cmd.ts < holding.lockedUntil) return reject('LIQUIDITY_LOCKED', `shares: locked until ${holding.lockedUntil}`);
  const amount = valueOf(s, shares);
  const pool = s.pool;
  const max = withdrawable(pool);
  if (amount > max) return reject('POOL_MARGIN', `shares: the pool can pay out at most ${max} now`);
  s.begin(cmd);
  pool.collateral -= amount;
  pool.liquidity -= amount;
  acct.collateral += amount;
  acct.liquidity += amount;
  holding.shares -= shares;
  holding.netDeposited -= amount;
  s.totalShares -= shares;
  if (holding.shares === 0n) s.lps.delete(acct.address);
  s.markDirty(acct);
  s.markDirty(pool);
  s.emitBalance(pool, -amount, 'liquidity');
  s.emitBalance(acct, amount, 'liquidity');
  s.emit({
    type: 'liquidity', account: acct.address, action: 'REMOVE', amount, shares, holderShares: holding.shares,
    totalShares: s.totalShares, poolEquity: poolEquity(s), lockedUntil: holding.lockedUntil,
  });
  return { ok: true, code: 'OK', events: s.end(), shares: shares.toString(), amount: amount.toString(), lockedUntil: holding.lockedUntil };
}
