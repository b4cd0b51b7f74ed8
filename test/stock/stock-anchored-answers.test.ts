/**
 * What integrators of Anchored's RWA Trading API read (issue 30, items 1, 5 and 6), on the real
 * stack configured as Anchored's production is (`CHAIN_ID=8453`, `STOCK_PRODUCT=Anchored`), every
 * role but the market-data simulator: the quotes and candles are what this test writes into their
 * tables, so every market figure has one exact expected value. Each field anchored-reference.md
 * documents is checked against the chain or against what was written:
 * - the envelope's `t` on success and error answers;
 * - `config`'s `productType` and `exchangeFeeConfig.chainId/productType`;
 * - `symbols` rows with the token fields and the 24-hour figures, exact digits on the wire;
 * - `prices/{symbol}` by ticker or token address, `{basicInfo, onChain}`, an unlisted address;
 * - `users/{userId}`, the balance (`musdBalance` and `mUsdBalance`, token rows, allowances);
 * - `method`, `chainId`, `productType` of every calldata answer;
 * - One Click `status: enable`;
 * - orders' `status` in Anchored's vocabulary beside `state`;
 * - cash details nesting `depositOperation` / `withdrawalOperation` beside `mapping`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createPublicClient,
  erc20Abi,
  formatUnits,
  getAbiItem,
  http,
  parseUnits,
  toFunctionSelector,
  type Address,
  type Hex,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import Fastify from 'fastify';
import { StockBalanceSchema, StockCashOperationSchema, StockOrderSchema, StockQuoteSchema, StockSymbolSchema, StockTransferOperationSchema, Type, type StockRouterMethod, type TSchema } from '@tokex/contract';
import { cashierAbi, stockRouterAbi } from '../../src/chain/abi/generated/index.ts';
import { upsertCandles, type CandleRecord } from '../../src/storage/candle-store.ts';
import { upsertQuotes } from '../../src/storage/quote-store.ts';
import { RELAYER } from '../support/one-click-users.ts';
import { until } from '../support/poll.ts';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';
import { testWallet } from '../support/chain-fixture.ts';

let t: TestStack;
let validatorOf: (schema: TSchema) => ((v: unknown) => boolean) & { errors?: unknown };

/** The answer checked against its response schema by Fastify's own validator (its Ajv, with formats). */
function expectSchema(schema: TSchema, value: unknown): void {
  const check = validatorOf(schema);
  expect(check(value), JSON.stringify(check.errors)).toBe(true);
}

const ZERO = '0x0000000000000000000000000000000000000000';
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

function chainClients() {
  const chain = { id: t.demo.chainId, name: 'base-like anvil', nativeCurrency: { name: 'ETH', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [t.demo.rpcUrl] } } };
  const account = privateKeyToAccount(t.demo.wallets[0].privateKey);
  return {
    account,
    pub: createPublicClient({ chain, transport: http(t.demo.rpcUrl) }),
    wallet: testWallet(account, chain, t.demo.rpcUrl),
  };
}

const user = () => t.demo.wallets[0].address.toLowerCase() as Address;
const contracts = () => t.demo.stock.contracts;

async function send(calldata: { toAddress: Address; callData: Hex }): Promise<Hex> {
  const { wallet, pub } = chainClients();
  const hash = await wallet.sendTransaction({ to: calldata.toAddress, data: calldata.callData });
  expect((await pub.waitForTransactionReceipt({ hash })).status).toBe('success');
  return hash;
}

async function approve(token: Address, amount: bigint): Promise<void> {
  const { wallet, pub } = chainClients();
  await pub.waitForTransactionReceipt({ hash: await wallet.writeContract({ address: token, abi: erc20Abi, functionName: 'approve', args: [contracts().stockRouter, amount] }) });
}

/** A signed request answered as text, to see the wire itself. */
async function raw(method: string, path: string, opts: { query?: Record<string, string>; body?: unknown } = {}) {
  const s = t.writable.sign(method, path, opts);
  const res = await fetch(s.url, { method: s.method, headers: s.headers, body: s.body });
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
}

/** A fresh quote as a simulator in another process writes it. */
const writeQuote = (symbol: string, bid: string, ask: string, last: string) => upsertQuotes(t.stack.db, [{ symbol, bid, ask, last, timestamp: Date.now() }]);

