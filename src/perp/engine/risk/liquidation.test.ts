/**
 * Liquidation, the insurance fund, the backstop pool and ADL on hand-computed examples (the rules:
 * docs/perp-risk.md). Instrument X: 1 tick = 1 USD, 1 lot = 1 unit, IM 5 %, MM 2.5 %, taker 0.05 %,
 * maker 0.02 %, liquidation fee 0.5 %, no price band.
 */
import { describe, expect, it } from 'vitest';
import type { EngineCommand, EngineEvent, LiquidationEvent, PlaceOrderAccepted } from '../engine-types.ts';
import { INSURANCE_ACCOUNT, PerpEngine, POOL_ACCOUNT } from '../perp-engine.ts';
import { xUsdInstrument, addr } from '../../../../test/support/perp-test-instrument.ts';

const X = xUsdInstrument({ markStaleMs: 0, indexStaleMs: 30_000, liquidationFeePpm: 5_000 });
const A = addr('a');
const M = addr('d');
const M2 = addr('e');
const LP = addr('f');
const usd = (d: number): bigint => BigInt(Math.round(d * 1_000_000));

type Cmd = EngineCommand extends infer U ? (U extends EngineCommand ? Omit<U, 'id' | 'ts'> : never) : never;

function setup() {
  const e = new PerpEngine({ instruments: [X] });
  let n = 0;
  let ts = 1_000_000;
  const run = (c: Cmd, dt = 1_000) => {
    ts += dt;
    return e.apply({ id: `c${++n}`, ts, ...c } as EngineCommand);
  };
  const deposit = (account: string, dollars: number) => run({ kind: 'deposit', account, amount: usd(dollars) });
  const limit = (account: string, side: 'BUY' | 'SELL', sizeLots: number, priceTicks: number) =>
    run({ kind: 'placeOrder', account, symbol: 'X-USD', side, type: 'LIMIT', priceTicks, sizeLots }) as PlaceOrderAccepted;
  const mark = (ticks: number, dt = 1_000, indexAge = 0) => run({ kind: 'setMarkPrice', symbol: 'X-USD', markPriceTicks: ticks, indexPriceTicks: ticks, indexTs: ts + dt - indexAge }, dt);
  const collateral = (a: string) => e.getAccount(a)!.collateral;
  const size = (a: string) => e.getAccount(a)?.positions.find((p) => p.symbol === 'X-USD')?.sizeLots ?? 0;
  return { e, run, deposit, limit, mark, collateral, size, now: () => ts };
}

const liquidations = (events: EngineEvent[]) => events.filter((x): x is LiquidationEvent => x.type === 'liquidation');

/** A with `dollars` of collateral at 20× leverage buys `lots` at 100 from the ask of M ($1M), the mark at 100. */
function longFromM(s: ReturnType<typeof setup>, dollars: number, lots: number): PlaceOrderAccepted {
  s.deposit(M, 1_000_000);
  s.deposit(A, dollars);
  s.run({ kind: 'setLeverage', account: A, symbol: 'X-USD', leverage: 20 });
  s.mark(100);
  s.limit(M, 'SELL', lots, 100);
  return s.limit(A, 'BUY', lots, 100);
}

/** A: $1,000 long 190 at 100 (19,000 notional, 19.0× leverage) against M's ask. */
function longAt100(s: ReturnType<typeof setup>) {
  expect(longFromM(s, 1_000, 190).fills.length).toBe(1);
  expect(s.collateral(A)).toBe(usd(990.5)); // 9.5 taker fee
}

