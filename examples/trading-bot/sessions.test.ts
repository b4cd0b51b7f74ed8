/**
 * The stock buyer (bot.ts) against a venue that trades US sessions (`MARKET_CALENDAR=us-sessions`,
 * New York time; docs/stock-api.md, "Trading sessions"): a venue of its own, as bot.test.ts's
 * venue trades round the clock.
 *
 * - after the close the API refuses a market order (limit orders are still taken): HTTP 400, and
 *   nothing reaches the chain (a market order sent to the router past the API would be REJECTED by
 *   the executor, docs/executor.md, "Sessions"; a client that goes through the API never sees that);
 * - at the next open the same order is accepted and filled.
 *
 * Market orders trade only in the regular session (09:30–16:00 New York). After 16:00 comes the
 * after-hours session (to 20:00), where only limit orders are taken, so "after the close" here is
 * 17:30 on a full trading day: after-hours whether the day closed at 16:00 or early (13:00, then
 * after-hours to 17:00 and closed until 20:00, a different refusal). The test reads the session
 * from the venue and goes on to the next weekday when it is not after-hours (a holiday or an early
 * close), so it needs no holiday list.
 *
 *   npx vitest run examples/trading-bot      (npm run build:packages first: it imports the built kit)
 */
import { parseUnits } from 'viem';
import { expect, it } from 'vitest';
import { StockApiError } from '@tokex/sdk';
import { useVenue } from '@tokex/testkit/vitest';
import type { Venue } from '@tokex/testkit';
import { StockBuyer } from './bot.ts';

const ctx = useVenue({ env: { MARKET_CALENDAR: 'us-sessions' } });

const NEW_YORK = new Intl.DateTimeFormat('en-US', {
  timeZone: 'America/New_York', hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric',
});

/** New York's wall clock at `ms`, read as if it were UTC (to the minute). */
function newYorkWall(ms: number): number {
  const p = Object.fromEntries(NEW_YORK.formatToParts(ms).map((x) => [x.type, Number(x.value)]));
  return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute);
}

/** `HH:MM` in New York at `ms`. */
const newYorkTime = (ms: number) => new Date(newYorkWall(ms)).toISOString().slice(11, 16);

/** The first instant after `ms` at which New York's clock shows `hh:mm` on a weekday. */
function nextWeekdayInNewYork(ms: number, hh: number, mm: number): number {
  const today = new Date(newYorkWall(ms));
  for (let d = 0; ; d++) {
    const wall = Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate() + d, hh, mm);
    const weekday = new Date(wall).getUTCDay();
    if (weekday === 0 || weekday === 6) continue;
    // The instant is the wall time less New York's offset at that instant (taken twice: the offset
    // near the wall time, then at the instant it gives, in case a DST change lies between).
    const guess = wall - (newYorkWall(wall) - wall);
    const at = wall - (newYorkWall(guess) - guess);
    if (at > ms) return at;
  }
}

/** Moves the venue's clock (and its chain) forward to `at`, in whole seconds; never back. */
async function advanceTo(venue: Venue, at: number): Promise<void> {
  const seconds = Math.ceil((at - (await venue.clock.now())) / 1000);
  if (seconds > 0) await venue.clock.advance(seconds);
}

/** As the stock API writes an instant in its messages: ISO 8601, UTC, to the second. */
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

// The refusal of a market order outside the regular session (docs/stock-api.md, "Trading sessions").
const AFTER_HOURS_REFUSAL =
  /^type: market orders are accepted only in regular hours \(09:30–16:00 New York, 13:00 on early-close days\); the market is in after-hours until (\S+); regular hours open next at (\S+)\. A limit order is accepted at any time$/;

it('a market order is refused after the close and filled at the next open', async () => {
  const venue = ctx.venue;
  const { demo } = venue;
  const buyer = new StockBuyer({
    baseUrl: demo.stock.baseUrl, chainId: demo.chainId, rpcUrl: demo.rpcUrl, router: demo.stock.contracts.stockRouter,
    credentials: demo.stock.keys.writable, privateKey: demo.wallets[0].privateKey,
    now: () => venue.clock.now(),
  });
  // Cash goes in at any hour; a price of our own makes the fill exact.
  await buyer.deposit(demo.stock.contracts.cashToken, '500');
  const pinned = await venue.prices.set('AAPL', '200');

  // 17:30 New York on a full trading day: after the close, in the after-hours session.
  let evening = nextWeekdayInNewYork(await venue.clock.now(), 17, 30);
  for (;;) {
    await advanceTo(venue, evening);
    if ((await buyer.api.getPrice('AAPL')).session === 'after-hours') break;
    evening = nextWeekdayInNewYork(evening, 17, 30);
  }

  // Refused before anything reaches the chain: HTTP 400, naming when the after-hours session ends
  // (20:00 that evening) and when regular hours open next.
  const refused = await buyer.marketBuy('AAPL', '250').then(() => undefined, (e: unknown) => e);
  expect(refused).toBeInstanceOf(StockApiError);
  expect(refused).toMatchObject({ httpStatus: 400, code: 400, endpoint: 'POST /api/v1/orders/calldata' });
  const [, until, opens] = AFTER_HOURS_REFUSAL.exec((refused as StockApiError).msg) ?? [];
  expect(until).toBe(iso(nextWeekdayInNewYork(evening, 20, 0)));
  // The next trading morning at 09:30 (the next weekday, or later across a holiday).
  const open = Date.parse(opens);
  expect(newYorkTime(open)).toBe('09:30');
  expect(open).toBeGreaterThan(evening);
  expect((await buyer.api.listOrders({ symbol: 'AAPL' })).rows).toEqual([]);

  // At the open the same order is taken and filled at the pinned quote's ask, 200.04: the largest
  // quantity whose notional plus the 10 bps market fee fit in the 250 mUSD locked; the rest of the
  // lock goes back.
  await advanceTo(venue, open);
  expect((await buyer.api.getPrice('AAPL')).session).toBe('regular');
  const sharesBefore = await buyer.shares('AAPL');
  expect((await buyer.api.getBalance(buyer.holder)).mUsdDetail).toEqual({ available: '500', locked: '0', total: '500' });
  const order = await buyer.marketBuy('AAPL', '250');
  expect(pinned.quote?.ask).toBe('200.04');
  expect(order.history).toMatchObject({
    status: 'FILLED', averagePrice: '200.04',
    filledQuantity: '1.248501548441560439', filledNotional: '249.750249750249750218', fees: '0.249750249750249751',
  });
  // Placed at the open. `createdAt` is its block's time, and the chain moves in whole seconds, up to
  // one behind the venue's clock (docs/sandbox.md, "Clock"): 09:29:59 is possible, 09:29:58 is not.
  expect(order.createdAt).toBeGreaterThanOrEqual(open - 1000);
  expect(await buyer.shares('AAPL')).toBe(sharesBefore + parseUnits('1.248501548441560439', 18));
  // 500 − 249.750249750249750218 − 0.249750249750249751
  expect((await buyer.api.getBalance(buyer.holder)).mUsdDetail).toEqual({ available: '250.000000000000000031', locked: '0', total: '250.000000000000000031' });
}, 180_000);
