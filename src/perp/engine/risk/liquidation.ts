/**
 * Liquidation, insurance fund and auto-deleveraging (docs/perp-risk.md). Runs inside the engine,
 * deterministically, on the commands that move value without a trade: a mark update (for the accounts
 * whose trigger it crossed) and a funding payment (for the accounts it left below maintenance).
 *
 * An account is liquidatable when its maintenance margin is above zero and its equity at the mark is
 * strictly below it (cross: collateral + cross uPnL against cross MM; an isolated position against
 * its own). On trigger: its open orders are cancelled; then each position, largest first, goes:
 * - bankrupt (equity < 0): the pool takes it at the mark and the insurance fund pays the deficit when
 *   it can; otherwise auto-deleveraging closes it against the most profitable opposite positions at
 *   the bankruptcy price;
 * - below ⅔ of maintenance: the pool takes it at the bankruptcy price (backstop), or ADL if it cannot;
 * - otherwise through the book by an immediate-or-cancel order bounded by the bankruptcy price, in 20 %
 *   steps with a cooldown above PARTIAL_NOTIONAL; what the book cannot fill goes to the backstop.
 * The liquidation fee is min(rate × notional, surplus above bankruptcy), to the insurance fund.
 * Nothing happens on an instrument whose index is stale.
 */
import type { Side } from '../book/order-book.ts';
import type { TradeEvent } from '../engine-types.ts';
import { ceilDiv, floorDiv, PPM } from '../fixed-point.ts';
import { applyFill, executeFill, fillOut } from '../matching/fill.ts';
import type { MatchPlan } from '../matching/match-plan.ts';
import { poolCanTake } from '../pool/liquidity-pool.ts';
import { EngineOrder, type Account, type Instrument, type Position } from '../state/entities.ts';
import type { EngineState } from '../state/engine-state.ts';
import { armAccount, crossedAccounts } from './liquidation-index.ts';
import { abs, maintenanceMargin, totalHealth, valuation, walletBelow } from './margin.ts';

/** Positions above this notional (micro-USD) are liquidated through the book in steps (Hyperliquid: $100k). */
export const PARTIAL_NOTIONAL = 100_000n * 1_000_000n;
/** Share of the position each partial step closes (ppm). */
export const PARTIAL_STEP_PPM = 200_000n;
/** Wait after a partial step before the remainder goes at once (Hyperliquid: 30 s). */
export const PARTIAL_COOLDOWN_MS = 30_000;

/** Liquidation may act on the instrument: its index is fresh and it has a mark. */
export function indexFresh(inst: Instrument, ts: number): boolean {
  return inst.markTicks !== 0 && inst.indexTs !== 0 && ts - inst.indexTs <= inst.spec.indexStaleMs;
}

interface Health {
  equity: bigint;
  mm: bigint;
}

function crossHealthOf(acct: Account): Health {
  let equity = acct.collateral;
  let mm = 0n;
  for (const p of acct.positionList) {
    if (p.sizeLots === 0 || p.mode !== 'cross') continue;
    const { upnl, notional } = valuation(p);
    equity += upnl;
    mm += maintenanceMargin(p, notional);
  }
  return { equity, mm };
}

function isolatedHealthOf(p: Position): Health {
  const { upnl, notional } = valuation(p);
  return { equity: p.isolatedMargin + upnl, mm: maintenanceMargin(p, notional) };
}

/**
 * The price at which closing the position takes the equity to zero: mark − E / (size × unit), rounded
 * so that a close at it leaves E ≥ 0 (a long's up, a short's down), within [1, maxPriceTicks].
 */
export function bankruptcyTicks(p: Position, equity: bigint): number {
  const mark = BigInt(p.inst.markTicks);
  const per = BigInt(p.sizeLots) * p.inst.unit;
  const b = p.sizeLots > 0 ? mark - floorDiv(equity, per) : mark + floorDiv(equity, -per);
  const max = BigInt(p.inst.spec.maxPriceTicks);
  return Number(b < 1n ? 1n : b > max ? max : b);
}

