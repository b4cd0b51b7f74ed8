/**
 * The trading bot (bot.ts) against a sandboxed venue from @tokex/testkit: one venue for the file,
 * reverted before each test to the snapshot taken after the set-up (the bot's key and collateral).
 * Each test scripts what the venue would otherwise only do by waiting or by chance:
 *
 * - BTC falls 30 % at once: the bot's 10x long is liquidated (bankrupt, so auto-deleveraged);
 * - eight hours pass: funding is paid at each hour, to the bot's account too;
 * - a 2:1 split of a stock the buyer holds: its holding doubles;
 * - the venue rate-limits the bot's key: the bot retries and gets its answer;
 * - the stock venue's operator goes silent with the buyer's order open: three days later the buyer
 *   cancels it on chain through the escape hatch and withdraws every dollar.
 *
 * The market order refused after the close and filled at the open needs the US sessions calendar:
 * sessions.test.ts, with a venue of its own.
 *
 *   npx vitest run examples/trading-bot      (npm run build:packages first: it imports the built kit)
 */
import { BaseError, ContractFunctionRevertedError, parseUnits } from 'viem';
import { expect, it } from 'vitest';
import { useVenue } from '@tokex/testkit/vitest';
import { PerpBot, StockBuyer } from './bot.ts';

const HOUR = 3_600_000;
const SYMBOL = 'BTC-USD';
let credentials: { apiKey: string; apiSecret: string };

const ctx = useVenue({
  // Once, before the snapshot every test starts from: the bot's wallet funded, its key, 1,000 USDC deposited.
  setup: async (v) => {
    const key = v.demo.wallets[2].privateKey;
    await v.fund(v.demo.wallets[2].address, 'USDC', '1000');
    credentials = await PerpBot.createKey(v.baseUrls.perp, v.demo.chainId, key);
    await bot().deposit('1000');
  },
});

const bot = () => new PerpBot({ baseUrl: ctx.venue.baseUrls.perp, chainId: ctx.venue.demo.chainId, privateKey: ctx.venue.demo.wallets[2].privateKey, credentials });

/** The stock buyer: the demo WRITABLE key and the wallet it is bound to; deadlines on the venue's clock. */
const buyer = () => {
  const { demo } = ctx.venue;
  return new StockBuyer({
    baseUrl: demo.stock.baseUrl, chainId: demo.chainId, rpcUrl: demo.rpcUrl, router: demo.stock.contracts.stockRouter,
    credentials: demo.stock.keys.writable, privateKey: demo.wallets[0].privateKey,
    now: () => ctx.venue.clock.now(),
  });
};

