/**
 * The self-submit flows of issue 3 end to end against the real stack: calldata from the API, the
 * transaction signed and sent by the user's own wallet on anvil, recorded with the tx endpoint,
 * indexed, executed and settled on chain by the executor, and read back through the API.
 */
import { ownerCall } from '../../src/chain/owner-actions.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createPublicClient,
  erc20Abi,
  http,
  maxUint256,
  parseUnits,
  type Address,
  type Hex,
} from 'viem';
import { cashierAbi, stockRouterAbi } from '../../src/chain/abi/generated/index.ts';
import { OPERATOR_ACCOUNT } from '../../src/chain/anvil-accounts.ts';
import type { StockClient } from '@tokex/sdk';
import { testWallet } from '../support/chain-fixture.ts';
import { until } from '../support/poll.ts';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';
import { mulDiv, parseDecimal } from '../../src/lib/decimal.ts';
import { ANY_SELL_PRICE } from '../chain/chain-test-helpers.ts';

/** mUSD and stock amounts are 18-decimal strings: compared exactly as wei. */
const wei = (amount: string): bigint => parseDecimal(amount, { field: 'amount', decimals: 18, positive: false });

let t: TestStack;
let other: StockClient; // a second WRITABLE key, bound to wallets[1]
const chainOf = (rpc: string, id: number) => ({ id, name: 'anvil', nativeCurrency: { name: 'ETH', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [rpc] } } });

function walletOf(i: number) {
  const w = t.demo.wallets[i];
  const chain = chainOf(t.demo.rpcUrl, t.demo.chainId);
  return {
    address: w.address as Address,
    wallet: testWallet(w.privateKey, chain, t.demo.rpcUrl),
    pub: createPublicClient({ chain, transport: http(t.demo.rpcUrl) }),
  };
}

async function send(i: number, calldata: { toAddress: Address; callData: Hex }): Promise<Hex> {
  const { wallet, pub } = walletOf(i);
  const hash = await wallet.sendTransaction({ to: calldata.toAddress, data: calldata.callData });
  const r = await pub.waitForTransactionReceipt({ hash });
  expect(r.status).toBe('success');
  return hash;
}

async function approve(i: number, token: Address, spender: Address) {
  const { wallet, pub } = walletOf(i);
  await pub.waitForTransactionReceipt({ hash: await wallet.writeContract({ address: token, abi: erc20Abi, functionName: 'approve', args: [spender, maxUint256] }) });
}

const deadline = () => Math.floor(Date.now() / 1000) + 3600;
const user0 = () => t.demo.wallets[0].address;
const balance = (c: StockClient, user: string) => c.get<any>(`/api/v1/users/${user}/balance`);

beforeAll(async () => {
  t = await startTestStack({ EXECUTOR_TICK_MS: '200', CASH_SETTLE_DELAY_MS: '300', INDEXER_POLL_MS: '100' });
  const { key, apiSecret } = await t.stack.keys.create({
    permission: 'WRITABLE',
    ipWhitelist: ['127.0.0.1', '::1'],
    chainId: t.demo.chainId,
    product: 'STOCK',
    userAddress: t.demo.wallets[1].address,
  });
  other = t.client(key.apiKey, apiSecret);
  const c = t.demo.stock.contracts;
  for (const i of [0, 1]) {
    await approve(i, c.cashToken, c.stockRouter);
    await approve(i, c.stocks.AAPL, c.stockRouter);
  }
});
afterAll(async () => {
  await t?.stop();
});

