/**
 * Invariants of liquidation, the insurance fund, ADL, the pool and withdrawals over random command
 * streams whose price paths gap −50 % and spike +100 % (fast-check). After every command:
 * - money is conserved exactly: Σ (collateral + isolated margin) over every account (traders, fee
 *   account, insurance fund, pool) + Σ unrealised PnL = deposits − paid withdrawals − pending ones
 *   (unrealised PnL sums to the same at any common price, since positions sum to zero);
 * - no account has negative equity unless it is recorded as open bad debt;
 * - a command liquidates each account at most once per instrument and method (the cascade is bounded);
 * - a pool share is worth pool equity ÷ shares exactly;
 * - each withdrawal reservation is paid or released at most once, and pending ones are still reserved;
 * - a snapshot taken anywhere, restored and fed the rest, reaches the same state hash and events.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { EngineCommand, EngineEvent, EngineSnapshot } from '../../src/perp/engine/engine-types.ts';
import { toJsonSafe } from '../../src/perp/engine/engine-types.ts';
import type { InstrumentConfig } from '../../src/perp/engine/instruments.ts';
import { PerpEngine, POOL_ACCOUNT } from '../../src/perp/engine/perp-engine.ts';

const X: InstrumentConfig = {
  symbol: 'X-USD', tickSize: '0.1', lotSize: '0.01', minSizeLots: 1, maxSizeLots: 100_000, maxPriceTicks: 100_000,
  maxLeverage: 20, initialMarginRatioPpm: 50_000, maintenanceMarginRatioPpm: 25_000, makerFeeRatePpm: 200, takerFeeRatePpm: 500,
  fundingIntervalMs: 3_600_000, priceBandPpm: 50_000, markStaleMs: 0, indexStaleMs: 30_000, liquidationFeePpm: 5_000,
};
/** Odd units so that every rounding is exercised. */
const Y: InstrumentConfig = {
  ...X, symbol: 'Y-USD', tickSize: '0.03', lotSize: '0.007', maxLeverage: 10, initialMarginRatioPpm: 100_000, maintenanceMarginRatioPpm: 55_555,
  makerFeeRatePpm: 333, takerFeeRatePpm: 777, liquidationFeePpm: 7_777,
};
const INSTRUMENTS = [X, Y];
const TRADERS = ['1', '2', '3', '4', '5'].map((c) => '0x' + c.repeat(40));
const START = 10_000;

type Draft =
  | { k: 'deposit'; who: number; amount: number }
  | { k: 'order'; who: number; sym: number; buy: boolean; market: boolean; off: number; size: number; post: boolean }
  | { k: 'poolQuote'; sym: number; off: number; size: number }
  | { k: 'leverage'; who: number; sym: number; lev: number; iso: boolean }
  | { k: 'mark'; sym: number; factorPct: number; stale: boolean }
  | { k: 'funding'; sym: number; rate: number }
  | { k: 'addLiquidity'; who: number; amount: number }
  | { k: 'removeLiquidity'; who: number; pct: number }
  | { k: 'withdraw'; who: number; amount: number }
  | { k: 'settle'; pick: number; paid: boolean }
  | { k: 'cancelAll'; who: number };

const who = fc.integer({ min: 0, max: TRADERS.length - 1 });
const sym = fc.integer({ min: 0, max: 1 });
const drafts = fc.oneof(
  { weight: 2, arbitrary: fc.record({ k: fc.constant('deposit' as const), who, amount: fc.integer({ min: 1_000_000, max: 50_000_000_000 }) }) },
  {
    weight: 20,
    arbitrary: fc.record({
      k: fc.constant('order' as const), who, sym, buy: fc.boolean(), market: fc.integer({ min: 0, max: 2 }).map((n) => n === 0),
      off: fc.integer({ min: -30, max: 30 }), size: fc.integer({ min: 1, max: 3_000 }), post: fc.boolean(),
    }),
  },
  { weight: 4, arbitrary: fc.record({ k: fc.constant('poolQuote' as const), sym, off: fc.integer({ min: 1, max: 40 }), size: fc.integer({ min: 1, max: 2_000 }) }) },
  { weight: 3, arbitrary: fc.record({ k: fc.constant('leverage' as const), who, sym, lev: fc.integer({ min: 1, max: 20 }), iso: fc.integer({ min: 0, max: 3 }).map((n) => n === 0) }) },
  // Price paths: small moves, and gaps of −50 % and spikes of +100 %.
  {
    weight: 6,
    arbitrary: fc.record({
      k: fc.constant('mark' as const), sym,
      factorPct: fc.oneof(fc.integer({ min: 90, max: 110 }), fc.constantFrom(50, 60, 75, 150, 200)), stale: fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
    }),
  },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('funding' as const), sym, rate: fc.integer({ min: -100_000_000, max: 100_000_000 }) }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('addLiquidity' as const), who, amount: fc.integer({ min: 1, max: 20_000_000_000 }) }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('removeLiquidity' as const), who, pct: fc.integer({ min: 1, max: 100 }) }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('withdraw' as const), who, amount: fc.integer({ min: 1, max: 10_000_000_000 }) }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('settle' as const), pick: fc.nat(), paid: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('cancelAll' as const), who }) },
) as fc.Arbitrary<Draft>;

