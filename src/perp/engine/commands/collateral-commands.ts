/**
 * Collateral in and out: deposits (credited by the collateral task from the vault's events), the
 * immediate `withdraw` (the venue's own accounts and tests), and the withdrawal reservation the API
 * uses: requestWithdrawal reserves, settleWithdrawal pays or releases it, each exactly once.
 */
import type { Accepted, DepositCommand, Rejected, RequestWithdrawalCommand, SettleWithdrawalCommand, WithdrawCommand, WithdrawalAccepted } from '../engine-types.ts';
import { totalHealth, withdrawable } from '../risk/margin.ts';
import type { Account } from '../state/entities.ts';
import { reject, type EngineState } from '../state/engine-state.ts';
import { accountOf, checkAmount, checkBase, isRejected, normaliseAccount } from '../state/validate.ts';

const MAX_WITHDRAWAL_ID = 128;

export function depositCommand(s: EngineState, cmd: DepositCommand): Accepted | Rejected {
  const bad = checkBase(cmd) ?? checkAmount(cmd.amount, 'amount');
  if (bad) return bad;
  const address = normaliseAccount(cmd.account);
  if (address === null) return reject('INVALID', 'account: must be a 0x address');
  s.begin(cmd);
  const acct = s.accounts.get(address) ?? s.createAccount(address);
  acct.collateral += cmd.amount;
  acct.deposited += cmd.amount;
  s.markDirty(acct);
  s.emitBalance(acct, cmd.amount, 'deposit');
  return { ok: true, code: 'OK', events: s.end() };
}

/**
 * The withdrawal rule, both commands: none while bad debt is open, and at most the withdrawable
 * amount; a forced one (filed on chain) at most the account's equity.
 */
function refuseWithdrawal(s: EngineState, acct: Account, amount: bigint, forced = false): Rejected | null {
  if (s.badDebtAccounts.size !== 0) return reject('WITHDRAWALS_PAUSED', `withdrawals pause while ${s.badDebtAccounts.size} account(s) hold unresolved bad debt`);
  if (forced) {
    const equity = totalHealth(acct).equity;
    return amount > equity ? reject('INSUFFICIENT_BALANCE', `amount: more than the equity ${equity}`) : null;
  }
  const max = withdrawable(acct);
  return amount > max ? reject('INSUFFICIENT_BALANCE', `amount: more than the withdrawable ${max}`) : null;
}

export function withdrawCommand(s: EngineState, cmd: WithdrawCommand): Accepted | Rejected {
  const bad = checkBase(cmd) ?? checkAmount(cmd.amount, 'amount');
  if (bad) return bad;
  const acct = accountOf(s, cmd.account);
  if (isRejected(acct)) return acct;
  const refused = refuseWithdrawal(s, acct, cmd.amount);
  if (refused) return refused;
  s.begin(cmd);
  acct.collateral -= cmd.amount;
  acct.withdrawn += cmd.amount;
  s.markDirty(acct);
  s.emitBalance(acct, -cmd.amount, 'withdraw');
  return { ok: true, code: 'OK', events: s.end() };
}

export function requestWithdrawalCommand(s: EngineState, cmd: RequestWithdrawalCommand): WithdrawalAccepted | Rejected {
  const bad = checkBase(cmd) ?? checkAmount(cmd.amount, 'amount');
  if (bad) return bad;
  const id = cmd.withdrawalId;
  if (typeof id !== 'string' || id.length === 0 || id.length > MAX_WITHDRAWAL_ID) return reject('INVALID', `withdrawalId: a string of 1..${MAX_WITHDRAWAL_ID} characters`);
  const acct = accountOf(s, cmd.account);
  if (isRejected(acct)) return acct.code === 'UNKNOWN_ACCOUNT' ? reject('INSUFFICIENT_BALANCE', 'amount: nothing is withdrawable') : acct;
  const known = s.withdrawals.get(id);
  if (known !== undefined) {
    if (known.account !== acct.address || known.amount !== cmd.amount) return reject('WITHDRAWAL_EXISTS', 'withdrawalId: already used with another amount or account');
    return { ok: true, code: 'OK', events: [], withdrawalId: id, status: known.status, duplicate: true };
  }
  if (acct.system) return reject('ACCOUNT_RESERVED', 'account: the venue\'s own accounts withdraw by operator command');
  const forced = cmd.forced === true;
  const refused = refuseWithdrawal(s, acct, cmd.amount, forced);
  if (refused) return refused;
  s.begin(cmd);
  acct.collateral -= cmd.amount;
  acct.pendingWithdrawals += cmd.amount;
  s.withdrawals.set(id, { withdrawalId: id, account: acct.address, amount: cmd.amount, status: 'PENDING', requestedTs: cmd.ts, ...(forced ? { forced: true as const } : {}) });
  s.pendingWithdrawalIds.add(id);
  s.markDirty(acct);
  s.emitBalance(acct, -cmd.amount, 'withdrawalReserve');
  s.emit({ type: 'withdrawal', withdrawalId: id, account: acct.address, amount: cmd.amount, status: 'PENDING' });
  return { ok: true, code: 'OK', events: s.end(), withdrawalId: id, status: 'PENDING', duplicate: false };
}

export function settleWithdrawalCommand(s: EngineState, cmd: SettleWithdrawalCommand): WithdrawalAccepted | Rejected {
  const bad = checkBase(cmd);
  if (bad) return bad;
  if (cmd.outcome !== 'PAID' && cmd.outcome !== 'FAILED') return reject('INVALID', 'outcome: PAID or FAILED');
  const w = typeof cmd.withdrawalId === 'string' ? s.withdrawals.get(cmd.withdrawalId) : undefined;
  if (w === undefined || w.status !== 'PENDING') return reject('WITHDRAWAL_NOT_PENDING', `withdrawalId: ${w === undefined ? 'unknown' : `already ${w.status}`}`);
  const acct = s.accounts.get(w.account);
  if (acct === undefined) throw new Error('engine: a withdrawal of an unknown account');
  s.begin(cmd);
  acct.pendingWithdrawals -= w.amount;
  w.status = cmd.outcome;
  s.pendingWithdrawalIds.delete(w.withdrawalId);
  if (cmd.outcome === 'PAID') acct.withdrawn += w.amount;
  else {
    acct.collateral += w.amount;
    s.markDirty(acct);
    s.emitBalance(acct, w.amount, 'withdrawalReserve');
  }
  s.emit({ type: 'withdrawal', withdrawalId: w.withdrawalId, account: acct.address, amount: w.amount, status: cmd.outcome });
  return { ok: true, code: 'OK', events: s.end(), withdrawalId: w.withdrawalId, status: cmd.outcome, duplicate: false };
}
