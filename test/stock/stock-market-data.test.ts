/** Market-data and portfolio endpoints against the real stack: values come from the chain and the market-data service. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, erc20Abi, formatUnits, http, parseUnits, type Address } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { cashierAbi, stockAbi } from '../../src/chain/abi/generated/index.ts';
import type { StockClient } from '@tokex/sdk';
import { StockCalldataSchema, StockOk, StockQuoteSchema } from '@tokex/contract';
import { dataRenderer } from '../../src/stock/stock-envelope.ts';
import { getQuote } from '../../src/storage/quote-store.ts';
import { countCandles } from '../../src/storage/candle-store.ts';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';
import { until } from '../support/poll.ts';
import { testWallet } from '../support/chain-fixture.ts';

let t: TestStack;

beforeAll(async () => {
  t = await startTestStack();
});
afterAll(async () => {
  await t?.stop();
});

const DECIMAL = /^(0|[1-9]\d*)(\.\d*[1-9])?$/;
/** Market-data prices are quoted to the cent, always with two decimals (docs/stock-api.md). */
const PRICE = /^(0|[1-9]\d*)\.\d{2}$/;

describe('market data', () => {
  it('lists at least five symbols with their deployed token addresses', async () => {
    const symbols = await t.readOnly.get<Array<{ symbol: string; address: string; decimals: number }>>('/api/v1/symbols');
    expect(symbols.map((s) => s.symbol)).toEqual(expect.arrayContaining(['AAPL', 'TSLA', 'NVDA', 'MSFT', 'SPY']));
    for (const s of symbols) expect(s.address).toBe(t.demo.stock.contracts.stocks[s.symbol]);
  });

  it('reads config from the deployed contracts, scoped to the request', async () => {
    const cfg = await t.readOnly.get<any>('/api/v1/config');
    expect(cfg.chainId).toBe(t.demo.chainId);
    expect(cfg.product).toBe('STOCK');
    expect(cfg.productType).toBe('STOCK');
    expect(cfg.exchangeFeeConfig).toEqual({ marketFeeBps: 10, limitFeeBps: 5, chainId: t.demo.chainId, productType: 'STOCK' });
    const client = createPublicClient({ transport: http(t.demo.rpcUrl) });
    const creditBuffer = await client.readContract({ address: t.demo.stock.contracts.cashier, abi: cashierAbi, functionName: 'creditBuffer' });
    expect(cfg.cashierBuffer.creditBuffer).toBe(formatUnits(creditBuffer, 18));
    const usdc = cfg.cashierTokenConfig.find((c: any) => c.tokenAddress === t.demo.stock.contracts.cashToken);
    expect(usdc).toMatchObject({ symbol: 'USDC', decimals: 6, enabled: true });
    expect(usdc.withdrawBuffer).toMatch(DECIMAL);
  });

  it('answers a quote and order calldata, both rendered ahead, exactly as their response schemas serialize them', async () => {
    async function raw(client: StockClient, method: string, path: string, body?: unknown) {
      const s = client.sign(method, path, { body });
      const res = await fetch(s.url, { method: s.method, headers: s.headers, body: s.body });
      return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
    }
    // Twice: the second quote read is served from the rendered text.
    for (let i = 0; i < 2; i++) {
      const q = await raw(t.readOnly, 'GET', '/api/v1/prices/MSFT');
      expect(q.status).toBe(200);
      expect(q.type).toBe('application/json; charset=utf-8');
      const parsed = JSON.parse(q.text);
      expect(parsed.data.symbol).toBe('MSFT');
      expect(q.text).toBe(dataRenderer(StockOk(StockQuoteSchema))(parsed));
    }
    const created = await t.stack.keys.create({ permission: 'WRITABLE', ipWhitelist: ['127.0.0.1', '::1'], chainId: t.demo.chainId, product: 'STOCK', label: 'unbound' });
    const unbound = t.client(created.key.apiKey, created.apiSecret);
    const order = { symbol: 'AAPL', side: 'Buy', type: 'Limit', quantity: '1.5', price: '150.25', timeInForce: 'DAY', deadline: Math.floor(Date.now() / 1000) + 3600 };
    const c = await raw(unbound, 'POST', '/api/v1/orders/calldata', order);
    expect(c.status).toBe(200);
    expect(c.type).toBe('application/json; charset=utf-8');
    const parsed = JSON.parse(c.text);
    expect(parsed.data).toMatchObject({ toAddress: t.demo.stock.contracts.stockRouter, value: '0' });
    expect(parsed.data.callData).toMatch(/^0x[0-9a-f]+$/);
    expect(c.text).toBe(dataRenderer(StockOk(StockCalldataSchema))(parsed));
  });

  it('quotes a symbol with bid < ask and the token context from chain', async () => {
    const q = await t.readOnly.get<any>('/api/v1/prices/aapl');
    expect(q.symbol).toBe('AAPL');
    expect(Number(q.bid)).toBeLessThan(Number(q.ask));
    expect(q.last).toMatch(PRICE);
    expect(q.bid).toMatch(PRICE);
    expect(q.ask).toMatch(PRICE);
    expect(Math.abs(q.timestamp - Date.now())).toBeLessThan(10_000);
    expect(q.token.address).toBe(t.demo.stock.contracts.stocks.AAPL);
    expect(q.token.decimals).toBe(18);
    const client = createPublicClient({ transport: http(t.demo.rpcUrl) });
    const supply = await client.readContract({ address: q.token.address as Address, abi: erc20Abi, functionName: 'totalSupply' });
    expect(q.token.totalSupply).toBe(formatUnits(supply, 18));
    expect(q.marketStatus).toBe('open');
  });

  it('serves K-lines for every interval with the query parameters', async () => {
    // Times in Unix seconds (as Anchored documents them); endTime and interval are required.
    const nowS = () => Math.floor(Date.now() / 1000);
    for (const interval of ['1m', '3m', '5m', '15m', '1h', '4h', '1d', '1w']) {
      const h = await t.readOnly.get<any>('/api/v1/prices/TSLA/history', { interval, endTime: nowS(), limit: 3 });
      expect(h.interval).toBe(interval);
      expect(h.candles.length).toBeGreaterThan(0);
      expect(h.candles.length).toBeLessThanOrEqual(3);
      for (const c of h.candles) {
        expect(Number(c.low)).toBeLessThanOrEqual(Math.min(Number(c.open), Number(c.close)));
        expect(Number(c.high)).toBeGreaterThanOrEqual(Math.max(Number(c.open), Number(c.close)));
      }
    }
    const all = await t.readOnly.get<any>('/api/v1/prices/TSLA/history', { interval: '1h', endTime: nowS(), limit: 1000 });
    const start = all.candles[2].openTime / 1000;
    const end = all.candles[5].openTime / 1000;
    const ranged = await t.readOnly.get<any>('/api/v1/prices/TSLA/history', { interval: '1h', startTime: start, endTime: end });
    expect(ranged.candles.map((c: any) => c.openTime)).toEqual(all.candles.slice(2, 6).map((c: any) => c.openTime));
  });

  it('keeps forming live candles while the stack runs', async () => {
    const before = await t.readOnly.get<any>('/api/v1/prices/NVDA');
    const after = await until(() => t.readOnly.get<any>('/api/v1/prices/NVDA'), (q) => q.timestamp > before.timestamp, 20_000);
    expect(after.timestamp).toBeGreaterThan(before.timestamp);
    // The newest 1m candle is the live one of that quote's minute (or of a later one, a minute
    // having turned meanwhile): a check of what was formed, not of how old it is by the wall clock.
    const h = await t.readOnly.get<any>('/api/v1/prices/NVDA/history', { interval: '1m', endTime: Math.floor(Date.now() / 1000), limit: 1 });
    expect(h.candles[0].openTime).toBeGreaterThanOrEqual(Math.floor(after.timestamp / 60_000) * 60_000);
  });

  it('answers the underlying quote and the corporate actions list', async () => {
    const u = await t.readOnly.get<any>('/api/v1/underlying/MSFT/price');
    expect(u).toMatchObject({ symbol: 'MSFT', underlying: 'MSFT', exchange: 'NASDAQ' });
    expect(u.price).toMatch(PRICE);
    const ca = await t.readOnly.get<any>('/api/v1/corporate-action');
    expect(ca.total).toBe(ca.rows.length);
    for (const row of ca.rows) expect(['SPLIT', 'DIVIDEND']).toContain(row.type);
  });

  it('answers 404 for an unknown symbol and 400 naming the field for bad parameters', async () => {
    const unknown = await t.readOnly.request('GET', '/api/v1/prices/ZZZZ');
    expect(unknown).toMatchObject({ httpStatus: 404, code: 404, errMsg: 'symbol: "ZZZZ" is not listed' });
    const badInterval = await t.readOnly.request('GET', '/api/v1/prices/AAPL/history', { query: { interval: '2m', endTime: 1_800_000_000 } });
    expect(badInterval.httpStatus).toBe(400);
    expect(badInterval.errMsg).toMatch(/^interval: must be one of/);
    const badLimit = await t.readOnly.request('GET', '/api/v1/prices/AAPL/history', { query: { interval: '1m', endTime: 1_800_000_000, limit: 0 } });
    expect(badLimit.errMsg).toMatch(/^limit: /);
    const badRange = await t.readOnly.request('GET', '/api/v1/prices/AAPL/history', { query: { interval: '1m', startTime: 2000, endTime: 1000 } });
    expect(badRange.errMsg).toBe('startTime: must not be after endTime');
  });

  it('neither lists nor quotes the perpetual venue\'s crypto indices, though the simulator stores them', async () => {
    // The marketdata role simulates BTC and ETH beside the stocks: their quotes and candles are in storage.
    for (const symbol of ['BTC', 'ETH']) {
      expect(await getQuote(t.stack.db, symbol)).toMatchObject({ symbol });
      expect(await countCandles(t.stack.db, symbol, '1m')).toBeGreaterThan(0);
    }
    const symbols = await t.readOnly.get<Array<{ symbol: string }>>('/api/v1/symbols');
    expect(symbols.map((s) => s.symbol).sort()).toEqual(Object.keys(t.demo.stock.contracts.stocks).sort());
    expect(symbols.map((s) => s.symbol)).not.toContain('BTC');
    expect(symbols.map((s) => s.symbol)).not.toContain('ETH');
    // Answered as any symbol that is not a deployed stock.
    for (const path of ['/api/v1/prices/BTC', '/api/v1/prices/btc', '/api/v1/prices/ETH', '/api/v1/prices/BTC/history', '/api/v1/underlying/ETH/price']) {
      const symbol = path.split('/')[4];
      const query = path.endsWith('/history') ? { interval: '1m', endTime: Math.floor(Date.now() / 1000) } : undefined;
      expect(await t.readOnly.request('GET', path, { query }), path).toMatchObject({ httpStatus: 404, code: 404, errMsg: `symbol: "${symbol}" is not listed` });
    }
  });
});

