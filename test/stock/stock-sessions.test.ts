/**
 * US trading sessions end to end on anvil (issue 31, item 2): `MARKET_CALENDAR=us-sessions` with the
 * calendar's clock set to a pre-market instant (`MARKET_CLOCK_START`; quotes, orders and the chain
 * keep the wall clock), and per-symbol flags from `STOCK_SESSION_FLAGS`. The quote says
 * `pre-market`; a market order is refused at entry with a 400 naming `type`; a limit order is
 * accepted and fills in the pre-market; a fractional TSLA order (no fractions outside regular hours)
 * rests; a market order self-submitted past the API is rejected by the executor with its reason.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, erc20Abi, http, maxUint256, parseUnits, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { usSessionRulesOf } from '../../src/marketdata/symbol-catalog.ts';
import { orderWithDepositCalldata } from '../../src/stock/router-calldata.ts';
import { until } from '../support/poll.ts';
import { openSocket } from '../support/ws-client.ts';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';
import { testWallet } from '../support/chain-fixture.ts';

// Tuesday 2026-03-10 08:00 New York (EDT): pre-market until 09:30 (13:30Z).
const PRE_MARKET = '2026-03-10T08:00:00-04:00';
const REGULAR_OPEN = Date.UTC(2026, 2, 10, 13, 30);

let t: TestStack;
const chainOf = (rpc: string, id: number) => ({ id, name: 'anvil', nativeCurrency: { name: 'ETH', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [rpc] } } });

function wallet0() {
  const chain = chainOf(t.demo.rpcUrl, t.demo.chainId);
  return {
    wallet: testWallet(t.demo.wallets[0].privateKey, chain, t.demo.rpcUrl),
    pub: createPublicClient({ chain, transport: http(t.demo.rpcUrl) }),
  };
}

async function send(to: Address, data: Hex): Promise<Hex> {
  const { wallet, pub } = wallet0();
  const hash = await wallet.sendTransaction({ to, data });
  expect((await pub.waitForTransactionReceipt({ hash })).status).toBe('success');
  return hash;
}

/** Places an order through the API's with-deposit calldata (USDC in, no prior exchange balance needed) and records it. */
async function place(body: Record<string, unknown>): Promise<string> {
  const cd = await t.writable.post<any>('/api/v1/orders/with-deposit/calldata', { deadline: deadline(), ...body });
  return record(await send(cd.toAddress, cd.callData));
}

async function record(txHash: Hex): Promise<string> {
  const rec = await until(() => t.writable.post<any>('/api/v1/orders/tx', { txHash }), (r) => r.orderId !== null);
  return rec.orderId;
}

const deadline = () => Math.floor(Date.now() / 1000) + 3600;
const detail = (id: string) => t.writable.get<any>(`/api/v1/orders/${id}`);
const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

beforeAll(async () => {
  t = await startTestStack({
    MARKET_CALENDAR: 'us-sessions',
    MARKET_CLOCK_START: PRE_MARKET,
    STOCK_SESSION_FLAGS: 'TSLA:overnight=false,fractionalEh=false;SPY:fractionable=false',
    EXECUTOR_TICK_MS: '200',
    INDEXER_POLL_MS: '100',
  });
  const { wallet, pub } = wallet0();
  const c = t.demo.stock.contracts;
  await pub.waitForTransactionReceipt({ hash: await wallet.writeContract({ address: c.cashToken, abi: erc20Abi, functionName: 'approve', args: [c.stockRouter, maxUint256] }) });
});
afterAll(async () => {
  await t?.stop();
});

