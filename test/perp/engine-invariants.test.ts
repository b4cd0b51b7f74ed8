/**
 * Invariants of the perpetual engine over random command streams (fast-check). After every command:
 * the book is not crossed; every fill is at the resting order's price and within the taker's limit;
 * filled + remaining = size for every order; positions sum to zero per instrument; money is conserved
 * exactly; refused commands change nothing; admission never takes free collateral below zero; and a
 * snapshot taken anywhere, restored and fed the rest of the stream, ends in the same state and emits
 * the same events.
 */
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import type { EngineCommand, EngineEvent, EngineSnapshot } from '../../src/perp/engine/engine-types.ts';
import { toJsonSafe } from '../../src/perp/engine/engine-types.ts';
import type { InstrumentConfig } from '../../src/perp/engine/instruments.ts';
import { FEE_ACCOUNT, PerpEngine } from '../../src/perp/engine/perp-engine.ts';

const X: InstrumentConfig = {
  symbol: 'X-USD', tickSize: '0.1', lotSize: '0.01', minSizeLots: 1, maxSizeLots: 1_000, maxPriceTicks: 10_000,
  maxLeverage: 20, initialMarginRatioPpm: 50_000, maintenanceMarginRatioPpm: 25_000, makerFeeRatePpm: 200, takerFeeRatePpm: 500,
  fundingIntervalMs: 3_600_000, priceBandPpm: 0,
};
/** Odd units so that fees, cost shares and funding round. */
const Y: InstrumentConfig = {
  ...X, symbol: 'Y-USD', tickSize: '0.03', lotSize: '0.007', maxLeverage: 7, initialMarginRatioPpm: 111_111, maintenanceMarginRatioPpm: 55_555,
  makerFeeRatePpm: 333, takerFeeRatePpm: 777,
};
const SYMBOLS = ['X-USD', 'Y-USD'];
const MARK0 = 1_000;
const TRADERS = ['1', '2', '3', '4'].map((c) => '0x' + c.repeat(40));

type Draft =
  | { k: 'deposit'; who: number; amount: number }
  | { k: 'withdraw'; who: number; amount: number }
  /** Withdraws everything withdrawable: drives accounts to the edge of admission. */
  | { k: 'sweep'; who: number }
  | { k: 'order'; who: number; sym: number; buy: boolean; market: boolean; off: number; size: number; tif: number; ro: boolean; cid: number }
  | { k: 'cancel'; who: number; pick: number }
  | { k: 'cancelAll'; who: number; sym: number }
  | { k: 'leverage'; who: number; sym: number; lev: number; iso: boolean }
  | { k: 'margin'; who: number; sym: number; amount: number }
  /** A stop or take-profit: off from the watched price (refused when already reached), limit off the trigger. */
  | { k: 'trigger'; who: number; sym: number; buy: boolean; type: number; off: number; lim: number; size: number; last: boolean; ro: boolean; close: boolean }
  | { k: 'amend'; who: number; pick: number; dPrice: number; dSize: number }
  | { k: 'mark'; sym: number; off: number }
  | { k: 'funding'; sym: number; rate: number };

