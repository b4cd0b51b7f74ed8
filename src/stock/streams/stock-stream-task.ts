/**
 * Feeds the stock venue's streams (docs/stock-api.md, "Stock streams"): the one publisher of the
 * venue, beside the indexer (role `indexer`, one per database). It starts an epoch with the current
 * quotes and candles, every owner's open orders and last operations, and the balances of every
 * wallet the venue knows (orders, operations, or an API key bound to it), then:
 *
 * - private channels: the stock indexer hands it, after each committed batch, the orders and
 *   operations the batch wrote, as it wrote them, and the wallets it touched (`changed`, from
 *   `StockIndexerOptions.onCommitted`). It renders those rows with the REST views (an order as
 *   `GET orders/{orderId}`, an operation as its detail), reading none of them back, then reads the
 *   touched wallets' balances from the chain (as `GET users/{id}/balance`). A reorg's rollback
 *   starts a new epoch: rows may have changed or vanished, which an update cannot say.
 * - owners: an order or operation goes to its wallet's streams and, when an API key without a bound
 *   wallet recorded its transaction, to that key's (`key:<apiKey>`), as REST shows such a key what
 *   it recorded. A transaction is usually recorded around the time it is indexed, in either order:
 *   one not yet recorded is looked up again for `recordWaitMs` (the recording table, which the
 *   indexer does not write), and its rows as last published go to the key once it is.
 * - quotes: each symbol's quote as `GET prices/{symbol}`: every quote the simulator makes when it
 *   runs in this process (its `onQuote`), and a read every `quoteMs` for the rest (the quotes table
 *   read by another process's simulator, the market's status, the token's supply) when it changed.
 * - candles (every `candleMs`): each symbol's latest candle of every interval when it changed (and
 *   the previous one's last form when a new one began since the last read).
 * - corporate actions (`corporateActions`, every `pollMs`): a symbol's `GET corporate-action` row
 *   whenever its stored action changed (`updated_at`); dividends (`dividends`): each payout once
 *   paid as its holder's DIVIDEND operation, and every payout among the seed's operations. These two
 *   are corporate-action-feed.ts's, published here as the rest.
 *
 * Each update shows a row as a committed batch wrote it; rows waiting to be published keep only
 * their latest state, and what was already published to a stream is not published again (the same
 * JSON). A backlog beyond `BACKLOG` rows (a long catch-up) is dropped for a new epoch, whose
 * snapshot reads the store once instead of holding every row in memory.
 */
import { STOCK_KLINE_INTERVALS, type StockDividendOperation, type StockKlineInterval } from '@tokex/contract';
import type { Address } from 'viem';
import type { Quote } from '../../marketdata/market-types.ts';
import { readPriceHistory, type HistoryBar } from '../../marketdata/price-history.ts';
import type { PublishedUpdate } from '../../streams/stream-publisher.ts';
import { balanceView } from '../balance-view.ts';
import type { OrderUpdate } from '../indexer/stock-indexer.ts';
import { cashOperationView, stockOperationView } from '../operation-views.ts';
import { orderView } from '../order-view.ts';
import { barView, marketStateAt, quoteStale, quoteView, STALE_QUOTE_MS, type MarketState } from '../quote-view.ts';
import type { MarketConfigView, StockListing } from '../stock-deps.ts';
import {
  listCashOperationsForApiKey,
  listOperationWallets,
  listRecentOperationsOfWallet,
  listStockOperationsForApiKey,
  type CashOperationRecord,
  type StockOperationRecord,
} from '../store/stock-operation-store.ts';
import { listFillsOfOrders, listLiveOrders, listOrdersForApiKey, listOrderWallets, type OrderRecord } from '../store/stock-order-store.ts';
import { loadCloseReasons } from '../store/order-reason-store.ts';
import { listTxRecorders } from '../store/tx-record-store.ts';
import { keySubject, RECENT_OPERATIONS } from './stock-stream-channels.ts';
import { createCorporateActionFeed } from './corporate-action-feed.ts';
import { listPayoutWallets } from '../corporate-actions/corporate-action-store.ts';
import type { StockStreamTask, StockStreamTaskOptions, StreamKey } from './stock-stream-task-types.ts';
import { venueNow } from '../../lib/venue-clock.ts';

