/**
 * The lean limit order book the perpetual engine matches on: integer price ticks and size lots,
 * price-time priority, every fill at the resting order's price. No accounts, no money, no events:
 * the engine (`perp-engine.ts`) drives it through the primitives below, and the benchmark and the
 * differential test drive it through `submitLimit` / `submitMarket` / `cancel`.
 *
 * Layout, chosen for a hot path without scans or per-order allocation:
 * - an order is its own queue node (`prev`/`next`, intrusive doubly-linked FIFO per price level),
 *   so resting one allocates nothing beyond the order and cancelling one is O(1);
 * - `index` maps order id → order for cancel by id in O(1);
 * - each side keeps its levels in an array sorted so that the best level is the LAST element
 *   (bids ascending, asks descending): the best price is O(1), a level emptied by matching is a
 *   `pop()`, and a new level near the top of the book is a `splice` near the end (cheap); a new level
 *   deep in the book is found by binary search. A `Map` from tick to level finds an existing level in
 *   O(1). Emptied level objects are pooled.
 */
import type { TimeInForce } from '@tokex/contract';

export type Side = 'BUY' | 'SELL';

/** A resting or incoming order as the book sees it. The engine extends it with account fields. */
export class BookOrder {
  /** Queue links inside the order's price level (null at the ends / when not resting). */
  prev: BookOrder | null = null;
  next: BookOrder | null = null;
  level: PriceLevel | null = null;

  constructor(
    readonly id: number,
    readonly side: Side,
    readonly priceTicks: number,
    /** Lots still open; the book decrements it on fills. */
    public remainingLots: number,
    /** Self-trade key: orders with the same non-zero owner never match each other. */
    readonly owner: number = 0,
  ) {}
}

export class PriceLevel {
  head: BookOrder | null = null;
  tail: BookOrder | null = null;
  totalLots = 0;
  count = 0;
  constructor(public priceTicks: number) {}
}

/** One side of the book: levels sorted with the best last. */
export class BookSide {
  /** Levels sorted so that the best is last: bids by ascending price, asks by descending price. */
  readonly levels: PriceLevel[] = [];
  readonly byTick = new Map<number, PriceLevel>();
  orderCount = 0;

  constructor(readonly isBid: boolean) {}

  best(): PriceLevel | undefined {
    const n = this.levels.length;
    return n === 0 ? undefined : this.levels[n - 1];
  }

  /** Index at which a level of `tick` sits or would be inserted (first position whose level is "better or equal"). */
  private searchIndex(tick: number): number {
    const levels = this.levels;
    let lo = 0;
    let hi = levels.length;
    if (this.isBid) {
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (levels[mid].priceTicks < tick) lo = mid + 1;
        else hi = mid;
      }
    } else {
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (levels[mid].priceTicks > tick) lo = mid + 1;
        else hi = mid;
      }
    }
    return lo;
  }

  insertLevel(level: PriceLevel): void {
    const levels = this.levels;
    const n = levels.length;
    const tick = level.priceTicks;
    // The common case: a new best level (or the first level).
    if (n === 0 || (this.isBid ? tick > levels[n - 1].priceTicks : tick < levels[n - 1].priceTicks)) levels.push(level);
    else levels.splice(this.searchIndex(tick), 0, level);
    this.byTick.set(tick, level);
  }

  removeLevel(level: PriceLevel): void {
    const levels = this.levels;
    const n = levels.length;
    if (levels[n - 1] === level) levels.pop();
    else {
      const i = this.searchIndex(level.priceTicks);
      if (levels[i] !== level) throw new Error(`order book: level ${level.priceTicks} is not on its side`);
      levels.splice(i, 1);
    }
    this.byTick.delete(level.priceTicks);
  }
}

/** Receives each fill of `match`; called after the maker's `remainingLots` was decremented (0 = maker done and unlinked). */
export interface FillSink<T extends BookOrder> {
  onFill(maker: T, lots: number, priceTicks: number): void;
}

export type BookTimeInForce = TimeInForce;

/** What `submitLimit` / `submitMarket` did with the incoming order. */
export type SubmitOutcome =
  | 'RESTING' // GTC remainder rests (possibly after fills)
  | 'FILLED' // nothing left
  | 'IOC_REMAINDER' // IOC / market remainder dropped
  | 'SELF_TRADE' // stopped at the taker's own resting order; remainder dropped
  | 'FOK_NOT_FILLED' // FOK could not fill in full; nothing happened
  | 'POST_ONLY_WOULD_CROSS' // POST_ONLY would take liquidity; nothing happened
  | 'DUPLICATE_ID'; // an order with this id is already resting; nothing happened