// AAPL's candles: one a day and an hour ago (outside the 24 hours), then three inside them.
const minuteNow = Math.floor(Date.now() / MINUTE) * MINUTE;
const candle = (openTime: number, open: string, close: string, volume: string): CandleRecord => ({
  symbol: 'AAPL',
  interval: '1m',
  openTime,
  open,
  high: open > close ? open : close,
  low: open < close ? open : close,
  close,
  volume,
});
const CANDLES = [
  candle(minuteNow - 25 * HOUR, '150.00', '151.00', '999'),
  candle(minuteNow - 23 * HOUR, '213.45', '214.00', '1200'),
  candle(minuteNow - 2 * HOUR, '220.00', '221.10', '300'),
  candle(minuteNow - 3 * MINUTE, '229.00', '229.50', '45'),
];

beforeAll(async () => {
  const f = Fastify();
  f.post('/', { schema: { body: Type.Object({}) } }, async () => null);
  await f.ready();
  const compile = f.validatorCompiler!;
  validatorOf = (schema) => compile({ schema, method: 'POST', url: '/', httpPart: 'body' }) as never;
  await f.close();
  t = await startTestStack(
    { CHAIN_ID: '8453', STOCK_PRODUCT: 'Anchored', EXECUTOR_TICK_MS: '200', INDEXER_POLL_MS: '100', CASH_SETTLE_DELAY_MS: '300' },
    { role: ['stock-api', 'indexer', 'executor', 'relayer'] },
  );
  await upsertCandles(t.stack.db, CANDLES);
  await writeQuote('AAPL', '229.75', '229.85', '229.80');
  // The API reads the quotes table every second.
  await until(() => t.writable.request<any>('GET', '/api/v1/prices/AAPL'), (r) => r.code === 200);
}, 120_000);
afterAll(async () => {
  await t?.stop();
});

describe('the stack configured as Anchored', () => {
  it('runs on chain 8453 with product Anchored, and every request says so', async () => {
    expect(t.demo.chainId).toBe(8453);
    expect(t.demo.stock.product).toBe('Anchored');
    const { pub } = chainClients();
    expect(await pub.getChainId()).toBe(8453);
    const cfg = await t.writable.get<any>('/api/v1/config');
    expect(cfg).toMatchObject({ chainId: 8453, product: 'Anchored', productType: 'Anchored' });
    expect(cfg.exchangeFeeConfig).toEqual({ marketFeeBps: 10, limitFeeBps: 5, chainId: 8453, productType: 'Anchored' });
  });
});

describe('the envelope', () => {
  it('carries t, the server clock in ms, on a success, a 404, a validation error, an authentication failure and a probe', async () => {
    const before = Date.now();
    const ok = JSON.parse((await raw('GET', '/api/v1/config')).text);
    const notFound = JSON.parse((await raw('GET', '/api/v1/orders/999999999')).text);
    const invalid = JSON.parse((await raw('GET', '/api/v1/users/0x12/balance')).text);
    const s = t.writable.sign('GET', '/api/v1/config');
    const unauthorized = await (await fetch(s.url, { headers: { ...s.headers, 'x-api-sign': '00'.repeat(32) } })).json();
    const probe = await (await fetch(new URL('/healthz', t.stack.stockBaseUrl!))).json();
    const after = Date.now();
    expect(Object.keys(ok)).toEqual(['code', 'errMsg', 'uuid', 'data', 't']);
    expect(notFound).toEqual({ code: 404, errMsg: 'order: not found', uuid: expect.any(String), t: expect.any(Number) });
    expect(invalid).toMatchObject({ code: 400, errMsg: 'userId: must be a 0x-prefixed 20-byte hex address' });
    expect(unauthorized).toEqual({ code: 401, errMsg: 'Unauthorized', uuid: expect.any(String), t: expect.any(Number) });
    for (const body of [ok, notFound, invalid, unauthorized, probe]) {
      expect(Number.isSafeInteger(body.t)).toBe(true);
      expect(body.t).toBeGreaterThanOrEqual(before);
      expect(body.t).toBeLessThanOrEqual(after);
    }
  });

  it('lets the SDK set its clock from t', async () => {
    const skewed = t.client(t.demo.stock.keys.writable.apiKey, t.demo.stock.keys.writable.apiSecret, { now: () => Date.now() - 120_000 });
    expect((await skewed.request('GET', '/api/v1/config')).code).toBe(401);
    const offset = await skewed.syncTime();
    expect(Math.abs(offset - 120_000)).toBeLessThan(1_000);
    expect((await skewed.request('GET', '/api/v1/config')).code).toBe(200);
  });
});