function stream(maxLength: number): fc.Arbitrary<Draft[]> {
  const funding = fc.tuple(...TRADERS.map((_, i) => fc.integer({ min: 500_000_000, max: 100_000_000_000 }).map((amount): Draft => ({ k: 'deposit', who: i, amount }))));
  return fc.tuple(funding, fc.array(drafts, { minLength: maxLength / 2, maxLength })).map(([f, r]) => [...f, ...r]);
}

interface Ctx {
  marks: number[];
  lastIndexTs: number[];
  withdrawalIds: string[];
}

function concretise(d: Draft, e: PerpEngine, n: number, ctx: Ctx): EngineCommand {
  const ts = 1_000_000 + n * 1_000;
  const base = { id: `c${n}`, ts };
  const account = 'who' in d ? TRADERS[d.who] : '';
  const symbol = 'sym' in d ? INSTRUMENTS[d.sym].symbol : 'X-USD';
  const mark = 'sym' in d ? ctx.marks[d.sym] : START;
  switch (d.k) {
    case 'deposit':
      return { ...base, kind: 'deposit', account, amount: BigInt(d.amount) };
    case 'order':
      return d.market
        ? { ...base, kind: 'placeOrder', account, symbol, side: d.buy ? 'BUY' : 'SELL', type: 'MARKET', sizeLots: d.size }
        : {
            ...base, kind: 'placeOrder', account, symbol, side: d.buy ? 'BUY' : 'SELL', type: 'LIMIT', sizeLots: d.size,
            priceTicks: Math.max(1, Math.round(mark * (1 + (d.buy ? -d.off : d.off) / 1_000))), timeInForce: d.post ? 'POST_ONLY' : 'GTC',
          };
    case 'poolQuote': {
      const side = n % 2 === 0 ? 'BUY' : 'SELL';
      const priceTicks = Math.max(1, Math.round(mark * (1 + (side === 'BUY' ? -d.off : d.off) / 1_000)));
      return { ...base, kind: 'placeOrder', account: POOL_ACCOUNT, symbol, side, type: 'LIMIT', sizeLots: d.size, priceTicks, timeInForce: 'POST_ONLY' };
    }
    case 'leverage':
      return { ...base, kind: 'setLeverage', account, symbol, leverage: d.lev, marginMode: d.iso ? 'isolated' : 'cross' };
    case 'mark': {
      const next = Math.min(100_000, Math.max(10, Math.round((mark * d.factorPct) / 100)));
      ctx.marks[d.sym] = next;
      if (!d.stale) ctx.lastIndexTs[d.sym] = ts;
      return { ...base, kind: 'setMarkPrice', symbol, markPriceTicks: next, indexPriceTicks: next, indexTs: d.stale ? Math.max(0, ctx.lastIndexTs[d.sym]) : ts };
    }
    case 'funding':
      return { ...base, kind: 'applyFunding', symbol, rateE9: BigInt(d.rate) };
    case 'addLiquidity':
      return { ...base, kind: 'addLiquidity', account, amount: BigInt(d.amount), lockupMs: 0 };
    case 'removeLiquidity': {
      const held = e.lpPosition(account)?.shares ?? 1n;
      const shares = (held * BigInt(d.pct)) / 100n;
      return { ...base, kind: 'removeLiquidity', account, shares: shares > 0n ? shares : 1n };
    }
    case 'withdraw': {
      const id = `w${n}`;
      ctx.withdrawalIds.push(id);
      return { ...base, kind: 'requestWithdrawal', account, withdrawalId: id, amount: BigInt(d.amount) };
    }
    case 'settle': {
      const id = ctx.withdrawalIds.length === 0 ? 'none' : ctx.withdrawalIds[d.pick % ctx.withdrawalIds.length];
      return { ...base, kind: 'settleWithdrawal', withdrawalId: id, outcome: d.paid ? 'PAID' : 'FAILED' };
    }
    case 'cancelAll':
      return { ...base, kind: 'cancelAll', account };
  }
}

