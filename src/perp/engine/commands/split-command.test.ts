import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { EngineCommand, SplitAccepted } from '../engine-types.ts';
import { DEFAULT_INSTRUMENTS } from '../instruments.ts';
import { PerpEngine, POOL_ACCOUNT } from '../perp-engine.ts';

const AAPL = DEFAULT_INSTRUMENTS.find((i) => i.symbol === 'AAPL-USD')!;
const SYMBOL = 'AAPL-USD';
const ACCOUNTS = Array.from({ length: 6 }, (_, i) => `0x${(i + 1).toString(16).padStart(40, 'a')}`);
/** AAPL-USD: tick 0.01 USD × lot 0.01 share = 100 micro-USD. */
const UNIT = 100n;

type Op =
  | { k: 'limit'; who: number; buy: boolean; offPpm: number; lots: number }
  | { k: 'market'; who: number; buy: boolean; lots: number }
  | { k: 'stop'; who: number; buy: boolean; offPpm: number; lots: number }
  | { k: 'mark'; movePpm: number }
  | { k: 'isolated'; who: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ k: fc.constant('limit' as const), who: fc.nat(5), buy: fc.boolean(), offPpm: fc.integer({ min: -40_000, max: 40_000 }), lots: fc.integer({ min: 1, max: 3_000 }) }) },
  { weight: 3, arbitrary: fc.record({ k: fc.constant('market' as const), who: fc.nat(5), buy: fc.boolean(), lots: fc.integer({ min: 1, max: 3_000 }) }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('stop' as const), who: fc.nat(5), buy: fc.boolean(), offPpm: fc.integer({ min: 1_000, max: 40_000 }), lots: fc.integer({ min: 1, max: 1_000 }) }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('mark' as const), movePpm: fc.integer({ min: -30_000, max: 30_000 }) }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('isolated' as const), who: fc.nat(5) }) },
);

const RATIOS: Array<[number, number]> = [[2, 1], [3, 1], [4, 1], [10, 1], [20, 1], [1, 2], [1, 3], [1, 10], [3, 2], [2, 3], [6, 4]];

/** A venue with funded accounts, a funded pool and a mark, as commands (journal form). */
function genesis(startTicks: number): EngineCommand[] {
  const cmds: EngineCommand[] = [];
  let n = 0;
  const id = () => `g${n++}`;
  for (const account of ACCOUNTS) cmds.push({ kind: 'deposit', id: id(), ts: 1, account, amount: 5_000_000_000_000n });
  cmds.push({ kind: 'addLiquidity', id: id(), ts: 1, account: ACCOUNTS[0], amount: 500_000_000_000n, lockupMs: 0 });
  cmds.push({ kind: 'setMarkPrice', id: id(), ts: 2, symbol: SYMBOL, markPriceTicks: startTicks, indexPriceTicks: startTicks });
  return cmds;
}

/** Turns a generated op into a command against the engine's current mark. */
function commandOf(engine: PerpEngine, op: Op, i: number): EngineCommand {
  const ts = 10 + i;
  const id = `c${i}`;
  const mark = engine.prices(SYMBOL)!.markPriceTicks;
  const at = (ppm: number) => Math.max(1, mark + Math.trunc((mark * ppm) / 1_000_000));
  const side = (buy: boolean) => (buy ? 'BUY' : 'SELL') as 'BUY' | 'SELL';
  switch (op.k) {
    case 'limit':
      return { kind: 'placeOrder', id, ts, account: ACCOUNTS[op.who], symbol: SYMBOL, side: side(op.buy), type: 'LIMIT', priceTicks: at(op.offPpm), sizeLots: op.lots };
    case 'market':
      return { kind: 'placeOrder', id, ts, account: ACCOUNTS[op.who], symbol: SYMBOL, side: side(op.buy), type: 'MARKET', sizeLots: op.lots };
    case 'stop':
      // A stop that fires on a move against the buyer (up) or the seller (down).
      return { kind: 'placeOrder', id, ts, account: ACCOUNTS[op.who], symbol: SYMBOL, side: side(op.buy), type: 'STOP_MARKET', sizeLots: op.lots, triggerPriceTicks: at(op.buy ? op.offPpm : -op.offPpm) };
    case 'mark': {
      const m = at(op.movePpm);
      return { kind: 'setMarkPrice', id, ts, symbol: SYMBOL, markPriceTicks: m, indexPriceTicks: m };
    }
    case 'isolated':
      return { kind: 'setLeverage', id, ts, account: ACCOUNTS[op.who], symbol: SYMBOL, leverage: 5, marginMode: 'isolated' };
  }
}

