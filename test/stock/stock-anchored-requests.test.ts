/**
 * What an integrator written from Anchored's documentation sends (issue 30, "Requests"), against
 * the real stack: amounts as JSON numbers read exactly from their digits, deadlines up to the
 * contracts' uint32, and the K-line history in Unix seconds with `adjustment` across a configured
 * 10:1 split. Each bad input is answered 400 naming its field.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeFunctionData, type Address, type Hex } from 'viem';
import type { StockClient } from '@tokex/sdk';
import { stockRouterAbi } from '../../src/chain/abi/generated/index.ts';
import { upsertCandles } from '../../src/storage/candle-store.ts';
import type { Candle } from '../../src/marketdata/market-types.ts';
import { chainClients, oneClickUsers, type OneClickUser } from '../support/one-click-users.ts';
import { until } from '../support/poll.ts';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';

const DECIMAL_REASON = 'must be a decimal string like "12.5" (no sign, exponent or spaces)';
const UINT96_MAX = (1n << 96n) - 1n;

let t: TestStack;
let unbound: StockClient;
let user: OneClickUser;
let actionsDir: string;

beforeAll(async () => {
  actionsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokex-actions-'));
  const actionsFile = path.join(actionsDir, 'corporate-actions.json');
  fs.writeFileSync(actionsFile, JSON.stringify([{ symbol: 'NVDA', type: 'SPLIT', exDate: '2024-06-10', ratio: '10:1' }]));
  t = await startTestStack({ CORPORATE_ACTIONS_FILE: actionsFile, EXECUTOR_TICK_MS: '200', INDEXER_POLL_MS: '100' });
  const created = await t.stack.keys.create({ permission: 'WRITABLE', ipWhitelist: ['127.0.0.1', '::1'], chainId: t.demo.chainId, product: 'STOCK', label: 'unbound' });
  unbound = t.client(created.key.apiKey, created.apiSecret);
  [user] = await oneClickUsers(t, 'anchored-requests', 1, '1000');
}, 120_000);
afterAll(async () => {
  await t?.stop();
  if (actionsDir) fs.rmSync(actionsDir, { recursive: true, force: true });
});

const soon = () => Math.floor(Date.now() / 1000) + 600;
const stock = () => t.demo.stock.contracts.stocks.AAPL.toLowerCase() as Address;
const cash = () => t.demo.stock.contracts.cashToken.toLowerCase() as Address;

/** POSTs `body` exactly as written (JSON numbers included) and answers the envelope. */
function postText(client: StockClient, route: string, body: string) {
  return client.request<any>('POST', route, { body });
}

/** The router call's arguments, addresses in lower case. */
function args(callData: Hex): unknown[] {
  return (decodeFunctionData({ abi: stockRouterAbi, data: callData }).args ?? []).map((a) => (typeof a === 'string' ? a.toLowerCase() : a));
}

async function refusal(client: StockClient, route: string, body: string): Promise<string> {
  const r = await postText(client, route, body);
  expect({ httpStatus: r.httpStatus, code: r.code }, `${route} ${body}`).toEqual({ httpStatus: 400, code: 400 });
  return r.errMsg;
}

