/**
 * The perpetual engine's book against nodejs-order-book, in process, one core, on the same stream of
 * operations from a fixed seed: limit adds near the mid (some of them crossing), cancels of resting
 * orders and market orders. Two books: a steady one of a few thousand resting orders and a deep one
 * of over 100 000. Then the full engine (accounts, margin, fees, events) on the steady stream.
 *
 *   npx tsx bench/perp-engine-bench.ts            (BENCH_PERP_OPS=100000 for a quick run;
 *                                                  BENCH_PERP_SEED, BENCH_PERP_STEADY, BENCH_PERP_DEEP,
 *                                                  BENCH_PERP_ROUNDS)
 *
 * The stream is generated first (untimed) by simulating it on our book, so every cancel names an
 * order that is resting at that moment in both books (the differential test shows the two books
 * agree fill for fill). Pre-filling the book to its depth is untimed as well. Each implementation is
 * timed in alternating rounds after a full collection, and the best round of each is reported.
 * `runPerpEngineBench()` is exported for the main bench.
 */
import { pathToFileURL } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { OrderBook as PeerBook } from 'nodejs-order-book';
import { createPrng } from '../src/marketdata/prng.ts';
import type { EngineCommand, PlaceOrderAccepted } from '../src/perp/engine/engine-types.ts';
import type { InstrumentConfig } from '../src/perp/engine/instruments.ts';
import { BookOrder, OrderBook, type FillSink } from '../src/perp/engine/book/order-book.ts';
import { PerpEngine } from '../src/perp/engine/perp-engine.ts';

export interface PerpEngineBenchOptions {
  /** Timed operations per scenario. Default 1 000 000 (BENCH_PERP_OPS). */
  ops?: number;
  /** Default 1 (BENCH_PERP_SEED). */
  seed?: number;
  /** Resting orders of the steady book. Default 5 000 (BENCH_PERP_STEADY). */
  steadyDepth?: number;
  /** Resting orders of the deep book. Default 120 000 (BENCH_PERP_DEEP). */
  deepDepth?: number;
  /** Timed rounds per implementation, alternating ours and the peer; the best of each is reported. Default 2 (BENCH_PERP_ROUNDS). */
  rounds?: number;
  /** Also run the full engine on the deep stream. Default false. */
  engineDeep?: boolean;
  print?: (line: string) => void;
}

export interface BookFigures {
  scenario: 'steady' | 'deep';
  ops: number;
  restingAtStart: number;
  restingAtEnd: number;
  priceLevels: number;
  fills: number;
  oursOpsPerSec: number;
  peerOpsPerSec: number;
  /** ours / peer. */
  ratio: number;
}

export interface EngineFigures {
  scenario: 'steady' | 'deep';
  ops: number;
  opsPerSec: number;
  accepted: number;
  rejected: number;
  trades: number;
  events: number;
}

export interface PerpEngineBenchResult {
  seed: number;
  books: BookFigures[];
  engine: EngineFigures[];
  table: string;
}

export const LIMIT = 0;
export const MARKET = 1;
export const CANCEL = 2;
export const MID = 1_000_000;

/** A pre-generated stream: `prefill` untimed limit adds, then `ops` timed operations. */
export interface Stream {
  prefill: number;
  total: number;
  kind: Uint8Array;
  buy: Uint8Array;
  price: Int32Array;
  size: Int32Array;
  /** Limit: the new order's id; cancel: the id of a resting order. */
  id: Int32Array;
  /** Which of the engine bench's accounts places the order (limit and market). */
  account: Uint8Array;
  restingAtStart: number;
  restingAtEnd: number;
  priceLevels: number;
  fills: number;
}

/**
 * A full collection before every timed run, so no run pays for the garbage of the one before (the
 * stream generator leaves a whole simulated book behind). `--expose-gc` is set at runtime.
 */
setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;

class Counter implements FillSink<BookOrder> {
  fills = 0;
  lots = 0;
  onFill(_maker: BookOrder, lots: number): void {
    this.fills++;
    this.lots += lots;
  }
}

/**
 * Generates the stream by running it on our book. Passive adds sit 1..`spread` ticks from the mid on
 * their own side (skewed toward the mid); one add in ten crosses the mid by up to 5 ticks; market
 * orders take 1..20 lots. Adds and cancels are balanced so the book hovers around `depth` orders.
 */
