/**
 * The CCXT class (`ccxt-tokex`, built to dist) against the whole embedded stack: the perp engine
 * with its demo market maker, and demo.json's perp trader (wallets[0], 10,000 USDC). Every value is
 * compared with what the venue's own API answers for the same thing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import ccxt from 'ccxt';
import TokexPerp from 'ccxt-tokex';
import { PerpClient } from '@tokex/sdk';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';
import { until } from '../support/poll.ts';
import { listRoleStatus } from '../../src/storage/role-status-store.ts';

const BTC = 'BTC/USD:USD';
const ETH = 'ETH/USD:USD';

/** A signed USD decimal string as micro-USD, exactly. */
function micro(value: string): bigint {
  const negative = value.startsWith('-');
  const [whole, fraction = ''] = value.replace('-', '').split('.');
  const units = BigInt(whole) * 1_000_000n + BigInt(fraction.padEnd(6, '0').slice(0, 6));
  return negative ? -units : units;
}
/** `x` down to the tick `tick`, as a number without float residue. */
function onTick(x: number, tick: number): number {
  const decimals = Math.max(0, -Math.floor(Math.log10(tick)));
  return Number((Math.floor(Number((x / tick).toFixed(6))) * tick).toFixed(decimals));
}

/** A CCXT number (6 decimals at most here) as micro-USD. */
const microOf = (n: number | undefined) => BigInt(Math.round((n as number) * 1e6));

