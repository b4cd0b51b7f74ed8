/**
 * The dead man's switch (Hyperliquid's scheduleCancel, Binance's countdownCancelAll): an account arms
 * a deadline; unless it re-arms in time, every open order it has is cancelled. The engine has no
 * clock, so deadlines fire on the next mark update at or after them (the mark worker sends one per
 * instrument every second or so), and the firing is an event of that command.
 */
import type { Accepted, CancelAllAfterCommand, Rejected } from '../engine-types.ts';
import { reject, type EngineState } from '../state/engine-state.ts';
import { accountOf, checkBase, isRejected, isSafeNonNegInt } from '../state/validate.ts';

/** Shortest countdown (ms), as Binance's countdownCancelAll. */
export const MIN_CANCEL_AFTER_MS = 5_000;
/** Longest countdown: one day. */
export const MAX_CANCEL_AFTER_MS = 86_400_000;

export function cancelAllAfterCommand(s: EngineState, cmd: CancelAllAfterCommand): Accepted | Rejected {
  const bad = checkBase(cmd);
  if (bad) return bad;
  const t = cmd.timeoutMs;
  if (!isSafeNonNegInt(t) || (t !== 0 && (t < MIN_CANCEL_AFTER_MS || t > MAX_CANCEL_AFTER_MS))) {
    return reject('INVALID', `timeoutMs: 0 (disarm) or ${MIN_CANCEL_AFTER_MS}..${MAX_CANCEL_AFTER_MS}`);
  }
  const acct = accountOf(s, cmd.account);
  if (isRejected(acct)) return acct;
  if (acct.system) return reject('ACCOUNT_RESERVED', 'account: the venue\'s own accounts');
  s.begin(cmd);
  if (t === 0) {
    acct.cancelAfterTs = 0;
    s.cancelAfter.delete(acct);
    s.emit({ type: 'cancelAllAfter', account: acct.address, status: 'DISARMED', deadlineTs: 0, canceledOrderIds: [] });
  } else {
    acct.cancelAfterTs = cmd.ts + t;
    s.cancelAfter.add(acct);
    s.emit({ type: 'cancelAllAfter', account: acct.address, status: 'ARMED', deadlineTs: acct.cancelAfterTs, canceledOrderIds: [] });
  }
  return { ok: true, code: 'OK', events: s.end() };
}

/** Fires every switch due at `ts`, in account order. */
export function fireCancelAfter(s: EngineState, ts: number): void {
  if (s.cancelAfter.size === 0) return;
  const due = [...s.cancelAfter].filter((a) => a.cancelAfterTs <= ts);
  if (due.length === 0) return;
  due.sort((a, b) => (a.address < b.address ? -1 : 1));
  for (const acct of due) {
    const deadline = acct.cancelAfterTs;
    s.cancelAfter.delete(acct);
    acct.cancelAfterTs = 0;
    const ids = s.cancelOrdersOf(acct, null, 'CANCEL_AFTER');
    s.emit({ type: 'cancelAllAfter', account: acct.address, status: 'TRIGGERED', deadlineTs: deadline, canceledOrderIds: ids });
  }
}