const who = fc.integer({ min: 0, max: TRADERS.length - 1 });
const sym = fc.integer({ min: 0, max: 1 });
const orderDraft = fc.record({
  k: fc.constant('order' as const), who, sym, buy: fc.boolean(), market: fc.integer({ min: 0, max: 3 }).map((n) => n === 0),
  off: fc.integer({ min: -4, max: 4 }), size: fc.integer({ min: 1, max: 12 }), tif: fc.integer({ min: 0, max: 7 }),
  ro: fc.integer({ min: 0, max: 4 }).map((n) => n === 0), cid: fc.integer({ min: -6, max: 5 }),
});
const triggerDraft = fc.record({
  k: fc.constant('trigger' as const), who, sym, buy: fc.boolean(), type: fc.integer({ min: 0, max: 3 }), off: fc.integer({ min: 1, max: 40 }),
  lim: fc.integer({ min: -3, max: 3 }), size: fc.integer({ min: 1, max: 12 }), last: fc.integer({ min: 0, max: 3 }).map((n) => n === 0),
  ro: fc.integer({ min: 0, max: 2 }).map((n) => n === 0), close: fc.integer({ min: 0, max: 2 }).map((n) => n === 0),
});
const amendDraft = fc.record({ k: fc.constant('amend' as const), who, pick: fc.nat(), dPrice: fc.integer({ min: -3, max: 3 }), dSize: fc.integer({ min: -3, max: 3 }) });
const coreDrafts = [
  { weight: 8, arbitrary: triggerDraft },
  { weight: 4, arbitrary: amendDraft },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('deposit' as const), who, amount: fc.integer({ min: 1, max: 300_000_000 }) }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('withdraw' as const), who, amount: fc.integer({ min: 1, max: 200_000_000 }) }) },
  { weight: 30, arbitrary: orderDraft },
  { weight: 4, arbitrary: fc.record({ k: fc.constant('sweep' as const), who }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('cancel' as const), who, pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('cancelAll' as const), who, sym: fc.integer({ min: -1, max: 1 }) }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('leverage' as const), who, sym, lev: fc.integer({ min: 0, max: 22 }), iso: fc.integer({ min: 0, max: 2 }).map((n) => n > 0) }) },
  { weight: 3, arbitrary: fc.record({ k: fc.constant('margin' as const), who, sym, amount: fc.integer({ min: -30_000_000, max: 30_000_000 }) }) },
];
const priceDrafts = [
  { weight: 2, arbitrary: fc.record({ k: fc.constant('mark' as const), sym, off: fc.integer({ min: -60, max: 60 }) }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('funding' as const), sym, rate: fc.integer({ min: -3_000_000, max: 3_000_000 }) }) },
];
/** Every trader funded first (so most commands act on real accounts), then the random stream. */
function stream(withPrices: boolean, maxLength: number): fc.Arbitrary<Draft[]> {
  const amount = fc.oneof(fc.integer({ min: 100_000, max: 5_000_000 }), fc.integer({ min: 5_000_000, max: 400_000_000 }));
  const funding = fc.tuple(...TRADERS.map((_, i) => amount.map((amount): Draft => ({ k: 'deposit', who: i, amount }))));
  const rest = fc.array(fc.oneof(...coreDrafts, ...(withPrices ? priceDrafts : [])), { minLength: maxLength / 2, maxLength }) as fc.Arbitrary<Draft[]>;
  return fc.tuple(funding, rest).map(([f, r]) => [...f, ...r]);
}

const TIFS = ['GTC', 'GTC', 'GTC', 'GTC', 'IOC', 'FOK', 'POST_ONLY', 'POST_ONLY'] as const;

