import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newYorkDayStart, type CorporateAction } from '../../src/marketdata/corporate-actions.ts';
import type { EngineCommand } from '../../src/perp/engine/engine-types.ts';
import { DEFAULT_INSTRUMENTS } from '../../src/perp/engine/instruments.ts';
import { PerpEngine } from '../../src/perp/engine/perp-engine.ts';
import type { SequencedResult } from '../../src/perp/sequencer/engine-sequencer.ts';
import { createSplitTask, splitActionIdOf, splitsToApply } from '../../src/perp/workers/split-task.ts';
import { actionIdOf, insertCorporateAction, listCorporateActions, markActionFailed } from '../../src/stock/corporate-actions/corporate-action-store.ts';
import { openDatabase, type Db } from '../../src/storage/database.ts';

const EX = '2030-01-02';
/** The multiplier after one split of `ratio`:1. */
const m = (ratio: bigint): string => (ratio * 10n ** 36n).toString();
const EFFECTIVE = newYorkDayStart(EX);
const TRADER = `0x${'1'.repeat(40)}`;
const MAKER = `0x${'2'.repeat(40)}`;

/** AAPL-USD with a 3-lot position each way at 229.87 and a resting bid. */
function venue(): PerpEngine {
  const engine = new PerpEngine({ instruments: DEFAULT_INSTRUMENTS });
  engine.deposit({ kind: 'deposit', id: 'd1', ts: 1, account: TRADER, amount: 1_000_000_000n });
  engine.deposit({ kind: 'deposit', id: 'd2', ts: 1, account: MAKER, amount: 1_000_000_000n });
  engine.setMarkPrice({ kind: 'setMarkPrice', id: 'm', ts: 2, symbol: 'AAPL-USD', markPriceTicks: 22_987, indexPriceTicks: 22_987 });
  engine.placeOrder({ kind: 'placeOrder', id: 'o1', ts: 3, account: MAKER, symbol: 'AAPL-USD', side: 'SELL', type: 'LIMIT', priceTicks: 22_987, sizeLots: 3 });
  engine.placeOrder({ kind: 'placeOrder', id: 'o2', ts: 4, account: TRADER, symbol: 'AAPL-USD', side: 'BUY', type: 'MARKET', sizeLots: 3 });
  return engine;
}

/** A gateway onto the engine that holds commands until `release` (the window between the ex-date and the split's application). */
function gatewayOf(engine: PerpEngine, hold = false) {
  const held: EngineCommand[] = [];
  const submitted: EngineCommand[] = [];
  return {
    held,
    submitted,
    release: () => held.splice(0).map((c) => engine.apply(c)),
    submit: async (cmd: EngineCommand): Promise<SequencedResult> => {
      submitted.push(cmd);
      if (hold) {
        held.push(cmd);
        return { ok: true, code: 'OK', events: [], journalSeq: null } as SequencedResult;
      }
      return { ...engine.apply(cmd), journalSeq: submitted.length } as SequencedResult;
    },
  };
}