describe('us-sessions at a pre-market instant', () => {
  it('runs the calendar on the clock MARKET_CLOCK_START set', () => {
    const cal = t.stack.calendar;
    expect(cal.kind).toBe('us-sessions');
    expect(cal.session(Date.now())).toBe('pre-market');
    // The shift is what the start set: the calendar's now is 08:00 plus the seconds since.
    const calendarNow = Date.now() + cal.clockOffsetMs;
    expect(calendarNow - Date.parse(PRE_MARKET)).toBeGreaterThanOrEqual(0);
    expect(calendarNow - Date.parse(PRE_MARKET)).toBeLessThan(10 * 60_000);
    expect(t.logs.some((l) => l.includes('MARKET_CLOCK_START: the market calendar runs on a shifted clock'))).toBe(true);
  });

  // Both answers are rendered by their response schema's serializer, which drops a field it lacks.
  it('says pre-market in the quote, at the top and in basicInfo, and the session flags in symbols', async () => {
    const q = await t.readOnly.get<any>('/api/v1/prices/AAPL');
    expect(q).toMatchObject({ symbol: 'AAPL', marketStatus: 'open', session: 'pre-market', basicInfo: { marketStatus: 'open', session: 'pre-market' } });
    const symbols = await t.readOnly.get<any[]>('/api/v1/symbols');
    const flags = Object.fromEntries(symbols.map((s) => [s.symbol, [s.overnightTradable, s.fractionable, s.fractionalEhEnabled]]));
    expect(flags).toEqual({ AAPL: [true, true, true], TSLA: [false, true, false], NVDA: [true, true, true], MSFT: [true, true, true], SPY: [true, false, false] });
  });

  it('says pre-market on the quotes stream too', async () => {
    const s = await openSocket(t.demo.stock.wsUrl);
    try {
      s.send({ op: 'subscribe', id: 'q', channel: 'quotes', symbol: 'MSFT' });
      const snap = await s.next((f) => f.type === 'subscribed');
      expect(snap.data).toMatchObject({ symbol: 'MSFT', marketStatus: 'open', session: 'pre-market', basicInfo: { session: 'pre-market' } });
      const update = await s.next((f) => f.type === 'update');
      expect(update.data).toMatchObject({ session: 'pre-market', basicInfo: { session: 'pre-market' } });
    } finally {
      s.close();
    }
  });

  it('refuses a market order with a 400 naming type, saying until when, on every order entry', async () => {
    const until0930 = iso(REGULAR_OPEN - t.stack.calendar.clockOffsetMs);
    expect(usSessionRulesOf(t.stack.calendar)!.bounds(Date.now()).end).toBe(REGULAR_OPEN - t.stack.calendar.clockOffsetMs);
    const errMsg = `type: market orders are accepted only in regular hours (09:30–16:00 New York, 13:00 on early-close days); the market is in pre-market until ${until0930}. A limit order is accepted at any time`;
    const market = { symbol: 'AAPL', side: 'Buy', type: 'Market', notional: '100', deadline: deadline() };
    expect(await t.writable.request('POST', '/api/v1/orders/calldata', { body: market })).toMatchObject({ httpStatus: 400, code: 400, errMsg });
    expect(await t.writable.request('POST', '/api/v1/orders/with-deposit/calldata', { body: { ...market, tokenAmount: '100' } })).toMatchObject({ httpStatus: 400, errMsg });
    const sell = { symbol: 'AAPL', side: 'Sell', type: 'Market', quantity: '1', deadline: deadline() };
    expect(await t.writable.request('POST', '/api/v1/orders/calldata', { body: sell })).toMatchObject({ httpStatus: 400, errMsg });
    // Whole shares of SPY only (fractionable: false).
    const spy = { symbol: 'SPY', side: 'Buy', type: 'Limit', quantity: '0.5', price: '1', timeInForce: 'DAY', deadline: deadline() };
    expect(await t.writable.request('POST', '/api/v1/orders/calldata', { body: spy })).toMatchObject({
      httpStatus: 400,
      errMsg: 'quantity: SPY trades whole shares only (fractionable: false): 0.5 has a fraction',
    });
  });

  it('accepts a limit order and fills it in the pre-market; a fractional TSLA order rests until regular hours', async () => {
    const limit = { side: 'Buy', type: 'Limit', timeInForce: 'DAY' };
    const ask = async (symbol: string) => Number((await t.readOnly.get<any>(`/api/v1/prices/${symbol}`)).ask);
    const tslaPrice = ((await ask('TSLA')) * 1.2).toFixed(2);
    // Placed first: every executor tick that sees the AAPL order below sees this one too.
    const tsla = await place({ ...limit, symbol: 'TSLA', quantity: '0.5', price: tslaPrice, tokenAmount: String(Math.ceil(Number(tslaPrice))) });
    const aaplPrice = ((await ask('AAPL')) * 1.2).toFixed(2);
    const aapl = await place({ ...limit, symbol: 'AAPL', quantity: '0.5', price: aaplPrice, tokenAmount: String(Math.ceil(Number(aaplPrice))) });
    const filled = await until(() => detail(aapl), (o) => o.state === 'history');
    expect(filled.history.status).toBe('FILLED');
    expect(filled.history.filledQuantity).toBe('0.5');
    const resting = await detail(tsla);
    expect(resting.state).toBe('open');
    expect(resting.openOrder).toMatchObject({ status: 'OPEN', filledQuantity: '0', remainingQuantity: '0.5' });
  });

  it('rejects a market order self-submitted past the API, with the reason, and fills nothing', async () => {
    const stock = { symbol: 'AAPL', name: 'Apple Inc.', underlying: 'AAPL', exchange: 'NASDAQ', address: t.demo.stock.contracts.stocks.AAPL, decimals: 18 };
    const callData = orderWithDepositCalldata(
      { stock, side: 'Buy', type: 'Market', quantity: 0n, notional: parseUnits('50', 18), price: 0n, worstPrice: parseUnits('1000000', 18), deadline: deadline() },
      { token: t.demo.stock.contracts.cashToken, amount: parseUnits('50', 6) },
    );
    const id = await record(await send(t.demo.stock.contracts.stockRouter, callData));
    const o = await until(() => detail(id), (d) => d.state === 'history');
    expect(o.history.status).toBe('REJECTED');
    expect(o.history.filledQuantity).toBe('0');
    expect(o.history.reason).toMatch(
      /^market orders execute only in the regular session \(09:30–16:00 New York, 13:00 on early-close days\): the market was in pre-market at \S+Z, when the executor reached the order \(a limit order rests until its sessions\)$/,
    );
  });
});