/** Sentinel worst prices: a BUY with MAX_LIMIT and a SELL with 0 cross any level. */
export const MARKET_BUY_LIMIT = Number.MAX_SAFE_INTEGER;
export const MARKET_SELL_LIMIT = 0;

export class OrderBook<T extends BookOrder = BookOrder> {
  readonly bids = new BookSide(true);
  readonly asks = new BookSide(false);
  /** Set by `match`/`fillableLots` when the walk stopped at an order of the taker's own owner. */
  stoppedBySelfTrade = false;
  private readonly pool: PriceLevel[] = [];

  /**
   * @param index order id → resting order. The engine passes one map shared by all its books so an
   *   order id resolves without knowing its instrument.
   */
  constructor(readonly index: Map<number, T> = new Map()) {}

  get size(): number {
    return this.bids.orderCount + this.asks.orderCount;
  }

  get(id: number): T | undefined {
    return this.index.get(id);
  }

  bestBid(): number | undefined {
    return this.bids.best()?.priceTicks;
  }

  bestAsk(): number | undefined {
    return this.asks.best()?.priceTicks;
  }

  /** The side an incoming order of `takerSide` matches against. */
  oppositeOf(takerSide: Side): BookSide {
    return takerSide === 'BUY' ? this.asks : this.bids;
  }

  sideOf(side: Side): BookSide {
    return side === 'BUY' ? this.bids : this.asks;
  }

  /** True when a taker of `side` with worst price `limitTicks` may trade at `priceTicks`. */
  static crosses(side: Side, limitTicks: number, priceTicks: number): boolean {
    return side === 'BUY' ? priceTicks <= limitTicks : priceTicks >= limitTicks;
  }

  /** Rests `order` at the tail of its price level. The caller guarantees it does not cross and its id is new. */
  add(order: T): void {
    const side = order.side === 'BUY' ? this.bids : this.asks;
    let level = side.byTick.get(order.priceTicks);
    if (level === undefined) {
      level = this.pool.pop() ?? new PriceLevel(order.priceTicks);
      level.priceTicks = order.priceTicks;
      side.insertLevel(level);
    }
    const tail = level.tail;
    order.prev = tail;
    order.next = null;
    if (tail === null) level.head = order;
    else tail.next = order;
    level.tail = order;
    order.level = level;
    level.totalLots += order.remainingLots;
    level.count++;
    side.orderCount++;
    this.index.set(order.id, order);
  }

  /** Unlinks a resting order (cancel, or the end of a fill). O(1) unless its level empties away from the top. */
  remove(order: T): void {
    const level = order.level;
    if (level === null) throw new Error(`order book: order ${order.id} is not resting`);
    const side = order.side === 'BUY' ? this.bids : this.asks;
    const { prev, next } = order;
    if (prev === null) level.head = next;
    else prev.next = next;
    if (next === null) level.tail = prev;
    else next.prev = prev;
    order.prev = order.next = null;
    order.level = null;
    level.totalLots -= order.remainingLots;
    level.count--;
    side.orderCount--;
    this.index.delete(order.id);
    if (level.count === 0) {
      side.removeLevel(level);
      level.head = level.tail = null;
      level.totalLots = 0;
      this.pool.push(level);
    }
  }

  /** Takes `lots` (≤ remaining) off a resting order; unlinks it when nothing is left. */
  reduce(order: T, lots: number): void {
    if (lots >= order.remainingLots) {
      this.remove(order);
      order.remainingLots = 0;
    } else {
      order.remainingLots -= lots;
      (order.level as PriceLevel).totalLots -= lots;
    }
  }

  /** Cancels by id; undefined when no such order rests. */
  cancel(id: number): T | undefined {
    const order = this.index.get(id);
    if (order === undefined) return undefined;
    this.remove(order);
    return order;
  }

  /**
   * Lots a taker could fill now, up to `maxLots`, without changing anything (the FOK check). With a
   * non-zero `takerOwner` the walk stops at the taker's own order, as matching would.
   */
  fillableLots(takerSide: Side, limitTicks: number, maxLots: number, takerOwner = 0): number {
    const levels = this.oppositeOf(takerSide).levels;
    this.stoppedBySelfTrade = false;
    let sum = 0;
    for (let i = levels.length - 1; i >= 0 && sum < maxLots; i--) {
      const level = levels[i];
      if (!OrderBook.crosses(takerSide, limitTicks, level.priceTicks)) break;
      if (takerOwner === 0) {
        sum += level.totalLots;
        continue;
      }
      for (let o = level.head; o !== null && sum < maxLots; o = o.next) {
        if (o.owner === takerOwner) {
          this.stoppedBySelfTrade = true;
          return Math.min(sum, maxLots);
        }
        sum += o.remainingLots;
      }
    }
    return Math.min(sum, maxLots);
  }