/** Polls `read` until `done` holds (state the venue reaches a moment later); never a fixed sleep. */
async function until<T>(read: () => Promise<T>, done: (v: T) => boolean, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (done(v)) return v;
    if (Date.now() > end) throw new Error(`not reached within ${ms} ms; last: ${JSON.stringify(v).slice(0, 1000)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

it('a 30 % drop liquidates the bot\'s 10x long', async () => {
  const b = bot();
  const venue = ctx.venue;
  await until(() => b.api.getTickers({ symbol: SYMBOL }), ([t]) => Number(t?.markPrice) > 0);
  const opened = await b.openLong(SYMBOL, 10);
  expect(opened.status).toBe('FILLED');
  const position = (await b.position(SYMBOL))!;
  expect(position.size).toBe(opened.filledSize);

  const index = Number((await b.api.getTickers({ symbol: SYMBOL }))[0].indexPrice);
  const crash = (Math.floor(index * 0.7 * 100) / 100).toFixed(2);
  const pinned = await venue.prices.set('BTC', crash);
  expect(pinned.quote?.last).toBe(crash);

  // The account is bankrupt at that price (its loss beyond its collateral) and the fresh venue's
  // insurance fund and pool are empty, so auto-deleveraging closes the long at its bankruptcy price
  // (docs/perp-risk.md): the position is gone and the account ends at (almost) zero, to the micro-dollar.
  await until(() => b.position(SYMBOL), (p) => p === undefined);
  const adl = await until(() => b.api.listTransactions({ type: 'ADL', limit: 50 }), (p) => p.rows.length > 0);
  const account = await b.account();
  const micro = (v: string) => parseUnits(v, 6);
  expect(adl.rows.reduce((sum, r) => sum + micro(r.amount), 0n)).toBe(micro(account.realisedPnl));
  expect(micro(account.balance)).toBe(micro(account.deposited) - micro(account.fees) + micro(account.realisedPnl) + micro(account.funding));
  expect(micro(account.balance)).toBeLessThan(micro('0.01'));
  expect(account).toMatchObject({ positionMargin: '0', liquidatable: false });
});

it('eight hours pass: funding at each hour crossed, paid by the bot\'s open long', async () => {
  const b = bot();
  const venue = ctx.venue;
  await until(() => b.api.getTickers({ symbol: SYMBOL }), ([t]) => Number(t?.markPrice) > 0);
  await b.openLong(SYMBOL, 2);

  const advance = await venue.clock.advance(8 * 3600);
  expect(advance.to - advance.from).toBe(8 * HOUR);
  const crossed = Array.from({ length: 8 }, (_, i) => (Math.floor(advance.from / HOUR) + 1 + i) * HOUR);
  const rates = await until(() => b.api.getFundingRates({ symbol: SYMBOL, startTime: advance.from, limit: 100 }), (r) => r.length >= 8);
  expect(rates.map((r) => r.fundingTime).sort((x, y) => x - y)).toEqual(crossed);
  // The bot's account took part in each of them.
  const paid = await until(() => b.api.listTransactions({ type: 'FUNDING', limit: 100 }), (p) => p.rows.length >= 8);
  expect(paid.rows).toHaveLength(8);
});

it('a 2:1 split doubles the buyer\'s holding', async () => {
  const venue = ctx.venue;
  const b = buyer();
  const bought = await b.buy('AAPL', '250', { token: venue.demo.stock.contracts.cashToken, amount: '500' });
  expect(bought.history?.status).toBe('FILLED');
  const before = await b.shares('AAPL');
  expect(before).toBeGreaterThan(0n);

  // A split effective now takes effect at the first minute at least 5 s after it is added; the
  // sandbox moves the venue's clock to that minute, so the call answers within seconds, applied.
  const split = await venue.corporateActions.add({ symbol: 'AAPL', kind: 'split', ratio: '2:1' });
  expect(split.action).toMatchObject({ symbol: 'AAPL', type: 'SPLIT', ratio: '2:1', status: 'applied' });

  const after = await until(() => b.shares('AAPL'), (s) => s !== before);
  expect(after).toBe(before * 2n);
});

it('a 429 on the bot\'s key is retried, and the call succeeds', async () => {
  const b = bot();
  const venue = ctx.venue;
  const fault = await venue.faults.add({ kind: 'rate-limit', apiKey: b.apiKey, count: 2 });
  expect(fault).toMatchObject({ kind: 'rate-limit', apiKey: b.apiKey, count: 2, remaining: 2 });

  const account = await b.account();
  expect(account.balance).toBe('1000');
  // Two answers were 429 (the SDK waited each one's Retry-After), the third the account.
  expect(b.stats).toEqual({ answers: 3, rateLimited: 2 });
  expect(await venue.faults.list()).toEqual([]);
});

it('three days of operator silence open the escape hatch: the buyer cancels its order on chain and takes its cash back', async () => {
  const venue = ctx.venue;
  const b = buyer();
  const usdc = venue.demo.stock.contracts.cashToken;
  const inWallet = await b.walletBalance(usdc);
  await b.deposit(usdc, '500');
  expect(await b.walletBalance(usdc)).toBe(inWallet - 500_000_000n);

  // The operator goes silent (its executor stops settling) with the buyer's market order open:
  // the whole notional stays locked.
  await venue.faults.add({ kind: 'executor-paused' });
  const order = await b.marketBuy('AAPL', '250', 'open');
  expect(order).toMatchObject({ state: 'open', openOrder: { status: 'OPEN', lockedAmount: '250' } });
  expect((await b.api.getBalance(b.holder)).mUsdDetail).toEqual({ available: '250', locked: '250', total: '500' });

  // The hatch opens once the chain's time is past the operator's last settlement plus its silence
  // (3 days; docs/security.md). The chain's block time follows the venue's clock, at most a second
  // behind (docs/sandbox.md, "Clock"; the advance answers it), so the advance is counted from the
  // venue's now. A minute short of it the router refuses.
  const hatch = await b.escapeHatch();
  expect(hatch).toMatchObject({ open: false, operatorSilence: 3 * 86_400 });
  const opensAfter = hatch.lastOperatorActivity + hatch.operatorSilence;
  const venueSeconds = async () => Math.floor((await venue.clock.now()) / 1000);
  const short = await venue.clock.advance(opensAfter - (await venueSeconds()) - 60);
  expect(Math.floor(short.to / 1000) - short.chainTime).toBeLessThanOrEqual(1);
  const refused = await b.emergencyCancel(order.orderId).catch((e: BaseError) => e.walk((c) => c instanceof ContractFunctionRevertedError));
  expect(refused).toMatchObject({ data: { errorName: 'EscapeHatchClosed' } });

  // Two minutes later it is open: the buyer cancels its own order on chain, and the whole lock is
  // free again (the venue's API follows the chain's events).
  await venue.clock.advance(120);
  expect((await b.escapeHatch()).open).toBe(true);
  const cancelTx = await b.emergencyCancel(order.orderId);
  const closed = await until(() => b.api.getOrder(order.orderId), (o) => o.state === 'history');
  expect(closed.history).toMatchObject({ status: 'CANCELED', filledQuantity: '0', filledNotional: '0', fees: '0', fills: [], settleTxHash: cancelTx });
  expect((await until(() => b.api.getBalance(b.holder), (x) => x.mUsdDetail.locked === '0')).mUsdDetail).toEqual({ available: '500', locked: '0', total: '500' });

  // Then takes it all back to the wallet, on chain too: every unit of USDC it had.
  await b.withdrawCash(usdc, '500');
  expect(await b.walletBalance(usdc)).toBe(inWallet);
  expect((await until(() => b.api.getBalance(b.holder), (x) => x.mUsdDetail.total === '0')).mUsdDetail).toEqual({ available: '0', locked: '0', total: '0' });
}, 150_000);
