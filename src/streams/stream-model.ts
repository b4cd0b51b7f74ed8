/**
 * What a stream's snapshot is made of, and how an update changes it. The publisher and every API
 * instance's hub fold the same updates with the same model, so the snapshot an instance hands a new
 * subscriber is exactly "every update up to seq N" (contract.md §C), whichever instance it is.
 *
 * Four shapes cover every channel of both APIs:
 * - `latest`: the snapshot is the last update (tickers, mark, account, quotes, balances, klines).
 * - `recent`: the snapshot is the last `max` updates, newest first (trades, fills, operations).
 * - `keyed`: the snapshot is a list of live objects; an update replaces the object with its key, or
 *   removes it when `isGone` says it has ended (open orders, positions).
 * - `book`: price levels; an update lists changed levels, size "0" removing one (depth).
 */

export interface StreamModel {
  apply(update: unknown): void;
  /** The current state as a JSON value, in the shape the channel documents. */
  snapshot(): unknown;
}

export type ModelFactory = (from?: unknown) => StreamModel;

export function latestModel(initial: unknown = null): ModelFactory {
  return (from) => {
    let value: unknown = from === undefined ? initial : from;
    return {
      apply(update) {
        value = update;
      },
      snapshot: () => value,
    };
  };
}

export function recentModel(max: number): ModelFactory {
  return (from) => {
    // Oldest first inside, so an append is cheap; the snapshot reverses.
    const items: unknown[] = Array.isArray(from) ? from.slice(0, max).reverse() : [];
    return {
      apply(update) {
        items.push(update);
        if (items.length > max) items.splice(0, items.length - max);
      },
      snapshot: () => items.slice().reverse(),
    };
  };
}

export function keyedModel(keyOf: (item: any) => string, isGone: (item: any) => boolean): ModelFactory {
  return (from) => {
    const items = new Map<string, unknown>();
    if (Array.isArray(from)) for (const item of from) items.set(keyOf(item), item);
    return {
      apply(update) {
        const k = keyOf(update);
        if (isGone(update)) items.delete(k);
        else items.set(k, update);
      },
      snapshot: () => [...items.values()],
    };
  };
}

/** Levels as decimal strings: [price, size]. */
export type Level = [string, string];

export interface BookSnapshot {
  bids: Level[];
  asks: Level[];
  ts: number;
}

export interface BookUpdate {
  bids: Level[];
  asks: Level[];
  ts: number;
}

const isZero = (size: string) => !/[1-9]/.test(size);

/** Sorts levels best first: bids by price descending, asks ascending (prices as decimal strings). */
function sortLevels(levels: Map<string, string>, descending: boolean): Level[] {
  const out = [...levels.entries()];
  out.sort((a, b) => {
    const c = compareDecimal(a[0], b[0]);
    return descending ? -c : c;
  });
  return out;
}

/** Compares two non-negative decimal strings exactly. */
export function compareDecimal(a: string, b: string): number {
  const [ai, af = ''] = a.split('.');
  const [bi, bf = ''] = b.split('.');
  const ia = ai.replace(/^0+(?=\d)/, '');
  const ib = bi.replace(/^0+(?=\d)/, '');
  if (ia.length !== ib.length) return ia.length < ib.length ? -1 : 1;
  if (ia !== ib) return ia < ib ? -1 : 1;
  const n = Math.max(af.length, bf.length);
  const fa = af.padEnd(n, '0');
  const fb = bf.padEnd(n, '0');
  return fa === fb ? 0 : fa < fb ? -1 : 1;
}

export function bookModel(): ModelFactory {
  return (from) => {
    const bids = new Map<string, string>();
    const asks = new Map<string, string>();
    let ts = 0;
    const set = (side: Map<string, string>, [price, size]: Level) => {
      if (isZero(size)) side.delete(price);
      else side.set(price, size);
    };
    if (from !== undefined && from !== null) {
      const b = from as BookSnapshot;
      for (const l of b.bids) set(bids, l);
      for (const l of b.asks) set(asks, l);
      ts = b.ts ?? 0;
    }
    return {
      apply(update) {
        const u = update as BookUpdate;
        for (const l of u.bids) set(bids, l);
        for (const l of u.asks) set(asks, l);
        ts = u.ts;
      },
      snapshot: (): BookSnapshot => ({ bids: sortLevels(bids, true), asks: sortLevels(asks, false), ts }),
    };
  };
}
