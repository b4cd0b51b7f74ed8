/**
 * The engine's complete state as canonical JSON-safe data (sorted, bigints as decimal strings), and
 * back. Equal snapshots mean equal states: `stateHash` is the sha256 of this text, and the journal's
 * replay is checked against it. Derived structures (the books' indexes, the liquidation triggers)
 * are rebuilt on restore, never stored.
 */
import { createHash } from 'node:crypto';
import { OrderBook } from './book/order-book.ts';
import { configOf } from './commands/instrument-commands.ts';
import { ENGINE_RULES, type AccountSnapshot, type EngineSnapshot, type OrderSnapshot } from './engine-types.ts';
import { instrumentSpec } from './instruments.ts';
import { armAccount } from './risk/liquidation-index.ts';
import { imrFor } from './risk/margin-rates.ts';
import { EngineOrder } from './state/entities.ts';
import { armTrigger } from './commands/place-order-command.ts';
import { isTriggerType, triggersOnRise } from '@tokex/contract';
import { EngineState } from './state/engine-state.ts';

const byString = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

export function snapshotOf(s: EngineState): EngineSnapshot {
  const instruments = [...s.instruments.values()].map((i) => ({
    config: configOf(i.spec), markPriceTicks: i.markTicks, indexPriceTicks: i.indexTicks, markTs: i.markTs, indexTs: i.indexTs,
    lastTradePriceTicks: i.lastTradeTicks, lastFundingTs: i.lastFundingTs, lastFundingRateE9: i.lastFundingRateE9.toString(),
    // Only when set: a snapshot of an engine that never saw a closed market or a split is what it was before these existed.
    ...(i.marketClosed ? { marketClosed: true as const } : {}),
    ...(i.splits.size > 0 ? { splits: [...i.splits].sort(byString) } : {}),
  }));
  const accounts: AccountSnapshot[] = [...s.accounts.values()]
    .sort((a, b) => byString(a.address, b.address))
    .map((a) => ({
      account: a.address, collateral: a.collateral.toString(), reserved: a.reserved.toString(), deposited: a.deposited.toString(),
      withdrawn: a.withdrawn.toString(), realisedPnl: a.realisedPnl.toString(), feesPaid: a.feesPaid.toString(),
      feesReceived: a.feesReceived.toString(), funding: a.funding.toString(), pendingWithdrawals: a.pendingWithdrawals.toString(),
      liquidationFees: a.liquidationFees.toString(), badDebt: a.badDebt.toString(), liquidity: a.liquidity.toString(),
      lastLiquidationTs: a.lastLiquidationTs, cancelAfterTs: a.cancelAfterTs,
      positions: [...a.positions.values()]
        .sort((x, y) => byString(x.inst.spec.symbol, y.inst.spec.symbol))
        .map((p) => ({
          symbol: p.inst.spec.symbol, sizeLots: p.sizeLots, entryNotional: p.entryNotional.toString(), isolatedMargin: p.isolatedMargin.toString(),
          marginMode: p.mode, leverage: p.leverage, realisedPnl: p.realisedPnl.toString(), funding: p.funding.toString(),
        })),
    }));
  const orders: OrderSnapshot[] = [...s.orders.values(), ...s.triggers.values()]
    .sort((a, b) => a.id - b.id)
    .map((o) => ({
      orderId: o.id, account: o.account.address, symbol: o.position.inst.spec.symbol, side: o.side, type: o.type, timeInForce: o.timeInForce,
      priceTicks: o.priceTicks, sizeLots: o.sizeLots, filledLots: o.filledLots, remainingLots: o.remainingLots, reduceOnly: o.reduceOnly,
      clientOrderId: o.clientOrderId, reservePerLot: o.reservePerLot.toString(), createdTs: o.createdTs,
      // Only on a waiting trigger order: a snapshot without triggers is what it was before they existed.
      ...(o.trigger !== null ? { trigger: { priceTicks: o.trigger.priceTicks, by: o.trigger.by, closePosition: o.trigger.closePosition } } : {}),
    }));
  const clientOrders = [...s.clientOrders.values()]
    .map((r) => ({ account: r.account, clientOrderId: r.clientOrderId, orderId: r.orderId, status: r.status, sizeLots: r.sizeLots, filledLots: r.filledLots, remainingLots: r.remainingLots }))
    .sort((a, b) => byString(a.account, b.account) || byString(a.clientOrderId, b.clientOrderId));
  const withdrawals = [...s.withdrawals.values()]
    // `forced` only when set: a snapshot without forced withdrawals is what it was before they existed.
    .map((w) => ({ withdrawalId: w.withdrawalId, account: w.account, amount: w.amount.toString(), status: w.status, requestedTs: w.requestedTs, ...(w.forced ? { forced: true as const } : {}) }))
    .sort((a, b) => byString(a.withdrawalId, b.withdrawalId));
  const lps = [...s.lps.entries()]
    .map(([account, h]) => ({ account, shares: h.shares.toString(), lockedUntil: h.lockedUntil, netDeposited: h.netDeposited.toString() }))
    .sort((a, b) => byString(a.account, b.account));
  return {
    version: 2, nextSeq: s.nextSeq, nextOrderId: s.nextOrderId, feeAccount: s.feeAccount.address, defaultLeverage: s.defaultLeverage,
    instruments, accounts, orders, clientOrders, withdrawals, totalShares: s.totalShares.toString(), lps, badDebtAccounts: [...s.badDebtAccounts].sort(byString),
    // Only past the first: a snapshot from before rule versions hashes as it always did.
    ...(s.rules !== 1 ? { rules: s.rules } : {}),
  };
}

