/**
 * Differential test: the engine's book (src/perp/engine/book/order-book.ts) and nodejs-order-book fed the
 * same random stream of limit (GTC, IOC, FOK, post-only), market and cancel operations must produce
 * the same fills — maker, price and size, in the same order — and the same depth after every
 * operation. The stream stays inside what both books define alike: no accounts (so no self-trade
 * prevention), unique ids, integer prices and sizes.
 */
import fc from 'fast-check';
import { OrderBook as PeerBook } from 'nodejs-order-book';
import { describe, expect, it } from 'vitest';
import { BookOrder, OrderBook, type BookTimeInForce, type FillSink, type Side } from '../../src/perp/engine/book/order-book.ts';

type Op =
  | { k: 'limit'; buy: boolean; price: number; size: number; tif: BookTimeInForce }
  | { k: 'market'; buy: boolean; size: number }
  | { k: 'cancel'; pick: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 8, arbitrary: fc.record({ k: fc.constant('limit' as const), buy: fc.boolean(), price: fc.integer({ min: 90, max: 110 }), size: fc.integer({ min: 1, max: 20 }), tif: fc.constantFrom<BookTimeInForce>('GTC', 'GTC', 'GTC', 'IOC', 'FOK', 'POST_ONLY') }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('market' as const), buy: fc.boolean(), size: fc.integer({ min: 1, max: 40 }) }) },
  { weight: 3, arbitrary: fc.record({ k: fc.constant('cancel' as const), pick: fc.nat() }) },
);

type Fill = [string, number, number]; // maker id, price, size

class Recorder implements FillSink<BookOrder> {
  fills: Fill[] = [];
  onFill(maker: BookOrder, lots: number, priceTicks: number): void {
    this.fills.push([String(maker.id), priceTicks, lots]);
  }
}

interface PeerResult {
  done: Array<{ id: string; price: number; size: number }>;
  partial: { id: string; price: number; size: number } | null;
  partialQuantityProcessed: number;
  err: { message: string } | null;
}

/** The peer reports fully filled makers in `done` (with the size they had) and at most one partly filled maker in `partial`. */
function peerFills(r: PeerResult, takerId: string | null): Fill[] {
  const fills: Fill[] = r.done.filter((o) => o.id !== takerId).map((o) => [o.id, o.price, o.size]);
  if (r.partial !== null && r.partial.id !== takerId && r.partialQuantityProcessed > 0) fills.push([r.partial.id, r.partial.price, r.partialQuantityProcessed]);
  return fills;
}

function peerDepth(peer: PeerBook): { bids: Array<[number, number]>; asks: Array<[number, number]> } {
  const [asks, bids] = peer.depth();
  return { bids, asks };
}

function run(ops: Op[]): { fills: number; cancels: number } {
  const ours = new OrderBook();
  const peer = new PeerBook();
  const live: number[] = [];
  let nextId = 1;
  let fills = 0;
  let cancels = 0;
  for (const op of ops) {
    const sink = new Recorder();
    let expected: Fill[];
    if (op.k === 'limit') {
      const id = nextId++;
      const side: Side = op.buy ? 'BUY' : 'SELL';
      const order = new BookOrder(id, side, op.price, op.size);
      const outcome = ours.submitLimit(order, op.tif, sink);
      const r = peer.limit({
        id: String(id), side: (op.buy ? 'buy' : 'sell') as never, size: op.size, price: op.price,
        postOnly: op.tif === 'POST_ONLY', timeInForce: (op.tif === 'POST_ONLY' ? 'GTC' : op.tif) as never,
      }) as unknown as PeerResult;
      // Refusals agree: FOK not fillable and post-only crossing change nothing in either book.
      expect(r.err !== null).toBe(outcome === 'FOK_NOT_FILLED' || outcome === 'POST_ONLY_WOULD_CROSS');
      expected = r.err === null ? peerFills(r, String(id)) : [];
      if (outcome === 'RESTING') live.push(id);
    } else if (op.k === 'market') {
      ours.submitMarket(op.buy ? 'BUY' : 'SELL', op.size, sink);
      const r = peer.market({ side: (op.buy ? 'buy' : 'sell') as never, size: op.size }) as unknown as PeerResult;
      expected = peerFills(r, null);
    } else {
      if (live.length === 0) continue;
      const id = live.splice(op.pick % live.length, 1)[0];
      const mine = ours.cancel(id);
      const theirs = peer.cancel(String(id));
      // Both still hold it, or both saw it filled already.
      expect(mine === undefined).toBe(theirs === undefined);
      if (mine) cancels++;
      expected = [];
    }
    expect(sink.fills).toEqual(expected);
    fills += sink.fills.length;
    expect(ours.depth()).toEqual(peerDepth(peer));
  }
  return { fills, cancels };
}

describe('order book against nodejs-order-book', () => {
  it('gives the same fills and depth on random streams', () => {
    let totalFills = 0;
    let totalCancels = 0;
    fc.assert(
      fc.property(fc.array(opArb, { minLength: 50, maxLength: 300 }), (ops) => {
        const { fills, cancels } = run(ops);
        totalFills += fills;
        totalCancels += cancels;
      }),
      { numRuns: 150, seed: 42 },
    );
    // The streams really trade and cancel.
    expect(totalFills).toBeGreaterThan(2_000);
    expect(totalCancels).toBeGreaterThan(500);
  });

  it('agrees on one long stream with a deep book', () => {
    const ops = fc.sample(fc.array(opArb, { minLength: 5_000, maxLength: 5_000 }), { numRuns: 1, seed: 3 })[0];
    const { fills } = run(ops);
    expect(fills).toBeGreaterThan(1_000);
  });
});
