/**
 * The venue's own perpetual actors in a seeded sandbox (docs/sandbox.md "Determinism"): at an
 * instant that does not move, the market maker and the marks follow the index only (not a fill),
 * and the demo taker trades by the venue's clock; without a seed they act as before.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { PerpEngine } from '../engine/perp-engine.ts';
import type { EngineCommand } from '../engine/engine-types.ts';
import { setVenueSeed } from '../../lib/seeded-random.ts';
import { createMarketMakerTask, quotesDue } from './market-maker-task.ts';
import { createDemoTakerTask } from './demo-taker-task.ts';
import { createMarkPriceTask } from './mark-price-task.ts';

const T = 1_717_999_200_000;
const USD = 1_000_000n;
const BTC = 'BTC-USD';
const MM = '0x00000000000000000000000000000000000000cc';
const CLIENT = '0x00000000000000000000000000000000000000aa';
const TAKER = '0x00000000000000000000000000000000000000bb';

afterEach(() => setVenueSeed(undefined));

/** An engine with BTC at `index` ticks and three funded accounts, behind a gateway that counts what it was sent. */
function venue(index: number) {
  const engine = new PerpEngine();
  const sent: EngineCommand[] = [];
  const gateway = { submit: async (cmd: EngineCommand) => (sent.push(cmd), engine.apply(cmd)) as never };
  engine.apply({ kind: 'setMarkPrice', id: 'm0', ts: T, symbol: BTC, markPriceTicks: index, indexPriceTicks: index });
  for (const account of [MM, CLIENT, TAKER]) engine.apply({ kind: 'deposit', id: `d-${account}`, ts: T, account, amount: 1_000_000n * USD });
  return { engine, gateway, sent };
}

/** The client's market buy of `lots` against the book. */
const clientBuys = (engine: PerpEngine, lots: number, id: string) =>
  engine.apply({ kind: 'placeOrder', id, ts: T, account: CLIENT, symbol: BTC, side: 'BUY', type: 'MARKET', sizeLots: lots, timeInForce: 'IOC' });

describe('quotesDue held still', () => {
  it('only the index moving makes quotes due; a fill or their age do not', () => {
    const last = { index: 20_000n, at: 1_000, restingLots: 10 };
    const open = [{ remainingLots: 10 }] as never;
    const filled = [{ remainingLots: 9 }] as never;
    expect(quotesDue(last, filled, 20_000n, 1_000, 5n, 30_000)).toBe(true);
    expect(quotesDue(last, filled, 20_000n, 1_000, 5n, 30_000, true)).toBe(false);
    expect(quotesDue(last, open, 20_000n, 99_000, 5n, 30_000, true)).toBe(false);
    expect(quotesDue(last, filled, 19_990n, 1_000, 5n, 30_000, true)).toBe(true);
    // Never quoted: due, held or not.
    expect(quotesDue(undefined, [], 20_000n, 1_000, 5n, 30_000, true)).toBe(true);
  });
});

describe('the market maker', () => {
  const round = async (seed: number | undefined) => {
    setVenueSeed(seed);
    const v = venue(600_000);
    let now = T;
    const mm = createMarketMakerTask({ gateway: v.gateway, engine: () => v.engine, account: MM, levels: 2, now: () => now });
    await mm.runOnce();
    const quoted = v.engine.openOrders(MM, BTC).map((o) => o.orderId);
    expect(quoted).toHaveLength(4);
    expect(clientBuys(v.engine, 10, 'client-1')).toMatchObject({ ok: true, order: { status: 'FILLED', filledLots: 10 } });
    const before = v.sent.length;
    await mm.runOnce();
    const atTheInstant = v.sent.length - before;
    now += 1;
    await mm.runOnce();
    return { atTheInstant, afterTimeMoved: v.sent.length - before - atTheInstant, quoted };
  };

  it('seeded, at an instant that does not move: a fill is not requoted until time moves', async () => {
    expect(await round(7)).toMatchObject({ atTheInstant: 0, afterTimeMoved: 5 });
  });

  it('without a seed: a fill is requoted at once, as before (a cancel-all and the two levels each side)', async () => {
    expect(await round(undefined)).toMatchObject({ atTheInstant: 5, afterTimeMoved: 0 });
  });

  it('seeded: an index moved at the same instant (a pin) is requoted', async () => {
    setVenueSeed(7);
    const v = venue(600_000);
    const mm = createMarketMakerTask({ gateway: v.gateway, engine: () => v.engine, account: MM, levels: 2, now: () => T });
    await mm.runOnce();
    v.engine.apply({ kind: 'setMarkPrice', id: 'pin', ts: T, symbol: BTC, markPriceTicks: 630_000, indexPriceTicks: 630_000 });
    await mm.runOnce();
    expect(v.engine.depth(BTC, 1)).toEqual({ bids: [[629_685, 318]], asks: [[630_315, 318]] });
  });
});