describe('ccxt-tokex against the stack', () => {
  let t: TestStack;
  let ex: TokexPerp;
  let api: PerpClient;
  let creds: { apiKey: string; secret: string; walletAddress: string; privateKey: string };

  const make = (over: Record<string, unknown> = {}) =>
    new TokexPerp({ ...creds, rateLimit: 20, options: { baseUrl: t.perpBaseUrl }, ...over });

  /** A buy price that rests: well under the best bid, on the tick. */
  const restingBid = async (symbol: string): Promise<number> => {
    const book = await until(() => ex.fetchOrderBook(symbol, 5), (b) => b.bids.length > 0, 30_000);
    const tick = ex.market(symbol).precision.price as number;
    return Number((Math.floor((book.bids[0][0] as number) * 0.98 / tick) * tick).toFixed(2));
  };

  beforeAll(async () => {
    t = await startTestStack({ PERP_RATE_LIMIT_PER_MIN: '100000' });
    const demo = t.demo;
    creds = {
      apiKey: demo.perp!.keys!.trader.apiKey,
      secret: demo.perp!.keys!.trader.apiSecret,
      walletAddress: demo.wallets[0].address,
      privateKey: demo.wallets[0].privateKey,
    };
    api = t.perpTrader!;
    ex = make();
    await ex.loadMarkets();
    // The demo deposit is credited by the indexer: wait for it before reading balances.
    await until(() => api.get<any>('account'), (a) => Number(a.deposited) > 0, 30_000);
  }, 120_000);

  afterAll(async () => {
    await ex?.close();
    await t?.stop();
  });

  it('is a ccxt.Exchange with a truthful has', () => {
    expect(ex).toBeInstanceOf(ccxt.Exchange);
    expect(ex.id).toBe('tokex');
    for (const m of ['fetchTime', 'fetchMarkets', 'fetchCurrencies', 'fetchDepositsWithdrawals', 'fetchTicker', 'fetchTickers', 'fetchOrderBook', 'fetchOHLCV', 'fetchTrades', 'fetchFundingRate', 'fetchFundingRates', 'fetchFundingRateHistory', 'fetchBalance', 'createOrder', 'cancelOrder', 'cancelAllOrders', 'fetchOrder', 'fetchOpenOrders', 'fetchClosedOrders', 'fetchMyTrades', 'fetchPositions', 'setLeverage', 'setMarginMode', 'addMargin', 'reduceMargin', 'withdraw', 'fetchDeposits', 'fetchWithdrawals', 'fetchLedger']) {
      expect(ex.has[m], m).toBe(true);
    }
    for (const m of ['createOrders', 'editOrder', 'cancelOrders', 'fetchOrders', 'createStopLossOrder', 'createTakeProfitOrder', 'createTriggerOrder', 'createOrderWs', 'createOrdersWs', 'cancelOrderWs', 'editOrderWs']) {
      expect(ex.has[m], m).toBe(true);
    }
    expect(ex.has['spot']).toBe(false);
  });

  it('fetchTime answers the server clock', async () => {
    const before = Date.now();
    const ts = await ex.fetchTime();
    expect(ts).toBeGreaterThanOrEqual(before - 2_000);
    expect(ts).toBeLessThanOrEqual(Date.now() + 2_000);
  });

  it('fetchMarkets matches GET instruments', async () => {
    const instruments = await api.get<any[]>('instruments');
    const markets = await ex.fetchMarkets();
    expect(markets.map((m) => m!.id)).toEqual(instruments.map((i) => i.symbol));
    for (const i of instruments) {
      const m = markets.find((x) => x!.id === i.symbol)!;
      expect(m.symbol).toBe(`${i.base}/${i.quote}:${i.quote}`);
      expect(m).toMatchObject({ base: i.base, quote: i.quote, settle: i.quote, type: 'swap', swap: true, spot: false, linear: true, inverse: false, contract: true, contractSize: 1, active: true });
      expect(m.precision).toEqual({ amount: Number(i.lotSize), price: Number(i.tickSize), base: undefined, quote: undefined, cost: undefined });
      expect(m.limits.amount).toEqual({ min: Number(i.minSize), max: Number(i.maxSize) });
      expect(m.limits.leverage).toEqual({ min: 1, max: Number(i.maxLeverage) });
      expect(m.taker).toBe(Number(i.takerFeeRate));
      expect(m.maker).toBe(Number(i.makerFeeRate));
    }
    expect(ex.markets![BTC].id).toBe('BTC-USD');
  });

  it('currencies: USDC (the collateral, on the venue chain, no fee), USD and each base, read with the markets in one request', async () => {
    const instruments = await api.get<any[]>('instruments');
    const chain = String(t.demo.chainId);
    const bases = [...new Set(instruments.map((i) => i.base))];
    expect(Object.keys(ex.currencies).sort()).toEqual(['USDC', 'USD', ...bases].sort());
    const micro = 0.000001;
    const limits = { deposit: { min: micro, max: undefined }, withdraw: { min: micro, max: undefined } };
    expect(ex.currencies.USDC).toMatchObject({ id: 'USDC', code: 'USDC', name: 'USD Coin', type: 'crypto', active: true, deposit: true, withdraw: true, fee: 0, precision: micro, limits });
    expect(ex.currencies.USDC.networks).toEqual({ [chain]: { id: chain, network: chain, active: true, deposit: true, withdraw: true, fee: 0, precision: micro, limits, info: { chainId: chain } } });
    expect(ex.currencies.USD).toMatchObject({ id: 'USD', code: 'USD', type: 'fiat', deposit: false, withdraw: false, precision: micro, networks: {} });
    for (const i of instruments) {
      expect(ex.currencies[i.base], i.base).toMatchObject({ id: i.base, code: i.base, type: 'other', deposit: false, withdraw: false, precision: Number(i.lotSize), networks: {} });
    }
    // loadMarkets asks for the instruments once: fetchMarkets takes what fetchCurrencies read.
    const fresh = make();
    const paths: string[] = [];
    const original = fresh.fetch.bind(fresh);
    fresh.fetch = (async (url: string, ...rest: any[]) => {
      paths.push(new URL(url).pathname);
      return (original as any)(url, ...rest);
    }) as typeof fresh.fetch;
    await fresh.loadMarkets();
    expect(paths.filter((p) => p.endsWith('/instruments'))).toHaveLength(1);
    expect(Object.keys(fresh.markets!).sort()).toEqual(Object.keys(ex.markets!).sort());
    expect(fresh.currencies.USDC.networks[chain].id).toBe(chain);
  });

  it('fetchBalance equals GET account', async () => {
    const account = await api.get<any>('account');
    const balance = await ex.fetchBalance();
    expect(account.equity).toBe('10000');
    expect(balance.USDC).toEqual({ free: Number(account.freeCollateral), used: Number(account.equity) - Number(account.freeCollateral), total: Number(account.equity) });
    expect((balance.total as unknown as Record<string, number>).USDC).toBe(10_000);
    expect(balance.info).toEqual(account);
  });

  it('market data: ticker, book, candles, funding', async () => {
    const ticker = await until(() => ex.fetchTicker(BTC), (x) => x.markPrice !== undefined && x.bid !== undefined, 30_000);
    expect(ticker.symbol).toBe(BTC);
    expect(ticker.bid).toBe(Number(ticker.info.bestBid));
    expect(ticker.ask).toBe(Number(ticker.info.bestAsk));
    expect(typeof ticker.datetime).toBe('string');
    const tickers = await ex.fetchTickers();
    expect(Object.keys(tickers).sort()).toEqual(Object.keys(ex.markets!).sort());

    const book = await ex.fetchOrderBook(BTC, 3);
    const raw = await api.get<any>('depth', { symbol: 'BTC-USD', limit: 3 });
    expect(book.bids.length).toBeLessThanOrEqual(3);
    expect(book.bids[0][0] as number).toBeLessThan(book.asks[0][0] as number);
    expect(book.symbol).toBe(BTC);
    expect(raw.bids.length).toBe(book.bids.length);

    const candles = await until(() => ex.fetchOHLCV(BTC, '1m', undefined, 5, { type: 'mark' }), (c) => c.length > 0, 30_000);
    expect(candles[0]).toHaveLength(6);
    expect((candles[0][0] as number) % 60_000).toBe(0);
    expect(candles[0][2] as number).toBeGreaterThanOrEqual(candles[0][3] as number);

    const rate = await ex.fetchFundingRate(BTC);
    const rawTicker = (await api.get<any[]>('tickers', { symbol: 'BTC-USD' }))[0];
    expect(rate.symbol).toBe(BTC);
    expect(rate.fundingRate).toBe(Number(rawTicker.fundingRate));
    expect(rate.fundingTimestamp).toBe(rawTicker.nextFundingTime);
    expect(rate.interval).toBe('1h');
    const rates = await ex.fetchFundingRates([BTC, ETH]);
    expect(Object.keys(rates).sort()).toEqual([BTC, ETH]);
    const history = await ex.fetchFundingRateHistory(BTC);
    expect(Array.isArray(history)).toBe(true);
  });

  it('refuses before sending: off-lot size, limit without price, price off the tick, NaN', async () => {
    const local = make();
    await local.loadMarkets();
    let requests = 0;
    const original = local.fetch.bind(local);
    local.fetch = (async (...args: Parameters<typeof original>) => {
      requests++;
      return original(...args);
    }) as typeof local.fetch;
    await expect(local.createOrder(BTC, 'limit', 'buy', 0.00015, 50_000)).rejects.toBeInstanceOf(ccxt.InvalidOrder);
    await expect(local.createOrder(BTC, 'limit', 'buy', 0.01, undefined)).rejects.toBeInstanceOf(ccxt.ArgumentsRequired);
    await expect(local.createOrder(BTC, 'limit', 'buy', 0.01, 50_000.05)).rejects.toBeInstanceOf(ccxt.InvalidOrder);
    await expect(local.createOrder(BTC, 'market', 'buy', 0.0001)).rejects.toBeInstanceOf(ccxt.InvalidOrder); // below minSize
    // A price computed from a missing field (undefined × 0.97) is NaN: an InvalidOrder, not a SyntaxError from BigInt.
    await expect(local.createOrder(BTC, 'limit', 'buy', 0.01, Number.NaN)).rejects.toBeInstanceOf(ccxt.InvalidOrder);
    await expect(local.createOrder(BTC, 'limit', 'buy', Number.NaN, 50_000)).rejects.toBeInstanceOf(ccxt.InvalidOrder);
    expect(requests).toBe(0);
  });

  it('venue refusals map to CCXT errors: margin, permission', async () => {
    const price = await restingBid(BTC);
    // 100 BTC at the default 10× needs far more than 10,000 USD of margin: 51001.
    await expect(ex.createOrder(BTC, 'limit', 'buy', 100, price)).rejects.toBeInstanceOf(ccxt.InsufficientFunds);
    const readOnly = await PerpClient.createApiKey(t.perpBaseUrl!, privateKeyToAccount(creds.privateKey as `0x${string}`), { label: 'ccxt read', permissions: ['READ'], chainId: t.demo.chainId });
    const reader = make({ apiKey: readOnly.apiKey, secret: readOnly.apiSecret });
    expect((await reader.fetchBalance()).info.account.toLowerCase()).toBe(creds.walletAddress.toLowerCase());
    await expect(reader.withdraw('USDC', 1, creds.walletAddress)).rejects.toBeInstanceOf(ccxt.PermissionDenied);
    await expect(reader.createOrder(BTC, 'limit', 'buy', 0.01, price)).rejects.toBeInstanceOf(ccxt.PermissionDenied);
  });

  it('reads the chain id from the venue once; another chain is an AuthenticationError', async () => {
    const fresh = make();
    expect(fresh.options.detectedChainId).toBeUndefined();
    await fresh.fetchBalance();
    expect(fresh.options.detectedChainId).toBe(String(t.demo.chainId));
    const noWallet = new TokexPerp({ apiKey: creds.apiKey, secret: creds.secret, options: { baseUrl: t.perpBaseUrl } });
    expect((await noWallet.fetchBalance()).info.account.toLowerCase()).toBe(creds.walletAddress.toLowerCase());
    await expect(noWallet.createOrder(BTC, 'limit', 'buy', 0.01, 1000)).rejects.toBeInstanceOf(ccxt.AuthenticationError);
    await expect(make({ options: { baseUrl: t.perpBaseUrl, chainId: 1 } }).fetchBalance()).rejects.toBeInstanceOf(ccxt.AuthenticationError);
  });

  it('a bad secret is an AuthenticationError; an unknown order is OrderNotFound', async () => {
    const bad = make({ secret: 'not-the-secret' });
    await expect(bad.fetchMarkets()).rejects.toBeInstanceOf(ccxt.AuthenticationError);
    await expect(ex.cancelOrder('999999999')).rejects.toBeInstanceOf(ccxt.OrderNotFound);
    await expect(ex.fetchOrder('999999999', BTC)).rejects.toBeInstanceOf(ccxt.OrderNotFound);
  });

  it('limit order: resting → open → cancel → canceled', async () => {
    const price = await restingBid(BTC);
    const order = await ex.createOrder(BTC, 'limit', 'buy', 0.01, price, { clientOrderId: 'ccxt-rest-1' });
    expect(order).toMatchObject({ symbol: BTC, type: 'limit', side: 'buy', status: 'open', amount: 0.01, filled: 0, remaining: 0.01, price, clientOrderId: 'ccxt-rest-1', timeInForce: 'GTC', postOnly: false, reduceOnly: false });
    expect(order.id).toMatch(/^\d+$/);
    expect(order.datetime).toBe(new Date(order.timestamp!).toISOString());

    expect((await ex.fetchOrder(order.id!)).status).toBe('open');
    const open = await ex.fetchOpenOrders(BTC);
    const mine = open.find((o) => o.id === order.id)!;
    expect(mine.status).toBe('open');
    expect(mine.price).toBe(price);

    const canceled = await ex.cancelOrder(order.id!, BTC);
    expect(canceled.status).toBe('canceled');
    expect(canceled.id).toBe(order.id);
    expect((await ex.fetchOpenOrders(BTC)).some((o) => o.id === order.id)).toBe(false);
    const fetched = await until(() => ex.fetchOrder(order.id!, BTC).catch(() => undefined), (o) => o?.status === 'canceled', 20_000);
    expect(fetched!.amount).toBe(0.01);
    // Cancelling a done order again is refused as not open.
    await expect(ex.cancelOrder(order.id!)).rejects.toBeInstanceOf(ccxt.OrderNotFound);
  });

  it('postOnly, cancelAllOrders and fetchClosedOrders', async () => {
    const price = await restingBid(BTC);
    const a = await ex.createOrder(BTC, 'limit', 'buy', 0.001, price, { postOnly: true });
    const b = await ex.createOrder(BTC, 'limit', 'buy', 0.002, price);
    expect(a.timeInForce).toBe('PO');
    expect(a.postOnly).toBe(true);
    const canceled = await ex.cancelAllOrders(BTC);
    expect(canceled.map((o) => o.id).sort()).toEqual([a.id, b.id].sort());
    expect(canceled.every((o) => o.status === 'canceled')).toBe(true);
    expect(await ex.fetchOpenOrders(BTC)).toEqual([]);
    const closed = await until(() => ex.fetchClosedOrders(BTC), (os) => [a.id, b.id].every((id) => os.some((o) => o.id === id && o.status === 'canceled')), 20_000);
    expect(closed.every((o) => ['closed', 'canceled', 'expired'].includes(o.status!))).toBe(true);

    // Without a symbol: every open order of the account, on every market.
    const c = await ex.createOrder(BTC, 'limit', 'buy', 0.001, price);
    const d = await ex.createOrder(ETH, 'limit', 'buy', 0.01, await restingBid(ETH));
    const all = await ex.cancelAllOrders();
    expect(all.map((o) => [o.id, o.symbol, o.status]).sort()).toEqual([[c.id, BTC, 'canceled'], [d.id, ETH, 'canceled']].sort());
    expect(await ex.fetchOpenOrders()).toEqual([]);
    expect(await ex.cancelAllOrders()).toEqual([]);
  });

  it('market order fills: fetchMyTrades, fetchPositions, fetchTrades, setLeverage', async () => {
    await until(() => ex.fetchTicker(BTC), (x) => x.ask !== undefined && x.markPrice !== undefined, 30_000);
    const order = await ex.createOrder(BTC, 'market', 'buy', 0.01);
    expect(order).toMatchObject({ symbol: BTC, type: 'market', side: 'buy', status: 'closed', amount: 0.01, filled: 0.01, remaining: 0 });
    expect(order.average).toBeGreaterThan(0);
    expect(order.trades.length).toBeGreaterThan(0);
    expect(order.trades.reduce((s, x) => s + x.amount!, 0)).toBeCloseTo(0.01, 10);
    expect(order.fee!.cost).toBeCloseTo(order.trades.reduce((s, x) => s + x.fee!.cost!, 0), 6);

    const trades = await until(() => ex.fetchMyTrades(BTC), (ts) => ts.filter((x) => x.order === order.id).reduce((s, x) => s + x.amount!, 0) >= 0.01 - 1e-12, 20_000);
    const rawTrades = await api.get<any>('trades', { symbol: 'BTC-USD', orderId: order.id });
    const mine = trades.filter((x) => x.order === order.id);
    expect(mine.map((x) => x.id).sort()).toEqual(rawTrades.rows.map((r: any) => r.tradeId).sort());
    for (const x of mine) {
      const r = rawTrades.rows.find((y: any) => y.tradeId === x.id);
      expect(x).toMatchObject({ symbol: BTC, side: 'buy', takerOrMaker: 'taker', price: Number(r.price), amount: Number(r.size), cost: Number(r.notional), timestamp: r.ts });
      expect(x.fee).toEqual({ cost: Number(r.fee), currency: 'USDC' });
    }

    const asked = Date.now();
    const positions = await ex.fetchPositions([BTC]);
    const answered = Date.now();
    const raw = (await api.get<any>('positions', { symbol: 'BTC-USD' })).rows[0];
    expect(positions).toHaveLength(1);
    // The engine's state when the venue answered: the time of the answer.
    expect(positions[0].timestamp).toBeGreaterThanOrEqual(asked);
    expect(positions[0].timestamp).toBeLessThanOrEqual(answered);
    expect(positions[0].datetime).toBe(new Date(positions[0].timestamp!).toISOString());
    // Of the notional, at 8 places; a cross position has no margin ratio of its own (the account's).
    expect(positions[0].initialMarginPercentage).toBe(Number(ccxt.Precise.stringDiv(raw.margin, raw.notional, 8)));
    expect(positions[0].maintenanceMarginPercentage).toBe(Number(ccxt.Precise.stringDiv(raw.maintenanceMargin, raw.notional, 8)));
    expect(positions[0].marginRatio).toBeUndefined();
    expect(positions[0]).toMatchObject({ symbol: BTC, side: 'long', contracts: 0.01, contractSize: 1, entryPrice: Number(raw.entryPrice), marginMode: 'cross', leverage: raw.leverage });

    // The public tape shows the same fills, with the taker's side.
    const tape = await until(() => ex.fetchTrades(BTC, undefined, 100), (ts) => mine.every((m) => ts.some((x) => x.id === m.id)), 20_000);
    for (const m of mine) expect(tape.find((x) => x.id === m.id)).toMatchObject({ side: 'buy', price: m.price, amount: m.amount, symbol: BTC });

    const lev = (await ex.setLeverage(5, BTC)) as any;
    expect(lev.leverage).toBe(5);
    expect((await ex.fetchPositions([BTC]))[0].leverage).toBe(5);
    await expect(ex.setLeverage(500, BTC)).rejects.toBeInstanceOf(ccxt.BadRequest);
  });

  it('watchOrderBook follows the depth stream: a resting order appears and goes', async () => {
    expect(ex.has['ws']).toBe(true);
    const price = await restingBid(BTC);
    const first = await ex.watchOrderBook(BTC);
    expect(first.symbol).toBe(BTC);
    expect(first.bids.length).toBeGreaterThan(0);
    expect(first.bids[0][0] as number).toBeLessThan(first.asks[0][0] as number);
    expect(typeof first.nonce).toBe('number');
    const levelAt = (b: { bids: any[] }) => b.bids.find((l) => l[0] === price);
    expect(levelAt(first)).toBeUndefined();

    const order = await ex.createOrder(BTC, 'limit', 'buy', 0.0123, price);
    const withOrder = await until(() => ex.watchOrderBook(BTC), (b) => levelAt(b) !== undefined, 20_000);
    expect(levelAt(withOrder)).toEqual([price, 0.0123]);
    await ex.cancelOrder(order.id!);
    const without = await until(() => ex.watchOrderBook(BTC), (b) => levelAt(b) === undefined, 20_000);
    // Bids stay sorted best first after the deltas.
    const bidPrices = without.bids.map((l) => l[0] as number);
    expect(bidPrices).toEqual([...bidPrices].sort((a, b) => b - a));
  });

  it('watchTrades pushes the fills of the public tape', async () => {
    await until(() => ex.fetchTicker(BTC), (x) => x.bid !== undefined && x.markPrice !== undefined, 30_000);
    // Subscribed before the order, so its fills come as updates.
    await ex.watchTrades(BTC);
    const order = await ex.createOrder(BTC, 'market', 'sell', 0.002, undefined, { reduceOnly: true });
    expect(order.status).toBe('closed');
    const seen = new Map<string, any>();
    const want = order.trades.map((x) => x.id as string);
    expect(want.length).toBeGreaterThan(0);
    await until(async () => {
      for (const x of await ex.watchTrades(BTC)) seen.set(x.id!, x);
      return seen;
    }, (m) => want.every((id) => m.has(id)), 20_000);
    for (const f of order.trades) {
      expect(seen.get(f.id!)).toMatchObject({ id: f.id, symbol: BTC, side: 'sell', price: f.price, amount: f.amount, timestamp: f.timestamp });
    }
  });

  /**
   * Awaits `pending` (a watch called before the action it should see), then watches again until
   * `done` holds. Each watch is called straight after the last one answers, with no timer in
   * between, so no frame can arrive unseen between two watches.
   */
  async function watchUntil<T>(pending: Promise<T>, watch: () => Promise<T>, done: (value: T) => boolean, ms = 20_000): Promise<T> {
    const deadline = Date.now() + ms;
    let next = pending;
    for (;;) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('no matching update in time')), Math.max(1, deadline - Date.now()))));
      try {
        const value = await Promise.race([next, timeout]);
        if (done(value)) return value;
      } finally {
        clearTimeout(timer);
      }
      next = watch();
    }
  }

  it('watchOrders follows the private orders stream after auth: a resting order opens, then is canceled', async () => {
    expect([ex.has['watchOrders'], ex.has['watchPositions']]).toEqual([true, true]);
    const w = make();
    try {
      await w.loadMarkets();
      const price = await restingBid(BTC);
      // The snapshot: the key's open orders, CCXT orders.
      const snapshot = await w.watchOrders();
      const open = await w.fetchOpenOrders();
      expect(snapshot.map((o) => o.id).sort()).toEqual(open.map((o) => o.id).sort());

      const next = w.watchOrders(BTC);
      const order = await w.createOrder(BTC, 'limit', 'buy', 0.0042, price, { clientOrderId: 'ccxt-watch-1' });
      const opened = await watchUntil(next, () => w.watchOrders(BTC), (rows) => rows.some((o) => o.id === order.id));
      expect(opened.find((o) => o.id === order.id)).toMatchObject({ symbol: BTC, type: 'limit', side: 'buy', status: 'open', price, amount: 0.0042, filled: 0, clientOrderId: 'ccxt-watch-1' });

      const canceling = w.watchOrders(BTC);
      await w.cancelOrder(order.id!, BTC);
      const rows = await watchUntil(canceling, () => w.watchOrders(BTC), (r) => r.some((o) => o.id === order.id && o.status === 'canceled'));
      // The streamed order is the REST one: the same CCXT structure as fetchOrder answers.
      const fetched = await w.fetchOrder(order.id!, BTC);
      const streamed = rows.find((o) => o.id === order.id)!;
      expect(streamed).toMatchObject({ status: 'canceled', amount: 0.0042, filled: 0 });
      for (const k of ['status', 'amount', 'filled', 'remaining', 'price', 'clientOrderId', 'timeInForce'] as const) expect(streamed[k], k).toEqual(fetched[k]);
    } finally {
      await w.close();
    }
  });

  it('watchPositions follows the private positions stream: a fill grows the position, a reduce-only close ends it at 0', async () => {
    const w = make();
    try {
      await w.loadMarkets();
      await until(() => w.fetchTicker(ETH), (x) => x.ask !== undefined && x.bid !== undefined && x.markPrice !== undefined, 30_000);
      const before = (await w.fetchPositions([ETH])).find((p) => p.marginMode === 'cross')?.contracts ?? 0;
      await w.watchPositions([ETH]); // the snapshot, at once
      const grown = w.watchPositions([ETH]);
      const buy = await w.createOrder(ETH, 'market', 'buy', 0.05);
      expect(buy.status).toBe('closed');
      const want = Number((before + 0.05).toFixed(8));
      const up = await watchUntil(grown, () => w.watchPositions([ETH]), (ps) => ps.some((p) => p.symbol === ETH && Math.abs((p.contracts ?? 0) - want) < 1e-9));
      const raw = (await api.get<any>('positions', { symbol: 'ETH-USD' })).rows.find((r: any) => r.marginMode === 'CROSS' || r.marginMode === 'cross');
      expect(up.find((p) => p.symbol === ETH)).toMatchObject({ side: 'long', contracts: want, entryPrice: Number(raw.entryPrice) });

      const closing = w.watchPositions([ETH]);
      await w.createOrder(ETH, 'market', 'sell', want, undefined, { reduceOnly: true });
      const gone = await watchUntil(closing, () => w.watchPositions([ETH]), (ps) => ps.some((p) => p.symbol === ETH && p.contracts === 0));
      expect(gone.find((p) => p.symbol === ETH)?.contracts).toBe(0);
    } finally {
      await w.close();
    }
  });

  it('a private watch with a bad secret fails with AuthenticationError', async () => {
    const bad = make({ secret: 'not-the-secret' });
    try {
      await expect(bad.watchOrders()).rejects.toBeInstanceOf(ccxt.AuthenticationError);
    } finally {
      await bad.close();
    }
  });

  it('setMarginMode isolated, addMargin and reduceMargin', async () => {
    await ex.setMarginMode('isolated', ETH, { leverage: 10 });
    await until(() => ex.fetchTicker(ETH), (x) => x.ask !== undefined && x.markPrice !== undefined, 30_000);
    const order = await ex.createOrder(ETH, 'market', 'buy', 0.1);
    expect(order.status).toBe('closed');
    const before = (await ex.fetchPositions([ETH]))[0];
    expect(before).toMatchObject({ marginMode: 'isolated', side: 'long', contracts: 0.1 });
    const added = await ex.addMargin(ETH, 5);
    expect(added).toMatchObject({ symbol: ETH, type: 'add', amount: 5, marginMode: 'isolated', code: 'USDC', status: 'ok' });
    expect(added.total).toBeCloseTo((before.initialMargin as number) + 5, 6);
    const reduced = await ex.reduceMargin(ETH, 2);
    expect(reduced).toMatchObject({ type: 'reduce', amount: 2 });
    expect(reduced.total).toBeCloseTo((before.initialMargin as number) + 3, 6);
  });

  it('withdraw (signed by the wallet) → fetchWithdrawals; fetchDeposits and fetchLedger', async () => {
    const w = await ex.withdraw('USDC', 1.5, creds.walletAddress, undefined, { clientWithdrawalId: 'ccxt-w-1' });
    expect(w).toMatchObject({ type: 'withdrawal', amount: 1.5, currency: 'USDC' });
    expect(w.id).toMatch(/^0x[0-9a-f]{64}$/);
    expect(w.info.duplicate).toBe(false);
    // The same client id again (signed anew): the same withdrawal, nothing reserved twice.
    const again = await ex.withdraw('USDC', 1.5, creds.walletAddress, undefined, { clientWithdrawalId: 'ccxt-w-1' });
    expect(again).toMatchObject({ id: w.id, amount: 1.5 });
    expect(again.info.duplicate).toBe(true);
    await expect(ex.withdraw('USDC', 1, '0x000000000000000000000000000000000000dEaD')).rejects.toBeInstanceOf(ccxt.InvalidAddress);
    // Only the key's wallet signs its withdrawals: another key (a session key, say) is refused before signing; no key at all before any request.
    const strangerKey = generatePrivateKey();
    const stranger = make({ walletAddress: undefined, privateKey: strangerKey });
    await expect(stranger.withdraw('USDC', 1, privateKeyToAccount(strangerKey).address, undefined, { clientWithdrawalId: 'ccxt-w-stranger' })).rejects.toBeInstanceOf(ccxt.AuthenticationError);
    await expect(make({ privateKey: undefined }).withdraw('USDC', 1, creds.walletAddress, undefined, { clientWithdrawalId: 'ccxt-w-keyless' })).rejects.toBeInstanceOf(ccxt.AuthenticationError);
    const mine = (await api.listWithdrawals({ limit: 100 })).rows.map((r) => r.clientWithdrawalId);
    expect(mine.filter((id) => id === 'ccxt-w-1')).toHaveLength(1);
    expect(mine).not.toContain('ccxt-w-stranger');
    expect(mine).not.toContain('ccxt-w-keyless');
    const list = await until(() => ex.fetchWithdrawals('USDC'), (ws) => ws.some((x) => x.id === w.id && x.status === 'ok'), 30_000);
    const done = list.find((x) => x.id === w.id)!;
    expect(done.txid).toMatch(/^0x[0-9a-f]{64}$/);
    expect(done.address!.toLowerCase()).toBe(creds.walletAddress.toLowerCase());

    const deposits = await ex.fetchDeposits('USDC');
    const rawDeposits = await api.get<any>('account/deposits');
    expect(deposits.map((d) => d.id).sort()).toEqual(rawDeposits.rows.map((r: any) => r.id).sort());
    expect(deposits.some((d) => d.amount === 10_000 && d.status === 'ok' && d.type === 'deposit')).toBe(true);
    // The venue's chain (the local anvil's id as its code), no fee; a deposit's one time is its block's.
    const chain = String(t.demo.chainId);
    for (const d of deposits) {
      expect(d).toMatchObject({ network: chain, fee: { cost: 0, currency: 'USDC' }, updated: d.timestamp, currency: 'USDC' });
      expect(d.timestamp).toBe(d.info.ts);
    }
    for (const x of list) {
      expect(x).toMatchObject({ network: chain, fee: { cost: 0, currency: 'USDC' }, updated: x.info.updatedAt, timestamp: x.info.createdAt });
      expect(x.updated!).toBeGreaterThanOrEqual(x.timestamp!);
    }
    const both = await ex.fetchDepositsWithdrawals('USDC');
    expect(both.map((x) => x.id).sort()).toEqual([...deposits, ...list].map((x) => x.id).sort());
    expect(both.map((x) => x.timestamp)).toEqual([...both.map((x) => x.timestamp!)].sort((a, b) => a - b));
    // Another code CCXT knows here (a market's base): nothing of it is ever held, so nothing moved.
    expect(await ex.fetchLedger('BTC')).toEqual([]);
    expect(await ex.fetchDeposits('ETH')).toEqual([]);
    expect(await ex.fetchWithdrawals('BTC')).toEqual([]);
    expect(await ex.fetchDepositsWithdrawals('ETH')).toEqual([]);

    const ledger = await ex.fetchLedger('USDC');
    expect(ledger.some((e) => e.info.type === 'DEPOSIT' && e.amount === 10_000 && e.direction === 'in')).toBe(true);
    expect(ledger.some((e) => e.info.type === 'WITHDRAWAL' && e.amount === 1.5 && e.direction === 'out')).toBe(true);
    const rawFees = (await api.get<any>('account/transactions', { type: 'FEE', symbol: 'BTC-USD', limit: 100 })).rows;
    expect(rawFees.length).toBeGreaterThan(0);
    for (const r of rawFees) {
      expect(ledger.find((e) => e.id === r.id)).toMatchObject({ type: 'fee', direction: 'out', amount: -Number(r.amount), currency: 'USDC', referenceId: r.ref, timestamp: r.ts });
    }
  });

  it('ledger: account, fee and before/after on every entry, chained; the newest after is the balance with the isolated margins', async () => {
    const wallet = creds.walletAddress.toLowerCase();
    // The movements so far, once the projection has written them all: the sum of all of them is the
    // balance plus the isolated margins (margin moved into a position is not a movement).
    await until(
      async () => {
        const [account, positions, newest] = await Promise.all([api.get<any>('account'), api.get<any>('positions'), api.get<any>('account/transactions', { limit: 1 })]);
        const isolated = positions.rows.filter((p: any) => p.marginMode === 'isolated').reduce((s: bigint, p: any) => s + micro(p.margin), 0n);
        return { held: micro(account.balance) + isolated, after: micro(newest.rows[0].balanceAfter) };
      },
      (x) => x.held === x.after,
      20_000,
    );
    // A fixed end, and the lists below read once the projection has written every movement up to
    // it: the projector's published status says it had caught up (lag 0) at a look made 500 ms
    // past that end (the margin covers a command stamped before it and applied a moment after).
    const untilTs = Date.now();
    await until(
      () => listRoleStatus(t.stack.db),
      (rows) => rows.some((r) => r.role === 'projector' && r.publishedAt > untilTs + 500 && (r.detail as { lag?: number }).lag === 0),
      30_000,
    );
    const ledger = await ex.fetchLedger('USDC', undefined, 100, { until: untilTs });
    expect(ledger.length).toBeGreaterThan(5);
    for (const e of ledger) {
      expect(e.account, e.id).toBe(wallet);
      expect(e.fee, e.id).toEqual({ cost: 0, currency: 'USDC' });
      expect(microOf(e.after) - microOf(e.before), e.id).toBe((e.direction === 'in' ? 1n : -1n) * microOf(e.amount));
      expect(microOf(e.after), e.id).toBe(micro(e.info.balanceAfter));
      expect(['trade', 'transaction', 'margin', 'cashback', 'referral', 'transfer', 'fee']).toContain(e.type);
    }
    // Oldest first, each entry's before is the previous one's after.
    for (let i = 1; i < ledger.length; i++) expect(ledger[i].before, ledger[i].id).toBe(ledger[i - 1].after);
    expect(ledger.find((e) => e.info.type === 'DEPOSIT')).toMatchObject({ before: 0, amount: 10_000, after: 10_000, direction: 'in', type: 'transaction' });
    // USD is the collateral too; the venue's rows chain the same way whatever the filter.
    expect((await ex.fetchLedger('USD', undefined, 100, { until: untilTs })).map((e) => e.id)).toEqual(ledger.map((e) => e.id));
    const raw = (await api.get<any>('account/transactions', { limit: 100, endTime: untilTs })).rows;
    for (let i = 0; i < raw.length - 1; i++) expect(micro(raw[i].balanceAfter), raw[i].id).toBe(micro(raw[i + 1].balanceAfter) + micro(raw[i].amount));
    const fees = (await api.get<any>('account/transactions', { type: 'FEE', limit: 100, endTime: untilTs })).rows;
    expect(fees.length).toBeGreaterThan(0);
    for (const f of fees) {
      expect(f.account).toBe(wallet);
      const same = raw.find((r: any) => r.id === f.id);
      if (same !== undefined) expect(f.balanceAfter, f.id).toBe(same.balanceAfter);
    }
  });

  it('trigger orders: stopLossPrice, takeProfitPrice, triggerPrice with a direction, closePosition, triggerPriceType; one already reached is refused', async () => {
    const mark = (await until(() => ex.fetchTicker(BTC), (x) => x.markPrice !== undefined, 30_000)).markPrice!;
    const tick = ex.market(BTC).precision.price as number;
    const below = onTick(mark * 0.8, tick);
    const above = onTick(mark * 1.2, tick);
    expect((await ex.fetchPositions([BTC]))[0]).toMatchObject({ side: 'long' });

    const sl = await ex.createOrder(BTC, 'market', 'sell', 0.001, undefined, { stopLossPrice: below, reduceOnly: true, clientOrderId: 'ccxt-sl-1' });
    expect(sl).toMatchObject({ symbol: BTC, type: 'stop_market', side: 'sell', status: 'open', amount: 0.001, filled: 0, triggerPrice: below, stopLossPrice: below, reduceOnly: true, clientOrderId: 'ccxt-sl-1' });
    expect(sl.takeProfitPrice).toBeUndefined();
    expect(sl.info).toMatchObject({ type: 'STOP_MARKET', status: 'UNTRIGGERED', triggerPrice: String(below), triggerBy: 'MARK', triggeredAt: null, closePosition: false });
    // GET orders/{id}: the same order in any state; the open list holds it too.
    const fetched = await ex.fetchOrder(sl.id!, BTC);
    expect(fetched).toMatchObject({ id: sl.id, status: 'open', type: 'stop_market', triggerPrice: below, stopLossPrice: below });
    expect((await ex.fetchOpenOrders(BTC)).find((o) => o.id === sl.id)).toMatchObject({ status: 'open', triggerPrice: below });
    expect((await ex.fetchOrder('', BTC, { clientOrderId: 'ccxt-sl-1' })).id).toBe(sl.id);

    const tp = await ex.createOrder(BTC, 'limit', 'sell', 0.002, above, { takeProfitPrice: above, reduceOnly: true, triggerPriceType: 'last' });
    expect(tp).toMatchObject({ type: 'take_profit_limit', price: above, amount: 0.002, triggerPrice: above, takeProfitPrice: above, status: 'open' });
    expect(tp.info).toMatchObject({ type: 'TAKE_PROFIT_LIMIT', triggerBy: 'LAST', status: 'UNTRIGGERED' });

    // triggerPrice alone: a stop (Binance's mapping); with triggerDirection the type that fires on that move.
    const rising = await ex.createOrder(BTC, 'market', 'sell', 0.001, undefined, { triggerPrice: above, triggerDirection: 'above', reduceOnly: true, workingType: 'MARK_PRICE' });
    expect(rising.info).toMatchObject({ type: 'TAKE_PROFIT_MARKET', triggerPrice: String(above), triggerBy: 'MARK' });
    const close = await ex.createOrder(BTC, 'market', 'sell', 0, undefined, { stopLossPrice: below, closePosition: true });
    expect(close).toMatchObject({ type: 'stop_market', reduceOnly: true, stopLossPrice: below, status: 'open' });
    expect(close.info).toMatchObject({ closePosition: true, size: '0' });

    // A BUY stop fires at or above its trigger: one under the mark is already reached.
    await expect(ex.createOrder(BTC, 'market', 'buy', 0.001, undefined, { triggerPrice: below })).rejects.toBeInstanceOf(ccxt.OrderImmediatelyFillable);
    // Refused before any request: the index price is not watched; a trigger off the tick; two kinds at once.
    await expect(ex.createOrder(BTC, 'market', 'sell', 0.001, undefined, { stopLossPrice: below, triggerPriceType: 'index' })).rejects.toBeInstanceOf(ccxt.InvalidOrder);
    await expect(ex.createOrder(BTC, 'market', 'sell', 0.001, undefined, { stopLossPrice: below + tick / 2 })).rejects.toBeInstanceOf(ccxt.InvalidOrder);
    await expect(ex.createOrder(BTC, 'market', 'sell', 0.001, undefined, { stopLossPrice: below, takeProfitPrice: above })).rejects.toBeInstanceOf(ccxt.InvalidOrder);
    await expect(ex.createOrder(BTC, 'market', 'sell', 0.001, undefined, { closePosition: true })).rejects.toBeInstanceOf(ccxt.InvalidOrder);

    const canceled = await ex.cancelOrders([sl.id!, tp.id!, rising.id!, close.id!], BTC);
    expect(canceled.map((o) => [o.id, o.status]).sort()).toEqual([sl.id, tp.id, rising.id, close.id].map((id) => [id, 'canceled']).sort());
    const done = await until(() => ex.fetchOrder(sl.id!, BTC), (o) => o.status === 'canceled', 20_000);
    expect(done).toMatchObject({ triggerPrice: below, filled: 0 });
  });

  it('createOrders (one batch, each answered), editOrder (same id), cancelOrders with an unknown id, fetchOrders', async () => {
    const price = await restingBid(BTC);
    const tick = ex.market(BTC).precision.price as number;
    const placed = await ex.createOrders([
      { symbol: BTC, type: 'limit', side: 'buy', amount: 0.001, price, params: { clientOrderId: 'ccxt-batch-1' } },
      { symbol: ETH, type: 'limit', side: 'buy', amount: 0.01, price: await restingBid(ETH) },
      // 100 BTC at 5× is far beyond the account's margin: refused on its own (51001).
      { symbol: BTC, type: 'limit', side: 'buy', amount: 100, price, params: { clientOrderId: 'ccxt-batch-3' } },
    ]);
    expect(placed.map((o) => [o.symbol, o.status])).toEqual([[BTC, 'open'], [ETH, 'open'], [BTC, 'rejected']]);
    expect(placed[0]).toMatchObject({ clientOrderId: 'ccxt-batch-1', amount: 0.001, price });
    expect(placed[2]).toMatchObject({ clientOrderId: 'ccxt-batch-3', id: undefined });
    expect(placed[2].info).toMatchObject({ code: 51001 });
    // A batch over 20 or an order off the lot is refused before any request.
    await expect(ex.createOrders(Array.from({ length: 21 }, () => ({ symbol: BTC, type: 'limit' as const, side: 'buy' as const, amount: 0.001, price })))).rejects.toBeInstanceOf(ccxt.BadRequest);
    await expect(ex.createOrders([{ symbol: BTC, type: 'limit', side: 'buy', amount: 0.00015, price }])).rejects.toBeInstanceOf(ccxt.InvalidOrder);

    const lower = onTick(price - 10 * tick, tick);
    const edited = await ex.editOrder(placed[0].id!, BTC, 'limit', 'buy', 0.003, lower);
    expect(edited).toMatchObject({ id: placed[0].id, status: 'open', amount: 0.003, price: lower, clientOrderId: 'ccxt-batch-1' });
    expect(await ex.fetchOrder(placed[0].id!, BTC)).toMatchObject({ amount: 0.003, price: lower, status: 'open' });
    const smaller = await ex.editOrder(placed[0].id!, BTC, 'limit', 'buy', 0.002);
    expect(smaller).toMatchObject({ id: placed[0].id, amount: 0.002, price: lower });
    await expect(ex.editOrder(placed[0].id!, BTC, 'limit', 'buy', undefined, lower + tick / 2)).rejects.toBeInstanceOf(ccxt.InvalidOrder);
    await expect(ex.editOrder(placed[0].id!, BTC, 'limit', 'buy')).rejects.toBeInstanceOf(ccxt.ArgumentsRequired);
    await expect(ex.editOrder('999999999', BTC, 'limit', 'buy', 0.002)).rejects.toBeInstanceOf(ccxt.OrderNotFound);
    // fetchOrder of an order on another symbol than the one named: not found there.
    await expect(ex.fetchOrder(placed[1].id!, BTC)).rejects.toBeInstanceOf(ccxt.OrderNotFound);

    const canceled = await ex.cancelOrders([placed[0].id!, placed[1].id!, '999999999']);
    expect(canceled.map((o) => [o.id, o.status])).toEqual([[placed[0].id, 'canceled'], [placed[1].id, 'canceled'], ['999999999', 'rejected']]);
    expect(canceled[2].info).toMatchObject({ orderId: '999999999' });
    const all = await until(() => ex.fetchOrders(BTC), (os) => os.some((o) => o.id === placed[0].id && o.status === 'canceled'), 20_000);
    expect(all.every((o) => o.symbol === BTC)).toBe(true);
    expect(all.find((o) => o.id === placed[0].id)).toMatchObject({ amount: 0.002, price: lower, status: 'canceled' });
  });

  it('order entry over the stream: createOrderWs, editOrderWs, cancelOrderWs, createOrdersWs; a refusal is the REST error', async () => {
    const w = make();
    try {
      await w.loadMarkets();
      const price = await restingBid(BTC);
      const tick = w.market(BTC).precision.price as number;
      const placed = await w.createOrderWs(BTC, 'limit', 'buy', 0.001, price, { clientOrderId: 'ccxt-ws-1' });
      expect(placed).toMatchObject({ symbol: BTC, status: 'open', amount: 0.001, price, clientOrderId: 'ccxt-ws-1' });
      // The REST view of the same order.
      expect(await w.fetchOrder(placed.id!, BTC)).toMatchObject({ id: placed.id, status: 'open', amount: 0.001, price });
      const lower = onTick(price - 5 * tick, tick);
      const edited = await w.editOrderWs(placed.id!, BTC, 'limit', 'buy', 0.002, lower);
      expect(edited).toMatchObject({ id: placed.id, amount: 0.002, price: lower, status: 'open' });
      const canceled = await w.cancelOrderWs(placed.id!, BTC);
      expect(canceled).toMatchObject({ id: placed.id, status: 'canceled' });
      await expect(w.cancelOrderWs(placed.id!, BTC)).rejects.toBeInstanceOf(ccxt.OrderNotFound);
      await expect(w.createOrderWs(BTC, 'limit', 'buy', 100, price)).rejects.toBeInstanceOf(ccxt.InsufficientFunds);
      const batch = await w.createOrdersWs([
        { symbol: BTC, type: 'limit', side: 'buy', amount: 0.001, price },
        { symbol: BTC, type: 'limit', side: 'buy', amount: 100, price },
      ]);
      expect(batch.map((o) => o.status)).toEqual(['open', 'rejected']);
      expect(batch[1].info).toMatchObject({ code: 51001 });
      expect((await w.cancelOrderWs(batch[0].id!)).status).toBe('canceled');
    } finally {
      await w.close();
    }
  });
});