interface Valued {
  /** The engine's equity (at its mark). */
  equity: bigint;
  collateralAndIsolated: bigint;
  positions: Array<{ sizeLots: number; entryNotional: bigint }>;
}

function valuations(engine: PerpEngine): Map<string, Valued> {
  const out = new Map<string, Valued>();
  for (const a of engine.accountAddresses()) {
    const view = engine.getAccount(a)!;
    const positions = view.positions.filter((p) => p.symbol === SYMBOL && p.sizeLots !== 0);
    const iso = view.positions.reduce((t, p) => t + p.isolatedMargin, 0n);
    out.set(a, { equity: engine.marginSummary(a)!.equity, collateralAndIsolated: view.collateral + iso, positions: positions.map((p) => ({ sizeLots: p.sizeLots, entryNotional: p.entryNotional })) });
  }
  return out;
}

/** T × (equity at the price `priceNum / priceDen` ticks): exact, in micro-USD × priceDen. */
function equityAt(v: Valued, priceNum: bigint, priceDen: bigint): bigint {
  let e = v.collateralAndIsolated * priceDen;
  for (const p of v.positions) {
    const value = BigInt(p.sizeLots) * priceNum * UNIT;
    e += p.sizeLots > 0 ? value - p.entryNotional * priceDen : value + p.entryNotional * priceDen;
  }
  return e;
}

function split(engine: PerpEngine, to: number, from: number, id = 'AAPL-2030-01-02', ts = 100_000): SplitAccepted {
  const r = engine.applySplit({ kind: 'applySplit', id: `split:${id}`, ts, symbol: SYMBOL, actionId: id, ratioTo: to, ratioFrom: from });
  if (!r.ok) throw new Error(`split refused: ${r.code} ${r.message}`);
  return r;
}

function gcd(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}

/** An engine from genesis at `priceTicks` in which b sold a `lots` at that price (b rests, a takes). */
function tradedAt(priceTicks: number, lots: number): PerpEngine {
  const engine = new PerpEngine({ instruments: [AAPL] });
  for (const c of genesis(priceTicks)) engine.apply(c);
  const [a, b] = ACCOUNTS;
  engine.placeOrder({ kind: 'placeOrder', id: 'o1', ts: 3, account: b, symbol: SYMBOL, side: 'SELL', type: 'LIMIT', priceTicks, sizeLots: lots });
  engine.placeOrder({ kind: 'placeOrder', id: 'o2', ts: 4, account: a, symbol: SYMBOL, side: 'BUY', type: 'MARKET', sizeLots: lots });
  return engine;
}

