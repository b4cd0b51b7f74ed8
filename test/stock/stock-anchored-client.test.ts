/**
 * Issue 30, "Real parts": a client written from Anchored's documentation alone
 * (test/support/anchored-client.ts: the Node.js helper's canonical URI with sorted, unencoded query
 * values, the five-line HMAC, Anchored's headers and envelope) runs the documented requests,
 * with the documented field names only, against the stack configured as Anchored's production
 * (`CHAIN_ID=8453`, `STOCK_PRODUCT=Anchored`, served under a `/rwa/trading` context path as
 * Anchored's base URL is): market data, the balance with `spenderAddress`, a self-submitted cash
 * deposit and market buy (calldata, the wallet's transaction, `…/tx`), and One Click
 * (status, prepare, the wallet's EIP-712 `Delegate` signature, enable, `orders/send`), each
 * operation polled to its final state. Only the environment comes from the stack (addresses,
 * the funded wallet, its key, the quote and candles it prices from); every request is the
 * documentation's, and so is every field read, except where the documentation is cut off: the
 * ids in the `…/tx` and `orders/send` answers and where the K-line bars sit in `data`.
 *
 * Two documented types differ (soft assertions, so that the flow still runs to its end): the
 * bars' `open`/`high` are documented as numbers (A12), and `1ct/prepare`'s `nonce` too (A25, A26).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, createWalletClient, erc20Abi, http, parseUnits, type Address, type Hex } from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { upsertCandles, type CandleRecord } from '../../src/storage/candle-store.ts';
import { upsertQuotes } from '../../src/storage/quote-store.ts';
import { AnchoredClient, anchoredCanonicalUri, type AnchoredAnswer } from '../support/anchored-client.ts';
import { RELAYER } from '../support/one-click-users.ts';
import { until } from '../support/poll.ts';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';
import { testWallet } from '../support/chain-fixture.ts';

const CHAIN_ID = 8453;
const PRODUCT = 'Anchored';
const CONTEXT_PATH = '/rwa/trading';
const MINUTE = 60_000;
const HASH = /^0x[0-9a-f]{64}$/;
/** The docs' market-buy example deadline (2030-01-01). */
const DOC_DEADLINE = 1893456000;
/** Anchored's final order statuses (enums: mapped order status). */
const FINAL = ['Filled', 'Canceled', 'Expired', 'Rejected', 'Failed'];

let t: TestStack;
let api: AnchoredClient;
let account: PrivateKeyAccount;
let user: Address;
let pub: ReturnType<typeof createPublicClient>;
let wallet: ReturnType<typeof createWalletClient>;
/** Every answer the client received, for the envelope check at the end. */
const answers: AnchoredAnswer[] = [];

const c = () => t.demo.stock.contracts;

/** A success as the documentation defines one; answers `data`. */
function ok<T = any>(a: AnchoredAnswer<T>): T {
  answers.push(a);
  expect({ code: a.code, errMsg: a.errMsg }, `${a.uri}: ${a.text.slice(0, 300)}`).toEqual({ code: 200, errMsg: '' });
  return a.data;
}

const get = async <T = any>(path: string, query?: Record<string, string | number>) => ok<T>(await api.get<T>(path, query));
const post = async <T = any>(path: string, body?: unknown) => ok<T>(await api.post<T>(path, body));

