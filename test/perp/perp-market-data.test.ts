/**
 * The perpetual market data over HTTP with a real engine behind it: the book by price level, 24-hour
 * tickers from the projected trade candles with mark, index, funding and open interest, candles of
 * trades, marks and indices, and the funding rate history with each payment in the accounts'
 * transactions.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newTrader, perpHarnessVariants, placeMakerBook, USD, type PerpHarness, type PerpTrader } from '../support/perp-api-harness.ts';

const AAPL = 'AAPL-USD';

describe.each(perpHarnessVariants())('perp market data ($name)', (variant) => {
  let h: PerpHarness;
  let maker: PerpTrader;
  let taker: PerpTrader;

  const trader = (deposit: bigint) => newTrader(h, deposit);

  beforeAll(async () => {
    h = await variant.start({ engine: true, limit: 10_000 });
    await h.venue!.mark(AAPL, 20_000, 19_990);
    maker = await trader(100_000n * USD);
    taker = await trader(100_000n * USD);
    await placeMakerBook(maker);
    await taker.api.placeOrder(taker.wallet, { symbol: AAPL, side: 'BUY', type: 'MARKET', size: '6' });
    await taker.api.placeOrder(taker.wallet, { symbol: AAPL, side: 'BUY', type: 'MARKET', size: '3' });
    await h.venue!.settled();
  });
  afterAll(async () => {
    await h?.stop();
  });

  it('depth aggregates each price level, best first', async () => {
    const d = await taker.api.get<any>('depth', { symbol: AAPL, limit: 5 });
    // 8 at 200.5 less the 6 + 2 taken; 4 at 201 less 1.
    expect(d.asks).toEqual([['201', '3']]);
    expect(d.bids).toEqual([['199', '2']]);
    expect(d.symbol).toBe(AAPL);
    expect(d.seq).toBe(h.venue!.sequencer.engine.lastSeq);
  });

  it('tickers: last, 24-hour high, low, volume and turnover from the trades; mark, index and open interest from the engine', async () => {
    const [t] = await taker.api.get<any[]>('tickers', { symbol: AAPL });
    // Four fills: 5 + 1 at 200.5 (two makers), then 2 at 200.5 and 1 at 201: 9 lots, 8 × 200.5 + 201 = 1 805 USD.
    expect(t).toMatchObject({
      symbol: AAPL, lastPrice: '201', open24h: '200.5', high24h: '201', low24h: '200.5', volume24h: '9', turnover24h: '1805',
      trades24h: 4, bestBid: '199', bestAsk: '201', markPrice: '200', indexPrice: '199.9', fundingRate: '0', openInterest: '9',
    });
    expect(t.nextFundingTime % 3_600_000).toBe(0);
    // The prices' own times: the harness set the mark (and the index with it) a moment ago.
    expect(t.stale).toBe(false);
    expect(t.indexTime).toBe(t.markTime);
    expect(t.ts - t.markTime).toBeGreaterThanOrEqual(0);
    expect(t.ts - t.markTime).toBeLessThan(30_000);
    const all = await taker.api.get<any[]>('tickers');
    expect(all.map((x) => x.symbol)).toEqual(['BTC-USD', 'ETH-USD', 'AAPL-USD', 'TSLA-USD', 'NVDA-USD']);
    // No mark or index yet: nothing to trade on, and said so.
    expect(all[0]).toMatchObject({ symbol: 'BTC-USD', markPrice: null, indexPrice: null, markTime: null, indexTime: null, stale: true });
  });

  it('klines of trades (1m and 1d agree), of the mark and of the index', async () => {
    const m1 = await taker.api.get<any[]>('klines', { symbol: AAPL, interval: '1m' });
    const d1 = await taker.api.get<any[]>('klines', { symbol: AAPL, interval: '1d' });
    const sum = (rows: any[], f: string) => rows.reduce((a, r) => a + Number(r[f]), 0);
    expect(sum(m1, 'trades')).toBe(4);
    expect(d1).toHaveLength(1);
    expect(d1[0]).toMatchObject({ open: '200.5', high: '201', low: '200.5', close: '201', volume: '9', turnover: '1805', trades: 4 });
    const mark = await taker.api.get<any[]>('klines', { symbol: AAPL, interval: '1h', type: 'mark' });
    expect(mark.at(-1)).toMatchObject({ close: '200', volume: '0', trades: 0 });
    const index = await taker.api.get<any[]>('klines', { symbol: AAPL, interval: '1h', type: 'index' });
    expect(index.at(-1)).toMatchObject({ close: '199.9' });
    const r = await taker.api.request('GET', 'klines', { query: { symbol: AAPL, interval: '2m' } });
    expect(r.code).toBe(10000);
  });

  it('funding: the rate joins funding-rates and each payment the accounts\' transactions, longs paying shorts', async () => {
    // 0.01 % at the mark 200: the taker is long 9 (1 800 USD notional) and pays 0.18; the maker receives it.
    const r = await h.venue!.gateway.submit({ kind: 'applyFunding', id: 'funding:AAPL-USD:test', ts: 3_600_000 * 480_000, symbol: AAPL, rateE9: 100_000n });
    expect(r.ok).toBe(true);
    await h.venue!.settled();
    const rates = await taker.api.get<any[]>('funding-rates', { symbol: AAPL });
    expect(rates).toEqual([{ symbol: AAPL, fundingRate: '0.0001', fundingTime: 3_600_000 * 480_000, markPrice: '200' }]);
    const paid = await taker.api.get<any>('account/transactions', { type: 'FUNDING' });
    expect(paid.rows.map((t: any) => [t.amount, t.symbol])).toEqual([['-0.18', AAPL]]);
    const received = await maker.api.get<any>('account/transactions', { type: 'FUNDING' });
    expect(received.rows.map((t: any) => t.amount)).toEqual(['0.18']);
    const [t] = await taker.api.get<any[]>('tickers', { symbol: AAPL });
    expect(t.fundingRate).toBe('0.0001');
    expect((await taker.api.get<any>('account')).funding).toBe('-0.18');
  });
});