describe('amounts as JSON numbers', () => {
  it('the documented market-buy example is accepted as written', async () => {
    const body = JSON.stringify({ stockAddress: stock(), side: 'Buy', type: 'Market', notional: '10', deadline: 1893456000 });
    const r = await postText(unbound, '/api/v1/orders/calldata', body);
    expect(r.code).toBe(200);
    // The worst price the server adds (the ask moved by 50 bps) is checked exactly in order-request.test.ts.
    const [address, side, quantity, notional, worstPrice, deadline] = args(r.data.callData) as [string, number, bigint, bigint, bigint, number];
    expect([address, side, quantity, notional, deadline]).toEqual([stock(), 0, 0n, 10n * 10n ** 18n, 1893456000]);
    expect(worstPrice).toBeGreaterThan(0n);
    // A worst price of the body's own is encoded as given.
    const own = await postText(unbound, '/api/v1/orders/calldata', JSON.stringify({ stockAddress: stock(), side: 'Buy', type: 'Market', notional: '10', worstPrice: '250.5', deadline: 1893456000 }));
    expect(args(own.data.callData)).toEqual([stock(), 0, 0n, 10n * 10n ** 18n, 2505n * 10n ** 17n, 1893456000]);
  });

  it('reads a number from its digits, never through a float (9007199254740993 stays that number)', async () => {
    const usdc = await postText(unbound, '/api/v1/cash/deposits/calldata', `{"tokenAddress":"${cash()}","tokenAmount":9007199254740993}`);
    expect(usdc.code).toBe(200);
    expect(args(usdc.data.callData)).toEqual([cash(), 9_007_199_254_740_993n * 10n ** 6n]);
    const shares = await postText(unbound, '/api/v1/stock/deposits/calldata', `{"tokenAddress":"${stock()}","tokenAmount":9007199254.740993}`);
    expect(args(shares.data.callData)).toEqual([stock(), 9_007_199_254_740_993n * 10n ** 12n]);
    const limit = await postText(unbound, '/api/v1/orders/calldata', `{"symbol":"AAPL","side":"Sell","type":"Limit","quantity":1.25,"price":180.50,"timeInForce":"DAY","deadline":${soon()}}`);
    expect(args(limit.data.callData).slice(1, 4)).toEqual([1, 125n * 10n ** 16n, 18050n * 10n ** 16n]);
  });

  it('answers a number as it answers the same digits as a string, on every amount of every stock POST body', async () => {
    const d = soon();
    // A market order's worst price is named, so that the two answers compare: derived from the
    // quote, it would follow the price between them.
    const routes: Array<{ route: string; base: Record<string, unknown>; field: string; value: string; client?: StockClient }> = [
      { route: '/api/v1/orders/calldata', base: { symbol: 'AAPL', side: 'Buy', type: 'Market', worstPrice: '1000', deadline: d }, field: 'notional', value: '10' },
      { route: '/api/v1/orders/calldata', base: { symbol: 'AAPL', side: 'Sell', type: 'Market', worstPrice: '1', deadline: d }, field: 'quantity', value: '0.5' },
      { route: '/api/v1/orders/calldata', base: { symbol: 'AAPL', side: 'Buy', type: 'Limit', quantity: '1', timeInForce: 'DAY', deadline: d }, field: 'price', value: '150.25' },
      { route: '/api/v1/orders/with-deposit/calldata', base: { symbol: 'AAPL', side: 'Buy', type: 'Market', notional: '10', worstPrice: '1000', deadline: d }, field: 'tokenAmount', value: '10.5' },
      { route: '/api/v1/orders/with-deposit/calldata', base: { symbol: 'AAPL', side: 'Sell', type: 'Market', worstPrice: '1', deadline: d }, field: 'quantity', value: '2' },
      { route: '/api/v1/cash/deposits/calldata', base: { tokenAddress: cash() }, field: 'tokenAmount', value: '12.34' },
      { route: '/api/v1/cash/withdrawals/calldata', base: { tokenAddress: cash(), userAddress: user.address }, field: 'tokenAmount', value: '12.34' },
      { route: '/api/v1/stock/deposits/calldata', base: { tokenAddress: stock() }, field: 'tokenAmount', value: '3' },
      { route: '/api/v1/stock/withdrawals/calldata', base: { tokenAddress: stock(), userAddress: user.address }, field: 'tokenAmount', value: '3' },
      // The sends, for a bound wallet without One Click: the same refusal either way, after the amount was read.
      { route: '/api/v1/orders/send', base: { symbol: 'AAPL', side: 'Buy', type: 'Market', deadline: d }, field: 'notional', value: '10', client: user.client },
      { route: '/api/v1/orders/with-deposit/send', base: { symbol: 'AAPL', side: 'Buy', type: 'Market', notional: '10', deadline: d }, field: 'tokenAmount', value: '10', client: user.client },
      { route: '/api/v1/cash/deposits/send', base: { tokenAddress: cash() }, field: 'tokenAmount', value: '5', client: user.client },
      { route: '/api/v1/cash/withdrawals/send', base: { tokenAddress: cash() }, field: 'tokenAmount', value: '5', client: user.client },
      { route: '/api/v1/stock/deposits/send', base: { tokenAddress: stock() }, field: 'tokenAmount', value: '1', client: user.client },
      { route: '/api/v1/stock/withdrawals/send', base: { tokenAddress: stock() }, field: 'tokenAmount', value: '1', client: user.client },
    ];
    for (const { route, base, field, value, client = unbound } of routes) {
      const head = JSON.stringify(base).slice(0, -1);
      const asNumber = await postText(client, route, `${head},"${field}":${value}}`);
      const asString = await postText(client, route, `${head},"${field}":"${value}"}`);
      const seen = (r: typeof asNumber) => ({ httpStatus: r.httpStatus, code: r.code, errMsg: r.errMsg, data: r.data });
      expect(seen(asNumber), `${route} ${field}`).toEqual(seen(asString));
      // And a malformed number is refused on each of them, naming the field.
      expect(await refusal(client, route, `${head},"${field}":1e3}`)).toBe(`${field}: ${DECIMAL_REASON}`);
    }
    // The calldata ones answer calldata; the withdrawals and sends refusals that read the amount
    // (`exceeds the available …`) or come after it was read (`oneClick: not enabled …`).
    const first = await postText(unbound, '/api/v1/orders/calldata', JSON.stringify({ symbol: 'AAPL', side: 'Buy', type: 'Market', deadline: d, notional: 10 }));
    expect(first.code).toBe(200);
  });

  it('refuses an exponent, a sign, more places than the token has, and more than 2^96 - 1 units, each naming the field', async () => {
    const move = (amount: string, token = cash()) => `{"tokenAddress":"${token}","tokenAmount":${amount}}`;
    for (const amount of ['1e3', '1E3', '1.5e2', '-5', '-0', '-0.5']) {
      expect(await refusal(unbound, '/api/v1/cash/deposits/calldata', move(amount))).toBe(`tokenAmount: ${DECIMAL_REASON}`);
    }
    // USDC has 6 decimals, mUSD (a market buy's notional) 18.
    expect(await refusal(unbound, '/api/v1/cash/deposits/calldata', move('1.1234567'))).toBe('tokenAmount: at most 6 decimal places');
    const buy = (notional: string) => `{"symbol":"AAPL","side":"Buy","type":"Market","notional":${notional},"deadline":${soon()}}`;
    expect(await refusal(unbound, '/api/v1/orders/calldata', buy('0.0000000000000000001'))).toBe('notional: at most 18 decimal places');
    expect(await refusal(unbound, '/api/v1/orders/calldata', buy('-10'))).toBe(`notional: ${DECIMAL_REASON}`);
    expect(await refusal(unbound, '/api/v1/orders/calldata', buy('0'))).toBe('notional: must be greater than zero');
    // 2^96 - 1 units of an 18-decimal stock token is 79228162514.264337593543950335 tokens.
    const max = '79228162514.264337593543950335';
    const ok = await postText(unbound, '/api/v1/stock/deposits/calldata', move(max, stock()));
    expect(args(ok.data.callData)).toEqual([stock(), UINT96_MAX]);
    const tooLarge = 'tokenAmount: too large: at most 79228162514.264337593543950335 (2^96 - 1 units, the contracts\' amount width)';
    expect(await refusal(unbound, '/api/v1/stock/deposits/calldata', move('79228162514.264337593543950336', stock()))).toBe(tooLarge);
    expect(await refusal(unbound, '/api/v1/stock/deposits/calldata', move('"79228162514.264337593543950336"', stock()))).toBe(tooLarge);
    expect(await refusal(unbound, '/api/v1/orders/calldata', buy('1e400'))).toBe(`notional: ${DECIMAL_REASON}`);
    expect(await refusal(unbound, '/api/v1/orders/calldata', buy('100000000000'))).toBe(
      "notional: too large: at most 79228162514.264337593543950335 (2^96 - 1 units, the contracts' amount width)",
    );
    // Not a number or a string at all: the same reason as before.
    expect(await refusal(unbound, '/api/v1/cash/deposits/calldata', move('true'))).toBe(`tokenAmount: ${DECIMAL_REASON}`);
    expect(await refusal(unbound, '/api/v1/cash/deposits/calldata', move('[1]'))).toBe(`tokenAmount: ${DECIMAL_REASON}`);
  });

  it('a market buy with notional as the JSON number 10 is placed and filled on chain', async () => {
    const { pub, walletOf } = chainClients(t);
    const wallet = walletOf(user.account);
    const sendTx = async (c: { toAddress: Address; callData: Hex }) => {
      const hash = await wallet.sendTransaction({ to: c.toAddress, data: c.callData });
      expect((await pub.waitForTransactionReceipt({ hash })).status).toBe('success');
      return hash;
    };
    const deposit = await user.client.request<any>('POST', '/api/v1/cash/deposits/calldata', { body: `{"tokenAddress":"${cash()}","tokenAmount":100}` });
    expect(deposit.code).toBe(200);
    const dep = await user.client.post<any>('/api/v1/cash/deposits/tx', { txHash: await sendTx(deposit.data) });
    await until(() => user.client.get<any>(`/api/v1/cash/deposits/${dep.operationId}`), (o) => o.operationStatus === 'completed');
    const order = await user.client.request<any>('POST', '/api/v1/orders/calldata', {
      body: `{"symbol":"AAPL","side":"Buy","type":"Market","notional":10,"deadline":${soon()}}`,
    });
    expect(order.code).toBe(200);
    const rec = await user.client.post<any>('/api/v1/orders/tx', { txHash: await sendTx(order.data) });
    const done = await until(() => user.client.get<any>(`/api/v1/orders/${rec.orderId}`), (o) => o.state === 'history', 30_000);
    expect(done).toMatchObject({ side: 'Buy', type: 'Market', notional: '10' });
    expect(done.history.status).toBe('FILLED');
    expect(done.history.filledNotional).toMatch(/^[0-9.]+$/);
  });
});