/** Σ (collateral + isolated) + Σ uPnL over every account, and the flows in and out. */
function books(e: PerpEngine): { value: bigint; deposited: bigint; paid: bigint; pending: bigint } {
  const snap = e.snapshot();
  let value = 0n;
  let deposited = 0n;
  let paid = 0n;
  let pending = 0n;
  for (const a of snap.accounts) {
    const view = e.getAccount(a.account)!;
    value += view.collateral;
    for (const p of view.positions) value += p.isolatedMargin + p.unrealisedPnl;
    deposited += view.deposited;
    paid += view.withdrawn;
    pending += view.pendingWithdrawals;
  }
  return { value, deposited, paid, pending };
}

function equityOf(e: PerpEngine, account: string): bigint {
  const v = e.getAccount(account)!;
  let eq = v.collateral;
  for (const p of v.positions) eq += p.isolatedMargin + p.unrealisedPnl;
  return eq;
}

type WithoutIdTs<C> = C extends EngineCommand ? Omit<C, 'id' | 'ts'> : never;

/** X and Y listed and marked at START, under `rules` (default: this engine's). */
function genesis(rules?: number): PerpEngine {
  const e = new PerpEngine({ instruments: [], rules });
  INSTRUMENTS.forEach((config, i) => e.apply({ kind: 'addInstrument', id: `list${i}`, ts: 1, config }));
  INSTRUMENTS.forEach((c, i) => e.apply({ kind: 'setMarkPrice', id: `m0-${i}`, ts: 1_000_000, symbol: c.symbol, markPriceTicks: START, indexPriceTicks: START }));
  return e;
}

