/**
 * A list read after an acknowledged order shows it (issue 40 item 3, docs/perp-api.md "History"):
 * the projector writes the history a write behind the engine, and here at most every 1.5 s, yet
 * `orders/history`, `trades` and `account/transactions` read right after the answers show the
 * orders, the fill and the fees, because list reads wait for the projection to reach the engine's
 * last durable event.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newTrader, perpHarnessVariants, USD, type PerpHarness } from '../support/perp-api-harness.ts';

const AAPL = 'AAPL-USD';

describe.each(perpHarnessVariants())('perp history: read your own writes ($name)', (variant) => {
  let h: PerpHarness;
  const trader = () => newTrader(h, 10_000n * USD);

  beforeAll(async () => {
    h = await variant.start({ engine: true, limit: 10_000, projectorWriteIntervalMs: 1_500 });
    await h.venue!.mark(AAPL, 20_000);
  });
  afterAll(async () => {
    await h?.stop();
  });

  it('orders/history, trades and transactions read just after the answers show the orders, the fill and the fees', async () => {
    const bob = await trader();
    const alice = await trader();
    // One write now starts the projector's 1.5 s interval: what follows is not written before it ends.
    await h.venue!.settled();
    const sell = await bob.api.placeOrder<{ orderId: string }>(bob.wallet, { symbol: AAPL, side: 'SELL', type: 'LIMIT', size: '2', price: '200' });
    const buy = await alice.api.placeOrder<{ orderId: string; status: string }>(alice.wallet, { symbol: AAPL, side: 'BUY', type: 'MARKET', size: '2' });
    expect(buy.status).toBe('FILLED');
    // The engine is ahead of the projection at this moment (the reads below are what wait).
    expect(h.venue!.projector.projectedSeq).toBeLessThan(h.venue!.sequencer.lastDurableEventSeq);

    const history = await alice.api.get<{ rows: Array<{ orderId: string; status: string; filledSize: string }> }>('orders/history', { symbol: AAPL });
    expect(history.rows.map((o) => [o.orderId, o.status, o.filledSize])).toEqual([[buy.orderId, 'FILLED', '2']]);
    const fills = await bob.api.get<{ rows: Array<{ orderId: string; side: string; size: string; price: string }> }>('trades', { symbol: AAPL });
    expect(fills.rows.map((t) => [t.orderId, t.side, t.size, t.price])).toEqual([[sell.orderId, 'SELL', '2', '200']]);
    const moves = await alice.api.get<{ rows: Array<{ type: string; amount: string }> }>('account/transactions');
    // 2 × 200 USD × the taker fee of 500 ppm: 0.2 USD.
    expect(moves.rows.map((t) => [t.type, t.amount])).toEqual([['FEE', '-0.2'], ['DEPOSIT', '10000']]);
  });
});