export function generate(seed: number, depth: number, ops: number, spread: number, accounts: number): Stream {
  // The project's seeded generator: the same stream on every run.
  const generator = createPrng(seed);
  const rand = () => generator.next();
  const total = depth + ops;
  const s: Stream = {
    prefill: depth, total, kind: new Uint8Array(total), buy: new Uint8Array(total), price: new Int32Array(total),
    size: new Int32Array(total), id: new Int32Array(total), account: new Uint8Array(total),
    restingAtStart: 0, restingAtEnd: 0, priceLevels: 0, fills: 0,
  };
  const book = new OrderBook();
  // Live ids for picking a cancel in O(1): array with swap-remove and the index of each id.
  const live: number[] = [];
  const where = new Map<number, number>();
  const drop = (id: number) => {
    const i = where.get(id);
    if (i === undefined) return;
    const last = live.pop() as number;
    if (last !== id) {
      live[i] = last;
      where.set(last, i);
    }
    where.delete(id);
  };
  const sink: FillSink<BookOrder> = {
    onFill(maker) {
      s.fills++;
      if (maker.remainingLots === 0) drop(maker.id);
    },
  };
  let nextId = 1;
  for (let i = 0; i < total; i++) {
    const timed = i >= depth;
    const r = rand();
    // Below the target depth adds win, above it cancels do: the book hovers around `depth`.
    const addBias = 0.45 + 0.4 * Math.max(-1, Math.min(1, (depth - live.length) / (depth * 0.05)));
    let kind = LIMIT;
    if (timed) kind = r < 0.1 ? MARKET : r < 0.1 + addBias * 0.9 ? LIMIT : CANCEL;
    if (kind === CANCEL && live.length === 0) kind = LIMIT;
    const buy = rand() < 0.5;
    s.kind[i] = kind;
    s.buy[i] = buy ? 1 : 0;
    s.account[i] = Math.floor(rand() * accounts);
    if (kind === LIMIT) {
      const crossing = timed && rand() < 0.1;
      const off = crossing ? -Math.floor(rand() * 6) : 1 + Math.floor(rand() * rand() * spread);
      const price = buy ? MID - off : MID + off;
      const size = 1 + Math.floor(rand() * 10);
      const id = nextId++;
      s.price[i] = price;
      s.size[i] = size;
      s.id[i] = id;
      const o = new BookOrder(id, buy ? 'BUY' : 'SELL', price, size);
      if (book.submitLimit(o, 'GTC', sink) === 'RESTING') {
        where.set(id, live.length);
        live.push(id);
      }
    } else if (kind === MARKET) {
      s.size[i] = 1 + Math.floor(rand() * 20);
      book.submitMarket(buy ? 'BUY' : 'SELL', s.size[i], sink);
    } else {
      const id = live[Math.floor(rand() * live.length)];
      s.id[i] = id;
      book.cancel(id);
      drop(id);
    }
    if (i === depth - 1) s.restingAtStart = book.size;
  }
  s.restingAtEnd = book.size;
  s.priceLevels = book.bids.levels.length + book.asks.levels.length;
  return s;
}

function runOurs(s: Stream): number {
  const book = new OrderBook();
  const sink = new Counter();
  const { kind, buy, price, size, id } = s;
  collect();
  let t0 = 0;
  for (let i = 0; i < s.total; i++) {
    if (i === s.prefill) t0 = performance.now();
    const k = kind[i];
    if (k === LIMIT) book.submitLimit(new BookOrder(id[i], buy[i] === 1 ? 'BUY' : 'SELL', price[i], size[i]), 'GTC', sink);
    else if (k === MARKET) book.submitMarket(buy[i] === 1 ? 'BUY' : 'SELL', size[i], sink);
    else book.cancel(id[i]);
  }
  const ms = performance.now() - t0;
  if (book.size !== s.restingAtEnd) throw new Error(`bench: our book ended with ${book.size} orders, expected ${s.restingAtEnd}`);
  return ms;
}