describe('perp engine risk invariants', () => {
  // Found by the property below (seed 2, path 60): a cross account short X (whose index is stale, so
  // nothing is liquidated on it) and long Y is bankrupt by X's spike; its Y long goes by ADL at a
  // bankruptcy price carrying X's whole deficit (clamped at maxPriceTicks), and the Y short against it
  // was charged more than its equity: left below zero, flat, and not recorded as bad debt.
  it('ADL never takes a counterparty below zero equity: what it cannot bear stays open bad debt', () => {
    const e = genesis();
    const [a, b, c] = TRADERS;
    let n = 0;
    const run = (cmd: WithoutIdTs<EngineCommand>, ts = 1_000_000 + ++n * 1_000): EngineEvent[] => {
      const r = e.apply({ ...cmd, id: `r${n}`, ts } as EngineCommand);
      expect(r.ok, JSON.stringify(toJsonSafe(r))).toBe(true);
      const bk = books(e);
      expect(bk.value).toBe(bk.deposited - bk.paid - bk.pending);
      return r.events;
    };
    run({ kind: 'deposit', account: a, amount: 10_000_000_000n });
    run({ kind: 'deposit', account: b, amount: 100_000_000_000n });
    run({ kind: 'deposit', account: c, amount: 600_000_000n });
    // C short 100 Y, A long 100 Y at 10 000; B long 1 000 X, A short 1 000 X at 10 000.
    run({ kind: 'placeOrder', account: c, symbol: 'Y-USD', side: 'SELL', type: 'LIMIT', sizeLots: 100, priceTicks: START, timeInForce: 'POST_ONLY' });
    run({ kind: 'placeOrder', account: a, symbol: 'Y-USD', side: 'BUY', type: 'MARKET', sizeLots: 100 });
    run({ kind: 'placeOrder', account: b, symbol: 'X-USD', side: 'BUY', type: 'LIMIT', sizeLots: 1_000, priceTicks: START, timeInForce: 'POST_ONLY' });
    run({ kind: 'placeOrder', account: a, symbol: 'X-USD', side: 'SELL', type: 'MARKET', sizeLots: 1_000 });
    run({ kind: 'setMarkPrice', symbol: 'Y-USD', markPriceTicks: START, indexPriceTicks: START }, 1_035_000);
    // X triples on a frozen feed (index 40 s old): A's cross equity is −$10 005, nothing happens on X.
    const ev = run({ kind: 'setMarkPrice', symbol: 'X-USD', markPriceTicks: 3 * START, indexPriceTicks: 3 * START, indexTs: 1_000_000 }, 1_040_000);
    const liq = ev.filter((x): x is Extract<EngineEvent, { type: 'liquidation' }> => x.type === 'liquidation');
    expect(liq.map((x) => [x.account, x.symbol, x.method, x.closedLots, x.bankruptcyPriceTicks, x.equity])).toEqual([[a, 'Y-USD', 'ADL', 100, 100_000, -10_005_163_170n]]);
    // C can bear 28 568 ticks past the mark on 100 lots of 0.00021 (its equity 599 930 070 µUSD), not Pb.
    const adl = ev.filter((x): x is Extract<EngineEvent, { type: 'adl' }> => x.type === 'adl');
    expect(adl.map((x) => [x.account, x.counterparty, x.sizeLots, x.priceTicks, x.realisedPnl])).toEqual([[c, a, 100, 38_568, -599_928_000n]]);
    expect(equityOf(e, c)).toBe(2_070n);
    expect(e.getAccount(c)!.positions.map((p) => p.sizeLots)).toEqual([0]);
    // A keeps its X short and the rest of the deficit, recorded as open bad debt (withdrawals pause).
    expect(equityOf(e, a)).toBe(-9_405_235_170n);
    expect(e.insuranceFund().openBadDebt).toEqual([a]);
    expect(ev.filter((x): x is Extract<EngineEvent, { type: 'badDebt' }> => x.type === 'badDebt').map((x) => [x.account, x.amount, x.status])).toEqual([[a, 9_405_235_170n, 'OPEN']]);
    for (const acct of e.snapshot().accounts) if (acct.account !== a) expect(equityOf(e, acct.account) >= 0n, acct.account).toBe(true);
  });

  it('hold over random streams with gaps of −50 % and spikes of +100 %', () => {
    const methods = new Map<string, number>();
    // A failure's shrinking is bounded: one took minutes (each run replays a long stream), long
    // after the test's own timeout, which cannot interrupt synchronous code. Past the limit the
    // failure is reported as shrunk so far, with its seed and path. The runs alone take ~8 s.
    fc.assert(invariantsHold(methods), { numRuns: 120, interruptAfterTimeLimit: 45_000 });
    // The streams do reach every path: through the book, the pool's backstop and ADL.
    expect([...methods.keys()].sort()).toEqual(['ADL', 'BACKSTOP', 'BOOK']);
  });

  // Found by the property above (seed -284687287, path 70): an account with open bad debt whose
  // equity came back was resolved at a mark update by the running engine, whose liquidation index
  // still held the ALWAYS trigger of when the account was under water, and not by the engine
  // restored from a snapshot, which re-armed it from its positions at a later trigger: the two
  // disagreed from then on (and a journal replay from that snapshot would stop as corrupt). An
  // account with open bad debt now triggers on every mark update of its instruments, on both.
  it('a restored engine resolves open bad debt where the running one does (seed -284687287, path 70)', () => {
    fc.assert(invariantsHold(new Map()), { seed: -284687287, path: '70', numRuns: 1, endOnFailure: true });
  });
});

