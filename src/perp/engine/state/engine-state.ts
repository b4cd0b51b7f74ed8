/**
 * Everything the engine knows, in one object the command handlers receive: instruments, accounts,
 * resting orders, the idempotency memories, the venue's own accounts, and the command being applied
 * (its id, ts and the events it has emitted so far, each taking the next seq).
 *
 * The emit helpers and the bookkeeping every rule shares (creating accounts and positions, linking
 * an order into its account's list, taking an order off the book) are here; rules are not.
 */
import type { BalanceReason, DoneReason, EngineEvent, OrderOutcome, Rejected, RejectDetail } from '../engine-types.ts';
import type { InstrumentSpec } from '../instruments.ts';
import type { RejectCode } from '../result-codes.ts';
import { Account, Instrument, Position, type EngineOrder } from './entities.ts';

/** The account that receives every fee and the funding rounding remainder. */
export const FEE_ACCOUNT = '0x000000000000000000000000000000000000fee0';
/** The insurance fund: receives liquidation fees, pays bad debt (docs/perp-risk.md). */
export const INSURANCE_ACCOUNT = '0x0000000000000000000000000000000000001000';
/** The liquidity pool: an account that trades like any other and backstops liquidations. */
export const POOL_ACCOUNT = '0x0000000000000000000000000000000000002000';
/** Leverage of a position whose account never chose one (capped at the instrument's maximum). */
export const DEFAULT_LEVERAGE = 10;

export interface ClientOrderRecord extends OrderOutcome {
  account: string;
  clientOrderId: string;
}

export interface WithdrawalRecord {
  withdrawalId: string;
  account: string;
  amount: bigint;
  status: 'PENDING' | 'PAID' | 'FAILED';
  requestedTs: number;
  /** A forced withdrawal the account filed on chain (paid by `payForcedWithdrawal`, not a signed request). */
  forced?: true;
}

export interface LpHolding {
  shares: bigint;
  /** Removals are refused before this time (ms). */
  lockedUntil: number;
  /** Collateral added minus collateral removed (for the holder's PnL). */
  netDeposited: bigint;
}

/** An event as a rule writes it: seq, ts and commandId are stamped by `emit`. */
export type EventInput = EngineEvent extends infer E ? (E extends EngineEvent ? Omit<E, 'seq' | 'ts' | 'commandId'> : never) : never;

export function reject(code: RejectCode, message: string, detail?: RejectDetail): Rejected {
  return detail === undefined ? { ok: false, code, message, events: [] } : { ok: false, code, message, events: [], detail };
}

export class EngineState {
  readonly instruments = new Map<string, Instrument>();
  readonly accounts = new Map<string, Account>();
  /** Every resting order of every instrument by id (shared with the books). */
  readonly orders = new Map<number, EngineOrder>();
  /** Untriggered stop and take-profit orders by id (in their instruments' trigger books, not on the books). */
  readonly triggers = new Map<number, EngineOrder>();
  /** Positions of this command that reached zero with closePosition triggers waiting (cancelled at its end). */
  readonly flattened: Position[] = [];
  readonly clientOrders = new Map<string, ClientOrderRecord>();
  /** Every withdrawal ever requested, by id: the exactly-once record of reserve → paid | failed. */
  readonly withdrawals = new Map<string, WithdrawalRecord>();
  /** Ids of the withdrawals still PENDING (the payment worker reads these, not the whole history). */
  readonly pendingWithdrawalIds = new Set<string>();
  /** Liquidity pool shares by holder. */
  readonly lps = new Map<string, LpHolding>();
  totalShares = 0n;
  /** Accounts left with negative equity that nothing could resolve yet (withdrawals pause meanwhile). */
  readonly badDebtAccounts = new Set<string>();
  /** The rules in force (ENGINE_RULES in engine-types.ts): 1 until a setRules command raises them. */
  rules = 1;
  /** Accounts with an armed dead man's switch. */
  readonly cancelAfter = new Set<Account>();
  readonly feeAccount: Account;
  readonly insurance: Account;
  readonly pool: Account;
  nextSeq = 1;
  nextOrderId = 1;
  nextOwner = 1;

  // The command being applied: its events carry its id and ts.
  events: EngineEvent[] = [];
  cmdId = '';
  cmdTs = 0;
  /** Accounts whose margin changed in this command: their liquidation triggers are re-armed at its end. */
  readonly dirty: Account[] = [];

  constructor(
    readonly defaultLeverage: number,
    feeAccount: string,
  ) {
    this.feeAccount = this.createAccount(feeAccount, true);
    this.insurance = this.createAccount(INSURANCE_ACCOUNT, true);
    this.pool = this.createAccount(POOL_ACCOUNT, false);
  }

  addInstrument(spec: InstrumentSpec): Instrument {
    const inst = new Instrument(spec, this.orders, this.defaultLeverage);
    this.instruments.set(spec.symbol, inst);
    return inst;
  }