/** Moves `lots` of `from` to `to` at `priceTicks`, no fee: the pool's takeover, one ADL match, or a split's remainder. */
export function transfer(s: EngineState, from: Position, to: Position, lots: number, priceTicks: number, reason: 'liquidation' | 'adl' | 'split'): bigint {
  const inst = from.inst;
  const notional = BigInt(lots) * BigInt(priceTicks) * inst.unit;
  const a = from.account as Account;
  const b = to.account as Account;
  const fromBuys = from.sizeLots < 0;
  const ra = applyFill(from, fromBuys, lots, notional);
  const da = ra - fillOut.bucketIn;
  const rb = applyFill(to, !fromBuys, lots, notional);
  const db = rb - fillOut.bucketIn;
  a.collateral += da;
  a.realisedPnl += ra;
  from.realisedPnl += ra;
  b.collateral += db;
  b.realisedPnl += rb;
  to.realisedPnl += rb;
  s.markDirty(a);
  s.markDirty(b);
  s.emitPosition(from);
  s.emitBalance(a, da, reason);
  s.emitPosition(to);
  s.emitBalance(b, db, reason);
  return rb;
}

/**
 * ADL ranking (Hyperliquid's score): (mark / entry) · (notional / equity) for a long, (entry / mark)
 * · (notional / equity) for a short; most profitable and most leveraged first, account address
 * breaking ties. Compared exactly as fractions. An account without positive equity ranks last.
 */
function adlScore(p: Position): { num: bigint; den: bigint } {
  const { notional } = valuation(p);
  const n = abs(notional);
  const acct = p.account as Account;
  const equity = p.mode === 'isolated' ? p.isolatedMargin + valuation(p).upnl : crossHealthOf(acct).equity;
  if (equity <= 0n || p.entryNotional === 0n) return { num: -1n, den: 1n };
  return p.sizeLots > 0 ? { num: n * n, den: p.entryNotional * equity } : { num: p.entryNotional, den: equity };
}

/**
 * The price one ADL counterparty closes `lots` at: `priceTicks`, but when that is worse than the mark
 * for it (a bankrupt account's Pb), no further past the mark than its equity (its own for an isolated
 * position, never more than the whole account's) can bear. The bankruptcy price spreads the account's
 * whole deficit, losses on its other instruments included (one with a stale index is not liquidated),
 * over this instrument's counterparties; uncapped, it can take one of them below zero, where nothing
 * records it. What the counterparties cannot bear stays with the bankrupt account: the insurance fund
 * pays it, or it is open bad debt.
 */
function adlPriceFor(q: Position, lots: number, priceTicks: number): number {
  const mark = q.inst.markTicks;
  const buys = q.sizeLots < 0;
  const adverse = buys ? priceTicks - mark : mark - priceTicks;
  if (adverse <= 0) return priceTicks;
  const acct = q.account as Account;
  const own = q.mode === 'isolated' ? q.isolatedMargin + valuation(q).upnl : crossHealthOf(acct).equity;
  const total = totalHealth(acct).equity;
  const equity = own < total ? own : total;
  const room = equity <= 0n ? 0n : equity / (BigInt(lots) * q.inst.unit);
  if (room >= BigInt(adverse)) return priceTicks;
  return buys ? mark + Number(room) : mark - Number(room);
}