/** Turns a draft into a concrete command against the engine's current state (so ids and prices make sense). */
function concretise(d: Draft, e: PerpEngine, n: number): EngineCommand {
  const base = { id: `c${n}`, ts: 1_000 + n * 7 };
  const account = 'who' in d ? TRADERS[d.who] : '';
  switch (d.k) {
    case 'deposit':
      return { ...base, kind: 'deposit', account, amount: BigInt(d.amount) };
    case 'withdraw':
      return { ...base, kind: 'withdraw', account, amount: BigInt(d.amount) };
    case 'sweep': {
      const all = e.marginSummary(account)?.withdrawable ?? 0n;
      return { ...base, kind: 'withdraw', account, amount: all > 0n ? all : 1n };
    }
    case 'order': {
      const symbol = SYMBOLS[d.sym];
      const mark = e.prices(symbol)!.markPriceTicks;
      const tif = TIFS[d.tif];
      const market = d.market && (tif === 'IOC' || tif === 'FOK' || tif === 'GTC');
      // A reduce-only order mostly takes the side that reduces (some of them go stale later).
      const held = e.getAccount(account)?.positions.find((p) => p.symbol === symbol)?.sizeLots ?? 0;
      const buy = d.ro && held !== 0 && d.off !== 4 ? held < 0 : d.buy;
      return {
        ...base, kind: 'placeOrder', account, symbol, side: buy ? 'BUY' : 'SELL', type: market ? 'MARKET' : 'LIMIT',
        priceTicks: market && d.off % 2 === 0 ? undefined : mark + d.off, sizeLots: d.size,
        timeInForce: market ? (tif === 'FOK' ? 'FOK' : 'IOC') : tif, reduceOnly: d.ro, clientOrderId: d.cid > 0 ? `k${d.cid}` : undefined,
      };
    }
    case 'cancel': {
      const open = e.openOrders(account);
      // Mostly own open orders; sometimes any id (another account's, done or unknown).
      const orderId = open.length > 0 && d.pick % 4 !== 0 ? open[d.pick % open.length].orderId : 1 + (d.pick % 60);
      return { ...base, kind: 'cancelOrder', account, orderId };
    }
    case 'cancelAll':
      return { ...base, kind: 'cancelAll', account, symbol: d.sym < 0 ? undefined : SYMBOLS[d.sym] };
    case 'leverage':
      return { ...base, kind: 'setLeverage', account, symbol: SYMBOLS[d.sym], leverage: d.lev, marginMode: d.iso ? 'isolated' : 'cross' };
    case 'margin':
      return { ...base, kind: 'adjustMargin', account, symbol: SYMBOLS[d.sym], amount: BigInt(d.amount) };
    case 'trigger': {
      const symbol = SYMBOLS[d.sym];
      const p = e.prices(symbol)!;
      const watched = d.last && p.lastTradePriceTicks > 0 ? p.lastTradePriceTicks : p.markPriceTicks;
      const type = (['STOP_MARKET', 'STOP_LIMIT', 'TAKE_PROFIT_MARKET', 'TAKE_PROFIT_LIMIT'] as const)[d.type];
      const stop = type.startsWith('STOP');
      const held = e.getAccount(account)?.positions.find((x) => x.symbol === symbol)?.sizeLots ?? 0;
      const buy = (d.ro || d.close) && held !== 0 ? held < 0 : d.buy;
      // Mostly on the side that has not fired yet; off 40 lands on the wrong side (refused).
      const rises = stop === buy;
      const trig = d.off === 40 ? watched : rises ? watched + d.off : watched - d.off;
      const limit = type.endsWith('LIMIT') ? trig + d.lim : undefined;
      return {
        ...base, kind: 'placeOrder', account, symbol, side: buy ? 'BUY' : 'SELL', type, triggerPriceTicks: trig, triggerBy: d.last ? 'LAST' : 'MARK',
        priceTicks: limit, sizeLots: d.close ? 0 : d.size, reduceOnly: d.ro, closePosition: d.close,
      };
    }
    case 'amend': {
      const open = e.openOrders(account);
      const o = open.length > 0 ? open[d.pick % open.length] : undefined;
      const orderId = o?.orderId ?? 1 + (d.pick % 60);
      return {
        ...base, kind: 'amendOrder', account, orderId,
        ...(d.dPrice !== 0 && o ? { priceTicks: o.priceTicks + d.dPrice } : {}),
        ...(d.dSize !== 0 || d.dPrice === 0 ? { sizeLots: Math.max(1, (o?.sizeLots ?? 3) + d.dSize) } : {}),
      };
    }
    case 'mark':
      return { ...base, kind: 'setMarkPrice', symbol: SYMBOLS[d.sym], markPriceTicks: MARK0 + d.off, indexPriceTicks: MARK0 + d.off };
    case 'funding':
      return { ...base, kind: 'applyFunding', symbol: SYMBOLS[d.sym], rateE9: BigInt(d.rate) };
  }
}

function newEngine(): PerpEngine {
  const e = new PerpEngine({ instruments: [X, Y] });
  for (const symbol of SYMBOLS) e.apply({ kind: 'setMarkPrice', id: `m-${symbol}`, ts: 0, symbol, markPriceTicks: MARK0, indexPriceTicks: MARK0 });
  return e;
}

const big = (s: string): bigint => BigInt(s);

