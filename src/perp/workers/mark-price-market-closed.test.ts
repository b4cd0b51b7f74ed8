import { describe, expect, it } from 'vitest';
import type { EngineCommand } from '../engine/engine-types.ts';
import { DEFAULT_INSTRUMENTS } from '../engine/instruments.ts';
import { PerpEngine } from '../engine/perp-engine.ts';
import { createMarkPriceTask } from './mark-price-task.ts';

const AAPL = DEFAULT_INSTRUMENTS.find((i) => i.symbol === 'AAPL-USD')!;
const MM = `0x${'3'.repeat(40)}`;

describe('the mark task on a closed market', () => {
  it('sends marketOpen: false and clamps the mark to the index ± 10 % instead of ± 5 %', async () => {
    // A book 15 % above a frozen index of 200.00 (the stock closed; news broke overnight).
    const engine = new PerpEngine({ instruments: [AAPL] });
    engine.deposit({ kind: 'deposit', id: 'd', ts: 1, account: MM, amount: 10_000_000_000n });
    engine.setMarkPrice({ kind: 'setMarkPrice', id: 'm', ts: 2, symbol: 'AAPL-USD', markPriceTicks: 23_000, indexPriceTicks: 23_000 });
    engine.placeOrder({ kind: 'placeOrder', id: 'b', ts: 3, account: MM, symbol: 'AAPL-USD', side: 'BUY', type: 'LIMIT', priceTicks: 22_900, sizeLots: 1 });
    engine.placeOrder({ kind: 'placeOrder', id: 'a', ts: 3, account: MM, symbol: 'AAPL-USD', side: 'SELL', type: 'LIMIT', priceTicks: 23_100, sizeLots: 1 });
    const sent: EngineCommand[] = [];
    let open = true;
    let now = 1_000;
    const task = createMarkPriceTask({
      gateway: { submit: async (cmd) => (sent.push(cmd), { ...engine.apply(cmd), journalSeq: sent.length }) as never },
      engine: () => engine,
      index: () => 20_000n,
      marketOpen: () => open,
      now: () => now,
    });
    await task.runOnce();
    expect(sent.at(-1)).toMatchObject({ markPriceTicks: 21_000, indexPriceTicks: 20_000 });
    expect(sent.at(-1)).not.toHaveProperty('marketOpen');
    open = false;
    now += 1_000;
    await task.runOnce();
    expect(sent.at(-1)).toMatchObject({ markPriceTicks: 22_000, indexPriceTicks: 20_000, marketOpen: false });
    expect(engine.marketOpen('AAPL-USD')).toBe(false);
    // The market opens again with nothing else moving: the flag alone is worth a command.
    open = true;
    now += 1_000;
    await task.runOnce();
    expect(sent.at(-1)).toMatchObject({ markPriceTicks: 21_000 });
    expect(engine.marketOpen('AAPL-USD')).toBe(true);
  });
});