function runPeer(s: Stream): number {
  const book = new PeerBook();
  const { kind, buy, price, size, id } = s;
  // The peer takes string ids: made before the clock starts.
  const ids: string[] = new Array(s.total);
  for (let i = 0; i < s.total; i++) ids[i] = String(id[i]);
  collect();
  let t0 = 0;
  for (let i = 0; i < s.total; i++) {
    if (i === s.prefill) t0 = performance.now();
    const k = kind[i];
    if (k === LIMIT) book.limit({ id: ids[i], side: (buy[i] === 1 ? 'buy' : 'sell') as never, size: size[i], price: price[i] });
    else if (k === MARKET) book.market({ side: (buy[i] === 1 ? 'buy' : 'sell') as never, size: size[i] });
    else book.cancel(ids[i]);
  }
  const ms = performance.now() - t0;
  const [asks, bids] = book.depth();
  const resting = [...asks, ...bids].reduce((n, [, v]) => n + v, 0);
  if (resting <= 0 && s.restingAtEnd > 0) throw new Error('bench: the peer book ended empty');
  return ms;
}

/** The same stream through the full engine: commands with accounts, margin checks, fees and events. */
function runEngine(s: Stream, scenario: 'steady' | 'deep', accounts: number): EngineFigures {
  const inst: InstrumentConfig = {
    symbol: 'BENCH-USD', tickSize: '0.01', lotSize: '0.01', minSizeLots: 1, maxSizeLots: 1_000_000, maxPriceTicks: 100_000_000,
    maxLeverage: 50, initialMarginRatioPpm: 20_000, maintenanceMarginRatioPpm: 10_000, makerFeeRatePpm: 200, takerFeeRatePpm: 500,
    fundingIntervalMs: 28_800_000, priceBandPpm: 0, markStaleMs: 0,
  };
  const engine = new PerpEngine({ instruments: [inst] });
  const addresses = Array.from({ length: accounts }, (_, i) => '0x' + (i + 1).toString(16).padStart(40, '0'));
  let ts = 1;
  for (const account of addresses) engine.apply({ kind: 'deposit', id: `d${ts}`, ts: ts++, account, amount: 10n ** 15n });
  engine.apply({ kind: 'setMarkPrice', id: 'mark', ts: ts++, symbol: inst.symbol, markPriceTicks: MID, indexPriceTicks: MID });
  // Stream id → engine order id and its account (the engine numbers its orders itself).
  const engineId = new Int32Array(s.total + 1);
  const owner = new Uint8Array(s.total + 1);
  let accepted = 0;
  let rejected = 0;
  let trades = 0;
  let events = 0;
  collect();
  let t0 = 0;
  for (let i = 0; i < s.total; i++) {
    if (i === s.prefill) {
      t0 = performance.now();
      accepted = rejected = trades = events = 0;
    }
    const k = s.kind[i];
    let cmd: EngineCommand;
    if (k === CANCEL) {
      const sid = s.id[i];
      cmd = { kind: 'cancelOrder', id: 'c', ts, account: addresses[owner[sid]], orderId: engineId[sid] };
    } else {
      cmd = {
        kind: 'placeOrder', id: 'c', ts, account: addresses[s.account[i]], symbol: inst.symbol, side: s.buy[i] === 1 ? 'BUY' : 'SELL',
        type: k === LIMIT ? 'LIMIT' : 'MARKET', priceTicks: k === LIMIT ? s.price[i] : undefined, sizeLots: s.size[i],
      };
    }
    const r = engine.apply(cmd);
    if (r.ok) {
      accepted++;
      events += r.events.length;
      if (k !== CANCEL) {
        const placed = r as PlaceOrderAccepted;
        trades += placed.fills.length;
        if (k === LIMIT) {
          engineId[s.id[i]] = placed.order.orderId;
          owner[s.id[i]] = s.account[i];
        }
      }
    } else rejected++;
    ts++;
  }
  const ms = performance.now() - t0;
  return { scenario, ops: s.total - s.prefill, opsPerSec: Math.round(((s.total - s.prefill) / ms) * 1000), accepted, rejected, trades, events };
}

function fmt(n: number): string {
  return n.toLocaleString('en-US');
}

