/**
 * The instrument's public trade list over HTTP with a real engine behind it: one row per fill (the
 * taker's side), newest first, paged and filtered by time, signed like the other market data.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newTrader, perpHarnessVariants, placeMakerBook, USD, type PerpHarness, type PerpTrader } from '../support/perp-api-harness.ts';

const AAPL = 'AAPL-USD';

describe.each(perpHarnessVariants())('perp market trades ($name)', (variant) => {
  let h: PerpHarness;
  let maker: PerpTrader;
  let taker: PerpTrader;
  // The API's clock: each taker order one second after the last, so the trades' times differ.
  const t0 = Math.floor(Date.now() / 1000) * 1000;
  let clock = t0;

  const trader = (deposit: bigint) => newTrader(h, deposit);
  const trades = (query: Record<string, string | number> = {}) => taker.api.get<{ total: number; rows: any[] }>('market-trades', { symbol: AAPL, ...query });

  beforeAll(async () => {
    h = await variant.start({ engine: true, limit: 10_000, now: () => clock });
    await h.venue!.mark(AAPL, 20_000, 20_000);
    maker = await trader(100_000n * USD);
    taker = await trader(100_000n * USD);
    await placeMakerBook(maker);
    clock = t0 + 1_000; // two fills: 5 and 1 at 200.5
    await taker.api.placeOrder(taker.wallet, { symbol: AAPL, side: 'BUY', type: 'MARKET', size: '6' });
    clock = t0 + 2_000; // one fill: the taker sells 1 at 199
    await taker.api.placeOrder(taker.wallet, { symbol: AAPL, side: 'SELL', type: 'MARKET', size: '1' });
    clock = t0 + 3_000; // two fills: 2 at 200.5, 1 at 201
    await taker.api.placeOrder(taker.wallet, { symbol: AAPL, side: 'BUY', type: 'MARKET', size: '3' });
    await h.venue!.settled();
  });
  afterAll(async () => {
    await h?.stop();
  });

  it('answers one row per fill, newest first, with the taker\'s side and the fill\'s id', async () => {
    const all = await trades({ limit: 100 });
    // The taker's own fills carry the same trade ids (the engine event seqs of the fills).
    const fills = await taker.api.get<{ rows: any[] }>('trades', { symbol: AAPL, limit: 100 });
    const ids = fills.rows.map((f) => f.tradeId);
    expect(ids).toHaveLength(5);
    expect(all).toEqual({
      total: 5,
      rows: [
        { id: ids[0], symbol: AAPL, price: '201', size: '1', side: 'BUY', ts: t0 + 3_000, liquidation: false },
        { id: ids[1], symbol: AAPL, price: '200.5', size: '2', side: 'BUY', ts: t0 + 3_000, liquidation: false },
        { id: ids[2], symbol: AAPL, price: '199', size: '1', side: 'SELL', ts: t0 + 2_000, liquidation: false },
        { id: ids[3], symbol: AAPL, price: '200.5', size: '1', side: 'BUY', ts: t0 + 1_000, liquidation: false },
        { id: ids[4], symbol: AAPL, price: '200.5', size: '5', side: 'BUY', ts: t0 + 1_000, liquidation: false },
      ],
    });
    // Ids are the engine's event seqs: increasing with time, so decreasing down the list.
    const seqs = all.rows.map((r) => Number(r.id));
    expect([...seqs].sort((a, b) => b - a)).toEqual(seqs);
    expect(new Set(seqs).size).toBe(5);
    // The maker's side (a SELL, for the first fills) is not a second row: one row per fill.
    const makerFills = await maker.api.get<{ rows: any[] }>('trades', { symbol: AAPL, limit: 100 });
    expect(makerFills.rows.map((f) => f.tradeId)).toEqual(ids);
  });

  it('pages: limit and page over the same order, the total unchanged; out-of-range limit falls back to 10', async () => {
    const all = (await trades({ limit: 100 })).rows.map((r) => r.id);
    const p1 = await trades({ limit: 2, page: 1 });
    const p2 = await trades({ limit: 2, page: 2 });
    const p3 = await trades({ limit: 2, page: 3 });
    const p4 = await trades({ limit: 2, page: 4 });
    expect([p1.total, p2.total, p3.total, p4.total]).toEqual([5, 5, 5, 5]);
    expect([...p1.rows, ...p2.rows, ...p3.rows].map((r) => r.id)).toEqual(all);
    expect(p3.rows).toHaveLength(1);
    expect(p4.rows).toEqual([]);
    expect((await trades({ limit: 0 })).rows).toHaveLength(5);
    expect((await trades()).rows.map((r) => r.id)).toEqual(all);
  });

  it('filters by time, both bounds inclusive', async () => {
    const at2 = await trades({ startTime: t0 + 2_000, endTime: t0 + 2_000 });
    expect(at2.total).toBe(1);
    expect(at2.rows.map((r) => [r.side, r.price, r.size])).toEqual([['SELL', '199', '1']]);
    const from2 = await trades({ startTime: t0 + 2_000 });
    expect(from2.rows.map((r) => r.ts)).toEqual([t0 + 3_000, t0 + 3_000, t0 + 2_000]);
    const until1 = await trades({ endTime: t0 + 1_999 });
    expect(until1.rows.map((r) => r.size)).toEqual(['1', '5']);
    expect(await trades({ startTime: t0 + 3_001 })).toEqual({ total: 0, rows: [] });
  });

  it('another instrument has its own list', async () => {
    expect(await taker.api.get('market-trades', { symbol: 'BTC-USD' })).toEqual({ total: 0, rows: [] });
  });

  it('an unknown symbol is 40002; a missing symbol 10000', async () => {
    const unknown = await taker.api.request('GET', 'market-trades', { query: { symbol: 'DOGE-USD' } });
    expect({ status: unknown.httpStatus, code: unknown.code }).toEqual({ status: 404, code: 40002 });
    const missing = await taker.api.request('GET', 'market-trades');
    expect({ status: missing.httpStatus, code: missing.code }).toEqual({ status: 400, code: 10000 });
  });

  it("marks the fill of the engine's liquidation order: the liquidated account's SELL is the taker", async () => {
    const TSLA = 'TSLA-USD';
    await h.venue!.mark(TSLA, 20_000, 20_000);
    const victim = await trader(1_000n * USD);
    await victim.api.setLeverage({ symbol: TSLA, leverage: 20 });
    await maker.api.placeOrder(maker.wallet, { symbol: TSLA, side: 'SELL', type: 'LIMIT', size: '90', price: '200' });
    clock = t0 + 4_000; // 90 at 200 (18,000 notional on about 991 of equity): maintenance 450
    await victim.api.placeOrder(victim.wallet, { symbol: TSLA, side: 'BUY', type: 'MARKET', size: '90' });
    await maker.api.placeOrder(maker.wallet, { symbol: TSLA, side: 'BUY', type: 'LIMIT', size: '90', price: '195' });
    // At 193.5 the equity (about 406) is below maintenance (about 435) but above ⅔ of it: the engine
    // closes the position through the book, its IOC sell taking the resting bid at 195.
    // On the test's clock (the harness's mark() stamps Date.now(), behind it), so the fill is the newest.
    clock = t0 + 5_000;
    const crash = await h.venue!.gateway.submit({ kind: 'setMarkPrice', id: 'mark:market-trades-crash', ts: clock, symbol: TSLA, markPriceTicks: 19_350, indexPriceTicks: 19_350 });
    expect(crash.ok).toBe(true);
    await h.venue!.settled();
    const tape = await taker.api.get<{ total: number; rows: any[] }>('market-trades', { symbol: TSLA });
    expect(tape.rows.map(({ symbol, price, size, side, ts, liquidation }) => ({ symbol, price, size, side, ts, liquidation }))).toEqual([
      { symbol: TSLA, price: '195', size: '90', side: 'SELL', ts: t0 + 5_000, liquidation: true },
      { symbol: TSLA, price: '200', size: '90', side: 'BUY', ts: t0 + 4_000, liquidation: false },
    ]);
    expect(tape.total).toBe(2);
    expect(Number(tape.rows[0].id)).toBeGreaterThan(Number(tape.rows[1].id));
    // The same fill in the victim's own history is its liquidation order's.
    const own = await victim.api.get<{ rows: any[] }>('trades', { symbol: TSLA, limit: 10 });
    expect(own.rows.map((f) => f.tradeId)).toEqual(tape.rows.map((r) => r.id));
    expect((await victim.api.get<{ total: number }>('positions', { symbol: TSLA })).total).toBe(0);
  });

  it('refuses an unsigned request (20001) and a bad signature (20006)', async () => {
    const res = await fetch(`${h.baseUrl}/v4/public/trader/market-trades?symbol=${AAPL}`);
    expect(res.status).toBe(401);
    expect(((await res.json()) as { code: number }).code).toBe(20001);
    const { apiKey } = await h.key();
    const forged = h.client(apiKey, Buffer.from('not the secret').toString('base64'));
    const r = await forged.request('GET', 'market-trades', { query: { symbol: AAPL } });
    expect({ status: r.httpStatus, code: r.code }).toEqual({ status: 401, code: 20006 });
  });
});
