/// <reference lib="dom" />
/**
 * The console page's script (docs/console.md): a trading terminal for both venues. REST for the
 * first load, the two APIs' WebSocket streams for everything live (REST polling stands in while a
 * stream is unavailable); perpetual orders (limit, market, stop and take-profit triggers) and
 * amendments built by the API and signed here with the demo wallet's key (viem, EIP-712); stock
 * orders through One Click (stock-trading.ts). Without demo credentials the page is read-only: the
 * public streams only, since every REST read of both APIs is signed.
 */
import { isTriggerType, ORDER_TYPES, triggeredType, type OrderType, type StockCandle } from '@tokex/contract';
import { privateKeyToAccount } from 'viem/accounts';
import { PerpStreamClient, StockStreamClient } from '@tokex/sdk/stream-client';
import { decimalsOf, DISPLAY_DECIMALS, formatAmount, isPositiveDecimal } from './amount-format.ts';
import { ApiError, perpClient, stockClient, type PerpRequest, type StockRequest } from './api-clients.ts';
import { balancesView, describeOrder, historyView, ordersView, positionsView, stockOrdersView } from './account-views.ts';
import { $, report, type Row } from './dom.ts';
import { CHART_INTERVALS, createKlineChart, INTERVAL_WORDS, type Candle, type ChartInterval } from './kline-chart.ts';
import { Freshness } from './freshness.ts';
import { describeFeeds, FeedGroup, type Feed } from './live-feed.ts';
import { bookView, marketsView, perpMarketsView, perpPricesView, tradesView, type BookSide } from './market-views.ts';
import { checkStockOrder, stockTrading, type StockOrderInput } from './stock-trading.ts';

interface ConsoleConfig {
  chainId: number;
  stock: { baseUrl: string; wsUrl: string; product: string; symbols: string[]; staleAfterMs?: number; chains?: number[] };
  perp: { baseUrl: string; wsUrl: string; symbols: string[]; staleAfterMs?: number; instruments?: Array<{ symbol: string; tickSize: string; lotSize: string }> } | null;
}

type StockContracts = { stockRouter: string; cashToken: string; stocks: Record<string, string> };

/** When the configuration does not say: the stock API's default quote age. */
const DEFAULT_STALE_AFTER_MS = 30_000;
interface ConsoleDemo {
  wallet: { address: string; privateKey: `0x${string}` };
  rpcUrl: string;
  stock: { apiKey: string; apiSecret: string; userAddress: string; contracts: StockContracts };
  chains?: Array<{ chainId: number; rpcUrl: string; contracts: StockContracts }>;
  perp: { apiKey: string; apiSecret: string; address: string } | null;
}

/**
 * The stock chain the page shows (docs/console.md, "Several chains"): `?chain=<id>` when the stock
 * API serves that chain, else the first. The choice lives in the address, so a reload or a link
 * keeps it; the selector is shown only when there are several chains (and a demo wallet whose
 * balances and orders differ by chain), and choosing loads the page
 * again on the chosen chain (every stock read, order and approval then goes to it).
 */
function chooseStockChain(config: ConsoleConfig, offer: boolean): number {
  const chains = config.stock.chains ?? [config.chainId];
  const asked = Number(new URLSearchParams(window.location.search).get('chain'));
  const chosen = chains.includes(asked) ? asked : chains[0] ?? config.chainId;
  // Read-only (no demo wallet) the page shows nothing of a chain's own: the quotes are every chain's.
  if (offer && chains.length > 1) {
    const select = $<HTMLSelectElement>('chain-select');
    for (const id of chains) select.append(new Option(`${id}${id === chains[0] ? ' (first)' : ''}`, String(id)));
    select.value = String(chosen);
    select.addEventListener('change', () => {
      const url = new URL(window.location.href);
      url.searchParams.set('chain', select.value);
      window.location.assign(url.toString());
    });
    $('chain-choice').hidden = false;
  }
  return chosen;
}

