/// <reference lib="dom" />
/**
 * The console page's script (docs/console.md): REST for the first load, the two APIs' WebSocket
 * streams for everything live (REST polling stands in while a stream is unavailable), and perpetual
 * orders (limit, market, stop and take-profit triggers) and amendments built by the API, signed here
 * with the demo wallet's key (viem, EIP-712) and sent back. Without demo credentials the page is
 * read-only: the public streams only, since every REST read of both APIs is signed.
 */
import { isTriggerType, OPEN_ORDER_STATUSES, ORDER_TYPES, triggeredType, type OrderType, type StockCandle } from '@tokex/contract';
import { privateKeyToAccount } from 'viem/accounts';
import { PerpStreamClient, StockStreamClient } from '@tokex/sdk/stream-client';
import { ApiError, perpClient, stockClient, type PerpRequest, type StockRequest } from './api-clients.ts';
import { drawCandles, type Candle } from './kline-chart.ts';
import { Freshness } from './freshness.ts';
import { describeFeeds, FeedGroup, type Feed } from './live-feed.ts';

interface ConsoleConfig {
  chainId: number;
  stock: { baseUrl: string; wsUrl: string; product: string; symbols: string[]; staleAfterMs?: number };
  perp: { baseUrl: string; wsUrl: string; symbols: string[]; staleAfterMs?: number } | null;
}

/** When the configuration does not say: the stock API's default quote age. */
const DEFAULT_STALE_AFTER_MS = 30_000;
interface ConsoleDemo {
  wallet: { address: string; privateKey: `0x${string}` };
  stock: { apiKey: string; apiSecret: string; userAddress: string };
  perp: { apiKey: string; apiSecret: string; address: string } | null;
}
type Row = Record<string, any>;
interface BookSide {
  bids: string[][];
  asks: string[][];
}

/**
 * The perp API allows 120 requests a minute per key by default: book and tape every 2 s and the
 * wallet's three reads every 6 s stay at 90 while every stream is down, leaving room for orders.
 */
const PERP_PRIVATE_POLL_MS = 6_000;

const $ = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;
const el = (tag: string, text?: string, cls?: string) => {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  if (cls) e.className = cls;
  return e;
};

function report(err: unknown): void {
  $('errors').textContent = err instanceof Error ? err.message : String(err);
}

/** Exact comparison of non-negative decimal strings (book prices), no float rounding. */
function compareDecimal(a: string, b: string): number {
  const [ai, af = ''] = a.split('.');
  const [bi, bf = ''] = b.split('.');
  if (ai.length !== bi.length) return ai.length - bi.length;
  if (ai !== bi) return ai < bi ? -1 : 1;
  const n = Math.max(af.length, bf.length);
  const x = af.padEnd(n, '0');
  const y = bf.padEnd(n, '0');
  return x === y ? 0 : x < y ? -1 : 1;
}
const isZero = (s: unknown) => compareDecimal(String(s ?? '0').replace('-', ''), '0') === 0;

/** The stack's own answer in its envelope, or undefined for a 404 (demo credentials refused). */
async function getEnvelope<T>(url: string): Promise<T | undefined> {
  const res = await fetch(url, { cache: 'no-store' });
  if (res.status === 404) return undefined;
  const json = (await res.json()) as { code: number; errMsg?: string; data: T };
  if (json.code !== 200) throw new Error(`${url}: ${json.errMsg ?? res.status}`);
  return json.data;
}

// ---------------------------------------------------------------- stock markets and chart