export type { StockStreamTask, StockStreamTaskOptions, StreamKey } from './stock-stream-task-types.ts';

/**
 * Whether the key may write somewhere: a WRITABLE scope on any chain (its first scope is only one
 * of them). Over-counting a key whose WRITABLE scope is another chain's only costs a lookup of
 * recordings that finds none.
 */
function mayWrite(k: StreamKey): boolean {
  return k.scopes ? k.scopes.some((s) => s.access === 'WRITABLE') : k.permissions.includes('WRITABLE');
}

/** Rows published per round, so a long catch-up streams in bounded batches. */
const ROUND = 500;
/**
 * Rows waiting to be published at most: past it they are dropped for a new epoch (a catch-up that
 * commits faster than the rounds publish would otherwise hold every row it wrote in memory).
 */
const BACKLOG = 100_000;
/** Published JSON remembered per stream and entity, to skip a repeated read. */
const REMEMBERED = 100_000;
/** Balance reads in flight at once (they share the RPC client's batches). */
const BALANCE_READS = 16;
/** Transactions waited on for a recording at most (the oldest are forgotten first). */
const UNRECORDED = 100_000;

/** Rows by id, each in its latest state (a later batch's replaces it, in the same place). */
interface Rows {
  orders: Map<string, OrderUpdate>;
  cash: Map<string, CashOperationRecord>;
  stock: Map<string, StockOperationRecord>;
}

interface Pending extends Rows {
  wallets: Set<string>;
}

interface Changed {
  orders?: Iterable<OrderUpdate>;
  cash?: Iterable<CashOperationRecord>;
  stock?: Iterable<StockOperationRecord>;
  wallets?: Iterable<string>;
}

const emptyPending = (): Pending => ({ orders: new Map(), cash: new Map(), stock: new Map(), wallets: new Set() });

function take<T>(from: Set<T>, n: number): Set<T> {
  const out = new Set<T>();
  for (const v of from) {
    if (out.size >= n) break;
    out.add(v);
  }
  for (const v of out) from.delete(v);
  return out;
}

function takeRows<V>(from: Map<string, V>, n: number): Map<string, V> {
  const out = new Map<string, V>();
  for (const [k, v] of from) {
    if (out.size >= n) break;
    out.set(k, v);
  }
  for (const k of out.keys()) from.delete(k);
  return out;
}


type OperationView =
  | { kind: 'cash'; view: ReturnType<typeof cashOperationView>; record: CashOperationRecord }
  | { kind: 'stock'; view: ReturnType<typeof stockOperationView>; record: StockOperationRecord };

