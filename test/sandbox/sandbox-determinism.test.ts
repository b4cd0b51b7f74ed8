/**
 * Determinism (docs/sandbox.md "Determinism", issue 61 item 3): a venue started with a seed stands
 * frozen at a whole hour, and the same script of stock and perpetual trades run on two fresh venues
 * of the same seed gets the same prices, fills, order ids and balances, and the same times counted
 * from the frozen instant; the second venue starts on another day, hour and second (a clock advanced
 * by days, kept in its data directory as a restart keeps it), so nothing of the day leaks into what
 * is compared. The first venue then runs the script twice more, each time from `POST /sandbox/v1/reset`
 * (the seeded venue back, its clock at the frozen instant), to the same answers both times, and the
 * fresh venue's prices, fills and balances. A venue of another seed gets other prices: the
 * comparison can fail.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { selfSubmitOperation, selfSubmitOrder, type PlacedOrder } from '@tokex/sdk';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';
import { noteMadeDataDir } from '../support/made-data-dirs.ts';
import { until } from '../support/poll.ts';
import { chainClients } from '../support/one-click-users.ts';
import { sandboxClient } from './sandbox-client.ts';
import { SANDBOX_CLOCK_FILE } from '../../src/sandbox/sandbox-clock.ts';

const HOUR = 3_600_000;
const STOCKS = ['AAPL', 'TSLA', 'NVDA', 'MSFT', 'SPY'];
/** The second venue's start: 3 days, 5 hours, 17 minutes and 23.456 s on (another day, hour, minute and second). */
const ELSEWHEN_MS = ((3 * 24 + 5) * 60 + 17) * 60_000 + 23_456;

/** A seeded venue in a fresh data directory (with `advancedMs` kept in it, as a restart finds it), started as the stack starts a seeded sandbox. */
async function seededStack(seed: number, advancedMs = 0): Promise<TestStack> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokex-seeded-'));
  noteMadeDataDir(dataDir);
  const clockFile = path.join(dataDir, SANDBOX_CLOCK_FILE);
  if (advancedMs > 0) fs.writeFileSync(clockFile, `${JSON.stringify({ advancedMs })}\n`);
  // The script polls the books: above the perp API's 120 requests a minute (a 429 is no part of it).
  return startTestStack({ SANDBOX_SEED: String(seed), PERP_RATE_LIMIT_PER_MIN: '10000' }, { dataDir });
}

/** The venue's stamps in `value` (any depth), counted from `at`: the fields named for times, when they hold one. */
const TIME_FIELDS = new Set(['timestamp', 'ts', 'createdAt', 'updatedAt', 'markTime', 'indexTime', 'nextFundingTime', 'triggeredAt', 'expiry']);
function venueTimes<T>(value: T, at: number): T {
  if (Array.isArray(value)) return value.map((v) => venueTimes(v, at)) as T;
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [k, TIME_FIELDS.has(k) && typeof v === 'number' && v > 1e12 ? v - at : venueTimes(v, at)]),
  ) as T;
}

/**
 * The script: the prices at the frozen instant; 1,000 USDC into mUSD, a market buy of 100 mUSD of
 * AAPL and a market sell of what it bought, through the stock API (self-submitted by the demo
 * wallet); a resting limit buy and a market buy of BTC-USD through the perpetual API; then every
 * fill, order id and balance the client reads. Times the venue stamps are counted from the frozen
 * instant. Left out, with why (docs/sandbox.md "Determinism"): what the chain stamps (a stock order's
 * and fill's times are its blocks' times, which run on with the wall clock), transaction hashes and
 * operation ids made of them (the calldata carries the deadline, which is the day's), and the
 * answers' own `ts` of the market data (read by the clock as well, but nothing depends on them).
 */