function marketsView(symbols: string[], onSelect: (s: string) => void, freshness: Freshness) {
  const tbody = $('markets').querySelector('tbody')!;
  const cells = new Map<string, { button: HTMLButtonElement; last: HTMLElement; bid: HTMLElement; ask: HTMLElement; status: HTMLElement }>();
  for (const s of symbols) {
    const row = document.createElement('tr');
    const name = el('th');
    name.setAttribute('scope', 'row');
    const button = el('button', s) as HTMLButtonElement;
    button.type = 'button';
    button.setAttribute('aria-pressed', 'false');
    button.addEventListener('click', () => onSelect(s));
    name.append(button);
    const last = el('td', '—', 'price');
    last.dataset.symbol = s;
    const bid = el('td', '—');
    const ask = el('td', '—');
    const status = el('td', '');
    row.append(name, last, bid, ask, status);
    tbody.append(row);
    cells.set(s, { button, last, bid, ask, status });
  }
  const shown = new Map<string, Row>();
  /**
   * The status cell: the market status, the extended session when one is on (`open · pre-market`;
   * regular hours say nothing more), and `stale` while the symbol's quote is stale.
   */
  const renderStatus = (symbol: string) => {
    const c = cells.get(symbol);
    const q = shown.get(symbol);
    if (!c || !q) return;
    const stale = freshness.isStale(symbol);
    const extended = typeof q.session === 'string' && q.session !== 'regular' && q.session !== 'closed' ? ` · ${q.session}` : '';
    const text = `${q.marketStatus ?? ''}${extended}${stale ? ' · stale' : ''}`;
    if (c.status.textContent !== text) c.status.textContent = text;
    c.button.closest('tr')!.classList.toggle('stale', stale);
  };
  return {
    quote(q: Row | null) {
      const c = q && cells.get(q.symbol);
      if (!c) return;
      shown.set(q.symbol, q);
      freshness.note(q.symbol, Number(q.timestamp), q.stale === true);
      c.last.textContent = q.last ?? '—';
      c.bid.textContent = q.bid ?? '—';
      c.ask.textContent = q.ask ?? '—';
      renderStatus(q.symbol);
    },
    /** Ages move without any frame: re-judged every second. */
    refresh() {
      for (const symbol of shown.keys()) renderStatus(symbol);
    },
    select(s: string) {
      for (const [k, c] of cells) {
        c.button.setAttribute('aria-pressed', String(k === s));
        c.button.closest('tr')!.classList.toggle('selected', k === s);
      }
    },
  };
}

function chartView() {
  let candles: Candle[] = [];
  let symbol = '';
  const canvas = $<HTMLCanvasElement>('chart');
  const render = () => {
    drawCandles(canvas, candles);
    const last = candles[candles.length - 1];
    canvas.setAttribute('aria-label', `K-line chart of ${symbol}, ${candles.length} one-minute candles`);
    $('chart-last').textContent = last ? `${symbol} last candle: open ${last.open}, high ${last.high}, low ${last.low}, close ${last.close}` : '';
  };
  const upsert = (c: Candle) => {
    const i = candles.findIndex((x) => x.openTime === c.openTime);
    if (i >= 0) candles[i] = c;
    else {
      candles.push(c);
      candles.sort((a, b) => a.openTime - b.openTime);
      candles = candles.slice(-200);
    }
  };
  return {
    reset(s: string, initial: Candle[]) {
      symbol = s;
      candles = [...initial].sort((a, b) => a.openTime - b.openTime);
      render();
    },
    upsert(c: Candle | null) {
      if (!c) return;
      upsert(c);
      render();
    },
    merge(cs: Candle[]) {
      cs.forEach(upsert);
      render();
    },
  };
}

// ---------------------------------------------------------------- perpetual book and trades

function bookView() {
  const bids = new Map<string, string>();
  const asks = new Map<string, string>();
  const tbody = $('book').querySelector('tbody')!;
  const apply = (side: Map<string, string>, levels: string[][] = []) => {
    for (const [price, size] of levels) {
      if (isZero(size)) side.delete(price);
      else side.set(price, size);
    }
  };
  const rowOf = (cells: string[], cls: string) => {
    const tr = document.createElement('tr');
    tr.className = `level ${cls}`;
    for (const c of cells) tr.append(el('td', c, cls));
    return tr;
  };
  const render = () => {
    const a = [...asks].sort((x, y) => compareDecimal(x[0], y[0])).slice(0, 8).reverse();
    const b = [...bids].sort((x, y) => compareDecimal(y[0], x[0])).slice(0, 8);
    tbody.replaceChildren(...a.map(([p, s]) => rowOf(['ask', p, s], 'ask')), ...b.map(([p, s]) => rowOf(['bid', p, s], 'bid')));
  };
  return {
    snapshot(d: BookSide) {
      bids.clear();
      asks.clear();
      apply(bids, d.bids);
      apply(asks, d.asks);
      render();
    },
    update(d: Partial<BookSide>) {
      apply(bids, d.bids);
      apply(asks, d.asks);
      render();
    },
  };
}