  /**
   * Matches an incoming order against the opposite side, best price first and FIFO within a price,
   * each fill at the maker's price, until `lots` are filled, the next level is past `limitTicks`, or
   * (with a non-zero `takerOwner`) the next maker is the taker's own order: then the walk stops and
   * `stoppedBySelfTrade` is set. Returns the lots left unfilled.
   */
  match(takerSide: Side, limitTicks: number, lots: number, sink: FillSink<T>, takerOwner = 0): number {
    const side = takerSide === 'BUY' ? this.asks : this.bids;
    const levels = side.levels;
    this.stoppedBySelfTrade = false;
    let remaining = lots;
    while (remaining > 0) {
      const n = levels.length;
      if (n === 0) break;
      const level = levels[n - 1];
      const price = level.priceTicks;
      if (takerSide === 'BUY' ? price > limitTicks : price < limitTicks) break;
      let maker = level.head as T;
      while (remaining > 0) {
        if (takerOwner !== 0 && maker.owner === takerOwner) {
          this.stoppedBySelfTrade = true;
          return remaining;
        }
        const next = maker.next as T | null;
        const avail = maker.remainingLots;
        if (avail <= remaining) {
          remaining -= avail;
          this.remove(maker); // may pool the level when it was the last order
          maker.remainingLots = 0;
          sink.onFill(maker, avail, price);
          if (next === null) break;
          maker = next;
        } else {
          maker.remainingLots = avail - remaining;
          level.totalLots -= remaining;
          sink.onFill(maker, remaining, price);
          remaining = 0;
        }
      }
    }
    return remaining;
  }

  /**
   * A complete limit order against this book alone (what the benchmark and the differential test
   * compare with other books): FOK and POST_ONLY are checked before anything changes, IOC drops its
   * remainder, GTC rests it.
   */
  submitLimit(order: T, timeInForce: BookTimeInForce, sink: FillSink<T>): SubmitOutcome {
    if (this.index.has(order.id)) return 'DUPLICATE_ID';
    const { side, priceTicks } = order;
    if (timeInForce === 'POST_ONLY') {
      const best = this.oppositeOf(side).best();
      if (best !== undefined && OrderBook.crosses(side, priceTicks, best.priceTicks)) return 'POST_ONLY_WOULD_CROSS';
    } else if (timeInForce === 'FOK') {
      if (this.fillableLots(side, priceTicks, order.remainingLots, order.owner) < order.remainingLots) return 'FOK_NOT_FILLED';
    }
    const left = this.match(side, priceTicks, order.remainingLots, sink, order.owner);
    order.remainingLots = left;
    if (left === 0) return 'FILLED';
    if (this.stoppedBySelfTrade) return 'SELF_TRADE';
    if (timeInForce === 'IOC' || timeInForce === 'FOK') return 'IOC_REMAINDER';
    this.add(order);
    return 'RESTING';
  }

  /** A market order (IOC without a price limit); returns the lots left unfilled. */
  submitMarket(side: Side, lots: number, sink: FillSink<T>, takerOwner = 0): number {
    return this.match(side, side === 'BUY' ? MARKET_BUY_LIMIT : MARKET_SELL_LIMIT, lots, sink, takerOwner);
  }

  /** Aggregated levels from the best: `[priceTicks, lots]` pairs, at most `limit` per side. */
  depth(limit = Number.MAX_SAFE_INTEGER): { bids: Array<[number, number]>; asks: Array<[number, number]> } {
    const walk = (side: BookSide): Array<[number, number]> => {
      const out: Array<[number, number]> = [];
      for (let i = side.levels.length - 1; i >= 0 && out.length < limit; i--) out.push([side.levels[i].priceTicks, side.levels[i].totalLots]);
      return out;
    };
    return { bids: walk(this.bids), asks: walk(this.asks) };
  }

  /** Resting orders of one side from the best level, FIFO within a level. */
  *ordersFromBest(side: Side): Generator<T> {
    const levels = this.sideOf(side).levels;
    for (let i = levels.length - 1; i >= 0; i--) {
      for (let o = levels[i].head; o !== null; o = o.next) yield o as T;
    }
  }
}