describe('liquidation through the book', () => {
  it('cancels the account\'s orders, sells at the best bid above bankruptcy and charges min(0.5 % of notional, surplus) to the fund', () => {
    const s = setup();
    longAt100(s);
    // A reduce-only take-profit, to be cancelled by the liquidation.
    const resting = s.run({ kind: 'placeOrder', account: A, symbol: 'X-USD', side: 'SELL', type: 'LIMIT', priceTicks: 150, sizeLots: 10, reduceOnly: true }) as PlaceOrderAccepted;
    s.limit(M, 'BUY', 300, 96);
    // Mark 97: equity 990.5 − 570 = 420.5 < MM 2.5 % × 18,430 = 460.75; above ⅔ MM: the book path.
    const r = s.mark(97);
    expect(r.ok).toBe(true);
    const liq = liquidations(r.events);
    expect(liq).toHaveLength(1);
    // Bankruptcy 97 − 420.5 / 190 = 94.79, rounded up to 95; fills at 96; surplus 190 × (96 − 95) = 190; fee 0.5 % × 18,240 = 91.2.
    expect(liq[0]).toMatchObject({ account: A, method: 'BOOK', positionLots: 190, closedLots: 190, bankruptcyPriceTicks: 95, fee: usd(91.2), equity: usd(420.5), maintenanceMargin: usd(460.75) });
    const cancel = r.events.find((x) => x.type === 'orderDone' && x.orderId === resting.order.orderId);
    expect(cancel).toMatchObject({ status: 'CANCELED', reason: 'LIQUIDATION' });
    const accepted = r.events.find((x) => x.type === 'orderAccepted');
    expect(accepted).toMatchObject({ account: A, side: 'SELL', timeInForce: 'IOC', priceTicks: 95, reduceOnly: true, liquidation: true });
    expect(s.size(A)).toBe(0);
    // 990.5 − 760 realised − 91.2 fee; the liquidation order pays no taker fee.
    expect(s.collateral(A)).toBe(usd(139.3));
    expect(s.e.insuranceFund()).toMatchObject({ balance: usd(91.2), feesReceived: usd(91.2), badDebtPaid: 0n });
    expect(s.e.getAccount(INSURANCE_ACCOUNT)!.collateral).toBe(usd(91.2));
  });

  it('takes a position above $100k in a 20 % step, waits the cooldown, then closes the rest at once', () => {
    const s = setup();
    longFromM(s, 6_000, 1_100);
    s.limit(M, 'BUY', 2_000, 96);
    // Mark 97: equity 5,945 − 3,300 = 2,645 < MM 2,667.5, notional 106,700 > 100k: 20 % = 220 lots.
    const first = liquidations(s.mark(97).events);
    expect(first).toEqual([expect.objectContaining({ method: 'BOOK', closedLots: 220, bankruptcyPriceTicks: 95, fee: usd(105.6) })]);
    expect(s.size(A)).toBe(880);
    // Healthy again at 97; at 96 within the cooldown it waits, though below maintenance.
    expect(liquidations(s.mark(97).events)).toEqual([]);
    expect(liquidations(s.mark(96, 5_000).events)).toEqual([]);
    expect(s.e.marginSummary(A)!.liquidatable).toBe(true);
    // After 30 s: the remaining 880 at once, bankruptcy 96 − 1,439.4 / 880 → 95, fee min(422.4, 880).
    const rest = liquidations(s.mark(96, 25_000).events);
    expect(rest).toEqual([expect.objectContaining({ method: 'BOOK', closedLots: 880, positionLots: 880, bankruptcyPriceTicks: 95, fee: usd(422.4) })]);
    expect(s.size(A)).toBe(0);
    expect(s.e.insuranceFund().balance).toBe(usd(528));
  });

  it('pauses on a stale index and acts on the next fresh one', () => {
    const s = setup();
    longAt100(s);
    s.limit(M, 'BUY', 300, 96);
    // No index for 35 s: the mark moves on the book alone, and nothing is liquidated on it.
    expect(liquidations(s.mark(97, 35_000, 35_000).events)).toEqual([]);
    expect(s.e.liquidationActive('X-USD', s.now())).toBe(false);
    expect(s.size(A)).toBe(190);
    expect(liquidations(s.mark(97).events)).toHaveLength(1);
    expect(s.size(A)).toBe(0);
  });
});