async function runScript(t: TestStack) {
  {
    const sb = sandboxClient(t);
    const clock = await sb.ok('GET', '/clock');
    const at = clock.now as number;
    const perp = t.perpTrader!;
    const signer = privateKeyToAccount(t.demo.wallets[0].privateKey as `0x${string}`);

    // The venue's own quoting settles at the instant: the market maker's five levels a side and the
    // pool's three (two at the market maker's prices) on every book, once its index is known. Then
    // nothing moves while the clock stands still.
    const instruments = (await until(() => perp.getInstruments().catch(() => []), (l) => l.length > 0, 60_000)).map((i) => i.symbol);
    const books = await until(
      () => Promise.all(instruments.map((symbol) => perp.getDepth({ symbol, limit: 50 }))),
      (ds) => ds.every((d) => d.bids.length === 6 && d.asks.length === 6),
      60_000,
    );
    const stockQuotes = await Promise.all(STOCKS.map((s) => t.readOnly.getPrice(s)));
    const tickers = await perp.getTickers();

    const { walletOf, pub } = chainClients(t);
    const wallet = walletOf(signer);
    const deadline = Math.floor(at / 1000) + 600;
    const deposit = await selfSubmitOperation(t.writable, wallet, pub, 'cashDeposit', { tokenAddress: t.demo.stock.contracts.cashToken, tokenAmount: '1000' }, { timeoutMs: 60_000 });
    const buy = await selfSubmitOrder(t.writable, wallet, pub, { symbol: 'AAPL', side: 'Buy', type: 'Market', notional: '100', deadline }, { timeoutMs: 60_000 });
    const sell = await selfSubmitOrder(t.writable, wallet, pub, { symbol: 'AAPL', side: 'Sell', type: 'Market', quantity: buy.history!.filledQuantity, deadline }, { timeoutMs: 60_000 });
    const stockBalance = await t.writable.getBalance(t.demo.wallets[0].address);

    const [btc] = await perp.getTickers({ symbol: 'BTC-USD' });
    const limitPrice = String(Math.floor(Number(btc.indexPrice) * 0.98));
    // The nonce the venue signs into a built order (drawn from the seed); the order's hash also
    // holds its expiry, the day's.
    const built = await perp.buildOrder({ symbol: 'BTC-USD', side: 'BUY', type: 'LIMIT', size: '0.01', price: limitPrice, timeInForce: 'GTC' });
    const limit = await perp.placeOrder<PlacedOrder>(signer, { symbol: 'BTC-USD', side: 'BUY', type: 'LIMIT', size: '0.01', price: limitPrice, timeInForce: 'GTC' });
    const market = await perp.placeOrder<PlacedOrder>(signer, { symbol: 'BTC-USD', side: 'BUY', type: 'MARKET', size: '0.01' });
    // The history is a projection of the engine's events: read once it has the fill.
    const trades = await until(() => perp.listTrades({ symbol: 'BTC-USD' }), (p) => p.rows.length === 1, 30_000);
    const orders = await Promise.all([limit.orderId, market.orderId].map((id) => perp.getOrder<any>(id)));

    const stockOrder = ({ txHash: _tx, cancelTxHash: _cancel, createdAt: _c, updatedAt: _u, fills, history, deadline: d, ...o }: any) => ({
      ...o,
      deadline: d * 1000 - at,
      fills: fills.map(({ txHash: _h, timestamp: _t, ...f }: any) => f),
      history: { ...history, fills: history.fills.map(({ txHash: _h, timestamp: _t, ...f }: any) => f), settleTxHash: undefined, settledAt: undefined },
    });
    return {
      at,
      clock: { frozen: clock.frozen, hour: at % HOUR },
      builtNonce: String((built.typedData.message as { nonce: unknown }).nonce),
      ...venueTimes(
        {
          stockQuotes,
          tickers,
          books,
          deposit: { status: deposit.operationStatus, mUsdAmount: deposit.mUsdAmount },
          stockBalance,
          limit,
          market,
          orders,
          trades: trades.rows,
          account: await perp.getAccount(),
          positions: (await perp.getPositions()).rows,
          openOrders: (await perp.getOpenOrders({ symbol: 'BTC-USD' })).rows,
        },
        at,
      ),
      buy: stockOrder(buy),
      sell: stockOrder(sell),
    };
  }
}

async function script(seed: number, advancedMs = 0) {
  const t = await seededStack(seed, advancedMs);
  try {
    return await runScript(t);
  } finally {
    await t.stop();
  }
}