/** Money and position invariants read off the canonical snapshot. */
function checkLedger(snap: EngineSnapshot, deposits: bigint, withdrawals: bigint): void {
  let collateral = 0n;
  let isolated = 0n;
  let signedCost = 0n;
  let realised = 0n;
  let feesPaid = 0n;
  let feesReceived = 0n;
  let funding = 0n;
  const sizes = new Map<string, number>();
  for (const a of snap.accounts) {
    let accountIso = 0n;
    for (const p of a.positions) {
      sizes.set(p.symbol, (sizes.get(p.symbol) ?? 0) + p.sizeLots);
      const e = big(p.entryNotional);
      expect(e >= 0n).toBe(true);
      if (p.sizeLots === 0) expect([e, big(p.isolatedMargin)]).toEqual([0n, 0n]);
      signedCost += p.sizeLots > 0 ? e : -e;
      accountIso += big(p.isolatedMargin);
      expect(big(p.isolatedMargin) >= 0n).toBe(true);
    }
    // Per account: its balance is exactly its own flows.
    expect(big(a.collateral) + accountIso).toBe(
      big(a.deposited) - big(a.withdrawn) + big(a.realisedPnl) - big(a.feesPaid) + big(a.feesReceived) + big(a.funding),
    );
    collateral += big(a.collateral);
    isolated += accountIso;
    realised += big(a.realisedPnl);
    feesPaid += big(a.feesPaid);
    feesReceived += big(a.feesReceived);
    funding += big(a.funding);
  }
  for (const [, size] of sizes) expect(size).toBe(0);
  expect(feesPaid).toBe(feesReceived);
  expect(funding).toBe(0n);
  // Realised PnL over all accounts equals the signed cost of what is still open: trades are zero-sum.
  expect(realised).toBe(signedCost);
  // Collateral (incl. isolated margin) + realised PnL + funding + fees over all accounts, fee account included.
  expect(collateral + isolated - realised - funding + feesPaid - feesReceived).toBe(deposits - withdrawals);
  // Reserves are exactly the sum over open orders.
  const reserved = new Map<string, bigint>();
  for (const o of snap.orders) reserved.set(o.account, (reserved.get(o.account) ?? 0n) + big(o.reservePerLot) * BigInt(o.remainingLots));
  for (const a of snap.accounts) expect(big(a.reserved)).toBe(reserved.get(a.account) ?? 0n);
}

interface OrderTrack {
  size: number;
  filled: number;
  side: 'BUY' | 'SELL';
  limit: number | null;
  resting: boolean;
  done: boolean;
  /** A trigger order not fired yet (open, off the book). */
  waiting: boolean;
  trigger: { priceTicks: number; by: 'MARK' | 'LAST'; rise: boolean } | null;
  fired: boolean;
  reduceOnly: boolean;
}

function runStream(drafts: Draft[], opts: { allAccountsSolvent: boolean; snapshotAt: number }): void {
  const e = newEngine();
  const orders = new Map<number, OrderTrack>();
  const executed: EngineCommand[] = [];
  const results: unknown[] = [];
  let deposits = 0n;
  let withdrawals = 0n;
  let lastSeq = e.lastSeq;
  let snap: EngineSnapshot | null = null;
  let snapIndex = 0;
  let stateBefore = JSON.stringify(e.snapshot());

  drafts.forEach((d, i) => {
    if (i === opts.snapshotAt) {
      snap = JSON.parse(JSON.stringify(e.snapshot()));
      snapIndex = i;
    }
    const cmd = concretise(d, e, i);
    const actor = 'account' in cmd ? cmd.account : null;
    const freeBefore = actor ? e.marginSummary(actor)?.freeCollateral : undefined;
    const positionsBefore = new Map<string, number>();
    for (const t of TRADERS) for (const p of e.getAccount(t)?.positions ?? []) positionsBefore.set(`${t} ${p.symbol}`, p.sizeLots);
    const r = e.apply(cmd);
    const after = e.snapshot();
    const stateAfter = JSON.stringify(after);
    executed.push(cmd);
    results.push(toJsonSafe(r));

    if (!r.ok) {
      expect(r.events).toEqual([]);
      expect(stateAfter).toBe(stateBefore);
    } else {
      if (cmd.kind === 'deposit') deposits += cmd.amount;
      if (cmd.kind === 'withdraw') withdrawals += cmd.amount;
    }
    // Event numbering: consecutive, stamped with the command.
    for (const ev of r.events) {
      expect(ev.seq).toBe(++lastSeq);
      expect([ev.commandId, ev.ts]).toEqual([cmd.id, cmd.ts]);
    }
    applyEvents(r.events, orders, cmd);
    // A reduce-only or closePosition order never increases exposure: no account's position whose
    // reduce-only order traded in this command grew or flipped.
    for (const [account, symbol] of reducingTakers(r.events, orders)) {
      const before = positionsBefore.get(`${account} ${symbol}`) ?? 0;
      const now = e.getAccount(account)?.positions.find((p) => p.symbol === symbol)?.sizeLots ?? 0;
      if (Math.abs(now) > Math.abs(before) || (now !== 0 && Math.sign(now) !== Math.sign(before))) {
        expect.fail(`a reduce-only order took ${account} on ${symbol} from ${before} to ${now} in ${cmd.id}`);
      }
    }

    // Admission: the acting account's free collateral is ≥ 0 afterwards or did not fall.
    if (r.ok && actor && freeBefore !== undefined && ['placeOrder', 'withdraw', 'adjustMargin', 'setLeverage'].includes(cmd.kind)) {
      const freeAfter = e.marginSummary(actor)!.freeCollateral;
      expect(freeAfter >= 0n || freeAfter >= freeBefore).toBe(true);
    }
    if (opts.allAccountsSolvent) {
      for (const t of TRADERS) {
        const m = e.marginSummary(t);
        if (m && m.freeCollateral < 0n) expect.fail(`${t}: free collateral ${m.freeCollateral} after ${cmd.kind} ${cmd.id}`);
      }
    }

    // The book is never crossed.
    for (const symbol of SYMBOLS) {
      const { bidTicks, askTicks } = e.bestBidAsk(symbol)!;
      if (bidTicks !== undefined && askTicks !== undefined) expect(bidTicks).toBeLessThan(askTicks);
    }
    // filled + remaining = size for every resting order, and the engine agrees with the events.
    for (const [id, t] of orders) {
      const view = e.getOrder(id);
      if (t.done) {
        if (view !== undefined) expect.fail(`order ${id} is done but still open`);
        orders.delete(id); // done orders need no further checks; a later trade against one fails below
        continue;
      }
      if ((view !== undefined) !== (t.resting || t.waiting)) expect.fail(`order ${id}: resting ${t.resting}, waiting ${t.waiting}, open in the engine ${view !== undefined}`);
      if (view && (view.filledLots !== t.filled || view.filledLots + view.remainingLots !== t.size)) {
        expect([view.filledLots, view.filledLots + view.remainingLots]).toEqual([t.filled, t.size]);
      }
    }
    checkLedger(after, deposits, withdrawals);
    stateBefore = stateAfter;
  });

  // Snapshot + replay of the rest = the uninterrupted run, event for event.
  if (snap !== null) {
    const restored = PerpEngine.fromSnapshot(snap);
    for (let i = snapIndex; i < executed.length; i++) expect(toJsonSafe(restored.apply(executed[i]))).toEqual(results[i]);
    expect(restored.stateHash()).toBe(e.stateHash());
  }
}