/** Polls a detail until it answers 200 and `done` holds (the indexer and the executor come later). */
async function poll<T = any>(path: string, done: (d: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const a = await until(
    () => api.get<T>(path),
    (r) => r.code === 200 && done(r.data),
    timeoutMs,
  );
  return ok(a);
}

/** Sends `{toAddress, value, callData}` from the wallet, as the self-submit flow does; the mined hash. */
async function submit(calldata: { toAddress: Address; value: string; callData: Hex }): Promise<Hex> {
  const hash = await wallet.sendTransaction({ account, chain: wallet.chain, to: calldata.toAddress, value: BigInt(calldata.value), data: calldata.callData });
  expect((await pub.waitForTransactionReceipt({ hash })).status).toBe('success');
  return hash;
}

// One-minute AAPL candles ending at the minute before now, and a quote: the market figures are
// what this test writes (no simulator), so each has one expected value.
const minuteNow = Math.floor(Date.now() / MINUTE) * MINUTE;
const CANDLES: CandleRecord[] = [6, 5, 4, 3, 2, 1].map((ago, i) => ({
  symbol: 'AAPL',
  interval: '1m',
  openTime: minuteNow - ago * MINUTE,
  open: `${220 + i}.00`,
  high: `${220 + i}.50`,
  low: `${219 + i}.50`,
  close: `${220 + i}.25`,
  volume: `${100 + i}`,
}));
/** The executor uses a quote younger than 30 s: written again before each order. */
const writeQuote = () => upsertQuotes(t.stack.db, [{ symbol: 'AAPL', bid: '229.75', ask: '229.85', last: '229.80', timestamp: Date.now() }]);

beforeAll(async () => {
  t = await startTestStack(
    {
      CHAIN_ID: String(CHAIN_ID),
      STOCK_PRODUCT: PRODUCT,
      STOCK_API_PREFIX: CONTEXT_PATH,
      EXECUTOR_TICK_MS: '200',
      INDEXER_POLL_MS: '100',
      CASH_SETTLE_DELAY_MS: '300',
    },
    { role: ['stock-api', 'indexer', 'executor', 'relayer'] },
  );
  await upsertCandles(t.stack.db, CANDLES);
  await writeQuote();

  // wallets[1]: funded by the stack at deployment (USDC and every stock), not bound to the demo key.
  const funded = t.demo.wallets[1];
  account = privateKeyToAccount(funded.privateKey);
  user = account.address;
  const made = await t.stack.keys.create({
    permission: 'WRITABLE',
    ipWhitelist: ['127.0.0.1', '::1'],
    chainId: CHAIN_ID,
    product: PRODUCT,
    userAddress: user,
    label: 'anchored-client',
  });
  expect(t.stack.stockBaseUrl!.endsWith(CONTEXT_PATH)).toBe(true);
  api = new AnchoredClient({ baseUrl: t.stack.stockBaseUrl!, apiKey: made.key.apiKey, apiSecret: made.apiSecret, chainId: CHAIN_ID, productType: PRODUCT });

  const chain = { id: CHAIN_ID, name: 'base (anvil)', nativeCurrency: { name: 'ETH', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [t.demo.rpcUrl] } } };
  pub = createPublicClient({ chain, transport: http(t.demo.rpcUrl) });
  wallet = testWallet(account, chain, t.demo.rpcUrl);
  expect(await pub.getChainId()).toBe(CHAIN_ID);
  // The API reads the quotes table every second.
  await until(() => api.get('/api/v1/prices/AAPL'), (r) => r.code === 200 && r.data?.basicInfo?.last !== undefined);
}, 120_000);

afterAll(async () => {
  await t?.stop();
});

describe('the Node helper\'s canonical URI', () => {
  it('sorts the keys, expands arrays, skips null/undefined and encodes nothing', () => {
    expect(anchoredCanonicalUri('/api/v1/orders', { page: 1, limit: 10 })).toBe('/api/v1/orders?limit=10&page=1');
    expect(anchoredCanonicalUri('/api/v1/x', { b: ['2', '1'], a: null, c: undefined, d: 'a b:c,d' })).toBe('/api/v1/x?b=2&b=1&d=a b:c,d');
    expect(anchoredCanonicalUri('/api/v1/symbols')).toBe('/api/v1/symbols');
  });
});