/** The invariants above over one random stream, snapshotted at a random command; counts liquidation methods. */
function invariantsHold(methods: Map<string, number>) {
  return fc.property(stream(160), fc.nat(), (ds, cutSeed) => {
    const e = genesis();
    const ctx: Ctx = { marks: [START, START], lastIndexTs: [1_000_000, 1_000_000], withdrawalIds: [] };
    const cmds: EngineCommand[] = [];
    const events: EngineEvent[] = [];
    const settled = new Map<string, number>();
    const cut = cutSeed % (ds.length + 1);
    let snap: EngineSnapshot | undefined;
    for (let n = 0; n < ds.length; n++) {
      if (n === cut) snap = structuredClone(e.snapshot());
      const cmd = concretise(ds[n], e, n, ctx);
      cmds.push(cmd);
      const before = e.stateHash();
      const r = e.apply(cmd);
      if (!r.ok) {
        expect(e.stateHash()).toBe(before);
        continue;
      }
      for (const ev of r.events) events.push(ev);
      // Money is conserved exactly.
      const b = books(e);
      expect(b.value).toBe(b.deposited - b.paid - b.pending);
      // No negative equity outside open bad debt.
      const open = new Set(e.insuranceFund().openBadDebt);
      for (const a of e.snapshot().accounts) {
        if (!open.has(a.account)) expect(equityOf(e, a.account) >= 0n, `${a.account} after ${JSON.stringify(toJsonSafe(cmd))}: ${equityOf(e, a.account)} ${JSON.stringify(toJsonSafe(r.events))}`).toBe(true);
      }
      // The cascade is bounded: at most one step per account, instrument and method in a command.
      const steps = r.events.filter((x) => x.type === 'liquidation').map((x) => `${x.account}/${x.symbol}/${x.method}`);
      expect(new Set(steps).size).toBe(steps.length);
      for (const x of r.events) if (x.type === 'liquidation') methods.set(x.method, (methods.get(x.method) ?? 0) + 1);
      // A share is worth pool equity ÷ shares.
      const pool = e.pool();
      if (pool.totalShares > 0n) {
        for (const t of TRADERS) {
          const lp = e.lpPosition(t);
          if (lp) expect(lp.value).toBe(pool.equity <= 0n ? 0n : (lp.shares * pool.equity) / pool.totalShares);
        }
        expect(pool.equity).toBe(equityOf(e, POOL_ACCOUNT));
      }
      // Each reservation settles once; pending ones are still reserved.
      for (const ev of r.events) if (ev.type === 'withdrawal' && ev.status !== 'PENDING') settled.set(ev.withdrawalId, (settled.get(ev.withdrawalId) ?? 0) + 1);
    }
    for (const count of settled.values()) expect(count).toBe(1);
    let reserved = 0n;
    for (const id of ctx.withdrawalIds) {
      const w = e.withdrawal(id);
      if (w?.status === 'PENDING') reserved += w.amount;
    }
    expect(books(e).pending).toBe(reserved);
    // Snapshot anywhere, restore, replay the rest: same hash and the same events.
    const restored = PerpEngine.fromSnapshot(snap ?? e.snapshot());
    const replayed: EngineEvent[] = [];
    for (const cmd of cmds.slice(snap ? cut : cmds.length)) replayed.push(...restored.apply(cmd).events);
    expect(restored.stateHash()).toBe(e.stateHash());
    expect(toJsonSafe(replayed)).toEqual(toJsonSafe(events.filter((x) => snap === undefined ? false : x.seq >= (snap as EngineSnapshot).nextSeq)));
    return true;
  });
}

describe('engine rules 1 and 2 on the stream that found the bad-debt divergence', () => {
  /** The stream of seed -284687287, path 70, run on an engine under `rules`; the snapshot at its cut. */
  function runUnder(rules: number) {
    const [[ds, cutSeed]] = fc.sample(fc.tuple(stream(160), fc.nat()), { seed: -284687287, path: '70', numRuns: 1 });
    const e = genesis(rules);
    const ctx: Ctx = { marks: [START, START], lastIndexTs: [1_000_000, 1_000_000], withdrawalIds: [] };
    const cut = cutSeed % (ds.length + 1);
    const cmds: EngineCommand[] = [];
    const events: EngineEvent[] = [];
    let snap: EngineSnapshot | undefined;
    for (let n = 0; n < ds.length; n++) {
      if (n === cut) snap = structuredClone(e.snapshot());
      const cmd = concretise(ds[n], e, n, ctx);
      cmds.push(cmd);
      events.push(...e.apply(cmd).events);
    }
    const restored = PerpEngine.fromSnapshot(snap!);
    const replayed: EngineEvent[] = [];
    for (const cmd of cmds.slice(cut)) replayed.push(...restored.apply(cmd).events);
    return { e, events, restored, replayed, cmds, afterCut: events.filter((x) => x.seq >= snap!.nextSeq) };
  }

  it('rules 1 keep the arming of before, so a journal from an earlier release replays as it was written; rules 2 make a restore agree', () => {
    const one = runUnder(1);
    const two = runUnder(2);
    // The running engine's history is the same under both: the debt opens and resolves at the same commands.
    expect(toJsonSafe(two.events)).toEqual(toJsonSafe(one.events));
    const debts = (evs: EngineEvent[]) => evs.filter((x) => x.type === 'badDebt').map((x) => [x.commandId, x.status]);
    expect(debts(one.events)).toEqual([['c119', 'OPEN'], ['c129', 'RESOLVED']]);
    // Under rules 1, restored at the cut, the old divergence is kept (the resolution is not seen): what
    // an earlier release journalled replays to the same rows, whatever it did.
    expect(debts(one.replayed)).toEqual([]);
    expect(one.restored.stateHash()).not.toBe(one.e.stateHash());
    // Under rules 2 the restored engine agrees, event for event.
    expect(toJsonSafe(two.replayed)).toEqual(toJsonSafe(two.afterCut));
    expect(two.restored.stateHash()).toBe(two.e.stateHash());
    expect(two.restored.rules).toBe(2);
  });
});

