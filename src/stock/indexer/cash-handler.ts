/**
 * Cashier events → the `stock_cash_operations` projection. A deposit or withdrawal is created by the
 * Cashier event of the user's transaction (`Deposited` / `DepositQueued`, `Withdrawn` /
 * `WithdrawalQueued`) and, when queued, completed by the operator's `DepositSettled` /
 * `WithdrawalSettled` for its queue id. `applyCashEvent` is a pure reducer over an operation's events.
 */
import type { ChainEventRecord } from '../../storage/chain-block-store.ts';
import type { CashOperationState, CashStep, OperationKind } from '../store/stock-operation-store.ts';
import { operationIdOf } from '../operation-id.ts';

export const CASH_CREATE_EVENTS: ReadonlySet<string> = new Set(['Deposited', 'DepositQueued', 'Withdrawn', 'WithdrawalQueued']);
export const CASH_SETTLE_EVENTS: ReadonlySet<string> = new Set(['DepositSettled', 'WithdrawalSettled']);

export function cashEntityKey(operationId: string): string {
  return `c:${operationId}`;
}

/** Which queue a settle event refers to: deposits and withdrawals have separate id counters. */
export function settleQueueOf(ev: ChainEventRecord): { kind: OperationKind; queueId: string } {
  return { kind: ev.name === 'DepositSettled' ? 'deposit' : 'withdrawal', queueId: String(ev.args.queueId) };
}

export function queueKey(kind: OperationKind, queueId: string): string {
  return `${kind}:${queueId}`;
}

function step(name: CashStep['step'], ev: ChainEventRecord): CashStep {
  return { step: name, txHash: ev.txHash, timestamp: ev.timestamp };
}

function created(ev: ChainEventRecord, kind: OperationKind, instant: boolean, steps: CashStep[]): CashOperationState {
  const a = ev.args;
  return {
    operationId: operationIdOf(ev.txHash, ev.ordinal),
    kind,
    userAddress: a.user as string,
    tokenAddress: a.token as string,
    tokenAmount: String(a.tokenAmount),
    musdAmount: String(a.musdAmount),
    status: instant ? 'completed' : 'processing',
    instant,
    queueId: instant ? null : String(a.queueId),
    txHash: ev.txHash,
    settleTxHash: null,
    blockNumber: ev.blockNumber,
    createdAt: ev.timestamp,
    updatedAt: ev.timestamp,
    completedAt: instant ? ev.timestamp : null,
    steps,
    logIndex: ev.logIndex,
  };
}

export function applyCashEvent(state: CashOperationState | undefined, ev: ChainEventRecord): CashOperationState | undefined {
  switch (ev.name) {
    case 'Deposited':
      return created(ev, 'deposit', true, [step('deposited-instant', ev)]);
    case 'DepositQueued':
      return created(ev, 'deposit', false, [step('queued', ev)]);
    case 'Withdrawn':
      return created(ev, 'withdrawal', true, [step('debited', ev), step('paid', ev)]);
    case 'WithdrawalQueued':
      return created(ev, 'withdrawal', false, [step('debited', ev), step('queued', ev)]);
    case 'DepositSettled':
    case 'WithdrawalSettled':
      if (!state) return state;
      return {
        ...state,
        status: 'completed',
        settleTxHash: ev.txHash,
        completedAt: ev.timestamp,
        updatedAt: ev.timestamp,
        steps: [...state.steps, step('settled', ev)],
      };
    default:
      return state;
  }
}

export function reduceCashOperation(events: readonly ChainEventRecord[]): CashOperationState | undefined {
  let state: CashOperationState | undefined;
  for (const ev of events) state = applyCashEvent(state, ev);
  return state;
}