export function createStockStreamTask(opts: StockStreamTaskOptions): StockStreamTask {
  const { db, publisher, stocks } = opts;
  const now = opts.now ?? venueNow;
  const retryMs = opts.retryMs ?? 500;
  const recordWaitMs = opts.recordWaitMs ?? 60_000;
  const quoteMaxAgeMs = opts.quoteMaxAgeMs ?? STALE_QUOTE_MS;
  const lastQuote = new Map<string, string>();
  const lastCandle = new Map<string, { openTime: number; json: string }>();
  /** `<subject> <o|c|s|b>:<id>` → the JSON last published (insertion order = age). */
  const published = new Map<string, string>();
  /** Wallets whose balances were published this epoch. */
  const seen = new Set<string>();
  let pending = emptyPending();
  /** Changed orders' and operations' transactions nobody had recorded yet: hash → rows as last published, until when. */
  const unrecorded = new Map<string, Rows & { until: number }>();
  /** The stock keys as last listed: the unbound ones (their own streams) and whether one may record. */
  let known = new Set<string>();
  let unbound = new Set<string>();
  let recording = false;
  const timers: NodeJS.Timeout[] = [];
  const unsubscribe: Array<() => void> = [];
  let started = false;
  let stopped = false;
  let busy = 0;
  let draining: Promise<void> | undefined;
  let resyncing: Promise<void> | undefined;
  /** A new epoch was asked for after the seed of the one being started was begun: it starts again. */
  let again = false;
  /** The backlog was dropped: changes are ignored until the next epoch's seed, which reads them. */
  let behind = false;

  const idle = async () => {
    while (busy > 0) await new Promise((r) => setTimeout(r, 10));
  };
  const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());

  /**
   * True when `json` differs from what was last published under `key`; the pair goes to `marks`,
   * remembered once what it belongs to is published (a round that fails is read again in full).
   */
  function fresh(key: string, json: string, marks: Array<[string, string]>): boolean {
    if (published.get(key) === json) return false;
    marks.push([key, json]);
    return true;
  }

  function remember(marks: ReadonlyArray<[string, string]>): void {
    for (const [key, json] of marks) {
      published.delete(key);
      published.set(key, json);
    }
    while (published.size > REMEMBERED) published.delete(published.keys().next().value as string);
  }

  // The dividends' and corporate actions' updates (corporate-action-feed.ts), published as the rest.
  const feed = createCorporateActionFeed({
    db,
    stocks,
    now,
    round: ROUND,
    dividends: opts.dividends,
    corporateActions: opts.corporateActions,
    published,
    fresh,
    remember,
    walletChanged: (user) => merge(pending, { wallets: [user] }),
    kick: () => kick(),
  });

  let listed = 0;
  /** Lists the keys; answers the wallets the active ones are bound to. */
  async function listKeys(): Promise<string[]> {
    listed = now();
    const keys = (await opts.keys?.()) ?? [];
    const active = keys.filter((k) => k.active);
    known = new Set(keys.map((k) => k.apiKey));
    unbound = new Set(active.filter((k) => k.userAddress === null).map((k) => k.apiKey));
    recording = active.some((k) => k.userAddress === null && mayWrite(k));
    return active.flatMap((k) => (k.userAddress !== null ? [k.userAddress.toLowerCase()] : []));
  }

  /** A recording by a key not listed yet (made a moment ago): the keys are listed again, at most every 100 ms. */
  async function knowRecorders(recorders: Iterable<string>): Promise<void> {
    for (const k of recorders) {
      if (!known.has(k)) {
        if (now() - listed >= 100) await listKeys();
        return;
      }
    }
  }

  // ------------------------------------------------------------------ public

  /** The chain config the last read gave: a quote from `onQuote` is rendered with it, synchronously. */
  let quoteCfg: MarketConfigView | undefined;

  function quoteUpdate(listing: StockListing, q: Quote, cfg: MarketConfigView, market: MarketState): PublishedUpdate | undefined {
    // Read every quoteMs even without a new quote: a quote that turns stale is published again,
    // `stale: true`, so a subscriber learns that the feed stopped without a frame of its own.
    const view = quoteView(listing, q, cfg, market, quoteStale(q, now(), quoteMaxAgeMs));
    // The market's status and session and the token's supply are part of the quote too.
    const json = JSON.stringify(view);
    if (lastQuote.get(listing.symbol) === json) return undefined;
    lastQuote.set(listing.symbol, json);
    return { channel: 'quotes', subject: listing.symbol, data: view };
  }

  async function quoteUpdates(): Promise<PublishedUpdate[]> {
    const out: PublishedUpdate[] = [];
    const cfg = (quoteCfg = await opts.chain.marketConfig());
    const market = marketStateAt(opts.calendar, now());
    for (const listing of stocks.list()) {
      const q = opts.quotes.getQuote(listing.symbol);
      const u = q === undefined ? undefined : quoteUpdate(listing, q, cfg, market);
      if (u !== undefined) out.push(u);
    }
    return out;
  }

  /** A quote as the simulator makes it (not during a new epoch's seed, which reads the quotes itself). */
  function onQuote(q: Quote): void {
    if (!started || stopped || resyncing || quoteCfg === undefined) return;
    const listing = stocks.bySymbol(q.symbol);
    const u = listing === undefined ? undefined : quoteUpdate(listing, q, quoteCfg, marketStateAt(opts.calendar, now()));
    if (u !== undefined) publisher.publish([u]);
  }

  async function candleUpdates(): Promise<PublishedUpdate[]> {
    // Every read first: a failed one changes nothing, and the next tick reads them all again.
    const reads: Array<{ symbol: string; interval: StockKlineInterval; rows: HistoryBar[] }> = [];
    for (const listing of stocks.list()) {
      for (const interval of STOCK_KLINE_INTERVALS) {
        // Ascending: the one before the latest, then the latest; as the history answers them (its
        // 3m and 1w bars rolled up), raw: no ex-date falls inside the latest bars.
        const rows = await readPriceHistory(opts.historyDb ?? db, [], { symbol: listing.symbol, interval, endTime: Number.MAX_SAFE_INTEGER, limit: 2, adjustment: 'raw', now: now() });
        reads.push({ symbol: listing.symbol, interval, rows });
      }
    }
    const out: PublishedUpdate[] = [];
    for (const { symbol, interval, rows } of reads) {
      if (rows.length === 0) continue;
      const key = `${symbol}|${interval}`;
      const last = lastCandle.get(key);
      // After the first read, the candle last published too: its last form when a new one began since.
      const candidates = last === undefined ? rows.slice(-1) : rows.filter((c) => c.openTime >= last.openTime);
      for (const c of candidates) {
        const view = barView(c);
        const json = JSON.stringify(view);
        const prev = lastCandle.get(key);
        if (prev !== undefined && prev.openTime === c.openTime && prev.json === json) continue;
        lastCandle.set(key, { openTime: c.openTime, json });
        out.push({ channel: `klines:${interval}`, subject: symbol, data: view });
      }
    }
    return out;
  }

  // ----------------------------------------------------------------- private

  let tokenCfg: MarketConfigView | undefined;
  let tokens = new Map<string, { decimals: number; symbol: string }>();
  async function tokenOf(address: string) {
    const cfg = await opts.chain.marketConfig();
    if (cfg !== tokenCfg) {
      tokenCfg = cfg;
      tokens = new Map(cfg.cashierTokenConfig.map((t) => [t.tokenAddress.toLowerCase(), { decimals: t.decimals, symbol: t.symbol }]));
    }
    return tokens.get(address.toLowerCase());
  }

  /** The seed's orders, with their fills and close reasons from the store (the snapshot). */
  async function storedOrderViews(orders: readonly OrderRecord[]) {
    const [fills, reasons] = await Promise.all([listFillsOfOrders(db, orders.map((o) => o.orderId)), loadCloseReasons(db, orders)]);
    return orders.map((o) => orderView(o, fills.get(o.orderId) ?? [], stocks, reasons.get(o.orderId) ?? null));
  }

  /** Views of operations, oldest change first (the order they changed in, as far as the rows tell). */
  async function operationViews(cash: Iterable<CashOperationRecord>, stock: Iterable<StockOperationRecord>) {
    const views: OperationView[] = [];
    for (const r of cash) views.push({ kind: 'cash', view: cashOperationView(r, await tokenOf(r.tokenAddress)), record: r });
    for (const r of stock) views.push({ kind: 'stock', view: stockOperationView(r, stocks.byAddress(r.stockAddress)), record: r });
    views.sort((a, b) => a.view.updatedAt - b.view.updatedAt || a.view.createdAt - b.view.createdAt);
    return views;
  }

  /**
   * Balances of `wallets`; the ones the chain did not answer are returned to try again. Read from
   * the chain, not handed over by the indexer: the balance body holds mUSD (available, locked) and
   * every cash token's wallet balance, which the indexer neither follows (no cash-token Transfer is
   * indexed) nor can derive exactly from its events (a transfer tells a change, not the balance it
   * changed); its stock positions alone are at the batch's block while the rest would be at the
   * head, a state the chain never had.
   */
  async function balanceUpdates(wallets: readonly string[], marks: Array<[string, string]>): Promise<{ out: PublishedUpdate[]; failed: string[] }> {
    const out: PublishedUpdate[] = [];
    const failed: string[] = [];
    const cfg = await opts.chain.marketConfig();
    for (let i = 0; i < wallets.length; i += BALANCE_READS) {
      const part = wallets.slice(i, i + BALANCE_READS);
      const read = await Promise.allSettled(part.map((w) => opts.chain.account(w as Address)));
      read.forEach((r, j) => {
        const user = part[j];
        if (r.status === 'rejected') {
          failed.push(user);
          return;
        }
        // No prices: a balance is published when the wallet changes, not when a quote does (the
        // `quotes` stream carries those), so its `price`s are null (docs/stock-api.md).
        const view = balanceView(user as Address, r.value, cfg, stocks, opts.venue);
        seen.add(user);
        if (fresh(`${user} b`, JSON.stringify(view), marks)) out.push({ channel: 'balances', subject: user, data: view });
      });
    }
    return { out, failed };
  }

  /** The key subjects of these transactions' recorders (unbound keys only), listing the keys again for one not known. */
  async function recordersOf(txHashes: Iterable<string>): Promise<{ recorded: Map<string, string>; owner: (txHash: string) => string | undefined }> {
    const recorded = await listTxRecorders(db, [...new Set(txHashes)]);
    await knowRecorders(recorded.values());
    return {
      recorded,
      owner: (h) => {
        const k = recorded.get(h.toLowerCase());
        return k !== undefined && unbound.has(k) ? keySubject(k) : undefined;
      },
    };
  }

  /**
   * Waits for a recording of `txHash` (the rows of it just published, kept to go to the recorder's
   * stream) while one may still come. Kept even while no key can record: a key made a moment ago
   * may record it before the keys are listed again.
   */
  function awaitRecording(txHash: string): Rows {
    const h = txHash.toLowerCase();
    let u = unrecorded.get(h);
    if (u === undefined) {
      unrecorded.set(h, (u = { orders: new Map(), cash: new Map(), stock: new Map(), until: now() + recordWaitMs }));
      if (unrecorded.size > UNRECORDED) unrecorded.delete(unrecorded.keys().next().value as string);
    }
    return u;
  }

  /** One round of the rows handed over: orders, then operations, to each owner; then the balances of their wallets. */
  async function privateRound(work: Pending): Promise<{ out: PublishedUpdate[]; marks: Array<[string, string]>; failed: string[] }> {
    const out: PublishedUpdate[] = [];
    const marks: Array<[string, string]> = [];
    const wallets = new Set(work.wallets);
    const emit = (channel: string, subject: string, entity: string, view: unknown) => {
      if (fresh(`${subject} ${entity}`, JSON.stringify(view), marks)) out.push({ channel, subject, data: view });
    };
    const orders = [...work.orders.values()].map((u) => ({ u, view: orderView(u.order, [...u.fills], stocks, u.reason) }));
    const ops = await operationViews(work.cash.values(), work.stock.values());
    const { recorded, owner } = await recordersOf([...orders.map((o) => o.view.txHash), ...ops.map((o) => o.view.txHash)]);

    for (const { u, view } of orders) {
      const user = view.userAddress.toLowerCase();
      wallets.add(user);
      emit('orders', user, `o:${view.orderId}`, view);
      const key = owner(view.txHash);
      if (key !== undefined) emit('orders', key, `o:${view.orderId}`, view);
      else if (!recorded.has(view.txHash.toLowerCase())) awaitRecording(view.txHash).orders.set(view.orderId, u);
    }
    for (const op of ops) {
      const { view } = op;
      const user = view.userAddress.toLowerCase();
      const entity = `${op.kind === 'cash' ? 'c' : 's'}:${view.operationId}`;
      wallets.add(user);
      emit('operations', user, entity, view);
      const key = owner(view.txHash);
      if (key !== undefined) emit('operations', key, entity, view);
      else if (!recorded.has(view.txHash.toLowerCase())) {
        const waiting = awaitRecording(view.txHash);
        if (op.kind === 'cash') waiting.cash.set(view.operationId, op.record);
        else waiting.stock.set(view.operationId, op.record);
      }
    }
    const b = await balanceUpdates([...wallets], marks);
    out.push(...b.out);
    return { out, marks, failed: b.failed };
  }

  /** Transactions recorded since their rows were published: their rows go round again, for the recorder's streams. */
  async function recordings(): Promise<PublishedUpdate[]> {
    const t = now();
    for (const [h, u] of unrecorded) {
      if (u.until >= t) break;
      unrecorded.delete(h);
    }
    // Only a WRITABLE key bound to no wallet records for a stream of its own.
    if (!recording || unrecorded.size === 0) return [];
    const recorded = await listTxRecorders(db, [...unrecorded.keys()]);
    await knowRecorders(recorded.values());
    for (const [h, k] of recorded) {
      const u = unrecorded.get(h);
      unrecorded.delete(h);
      if (u !== undefined && unbound.has(k)) merge(pending, { orders: u.orders.values(), cash: u.cash.values(), stock: u.stock.values() }, true);
    }
    kick();
    return [];
  }

  const hasPending = () => pending.orders.size + pending.cash.size + pending.stock.size + pending.wallets.size > 0;

  /**
   * Adds rows to `into`, a later state replacing an earlier one; `older`: rows already published
   * once (put back, or going to a recorder), which never replace a state waiting that is newer.
   */
  function merge(into: Pending, c: Changed, older = false): void {
    const put = <V>(rows: Map<string, V>, id: string, row: V) => {
      if (!older || !rows.has(id)) rows.set(id, row);
    };
    for (const u of c.orders ?? []) put(into.orders, u.order.orderId, u);
    for (const r of c.cash ?? []) put(into.cash, r.operationId, r);
    for (const r of c.stock ?? []) put(into.stock, r.operationId, r);
    for (const w of c.wallets ?? []) into.wallets.add(w.toLowerCase());
  }

  /**
   * Publishes the pending changes, one bounded round at a time, until none is left. A round that
   * failed is put back and tried again after `retryMs`; a resync that begins meanwhile drops the
   * round (the new epoch's seed is read after it and holds it).
   */
  function kick(): void {
    if (!started || stopped || draining || resyncing || !hasPending()) return;
    busy++;
    draining = (async () => {
      try {
        while (!stopped && !resyncing && hasPending()) {
          const work: Pending = {
            orders: takeRows(pending.orders, ROUND),
            cash: takeRows(pending.cash, ROUND),
            stock: takeRows(pending.stock, ROUND),
            wallets: take(pending.wallets, ROUND),
          };
          try {
            const { out, marks, failed } = await privateRound(work);
            if (!resyncing) {
              publisher.publish(out);
              remember(marks);
            }
            if (failed.length > 0) {
              merge(pending, { wallets: failed });
              opts.logger?.warn({ wallets: failed.length }, 'stock streams: balances not read (chain unavailable); trying again');
              await sleep(retryMs);
            }
          } catch (err) {
            merge(pending, { orders: work.orders.values(), cash: work.cash.values(), stock: work.stock.values(), wallets: work.wallets }, true);
            opts.logger?.warn({ err: (err as Error).message }, 'stock streams: a round failed (recordings or market config not read); trying again');
            await sleep(retryMs);
          }
        }
      } finally {
        busy--;
        draining = undefined;
      }
      kick();
    })();
  }

  // -------------------------------------------------------------------- seed

  /**
   * An owner's open orders and last operations (newest first), remembered as published; a wallet's
   * DIVIDEND operations (`dividends`) among them in the same order, as `dividendUpdates` keys them.
   */
  async function seedOwner(
    out: PublishedUpdate[],
    subject: string,
    orders: readonly OrderRecord[],
    cash: readonly CashOperationRecord[],
    stock: readonly StockOperationRecord[],
    dividends: readonly StockDividendOperation[] = [],
  ) {
    if (orders.length > 0) {
      const views = await storedOrderViews(orders);
      for (const v of views) published.set(`${subject} o:${v.orderId}`, JSON.stringify(v));
      out.push({ channel: 'orders', subject, data: views });
    }
    if (cash.length + stock.length + dividends.length > 0) {
      const views: Array<{ entity: string; view: { operationId: string; createdAt: number; updatedAt: number } }> = [
        ...(await operationViews(cash, stock)).map((v) => ({ entity: `${v.kind === 'cash' ? 'c' : 's'}:${v.view.operationId}`, view: v.view })),
        ...dividends.map((view) => ({ entity: `d:${view.operationId}`, view })),
      ];
      views.sort((a, b) => a.view.updatedAt - b.view.updatedAt || a.view.createdAt - b.view.createdAt);
      const recent = views.slice(-RECENT_OPERATIONS);
      for (const v of recent) published.set(`${subject} ${v.entity}`, JSON.stringify(v.view));
      // The recent model's snapshot: newest first.
      out.push({ channel: 'operations', subject, data: recent.map((v) => v.view).reverse() });
    }
  }

  async function seed(): Promise<PublishedUpdate[]> {
    // Everything committed so far is in what is read below.
    pending = emptyPending();
    behind = false;
    again = false;
    unrecorded.clear();
    lastQuote.clear();
    lastCandle.clear();
    published.clear();
    seen.clear();
    const out: PublishedUpdate[] = [...(await quoteUpdates()), ...(await candleUpdates()), ...(await feed.corporateActionSeed())];
    const keyWallets = await listKeys();

    const live = new Map<string, OrderRecord[]>();
    for (const o of await listLiveOrders(db)) {
      const user = o.userAddress.toLowerCase();
      const list = live.get(user);
      if (list) list.push(o);
      else live.set(user, [o]);
    }
    const operationWallets = new Set(await listOperationWallets(db));
    if (opts.dividends !== undefined) {
      // Before the payouts are read: one paid in between is polled again, and found published.
      await feed.seedDividendCursor();
    }
    const payoutWallets = opts.dividends !== undefined ? await listPayoutWallets(db) : [];
    const dividends = await feed.dividendViewsOf(payoutWallets);
    for (const user of new Set([...live.keys(), ...operationWallets, ...dividends.keys()])) {
      const recent = operationWallets.has(user) ? await listRecentOperationsOfWallet(db, user, RECENT_OPERATIONS) : { cash: [], stock: [] };
      await seedOwner(out, user, live.get(user) ?? [], recent.cash, recent.stock, dividends.get(user));
    }
    // Keys bound to no wallet: what they recorded, as REST lists it for them.
    for (const apiKey of unbound) {
      const page = { apiKey, offset: 0, limit: RECENT_OPERATIONS };
      const orders = await listOrdersForApiKey(db, { ...page, state: 'open', limit: 1_000_000 });
      const cash = [...(await listCashOperationsForApiKey(db, { ...page, kind: 'deposit' })).rows, ...(await listCashOperationsForApiKey(db, { ...page, kind: 'withdrawal' })).rows];
      const stock = [...(await listStockOperationsForApiKey(db, { ...page, kind: 'deposit' })).rows, ...(await listStockOperationsForApiKey(db, { ...page, kind: 'withdrawal' })).rows];
      await seedOwner(out, keySubject(apiKey), orders.rows, cash, stock);
    }

    const wallets = new Set([...(await listOrderWallets(db)), ...operationWallets, ...payoutWallets, ...keyWallets]);
    const marks: Array<[string, string]> = [];
    const b = await balanceUpdates([...wallets], marks);
    // The seed is published whole or not at all (a failed start seeds again from scratch).
    remember(marks);
    out.push(...b.out);
    // Their balances follow as soon as the chain answers (null in a snapshot until then).
    merge(pending, { wallets: b.failed });
    return out;
  }

  /**
   * A poll runs one at a time (a slow read skips a tick rather than piling reads up); a failed one
   * is tried again on the next tick.
   */
  const tick = (work: () => Promise<PublishedUpdate[]>) => {
    let running = false;
    return async () => {
      if (running || resyncing || stopped) return;
      running = true;
      busy++;
      try {
        const out = await work();
        if (!resyncing) publisher.publish(out);
      } catch (err) {
        opts.logger?.warn({ err: (err as Error).message }, 'stock streams: a poll failed; trying again');
      } finally {
        running = false;
        busy--;
      }
    };
  };

  function resync(): Promise<void> {
    if (resyncing) {
      // Its seed may have been read before what asked for this one (a rollback, a dropped backlog);
      // the seed clears the flag when it begins, so a request before that costs no second epoch.
      again = true;
      return resyncing;
    }
    resyncing = (async () => {
      try {
        do {
          await idle();
          try {
            if (!stopped) await publisher.start(await seed());
          } catch (err) {
            opts.logger?.error({ err }, 'stock streams: a new epoch could not be started');
          }
        } while (again && !stopped);
      } finally {
        resyncing = undefined;
      }
      kick();
    })();
    return resyncing;
  }

  /** A new key, or a key bound to a new wallet: its wallet's balances follow (null in a snapshot before). */
  async function keysUpdates(): Promise<PublishedUpdate[]> {
    const wallets = (await listKeys()).filter((w) => !seen.has(w) && !pending.wallets.has(w));
    if (wallets.length > 0) {
      merge(pending, { wallets });
      kick();
    }
    return [];
  }

  return {
    async start() {
      stopped = false;
      await publisher.start(await seed());
      started = true;
      // The backlog was dropped while the first seed was read: what it dropped may be after the read.
      if (behind) void resync();
      if (opts.quotes.onQuote) unsubscribe.push(opts.quotes.onQuote(onQuote));
      timers.push(setInterval(tick(quoteUpdates), opts.quoteMs ?? (opts.quotes.onQuote ? 1_000 : 250)));
      timers.push(setInterval(tick(candleUpdates), opts.candleMs ?? 1_000));
      timers.push(setInterval(tick(keysUpdates), opts.keysMs ?? 1_000));
      timers.push(setInterval(tick(recordings), opts.recordingMs ?? 250));
      if (opts.dividends) timers.push(setInterval(tick(feed.dividendUpdates), opts.dividends.pollMs ?? 1_000));
      if (opts.corporateActions) timers.push(setInterval(tick(feed.corporateActionUpdates), opts.corporateActions.pollMs ?? 1_000));
      for (const t of timers) t.unref();
      kick();
    },
    async stop() {
      stopped = true;
      for (const t of timers) clearInterval(t);
      timers.length = 0;
      for (const u of unsubscribe.splice(0)) u();
      await idle();
    },
    changed(change) {
      if (change.rolledBack) {
        void resync();
        return;
      }
      if (behind) return;
      const { orders, cash, stock } = change.updates;
      merge(pending, { orders, cash, stock, wallets: change.wallets });
      if (pending.orders.size + pending.cash.size + pending.stock.size > BACKLOG) {
        opts.logger?.warn({ rows: BACKLOG }, 'stock streams: the indexer is further ahead than the rows waiting can hold; starting a new epoch');
        pending = emptyPending();
        behind = true;
        if (started) void resync();
        return;
      }
      kick();
    },
    resync,
  };
}