/** Closes `lots` of `p` against the ranked opposite positions at `priceTicks` (capped per counterparty by adlPriceFor). Answers the lots closed. */
function deleverage(s: EngineState, p: Position, lots: number, priceTicks: number): number {
  const inst = p.inst;
  const owner = p.account as Account;
  const wantLong = p.sizeLots < 0;
  const ranked: Array<{ pos: Position; num: bigint; den: bigint }> = [];
  for (const q of inst.positions) {
    if (q.account === null || q.account === owner || q.account.system) continue;
    if (wantLong ? q.sizeLots <= 0 : q.sizeLots >= 0) continue;
    ranked.push({ pos: q, ...adlScore(q) });
  }
  ranked.sort((x, y) => {
    const l = x.num * y.den;
    const r = y.num * x.den;
    if (l !== r) return l > r ? -1 : 1;
    const ax = (x.pos.account as Account).address;
    const ay = (y.pos.account as Account).address;
    return ax < ay ? -1 : ax > ay ? 1 : 0;
  });
  let left = lots;
  for (const r of ranked) {
    if (left === 0) break;
    const size = r.pos.sizeLots < 0 ? -r.pos.sizeLots : r.pos.sizeLots;
    const q = size < left ? size : left;
    const price = adlPriceFor(r.pos, q, priceTicks);
    const realised = transfer(s, p, r.pos, q, price, 'adl');
    s.emit({ type: 'adl', account: (r.pos.account as Account).address, symbol: inst.spec.symbol, counterparty: owner.address, sizeLots: q, priceTicks: price, realisedPnl: realised });
    left -= q;
  }
  return lots - left;
}

/** The pool takes `lots` at `priceTicks` if it can keep its margin, else ADL does. */
function backstop(s: EngineState, p: Position, lots: number, priceTicks: number): { method: 'BACKSTOP' | 'ADL'; closed: number } {
  const side: Side = p.sizeLots > 0 ? 'BUY' : 'SELL';
  if ((p.account as Account) !== s.pool && s.totalShares > 0n && poolCanTake(s, p.inst, side, lots, priceTicks)) {
    const poolPos = s.materialisePosition(s.pool, p.inst);
    transfer(s, p, poolPos, lots, priceTicks, 'liquidation');
    return { method: 'BACKSTOP', closed: lots };
  }
  return { method: 'ADL', closed: deleverage(s, p, lots, priceTicks) };
}

/** Closes up to `lots` through the book with an IOC order bounded by `limit`; answers the fills. */
function closeThroughBook(s: EngineState, plan: MatchPlan, p: Position, lots: number, limit: number): { orderId: number; filled: number; notional: bigint } {
  const inst = p.inst;
  const acct = p.account as Account;
  const side: Side = p.sizeLots > 0 ? 'SELL' : 'BUY';
  const remaining = plan.build(inst, acct, side, limit, lots);
  const orderId = s.nextOrderId++;
  const order = new EngineOrder(orderId, side, limit, lots, acct, p, 'LIMIT', 'IOC', lots, true, null, s.cmdTs);
  s.emit({
    type: 'orderAccepted', orderId, account: acct.address, symbol: inst.spec.symbol, side, orderType: 'LIMIT', timeInForce: 'IOC',
    priceTicks: limit, sizeLots: lots, requestedSizeLots: lots, reduceOnly: true, clientOrderId: null, liquidation: true,
  });
  const before = acct.collateral;
  const feeBefore = s.feeAccount.collateral;
  let notional = 0n;
  const fills: TradeEvent[] = [];
  for (let i = 0; i < plan.n; i++) {
    const q = plan.fillLots[i];
    if (q > 0) fills.push(executeFill(s, inst, order, plan.makers[i], q, 0n));
    if (plan.cancel[i]) s.finishOrder(plan.makers[i], 'EXPIRED', 'REDUCE_ONLY');
  }
  plan.reset();
  for (const f of fills) notional += f.notional;
  const filled = lots - remaining;
  if (remaining === 0) s.emitDone(order, 'FILLED', 'FILLED', 0);
  else s.emitDone(order, 'EXPIRED', 'IOC_REMAINDER', remaining);
  if (filled > 0) {
    s.emitPosition(p);
    s.emitBalance(acct, acct.collateral - before, 'trade');
    const fees = s.feeAccount.collateral - feeBefore;
    if (fees !== 0n) s.emitBalance(s.feeAccount, fees, 'fee');
  }
  return { orderId, filled, notional };
}