function tradesView() {
  let trades: Row[] = [];
  const tbody = $('trades').querySelector('tbody')!;
  const render = () => {
    tbody.replaceChildren(
      ...trades.slice(0, 15).map((t) => {
        const tr = document.createElement('tr');
        tr.className = 'trade';
        tr.dataset.tradeId = String(t.id);
        const side = String(t.side ?? '').toLowerCase();
        tr.append(el('td', new Date(Number(t.ts)).toLocaleTimeString()), el('td', t.side, side), el('td', t.price), el('td', t.size));
        return tr;
      }),
    );
  };
  return {
    snapshot(rows: Row[] | null) {
      trades = [...(rows ?? [])];
      render();
    },
    add(t: Row) {
      trades = [t, ...trades.filter((x) => x.id !== t.id)].slice(0, 50);
      render();
    },
  };
}

/** The chosen market's mark and index, `stale` while the index's own time stands still. */
function perpPricesView(freshness: Freshness) {
  const line = $('perp-prices');
  let symbol = '';
  let last: Row | null = null;
  const name = (s: string) => `${s} index`;
  const render = () => {
    if (!last) {
      line.textContent = '';
      return;
    }
    const stale = freshness.isStale(name(symbol));
    const text = `Mark ${last.markPrice ?? '—'} · index ${last.indexPrice ?? '—'}${stale ? ' · stale' : ''}`;
    if (line.textContent !== text) line.textContent = text;
    line.classList.toggle('stale', stale);
  };
  return {
    reset(s: string) {
      if (symbol) freshness.forget(name(symbol));
      symbol = s;
      last = null;
      render();
    },
    ticker(t: Row | null) {
      if (!t || t.symbol !== symbol) return;
      last = t;
      freshness.note(name(symbol), t.indexTime ?? null, t.stale === true);
      render();
    },
    refresh: render,
  };
}

// ---------------------------------------------------------------- the demo wallet

/** Waiting triggers (UNTRIGGERED) as well as resting orders. */
const OPEN: ReadonlySet<string> = new Set(OPEN_ORDER_STATUSES);
/** The statuses an amendment applies to: a waiting trigger cannot be amended (its trigger was signed). */
const AMENDABLE: ReadonlySet<string> = new Set(['NEW', 'PARTIALLY_FILLED']);

/** An order in a sentence, for the status line: what it does, at what price, on what trigger. */
function describeOrder(o: Row): string {
  const what = o.closePosition === true ? `${o.side} ${o.symbol} closing the position` : `${o.side} ${o.size} ${o.symbol}`;
  const type = String(o.type ?? 'LIMIT');
  const at = o.price !== null && o.price !== undefined ? `at ${o.price}` : 'at market';
  if (!isTriggerType(type)) return `${what} ${at}`;
  return `${what}, ${type} ${at} when ${o.triggerBy} reaches ${o.triggerPrice}`;
}

const actionButton = (text: string, orderId: string, onClick: (b: HTMLButtonElement) => void) => {
  const button = el('button', text) as HTMLButtonElement;
  button.type = 'button';
  button.setAttribute('aria-description', `${text} order ${orderId}`);
  button.addEventListener('click', () => onClick(button));
  return button;
};

