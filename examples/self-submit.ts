/**
 * The self-submit flow with your own wallet client (viem here): approve the cash token to the
 * spender the API names, build deposit calldata, sign and send it, record the transaction, poll
 * until completed; then a market buy the same way. Run against `npm start`:
 *
 *   npx tsx examples/self-submit.ts            (DATA_DIR defaults to ./data)
 */
import fs from 'node:fs';
import path from 'node:path';
import { createPublicClient, createWalletClient, erc20Abi, http, maxUint256, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { StockClient } from '../src/sdk/stock-client.ts';

const demo = JSON.parse(fs.readFileSync(path.join(process.env.DATA_DIR ?? 'data', 'demo.json'), 'utf8'));
const api = new StockClient({ baseUrl: demo.stock.baseUrl, chainId: demo.chainId, ...demo.stock.keys.writable });
const chain = { id: demo.chainId, name: 'local', nativeCurrency: { name: 'ETH', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [demo.rpcUrl] } } };
const wallet = createWalletClient({ account: privateKeyToAccount(demo.wallets[0].privateKey), chain, transport: http(demo.rpcUrl) });
const chainReader = createPublicClient({ chain, transport: http(demo.rpcUrl) });

async function sendAndWait(calldata: { toAddress: Address; callData: Hex }): Promise<Hex> {
  const hash = await wallet.sendTransaction({ to: calldata.toAddress, data: calldata.callData });
  await chainReader.waitForTransactionReceipt({ hash });
  return hash;
}

async function poll<T>(read: () => Promise<T>, done: (v: T) => boolean): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const v = await read();
    if (done(v)) return v;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error('timed out');
}

// 1. Deposit 1,000 USDC into mUSD.
const usdc: Address = demo.stock.contracts.cashToken;
const deposit = await api.post<any>('/api/v1/cash/deposits/calldata', { tokenAddress: usdc, tokenAmount: '1000' });
await chainReader.waitForTransactionReceipt({
  hash: await wallet.writeContract({ address: usdc, abi: erc20Abi, functionName: 'approve', args: [deposit.spenderAddress, maxUint256] }),
});
const recorded = await api.post<any>('/api/v1/cash/deposits/tx', { txHash: await sendAndWait(deposit) });
const op = await poll(() => api.get<any>(`/api/v1/cash/deposits/${recorded.operationId}`), (o) => o.operationStatus === 'completed');
console.log(`deposit ${op.operationId}: ${op.operationStatus}, ${op.mUsdAmount} mUSD`);

// 2. Market buy of AAPL for 250 mUSD, executed and settled on chain by the platform.
const order = await api.post<any>('/api/v1/orders/calldata', {
  symbol: 'AAPL',
  side: 'Buy',
  type: 'Market',
  notional: '250',
  deadline: Math.floor(Date.now() / 1000) + 600,
});
const { orderId } = await api.post<any>('/api/v1/orders/tx', { txHash: await sendAndWait(order) });
const filled = await poll(() => api.get<any>(`/api/v1/orders/${orderId}`), (o) => o.state === 'history');
console.log(`order ${orderId}: ${filled.history.status} ${filled.history.filledQuantity} AAPL at ${filled.history.averagePrice}, fees ${filled.history.fees}`);

const balance = await api.get<any>(`/api/v1/users/${demo.wallets[0].address}/balance`);
console.log(`mUSD available ${balance.mUsdBalance.available}, AAPL exchange balance ${balance.tokenBalances.find((b: any) => b.symbol === 'AAPL').exchangeBalance}`);
