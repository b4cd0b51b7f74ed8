/**
 * Trading on one chain of a several-chain test stack (test/stock/stock-multichain*.test.ts): a key
 * with scopes of the tests' choosing, and a market buy with deposit sent by the wallet itself on a
 * chain's own node and recorded with the API; a stream `auth` frame.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { createPublicClient, erc20Abi, http, maxUint256, type Address, type Hex } from 'viem';
import { expect } from 'vitest';
import type { StockClient } from '@tokex/sdk';
import { testWallet } from './chain-fixture.ts';
import { until } from './poll.ts';
import type { TestStack } from './stock-stack.ts';

/** The demo wallet these tests trade with (bound to keys made here, not to demo.json's). */
export const MULTICHAIN_WALLET = 3;

/** A WRITABLE key bound to the trading wallet with `scopes` (`chainId`, access; the product STOCK). */
export async function keyWithScopes(stack: TestStack, scopes: Array<[number, 'READ_ONLY' | 'WRITABLE']>): Promise<{ apiKey: string; apiSecret: string }> {
  const made = await stack.stack.keys.create({
    scopes: scopes.map(([chainId, access]) => ({ chainId, productType: 'STOCK', access })),
    ipWhitelist: ['127.0.0.1', '::1'],
    userAddress: stack.demo.wallets[MULTICHAIN_WALLET].address,
  });
  return { apiKey: made.key.apiKey, apiSecret: made.apiSecret };
}

/** A market buy with deposit of `notional` USDC of AAPL on `chainId`, sent by the wallet and recorded with `client`; answers it once filled. */
export async function buyOnChain(stack: TestStack, client: StockClient, chainId: number, notional: string): Promise<{ orderId: string; txHash: Hex; order: any }> {
  const entry = stack.demo.stock.chains.find((c) => c.chainId === chainId)!;
  const chain = { id: chainId, name: `anvil-${chainId}`, nativeCurrency: { name: 'ETH', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [entry.rpcUrl] } } };
  const w = stack.demo.wallets[MULTICHAIN_WALLET];
  const pub = createPublicClient({ chain, transport: http(entry.rpcUrl) });
  const wallet = testWallet(w.privateKey, chain, entry.rpcUrl);
  const c = entry.contracts;
  await pub.waitForTransactionReceipt({ hash: await wallet.writeContract({ address: c.cashToken, abi: erc20Abi, functionName: 'approve', args: [c.stockRouter, maxUint256] }) });
  const cd = await client.post<{ toAddress: Address; callData: Hex }>('/api/v1/orders/with-deposit/calldata', {
    symbol: 'AAPL', side: 'Buy', type: 'Market', notional, tokenAmount: notional, deadline: Math.floor(Date.now() / 1000) + 3600,
  });
  expect(cd.toAddress).toBe(c.stockRouter);
  const txHash = await wallet.sendTransaction({ to: cd.toAddress, data: cd.callData });
  expect((await pub.waitForTransactionReceipt({ hash: txHash })).status).toBe('success');
  const rec = await client.post<{ orderId: string }>('/api/v1/orders/tx', { txHash });
  expect(rec.orderId).toMatch(/^\d+$/);
  const order = await until(() => client.get<any>(`/api/v1/orders/${rec.orderId}`), (o) => o.state === 'history', 60_000);
  return { orderId: rec.orderId, txHash, order };
}

/** A stock stream `auth` frame signed by the key (GET /api/v1/ws, empty body), with `extra` fields (a chainId). */
export function stockStreamAuthFrame(key: { apiKey: string; apiSecret: string }, extra: Record<string, unknown> = {}) {
  const nonce = randomUUID();
  const ts = Date.now();
  const sign = createHmac('sha256', key.apiSecret).update(['GET', '/api/v1/ws', String(ts), nonce, ''].join('\n')).digest('hex');
  return { op: 'auth', id: 'auth', apiKey: key.apiKey, ts, nonce, sign, ...extra };
}