describe('deadlines', () => {
  const order = (deadline: string) => `{"symbol":"AAPL","side":"Buy","type":"Market","notional":"10","deadline":${deadline}}`;

  it('takes any deadline up to 4294967295, the contracts\' uint32, however far ahead', async () => {
    const r = await postText(unbound, '/api/v1/orders/calldata', order('4294967295'));
    expect(r.code).toBe(200);
    expect(args(r.data.callData).at(-1)).toBe(4294967295);
    const prepared = await user.client.request<any>('POST', '/api/v1/1ct/prepare', { body: '{"deadline":4294967295}' });
    expect(prepared).toMatchObject({ code: 200, data: { deadline: 4294967295 } });
  });

  it('refuses one above 4294967295 or in the past, naming deadline', async () => {
    expect(await refusal(unbound, '/api/v1/orders/calldata', order('4294967296'))).toBe('deadline: must be <= 4294967295');
    expect(await refusal(unbound, '/api/v1/orders/calldata', order(String(Date.now())))).toBe('deadline: must be <= 4294967295');
    expect(await refusal(unbound, '/api/v1/orders/calldata', order(String(Math.floor(Date.now() / 1000) - 5)))).toBe('deadline: expired: must be in the future');
    expect(await refusal(user.client, '/api/v1/1ct/prepare', '{"deadline":4294967296}')).toBe('deadline: must be <= 4294967295');
  });
});