  createAccount(address: string, system = false): Account {
    const acct = new Account(address, this.nextOwner++, system);
    this.accounts.set(address, acct);
    return acct;
  }

  materialisePosition(acct: Account, inst: Instrument): Position {
    let pos = acct.positions.get(inst.spec.symbol);
    if (pos === undefined) {
      pos = new Position(acct, inst, inst.defaultLeverage);
      acct.positions.set(inst.spec.symbol, pos);
      acct.positionList.push(pos);
      inst.positions.add(pos);
    }
    return pos;
  }

  markDirty(acct: Account): void {
    if (!acct.dirty) {
      acct.dirty = true;
      this.dirty.push(acct);
    }
  }

  linkOrder(o: EngineOrder): void {
    const acct = o.account;
    o.accPrev = acct.ordersTail;
    o.accNext = null;
    if (acct.ordersTail === null) acct.ordersHead = o;
    else acct.ordersTail.accNext = o;
    acct.ordersTail = o;
    o.position.openOrders++;
  }

  unlinkOrder(o: EngineOrder): void {
    const acct = o.account;
    if (o.accPrev === null) acct.ordersHead = o.accNext;
    else o.accPrev.accNext = o.accNext;
    if (o.accNext === null) acct.ordersTail = o.accPrev;
    else o.accNext.accPrev = o.accPrev;
    o.accPrev = o.accNext = null;
    o.position.openOrders--;
  }

  /** An open order by id: resting on a book, or an untriggered trigger order. */
  openOrder(id: number): EngineOrder | undefined {
    return this.orders.get(id) ?? this.triggers.get(id);
  }

  /** Takes an open order off its book (or out of its trigger book) with its reserve and reports it done. */
  finishOrder(o: EngineOrder, status: 'CANCELED' | 'EXPIRED', reason: DoneReason): void {
    const remaining = o.remainingLots;
    this.release(o);
    this.emitDone(o, status, reason, remaining);
  }

  /** Takes an open order out of the book or the trigger book, its account's list and its reserve. */
  release(o: EngineOrder): void {
    const t = o.trigger;
    if (t !== null && this.triggers.get(o.id) === o) {
      if (t.armed) o.position.inst.triggers.remove(o);
      this.triggers.delete(o.id);
      if (t.closePosition) o.position.closeTriggers--;
    } else {
      o.position.inst.book.remove(o);
    }
    this.unlinkOrder(o);
    o.account.reserved -= o.reservePerLot * BigInt(o.remainingLots);
  }

  /** Cancels the account's open orders (all, or on one symbol); answers their ids. */
  cancelOrdersOf(acct: Account, symbol: string | null, reason: DoneReason): number[] {
    const ids: number[] = [];
    for (let o = acct.ordersHead; o !== null; ) {
      const next = o.accNext;
      if (symbol === null || o.position.inst.spec.symbol === symbol) {
        ids.push(o.id);
        this.finishOrder(o, 'CANCELED', reason);
      }
      o = next;
    }
    return ids;
  }

  // ---------------------------------------------------------------------------------------------
  // Events.

  begin(cmd: { id: string; ts: number }): void {
    this.events = [];
    this.cmdId = cmd.id;
    this.cmdTs = cmd.ts;
  }

  end(): EngineEvent[] {
    const events = this.events;
    this.events = [];
    return events;
  }

  /** Appends an event of the current command, stamping seq, ts and commandId. */
  emit(event: EventInput): void {
    this.events.push({ seq: this.nextSeq++, ts: this.cmdTs, commandId: this.cmdId, ...event } as EngineEvent);
  }

  emitDone(o: EngineOrder, status: 'FILLED' | 'CANCELED' | 'EXPIRED', reason: DoneReason, remaining: number): void {
    this.events.push({
      seq: this.nextSeq++, ts: this.cmdTs, commandId: this.cmdId, type: 'orderDone',
      orderId: o.id, account: o.account.address, symbol: o.position.inst.spec.symbol, status, reason, filledLots: o.filledLots, remainingLots: remaining,
    });
  }

  emitPosition(p: Position): void {
    if (p.sizeLots === 0 && p.closeTriggers > 0) this.flattened.push(p);
    this.events.push({
      seq: this.nextSeq++, ts: this.cmdTs, commandId: this.cmdId, type: 'positionChanged',
      account: (p.account as Account).address, symbol: p.inst.spec.symbol, sizeLots: p.sizeLots, entryNotional: p.entryNotional,
      isolatedMargin: p.isolatedMargin, realisedPnl: p.realisedPnl, marginMode: p.mode, leverage: p.leverage,
    });
  }

  emitBalance(acct: Account, delta: bigint, reason: BalanceReason): void {
    this.events.push({ seq: this.nextSeq++, ts: this.cmdTs, commandId: this.cmdId, type: 'balanceChanged', account: acct.address, collateral: acct.collateral, delta, reason });
  }
}