describe('symbols', () => {
  it('answer the token fields and the 24-hour figures from the candles, the money as exact digits', async () => {
    const rows = await until(
      () => t.writable.get<any[]>('/api/v1/symbols'),
      (r) => r.find((s) => s.symbol === 'AAPL')?.price === 229.8,
    );
    expectSchema(Type.Array(StockSymbolSchema), rows);
    const aapl = rows.find((s) => s.symbol === 'AAPL');
    const nowS = Math.floor(Date.now() / 1000);
    expect(aapl.lastUpdateTimestamp).toBeGreaterThan(nowS - 10);
    expect(aapl.lastUpdateTimestamp).toBeLessThanOrEqual(nowS);
    expect(aapl).toEqual({
      symbol: 'AAPL',
      name: 'Apple Inc.',
      underlying: 'AAPL',
      exchange: 'NASDAQ',
      address: contracts().stocks.AAPL,
      decimals: 18,
      tradable: true,
      contractAddress: contracts().stocks.AAPL,
      contractSymbol: 'AAPL',
      contractName: 'Apple Inc.',
      onChainDecimals: 18,
      fractionable: true,
      overnightTradable: true,
      fractionalEhEnabled: true,
      // 229.80 − 213.45 (the open of the first candle of the 24 hours); 16.35 / 213.45 = 7.6598… %;
      // 1200 + 300 + 45 shares (the candle 25 hours ago is not in them).
      price: 229.8,
      change24H: 16.35,
      change24HPercent: 7.66,
      volume24H: 1545,
      logoUrl: '',
      pdfUrl: '',
      lastUpdateTimestamp: aapl.lastUpdateTimestamp,
    });
    // Nothing to compute TSLA's from: no quote, no candle.
    expect(rows.find((s) => s.symbol === 'TSLA')).toMatchObject({ price: null, change24H: null, change24HPercent: null, volume24H: 0, contractSymbol: 'TSLA', contractName: 'Tesla, Inc.' });
    // On the wire the price keeps the quote's own digits.
    const answer = await raw('GET', '/api/v1/symbols');
    expect(answer.type).toBe('application/json; charset=utf-8');
    const text = answer.text;
    expect(text).toContain('"price":229.80,"change24H":16.35,"change24HPercent":7.66,"volume24H":1545,');
  });
});

describe('prices/{symbol}', () => {
  it('takes a ticker or the token address in any case, and answers {basicInfo, onChain} beside the tokex fields', async () => {
    const { pub } = chainClients();
    const supply = await pub.readContract({ address: contracts().stocks.AAPL, abi: erc20Abi, functionName: 'totalSupply' });
    const address = contracts().stocks.AAPL;
    const answers = [];
    for (const key of ['AAPL', 'aapl', address.toLowerCase(), address.toUpperCase().replace('0X', '0x'), address.toUpperCase()]) {
      answers.push(await t.writable.get<any>(`/api/v1/prices/${key}`));
    }
    const q = answers[0];
    expectSchema(StockQuoteSchema, q);
    for (const a of answers) expect({ ...a, timestamp: 0, basicInfo: { ...a.basicInfo, timestamp: 0 } }).toEqual({ ...q, timestamp: 0, basicInfo: { ...q.basicInfo, timestamp: 0 } });
    expect(q).toMatchObject({ symbol: 'AAPL', bid: '229.75', ask: '229.85', last: '229.80', marketStatus: 'open', stale: false });
    expect(q.basicInfo).toEqual({
      symbol: 'AAPL',
      name: 'Apple Inc.',
      underlying: 'AAPL',
      exchange: 'NASDAQ',
      bid: '229.75',
      ask: '229.85',
      last: '229.80',
      timestamp: q.timestamp,
      marketStatus: 'open',
      session: 'regular',
      stale: false,
    });
    expect(q.onChain).toEqual({
      contractAddress: address,
      contractSymbol: 'AAPL',
      contractName: 'Apple Inc.',
      decimals: 18,
      onChainDecimals: 18,
      totalSupply: formatUnits(supply, 18),
      tradable: true,
    });
  });

  it('answers an unlisted token address as a 404 naming it, and a key longer than an address as a 400', async () => {
    const stranger = '0x00000000000000000000000000000000000000aB';
    expect(await t.writable.request('GET', `/api/v1/prices/${stranger}`)).toMatchObject({
      httpStatus: 404,
      code: 404,
      errMsg: `symbol: no listed token has the address ${stranger.toLowerCase()} on chain 8453`,
      t: expect.any(Number),
    });
    expect(await t.writable.request('GET', '/api/v1/prices/APPL')).toMatchObject({ httpStatus: 404, errMsg: 'symbol: "APPL" is not listed' });
    expect(await t.writable.request('GET', `/api/v1/prices/${stranger}0`)).toMatchObject({ httpStatus: 400, code: 400, errMsg: expect.stringMatching(/^symbol: /) });
  });
});