describe('cash', () => {
  it('deposits instantly, records idempotently and raises mUsdBalance', async () => {
    const before = await balance(t.writable, user0());
    const cd = await t.writable.post<any>('/api/v1/cash/deposits/calldata', { tokenAddress: t.demo.stock.contracts.cashToken, tokenAmount: '2500.5' });
    expect(cd.toAddress).toBe(t.demo.stock.contracts.stockRouter);
    expect(cd.spenderAddress).toBe(t.demo.stock.contracts.stockRouter);
    const txHash = await send(0, cd);
    const rec = await t.writable.post<any>('/api/v1/cash/deposits/tx', { txHash });
    expect(rec.indexed).toBe(true);
    const again = await t.writable.post<any>('/api/v1/cash/deposits/tx', { txHash });
    expect(again.operationIds).toEqual(rec.operationIds);
    const op = await until(() => t.writable.get<any>(`/api/v1/cash/deposits/${rec.operationId}`), (o) => o.operationStatus === 'completed');
    expect(op).toMatchObject({ kind: 'deposit', tokenAmount: '2500.5', mUsdAmount: '2500.5', instant: true, txHash });
    expect(await other.request('GET', `/api/v1/cash/deposits/${rec.operationId}`)).toMatchObject({ httpStatus: 404, code: 404 });
    const after = await balance(t.writable, user0());
    expect(wei(after.mUsdDetail.available) - wei(before.mUsdDetail.available)).toBe(wei('2500.5'));
    const list = await t.writable.get<any>('/api/v1/cash/deposits');
    expect(list.rows.map((r: any) => r.operationId)).toContain(rec.operationId);
    // Another key cannot claim this transaction.
    const stolen = await other.request('POST', '/api/v1/cash/deposits/tx', { body: { txHash } });
    expect(stolen).toMatchObject({ code: 400, errMsg: 'txHash: not sent by this API key' });
  });

  it('refuses withdrawal calldata beyond the available mUsdBalance', async () => {
    const r = await t.writable.request('POST', '/api/v1/cash/withdrawals/calldata', { body: { tokenAddress: t.demo.stock.contracts.cashToken, tokenAmount: '99999999' } });
    expect(r.httpStatus).toBe(400);
    expect(r.errMsg).toMatch(/^tokenAmount: exceeds the available mUsdBalance/);
  });

  it('pays an instant withdrawal and queues one beyond the buffer until the operator settles it', async () => {
    const { pub, address } = walletOf(0);
    const usdc = t.demo.stock.contracts.cashToken;
    const w0 = await pub.readContract({ address: usdc, abi: erc20Abi, functionName: 'balanceOf', args: [address] });
    const cd = await t.writable.post<any>('/api/v1/cash/withdrawals/calldata', { tokenAddress: usdc, tokenAmount: '100' });
    const rec = await t.writable.post<any>('/api/v1/cash/withdrawals/tx', { txHash: await send(0, cd) });
    expect(rec.operationStatus).toBe('completed');
    const w1 = await pub.readContract({ address: usdc, abi: erc20Abi, functionName: 'balanceOf', args: [address] });
    expect(w1 - w0).toBe(parseUnits('100', 6));

    // Shrink the withdrawal buffer so the next withdrawal queues.
    const op = testWallet(OPERATOR_ACCOUNT.privateKey, chainOf(t.demo.rpcUrl, t.demo.chainId), t.demo.rpcUrl);
    // An owner change: through the venue's timelock (delay 0 on the embedded chain).
    expect(await ownerCall({ publicClient: pub as never, wallet: op as never, target: t.demo.stock.contracts.cashier, abi: cashierAbi, functionName: 'setWithdrawBuffer', args: [usdc, parseUnits('10', 6)] })).toMatchObject({ done: true, via: 'timelock' });
    const before = await balance(t.writable, user0());
    const cd2 = await t.writable.post<any>('/api/v1/cash/withdrawals/calldata', { tokenAddress: usdc, tokenAmount: '50' });
    const rec2 = await t.writable.post<any>('/api/v1/cash/withdrawals/tx', { txHash: await send(0, cd2) });
    expect(rec2.operations[0].instant).toBe(false);
    // mUSD is deducted first.
    const mid = await balance(t.writable, user0());
    expect(wei(before.mUsdDetail.available) - wei(mid.mUsdDetail.available)).toBe(wei('50'));
    const done = await until(() => t.writable.get<any>(`/api/v1/cash/withdrawals/${rec2.operationId}`), (o) => o.operationStatus === 'completed');
    expect(done.settleTxHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(done.steps.length).toBeGreaterThanOrEqual(2);
    const w2 = await pub.readContract({ address: usdc, abi: erc20Abi, functionName: 'balanceOf', args: [address] });
    expect(w2 - w1).toBe(parseUnits('50', 6));
  });
});

describe('keys without a bound wallet', () => {
  it('record the transactions whose calldata they built, and only those', async () => {
    const make = async () => {
      const { key, apiSecret } = await t.stack.keys.create({ permission: 'WRITABLE', ipWhitelist: ['127.0.0.1'], chainId: t.demo.chainId, product: 'STOCK' });
      return t.client(key.apiKey, apiSecret);
    };
    const builder = await make();
    const bystander = await make();
    await approve(2, t.demo.stock.contracts.cashToken, t.demo.stock.contracts.stockRouter);
    const cd = await builder.post<any>('/api/v1/cash/deposits/calldata', { tokenAddress: t.demo.stock.contracts.cashToken, tokenAmount: '12.34' });
    const txHash = await send(2, cd);
    const refused = await bystander.request('POST', '/api/v1/cash/deposits/tx', { body: { txHash } });
    expect(refused).toMatchObject({ code: 400, errMsg: 'txHash: not sent by this API key' });
    const rec = await builder.post<any>('/api/v1/cash/deposits/tx', { txHash });
    expect(rec.operations[0]).toMatchObject({ userAddress: t.demo.wallets[2].address.toLowerCase(), tokenAmount: '12.34' });
    const listed = await builder.get<any>('/api/v1/cash/deposits');
    expect(listed.rows.map((r: any) => r.txHash)).toEqual([txHash]);
    expect((await bystander.get<any>('/api/v1/cash/deposits')).total).toBe(0);
  });
});

describe('stock movements', () => {
  it('deposits wallet stock into the exchange balance and withdraws it back', async () => {
    const aapl = t.demo.stock.contracts.stocks.AAPL;
    const dep = await t.writable.post<any>('/api/v1/stock/deposits/calldata', { tokenAddress: aapl, tokenAmount: '10' });
    const rec = await t.writable.post<any>('/api/v1/stock/deposits/tx', { txHash: await send(0, dep) });
    expect(rec.operations[0]).toMatchObject({ operationStatus: 'completed', symbol: 'AAPL', tokenAmount: '10' });
    const b = await balance(t.writable, user0());
    expect(b.tokenBalances.find((r: any) => r.symbol === 'AAPL').exchangeBalance).toBe('10');
    const tooMuch = await t.writable.request('POST', '/api/v1/stock/withdrawals/calldata', { body: { tokenAddress: aapl, tokenAmount: '10.000000000000000001' } });
    expect(tooMuch.errMsg).toBe('tokenAmount: exceeds the available exchangeBalance 10');
    const wd = await t.writable.post<any>('/api/v1/stock/withdrawals/calldata', { tokenAddress: aapl, tokenAmount: '2' });
    const rec2 = await t.writable.post<any>('/api/v1/stock/withdrawals/tx', { txHash: await send(0, wd) });
    expect(rec2.operations[0]).toMatchObject({ kind: 'withdrawal', tokenAmount: '2' });
    const detail = await t.writable.get<any>(`/api/v1/stock/withdrawals/${rec2.operationId}`);
    expect(await other.request('GET', `/api/v1/stock/withdrawals/${rec2.operationId}`)).toMatchObject({ httpStatus: 404, code: 404 });
    expect(detail.operationId).toBe(rec2.operationId);
    const b2 = await balance(t.writable, user0());
    expect(b2.tokenBalances.find((r: any) => r.symbol === 'AAPL').exchangeBalance).toBe('8');
  });
});

describe('orders', () => {
  async function place(body: Record<string, unknown>, path = '/api/v1/orders/calldata') {
    const cd = await t.writable.post<any>(path, { deadline: deadline(), ...body });
    expect(cd.toAddress).toBe(t.demo.stock.contracts.stockRouter);
    const txHash = await send(0, cd);
    const rec = await t.writable.post<any>('/api/v1/orders/tx', { txHash });
    expect(rec.orderId).toMatch(/^\d+$/);
    return { ...rec, txHash };
  }
  const settled = (id: string) => until(() => t.writable.get<any>(`/api/v1/orders/${id}`), (o) => o.state === 'history');

  it('fills a market buy at the ask with the market fee, then the balances move', async () => {
    const before = await balance(t.writable, user0());
    const { orderId, txHash } = await place({ symbol: 'AAPL', side: 'buy', type: 'market', notional: '500' });
    const o = await settled(orderId);
    expect(o).toMatchObject({ side: 'Buy', type: 'Market', txHash, notional: '500' });
    expect(o.history.status).toBe('FILLED');
    expect(o.history.fills.length).toBe(1);
    const fill = o.history.fills[0];
    const cost = wei(fill.notional);
    // The market fee is 10 bps of the filled notional, rounded up to the wei (StockRouter).
    expect(wei(fill.fee)).toBe(mulDiv(cost, 10n, 10_000n, 'ceil'));
    expect(cost + wei(fill.fee)).toBeLessThanOrEqual(wei('500'));
    expect(o.history.averagePrice).toBe(fill.price);
    const after = await until(() => balance(t.writable, user0()), (b) => b.mUsdDetail.locked === '0');
    expect(wei(before.mUsdDetail.available) - wei(after.mUsdDetail.available)).toBe(cost + wei(fill.fee));
    const aapl = (b: any) => wei(b.tokenBalances.find((r: any) => r.symbol === 'AAPL').exchangeBalance);
    expect(aapl(after) - aapl(before)).toBe(wei(fill.quantity));
    const byTx = await t.writable.get<any[]>(`/api/v1/orders/tx/${txHash}`);
    expect(byTx[0].orderId).toBe(orderId);
    const list = await t.writable.get<any>('/api/v1/orders', { state: 'history' });
    expect(list.rows.map((r: any) => r.orderId)).toContain(orderId);
  });

  it('fills a market sell at the bid', async () => {
    const { orderId } = await place({ symbol: 'AAPL', side: 'Sell', type: 'Market', quantity: '1' });
    const o = await settled(orderId);
    expect(o.history.status).toBe('FILLED');
    expect(o.history.filledQuantity).toBe('1');
  });

  it('keeps a limit buy below the market open, cancels it through canceling to CANCELED and releases the lock', async () => {
    const { orderId } = await place({ symbol: 'AAPL', side: 'Buy', type: 'Limit', quantity: '2', price: '1.25', timeInForce: 'DAY' });
    const open = await t.writable.get<any>(`/api/v1/orders/${orderId}`);
    expect(open.state).toBe('open');
    expect(open.openOrder).toMatchObject({ status: 'OPEN', filledQuantity: '0', remainingQuantity: '2' });
    // 2 × 1.25 = 2.5 plus the 5 bps limit fee, rounded up to the wei.
    expect(open.openOrder.lockedAmount).toBe('2.50125');
    // Orders belong to the key that recorded their placement: for another key they do not exist.
    const byOther = await other.request('DELETE', `/api/v1/orders/${orderId}/calldata`);
    expect(byOther).toMatchObject({ httpStatus: 404, code: 404 });
    const readByOther = await other.request('GET', `/api/v1/orders/${orderId}`);
    expect(readByOther).toMatchObject({ httpStatus: 404, code: 404 });
    expect(readByOther).not.toHaveProperty('data');
    const cancel = await t.writable.delete<any>(`/api/v1/orders/${orderId}/calldata`);
    await send(0, cancel);
    const done = await settled(orderId);
    expect(done.history.status).toBe('CANCELED');
    const again = await t.writable.request('DELETE', `/api/v1/orders/${orderId}/calldata`);
    expect(again).toMatchObject({ code: 400, errMsg: 'orderId: order is not open' });
  });

  it('fills a limit sell whose price the bid already crosses', async () => {
    const { orderId } = await place({ symbol: 'AAPL', side: 'Sell', type: 'Limit', quantity: '0.5', price: '1', timeInForce: 'DAY' });
    const o = await settled(orderId);
    expect(o.history.status).toBe('FILLED');
    expect(wei(o.history.averagePrice)).toBeGreaterThan(wei('1'));
  });

  it('places a market buy with a deposit in one transaction', async () => {
    const { orderId } = await place({ symbol: 'TSLA', side: 'Buy', type: 'Market', notional: '300', tokenAmount: '300' }, '/api/v1/orders/with-deposit/calldata');
    const o = await settled(orderId);
    expect(o.history.status).toBe('FILLED');
  });

  it('refuses to cancel a market order', async () => {
    const { orderId } = await place({ symbol: 'AAPL', side: 'Buy', type: 'Market', notional: '10' });
    const r = await t.writable.request('DELETE', `/api/v1/orders/${orderId}/calldata`);
    expect(r).toMatchObject({ code: 400 });
    expect(r.errMsg).toMatch(/^orderId: (market orders cannot be cancelled|order is not open)$/);
  });
});

describe('validation', () => {
  const post = (body: Record<string, unknown>) => t.writable.request('POST', '/api/v1/orders/calldata', { body: { deadline: deadline(), ...body } });

  it.each([
    [{ symbol: 'AAPL', side: 'Buy', type: 'Market' }, 'notional: required for a market buy'],
    [{ symbol: 'AAPL', side: 'Sell', type: 'Market' }, 'quantity: required for a market sell'],
    [{ symbol: 'AAPL', side: 'Buy', type: 'Limit', quantity: '1', timeInForce: 'DAY' }, 'price: required for a limit order'],
    [{ symbol: 'AAPL', side: 'Buy', type: 'Limit', quantity: '1', price: '10', timeInForce: 'GTC' }, 'timeInForce: only DAY is accepted'],
    [{ symbol: 'AAPL', side: 'Buy', type: 'Market', notional: '10', deadline: Math.floor(Date.now() / 1000) - 5 }, 'deadline: expired: must be in the future'],
    [{ symbol: 'ZZZZ', side: 'Buy', type: 'Market', notional: '10' }, 'symbol: "ZZZZ" is not listed'],
    [{ symbol: 'APPL', side: 'Buy', type: 'Market', notional: '100' }, 'symbol: "APPL" is not listed'],
    [{ symbol: 'AAPL', side: 'Buy', type: 'Market', notional: '10.0000000000000000001' }, 'notional: at most 18 decimal places'],
    [{ symbol: 'AAPL', side: 'Buy', type: 'Market', notional: '0' }, 'notional: must be greater than zero'],
    [{ symbol: 'AAPL', side: 'Hold', type: 'Market', notional: '1' }, 'side: must be one of Buy, Sell'],
  ])('order %j → %s', async (body, message) => {
    const r = await post(body);
    expect(r.httpStatus).toBe(400);
    expect(r.errMsg).toBe(message);
  });

  it('names the field of a negative amount, an unknown token and a bad tx hash', async () => {
    const neg = await t.writable.request('POST', '/api/v1/cash/deposits/calldata', { body: { tokenAddress: t.demo.stock.contracts.cashToken, tokenAmount: '-5' } });
    expect(neg.errMsg).toMatch(/^tokenAmount: must be a decimal string/);
    const tooPrecise = await t.writable.request('POST', '/api/v1/cash/deposits/calldata', { body: { tokenAddress: t.demo.stock.contracts.cashToken, tokenAmount: '1.0000001' } });
    expect(tooPrecise.errMsg).toBe('tokenAmount: at most 6 decimal places');
    const token = await t.writable.request('POST', '/api/v1/stock/deposits/calldata', { body: { tokenAddress: t.demo.stock.contracts.cashToken, tokenAmount: '1' } });
    expect(token.errMsg).toBe('tokenAddress: not a listed stock token');
    const missing = await t.writable.request('POST', '/api/v1/orders/tx', { body: { txHash: '0x' + 'ab'.repeat(32) } });
    expect(missing.errMsg).toBe('txHash: transaction not found on this chain');
  });

  it('refuses to record a reverted transaction', async () => {
    const { wallet, pub } = walletOf(0);
    // A sell far beyond the exchange balance reverts on chain (InsufficientStockBalance).
    const hash = await wallet.writeContract({
      address: t.demo.stock.contracts.stockRouter,
      abi: stockRouterAbi,
      functionName: 'placeMarketOrder',
      args: [t.demo.stock.contracts.stocks.MSFT, 1, parseUnits('1000000', 18), 0n, ANY_SELL_PRICE, deadline()],
      gas: 500_000n,
    });
    const r = await pub.waitForTransactionReceipt({ hash });
    expect(r.status).toBe('reverted');
    const rec = await t.writable.request('POST', '/api/v1/orders/tx', { body: { txHash: hash } });
    expect(rec.errMsg).toBe('txHash: transaction failed (reverted)');
  });
});

describe('README example', () => {
  it('runs examples/self-submit.ts against the stack: deposit completed, market buy filled', async () => {
    const { execFile } = await import('node:child_process');
    const { promisify } = await import('node:util');
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'examples/self-submit.ts'], {
      env: { ...process.env, DATA_DIR: t.dataDir },
    });
    expect(stdout).toMatch(/deposit \S+: completed, 1000\.00 mUSD/);
    expect(stdout).toMatch(/order \d+: FILLED [\d.]+ AAPL at [\d.]+, fees [\d.]+/);
  });
});