describe('backstop and ADL', () => {
  it('below two thirds of maintenance the pool takes the position at the bankruptcy price', () => {
    const s = setup();
    longAt100(s);
    s.deposit(LP, 100_000);
    s.run({ kind: 'addLiquidity', account: LP, amount: usd(100_000), lockupMs: 0 });
    // Mark 96: equity 230.5 < ⅔ × MM 456 = 304: bankruptcy 96 − 230.5 / 190 → 95.
    const liq = liquidations(s.mark(96).events);
    expect(liq).toEqual([expect.objectContaining({ method: 'BACKSTOP', closedLots: 190, bankruptcyPriceTicks: 95, fee: 0n })]);
    expect(s.size(A)).toBe(0);
    expect(s.size(POOL_ACCOUNT)).toBe(190);
    expect(s.collateral(A)).toBe(usd(40.5)); // 990.5 − 190 × (100 − 95)
    // Pool equity = its collateral + 190 × (96 − 95); a share is worth equity ÷ shares.
    expect(s.e.pool()).toMatchObject({ equity: usd(100_190), totalShares: usd(100_000) });
    expect(s.e.lpPosition(LP)).toMatchObject({ shares: usd(100_000), value: usd(100_190) });
  });

  it('a bankrupt account the fund cannot cover is closed against the ranked opposite positions at the bankruptcy price', () => {
    const s = setup();
    s.deposit(M, 1_000_000);
    s.deposit(M2, 5_000);
    s.deposit(A, 1_000);
    s.run({ kind: 'setLeverage', account: A, symbol: 'X-USD', leverage: 20 });
    s.mark(100);
    s.limit(M, 'SELL', 100, 100);
    s.limit(M2, 'SELL', 90, 100);
    s.limit(A, 'BUY', 190, 100);
    // Gap to 80: equity 990.5 − 3,800 < 0, the fund is empty: ADL at 80 + 14.79 → 95.
    const r = s.mark(80);
    const liq = liquidations(r.events);
    expect(liq).toEqual([expect.objectContaining({ method: 'ADL', closedLots: 190, bankruptcyPriceTicks: 95 })]);
    // Shorts rank by entry ÷ equity: M2 (9,000 on ~6,800) before M (10,000 on ~1,002,000).
    const adl = r.events.filter((x) => x.type === 'adl');
    expect(adl).toEqual([
      expect.objectContaining({ account: M2, counterparty: A, sizeLots: 90, priceTicks: 95, realisedPnl: usd(450) }),
      expect.objectContaining({ account: M, counterparty: A, sizeLots: 100, priceTicks: 95, realisedPnl: usd(500) }),
    ]);
    expect(s.size(A)).toBe(0);
    expect(s.size(M)).toBe(0);
    expect(s.size(M2)).toBe(0);
    expect(s.collateral(A)).toBe(usd(40.5));
    expect(s.e.insuranceFund().openBadDebt).toEqual([]);
  });

  it('funding an account cannot pay is not left below zero: the sweep closes it the same command', () => {
    const s = setup();
    longAt100(s);
    // 10 % of 19,000 = 1,900 > 990.5: the payment takes A below zero; ADL at 100 + 4.79 → 105 leaves it at 40.5.
    const r = s.run({ kind: 'applyFunding', symbol: 'X-USD', rateE9: 100_000_000n });
    expect(liquidations(r.events)).toEqual([expect.objectContaining({ account: A, method: 'ADL', closedLots: 190, bankruptcyPriceTicks: 105 })]);
    expect(s.collateral(A)).toBe(usd(40.5));
    expect(s.collateral(M)).toBe(usd(1_000_000 - 3.8 + 1_900 - 950)); // maker fee, funding received, ADL at 105
  });

  it('a wallet funding took below zero is judged with its isolated positions: the account is closed as a whole', () => {
    const s = setup();
    s.deposit(M, 1_000_000);
    s.deposit(A, 1_000);
    s.run({ kind: 'setLeverage', account: A, symbol: 'X-USD', leverage: 20, marginMode: 'isolated' });
    s.mark(100);
    s.limit(M, 'SELL', 190, 100);
    s.limit(A, 'BUY', 190, 100);
    // 950 of isolated margin, 40.5 left in the wallet; 10 % funding (1,900) takes the wallet to −1,859.5
    // while the position alone (950 of margin, MM 475) looks healthy: the account as a whole is at −909.5.
    const r = s.run({ kind: 'applyFunding', symbol: 'X-USD', rateE9: 100_000_000n });
    expect(liquidations(r.events)).toEqual([expect.objectContaining({ account: A, method: 'ADL', closedLots: 190, bankruptcyPriceTicks: 105, equity: -usd(909.5) })]);
    expect(s.size(A)).toBe(0);
    expect(s.collateral(A)).toBe(usd(40.5));
    expect(s.e.insuranceFund().openBadDebt).toEqual([]);
  });

  it('bad debt the fund can pay is paid by the fund when the pool takes the position at the mark', () => {
    const s = setup();
    longAt100(s);
    s.deposit(LP, 100_000);
    s.run({ kind: 'addLiquidity', account: LP, amount: usd(50_000), lockupMs: 0 });
    s.run({ kind: 'deposit', account: INSURANCE_ACCOUNT, amount: usd(10_000) });
    // Gap to 90: equity 990.5 − 1,900 = −909.5; the fund has 10,000: the pool takes 190 at 90.
    const r = s.mark(90);
    expect(liquidations(r.events)).toEqual([expect.objectContaining({ method: 'BACKSTOP', closedLots: 190, bankruptcyPriceTicks: 95 })]);
    expect(r.events.filter((x) => x.type === 'insurance')).toEqual([expect.objectContaining({ reason: 'badDebt', account: A, delta: -usd(909.5), balance: usd(9_090.5) })]);
    expect(s.collateral(A)).toBe(0n);
    expect(s.e.getAccount(A)!.badDebt).toBe(usd(909.5));
  });
});