describe('applySplit', () => {
  it('a 10:1 split: sizes ×10, prices ÷10, entry cost kept, orders rounded to their passive side', () => {
    const engine = tradedAt(22_987, 3);
    const [a, b, c] = ACCOUNTS;
    // b rests a sell at 229.87; a buys 3 lots of it; a bid at 229.81 and an ask at 230.05 rest.
    const bid = engine.placeOrder({ kind: 'placeOrder', id: 'o3', ts: 5, account: c, symbol: SYMBOL, side: 'BUY', type: 'LIMIT', priceTicks: 22_981, sizeLots: 7 });
    const ask = engine.placeOrder({ kind: 'placeOrder', id: 'o4', ts: 6, account: c, symbol: SYMBOL, side: 'SELL', type: 'LIMIT', priceTicks: 23_005, sizeLots: 2 });
    const before = valuations(engine);
    const entryBefore = engine.getAccount(a)!.positions[0].entryNotional;
    expect(entryBefore).toBe(3n * 22_987n * UNIT);

    const r = split(engine, 10, 1);
    expect(r.duplicate).toBe(false);
    expect(engine.getAccount(a)!.positions[0]).toMatchObject({ sizeLots: 30, entryNotional: entryBefore });
    expect(engine.getAccount(b)!.positions[0]).toMatchObject({ sizeLots: -30, entryNotional: entryBefore });
    // 229.87 / 10 = 22.987 → the mark rounds down to 22.98.
    expect(engine.prices(SYMBOL)).toMatchObject({ markPriceTicks: 2_298, indexPriceTicks: 2_298, lastTradePriceTicks: 2_298 });
    // The bid 22.981 rounds down to 22.98, the ask 23.005 up to 23.01; sizes ×10.
    expect(engine.getOrder(bid.ok ? bid.order.orderId : 0)).toMatchObject({ priceTicks: 2_298, sizeLots: 70, remainingLots: 70 });
    expect(engine.getOrder(ask.ok ? ask.order.orderId : 0)).toMatchObject({ priceTicks: 2_301, sizeLots: 20, remainingLots: 20 });
    // Equity at the exact adjusted price 22.987 is what it was at 229.87; at the whole-tick mark the
    // long reads 30 lots × 0.007 USD = 0.21 USD lower and the short as much higher.
    const after = valuations(engine);
    expect(after.get(a)!.equity).toBe(before.get(a)!.equity - 30n * 7n * UNIT / 10n);
    expect(after.get(b)!.equity).toBe(before.get(b)!.equity + 30n * 7n * UNIT / 10n);
    for (const [acct, v] of before) expect(equityAt(after.get(acct)!, 22_987n, 10n)).toBe(v.equity * 10n);
    const events = r.events.map((e) => e.type);
    expect(events).toContain('split');
    expect(r.events.find((e) => e.type === 'split')).toMatchObject({ positions: 2, remainders: 0, ordersAdjusted: 2, ordersCanceled: 0 });

    // Idempotent per action id: a repeat changes nothing, and the memory survives a snapshot.
    const hash = engine.stateHash();
    const again = split(engine, 10, 1);
    expect(again).toMatchObject({ ok: true, duplicate: true, events: [] });
    expect(engine.stateHash()).toBe(hash);
    const restored = PerpEngine.fromSnapshot(engine.snapshot());
    expect(restored.stateHash()).toBe(hash);
    expect(restored.splitApplied(SYMBOL, 'AAPL-2030-01-02')).toBe(true);
    expect(split(restored, 10, 1).duplicate).toBe(true);
  });

  it('a 1:10 reverse split closes the remainder below ten old lots against the pool at the mark (cash in lieu)', () => {
    const engine = tradedAt(20_000, 25);
    const [a, b, c] = ACCOUNTS;
    // A resting bid of 7 lots: 0.7 new lots, rounds to none → cancelled with reason SPLIT.
    const small = engine.placeOrder({ kind: 'placeOrder', id: 'o3', ts: 5, account: c, symbol: SYMBOL, side: 'BUY', type: 'LIMIT', priceTicks: 19_999, sizeLots: 7 });
    engine.setMarkPrice({ kind: 'setMarkPrice', id: 'm', ts: 6, symbol: SYMBOL, markPriceTicks: 20_100, indexPriceTicks: 20_100 });
    const before = valuations(engine);
    const r = split(engine, 1, 10);
    // 25 old lots → 2 new lots (20 old); 5 old lots of each side go to the pool at 201.00.
    expect(engine.getAccount(a)!.positions[0]).toMatchObject({ sizeLots: 2 });
    expect(engine.getAccount(b)!.positions[0]).toMatchObject({ sizeLots: -2 });
    expect(engine.getAccount(POOL_ACCOUNT)!.positions.find((p) => p.symbol === SYMBOL)?.sizeLots ?? 0).toBe(0);
    // The long realised 5 lots × (201.00 − 200.00) = 5 × 100 ticks × 100 micro = 0.05 USD.
    const aAfter = engine.getAccount(a)!;
    expect(aAfter.collateral - before.get(a)!.collateralAndIsolated).toBe(5n * 100n * UNIT);
    expect(engine.getOrder(small.ok ? small.order.orderId : 0)).toBeUndefined();
    expect(r.events.find((e) => e.type === 'orderDone')).toMatchObject({ reason: 'SPLIT', status: 'CANCELED', remainingLots: 7 });
    expect(engine.prices(SYMBOL)).toMatchObject({ markPriceTicks: 201_000 });
    for (const [acct, v] of before) expect(valuations(engine).get(acct)!.equity).toBe(v.equity);
  });

  it('refuses bad ratios and unknown symbols without changing anything', () => {
    const engine = new PerpEngine({ instruments: [AAPL] });
    const hash = engine.stateHash();
    const base = { kind: 'applySplit' as const, id: 'x', ts: 1, symbol: SYMBOL, actionId: 'AAPL-2030-01-02' };
    expect(engine.applySplit({ ...base, ratioTo: 0, ratioFrom: 1 })).toMatchObject({ ok: false, code: 'INVALID' });
    expect(engine.applySplit({ ...base, ratioTo: 2, ratioFrom: 2 })).toMatchObject({ ok: false, code: 'INVALID' });
    expect(engine.applySplit({ ...base, ratioTo: 1.5, ratioFrom: 1 })).toMatchObject({ ok: false, code: 'INVALID' });
    expect(engine.applySplit({ ...base, actionId: '', ratioTo: 2, ratioFrom: 1 })).toMatchObject({ ok: false, code: 'INVALID' });
    expect(engine.applySplit({ ...base, symbol: 'MSFT-USD', ratioTo: 2, ratioFrom: 1 })).toMatchObject({ ok: false });
    expect(engine.stateHash()).toBe(hash);
  });

  it('conserves every account’s equity over random books and positions (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 500, max: 60_000 }),
        fc.array(opArb, { minLength: 5, maxLength: 60 }),
        fc.constantFrom(...RATIOS),
        (start, ops, [to, from]) => {
          const engine = new PerpEngine({ instruments: [AAPL] });
          for (const c of genesis(start)) engine.apply(c);
          ops.forEach((op, i) => engine.apply(commandOf(engine, op, i)));
          const markBefore = engine.prices(SYMBOL)!.markPriceTicks;
          const before = valuations(engine);
          const ordersBefore = new Map(ACCOUNTS.flatMap((a) => engine.openOrders(a, SYMBOL)).map((o) => [o.orderId, o]));

          const r = split(engine, to, from);
          const g = gcd(to, from);
          const T = BigInt(to / g);
          const F = BigInt(from / g);
          const after = valuations(engine);

          let sumBefore = 0n;
          let sumAfter = 0n;
          let sizes = 0;
          for (const [acct, v] of before) {
            const w = after.get(acct)!;
            sumBefore += v.equity;
            sumAfter += w.equity;
            // Exact at the split-adjusted price mark × F / T (remainders were closed at the mark).
            expect(equityAt(w, BigInt(markBefore) * F, T)).toBe(v.equity * T);
            // At the whole-tick mark: less than one tick per lot of the new position away.
            const lots = w.positions.reduce((t, p) => t + BigInt(Math.abs(p.sizeLots)), 0n);
            const diff = w.equity - v.equity;
            expect(diff < 0n ? -diff : diff).toBeLessThanOrEqual(lots * UNIT);
            for (const p of w.positions) sizes += p.sizeLots;
          }
          // Nothing created or lost across the venue, and the longs still equal the shorts.
          expect(sumAfter).toBe(sumBefore);
          expect(sizes).toBe(0);

          // Orders: passive rounding of at most one tick, sizes rounded down, the book uncrossed.
          let canceled = 0;
          for (const [id, o] of ordersBefore) {
            const now = engine.getOrder(id);
            const exactNum = BigInt(o.priceTicks) * F;
            const lotsNow = (BigInt(o.remainingLots) * T) / F;
            if (now === undefined) {
              canceled++;
              expect(lotsNow === 0n || o.priceTicks === 0).toBe(true);
              continue;
            }
            expect(BigInt(now.remainingLots)).toBe(lotsNow);
            if (o.priceTicks === 0) continue;
            const p = BigInt(now.priceTicks) * T;
            if (o.side === 'BUY') {
              expect(p <= exactNum && exactNum - p < T).toBe(true);
            } else {
              expect(p >= exactNum && p - exactNum < T).toBe(true);
            }
          }
          expect(r.events.find((e) => e.type === 'split')).toMatchObject({ ordersCanceled: canceled });
          const bba = engine.bestBidAsk(SYMBOL)!;
          if (bba.bidTicks !== undefined && bba.askTicks !== undefined) expect(bba.bidTicks).toBeLessThan(bba.askTicks);
          // The state is self-consistent (a restore checks the reserves and the book).
          expect(PerpEngine.fromSnapshot(engine.snapshot()).stateHash()).toBe(engine.stateHash());
        },
      ),
      { numRuns: 150, seed: 31 },
    );
  });

  it('replays: journal from genesis, and snapshot + tail, reach the same state hash and events after a split', () => {
    fc.assert(
      fc.property(
        fc.array(opArb, { minLength: 10, maxLength: 40 }),
        fc.array(opArb, { minLength: 1, maxLength: 20 }),
        fc.constantFrom(...RATIOS),
        fc.nat(),
        (head, tail, [to, from], cutSeed) => {
          const live = new PerpEngine({ instruments: [AAPL] });
          const journal: EngineCommand[] = [];
          const run = (c: EngineCommand) => {
            journal.push(c);
            return live.apply(c);
          };
          for (const c of genesis(20_000)) run(c);
          head.forEach((op, i) => run(commandOf(live, op, i)));
          run({ kind: 'applySplit', id: 'split', ts: 50_000, symbol: SYMBOL, actionId: 'AAPL-2030-01-02', ratioTo: to, ratioFrom: from });
          tail.forEach((op, i) => run(commandOf(live, op, 1_000 + i)));
          // The same split again (a worker's resubmission) is a no-op in the journal too.
          run({ kind: 'applySplit', id: 'split-again', ts: 60_000, symbol: SYMBOL, actionId: 'AAPL-2030-01-02', ratioTo: to, ratioFrom: from });

          const replayed = new PerpEngine({ instruments: [AAPL] });
          for (const c of journal) replayed.apply(c);
          expect(replayed.stateHash()).toBe(live.stateHash());

          // A snapshot at any cut point (before or after the split), then the rest of the journal.
          const cut = cutSeed % journal.length;
          const first = new PerpEngine({ instruments: [AAPL] });
          for (const c of journal.slice(0, cut)) first.apply(c);
          const resumed = PerpEngine.fromSnapshot(JSON.parse(JSON.stringify(first.snapshot())));
          const liveTail = new PerpEngine({ instruments: [AAPL] });
          for (const c of journal.slice(0, cut)) liveTail.apply(c);
          for (const c of journal.slice(cut)) expect(resumed.apply(c)).toEqual(liveTail.apply(c));
          expect(resumed.stateHash()).toBe(live.stateHash());
        },
      ),
      { numRuns: 60, seed: 7 },
    );
  });
});