export function stateHashOf(s: EngineState): string {
  return createHash('sha256').update(JSON.stringify(snapshotOf(s))).digest('hex');
}

/** A state exactly as `snap` describes it. Throws on a snapshot that is not self-consistent. */
export function restoreState(snap: EngineSnapshot): EngineState {
  if (snap?.version !== 2) throw new Error('engine snapshot: unsupported version');
  const s = new EngineState(snap.defaultLeverage, snap.feeAccount);
  s.nextSeq = snap.nextSeq;
  s.nextOrderId = snap.nextOrderId;
  // Rules 1 are written as none; a snapshot under rules this engine does not know is a newer release's.
  if (snap.rules !== undefined && !(Number.isSafeInteger(snap.rules) && snap.rules >= 2 && snap.rules <= ENGINE_RULES)) {
    throw new Error(`engine snapshot: rules ${String(snap.rules)}, where this engine knows 1..${ENGINE_RULES}`);
  }
  s.rules = snap.rules ?? 1;
  for (const i of snap.instruments) {
    const inst = s.addInstrument(instrumentSpec(i.config));
    inst.markTicks = i.markPriceTicks;
    inst.indexTicks = i.indexPriceTicks;
    inst.markTs = i.markTs;
    inst.indexTs = i.indexTs;
    inst.lastTradeTicks = i.lastTradePriceTicks;
    inst.lastFundingTs = i.lastFundingTs;
    inst.lastFundingRateE9 = BigInt(i.lastFundingRateE9);
    inst.marketClosed = i.marketClosed === true;
    for (const id of i.splits ?? []) inst.splits.add(id);
  }
  for (const a of snap.accounts) {
    const acct = s.accounts.get(a.account) ?? s.createAccount(a.account);
    acct.collateral = BigInt(a.collateral);
    acct.deposited = BigInt(a.deposited);
    acct.withdrawn = BigInt(a.withdrawn);
    acct.realisedPnl = BigInt(a.realisedPnl);
    acct.feesPaid = BigInt(a.feesPaid);
    acct.feesReceived = BigInt(a.feesReceived);
    acct.funding = BigInt(a.funding);
    acct.pendingWithdrawals = BigInt(a.pendingWithdrawals);
    acct.liquidationFees = BigInt(a.liquidationFees);
    acct.badDebt = BigInt(a.badDebt);
    acct.liquidity = BigInt(a.liquidity);
    acct.lastLiquidationTs = a.lastLiquidationTs;
    acct.cancelAfterTs = a.cancelAfterTs;
    if (acct.cancelAfterTs !== 0) s.cancelAfter.add(acct);
    for (const p of a.positions) {
      const inst = s.instruments.get(p.symbol);
      if (inst === undefined) throw new Error(`engine snapshot: position on unknown ${p.symbol}`);
      const pos = s.materialisePosition(acct, inst);
      pos.sizeLots = p.sizeLots;
      pos.entryNotional = BigInt(p.entryNotional);
      pos.isolatedMargin = BigInt(p.isolatedMargin);
      pos.mode = p.marginMode;
      pos.leverage = p.leverage;
      pos.imrPpm = imrFor(inst.spec, p.leverage);
      pos.realisedPnl = BigInt(p.realisedPnl);
      pos.funding = BigInt(p.funding);
    }
  }
  let lastId = 0;
  for (const o of snap.orders) {
    if (o.orderId <= lastId || o.orderId >= snap.nextOrderId) throw new Error('engine snapshot: orders out of order');
    lastId = o.orderId;
    const acct = s.accounts.get(o.account);
    const inst = s.instruments.get(o.symbol);
    if (acct === undefined || inst === undefined) throw new Error(`engine snapshot: order ${o.orderId} of an unknown account or symbol`);
    const pos = s.materialisePosition(acct, inst);
    const order = new EngineOrder(o.orderId, o.side, o.priceTicks, o.remainingLots, acct, pos, o.type, o.timeInForce, o.sizeLots, o.reduceOnly, o.clientOrderId, o.createdTs);
    order.filledLots = o.filledLots;
    order.reservePerLot = BigInt(o.reservePerLot);
    if (o.trigger !== undefined) {
      if (!isTriggerType(o.type)) throw new Error(`engine snapshot: order ${o.orderId} of type ${o.type} has a trigger`);
      order.trigger = { priceTicks: o.trigger.priceTicks, by: o.trigger.by, rise: triggersOnRise(o.type, o.side), closePosition: o.trigger.closePosition, armed: true };
      armTrigger(s, order);
      continue;
    }
    const best = inst.book.oppositeOf(o.side).best();
    if (best !== undefined && OrderBook.crosses(o.side, o.priceTicks, best.priceTicks)) throw new Error(`engine snapshot: order ${o.orderId} crosses the book`);
    inst.book.add(order);
    s.linkOrder(order);
    acct.reserved += order.reservePerLot * BigInt(order.remainingLots);
  }
  for (const a of snap.accounts) {
    if ((s.accounts.get(a.account) as { reserved: bigint }).reserved !== BigInt(a.reserved)) throw new Error(`engine snapshot: reserve of ${a.account} does not match its orders`);
  }
  for (const r of snap.clientOrders) s.clientOrders.set(r.account + '\n' + r.clientOrderId, { ...r });
  for (const w of snap.withdrawals) {
    s.withdrawals.set(w.withdrawalId, { ...w, amount: BigInt(w.amount) });
    if (w.status === 'PENDING') s.pendingWithdrawalIds.add(w.withdrawalId);
  }
  s.totalShares = BigInt(snap.totalShares);
  for (const l of snap.lps) s.lps.set(l.account, { shares: BigInt(l.shares), lockedUntil: l.lockedUntil, netDeposited: BigInt(l.netDeposited) });
  for (const a of snap.badDebtAccounts) s.badDebtAccounts.add(a);
  for (const acct of s.accounts.values()) armAccount(acct, s.rules >= 2 && s.badDebtAccounts.has(acct.address));
  return s;
}