function ordersView(onCancel: (orderId: string) => void, onAmend: (order: Row) => void) {
  const orders = new Map<string, Row>();
  const tbody = $('open-orders').querySelector('tbody')!;
  const render = () => {
    tbody.replaceChildren(
      ...[...orders.values()].map((o) => {
        const tr = document.createElement('tr');
        const id = String(o.orderId);
        tr.dataset.orderId = id;
        const trigger = o.triggerPrice ? `${o.triggerPrice} (${o.triggerBy})` : '';
        const size = o.closePosition === true ? 'position' : o.size;
        tr.append(
          el('td', id), el('td', o.symbol), el('td', o.side, String(o.side).toLowerCase()), el('td', o.type ?? 'LIMIT'), el('td', o.price ?? ''), el('td', trigger),
          el('td', size), el('td', o.filledSize ?? '0'), el('td', o.status),
        );
        const actions = el('td');
        if (AMENDABLE.has(o.status)) actions.append(actionButton('Amend', id, () => onAmend(o)));
        actions.append(
          actionButton('Cancel', id, (b) => {
            b.disabled = true;
            onCancel(id);
          }),
        );
        tr.append(actions);
        return tr;
      }),
    );
  };
  return {
    snapshot(rows: Row[] | null) {
      orders.clear();
      for (const o of rows ?? []) orders.set(String(o.orderId), o);
      render();
    },
    upsert(o: Row) {
      if (OPEN.has(o.status)) orders.set(String(o.orderId), o);
      else orders.delete(String(o.orderId));
      render();
    },
  };
}

function positionsView() {
  const positions = new Map<string, Row>();
  const tbody = $('positions').querySelector('tbody')!;
  const render = () => {
    tbody.replaceChildren(
      ...[...positions.values()].map((p) => {
        const tr = document.createElement('tr');
        tr.append(el('td', p.symbol), el('td', p.side), el('td', p.size), el('td', p.entryPrice ?? ''), el('td', p.markPrice ?? ''), el('td', p.unrealizedPnl ?? p.unrealisedPnl ?? ''));
        return tr;
      }),
    );
  };
  const set = (p: Row) => {
    if (isZero(p.size)) positions.delete(p.symbol);
    else positions.set(p.symbol, p);
  };
  return {
    snapshot(rows: Row[] | null) {
      positions.clear();
      (rows ?? []).forEach(set);
      render();
    },
    upsert(p: Row) {
      set(p);
      render();
    },
  };
}

function balancesView() {
  const tbody = $('balances').querySelector('tbody')!;
  let perp: Row | undefined;
  let stock: Row | undefined;
  const render = () => {
    const rows: Array<[string, string, string, string]> = [];
    for (const c of (stock?.cashTokenBalances ?? []) as Row[]) rows.push(['Stock wallet', c.symbol, c.walletBalance, '']);
    // tokex's mUSD figures are `mUsdDetail`; `mUsdBalance` is Anchored's string (the available amount).
    if (stock?.mUsdDetail) rows.push(['Stock exchange', 'mUSD', stock.mUsdDetail.total, stock.mUsdDetail.available]);
    // The cash tokens are listed too (isStock false), as Anchored lists them: shown above from cashTokenBalances.
    for (const t of ((stock?.tokenBalances ?? []) as Row[]).filter((r) => r.isStock !== false)) {
      if (!isZero(t.walletBalance)) rows.push(['Stock wallet', t.symbol, t.walletBalance, '']);
      if (!isZero(t.exchangeBalance) || !isZero(t.lockedExchangeBalance)) rows.push(['Stock exchange', t.symbol, t.exchangeBalance, t.exchangeBalance]);
    }
    if (perp) {
      rows.push(['Perp margin', 'USDC', String(perp.balance), String(perp.freeCollateral ?? '')]);
      rows.push(['Perp equity', 'USDC', String(perp.equity), '']);
    }
    tbody.replaceChildren(
      ...rows.map((cells) => {
        const tr = document.createElement('tr');
        for (const c of cells) tr.append(el('td', c));
        return tr;
      }),
    );
  };
  return {
    stock(b: Row | null) {
      if (b) stock = b;
      render();
    },
    perp(a: Row | null) {
      if (a) perp = a;
      render();
    },
  };
}