describe('K-line history', () => {
  const DAY = 86_400;
  const s = (iso: string) => Date.parse(iso) / 1000;
  const history = (symbol: string, query: Record<string, string | number>) => t.readOnly.request<any>('GET', `/api/v1/prices/${symbol}/history`, { query });

  beforeAll(async () => {
    // NVDA's days around the configured split, raw: 1200.00 to 1204.00 before, 120.50 to 120.90 after.
    const days: Candle[] = [];
    for (const [i, date] of ['2024-06-03', '2024-06-04', '2024-06-05', '2024-06-06', '2024-06-07', '2024-06-10', '2024-06-11', '2024-06-12', '2024-06-13', '2024-06-14'].entries()) {
      const close = i < 5 ? `${1200 + i}.00` : `120.${i}0`;
      days.push({ symbol: 'NVDA', interval: '1d', openTime: s(`${date}T00:00:00Z`) * 1000, open: close, high: close, low: close, close, volume: i < 5 ? '1000' : '10000' });
    }
    await upsertCandles(t.stack.db, days);
  });

  const window = { interval: '1d', startTime: s('2024-06-01T00:00:00Z'), endTime: s('2024-06-30T00:00:00Z') };
  const closes = (r: any) => r.data.candles.map((c: any) => c.exact.close);
  const cliff = (r: any) => Number(r.data.candles[5].open) / Number(r.data.candles[4].close);

  it('across the configured 10:1 split: raw shows the cliff, split and all (the default) do not', async () => {
    const raw = await history('NVDA', { ...window, adjustment: 'raw' });
    expect(raw.code).toBe(200);
    expect(raw.data).toMatchObject({ symbol: 'NVDA', interval: '1d', adjustment: 'raw' });
    expect(closes(raw)).toEqual(['1200.00', '1201.00', '1202.00', '1203.00', '1204.00', '120.50', '120.60', '120.70', '120.80', '120.90']);
    expect(cliff(raw)).toBeLessThan(0.11);
    for (const adjustment of ['split', 'all', undefined]) {
      const r = await history('NVDA', adjustment ? { ...window, adjustment } : window);
      expect(r.data.adjustment).toBe(adjustment ?? 'all');
      expect(closes(r)).toEqual(['120.00', '120.10', '120.20', '120.30', '120.40', '120.50', '120.60', '120.70', '120.80', '120.90']);
      expect(r.data.candles.slice(0, 5).map((c: any) => c.exact.volume)).toEqual(['10000', '10000', '10000', '10000', '10000']);
      expect(cliff(r)).toBeGreaterThan(0.99);
    }
    // The table has no dividend or spin-off for NVDA: raw bars.
    for (const adjustment of ['dividend', 'spin-off']) expect(closes(await history('NVDA', { ...window, adjustment }))).toEqual(closes(raw));
    // Weeks, rolled up from the adjusted days.
    const weeks = await history('NVDA', { ...window, interval: '1w', adjustment: 'split' });
    expect(weeks.data.candles.map((c: any) => [c.openTime, c.exact.open, c.exact.close, c.exact.volume])).toEqual([
      [s('2024-06-03T00:00:00Z') * 1000, '120.00', '120.40', '50000'],
      [s('2024-06-10T00:00:00Z') * 1000, '120.50', '120.90', '50000'],
    ]);
    // Anchored's numbers at the top level (their digits on the wire: stock-anchored-client.test.ts).
    expect(weeks.data.candles.map((c: any) => [c.open, c.high, c.low, c.close, c.volume])).toEqual([
      [120, 120.4, 120, 120.4, 50000],
      [120.5, 120.9, 120.5, 120.9, 50000],
    ]);

  });

  it('reads startTime and endTime as Unix seconds, bars answered with ms openTime and closeTime', async () => {
    const r = await history('NVDA', { interval: '1d', startTime: s('2024-06-05T00:00:00Z'), endTime: s('2024-06-10T00:00:00Z'), adjustment: 'raw' });
    expect(r.data.candles.map((c: any) => [c.openTime, c.closeTime])).toEqual(
      ['2024-06-05', '2024-06-06', '2024-06-07', '2024-06-10'].map((d) => [s(`${d}T00:00:00Z`) * 1000, (s(`${d}T00:00:00Z`) + DAY) * 1000 - 1]),
    );
    // Without startTime: the latest `limit` up to endTime.
    const latest = await history('NVDA', { interval: '1d', endTime: s('2024-06-12T00:00:00Z'), limit: 2, adjustment: 'raw' });
    expect(closes(latest)).toEqual(['120.60', '120.70']);
  });

  it('answers 3m and 1w bars of the live history, and limit up to 5000 (100 by default)', async () => {
    const now = Math.floor(Date.now() / 1000);
    const threeMin = await history('AAPL', { interval: '3m', endTime: now, limit: 5 });
    expect(threeMin.code).toBe(200);
    expect(threeMin.data.candles.length).toBe(5);
    for (const c of threeMin.data.candles) {
      expect(c.openTime % 180_000).toBe(0);
      expect(c.closeTime - c.openTime).toBe(180_000 - 1);
    }
    const week = await history('AAPL', { interval: '1w', endTime: now });
    expect(week.data.candles.length).toBeGreaterThan(0);
    expect(new Date(week.data.candles[0].openTime).getUTCDay()).toBe(1);
    const many = await history('AAPL', { interval: '1m', endTime: now });
    expect(many.data.candles.length).toBe(100);
    expect((await history('AAPL', { interval: '1m', endTime: now, limit: 5000 })).data.candles.length).toBeGreaterThan(100);
  });

  it('refuses milliseconds, an unknown adjustment, a missing endTime or interval, and limit above 5000, naming the field', async () => {
    const ms = Date.now();
    const tooLate = await history('AAPL', { interval: '1m', endTime: ms });
    expect(tooLate).toMatchObject({ httpStatus: 400, code: 400, errMsg: `endTime: must be Unix seconds, at most 4294967295: ${ms} looks like milliseconds` });
    // A year-50,000 endTime (what milliseconds read as seconds are) likewise, and startTime too.
    const year50k = s('2024-01-01T00:00:00Z') + 48_000 * 365 * DAY;
    expect((await history('AAPL', { interval: '1m', endTime: year50k })).errMsg).toBe(`endTime: must be Unix seconds, at most 4294967295: ${year50k} looks like milliseconds`);
    expect((await history('AAPL', { interval: '1m', startTime: ms - 60_000, endTime: Math.floor(ms / 1000) })).errMsg).toBe(
      `startTime: must be Unix seconds, at most 4294967295: ${ms - 60_000} looks like milliseconds`,
    );
    const unknown = await history('AAPL', { interval: '1m', endTime: 1_800_000_000, adjustment: 'dividends' });
    expect(unknown).toMatchObject({ httpStatus: 400, code: 400, errMsg: 'adjustment: must be one of raw, split, dividend, spin-off, all' });
    expect((await history('AAPL', { interval: '1m' })).errMsg).toBe('endTime: required');
    expect((await history('AAPL', { endTime: 1_800_000_000 })).errMsg).toBe('interval: required');
    expect((await history('AAPL', { interval: '2m', endTime: 1_800_000_000 })).errMsg).toBe('interval: must be one of 1m, 3m, 5m, 15m, 1h, 4h, 1d, 1w');
    expect((await history('AAPL', { interval: '1m', endTime: 1_800_000_000, limit: 5001 })).errMsg).toBe('limit: must be <= 5000');
    expect((await history('AAPL', { interval: '1m', startTime: 1_800_000_001, endTime: 1_800_000_000 })).errMsg).toBe('startTime: must not be after endTime');
  });
});