describe('engine rules 3: open bad debt is settled again when money arrives', () => {
  const FUND = '0x0000000000000000000000000000000000001000';
  const fundMoves = (events: EngineEvent[]) => events.filter((x): x is Extract<EngineEvent, { type: 'insurance' | 'badDebt' }> => x.type === 'insurance' || x.type === 'badDebt');
  /** A stream (seed 7, path 1018) that ends with a flat account in open bad debt the fund could not pay, under `rules`. */
  function flatDebtor(rules: number) {
    const [[ds]] = fc.sample(fc.tuple(stream(160), fc.nat()), { seed: 7, path: '1018', numRuns: 1 });
    const e = genesis(rules);
    const ctx: Ctx = { marks: [START, START], lastIndexTs: [1_000_000, 1_000_000], withdrawalIds: [] };
    for (let n = 0; n < ds.length; n++) e.apply(concretise(ds[n], e, n, ctx));
    const debtor = TRADERS[4];
    expect(e.insuranceFund().openBadDebt).toEqual([debtor]);
    expect(e.getAccount(debtor)!.positions.every((p) => p.sizeLots === 0)).toBe(true);
    expect(e.getAccount(debtor)!.collateral).toBe(-142_086_870n);
    expect(e.insuranceFund().balance).toBe(0n);
    return { e, debtor, withdraw: (id: string) => e.apply({ kind: 'requestWithdrawal', id, ts: 9_000_000_100, account: TRADERS[0], withdrawalId: id, amount: 1n }) };
  }

  it('a deposit to the fund pays a flat account\'s debt and withdrawals resume (under rules 2 they stayed paused for good)', () => {
    const two = flatDebtor(2);
    expect(two.withdraw('w2').code).toBe('WITHDRAWALS_PAUSED');
    expect(two.e.apply({ kind: 'deposit', id: 'fund', ts: 9_000_000_000, account: FUND, amount: 1_000_000_000n }).ok).toBe(true);
    expect(two.e.insuranceFund().openBadDebt).toEqual([two.debtor]);
    expect(two.withdraw('w2b').code).toBe('WITHDRAWALS_PAUSED');

    const three = flatDebtor(3);
    expect(three.withdraw('w3').code).toBe('WITHDRAWALS_PAUSED');
    const r = three.e.apply({ kind: 'deposit', id: 'fund', ts: 9_000_000_000, account: FUND, amount: 1_000_000_000n });
    expect(r.ok).toBe(true);
    const moves = fundMoves(r.events).map((x) => (x.type === 'insurance' ? [x.type, x.reason, x.account, x.delta] : [x.type, x.account, x.status]));
    expect(toJsonSafe(moves)).toEqual([['insurance', 'badDebt', three.debtor, '-142086870'], ['badDebt', three.debtor, 'RESOLVED']]);
    expect(three.e.getAccount(three.debtor)!.collateral).toBe(0n);
    expect(three.e.insuranceFund()).toMatchObject({ balance: 1_000_000_000n - 142_086_870n, openBadDebt: [] });
    expect(three.withdraw('w3b').ok).toBe(true);
  });

  it('a deposit to the debtor itself settles its debt in the same command', () => {
    const three = flatDebtor(3);
    const r = three.e.apply({ kind: 'deposit', id: 'own', ts: 9_000_000_000, account: three.debtor, amount: 200_000_000n });
    expect(r.events.filter((x) => x.type === 'badDebt').map((x) => [x.type === 'badDebt' && x.status])).toEqual([['RESOLVED']]);
    expect(three.e.getAccount(three.debtor)!.collateral).toBe(200_000_000n - 142_086_870n);
    expect(three.e.insuranceFund().openBadDebt).toEqual([]);
  });

  it('a liquidation fee paid into the fund settles the debt after the liquidation, in the same command', () => {
    const three = flatDebtor(3);
    const { e } = three;
    // Instrument Z (1 tick = $1, 1 lot = 1 unit, MM 2.5 %): A $1,000 long 190 at 100 at 20×, M bids 300 at 96.
    const Z: InstrumentConfig = { ...X, symbol: 'Z-USD', tickSize: '1', lotSize: '1', maxSizeLots: 1_000_000, maxPriceTicks: 1_000_000, priceBandPpm: 0 };
    const [A, M] = ['0x' + 'a'.repeat(40), '0x' + 'd'.repeat(40)];
    let n = 0;
    const run = (c: object) => e.apply({ id: `z${++n}`, ts: 9_000_000_000 + n * 1_000, ...c } as EngineCommand);
    const mark = (ticks: number) => run({ kind: 'setMarkPrice', symbol: 'Z-USD', markPriceTicks: ticks, indexPriceTicks: ticks });
    expect(run({ kind: 'addInstrument', config: Z }).ok).toBe(true);
    for (const [account, amount] of [[M, 1_000_000_000_000n], [A, 1_000_000_000n]] as const) expect(run({ kind: 'deposit', account, amount }).ok).toBe(true);
    expect(run({ kind: 'setLeverage', account: A, symbol: 'Z-USD', leverage: 20 }).ok).toBe(true);
    mark(100);
    expect(run({ kind: 'placeOrder', account: M, symbol: 'Z-USD', side: 'SELL', type: 'LIMIT', priceTicks: 100, sizeLots: 190 }).ok).toBe(true);
    expect(run({ kind: 'placeOrder', account: A, symbol: 'Z-USD', side: 'BUY', type: 'LIMIT', priceTicks: 100, sizeLots: 190 }).ok).toBe(true);
    expect(run({ kind: 'placeOrder', account: M, symbol: 'Z-USD', side: 'BUY', type: 'LIMIT', priceTicks: 96, sizeLots: 300 }).ok).toBe(true);
    expect(e.insuranceFund()).toMatchObject({ balance: 0n, openBadDebt: [three.debtor] });
    // Mark 97: A is liquidated through the book with a $91.20 fee to the fund, which then pays the debt.
    const r = mark(97);
    const moves = fundMoves(r.events).map((x) => (x.type === 'insurance' ? [x.reason, x.account, x.delta] : [x.type, x.account, x.status]));
    expect(toJsonSafe(moves)).toEqual([['liquidationFee', A, '91200000'], ['badDebt', three.debtor, '-91200000']]);
    expect(e.getAccount(three.debtor)!.collateral).toBe(91_200_000n - 142_086_870n);
    expect(e.insuranceFund()).toMatchObject({ balance: 0n, openBadDebt: [three.debtor] });
  });

  it('a fund without money changes nothing: the debt stays open and is settled once the fund has some', () => {
    const three = flatDebtor(3);
    // A deposit to another account: nothing to settle with.
    const r = three.e.apply({ kind: 'deposit', id: 'other', ts: 9_000_000_000, account: TRADERS[0], amount: 5n });
    expect(r.events.filter((x) => x.type === 'badDebt' || x.type === 'insurance')).toEqual([]);
    expect(three.e.insuranceFund().openBadDebt).toEqual([three.debtor]);
    // Less than the debt: the fund pays what it has, the rest stays open.
    const part = three.e.apply({ kind: 'deposit', id: 'fund-part', ts: 9_000_000_001, account: FUND, amount: 100_000_000n });
    expect(part.events.filter((x) => x.type === 'badDebt').length).toBe(0);
    expect(three.e.getAccount(three.debtor)!.collateral).toBe(100_000_000n - 142_086_870n);
    expect(three.e.insuranceFund()).toMatchObject({ balance: 0n, openBadDebt: [three.debtor] });
  });
});