function payFee(s: EngineState, acct: Account, fee: bigint): void {
  if (fee <= 0n) return;
  acct.collateral -= fee;
  acct.liquidationFees += fee;
  s.insurance.collateral += fee;
  s.insurance.liquidationFees -= fee;
  // Money in the fund: open bad debt is settled again after this round (rules 3, rearmDirty).
  s.markDirty(s.insurance);
  s.emitBalance(acct, -fee, 'liquidationFee');
  s.emitBalance(s.insurance, fee, 'liquidationFee');
  s.emit({ type: 'insurance', reason: 'liquidationFee', account: acct.address, delta: fee, balance: s.insurance.collateral });
}

/** One position's liquidation step; `health` is the equity and MM it is judged by (cross or its own). */
function liquidatePosition(s: EngineState, plan: MatchPlan, p: Position, health: Health, ts: number): void {
  const inst = p.inst;
  const acct = p.account as Account;
  const size = p.sizeLots < 0 ? -p.sizeLots : p.sizeLots;
  const { notional } = valuation(p);
  const bankrupt = health.equity < 0n;
  const pb = bankruptcyTicks(p, health.equity);
  const base = {
    type: 'liquidation' as const, account: acct.address, symbol: inst.spec.symbol, positionLots: p.sizeLots,
    markPriceTicks: inst.markTicks, bankruptcyPriceTicks: pb, equity: health.equity, maintenanceMargin: health.mm,
  };
  if (bankrupt) {
    // Taken at the mark, the deficit is −equity: the fund pays it if it can, else ADL at bankruptcy.
    const side: Side = p.sizeLots > 0 ? 'BUY' : 'SELL';
    const canFund = s.insurance.collateral >= -health.equity;
    if (canFund && acct !== s.pool && s.totalShares > 0n && poolCanTake(s, inst, side, size, inst.markTicks)) {
      transfer(s, p, s.materialisePosition(s.pool, inst), size, inst.markTicks, 'liquidation');
      s.emit({ ...base, method: 'BACKSTOP', closedLots: size, orderId: null, fee: 0n });
    } else {
      const closed = deleverage(s, p, size, pb);
      s.emit({ ...base, method: 'ADL', closedLots: closed, orderId: null, fee: 0n });
    }
    return;
  }
  if (3n * health.equity < 2n * health.mm) {
    const r = backstop(s, p, size, pb);
    s.emit({ ...base, method: r.method, closedLots: r.closed, orderId: null, fee: 0n });
    return;
  }
  let lots = size;
  if (acct.lastLiquidationTs !== 0) {
    // A partial step was taken: wait out its cooldown, then the rest goes at once.
    if (ts - acct.lastLiquidationTs < PARTIAL_COOLDOWN_MS) return;
  } else if (abs(notional) > PARTIAL_NOTIONAL) {
    lots = Number(ceilDiv(BigInt(size) * PARTIAL_STEP_PPM, PPM));
    if (lots < inst.spec.minSizeLots) lots = Math.min(size, inst.spec.minSizeLots);
    if (lots < size) acct.lastLiquidationTs = ts;
  }
  const book = closeThroughBook(s, plan, p, lots, pb);
  // Surplus above bankruptcy of what filled: a long sold above pb, a short bought below it.
  const atBankruptcy = BigInt(book.filled) * BigInt(pb) * inst.unit;
  const surplus = base.positionLots > 0 ? book.notional - atBankruptcy : atBankruptcy - book.notional;
  const rated = ceilDiv(book.notional * BigInt(inst.spec.liquidationFeePpm), PPM);
  const fee = book.filled === 0 ? 0n : rated < surplus ? rated : surplus > 0n ? surplus : 0n;
  payFee(s, acct, fee);
  s.emit({ ...base, method: 'BOOK', closedLots: book.filled, orderId: book.orderId, fee });
  const left = lots - book.filled;
  if (left > 0) {
    const r = backstop(s, p, left, pb);
    s.emit({ ...base, method: r.method, closedLots: r.closed, orderId: null, fee: 0n, positionLots: base.positionLots > 0 ? left : -left });
  }
}

