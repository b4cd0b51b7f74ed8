import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BookOrder, OrderBook, type FillSink, type Side } from './order-book.ts';

class Recorder implements FillSink<BookOrder> {
  fills: Array<[number, number, number]> = [];
  onFill(maker: BookOrder, lots: number, priceTicks: number): void {
    this.fills.push([maker.id, lots, priceTicks]);
  }
}

function rest(book: OrderBook, id: number, side: Side, price: number, lots: number, owner = 0): BookOrder {
  const o = new BookOrder(id, side, price, lots, owner);
  book.add(o);
  return o;
}

describe('OrderBook', () => {
  it('matches best price first, FIFO within a price, each fill at the resting price', () => {
    const book = new OrderBook();
    rest(book, 1, 'SELL', 101, 5);
    rest(book, 2, 'SELL', 100, 5);
    rest(book, 3, 'SELL', 100, 3);
    rest(book, 4, 'SELL', 102, 1);
    const sink = new Recorder();
    const left = book.match('BUY', 101, 10, sink);
    expect(left).toBe(0);
    expect(sink.fills).toEqual([
      [2, 5, 100],
      [3, 3, 100],
      [1, 2, 101],
    ]);
    expect(book.get(1)?.remainingLots).toBe(3);
    expect(book.get(2)).toBeUndefined();
    expect(book.depth()).toEqual({ bids: [], asks: [[101, 3], [102, 1]] });
    expect(book.size).toBe(2);
  });

  it('stops at the limit price and leaves the remainder to the caller', () => {
    const book = new OrderBook();
    rest(book, 1, 'BUY', 99, 4);
    rest(book, 2, 'BUY', 98, 4);
    const sink = new Recorder();
    expect(book.match('SELL', 99, 10, sink)).toBe(6);
    expect(sink.fills).toEqual([[1, 4, 99]]);
    expect(book.bestBid()).toBe(98);
  });

  it('cancels from the middle of a level in O(1) and keeps the queue order', () => {
    const book = new OrderBook();
    for (let id = 1; id <= 5; id++) rest(book, id, 'BUY', 50, id);
    expect(book.cancel(3)?.id).toBe(3);
    expect(book.cancel(3)).toBeUndefined();
    expect([...book.ordersFromBest('BUY')].map((o) => o.id)).toEqual([1, 2, 4, 5]);
    expect(book.depth().bids).toEqual([[50, 1 + 2 + 4 + 5]]);
    book.cancel(1);
    book.cancel(5);
    expect([...book.ordersFromBest('BUY')].map((o) => o.id)).toEqual([2, 4]);
    book.cancel(2);
    book.cancel(4);
    expect(book.bestBid()).toBeUndefined();
    expect(book.bids.levels.length).toBe(0);
  });

  it('stops at an order of the same owner (self-trade) and reports it', () => {
    const book = new OrderBook();
    rest(book, 1, 'SELL', 100, 2, 7);
    rest(book, 2, 'SELL', 100, 2, 8);
    const sink = new Recorder();
    expect(book.match('BUY', 100, 5, sink, 8)).toBe(3);
    expect(book.stoppedBySelfTrade).toBe(true);
    expect(sink.fills).toEqual([[1, 2, 100]]);
    expect(book.fillableLots('BUY', 100, 5, 8)).toBe(0);
    expect(book.fillableLots('BUY', 100, 5, 9)).toBe(2);
  });

  it('submitLimit: GTC rests, IOC drops, FOK and POST_ONLY change nothing when refused', () => {
    const book = new OrderBook();
    rest(book, 1, 'SELL', 100, 3);
    rest(book, 2, 'SELL', 101, 3);
    const sink = new Recorder();
    expect(book.submitLimit(new BookOrder(3, 'BUY', 101, 7), 'FOK', sink)).toBe('FOK_NOT_FILLED');
    expect(book.submitLimit(new BookOrder(3, 'BUY', 100, 1), 'POST_ONLY', sink)).toBe('POST_ONLY_WOULD_CROSS');
    expect(sink.fills).toEqual([]);
    expect(book.submitLimit(new BookOrder(3, 'BUY', 99, 1), 'POST_ONLY', sink)).toBe('RESTING');
    expect(book.submitLimit(new BookOrder(3, 'BUY', 99, 1), 'GTC', sink)).toBe('DUPLICATE_ID');
    expect(book.submitLimit(new BookOrder(4, 'BUY', 100, 5), 'IOC', sink)).toBe('IOC_REMAINDER');
    expect(sink.fills).toEqual([[1, 3, 100]]);
    expect(book.get(4)).toBeUndefined();
    const o5 = new BookOrder(5, 'BUY', 101, 5);
    expect(book.submitLimit(o5, 'GTC', sink)).toBe('RESTING');
    expect(o5.remainingLots).toBe(2);
    expect(book.depth()).toEqual({ bids: [[101, 2], [99, 1]], asks: [] });
    expect(book.submitMarket('SELL', 10, sink)).toBe(7);
    expect(book.size).toBe(0);
  });

  it('keeps levels sorted and the best price right under random adds, cancels and fills', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.record({ op: fc.constant('add' as const), side: fc.constantFrom<Side>('BUY', 'SELL'), price: fc.integer({ min: 1, max: 40 }), lots: fc.integer({ min: 1, max: 5 }) }),
            fc.record({ op: fc.constant('cancel' as const), pick: fc.nat() }),
          ),
          { maxLength: 200 },
        ),
        (ops) => {
          const book = new OrderBook();
          const model = new Map<number, { side: Side; price: number; lots: number }>();
          let id = 0;
          const sink: FillSink<BookOrder> = {
            onFill(maker, lots) {
              const m = model.get(maker.id)!;
              m.lots -= lots;
              if (m.lots === 0) model.delete(maker.id);
            },
          };
          for (const op of ops) {
            if (op.op === 'add') {
              const o = new BookOrder(++id, op.side, op.price, op.lots);
              model.set(id, { side: op.side, price: op.price, lots: op.lots });
              book.submitLimit(o, 'GTC', sink);
              if (o.remainingLots > 0) model.get(id)!.lots = o.remainingLots;
              else model.delete(id);
            } else if (model.size > 0) {
              const ids = [...model.keys()];
              const victim = ids[op.pick % ids.length];
              book.cancel(victim);
              model.delete(victim);
            }
            const bids = [...model.values()].filter((o) => o.side === 'BUY').map((o) => o.price);
            const asks = [...model.values()].filter((o) => o.side === 'SELL').map((o) => o.price);
            expect(book.bestBid()).toBe(bids.length ? Math.max(...bids) : undefined);
            expect(book.bestAsk()).toBe(asks.length ? Math.min(...asks) : undefined);
            if (bids.length && asks.length) expect(Math.max(...bids)).toBeLessThan(Math.min(...asks));
            expect(book.size).toBe(model.size);
            const { bids: db, asks: da } = book.depth();
            expect(db.map(([p]) => p)).toEqual([...new Set(bids)].sort((a, b) => b - a));
            expect(da.map(([p]) => p)).toEqual([...new Set(asks)].sort((a, b) => a - b));
          }
        },
      ),
      { numRuns: 150 },
    );
  });
});