/** Accounts and symbols whose reduce-only orders took liquidity in these events (liquidation orders aside). */
function reducingTakers(events: EngineEvent[], orders: Map<number, OrderTrack>): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const ev of events) {
    if (ev.type !== 'trade') continue;
    const t = orders.get(ev.takerOrderId);
    if (t?.reduceOnly && t.trigger !== null) out.push([ev.takerAccount, ev.symbol]);
  }
  return out;
}

/** What the streams exercised (asserted after the runs: a generator that never fires a trigger proves nothing). */
const seen = { triggered: 0, amended: 0, triggerFilled: 0, ocoCanceled: 0, amendRequeued: 0 };

function applyEvents(events: EngineEvent[], orders: Map<number, OrderTrack>, cmd: EngineCommand): void {
  for (const ev of events) {
    if (ev.type === 'orderTriggered') seen.triggered++;
    if (ev.type === 'orderAmended') (ev.keptPriority ? seen.amended++ : seen.amendRequeued++);
    if (ev.type === 'orderDone' && ev.reason === 'POSITION_CLOSED') seen.ocoCanceled++;
    if (ev.type === 'trade' && orders.get(ev.takerOrderId)?.fired) seen.triggerFilled++;
    switch (ev.type) {
      case 'orderAccepted': {
        expect(orders.has(ev.orderId)).toBe(false);
        const trigger =
          ev.triggerPriceTicks !== undefined
            ? { priceTicks: ev.triggerPriceTicks, by: ev.triggerBy ?? 'MARK', rise: ev.orderType.startsWith('STOP') === (ev.side === 'BUY') }
            : null;
        orders.set(ev.orderId, {
          size: ev.sizeLots, filled: 0, side: ev.side, limit: ev.priceTicks, resting: false, done: false, waiting: trigger !== null, trigger, fired: false,
          reduceOnly: ev.reduceOnly,
        });
        break;
      }
      case 'orderTriggered': {
        const t = orders.get(ev.orderId);
        if (t === undefined || t.trigger === null) expect.fail(`orderTriggered ${ev.orderId}: not a trigger order`);
        // Once, and only on a price that reaches it: the mark this very command set, or the last trade.
        expect([t.waiting, t.fired]).toEqual([true, false]);
        expect(ev.triggerBy).toBe(t.trigger.by);
        expect(t.trigger.rise ? ev.firedAtTicks >= t.trigger.priceTicks : ev.firedAtTicks <= t.trigger.priceTicks).toBe(true);
        if (ev.triggerBy === 'MARK') expect(cmd.kind === 'setMarkPrice' && cmd.markPriceTicks === ev.firedAtTicks).toBe(true);
        t.waiting = false;
        t.fired = true;
        t.size = ev.sizeLots;
        t.limit = ev.priceTicks;
        break;
      }
      case 'orderAmended': {
        const t = orders.get(ev.orderId);
        if (t === undefined || !t.resting) expect.fail(`orderAmended ${ev.orderId}: not a resting order`);
        expect(ev.remainingLots).toBe(ev.sizeLots - t.filled);
        t.size = ev.sizeLots;
        t.limit = ev.priceTicks;
        // A re-queued order leaves the book and enters it again (orderResting, or done).
        if (!ev.keptPriority) t.resting = false;
        break;
      }
      case 'orderResting': {
        const t = orders.get(ev.orderId);
        if (t === undefined) expect.fail(`orderResting ${ev.orderId}: never accepted`);
        expect(ev.remainingLots).toBe(t.size - t.filled);
        t.resting = true;
        break;
      }
      case 'trade': {
        const maker = orders.get(ev.makerOrderId);
        const taker = orders.get(ev.takerOrderId);
        if (maker === undefined || taker === undefined) expect.fail(`trade ${ev.seq}: an order that is not open`);
        // The maker was resting, the fill is at its price and within the taker's limit.
        expect(maker.resting && !maker.done).toBe(true);
        expect(ev.priceTicks).toBe(maker.limit);
        expect(maker.side).not.toBe(taker.side);
        if (taker.limit !== null) expect(taker.side === 'BUY' ? ev.priceTicks <= taker.limit : ev.priceTicks >= taker.limit).toBe(true);
        expect(ev.makerAccount).not.toBe(ev.takerAccount);
        maker.filled += ev.sizeLots;
        taker.filled += ev.sizeLots;
        expect(maker.filled).toBeLessThanOrEqual(maker.size);
        expect(taker.filled).toBeLessThanOrEqual(taker.size);
        expect(ev.makerFee >= 0n && ev.takerFee >= 0n).toBe(true);
        break;
      }
      case 'orderDone': {
        const t = orders.get(ev.orderId);
        if (t === undefined) expect.fail(`orderDone ${ev.orderId}: not an open order`);
        expect(t.done).toBe(false);
        expect(ev.filledLots).toBe(t.filled);
        expect(ev.filledLots + ev.remainingLots).toBe(t.size);
        if (ev.status === 'FILLED') expect(ev.remainingLots).toBe(0);
        t.done = true;
        t.waiting = false;
        break;
      }
      default:
        break;
    }
  }
}