describe('the perp split task (real SQLite)', () => {
  let db: Db;
  beforeEach(async () => {
    db = await openDatabase({ sqlitePath: ':memory:' });
  });
  afterEach(async () => {
    await db.close();
  });

  it('applies a stored split once at 00:00 New York on the ex-date, withholding the index until the engine and the quote are in the same shares', async () => {
    await insertCorporateAction(db, { symbol: 'AAPL', type: 'SPLIT', exDate: EX, ratio: '10:1', source: 'cli' }, 0);
    const engine = venue();
    const gw = gatewayOf(engine, true);
    let wall = EFFECTIVE - 1;
    const task = createSplitTask({ listStored: () => listCorporateActions(db), gateway: gw, engine: () => engine, venueStartDate: '2029-12-01', now: () => wall });

    await task.runOnce();
    expect(gw.submitted).toEqual([]);
    expect(task.indexPaused('AAPL-USD', {})).toBe(false);

    // The ex-date moment: the split is due; until the engine has it, AAPL-USD's index is withheld
    // (and only AAPL-USD's).
    wall = EFFECTIVE;
    expect(task.indexPaused('AAPL-USD', { multiplier: m(10n) })).toBe(true);
    expect(task.indexPaused('TSLA-USD', {})).toBe(false);
    expect(task.indexPaused('BTC-USD', {})).toBe(false);
    await task.runOnce();
    expect(gw.submitted).toEqual([
      { kind: 'applySplit', id: `split:AAPL-${EX}:AAPL-USD`, ts: EFFECTIVE, symbol: 'AAPL-USD', actionId: `AAPL-${EX}`, ratioTo: 10, ratioFrom: 1 },
    ]);
    expect(task.indexPaused('AAPL-USD', { multiplier: m(10n) })).toBe(true);

    // Applied: a quote in post-split shares is used again; one still in the old shares is not.
    const [result] = gw.release();
    expect(result).toMatchObject({ ok: true, duplicate: false });
    expect(engine.getAccount(TRADER)!.positions[0]).toMatchObject({ symbol: 'AAPL-USD', sizeLots: 30 });
    expect(engine.prices('AAPL-USD')).toMatchObject({ markPriceTicks: 2_298 });
    expect(task.indexPaused('AAPL-USD', { multiplier: m(10n) })).toBe(false);
    expect(task.indexPaused('AAPL-USD', {})).toBe(true);

    // Later rounds submit nothing more, and a resubmission is a no-op in the engine.
    wall += 5_000;
    await task.runOnce();
    expect(gw.submitted).toHaveLength(1);
    const hash = engine.stateHash();
    expect(engine.apply(gw.submitted[0])).toMatchObject({ ok: true, duplicate: true, events: [] });
    expect(engine.stateHash()).toBe(hash);
  });

  it('follows the market calendar clock (MARKET_CLOCK_START) rather than the wall clock', async () => {
    await insertCorporateAction(db, { symbol: 'AAPL', type: 'SPLIT', exDate: EX, ratio: '4:1', source: 'cli' }, 0);
    const engine = venue();
    const gw = gatewayOf(engine);
    const offset = 3_600_000;
    const task = createSplitTask({ listStored: () => listCorporateActions(db), gateway: gw, engine: () => engine, venueStartDate: '2029-12-01', now: () => EFFECTIVE - offset, clockOffsetMs: offset });
    await task.runOnce();
    expect(gw.submitted).toHaveLength(1);
    expect(engine.getAccount(TRADER)!.positions[0]).toMatchObject({ sizeLots: 12 });
  });

  it('takes the file’s splits from the venue’s start, lets a stored row win, skips failed rows, dividends and stocks without a perpetual', async () => {
    const file: CorporateAction[] = [
      { symbol: 'NVDA', type: 'SPLIT', exDate: '2024-06-10', ratio: '10:1' },
      { symbol: 'TSLA', type: 'SPLIT', exDate: EX, ratio: '3:1' },
      { symbol: 'AAPL', type: 'DIVIDEND', exDate: EX, amount: '0.26', currency: 'USD' },
    ];
    await insertCorporateAction(db, { symbol: 'NVDA', type: 'SPLIT', exDate: '2030-01-03', ratio: '2:1', source: 'cli' }, 0);
    await markActionFailed(db, 'NVDA-2030-01-03', 'the chain refused', 1);
    await insertCorporateAction(db, { symbol: 'MSFT', type: 'SPLIT', exDate: EX, ratio: '2:1', source: 'cli' }, 0);
    await insertCorporateAction(db, { symbol: 'TSLA', type: 'SPLIT', exDate: EX, ratio: '5:1', source: 'file' }, 0);

    // The perp side forms the stock side's ids.
    expect(splitActionIdOf('tsla', EX)).toBe(actionIdOf('tsla', EX));
    const known = splitsToApply(file, [], '2029-12-01');
    expect(known.map((s) => s.actionId)).toEqual([`TSLA-${EX}`]);

    const engine = venue();
    const gw = gatewayOf(engine);
    const task = createSplitTask({ listStored: () => listCorporateActions(db), gateway: gw, engine: () => engine, fileActions: file, venueStartDate: '2029-12-01', now: () => EFFECTIVE + 10 * 86_400_000 });
    // Before the table is read, the file's TSLA split already pauses TSLA-USD's index.
    expect(task.indexPaused('TSLA-USD', { multiplier: m(3n) })).toBe(true);
    await task.runOnce();
    expect(task.known().map((s) => `${s.actionId} ${s.ratioTo}:${s.ratioFrom}`)).toEqual([`MSFT-${EX} 2:1`, `TSLA-${EX} 5:1`]);
    // MSFT has no perpetual; the stored TSLA row (5:1) replaces the file's 3:1.
    expect(gw.submitted.map((c) => c.kind === 'applySplit' && `${c.symbol} ${c.ratioTo}:${c.ratioFrom}`)).toEqual(['TSLA-USD 5:1']);
    expect(task.indexPaused('TSLA-USD', { multiplier: m(5n) })).toBe(false);
    expect(task.indexPaused('TSLA-USD', { multiplier: m(3n) })).toBe(true);
    // NVDA's split failed on the stock side: the perpetual is not split, so a quote that moved to it waits.
    expect(task.indexPaused('NVDA-USD', {})).toBe(false);
    expect(task.indexPaused('NVDA-USD', { multiplier: m(2n) })).toBe(true);
  });

  it('a split after the stock venue started but before this venue did is in the quotes and in the engine’s prices already', async () => {
    await insertCorporateAction(db, { symbol: 'AAPL', type: 'SPLIT', exDate: EX, ratio: '2:1', source: 'cli' }, 0);
    const engine = venue();
    const gw = gatewayOf(engine);
    // The stock venue started before the split, the perpetual venue after it.
    const task = createSplitTask({ listStored: () => listCorporateActions(db), gateway: gw, engine: () => engine, venueStartDate: '2030-01-03', quotesStartDate: '2029-12-01', now: () => EFFECTIVE + 86_400_000 });
    await task.runOnce();
    expect(gw.submitted).toEqual([]);
    expect(task.indexPaused('AAPL-USD', { multiplier: m(2n) })).toBe(false);
    expect(task.indexPaused('AAPL-USD', {})).toBe(true);
  });
});
