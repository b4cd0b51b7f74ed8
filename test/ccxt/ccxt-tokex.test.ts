/**
 * The CCXT class (`ccxt-tokex`, built to dist) against the whole embedded stack: the perp engine
 * with its demo market maker, and demo.json's perp trader (wallets[0], 10,000 USDC). Every value is
 * compared with what the venue's own API answers for the same thing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import ccxt from 'ccxt';
import TokexPerp from 'ccxt-tokex';
import { PerpClient } from '@tokex/sdk';
import { privateKeyToAccount } from 'viem/accounts';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';
import { until } from '../support/poll.ts';

const BTC = 'BTC/USD:USD';
const ETH = 'ETH/USD:USD';

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
    for (const m of ['fetchTime', 'fetchMarkets', 'fetchTicker', 'fetchTickers', 'fetchOrderBook', 'fetchOHLCV', 'fetchTrades', 'fetchFundingRate', 'fetchFundingRates', 'fetchFundingRateHistory', 'fetchBalance', 'createOrder', 'cancelOrder', 'cancelAllOrders', 'fetchOrder', 'fetchOpenOrders', 'fetchClosedOrders', 'fetchMyTrades', 'fetchPositions', 'setLeverage', 'setMarginMode', 'addMargin', 'reduceMargin', 'withdraw', 'fetchDeposits', 'fetchWithdrawals', 'fetchLedger']) {
      expect(ex.has[m], m).toBe(true);
    }
    expect(ex.has['editOrder']).toBe(false);
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

    const positions = await ex.fetchPositions([BTC]);
    const raw = (await api.get<any>('positions', { symbol: 'BTC-USD' })).rows[0];
    expect(positions).toHaveLength(1);
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

  it('withdraw → fetchWithdrawals; fetchDeposits and fetchLedger', async () => {
    const w = await ex.withdraw('USDC', 1.5, creds.walletAddress, undefined, { clientWithdrawalId: 'ccxt-w-1' });
    expect(w).toMatchObject({ type: 'withdrawal', amount: 1.5, currency: 'USDC' });
    expect(w.id).toMatch(/^0x[0-9a-f]{64}$/);
    await expect(ex.withdraw('USDC', 1, '0x000000000000000000000000000000000000dEaD')).rejects.toBeInstanceOf(ccxt.InvalidAddress);
    const list = await until(() => ex.fetchWithdrawals('USDC'), (ws) => ws.some((x) => x.id === w.id && x.status === 'ok'), 30_000);
    const done = list.find((x) => x.id === w.id)!;
    expect(done.txid).toMatch(/^0x[0-9a-f]{64}$/);
    expect(done.address!.toLowerCase()).toBe(creds.walletAddress.toLowerCase());

    const deposits = await ex.fetchDeposits('USDC');
    const rawDeposits = await api.get<any>('account/deposits');
    expect(deposits.map((d) => d.id).sort()).toEqual(rawDeposits.rows.map((r: any) => r.id).sort());
    expect(deposits.some((d) => d.amount === 10_000 && d.status === 'ok' && d.type === 'deposit')).toBe(true);

    const ledger = await ex.fetchLedger('USDC');
    expect(ledger.some((e) => e.info.type === 'DEPOSIT' && e.amount === 10_000 && e.direction === 'in')).toBe(true);
    expect(ledger.some((e) => e.info.type === 'WITHDRAWAL' && e.amount === 1.5 && e.direction === 'out')).toBe(true);
    const rawFees = (await api.get<any>('account/transactions', { type: 'FEE', symbol: 'BTC-USD', limit: 100 })).rows;
    expect(rawFees.length).toBeGreaterThan(0);
    for (const r of rawFees) {
      expect(ledger.find((e) => e.id === r.id)).toMatchObject({ type: 'fee', direction: 'out', amount: -Number(r.amount), currency: 'USDC', referenceId: r.ref, timestamp: r.ts });
    }
  });
});