describe('the demo taker', () => {
  it('seeded: trades every everyMs of the venue\'s time, the first after everyMs; never while it stands still', async () => {
    setVenueSeed(7);
    const v = venue(600_000);
    let now = T;
    await createMarketMakerTask({ gateway: v.gateway, engine: () => v.engine, account: MM, levels: 1, now: () => now }).runOnce();
    const taker = createDemoTakerTask({ gateway: v.gateway, engine: () => v.engine, account: TAKER, everyMs: 10_000, now: () => now });
    const trades = () => v.sent.filter((c) => c.kind === 'placeOrder' && c.account === TAKER).length;
    for (let i = 0; i < 3; i++) await taker.runOnce();
    expect(trades()).toBe(0);
    now += 9_999;
    await taker.runOnce();
    expect(trades()).toBe(0);
    now += 1;
    await taker.runOnce();
    await taker.runOnce();
    expect(trades()).toBe(1);
    now += 10_000;
    await taker.runOnce();
    expect(trades()).toBe(2);
  });

  it('without a seed: trades at every round, as before', async () => {
    const v = venue(600_000);
    await createMarketMakerTask({ gateway: v.gateway, engine: () => v.engine, account: MM, levels: 1, now: () => T }).runOnce();
    const taker = createDemoTakerTask({ gateway: v.gateway, engine: () => v.engine, account: TAKER, now: () => T });
    await taker.runOnce();
    await taker.runOnce();
    expect(v.sent.filter((c) => c.kind === 'placeOrder' && c.account === TAKER)).toHaveLength(2);
  });
});

describe('the mark', () => {
  const afterATrade = async (seed: number | undefined) => {
    setVenueSeed(seed);
    const v = venue(600_000);
    let index = 600_000n;
    const marks = () => v.sent.filter((c) => c.kind === 'setMarkPrice').length;
    const task = createMarkPriceTask({ gateway: v.gateway, engine: () => v.engine, index: (symbol) => (symbol === BTC ? index : undefined), now: () => T });
    await task.runOnce();
    expect(marks()).toBe(1);
    // The market maker's level a side at 594 000 and 606 000, a trade at the ask (last 606 000) and
    // a bid of the client's at 603 000: the mid 604 500, and the median of the three 604 500.
    await createMarketMakerTask({ gateway: v.gateway, engine: () => v.engine, account: MM, levels: 1, halfSpreadBps: 100, now: () => T }).runOnce();
    clientBuys(v.engine, 10, 'client-1');
    v.engine.apply({ kind: 'placeOrder', id: 'client-2', ts: T, account: CLIENT, symbol: BTC, side: 'BUY', type: 'LIMIT', priceTicks: 603_000, sizeLots: 10, timeInForce: 'GTC' });
    await task.runOnce();
    const afterTrade = marks();
    index = 600_600n;
    await task.runOnce();
    return { afterTrade, afterIndex: marks(), mark: v.engine.prices(BTC)!.markPriceTicks };
  };

  it('seeded, at the instant of the last mark: held through a trade, sent again when the index moves', async () => {
    expect(await afterATrade(7)).toEqual({ afterTrade: 1, afterIndex: 2, mark: 604_500 });
  });

  it('without a seed: a trade that moves the mark sends it at once, as before', async () => {
    expect(await afterATrade(undefined)).toEqual({ afterTrade: 2, afterIndex: 3, mark: 604_500 });
  });
});