describe('users and balances', () => {
  it('users/{userId}: userId and userAddress, One Click in both vocabularies', async () => {
    const u = await t.writable.get<any>(`/api/v1/users/${t.demo.wallets[0].address}`);
    expect(u).toEqual({
      userId: user(),
      userAddress: user(),
      address: user(),
      oneClick: { status: 'disabled', delegationStatus: 'disabled', delegatee: ZERO },
      boundToKey: true,
      timestamp: expect.any(Number),
    });
  });

  it('the balance: both mUSD spellings as strings, every token with Anchored\'s fields and the allowance to spenderAddress', async () => {
    const c = contracts();
    await approve(c.cashToken, parseUnits('1234.5', 6));
    await approve(c.stocks.AAPL, parseUnits('7.25', 18));
    const { pub } = chainClients();
    const [musd, aaplWallet, usdcWallet] = await Promise.all([
      pub.readContract({ address: c.cashier, abi: cashierAbi, functionName: 'balanceOf', args: [user()] }),
      pub.readContract({ address: c.stocks.AAPL, abi: erc20Abi, functionName: 'balanceOf', args: [user()] }),
      pub.readContract({ address: c.cashToken, abi: erc20Abi, functionName: 'balanceOf', args: [user()] }),
    ]);
    const b = await t.writable.get<any>(`/api/v1/users/${user()}/balance`, { spenderAddress: c.stockRouter });
    expectSchema(StockBalanceSchema, b);
    expect(b).toMatchObject({
      userId: user(),
      chainId: 8453,
      productType: 'Anchored',
      address: user(),
      musdBalance: formatUnits(musd, 18),
      mUsdBalance: formatUnits(musd, 18),
      mUsdDetail: { available: formatUnits(musd, 18), locked: '0', total: formatUnits(musd, 18) },
      spenderAddress: c.stockRouter.toLowerCase(),
    });
    expect(b.tokenBalances.map((r: any) => r.symbol)).toEqual([...Object.keys(c.stocks), 'USDC']);
    expect(b.tokenBalances.find((r: any) => r.symbol === 'AAPL')).toEqual({
      symbol: 'AAPL',
      tokenAddress: c.stocks.AAPL,
      decimals: 18,
      walletBalance: formatUnits(aaplWallet, 18),
      exchangeBalance: '0',
      lockedExchangeBalance: '0',
      walletAllowance: '7.25',
      address: c.stocks.AAPL,
      name: 'Apple Inc.',
      stockSymbol: 'AAPL',
      isStock: true,
      price: 229.8,
    });
    expect(b.tokenBalances.find((r: any) => r.symbol === 'TSLA')).toMatchObject({ isStock: true, price: null, walletAllowance: '0' });
    expect(b.tokenBalances.find((r: any) => r.symbol === 'USDC')).toEqual({
      symbol: 'USDC',
      tokenAddress: c.cashToken,
      decimals: 6,
      walletBalance: formatUnits(usdcWallet, 6),
      exchangeBalance: '0',
      lockedExchangeBalance: '0',
      walletAllowance: '1234.5',
      address: c.cashToken,
      name: 'USDC',
      stockSymbol: null,
      isStock: false,
      price: null,
    });
    expect(b.cashTokenBalances).toEqual([{ symbol: 'USDC', tokenAddress: c.cashToken, decimals: 6, walletBalance: formatUnits(usdcWallet, 6), walletAllowance: '1234.5' }]);
    expect((await raw('GET', `/api/v1/users/${user()}/balance`)).text).toMatch(/"isStock":true,"price":229\.80\}/);
    // Without spenderAddress: Anchored's default, the zero address, to which nothing is allowed.
    const plain = await t.writable.get<any>(`/api/v1/users/${user()}/balance`);
    expect(plain.spenderAddress).toBe(ZERO);
    expect(plain.tokenBalances.map((r: any) => r.walletAllowance)).toEqual(plain.tokenBalances.map(() => '0'));
    expect(plain.cashTokenBalances[0]).not.toHaveProperty('walletAllowance');
  });
});