describe('perp engine invariants', () => {
  afterAll(() => {
    for (const [what, n] of Object.entries(seen)) if (n === 0) expect.fail(`the random streams never produced: ${what}`);
  });

  it('hold over random streams with moving marks and funding', () => {
    fc.assert(
      fc.property(
        stream(true, 120),
        fc.nat(),
        (drafts, at) => runStream(drafts, { allAccountsSolvent: false, snapshotAt: at % drafts.length }),
      ),
      { numRuns: 40, seed: 20240614 },
    );
  });

  it('keep every account solvent while marks stand still (admission alone decides)', () => {
    fc.assert(
      fc.property(
        stream(false, 120),
        fc.nat(),
        (drafts, at) => runStream(drafts, { allAccountsSolvent: true, snapshotAt: at % drafts.length }),
      ),
      { numRuns: 40, seed: 7 },
    );
  });

  it('produce the same events and state from the same stream (determinism)', () => {
    const drafts = fc.sample(stream(true, 300), { numRuns: 1, seed: 99 })[0];
    const a = newEngine();
    const b = newEngine();
    drafts.forEach((d, i) => {
      const cmd = concretise(d, a, i);
      expect(toJsonSafe(b.apply(cmd))).toEqual(toJsonSafe(a.apply(cmd)));
    });
    expect(a.stateHash()).toBe(b.stateHash());
    expect(a.getAccount(FEE_ACCOUNT)!.feesReceived > 0n).toBe(true);
  });
});