describe('market data', () => {
  it('GET /api/v1/symbols: the documented row fields', async () => {
    const rows = await get<any[]>('/api/v1/symbols');
    expect(Array.isArray(rows)).toBe(true);
    expect(rows.map((r) => r.symbol)).toEqual(Object.keys(c().stocks));
    const aapl = rows.find((r) => r.symbol === 'AAPL');
    expect(aapl).toMatchObject({
      symbol: 'AAPL',
      contractAddress: c().stocks.AAPL,
      contractSymbol: 'AAPL',
      contractName: 'Apple Inc.',
      name: 'Apple Inc.',
      decimals: 18,
      onChainDecimals: 18,
      tradable: true,
      fractionable: true,
      overnightTradable: true,
      fractionalEhEnabled: true,
      price: 229.8,
      // 229.80 − 220.00 (the first candle's open inside the 24 hours); 9.80 / 220 = 4.4545… %.
      change24H: 9.8,
      change24HPercent: 4.45,
      volume24H: 100 + 101 + 102 + 103 + 104 + 105,
    });
    for (const key of ['logoUrl', 'pdfUrl']) expect(typeof aapl[key], key).toBe('string');
    const nowS = Math.floor(Date.now() / 1000);
    expect(aapl.lastUpdateTimestamp).toBeGreaterThan(nowS - 60);
    expect(aapl.lastUpdateTimestamp).toBeLessThanOrEqual(nowS);
  });

  it('GET /api/v1/prices/{symbol} by ticker and by token address: {basicInfo, onChain}', async () => {
    const byTicker = await get('/api/v1/prices/AAPL');
    const byAddress = await get(`/api/v1/prices/${c().stocks.AAPL}`);
    for (const q of [byTicker, byAddress]) {
      expect(q.basicInfo).toMatchObject({ symbol: 'AAPL', bid: '229.75', ask: '229.85', last: '229.80' });
      expect(q.onChain).toMatchObject({ contractAddress: c().stocks.AAPL, contractSymbol: 'AAPL', contractName: 'Apple Inc.', decimals: 18, onChainDecimals: 18, tradable: true });
    }
    expect(byAddress.onChain).toEqual(byTicker.onChain);
  });

  it('GET /api/v1/prices/{symbol}/history with endTime (seconds), interval and limit, signed sorted and unencoded', async () => {
    const endTime = Math.floor(Date.now() / 1000);
    // Given unsorted: the helper sorts them into the signed and requested URI.
    const a = await api.get('/api/v1/prices/AAPL/history', { limit: 5, interval: '1m', endTime });
    expect(a.uri).toBe(`/api/v1/prices/AAPL/history?endTime=${endTime}&interval=1m&limit=5`);
    const data = ok(a);
    // Where the bars sit in `data` is not documented (cut): an array, or the list inside it.
    const bars: any[] = Array.isArray(data) ? data : data.candles;
    expect(bars).toHaveLength(5);
    // The last five of the six candles, oldest first, `open` and `high` numbers as Anchored types them.
    expect(bars.map((b) => [typeof b.open, typeof b.high])).toEqual(Array(5).fill(['number', 'number']));
    expect(a.text).toContain('"open":225.00,"high":225.50,');
    expect(bars.map((b) => [b.open, b.high])).toEqual([
      [221, 221.5],
      [222, 222.5],
      [223, 223.5],
      [224, 224.5],
      [225, 225.5],
    ]);
  });
});

describe('query values the Node helper leaves unencoded', () => {
  it('authenticate: a value with a space, a colon or a comma, signed as the helper signs it, is not a 401', async () => {
    for (const status of ['Partial filled', 'a:b', 'x,y']) {
      const r = await api.get('/api/v1/orders', { page: 1, limit: 5, status });
      expect(r.uri).toBe(`/api/v1/orders?limit=5&page=1&status=${status}`);
      // Past authentication: the filter's own answer (a listed status or a 400 naming it), never 401.
      expect({ status, code: r.code }).not.toEqual({ status, code: 401 });
    }
  });
});