export async function runPerpEngineBench(opts: PerpEngineBenchOptions = {}): Promise<PerpEngineBenchResult> {
  const ops = opts.ops ?? Number(process.env.BENCH_PERP_OPS ?? 1_000_000);
  const seed = opts.seed ?? Number(process.env.BENCH_PERP_SEED ?? 1);
  const steadyDepth = opts.steadyDepth ?? Number(process.env.BENCH_PERP_STEADY ?? 5_000);
  const deepDepth = opts.deepDepth ?? Number(process.env.BENCH_PERP_DEEP ?? 120_000);
  const rounds = Math.max(1, opts.rounds ?? Number(process.env.BENCH_PERP_ROUNDS ?? 2));
  const print = opts.print ?? (() => {});
  const accounts = 64;

  // Warm both implementations up on a small stream so the timed runs measure compiled code.
  const warm = generate(seed + 1000, 2_000, 50_000, 100, accounts);
  runOurs(warm);
  runPeer(warm);

  const books: BookFigures[] = [];
  const streams: Record<'steady' | 'deep', Stream> = {} as never;
  for (const [scenario, depth, spread] of [
    ['steady', steadyDepth, 200],
    ['deep', deepDepth, 2_000],
  ] as const) {
    print(`perp bench: generating the ${scenario} stream (${fmt(depth)} resting, ${fmt(ops)} ops)`);
    const s = generate(seed, depth, ops, spread, accounts);
    streams[scenario] = s;
    // Alternating rounds, best of each: a run's speed depends on the heap the previous one left.
    let oursMs = Infinity;
    let peerMs = Infinity;
    for (let round = 1; round <= rounds; round++) {
      const o = runOurs(s);
      print(`perp bench: ${scenario} round ${round} ours ${fmt(Math.round(o))} ms`);
      const p = runPeer(s);
      print(`perp bench: ${scenario} round ${round} peer ${fmt(Math.round(p))} ms`);
      oursMs = Math.min(oursMs, o);
      peerMs = Math.min(peerMs, p);
    }
    const oursOpsPerSec = Math.round((ops / oursMs) * 1000);
    const peerOpsPerSec = Math.round((ops / peerMs) * 1000);
    books.push({
      scenario, ops, restingAtStart: s.restingAtStart, restingAtEnd: s.restingAtEnd, priceLevels: s.priceLevels, fills: s.fills,
      oursOpsPerSec, peerOpsPerSec, ratio: Math.round((oursOpsPerSec / peerOpsPerSec) * 100) / 100,
    });
  }
  let best: EngineFigures | null = null;
  for (let round = 1; round <= rounds; round++) {
    const e = runEngine(streams.steady, 'steady', accounts);
    if (best === null || e.opsPerSec > best.opsPerSec) best = e;
  }
  const engine: EngineFigures[] = [best as EngineFigures];
  print(`perp bench: engine steady ${fmt(engine[0].opsPerSec)} ops/s`);
  if (opts.engineDeep) engine.push(runEngine(streams.deep, 'deep', accounts));

  const lines = [
    `perpetual engine book vs nodejs-order-book (seed ${seed}, ${fmt(ops)} timed ops per scenario, best of ${rounds} alternating rounds, one core, in process)`,
    '',
    '| scenario | resting orders (start → end) | price levels | fills | ours ops/s | nodejs-order-book ops/s | ratio |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...books.map((b) => `| ${b.scenario} | ${fmt(b.restingAtStart)} → ${fmt(b.restingAtEnd)} | ${fmt(b.priceLevels)} | ${fmt(b.fills)} | ${fmt(b.oursOpsPerSec)} | ${fmt(b.peerOpsPerSec)} | ${b.ratio.toFixed(2)}× |`),
    '',
    '| full engine (accounts, margin, fees, events) | ops/s | accepted | rejected | trades | events |',
    '| --- | ---: | ---: | ---: | ---: | ---: |',
    ...engine.map((e) => `| ${e.scenario} stream, 64 accounts | ${fmt(e.opsPerSec)} | ${fmt(e.accepted)} | ${fmt(e.rejected)} | ${fmt(e.trades)} | ${fmt(e.events)} |`),
  ];
  return { seed, books, engine, table: lines.join('\n') };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runPerpEngineBench({ print: (l) => console.error(l), engineDeep: process.env.BENCH_PERP_ENGINE_DEEP === '1' }).then(
    (r) => console.log(r.table),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
