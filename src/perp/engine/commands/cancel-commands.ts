/**
 * The three user cancels: one order, a batch by id (each answered on its own), and all of an
 * account's orders (optionally of one symbol). A cancel from an unknown account names no order.
 */
import type { Accepted, CancelAllCommand, CancelAllResult, CancelOrderCommand, CancelOrdersCommand, CancelOrdersResult, CancelOutcome, Rejected } from '../engine-types.ts';
import type { Account, EngineOrder } from '../state/entities.ts';
import { reject, type EngineState } from '../state/engine-state.ts';
import { accountOf, checkBase, isRejected, isSafePosInt } from '../state/validate.ts';

/** Most order ids one cancelOrders command may name. */
export const MAX_BATCH_CANCEL = 100;

function cancelCheck(s: EngineState, acct: Account, orderId: unknown): CancelOutcome['code'] {
  if (!isSafePosInt(orderId)) return 'INVALID';
  const order = s.openOrder(orderId);
  if (order === undefined) return orderId < s.nextOrderId ? 'ORDER_NOT_OPEN' : 'ORDER_NOT_FOUND';
  return order.account === acct ? 'OK' : 'ORDER_NOT_FOUND';
}

export function cancelOrderCommand(s: EngineState, cmd: CancelOrderCommand): Accepted | Rejected {
  const bad = checkBase(cmd);
  if (bad) return bad;
  const acct = accountOf(s, cmd.account);
  if (isRejected(acct)) return acct.code === 'UNKNOWN_ACCOUNT' ? reject('ORDER_NOT_FOUND', 'orderId: no such order for this account') : acct;
  const code = cancelCheck(s, acct, cmd.orderId);
  if (code !== 'OK') return reject(code, code === 'ORDER_NOT_OPEN' ? 'orderId: the order is no longer open' : 'orderId: no such order for this account');
  s.begin(cmd);
  s.finishOrder(s.openOrder(cmd.orderId) as EngineOrder, 'CANCELED', 'USER_CANCEL');
  return { ok: true, code: 'OK', events: s.end() };
}

export function cancelOrdersCommand(s: EngineState, cmd: CancelOrdersCommand): CancelOrdersResult {
  const bad = checkBase(cmd);
  if (bad) return bad;
  const ids = cmd.orderIds;
  if (!Array.isArray(ids) || ids.length === 0 || ids.length > MAX_BATCH_CANCEL) return reject('INVALID', `orderIds: 1..${MAX_BATCH_CANCEL} order ids`);
  const found = accountOf(s, cmd.account);
  if (isRejected(found) && found.code !== 'UNKNOWN_ACCOUNT') return found;
  const acct = isRejected(found) ? null : found;
  s.begin(cmd);
  const cancels: CancelOutcome[] = [];
  for (const id of ids) {
    const code = acct === null ? 'ORDER_NOT_FOUND' : cancelCheck(s, acct, id);
    if (code === 'OK') s.finishOrder(s.openOrder(id) as EngineOrder, 'CANCELED', 'USER_CANCEL');
    cancels.push({ orderId: id, code });
  }
  return { ok: true, code: 'OK', events: s.end(), cancels };
}

export function cancelAllCommand(s: EngineState, cmd: CancelAllCommand): CancelAllResult {
  const bad = checkBase(cmd);
  if (bad) return bad;
  const symbol = cmd.symbol;
  if (symbol !== undefined && symbol !== null && !s.instruments.has(symbol)) return reject('UNKNOWN_SYMBOL', `symbol: unknown ${JSON.stringify(symbol)}`);
  const found = accountOf(s, cmd.account);
  if (isRejected(found) && found.code !== 'UNKNOWN_ACCOUNT') return found;
  s.begin(cmd);
  const canceledOrderIds = isRejected(found) ? [] : s.cancelOrdersOf(found, symbol ?? null, 'USER_CANCEL');
  return { ok: true, code: 'OK', events: s.end(), canceledOrderIds };
}