describe('self-submit: balance, deposit and a market buy', () => {
  let musdAfterDeposit = '';

  it('GET /api/v1/users/{userId}/balance?spenderAddress=: mUSD, wallet balances and the allowance', async () => {
    const b = await get(`/api/v1/users/${user}/balance`, { spenderAddress: c().stockRouter });
    expect(b).toMatchObject({ chainId: CHAIN_ID, productType: PRODUCT, address: user.toLowerCase(), musdBalance: '0', mUsdBalance: '0' });
    const usdc = b.tokenBalances.find((r: any) => r.address.toLowerCase() === c().cashToken.toLowerCase());
    expect(usdc).toMatchObject({ symbol: 'USDC', isStock: false, stockSymbol: null, decimals: 6, price: null, walletBalance: '100000', walletAllowance: '0' });
    const aapl = b.tokenBalances.find((r: any) => r.stockSymbol === 'AAPL');
    expect(aapl).toMatchObject({ address: c().stocks.AAPL, symbol: 'AAPL', name: 'Apple Inc.', isStock: true, decimals: 18, price: 229.8, walletBalance: '100', exchangeBalance: '0', walletAllowance: '0' });
  });

  it('approve, POST cash/deposits/calldata {userAddress, tokenAddress, tokenAmount: 100}, send, cash/deposits/tx, detail to its final state', async () => {
    // Pre-authorisation: approve(spender, tokenAmount × 10^decimals), decimals from the balance row.
    const before = await get(`/api/v1/users/${user}/balance`, { spenderAddress: c().stockRouter });
    const usdcRow = before.tokenBalances.find((r: any) => r.address.toLowerCase() === c().cashToken.toLowerCase());
    const approveHash = await wallet.writeContract({ account, chain: wallet.chain, address: c().cashToken, abi: erc20Abi, functionName: 'approve', args: [c().stockRouter, parseUnits('100', usdcRow.decimals)] });
    expect((await pub.waitForTransactionReceipt({ hash: approveHash })).status).toBe('success');
    const allowed = await get(`/api/v1/users/${user}/balance`, { spenderAddress: c().stockRouter });
    expect(allowed.tokenBalances.find((r: any) => r.address.toLowerCase() === c().cashToken.toLowerCase()).walletAllowance).toBe('100');

    const cd = await post('/api/v1/cash/deposits/calldata', { userAddress: user, tokenAddress: c().cashToken, tokenAmount: 100 });
    expect(cd).toMatchObject({ chainId: CHAIN_ID, productType: PRODUCT, toAddress: c().stockRouter, value: '0', method: 'deposit' });
    expect(cd.callData).toMatch(/^0x[0-9a-f]+$/);
    const txHash = await submit(cd);
    const rec = await post('/api/v1/cash/deposits/tx', { txHash });
    const operationId = rec.operationId ?? rec.mapping?.operationId;
    expect(typeof operationId).toBe('string');

    const op = await poll(`/api/v1/cash/deposits/${operationId}`, (d) => d.depositOperation?.status === 'completed');
    expect(op.withdrawalOperation).toBeNull();
    expect(op.depositOperation).toMatchObject({
      operationId,
      userAddress: user.toLowerCase(),
      tokenAddress: c().cashToken.toLowerCase(),
      status: 'completed',
      isInstant: true,
      amount: 100,
      creditAmount: 100,
      feeAmount: 0,
      createTxHash: txHash,
    });
    expect(op.mapping).toMatchObject({ txHash, operationType: 'deposit', operationId });
    expect(typeof op.mappingStatus).toBe('string');
    expect(op.operationStatus).toBe('completed');

    const after = await get(`/api/v1/users/${user}/balance`, { spenderAddress: c().stockRouter });
    expect(after).toMatchObject({ musdBalance: '100', mUsdBalance: '100' });
    const usdcAfter = after.tokenBalances.find((r: any) => r.address.toLowerCase() === c().cashToken.toLowerCase());
    expect(usdcAfter).toMatchObject({ walletBalance: '99900', walletAllowance: '0' });
    musdAfterDeposit = after.musdBalance;
  });

  it('POST orders/calldata with the documented market-buy example, send, orders/tx, order detail to Filled', async () => {
    expect(musdAfterDeposit).toBe('100');
    await writeQuote();
    const body = { stockAddress: c().stocks.AAPL, side: 'Buy', type: 'Market', notional: '10', deadline: DOC_DEADLINE };
    const cd = await post('/api/v1/orders/calldata', body);
    expect(cd).toMatchObject({ chainId: CHAIN_ID, productType: PRODUCT, toAddress: c().stockRouter, value: '0', method: 'placeMarketOrder' });
    const txHash = await submit(cd);
    const rec = await post('/api/v1/orders/tx', { txHash });
    const orderId = rec.orderId ?? rec.mapping?.orderId;
    expect(typeof orderId).toBe('string');
    const byTx = await get(`/api/v1/orders/tx/${txHash}`);
    expect(JSON.stringify(byTx)).toContain(`"orderId":"${orderId}"`);

    const order = await poll(`/api/v1/orders/${orderId}`, (o) => FINAL.includes(o.status));
    expect(order).toMatchObject({ orderId, status: 'Filled', side: 'Buy', type: 'Market', notional: '10' });
    const b = await get(`/api/v1/users/${user}/balance`, { spenderAddress: c().stockRouter });
    // The fill at the ask (229.85) takes as many shares as the 10 mUSD locked pay for with the
    // 10 bps market fee: notional ceil(q·229.85) = 9.990009990009989846 and fee ceil(notional·0.001)
    // = 0.00999000999000999 for q = 0.043463171590210963, the 0.000000000000000164 left unlocked.
    // The shares are held at the exchange (`exchangeBalance`), the wallet's stay.
    expect(b).toMatchObject({ musdBalance: '90.000000000000000164', mUsdBalance: '90.000000000000000164' });
    expect(b.tokenBalances.find((r: any) => r.stockSymbol === 'AAPL')).toMatchObject({ walletBalance: '100', exchangeBalance: '0.043463171590210963' });
  });
});