function openDebt(s: EngineState, acct: Account, amount: bigint): void {
  if (s.badDebtAccounts.has(acct.address)) return;
  s.badDebtAccounts.add(acct.address);
  s.emit({ type: 'badDebt', account: acct.address, amount, status: 'OPEN' });
}

function resolveDebt(s: EngineState, acct: Account): void {
  if (s.badDebtAccounts.delete(acct.address)) s.emit({ type: 'badDebt', account: acct.address, amount: 0n, status: 'RESOLVED' });
}

/**
 * After a liquidation pass: an account still holding positions with negative equity (its index was
 * stale) is recorded as open bad debt; a flat one's negative collateral is paid by the insurance fund,
 * and what the fund cannot pay stays open. Withdrawals pause while any bad debt is open.
 */
function settleDebt(s: EngineState, acct: Account): void {
  let equity = acct.collateral;
  let open = false;
  for (const p of acct.positionList) {
    if (p.sizeLots === 0) continue;
    open = true;
    equity += valuation(p).upnl + p.isolatedMargin;
  }
  if (open) {
    if (equity < 0n) openDebt(s, acct, -equity);
    else resolveDebt(s, acct);
    return;
  }
  acct.lastLiquidationTs = 0;
  if (acct.collateral >= 0n) {
    resolveDebt(s, acct);
    return;
  }
  const debt = -acct.collateral;
  const fund = s.insurance.collateral > 0n ? s.insurance.collateral : 0n;
  const pay = fund < debt ? fund : debt;
  if (pay > 0n) {
    s.insurance.collateral -= pay;
    s.insurance.badDebt -= pay;
    acct.collateral += pay;
    acct.badDebt += pay;
    s.emitBalance(s.insurance, -pay, 'badDebt');
    s.emitBalance(acct, pay, 'badDebt');
    s.emit({ type: 'insurance', reason: 'badDebt', account: acct.address, delta: -pay, balance: s.insurance.collateral });
  }
  if (acct.collateral < 0n) openDebt(s, acct, -acct.collateral);
  else resolveDebt(s, acct);
}

/** Liquidates what is liquidatable of one account, on instruments with a fresh index. */
export function liquidateAccount(s: EngineState, plan: MatchPlan, acct: Account, ts: number): void {
  if (acct.system) return;
  let cancelled = false;
  const cancelFirst = () => {
    if (!cancelled && acct.ordersHead !== null) s.cancelOrdersOf(acct, null, 'LIQUIDATION');
    cancelled = true;
  };
  // Isolated positions first: each is its own account.
  for (const p of acct.positionList) {
    if (p.sizeLots === 0 || p.mode !== 'isolated' || !indexFresh(p.inst, ts)) continue;
    const h = isolatedHealthOf(p);
    if (h.mm === 0n || h.equity >= h.mm) continue;
    cancelFirst();
    liquidatePosition(s, plan, p, h, ts);
  }
  // Then the cross positions, largest notional first, until the account is healthy again.
  const cross = acct.positionList.filter((p) => p.sizeLots !== 0 && p.mode === 'cross');
  cross.sort((a, b) => {
    const na = abs(valuation(a).notional);
    const nb = abs(valuation(b).notional);
    return na !== nb ? (na > nb ? -1 : 1) : a.inst.spec.symbol < b.inst.spec.symbol ? -1 : 1;
  });
  for (const p of cross) {
    if (p.sizeLots === 0 || !indexFresh(p.inst, ts)) continue;
    const h = crossHealthOf(acct);
    if (h.mm === 0n || h.equity >= h.mm) break;
    cancelFirst();
    liquidatePosition(s, plan, p, h, ts);
  }
  // A negative wallet the cross positions could not restore: the account is judged as a whole, its
  // isolated positions included, largest first.
  if (acct.collateral < 0n) {
    const rest = acct.positionList.filter((p) => p.sizeLots !== 0);
    rest.sort((a, b) => {
      const na = abs(valuation(a).notional);
      const nb = abs(valuation(b).notional);
      return na !== nb ? (na > nb ? -1 : 1) : a.inst.spec.symbol < b.inst.spec.symbol ? -1 : 1;
    });
    for (const p of rest) {
      if (p.sizeLots === 0 || !indexFresh(p.inst, ts)) continue;
      const h = totalHealth(acct);
      if (h.mm === 0n || h.equity >= h.mm) break;
      cancelFirst();
      liquidatePosition(s, plan, p, h, ts);
    }
  }
  settleDebt(s, acct);
  s.markDirty(acct);
}