describe('withdrawal reservations', () => {
  it('reserve the withdrawable amount once, answer a repeat, refuse another amount under the id, and pay or release exactly once', () => {
    const s = setup();
    longAt100(s);
    // Withdrawable = min(990.5, 990.5 + uPnL) − IM 950 = 40.5 at mark 100.
    expect(s.e.marginSummary(A)!.withdrawable).toBe(usd(40.5));
    expect(s.run({ kind: 'requestWithdrawal', account: A, withdrawalId: 'w1', amount: usd(40.6) })).toMatchObject({ ok: false, code: 'INSUFFICIENT_BALANCE' });
    expect(s.run({ kind: 'requestWithdrawal', account: A, withdrawalId: 'w1', amount: usd(40) })).toMatchObject({ ok: true, status: 'PENDING', duplicate: false });
    expect(s.run({ kind: 'requestWithdrawal', account: A, withdrawalId: 'w1', amount: usd(40) })).toMatchObject({ ok: true, status: 'PENDING', duplicate: true, events: [] });
    expect(s.run({ kind: 'requestWithdrawal', account: A, withdrawalId: 'w1', amount: usd(30) })).toMatchObject({ ok: false, code: 'WITHDRAWAL_EXISTS' });
    expect(s.e.marginSummary(A)).toMatchObject({ collateral: usd(950.5), pendingWithdrawals: usd(40), withdrawable: usd(0.5) });
    // A profit is not withdrawable: mark 110 adds 1,900 of uPnL and no withdrawable beyond the higher IM.
    s.mark(110);
    expect(s.e.marginSummary(A)!.withdrawable).toBe(0n);
    expect(s.run({ kind: 'settleWithdrawal', withdrawalId: 'w1', outcome: 'FAILED' })).toMatchObject({ ok: true, status: 'FAILED' });
    expect(s.run({ kind: 'settleWithdrawal', withdrawalId: 'w1', outcome: 'PAID' })).toMatchObject({ ok: false, code: 'WITHDRAWAL_NOT_PENDING' });
    expect(s.e.getAccount(A)).toMatchObject({ collateral: usd(990.5), pendingWithdrawals: 0n, withdrawn: 0n });
    s.mark(100);
    s.run({ kind: 'requestWithdrawal', account: A, withdrawalId: 'w2', amount: usd(40) });
    expect(s.run({ kind: 'settleWithdrawal', withdrawalId: 'w2', outcome: 'PAID' })).toMatchObject({ ok: true, status: 'PAID' });
    expect(s.e.getAccount(A)).toMatchObject({ collateral: usd(950.5), pendingWithdrawals: 0n, withdrawn: usd(40) });
  });

  it('pause while an account holds bad debt nothing could resolve', () => {
    const s = setup();
    longFromM(s, 1_000, 190);
    // A's position is closed (ADL) only on a fresh index; a stale one leaves its negative equity open.
    s.run({ kind: 'applyFunding', symbol: 'X-USD', rateE9: 100_000_000n }, 40_000);
    expect(s.collateral(A) < 0n).toBe(true);
    expect(s.run({ kind: 'requestWithdrawal', account: M, withdrawalId: 'm1', amount: usd(1) })).toMatchObject({ ok: false, code: 'WITHDRAWALS_PAUSED' });
    s.mark(100);
    expect(s.e.insuranceFund().openBadDebt).toEqual([]);
    expect(s.run({ kind: 'requestWithdrawal', account: M, withdrawalId: 'm1', amount: usd(1) }).ok).toBe(true);
  });
});