describe('One Click', () => {
  it('status disabled; prepare; the wallet signs Delegate; enable; status enable', async () => {
    const status = await get('/api/v1/1ct/status');
    expect(status).toMatchObject({ status: 'disabled', delegatee: RELAYER });

    const deadline = Math.floor(Date.now() / 1000) + 600;
    const prepared = await post('/api/v1/1ct/prepare', { deadline });
    expect(prepared).toMatchObject({ delegatee: status.delegatee, deadline });
    // A number, as Anchored documents it (A25, A26).
    expect(prepared.nonce).toBe(0);
    const { signPayload } = prepared;
    expect(signPayload.primaryType).toBe('Delegate');
    expect(signPayload.domain).toMatchObject({ name: 'OneClickRouter', version: '1', chainId: CHAIN_ID });
    expect(signPayload.domain.verifyingContract.toLowerCase()).toBe(c().oneClickRouter.toLowerCase());
    expect(signPayload.types.Delegate).toEqual([
      { name: 'user', type: 'address' },
      { name: 'delegatee', type: 'address' },
      { name: 'nonce', type: 'uint64' },
      { name: 'deadline', type: 'uint32' },
    ]);
    expect(signPayload.message.user.toLowerCase()).toBe(user.toLowerCase());
    expect(signPayload.message.delegatee).toBe(status.delegatee);

    // As Anchored's viem demo does: the typed data signed as answered.
    const signature = await account.signTypedData(signPayload);
    const enabled = await post('/api/v1/1ct/enable', { signature, deadline });
    expect(enabled.status).toBe('enable');
    expect((await get('/api/v1/1ct/status')).status).toBe('enable');
  });

  it('POST orders/send with a market buy; the order detail to its final state', async () => {
    await writeQuote();
    const sent = await post('/api/v1/orders/send', { stockAddress: c().stocks.AAPL, side: 'Buy', type: 'Market', notional: '10', deadline: Math.floor(Date.now() / 1000) + 600 });
    const orderId = sent.orderId;
    expect(typeof orderId).toBe('string');
    expect(sent.txHash).toMatch(HASH);
    const order = await poll(`/api/v1/orders/${orderId}`, (o) => FINAL.includes(o.status));
    expect(order).toMatchObject({ orderId, status: 'Filled', side: 'Buy', type: 'Market', notional: '10' });
    // A second fill like the first: twice its shares, twice its cost.
    const b = await get(`/api/v1/users/${user}/balance`, { spenderAddress: c().stockRouter });
    expect(b).toMatchObject({ musdBalance: '80.000000000000000328', mUsdBalance: '80.000000000000000328' });
    expect(b.tokenBalances.find((r: any) => r.stockSymbol === 'AAPL')).toMatchObject({ walletBalance: '100', exchangeBalance: '0.086926343180421926' });
  });
});

describe('the envelope', () => {
  it('every answer above carried t (server time, ms) and uuid', () => {
    expect(answers.length).toBeGreaterThan(20);
    for (const a of answers) {
      expect(Object.keys(JSON.parse(a.text)), a.uri).toEqual(expect.arrayContaining(['code', 'errMsg', 'data', 'uuid', 't']));
      expect(typeof a.uuid, a.uri).toBe('string');
      expect(a.uuid, a.uri).not.toBe('');
      expect(Number.isSafeInteger(a.t), a.uri).toBe(true);
      expect(Math.abs((a.t as number) - Date.now())).toBeLessThan(120_000);
    }
  });
});
