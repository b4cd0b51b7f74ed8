/**
 * Users for One Click suites on a running test stack: fresh wallets funded with gas and USDC that
 * approved the StockRouter (their last own transaction), each with a WRITABLE key bound to it.
 */
import { createPublicClient, erc20Abi, http, keccak256, maxUint256, parseUnits, toHex, type Address, type Hex } from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { cashTokenAbi } from '../../src/chain/abi/generated/index.ts';
import { OPERATOR_ACCOUNT } from '../../src/chain/anvil-accounts.ts';
import { SENDER_ROLE_SPECS } from '../../src/chain/operator-roles.ts';
import { StockApiError, type StockClient } from '@tokex/sdk';
import { testWallet } from './chain-fixture.ts';
import type { TestStack } from './stock-stack.ts';

export interface OneClickUser {
  account: PrivateKeyAccount;
  address: Address;
  client: StockClient;
}

/** The embedded stack's relayer (anvil account 7): the delegatee users sign for. */
export const RELAYER = SENDER_ROLE_SPECS.relayer.devAccount.address;

export function chainClients(t: Pick<TestStack, 'demo'>) {
  const chain = { id: t.demo.chainId, name: 'anvil', nativeCurrency: { name: 'ETH', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [t.demo.rpcUrl] } } };
  const pub = createPublicClient({ chain, transport: http(t.demo.rpcUrl) });
  const walletOf = (account: PrivateKeyAccount) => testWallet(account, chain, t.demo.rpcUrl);
  return { chain, pub, walletOf };
}

/** `n` wallets derived from `seed` (distinct per suite), funded and approved, each with a bound WRITABLE key. */
export async function oneClickUsers(t: TestStack, seed: string, n: number, usdc = '1000'): Promise<OneClickUser[]> {
  const { pub, walletOf } = chainClients(t);
  const accounts = Array.from({ length: n }, (_, i) => privateKeyToAccount(keccak256(toHex(`${seed}/${i}`)) as Hex));
  const operator = walletOf(privateKeyToAccount(OPERATOR_ACCOUNT.privateKey));
  const c = t.demo.stock.contracts;
  for (const a of accounts) {
    await pub.request({ method: 'anvil_setBalance' as never, params: [a.address, toHex(10n ** 18n)] as never });
    await pub.waitForTransactionReceipt({
      hash: await operator.writeContract({ address: c.cashToken, abi: cashTokenAbi, functionName: 'mint', args: [a.address, parseUnits(usdc, 6)] }),
    });
  }
  await Promise.all(
    accounts.map(async (a) =>
      pub.waitForTransactionReceipt({
        hash: await walletOf(a).writeContract({ address: c.cashToken, abi: erc20Abi, functionName: 'approve', args: [c.stockRouter, maxUint256] }),
      }),
    ),
  );
  const users: OneClickUser[] = [];
  for (const account of accounts) {
    const { key, apiSecret } = await t.stack.keys.create({
      permission: 'WRITABLE',
      ipWhitelist: ['127.0.0.1', '::1'],
      chainId: t.demo.chainId,
      product: 'STOCK',
      userAddress: account.address,
    });
    users.push({ account, address: account.address, client: t.client(key.apiKey, apiSecret) });
  }
  return users;
}

/** Nonces of the relayer's transactions `hashes`, ascending. */
export async function relayerNonces(t: Pick<TestStack, 'demo'>, hashes: readonly Hex[]): Promise<number[]> {
  const { pub } = chainClients(t);
  const txs = await Promise.all(hashes.map((hash) => pub.getTransaction({ hash })));
  for (const tx of txs) if (tx.from.toLowerCase() !== RELAYER.toLowerCase()) throw new Error(`${tx.hash} not sent by the relayer`);
  return txs.map((tx) => tx.nonce).sort((a, b) => a - b);
}

/** The StockApiError `p` fails with (anything else it throws is rethrown). */
export async function stockApiFailure(p: Promise<unknown>): Promise<StockApiError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof StockApiError) return err;
    throw err;
  }
  throw new Error('expected the call to fail');
}