describe('liquidity pool', () => {
  it('mints at equity ÷ shares, refuses removal inside the lock-up or beyond the holding, and pays shares × equity ÷ total', () => {
    const s = setup();
    s.deposit(LP, 10_000);
    s.deposit(M, 10_000);
    expect(s.run({ kind: 'addLiquidity', account: LP, amount: usd(1_000), lockupMs: 60_000 })).toMatchObject({ ok: true, shares: String(usd(1_000)) });
    s.run({ kind: 'deposit', account: POOL_ACCOUNT, amount: usd(500) }); // a gain of the pool: equity 1,500 on 1,000 shares
    expect(s.run({ kind: 'addLiquidity', account: M, amount: usd(300), lockupMs: 60_000 })).toMatchObject({ ok: true, shares: String(usd(200)) });
    expect(s.run({ kind: 'removeLiquidity', account: LP, shares: usd(100) })).toMatchObject({ ok: false, code: 'LIQUIDITY_LOCKED' });
    expect(s.run({ kind: 'removeLiquidity', account: LP, shares: usd(1_001) }, 60_000)).toMatchObject({ ok: false, code: 'INSUFFICIENT_SHARES' });
    expect(s.run({ kind: 'removeLiquidity', account: LP, shares: usd(100) })).toMatchObject({ ok: true, amount: String(usd(150)) });
    expect(s.e.pool()).toMatchObject({ equity: usd(1_650), totalShares: usd(1_100) });
    expect(s.collateral(LP)).toBe(usd(9_150));
  });
});

describe('dead man\'s switch and price bands', () => {
  it('cancels every open order at the first mark update after the deadline unless re-armed', () => {
    const s = setup();
    s.deposit(A, 10_000);
    s.mark(100);
    const o = s.limit(A, 'BUY', 5, 90);
    expect(s.run({ kind: 'cancelAllAfter', account: A, timeoutMs: 4_999 })).toMatchObject({ ok: false, code: 'INVALID' });
    s.run({ kind: 'cancelAllAfter', account: A, timeoutMs: 5_000 });
    s.mark(100, 3_000);
    s.run({ kind: 'cancelAllAfter', account: A, timeoutMs: 5_000 }, 1_000); // re-armed: deadline moves on
    expect(s.mark(100, 3_000).events.some((x) => x.type === 'cancelAllAfter')).toBe(false);
    const fired = s.mark(100, 3_000).events;
    expect(fired).toContainEqual(expect.objectContaining({ type: 'cancelAllAfter', status: 'TRIGGERED', canceledOrderIds: [o.order.orderId] }));
    expect(s.e.openOrders(A)).toEqual([]);
  });

  it('fills a market order only inside the band around the mark and waits for a fresh mark', () => {
    const e = new PerpEngine({ instruments: [{ ...X, priceBandPpm: 50_000, markStaleMs: 10_000 }] });
    let ts = 0;
    const run = (c: Cmd, dt = 1_000) => e.apply({ id: `x${(ts += dt)}`, ts, ...c } as EngineCommand);
    run({ kind: 'deposit', account: M, amount: usd(100_000) });
    run({ kind: 'deposit', account: A, amount: usd(100_000) });
    run({ kind: 'setMarkPrice', symbol: 'X-USD', markPriceTicks: 100, indexPriceTicks: 100 });
    run({ kind: 'placeOrder', account: M, symbol: 'X-USD', side: 'SELL', type: 'LIMIT', priceTicks: 104, sizeLots: 10 });
    run({ kind: 'placeOrder', account: M, symbol: 'X-USD', side: 'SELL', type: 'LIMIT', priceTicks: 120, sizeLots: 10 });
    expect(run({ kind: 'placeOrder', account: A, symbol: 'X-USD', side: 'BUY', type: 'LIMIT', priceTicks: 106, sizeLots: 1 })).toMatchObject({ ok: false, code: 'PRICE_OUT_OF_RANGE' });
    const r = run({ kind: 'placeOrder', account: A, symbol: 'X-USD', side: 'BUY', type: 'MARKET', sizeLots: 20 }) as PlaceOrderAccepted;
    expect(r.order).toMatchObject({ status: 'EXPIRED', filledLots: 10 });
    expect(r.fills.map((f) => f.priceTicks)).toEqual([104]);
    expect(run({ kind: 'placeOrder', account: A, symbol: 'X-USD', side: 'BUY', type: 'MARKET', sizeLots: 1 }, 20_000)).toMatchObject({ ok: false, code: 'MARK_STALE' });
  });
});