// ---------------------------------------------------------------- start

async function start(): Promise<void> {
  const config = await getEnvelope<ConsoleConfig>('/console/config');
  if (!config) throw new Error('console configuration unavailable');
  const demo = await getEnvelope<ConsoleDemo>('/console/demo');
  $('mode').textContent = demo
    ? `Demo wallet ${demo.wallet.address}: trading enabled.`
    : 'Read-only view: public market data from the streams only. The demo wallet is offered only to a browser on the stack’s own machine, when the stack runs its own anvil.';

  const feedStatus = $('feed-status');
  const groups: FeedGroup[] = [];
  const stockFresh = new Freshness(config.stock.staleAfterMs ?? DEFAULT_STALE_AFTER_MS);
  const perpFresh = new Freshness(config.perp?.staleAfterMs ?? DEFAULT_STALE_AFTER_MS);
  const showFeeds = () => {
    const stale = [...stockFresh.stale(), ...perpFresh.stale()].map((p) => p.name);
    const text = describeFeeds(groups.flatMap((g) => g.feeds), stale, Math.min(stockFresh.staleAfterMs, perpFresh.staleAfterMs));
    if (feedStatus.textContent !== text) feedStatus.textContent = text;
  };
  // A price turns stale with no frame at all: the status line and the markers are judged each second.
  const refreshers: Array<() => void> = [showFeeds];
  setInterval(() => refreshers.forEach((r) => r()), 1_000);

  const stockRest: StockRequest | undefined = demo ? stockClient({ baseUrl: config.stock.baseUrl, chainId: config.chainId, product: config.stock.product, creds: demo.stock }) : undefined;
  const stockStreams = new StockStreamClient(demo ? { url: config.stock.wsUrl, apiKey: demo.stock.apiKey, apiSecret: demo.stock.apiSecret } : { url: config.stock.wsUrl });
  const stockFeeds = new FeedGroup(stockStreams, showFeeds);
  groups.push(stockFeeds);
  const stockPoll = <P>(read: (rest: StockRequest) => Promise<P>, apply: (p: P) => void) => (stockRest ? { read: () => read(stockRest), apply } : undefined);

  // Markets: every symbol's quote stream; the selected one's candles.
  let selected = config.stock.symbols[0];
  let klineFeed: Feed | undefined;
  const chart = chartView();
  // The exact strings: the bar's top-level figures are JSON numbers (Anchored's type), which print `229.8` for 229.80.
  const stockBar = (c: StockCandle): Candle => ({ openTime: c.openTime, ...c.exact });
  const markets = marketsView(config.stock.symbols, (s) => void selectStock(s).catch(report), stockFresh);
  refreshers.push(() => markets.refresh());
  const history = (rest: StockRequest, symbol: string, limit: number) =>
    // `endTime` (Unix seconds) and `interval` are required, as Anchored documents them.
    rest<{ candles: StockCandle[] }>('GET', `/prices/${encodeURIComponent(symbol)}/history`, { interval: '1m', endTime: Math.floor(Date.now() / 1000), limit }).then((h) => h.candles.map(stockBar));
  async function selectStock(symbol: string): Promise<void> {
    selected = symbol;
    markets.select(symbol);
    $('chart-symbol').textContent = symbol;
    await klineFeed?.stop();
    klineFeed = undefined;
    const initial = stockRest ? await history(stockRest, symbol, 80) : [];
    if (selected !== symbol) return;
    chart.reset(symbol, initial);
    klineFeed = stockFeeds.start<StockCandle | null>({
      name: `candles ${symbol}`,
      channel: 'klines:1m',
      symbol,
      onSnapshot: (c) => chart.upsert(c && stockBar(c)),
      onUpdate: (c) => chart.upsert(c && stockBar(c)),
      poll: stockPoll((rest) => history(rest, symbol, 2), (cs) => selected === symbol && chart.merge(cs)),
    });
  }
  const quote = (rest: StockRequest, s: string) => rest<Row>('GET', `/prices/${encodeURIComponent(s)}`);
  if (stockRest) await Promise.all(config.stock.symbols.map(async (s) => markets.quote(await quote(stockRest, s)))).catch(report);
  for (const s of config.stock.symbols) {
    stockFeeds.start<Row | null>({
      name: `quotes ${s}`,
      channel: 'quotes',
      symbol: s,
      onSnapshot: (q) => markets.quote(q),
      onUpdate: (q) => markets.quote(q),
      poll: stockPoll((rest) => quote(rest, s), (q) => markets.quote(q)),
    });
  }
  if (selected) await selectStock(selected).catch(report);

  // The perpetual market: book and trades of the chosen symbol.
  const perpCfg = config.perp;
  if (!perpCfg) {
    $('perp-h').textContent = 'Perpetual API not served by this stack';
    return;
  }
  const perpRest: PerpRequest | undefined = demo?.perp ? perpClient({ baseUrl: perpCfg.baseUrl, chainId: config.chainId, creds: demo.perp }) : undefined;
  const perpStreams = new PerpStreamClient(demo?.perp ? { url: perpCfg.wsUrl, apiKey: demo.perp.apiKey, apiSecret: demo.perp.apiSecret } : { url: perpCfg.wsUrl });
  const perpFeeds = new FeedGroup(perpStreams, showFeeds);
  groups.push(perpFeeds);
  const perpPoll = <P>(read: (rest: PerpRequest) => Promise<P>, apply: (p: P) => void, everyMs?: number) =>
    perpRest ? { read: () => read(perpRest), apply, everyMs } : undefined;
  const book = bookView();
  const trades = tradesView();
  const prices = perpPricesView(perpFresh);
  refreshers.push(() => prices.refresh());
  let perpSymbol = '';
  let marketFeeds: Feed[] = [];
  const depth = (rest: PerpRequest, symbol: string) => rest<BookSide>('GET', 'depth', { symbol, limit: 20 });
  const tape = (rest: PerpRequest, symbol: string) => rest<{ rows: Row[] }>('GET', 'market-trades', { symbol, limit: 15 }).then((r) => r.rows);
  const tickerOf = (rest: PerpRequest, symbol: string) => rest<Row[]>('GET', 'tickers', { symbol }).then((r) => r[0] ?? null);
  const marketSelect = $<HTMLSelectElement>('perp-market');
  for (const s of perpCfg.symbols) marketSelect.append(new Option(s, s));
  async function selectPerp(symbol: string): Promise<void> {
    perpSymbol = symbol;
    $('perp-symbol').textContent = symbol;
    await Promise.all(marketFeeds.map((f) => f.stop()));
    marketFeeds = [];
    prices.reset(symbol);
    const [d, t] = perpRest ? await Promise.all([depth(perpRest, symbol), tape(perpRest, symbol)]) : [{ bids: [], asks: [] }, []];
    if (perpSymbol !== symbol) return;
    book.snapshot(d);
    trades.snapshot(t);
    const current = <P>(apply: (p: P) => void) => (p: P) => perpSymbol === symbol && apply(p);
    marketFeeds = [
      perpFeeds.start<BookSide, Partial<BookSide>>({
        name: `order book ${symbol}`,
        channel: 'depth',
        symbol,
        onSnapshot: (x) => book.snapshot(x),
        onUpdate: (x) => book.update(x),
        poll: perpPoll((rest) => depth(rest, symbol), current((x: BookSide) => book.snapshot(x))),
      }),
      perpFeeds.start<Row[], Row>({
        name: `trades ${symbol}`,
        channel: 'trades',
        symbol,
        onSnapshot: (rows) => trades.snapshot(rows),
        onUpdate: (x) => trades.add(x),
        poll: perpPoll((rest) => tape(rest, symbol), current((rows: Row[]) => trades.snapshot(rows))),
      }),
      perpFeeds.start<Row | null>({
        name: `ticker ${symbol}`,
        channel: 'tickers',
        symbol,
        onSnapshot: current((x: Row | null) => prices.ticker(x)),
        onUpdate: current((x: Row | null) => prices.ticker(x)),
        poll: perpPoll((rest) => tickerOf(rest, symbol), current((x: Row | null) => prices.ticker(x)), PERP_PRIVATE_POLL_MS),
      }),
    ];
  }
  marketSelect.addEventListener('change', () => void selectPerp(marketSelect.value).catch(report));
  await selectPerp(perpCfg.symbols[0]).catch(report);

  if (!demo) return;
  // The demo wallet: balances, open orders, positions, and the order form.
  $('wallet').hidden = false;
  $('wallet-address').textContent = demo.wallet.address;
  const balances = balancesView();
  const stockBalance = (rest: StockRequest) => rest<Row>('GET', `/users/${demo.stock.userAddress}/balance`);
  if (stockRest) balances.stock(await stockBalance(stockRest).catch((e) => (report(e), null)));
  stockFeeds.start<Row | null>({
    name: 'stock balances',
    channel: 'balances',
    onSnapshot: (b) => balances.stock(b),
    onUpdate: (b) => balances.stock(b),
    poll: stockPoll(stockBalance, (b) => balances.stock(b)),
  });
  if (!perpRest) return;
  const status = $('order-status');
  const wallet = privateKeyToAccount(demo.wallet.privateKey);
  /** The API builds the typed data, the demo wallet signs it here, the signed message goes back. */
  const signAndSend = async (buildPath: string, sendPath: string, input: unknown): Promise<Row> => {
    const built = await perpRest<{ typedData: any }>('POST', buildPath, undefined, input);
    const signature = await wallet.signTypedData(built.typedData);
    return perpRest<Row>('POST', sendPath, undefined, { message: built.typedData.message, signature });
  };
  /** A refusal is the user's to read in the status line; anything else is a fault of the page. */
  const refused = (what: string, failed: string) => (e: unknown) => {
    if (e instanceof ApiError) status.textContent = `${what} refused: ${e.message}`;
    else {
      status.textContent = failed;
      report(e);
    }
  };
  const amendForm = $<HTMLFormElement>('amend-form');
  let amending: Row | undefined;
  const orders = ordersView(
    (orderId) => {
      status.textContent = `Canceling order ${orderId}…`;
      perpRest<Row>('DELETE', `orders/${encodeURIComponent(orderId)}`)
        .then((o) => {
          orders.upsert(o);
          status.textContent = `Order ${orderId} canceled.`;
        })
        .catch((e) => {
          status.textContent = `Cancel of order ${orderId} failed.`;
          report(e);
        });
    },
    (o) => {
      amending = o;
      $('amend-order').textContent = String(o.orderId);
      $<HTMLInputElement>('a-price').value = o.price ?? '';
      $<HTMLInputElement>('a-size').value = o.size;
      amendForm.hidden = false;
      $<HTMLInputElement>('a-price').focus();
    },
  );
  $('amend-close').addEventListener('click', () => {
    amendForm.hidden = true;
    amending = undefined;
  });
  amendForm.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const o = amending;
    if (!o) return;
    const data = new FormData(amendForm);
    const price = String(data.get('price')).trim();
    const size = String(data.get('size')).trim();
    // Only what changed: the amendment signs "" for what stays.
    const input = { orderId: String(o.orderId), ...(price !== (o.price ?? '') ? { price } : {}), ...(size !== o.size ? { size } : {}) };
    if (!('price' in input) && !('size' in input)) {
      status.textContent = `Order ${o.orderId}: nothing to change.`;
      return;
    }
    const button = amendForm.querySelector<HTMLButtonElement>('button[type=submit]')!;
    button.disabled = true;
    status.textContent = `Amending order ${o.orderId}…`;
    signAndSend('orders/amend/build', 'orders/amend', input)
      .then((amended) => {
        orders.upsert(amended);
        amendForm.hidden = true;
        amending = undefined;
        status.textContent = `Order ${amended.orderId} amended, ${amended.status}: ${describeOrder(amended)}.`;
      })
      .catch(refused('Amendment', `Order ${o.orderId} not amended.`))
      .finally(() => {
        button.disabled = false;
      });
  });
  const positions = positionsView();
  const account = (rest: PerpRequest) => rest<Row>('GET', 'account');
  const openOrders = (rest: PerpRequest) => rest<{ rows: Row[] }>('GET', 'orders/open', { limit: 100 }).then((r) => r.rows);
  const openPositions = (rest: PerpRequest) => rest<{ rows: Row[] }>('GET', 'positions', { limit: 100 }).then((r) => r.rows);
  const [a0, o0, p0] = await Promise.all([account(perpRest), openOrders(perpRest), openPositions(perpRest)]);
  balances.perp(a0);
  orders.snapshot(o0);
  positions.snapshot(p0);
  perpFeeds.start<Row>({
    name: 'perp account',
    channel: 'account',
    onSnapshot: (x) => balances.perp(x),
    onUpdate: (x) => balances.perp(x),
    poll: perpPoll(account, (x) => balances.perp(x), PERP_PRIVATE_POLL_MS),
  });
  perpFeeds.start<Row[], Row>({
    name: 'open orders',
    channel: 'orders',
    onSnapshot: (rows) => orders.snapshot(rows),
    onUpdate: (x) => orders.upsert(x),
    poll: perpPoll(openOrders, (rows) => orders.snapshot(rows), PERP_PRIVATE_POLL_MS),
  });
  perpFeeds.start<Row[], Row>({
    name: 'positions',
    channel: 'positions',
    onSnapshot: (rows) => positions.snapshot(rows),
    onUpdate: (x) => positions.upsert(x),
    poll: perpPoll(openPositions, (rows) => positions.snapshot(rows), PERP_PRIVATE_POLL_MS),
  });

  const symbolField = $<HTMLSelectElement>('f-symbol');
  for (const s of perpCfg.symbols) symbolField.append(new Option(s, s));
  const typeField = $<HTMLSelectElement>('f-type');
  for (const t of ORDER_TYPES) typeField.append(new Option(t, t));
  const closeField = $<HTMLInputElement>('f-close');
  /** Shows the fields the chosen type takes, and requires those it needs. */
  const showFields = () => {
    const type = typeField.value as OrderType;
    const trigger = isTriggerType(type);
    const limit = triggeredType(type) === 'LIMIT';
    if (!trigger) closeField.checked = false;
    const close = closeField.checked;
    const show = (id: string, input: string, on: boolean) => {
      $(id).hidden = !on;
      $<HTMLInputElement>(input).required = on;
    };
    show('f-price-field', 'f-price', limit);
    show('f-trigger-fields', 'f-trigger', trigger);
    show('f-size-field', 'f-size', !close);
  };
  typeField.addEventListener('change', showFields);
  closeField.addEventListener('change', showFields);
  showFields();
  const form = $<HTMLFormElement>('order-form');
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const data = new FormData(form);
    const type = String(data.get('type')) as OrderType;
    const trigger = isTriggerType(type);
    const close = trigger && closeField.checked;
    const text = (name: string) => String(data.get(name) ?? '').trim();
    // The time in force is the type's default (GTC for the LIMIT types, IOC for the MARKET ones).
    const order = {
      symbol: text('symbol'), side: text('side'), type,
      ...(close ? { closePosition: true } : { size: text('size') }),
      ...(triggeredType(type) === 'LIMIT' ? { price: text('price') } : {}),
      ...(trigger ? { triggerPrice: text('triggerPrice'), triggerBy: text('triggerBy') } : {}),
    };
    const button = form.querySelector('button')!;
    button.disabled = true;
    status.textContent = 'Placing order…';
    signAndSend('orders/build', 'orders', order)
      .then((placed) => {
        orders.upsert(placed);
        status.textContent = `Order ${placed.orderId} ${placed.status}: ${describeOrder(placed)}.`;
      })
      .catch(refused('Order', 'Order not placed.'))
      .finally(() => {
        button.disabled = false;
      });
  });
}

start().catch(report);