/** The script on a fresh venue of `seed`, then after each of `resets` resets of that venue (POST /sandbox/v1/reset). */
async function scriptFromResets(seed: number, resets: number) {
  const t = await seededStack(seed);
  try {
    const runs = [await runScript(t)];
    for (let i = 0; i < resets; i++) {
      await sandboxClient(t).ok('POST', '/reset');
      runs.push(await runScript(t));
    }
    return runs;
  } finally {
    await t.stop();
  }
}

describe('a seeded sandbox', () => {
  it('runs the same script on two fresh venues of one seed, started days apart, and twice more from reset, to the same prices, fills, order ids and balances; another seed to other prices', async () => {
    const [fresh, ...fromReset] = await scriptFromResets(61, 2);
    const { at: firstAt, ...first } = fresh;
    const { at: secondAt, ...second } = await script(61, ELSEWHEN_MS);
    // Frozen at a whole hour each, on other days.
    expect(first.clock).toEqual({ frozen: true, hour: 0 });
    expect(secondAt - firstAt).toBeGreaterThan(3 * 24 * HOUR);
    expect(second).toEqual(first);

    // What the script did, as the client read it (exact: the seed's prices; the quotes at the frozen
    // instant are the seeded history's last close, the perpetual ids count the venue's own quoting).
    expect(first.stockQuotes.map((q) => [q.symbol, q.bid, q.ask, q.last, q.timestamp])).toEqual([
      ['AAPL', '228.57', '228.67', '228.62', 0],
      ['TSLA', '252.06', '252.22', '252.14', 0],
      ['NVDA', '130.35', '130.43', '130.39', 0],
      ['MSFT', '426.47', '426.65', '426.56', 0],
      ['SPY', '559.72', '559.84', '559.78', 0],
    ]);
    expect([first.buy.orderId, first.buy.status, first.buy.history.averagePrice, first.buy.history.filledQuantity]).toEqual(['1', 'Filled', '228.67', '0.436874534919752919']);
    expect([first.sell.orderId, first.sell.status, first.sell.history.averagePrice]).toEqual(['2', 'Filled', '228.57']);
    expect([first.limit.orderId, first.limit.status, first.market.orderId, first.market.status, first.market.avgPrice, first.market.fee]).toEqual(['81', 'NEW', '82', 'FILLED', '103634.4', '0.518172']);
    expect(first.trades.map((r) => [r.tradeId, r.orderId, r.price, r.size, r.fee, r.ts])).toEqual([['180', '82', '103634.4', '0.01', '0.518172', 0]]);
    expect([first.account.balance, first.stockBalance.mUsdBalance]).toEqual(['9999.481828', '999.756556034161316882']);
    expect(first.builtNonce).toBe('7555777493953671540');

    // The same script on the same venue twice from `reset`: the seeded venue again, its clock back at
    // the frozen instant, and everything the script read the same both times.
    expect(fromReset.map((r) => r.at)).toEqual([firstAt, firstAt]);
    const [again, twice] = fromReset.map(({ at: _at, ...r }) => r);
    expect(twice).toEqual(again);
    // Against the fresh venue: the same prices, fills and balances. The perpetual ids and sequences
    // count on from the venue's own quoting that the seed kept (its first start's), so they differ.
    expect([again.stockQuotes, again.tickers, again.buy, again.sell, again.stockBalance, again.account]).toEqual([first.stockQuotes, first.tickers, first.buy, first.sell, first.stockBalance, first.account]);
    expect([again.market.avgPrice, again.market.fee, again.trades.map((r) => [r.price, r.size, r.fee])]).toEqual([first.market.avgPrice, first.market.fee, first.trades.map((r) => [r.price, r.size, r.fee])]);
    expect(Number(again.market.orderId)).toBeGreaterThan(Number(first.market.orderId));

    // Another seed: other prices.
    const { at: _, ...other } = await script(62);
    expect(other.stockQuotes.map((q) => q.last)).not.toEqual(first.stockQuotes.map((q) => q.last));
    expect(other.tickers.map((k) => k.indexPrice)).not.toEqual(first.tickers.map((k) => k.indexPrice));
    expect(other.builtNonce).not.toBe(first.builtNonce);
  }, 900_000);

});