/**
 * The perp API allows 120 requests a minute per key by default: book and tape every 2 s and the
 * wallet's reads every 6 s stay under it while every stream is down, leaving room for orders.
 */
const PERP_PRIVATE_POLL_MS = 6_000;
/**
 * The perpetual markets list's tickers, read over REST only while their streams are down; slowly,
 * since the chosen market's own ticker feed polls already: 2 requests a minute.
 */
const PERP_TICKERS_POLL_MS = 30_000;
/** History is read again once an order is done, at most this often (a burst of fills is one read). */
const HISTORY_REFRESH_MS = 5_000;

/** `fn` at most once per `ms`, after the first call of a burst: the calls between coalesce. */
function coalesced(fn: () => Promise<unknown>, ms: number): () => void {
  let pending = false;
  return () => {
    if (pending) return;
    pending = true;
    setTimeout(() => {
      void fn().finally(() => {
        pending = false;
      });
    }, ms);
  };
}

/** The stack's own answer in its envelope, or undefined for a 404 (demo credentials refused). */
async function getEnvelope<T>(url: string): Promise<T | undefined> {
  const res = await fetch(url, { cache: 'no-store' });
  if (res.status === 404) return undefined;
  const json = (await res.json()) as { code: number; errMsg?: string; data: T };
  if (json.code !== 200) throw new Error(`${url}: ${json.errMsg ?? res.status}`);
  return json.data;
}

/** The chart with its heading, interval choice, accessible name and the last candle in words. */
function chartView(priceDecimals: () => number) {
  const box = $('chart');
  const chart = createKlineChart(box, priceDecimals);
  let symbol = '';
  let interval: ChartInterval = '1m';
  const render = () => {
    const bars = chart.bars;
    const last = bars[bars.length - 1];
    box.setAttribute('aria-label', `K-line chart of ${symbol}, ${bars.length} ${INTERVAL_WORDS[interval]} candles`);
    const p = priceDecimals();
    const f = (v: string) => formatAmount(v, p);
    $('chart-last').textContent = last
      ? `${symbol} last candle: open ${f(last.open)}, high ${f(last.high)}, low ${f(last.low)}, close ${f(last.close)}${last.volume !== undefined ? `, volume ${last.volume}` : ''}`
      : '';
  };
  return {
    reset(s: string, i: ChartInterval, initial: Candle[]) {
      symbol = s;
      interval = i;
      $('chart-symbol').textContent = s;
      chart.reset(initial);
      render();
    },
    upsert(c: Candle | null) {
      if (!c) return;
      chart.upsert(c);
      render();
    },
    merge(cs: Candle[]) {
      cs.forEach((c) => chart.upsert(c));
      render();
    },
  };
}

/** Reads a form's fields as trimmed text. */
const textOf = (form: HTMLFormElement) => {
  const data = new FormData(form);
  return (name: string) => String(data.get(name) ?? '').trim();
};