describe('portfolio', () => {
  const user = () => t.demo.wallets[0].address;

  it('reports balances read from chain state, with allowances 0 unless a spender is given', async () => {
    const b = await t.readOnly.get<any>(`/api/v1/users/${user()}/balance`);
    expect(b.userId).toBe(user().toLowerCase());
    const client = createPublicClient({ transport: http(t.demo.rpcUrl) });
    const aapl = t.demo.stock.contracts.stocks.AAPL;
    const wallet = await client.readContract({ address: aapl, abi: erc20Abi, functionName: 'balanceOf', args: [user()] });
    const row = b.tokenBalances.find((r: any) => r.symbol === 'AAPL');
    expect(row.walletBalance).toBe(formatUnits(wallet, 18));
    expect(row.exchangeBalance).toBe('0');
    // Toward Anchored's default spender, the zero address.
    expect(row.walletAllowance).toBe('0');
    expect(b.spenderAddress).toBe('0x0000000000000000000000000000000000000000');
    const free = await client.readContract({ address: t.demo.stock.contracts.cashier, abi: cashierAbi, functionName: 'balanceOf', args: [user()] });
    expect(b.mUsdDetail.available).toBe(formatUnits(free, 18));
    expect(b.musdBalance).toBe(formatUnits(free, 18));
    expect(b.mUsdBalance).toBe(formatUnits(free, 18));
    expect(b.mUsdDetail.total).toBe(b.mUsdDetail.available);
    const usdc = b.cashTokenBalances.find((r: any) => r.symbol === 'USDC');
    expect(usdc.walletBalance).toBe('100000');
  });

  it('shows a wallet allowance and an exchange balance after real transactions', async () => {
    const w = t.demo.wallets[1];
    const account = privateKeyToAccount(w.privateKey);
    const chain = { id: t.demo.chainId, name: 'anvil', nativeCurrency: { name: 'ETH', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [t.demo.rpcUrl] } } };
    const wallet = testWallet(account, chain, t.demo.rpcUrl);
    const pub = createPublicClient({ chain, transport: http(t.demo.rpcUrl) });
    const router = t.demo.stock.contracts.stockRouter;
    const nvda = t.demo.stock.contracts.stocks.NVDA;
    let hash = await wallet.writeContract({ address: nvda, abi: stockAbi, functionName: 'approve', args: [router, parseUnits('7.5', 18)] });
    await pub.waitForTransactionReceipt({ hash });
    const before = await t.readOnly.get<any>(`/api/v1/users/${w.address}/balance`, { spenderAddress: router });
    expect(before.tokenBalances.find((r: any) => r.symbol === 'NVDA').walletAllowance).toBe('7.5');
    expect(before.spenderAddress).toBe(router.toLowerCase());
    const { stockRouterAbi } = await import('../../src/chain/abi/generated/index.ts');
    hash = await wallet.writeContract({ address: router, abi: stockRouterAbi, functionName: 'depositStock', args: [nvda, parseUnits('2.5', 18)] });
    await pub.waitForTransactionReceipt({ hash });
    const after = await t.readOnly.get<any>(`/api/v1/users/${w.address}/balance`, { spenderAddress: router });
    const row = after.tokenBalances.find((r: any) => r.symbol === 'NVDA');
    expect(row.exchangeBalance).toBe('2.5');
    expect(row.walletAllowance).toBe('5');
    const positions = await t.readOnly.get<any[]>(`/api/v1/users/${w.address}/positions`);
    const p = positions.find((r) => r.symbol === 'NVDA');
    expect(p.exchangeQuantity).toBe('2.5');
    expect(p.walletQuantity).toBe(String(100 - 2.5));
    expect(p.quantity).toBe('100');
  });

  it('answers user info with the One Click status read from the router', async () => {
    const u = await t.writable.get<any>(`/api/v1/users/${user()}`);
    expect(u.userId).toBe(user().toLowerCase());
    expect(u.oneClick.status).toBe('disabled');
    expect(u.boundToKey).toBe(true);
  });

  it('names the field of a malformed address', async () => {
    const r = await t.readOnly.request('GET', '/api/v1/users/0x1234/balance');
    expect(r).toMatchObject({ httpStatus: 400, code: 400, errMsg: 'userId: must be a 0x-prefixed 20-byte hex address' });
    const s = await t.readOnly.request('GET', `/api/v1/users/${user()}/balance`, { query: { spenderAddress: 'nope' } });
    expect(s.errMsg).toBe('spenderAddress: must be a 0x-prefixed 20-byte hex address');
  });

  it('refuses an oversized body with 413 in the envelope', async () => {
    const r = await t.writable.request('POST', '/api/v1/orders/calldata', { body: { pad: 'x'.repeat(70 * 1024) } });
    expect(r.httpStatus).toBe(413);
    expect(r).toMatchObject({ code: 413, errMsg: 'body: larger than 65536 bytes' });
  });
});