/**
 * The liquidation sweep of a command: the accounts given (crossed triggers, or funded ones) are
 * checked exactly, in address order, and liquidated when below maintenance; every account the
 * liquidations touch is re-armed, and those now below maintenance join the next round. Each account
 * is liquidated at most once per command, so a cascade ends within as many rounds as accounts.
 */
export function sweep(s: EngineState, plan: MatchPlan, candidates: Set<Account>, ts: number): void {
  const done = new Set<Account>();
  let round = [...candidates];
  while (round.length > 0) {
    round.sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
    for (const acct of round) {
      if (done.has(acct)) continue;
      done.add(acct);
      s.markDirty(acct);
      const h = crossHealthOf(acct);
      let below = h.mm > 0n && h.equity < h.mm;
      if (!below) {
        for (const p of acct.positionList) {
          if (p.sizeLots === 0 || p.mode !== 'isolated') continue;
          const ih = isolatedHealthOf(p);
          if (ih.mm > 0n && ih.equity < ih.mm) below = true;
        }
      }
      if (below || walletBelow(acct) || s.badDebtAccounts.has(acct.address)) liquidateAccount(s, plan, acct, ts);
    }
    // Re-arm what changed; accounts now below maintenance go round again (once each).
    round = [];
    for (const a of rearmDirty(s)) if (!done.has(a)) round.push(a);
  }
}

/**
 * Re-arms the command's dirty accounts; answers those the sweep must check now: below maintenance,
 * and (rules 3) those with open bad debt that money may now pay (ENGINE_RULES in engine-types.ts).
 */
export function rearmDirty(s: EngineState): Account[] {
  const below: Account[] = [];
  const dirty = s.dirty;
  const debts = s.badDebtAccounts.size !== 0 && s.rules >= 2;
  let fundChanged = false;
  for (let i = 0; i < dirty.length; i++) {
    const a = dirty[i];
    a.dirty = false;
    if (a === s.insurance) fundChanged = true;
    // Rules 2: an account with open bad debt triggers at every mark update of its instruments.
    const openDebt = debts && s.badDebtAccounts.has(a.address);
    // Rules 3: and its own account changed (a deposit to it): settle its debt again.
    if (armAccount(a, openDebt) || (openDebt && s.rules >= 3)) below.push(a);
  }
  dirty.length = 0;
  // Rules 3: the fund changed and holds money: every open debt is settled again, in address order
  // (the sweep's), each at most once in the command (the sweep's own rule).
  if (debts && s.rules >= 3 && fundChanged && s.insurance.collateral > 0n) {
    for (const address of [...s.badDebtAccounts].sort()) {
      const a = s.accounts.get(address);
      if (a !== undefined && !below.includes(a)) below.push(a);
    }
  }
  return below;
}

/** Accounts whose trigger on `inst` the current mark has crossed. */
export function crossedBy(inst: Instrument): Set<Account> {
  const out = new Set<Account>();
  crossedAccounts(inst, inst.markTicks, out);
  return out;
}