async function start(): Promise<void> {
  const config = await getEnvelope<ConsoleConfig>('/console/config');
  if (!config) throw new Error('console configuration unavailable');
  const demo = await getEnvelope<ConsoleDemo>('/console/demo');
  const stockChainId = chooseStockChain(config, demo !== undefined);
  const severalChains = (config.stock.chains ?? []).length > 1;
  // The stock stream serves the first chain's private channels (balances, orders) only
  // (docs/deployment.md, "Several chains"): on another chain those views poll its REST reads. The
  // quotes and candles are one feed for every chain, so they stream whichever chain is shown.
  const privateStreams = stockChainId === config.chainId;
  const stockChain = demo?.chains?.find((c) => c.chainId === stockChainId) ?? (demo ? { chainId: config.chainId, rpcUrl: demo.rpcUrl, contracts: demo.stock.contracts } : undefined);
  $('mode').textContent = demo
    ? `Demo wallet ${demo.wallet.address}: trading enabled${severalChains ? ` on chain ${stockChainId}` : ''}.`
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

  // Each perpetual market's tick and lot: its prices are shown at the tick's places.
  const instruments = new Map((config.perp?.instruments ?? []).map((i) => [i.symbol, i]));
  const tickDecimals = (symbol: string) => decimalsOf(instruments.get(symbol)?.tickSize, 2);

  // Every stock request carries the chosen chain's id (x-api-chain-id): its venue answers.
  const stockRest: StockRequest | undefined = demo ? stockClient({ baseUrl: config.stock.baseUrl, chainId: stockChainId, product: config.stock.product, creds: demo.stock }) : undefined;
  const stockStreams = new StockStreamClient(demo ? { url: config.stock.wsUrl, apiKey: demo.stock.apiKey, apiSecret: demo.stock.apiSecret } : { url: config.stock.wsUrl });
  const stockFeeds = new FeedGroup(stockStreams, showFeeds);
  groups.push(stockFeeds);
  const stockPoll = <P>(read: (rest: StockRequest) => Promise<P>, apply: (p: P) => void) => (stockRest ? { read: () => read(stockRest), apply } : undefined);

  const perpCfg = config.perp;
  const perpRest: PerpRequest | undefined = perpCfg && demo?.perp ? perpClient({ baseUrl: perpCfg.baseUrl, chainId: config.chainId, creds: demo.perp }) : undefined;
  const perpStreams = perpCfg ? new PerpStreamClient(demo?.perp ? { url: perpCfg.wsUrl, apiKey: demo.perp.apiKey, apiSecret: demo.perp.apiSecret } : { url: perpCfg.wsUrl }) : undefined;
  const perpFeeds = perpStreams ? new FeedGroup(perpStreams, showFeeds) : undefined;
  if (perpFeeds) groups.push(perpFeeds);
  const perpPoll = <P>(read: (rest: PerpRequest) => Promise<P>, apply: (p: P) => void, everyMs?: number) =>
    perpRest ? { read: () => read(perpRest), apply, everyMs } : undefined;

  // ------------------------------------------------------------ the chart: either venue's market
  let charted: { venue: 'stock' | 'perp'; symbol: string } = { venue: 'stock', symbol: config.stock.symbols[0] };
  let interval: ChartInterval = '1m';
  const chartPriceDecimals = () => (charted.venue === 'stock' ? DISPLAY_DECIMALS.stockPrice : tickDecimals(charted.symbol));
  const chart = chartView(chartPriceDecimals);
  const intervalField = $<HTMLSelectElement>('chart-interval');
  for (const i of CHART_INTERVALS) intervalField.append(new Option(i, i));
  let klineFeed: Feed | undefined;
  // The exact strings: the bar's top-level figures are JSON numbers (Anchored's type), which print `229.8` for 229.80.
  const stockBar = (c: StockCandle): Candle => ({ openTime: c.openTime, ...c.exact });
  const perpBar = (c: Row): Candle => ({ openTime: Number(c.openTime), open: String(c.open), high: String(c.high), low: String(c.low), close: String(c.close), volume: String(c.volume ?? '0') });
  const stockHistory = (rest: StockRequest, symbol: string, i: ChartInterval, limit: number) =>
    // `endTime` (Unix seconds) and `interval` are required, as Anchored documents them.
    rest<{ candles: StockCandle[] }>('GET', `/prices/${encodeURIComponent(symbol)}/history`, { interval: i, endTime: Math.floor(Date.now() / 1000), limit }).then((h) => h.candles.map(stockBar));
  const perpHistory = (rest: PerpRequest, symbol: string, i: ChartInterval, limit: number) => rest<Row[]>('GET', 'klines', { symbol, interval: i, limit }).then((rows) => rows.map(perpBar));
  let markets: ReturnType<typeof marketsView>;
  let perpMarkets: ReturnType<typeof perpMarketsView> | undefined;

  async function showChart(venue: 'stock' | 'perp', symbol: string, i: ChartInterval): Promise<void> {
    charted = { venue, symbol };
    interval = i;
    markets.select(venue === 'stock' ? symbol : undefined);
    perpMarkets?.select(venue === 'perp' ? symbol : undefined);
    await klineFeed?.stop();
    klineFeed = undefined;
    const current = () => charted.venue === venue && charted.symbol === symbol && interval === i;
    let initial: Candle[] = [];
    if (venue === 'stock' && stockRest) initial = await stockHistory(stockRest, symbol, i, 200);
    if (venue === 'perp' && perpRest) initial = await perpHistory(perpRest, symbol, i, 200);
    if (!current()) return;
    chart.reset(symbol, i, initial);
    if (venue === 'stock') {
      klineFeed = stockFeeds.start<StockCandle | null>({
        name: `candles ${symbol}`,
        channel: `klines:${i}`,
        symbol,
        onSnapshot: (c) => current() && chart.upsert(c && stockBar(c)),
        onUpdate: (c) => current() && chart.upsert(c && stockBar(c)),
        poll: stockPoll((rest) => stockHistory(rest, symbol, i, 2), (cs) => current() && chart.merge(cs)),
      });
    } else if (perpFeeds) {
      klineFeed = perpFeeds.start<Row | null>({
        name: `candles ${symbol}`,
        channel: `klines:${i}`,
        symbol,
        onSnapshot: (c) => current() && chart.upsert(c && perpBar(c)),
        onUpdate: (c) => current() && chart.upsert(c && perpBar(c)),
        poll: perpPoll((rest) => perpHistory(rest, symbol, i, 2), (cs) => current() && chart.merge(cs), PERP_PRIVATE_POLL_MS),
      });
    }
  }
  intervalField.addEventListener('change', () => void showChart(charted.venue, charted.symbol, intervalField.value as ChartInterval).catch(report));

  // ------------------------------------------------------------ stock markets
  markets = marketsView(config.stock.symbols, (s) => void showChart('stock', s, interval).catch(report), stockFresh);
  refreshers.push(() => markets.refresh());
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
  if (charted.symbol) await showChart('stock', charted.symbol, interval).catch(report);

  // ------------------------------------------------------------ the perpetual market: book and tape
  let perpSymbol = perpCfg?.symbols[0] ?? '';
  const perpDecimals = () => tickDecimals(perpSymbol);
  const book = bookView(perpDecimals);
  const trades = tradesView(perpDecimals);
  const prices = perpPricesView(perpFresh, perpDecimals);
  refreshers.push(() => prices.refresh());
  let marketFeeds: Feed[] = [];
  const depth = (rest: PerpRequest, symbol: string) => rest<BookSide>('GET', 'depth', { symbol, limit: 20 });
  const tape = (rest: PerpRequest, symbol: string) => rest<{ rows: Row[] }>('GET', 'market-trades', { symbol, limit: 30 }).then((r) => r.rows);
  const tickerOf = (rest: PerpRequest, symbol: string) => rest<Row[]>('GET', 'tickers', { symbol }).then((r) => r[0] ?? null);
  async function selectPerp(symbol: string, chartIt: boolean): Promise<void> {
    perpSymbol = symbol;
    $('perp-symbol').textContent = symbol;
    if (chartIt) void showChart('perp', symbol, interval).catch(report);
    await Promise.all(marketFeeds.map((f) => f.stop()));
    marketFeeds = [];
    prices.reset(symbol);
    book.clear();
    trades.snapshot([]);
    const [d, t] = perpRest ? await Promise.all([depth(perpRest, symbol), tape(perpRest, symbol)]) : [{ bids: [], asks: [] }, []];
    if (perpSymbol !== symbol || !perpFeeds) return;
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
  if (!perpCfg || !perpStreams) {
    $('perp-h').textContent = 'Perpetual API not served by this stack';
  } else {
    perpMarkets = perpMarketsView(perpCfg.symbols, tickDecimals, (s) => void selectPerp(s, true).catch(report));
    // The list's marks: every symbol's ticker stream on a public connection of its own (a client
    // takes one subscription per channel and symbol, and the chosen market's ticker feed holds that
    // one on the main connection, saying in the status line how the perp data flows), and one REST
    // read of all while they are down.
    const listStreams = new PerpStreamClient({ url: perpCfg.wsUrl });
    let listLive = false;
    for (const s of perpCfg.symbols) {
      listStreams.subscribe('tickers', { symbol: s }, {
        onSnapshot: (x: Row | null) => {
          listLive = true;
          perpMarkets!.ticker(x);
        },
        onUpdate: (x: Row | null) => perpMarkets!.ticker(x),
        onError: () => {
          listLive = false;
        },
      } as any);
    }
    listStreams.on('state', (state: string) => {
      if (state !== 'open') listLive = false;
    });
    if (perpRest) {
      const all = () => perpRest<Row[]>('GET', 'tickers').then((rows) => rows.forEach((r) => perpMarkets!.ticker(r)));
      await all().catch(report);
      setInterval(() => {
        if (!listLive) all().catch(() => undefined);
      }, PERP_TICKERS_POLL_MS);
    }
    await selectPerp(perpSymbol, false).catch(report);
  }

  if (!demo) return;
  // ------------------------------------------------------------ the demo wallet's account
  $('wallet').hidden = false;
  $('entry').hidden = false;
  $('wallet-address').textContent = demo.wallet.address;
  const wallet = privateKeyToAccount(demo.wallet.privateKey);
  const balances = balancesView();
  const history = historyView(tickDecimals);
  const stockBalance = (rest: StockRequest) => rest<Row>('GET', `/users/${demo.stock.userAddress}/balance`);
  const stockHistoryRows = (rest: StockRequest) => rest<{ rows: Row[] }>('GET', '/orders', { state: 'history', limit: 50 }).then((r) => r.rows);
  const readStockHistory = () => (stockRest ? stockHistoryRows(stockRest).then((rows) => history.stock(rows)).catch(() => undefined) : Promise.resolve());
  const refreshStockHistory = coalesced(readStockHistory, 1_000);
  if (stockRest) balances.stock(await stockBalance(stockRest).catch((e) => (report(e), null)));
  stockFeeds.start<Row | null>({
    name: 'stock balances',
    channel: 'balances',
    stream: privateStreams,
    onSnapshot: (b) => balances.stock(b),
    onUpdate: (b) => balances.stock(b),
    poll: stockPoll(stockBalance, (b) => balances.stock(b)),
  });

  // Stock orders: open ones with Cancel, done ones in History.
  if (stockRest) {
    let trading: ReturnType<typeof stockTrading>;
    const stockOrders = stockOrdersView((orderId) => {
      trading.cancel(orderId).catch((e) => {
        trading.status.textContent = e instanceof ApiError ? `Cancel of stock order ${orderId} refused: ${e.message}` : `Cancel of stock order ${orderId} failed.`;
        if (!(e instanceof ApiError)) report(e);
      });
    });
    const onStockOrder = (o: Row) => {
      if (stockOrders.upsert(o) || o.state === 'history') {
        void refreshStockHistory();
        const line = trading?.status;
        if (line && line.textContent?.startsWith(`Stock order ${o.orderId} canceling`)) line.textContent = `Stock order ${o.orderId} canceled.`;
      }
    };
    trading = stockTrading({
      rest: stockRest,
      wallet,
      chainId: stockChainId,
      rpcUrl: stockChain!.rpcUrl,
      contracts: stockChain!.contracts,
      balance: () => balances.stockBalance,
      quote: (s) => markets.last(s),
      onOrder: onStockOrder,
      refreshBalance: async () => balances.stock(await stockBalance(stockRest)),
    });
    const openStockOrders = (rest: StockRequest) => rest<{ rows: Row[] }>('GET', '/orders', { state: 'open', limit: 100 }).then((r) => r.rows);
    stockOrders.snapshot(await openStockOrders(stockRest).catch((e) => (report(e), [])));
    void readStockHistory();
    stockFeeds.start<Row[] | Row | null, Row>({
      name: 'stock orders',
      channel: 'orders',
      stream: privateStreams,
      onSnapshot: (rows) => {
        if (Array.isArray(rows)) stockOrders.snapshot(rows);
        else if (rows) onStockOrder(rows);
      },
      onUpdate: (o) => onStockOrder(o),
      poll: stockPoll(openStockOrders, (rows) => stockOrders.snapshot(rows)),
    });
    await trading.refreshOneClick().catch(report);
    const enable = $<HTMLButtonElement>('oneclick-enable');
    enable.addEventListener('click', () => {
      enable.disabled = true;
      trading.status.textContent = 'Enabling One Click: the wallet signs the delegation…';
      trading
        .enableOneClick()
        .then(() => {
          trading.status.textContent = 'One Click enabled: stock orders are sent by the relayer.';
        })
        .catch((e) => {
          trading.status.textContent = e instanceof ApiError ? `One Click refused: ${e.message}` : 'One Click not enabled.';
          if (!(e instanceof ApiError)) report(e);
        })
        .finally(() => {
          enable.disabled = false;
        });
    });

    // The stock order form: market by notional (a buy) or quantity (a sell), limit by quantity and price.
    const sForm = $<HTMLFormElement>('stock-form');
    const sSymbol = $<HTMLSelectElement>('s-symbol');
    for (const s of config.stock.symbols) sSymbol.append(new Option(s, s));
    const sType = $<HTMLSelectElement>('s-type');
    const sSide = $<HTMLSelectElement>('s-side');
    const showStockFields = () => {
      const market = sType.value === 'Market';
      const buy = sSide.value === 'Buy';
      $('s-notional-field').hidden = !(market && buy);
      $('s-quantity-field').hidden = market && buy;
      $('s-price-field').hidden = market;
      $('s-hint').textContent = market
        ? buy
          ? 'Market buy: the mUSD to spend, fee included. Filled at the ask within 0.5 %.'
          : 'Market sell: the shares to sell. Filled at the bid within 0.5 %.'
        : 'Limit: rests until filled, cancelled or the trading day ends (DAY).';
    };
    sType.addEventListener('change', showStockFields);
    sSide.addEventListener('change', showStockFields);
    showStockFields();
    sForm.addEventListener('submit', (ev) => {
      ev.preventDefault();
      const text = textOf(sForm);
      const o: StockOrderInput = { symbol: text('symbol'), side: text('side') as 'Buy' | 'Sell', type: text('type') as 'Market' | 'Limit' };
      if (o.type === 'Market' && o.side === 'Buy') o.notional = text('notional');
      else o.quantity = text('quantity');
      if (o.type === 'Limit') o.price = text('price');
      const problem = checkStockOrder(o);
      if (problem) {
        trading.status.textContent = `Not sent: ${problem}.`;
        return;
      }
      const button = sForm.querySelector<HTMLButtonElement>('button[type=submit]')!;
      button.disabled = true;
      trading
        .place(o)
        .catch((e) => {
          trading.status.textContent = e instanceof ApiError ? `Stock order refused: ${e.message}` : `Stock order not placed: ${e instanceof Error ? e.message : String(e)}`;
        })
        .finally(() => {
          button.disabled = false;
        });
    });
  }

  if (!perpRest || !perpCfg || !perpFeeds) {
    $('order-form').hidden = true;
    return;
  }
  // ------------------------------------------------------------ perpetual orders
  const status = $('order-status');
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
  const perpHistoryRows = (rest: PerpRequest) => rest<{ rows: Row[] }>('GET', 'orders/history', { limit: 50 }).then((r) => r.rows);
  const readPerpHistory = () => perpHistoryRows(perpRest).then((rows) => history.perp(rows)).catch(() => undefined);
  const refreshPerpHistory = coalesced(readPerpHistory, HISTORY_REFRESH_MS);
  const amendForm = $<HTMLFormElement>('amend-form');
  let amending: Row | undefined;
  const orders = ordersView(
    tickDecimals,
    (orderId) => {
      status.textContent = `Canceling order ${orderId}…`;
      perpRest<Row>('DELETE', `orders/${encodeURIComponent(orderId)}`)
        .then((o) => {
          upsertOrder(o);
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
  const upsertOrder = (o: Row) => {
    if (orders.upsert(o)) void refreshPerpHistory();
  };
  $('amend-close').addEventListener('click', () => {
    amendForm.hidden = true;
    amending = undefined;
  });
  amendForm.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const o = amending;
    if (!o) return;
    const text = textOf(amendForm);
    const price = text('price');
    const size = text('size');
    const bad = [['New price', price], ['New size', size]].find(([, v]) => !isPositiveDecimal(v));
    if (bad) {
      status.textContent = `Order ${o.orderId} not amended: ${bad[0]} must be a positive number, not ${bad[1] || 'empty'}.`;
      return;
    }
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
        upsertOrder(amended);
        amendForm.hidden = true;
        amending = undefined;
        status.textContent = `Order ${amended.orderId} amended, ${amended.status}: ${describeOrder(amended)}.`;
      })
      .catch(refused('Amendment', `Order ${o.orderId} not amended.`))
      .finally(() => {
        button.disabled = false;
      });
  });
  const positions = positionsView(tickDecimals);
  const account = (rest: PerpRequest) => rest<Row>('GET', 'account');
  const openOrders = (rest: PerpRequest) => rest<{ rows: Row[] }>('GET', 'orders/open', { limit: 100 }).then((r) => r.rows);
  const openPositions = (rest: PerpRequest) => rest<{ rows: Row[] }>('GET', 'positions', { limit: 100 }).then((r) => r.rows);
  const [a0, o0, p0] = await Promise.all([account(perpRest), openOrders(perpRest), openPositions(perpRest)]);
  balances.perp(a0);
  orders.snapshot(o0);
  positions.snapshot(p0);
  void readPerpHistory();
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
    onUpdate: (x) => upsertOrder(x),
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
  /** Shows the fields the chosen type takes. */
  const showFields = () => {
    const type = typeField.value as OrderType;
    const trigger = isTriggerType(type);
    const limit = triggeredType(type) === 'LIMIT';
    if (!trigger) closeField.checked = false;
    $('f-price-field').hidden = !limit;
    $('f-trigger-fields').hidden = !trigger;
    $('f-size-field').hidden = closeField.checked;
  };
  typeField.addEventListener('change', showFields);
  closeField.addEventListener('change', showFields);
  showFields();
  const form = $<HTMLFormElement>('order-form');
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const text = textOf(form);
    const type = text('type') as OrderType;
    const trigger = isTriggerType(type);
    const close = trigger && closeField.checked;
    // The form's checks before the server's: a negative, zero or malformed amount never leaves the page.
    const fields: Array<[string, string]> = [
      ...(close ? [] : [['Size', text('size')] as [string, string]]),
      ...(triggeredType(type) === 'LIMIT' ? [['Price', text('price')] as [string, string]] : []),
      ...(trigger ? [['Trigger price', text('triggerPrice')] as [string, string]] : []),
    ];
    const bad = fields.find(([, v]) => !isPositiveDecimal(v));
    if (bad) {
      status.textContent = `Not sent: ${bad[0]} must be a positive number (digits and a point, e.g. 0.001), not ${bad[1] || 'empty'}.`;
      return;
    }
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
        upsertOrder(placed);
        if (!['NEW', 'PARTIALLY_FILLED', 'UNTRIGGERED'].includes(placed.status)) void refreshPerpHistory();
        status.textContent = `Order ${placed.orderId} ${placed.status}: ${describeOrder(placed)}.`;
      })
      .catch(refused('Order', 'Order not placed.'))
      .finally(() => {
        button.disabled = false;
      });
  });
}

start().catch(report);
