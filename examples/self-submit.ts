/**
 * The self-submit flow with your own wallet client (viem here), through the SDK's flow helpers:
 * each builds the calldata, approves the spender the API names when the allowance is short, sends
 * the transaction from the wallet, records it with the API and polls until it is settled. First a
 * cash deposit, then a market buy. Run against `npm start`:
 *
 *   npx tsx examples/self-submit.ts            (DATA_DIR defaults to ./data)
 */
import fs from 'node:fs';
import path from 'node:path';
import { createPublicClient, createWalletClient, http, type Address } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { StockClient, selfSubmitOperation, selfSubmitOrder } from '@tokex/sdk';
// Amounts for a person: each token's display precision, truncated (the API's are exact, 18 decimals).
import { formatDisplayAmount as show } from '@tokex/contract';

const demo = JSON.parse(fs.readFileSync(path.join(process.env.DATA_DIR ?? 'data', 'demo.json'), 'utf8'));
const api = new StockClient({ baseUrl: demo.stock.baseUrl, chainId: demo.chainId, ...demo.stock.keys.writable });
const chain = { id: demo.chainId, name: 'local', nativeCurrency: { name: 'ETH', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [demo.rpcUrl] } } };
const wallet = createWalletClient({ account: privateKeyToAccount(demo.wallets[0].privateKey), chain, transport: http(demo.rpcUrl) });
const chainReader = createPublicClient({ chain, transport: http(demo.rpcUrl) });
// A wrong clock would have every request refused: take the server's.
await api.syncTime();

// 1. Deposit 1,000 USDC into mUSD (approving the Cashier's spender first if needed).
const usdc: Address = demo.stock.contracts.cashToken;
const op = await selfSubmitOperation(api, wallet, chainReader, 'cashDeposit', { tokenAddress: usdc, tokenAmount: '1000' }, { timeoutMs: 50_000 });
console.log(`deposit ${op.operationId}: ${op.operationStatus}, ${show(op.mUsdAmount, 'mUSD')} mUSD`);

// 2. Market buy of AAPL for 250 mUSD, executed and settled on chain by the platform.
const filled = await selfSubmitOrder(
  api,
  wallet,
  chainReader,
  { symbol: 'AAPL', side: 'Buy', type: 'Market', notional: '250', deadline: Math.floor(Date.now() / 1000) + 600 },
  { until: 'history', timeoutMs: 50_000 },
);
console.log(`order ${filled.orderId}: ${filled.history?.status} ${show(filled.history?.filledQuantity ?? '0', 'AAPL')} AAPL at ${show(filled.history?.averagePrice ?? '-', 'USD')}, fees ${show(filled.history?.fees ?? '0', 'mUSD')}`);

const balance = await api.getBalance(demo.wallets[0].address);
console.log(`mUSD available ${show(balance.mUsdBalance, 'mUSD')}, AAPL exchange balance ${show(balance.tokenBalances.find((b: any) => b.symbol === 'AAPL').exchangeBalance, 'AAPL')}`);
