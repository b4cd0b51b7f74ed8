/**
 * One Click with the demo wallet: the wallet signs one EIP-712 delegation (no transaction, no gas),
 * and from then on the API's relayer submits everything for it — a cash deposit, a market buy the
 * platform settles, a limit order and its cancel, a withdrawal — while the wallet sends nothing.
 * Run against `npm start`:
 *
 *   npx tsx examples/one-click.ts            (DATA_DIR defaults to ./data)
 */
import fs from 'node:fs';
import path from 'node:path';
import { createPublicClient, createWalletClient, erc20Abi, http, maxUint256, parseUnits, type Address } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { StockClient, oneClickCancel, oneClickOperation, oneClickOrder } from '@tokex/sdk';
// Amounts for a person: each token's display precision, truncated (the API's are exact, 18 decimals).
import { formatDisplayAmount as show } from '@tokex/contract';

const demo = JSON.parse(fs.readFileSync(path.join(process.env.DATA_DIR ?? 'data', 'demo.json'), 'utf8'));
const api = new StockClient({ baseUrl: demo.stock.baseUrl, chainId: demo.chainId, ...demo.stock.keys.writable });
const account = privateKeyToAccount(demo.wallets[0].privateKey);
const chain = { id: demo.chainId, name: 'local', nativeCurrency: { name: 'ETH', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [demo.rpcUrl] } } };
const chainReader = createPublicClient({ chain, transport: http(demo.rpcUrl) });
const usdc: Address = demo.stock.contracts.cashToken;
const router: Address = demo.stock.contracts.stockRouter;

// 0. Deposits draw on the wallet's allowance to the StockRouter: the one transaction the wallet
//    sends itself, before it delegates (skipped when it approved earlier).
const allowance = await chainReader.readContract({ address: usdc, abi: erc20Abi, functionName: 'allowance', args: [account.address, router] });
if (allowance < parseUnits('1000', 6)) {
  const wallet = createWalletClient({ account, chain, transport: http(demo.rpcUrl) });
  await chainReader.waitForTransactionReceipt({ hash: await wallet.writeContract({ address: usdc, abi: erc20Abi, functionName: 'approve', args: [router, maxUint256] }) });
}

// 1. Enable One Click: prepare → the wallet signs the typed data → enable (the relayer submits delegateBySig).
const enabled = await api.enableOneClick(account);
const walletNonce = await chainReader.getTransactionCount({ address: account.address });
console.log(`one click ${enabled.status}: delegatee ${enabled.delegatee}`);

// 2. Deposit 1,000 USDC into mUSD: the relayer sends it, the flow polls until it is completed.
const op = await oneClickOperation(api, 'cashDeposit', { tokenAddress: usdc, tokenAmount: '1000' }, { timeoutMs: 50_000 });
console.log(`deposit ${op.operationId}: ${op.operationStatus}, ${show(op.mUsdAmount, 'mUSD')} mUSD`);

// 3. A market buy for 250 mUSD, executed and settled on chain by the platform.
const filled = await oneClickOrder(api, { symbol: 'AAPL', side: 'Buy', type: 'Market', notional: '250', deadline: Math.floor(Date.now() / 1000) + 600 }, { timeoutMs: 50_000 });
console.log(`order ${filled.orderId}: ${filled.history?.status} ${show(filled.history?.filledQuantity ?? '0', 'AAPL')} AAPL at ${show(filled.history?.averagePrice ?? '-', 'USD')}, fees ${show(filled.history?.fees ?? '0', 'mUSD')}`);

// 4. A limit buy far below the market, then its cancel, both relayed.
const limit = await oneClickOrder(
  api,
  { symbol: 'AAPL', side: 'Buy', type: 'Limit', quantity: '1', price: '1', timeInForce: 'DAY', deadline: Math.floor(Date.now() / 1000) + 3600 },
  { until: 'open', timeoutMs: 50_000 },
);
const cancelled = await oneClickCancel(api, limit.orderId, { timeoutMs: 50_000 });
console.log(`order ${limit.orderId}: ${cancelled.history?.status}`);

// 5. Withdraw 100 USDC back to the wallet.
const out = await oneClickOperation(api, 'cashWithdrawal', { tokenAddress: usdc, tokenAmount: '100' }, { timeoutMs: 50_000 });
console.log(`withdrawal ${out.operationId}: ${out.operationStatus}, ${show(out.tokenAmount, 'USDC')} USDC`);

const sent = (await chainReader.getTransactionCount({ address: account.address })) - walletNonce;
console.log(`transactions sent by the wallet since enabling: ${sent}`);