describe('One Click, orders and cash operations', () => {
  it('One Click status answers enable once the wallet delegated, and disabled before', async () => {
    expect(await t.writable.get('/api/v1/1ct/status')).toEqual({ status: 'disabled', delegationStatus: 'disabled', delegatee: RELAYER });
    const enabled = await t.writable.enableOneClick(chainClients().account);
    expect(enabled).toMatchObject({ status: 'enable', delegationStatus: 'enabled', delegatee: RELAYER, txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    expect(await t.writable.get('/api/v1/1ct/status')).toEqual({ status: 'enable', delegationStatus: 'enabled', delegatee: RELAYER });
    expect((await t.writable.get<any>(`/api/v1/users/${user()}`)).oneClick).toEqual({ status: 'enable', delegationStatus: 'enabled', delegatee: RELAYER });
  });

  let depositId = '';

  it('a cash deposit\'s detail nests depositOperation beside mapping, its amounts exact numbers', async () => {
    const c = contracts();
    const cd = await t.writable.post<any>('/api/v1/cash/deposits/calldata', { tokenAddress: c.cashToken, tokenAmount: '500.25' });
    const txHash = await send(cd);
    const rec = await t.writable.post<any>('/api/v1/cash/deposits/tx', { txHash });
    expect(rec).toMatchObject({ indexed: true, mappingStatus: 'Indexed' });
    depositId = rec.operationId;
    const op = await until(() => t.writable.get<any>(`/api/v1/cash/deposits/${depositId}`), (o) => o.operationStatus === 'completed');
    expectSchema(StockCashOperationSchema, op);
    expect(op).toMatchObject({ operationStatus: 'completed', tokenAmount: '500.25', mUsdAmount: '500.25', instant: true, txHash });
    expect(op.mappingStatus).toBe('Indexed');
    expect(op.mapping).toEqual({ txHash, operationType: 'deposit', operationId: depositId, status: 'Indexed' });
    expect(op.depositOperation).toEqual({
      operationId: depositId,
      userAddress: user(),
      tokenAddress: c.cashToken.toLowerCase(),
      status: 'completed',
      isInstant: true,
      amount: 500.25,
      feeAmount: 0,
      createTxHash: txHash,
      settleTxHash: null,
      creditAmount: 500.25,
    });
    expect(op.withdrawalOperation).toBeNull();
    const text = (await raw('GET', `/api/v1/cash/deposits/${depositId}`)).text;
    expect(text).toContain('"isInstant":true,"amount":500.25,"feeAmount":0,');
    expect(text).toContain('"creditAmount":500.25}');
    // The list and the tx answer show the operation the same way.
    const list = await t.writable.get<any>('/api/v1/cash/deposits');
    expect(list.rows.find((r: any) => r.operationId === depositId)).toEqual(op);
  });

  it('a cash withdrawal\'s detail nests withdrawalOperation', async () => {
    const c = contracts();
    const cd = await t.writable.post<any>('/api/v1/cash/withdrawals/calldata', { tokenAddress: c.cashToken, tokenAmount: '100' });
    expect(cd).toMatchObject({ method: 'withdraw', chainId: 8453, productType: 'Anchored' });
    const txHash = await send(cd);
    const rec = await t.writable.post<any>('/api/v1/cash/withdrawals/tx', { txHash });
    const op = await until(() => t.writable.get<any>(`/api/v1/cash/withdrawals/${rec.operationId}`), (o) => o.operationStatus === 'completed');
    expect(op.mapping).toEqual({ txHash, operationType: 'withdraw', operationId: rec.operationId, status: 'Indexed' });
    expect(op.depositOperation).toBeNull();
    expect(op.withdrawalOperation).toEqual({
      operationId: rec.operationId,
      userAddress: user(),
      tokenAddress: c.cashToken.toLowerCase(),
      status: 'completed',
      isInstant: true,
      amount: 100,
      feeAmount: 0,
      createTxHash: txHash,
      settleTxHash: null,
      debitAmount: 100,
    });
  });

  it('a stock deposit\'s and withdrawal\'s details nest their operation as a cash operation\'s do', async () => {
    const c = contracts();
    const aapl = c.stocks.AAPL;
    const depTx = await send(await t.writable.post<any>('/api/v1/stock/deposits/calldata', { tokenAddress: aapl, tokenAmount: '2.5' }));
    const dep = await t.writable.post<any>('/api/v1/stock/deposits/tx', { txHash: depTx });
    const d = await until(() => t.writable.get<any>(`/api/v1/stock/deposits/${dep.operationId}`), (o) => o.operationStatus === 'completed');
    expectSchema(StockTransferOperationSchema, d);
    expect(d).toMatchObject({ tokenAmount: '2.5', txHash: depTx, mappingStatus: 'Indexed', withdrawalOperation: null });
    expect(d.mapping).toEqual({ txHash: depTx, operationType: 'deposit', operationId: dep.operationId, status: 'Indexed' });
    expect(d.depositOperation).toEqual({
      operationId: dep.operationId,
      userAddress: user(),
      tokenAddress: aapl.toLowerCase(),
      status: 'completed',
      isInstant: true,
      amount: 2.5,
      feeAmount: 0,
      createTxHash: depTx,
    });
    expect((await raw('GET', `/api/v1/stock/deposits/${dep.operationId}`)).text).toContain('"isInstant":true,"amount":2.5,"feeAmount":0,');
    const wTx = await send(await t.writable.post<any>('/api/v1/stock/withdrawals/calldata', { tokenAddress: aapl, tokenAmount: '0.000000000000000001' }));
    const wd = await t.writable.post<any>('/api/v1/stock/withdrawals/tx', { txHash: wTx });
    const w = await until(() => t.writable.get<any>(`/api/v1/stock/withdrawals/${wd.operationId}`), (o) => o.operationStatus === 'completed');
    expect(w).toMatchObject({ depositOperation: null, mapping: { txHash: wTx, operationType: 'withdraw', operationId: wd.operationId, status: 'Indexed' } });
    expect(w.withdrawalOperation).toMatchObject({ operationId: wd.operationId, isInstant: true, amount: 1e-18, createTxHash: wTx });
    // The digits on the wire, not the double's 1e-18.
    expect((await raw('GET', `/api/v1/stock/withdrawals/${wd.operationId}`)).text).toContain('"amount":0.000000000000000001,');
  });

  it('orders carry Anchored\'s status beside state: New while resting, Canceled, Filled', async () => {
    const c = contracts();
    await writeQuote('AAPL', '229.75', '229.85', '229.80');
    // A limit buy far below the market rests.
    const limit = await t.writable.post<any>('/api/v1/orders/calldata', { symbol: 'AAPL', side: 'Buy', type: 'Limit', quantity: '1', price: '1', timeInForce: 'DAY', deadline: Math.floor(Date.now() / 1000) + 3600 });
    expect(limit).toMatchObject({ method: 'placeLimitOrder', chainId: 8453, productType: 'Anchored' });
    const placed = await t.writable.post<any>('/api/v1/orders/tx', { txHash: await send(limit) });
    expect(placed).toMatchObject({ indexed: true, mappingStatus: 'Indexed' });
    const resting = await t.writable.get<any>(`/api/v1/orders/${placed.orderId}`);
    expectSchema(StockOrderSchema, resting);
    expect(resting).toMatchObject({ state: 'open', status: 'New', openOrder: { status: 'OPEN', filledQuantity: '0' } });
    const cancel = await t.writable.delete<any>(`/api/v1/orders/${placed.orderId}/calldata`);
    expect(cancel).toMatchObject({ toAddress: c.stockRouter, value: '0', method: 'cancelLimitOrder', chainId: 8453, productType: 'Anchored' });
    await send(cancel);
    const canceled = await until(() => t.writable.get<any>(`/api/v1/orders/${placed.orderId}`), (o) => o.state === 'history');
    expect(canceled).toMatchObject({ state: 'history', status: 'Canceled', history: { status: 'CANCELED' } });

    // A market buy fills against the quote.
    await writeQuote('AAPL', '229.75', '229.85', '229.80');
    const market = await t.writable.post<any>('/api/v1/orders/calldata', { symbol: 'AAPL', side: 'Buy', type: 'Market', notional: '100', deadline: Math.floor(Date.now() / 1000) + 3600 });
    expect(market.method).toBe('placeMarketOrder');
    const bought = await t.writable.post<any>('/api/v1/orders/tx', { txHash: await send(market) });
    const filled = await until(() => t.writable.get<any>(`/api/v1/orders/${bought.orderId}`), (o) => o.state === 'history', 30_000);
    expect(filled).toMatchObject({ state: 'history', status: 'Filled', history: { status: 'FILLED' } });
    const listed = await t.writable.get<any>('/api/v1/orders');
    expect(Object.fromEntries(listed.rows.map((o: any) => [o.orderId, o.status]))).toMatchObject({ [placed.orderId]: 'Canceled', [bought.orderId]: 'Filled' });
  });
});

// After the deposit above: the orders' pre-checks read the bound wallet's mUSD.
describe('calldata answers', () => {
  const selector = (method: StockRouterMethod) => toFunctionSelector(getAbiItem({ abi: stockRouterAbi, name: method }) as never);
  const deadline = () => Math.floor(Date.now() / 1000) + 3600;

  it('name the router function, the chain and the product, and keep toAddress, value and callData', async () => {
    const c = contracts();
    const aapl = c.stocks.AAPL;
    const move = (tokenAddress: string, tokenAmount: string) => ({ tokenAddress, tokenAmount });
    const cases: Array<[StockRouterMethod, string, string, unknown]> = [
      ['placeMarketOrder', 'POST', '/api/v1/orders/calldata', { stockAddress: aapl, side: 'Buy', type: 'Market', notional: '10', deadline: deadline() }],
      ['placeLimitOrder', 'POST', '/api/v1/orders/calldata', { stockAddress: aapl, side: 'Buy', type: 'Limit', quantity: '1.25', price: '180.50', timeInForce: 'DAY', deadline: deadline() }],
      ['depositAndMarketBuy', 'POST', '/api/v1/orders/with-deposit/calldata', { symbol: 'AAPL', side: 'Buy', type: 'Market', notional: '10', deadline: deadline(), tokenAmount: '10' }],
      ['depositStockAndLimitSell', 'POST', '/api/v1/orders/with-deposit/calldata', { symbol: 'AAPL', side: 'Sell', type: 'Limit', quantity: '1', price: '300', timeInForce: 'DAY', deadline: deadline() }],
      ['deposit', 'POST', '/api/v1/cash/deposits/calldata', move(c.cashToken, '500')],
      ['withdraw', 'POST', '/api/v1/cash/withdrawals/calldata', move(c.cashToken, '1')],
      ['depositStock', 'POST', '/api/v1/stock/deposits/calldata', move(aapl, '1')],
    ];
    for (const [method, verb, path, body] of cases) {
      const r = await t.writable.request<any>(verb, path, { body });
      expect(r.code, `${method}: ${r.errMsg}`).toBe(200);
      expect(r.data, method).toMatchObject({ toAddress: c.stockRouter, value: '0', method, chainId: 8453, productType: 'Anchored' });
      expect(r.data.callData.slice(0, 10), method).toBe(selector(method));
    }
    // A stock withdrawal needs stock at the exchange: the deposit's calldata, sent, puts it there.
    await send(await t.writable.post<any>('/api/v1/stock/deposits/calldata', move(aapl, '1')));
    const w = await t.writable.post<any>('/api/v1/stock/withdrawals/calldata', move(aapl, '1'));
    expect(w).toMatchObject({ toAddress: c.stockRouter, value: '0', method: 'withdrawStock', chainId: 8453, productType: 'Anchored' });
    expect(w.callData.slice(0, 10)).toBe(selector('withdrawStock'));
  });
});
