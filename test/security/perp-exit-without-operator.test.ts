/**
 * The perpetual venue's exit with the operator gone (issue 60; docs/security.md "Perpetual vault
 * escape hatch"): a whole stack runs on an anvil of its own (RPC_URL) and posts its reserves roots
 * with their leaves; a liquidity provider has part of its money in the pool. Then every tokex process
 * stops (both APIs refuse connections), and only the chain is left. A user who never deposited before deposits now (no leaf), three
 * days pass, anyone freezes the vault, and each account takes back what is its own with nothing but a
 * node, its key and the SDK: no API, no saved proof.
 */
import { escapeCallFromChain, MARGIN_VAULT_ESCAPE_ABI, readPublishedLeaves } from '@tokex/sdk';
import { createPublicClient, defineChain, erc20Abi, http, parseEventLogs, parseUnits, type Address, type Hex } from 'viem';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { marginVaultAbi, reserveRegistryAbi } from '../../src/chain/abi/generated/index.ts';
import { ANVIL_ACCOUNTS, DEMO_TAKER_ACCOUNT, DEMO_WALLETS, MARKET_MAKER_ACCOUNT } from '../../src/chain/anvil-accounts.ts';
import type { AnvilHandle } from '../../src/chain/anvil-process.ts';
import { FEE_ACCOUNT, INSURANCE_ACCOUNT, POOL_ACCOUNT } from '../../src/perp/engine/perp-engine.ts';
import { testWallet } from '../support/chain-fixture.ts';
import { until } from '../support/poll.ts';
import { startStackOnOwnAnvil, type TestStack } from '../support/stock-stack.ts';

const usdc = (v: string) => parseUnits(v, 6);
let anvil: AnvilHandle;
let t: TestStack | undefined;

beforeAll(async () => {
  // A short funding interval: a root with its leaves every 3 s.
  ({ anvil, t } = await startStackOnOwnAnvil({ TIMELOCK_DELAY_S: '0', PERP_FUNDING_INTERVAL_MS: '3000' }));
}, 180_000);

afterAll(async () => {
  await t?.stop();
  await anvil?.stop();
});

it('with every tokex process stopped, each account leaves with what is its own from the chain alone', async () => {
  const stack = t!;
  const chain = defineChain({ id: stack.demo.chainId, name: 'anvil', nativeCurrency: { name: 'ETH', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [anvil.rpcUrl] } } });
  const client = createPublicClient({ chain, transport: http(anvil.rpcUrl) });
  const vault = stack.demo.perp!.contracts!.marginVault as Address;
  const token = stack.demo.perp!.contracts!.collateralToken as Address;
  const registry = stack.demo.perp!.contracts!.reserveRegistry as Address;
  const lp = DEMO_WALLETS[0]!.address;

  // The demo trader (10,000 deposited at start) puts 800 in the pool; a root after it holds its share.
  await stack.perpTrader!.addLiquidity('800');
  const addedAt = Date.now();
  const leafOfLp = await until(
    async () => {
      const latest = await client.readContract({ address: registry, abi: reserveRegistryAbi, functionName: 'latest' });
      if (latest.timestamp < BigInt(addedAt) + 1_000n) return undefined;
      return (await readPublishedLeaves(client, registry, latest.epoch)).find((l) => l.account === lp);
    },
    (l) => l !== undefined,
    60_000,
  );
  // Its leaf is its whole 10,000: what stayed its collateral and what its shares are worth.
  expect(leafOfLp!.equity + leafOfLp!.pendingWithdrawals).toBeGreaterThan(usdc('9950'));

  // The operator is gone: every role of the stack stops; the chain alone is left.
  const apis = [stack.perpBaseUrl!, new URL(stack.stack.stockBaseUrl!).origin];
  await stack.stop();
  t = undefined;
  // Nothing of tokex answers any more: both APIs refuse the connection.
  for (const base of apis) await expect(fetch(`${base}/readyz`), base).rejects.toThrow(/fetch failed/);

  // A user who never deposited before deposits now: the engine never sees it, no root holds it.
  const late = DEMO_WALLETS[3]!;
  const lateWallet = testWallet(late.privateKey as Hex, chain, anvil.rpcUrl);
  await client.waitForTransactionReceipt({ hash: await lateWallet.writeContract({ address: token, abi: erc20Abi, functionName: 'approve', args: [vault, usdc('500')] }) });
  await client.waitForTransactionReceipt({ hash: await lateWallet.writeContract({ address: vault, abi: marginVaultAbi, functionName: 'deposit', args: [usdc('500')] }) });

  // Three days of silence: anyone freezes the vault on the latest root.
  const openAt = await client.readContract({ address: vault, abi: marginVaultAbi, functionName: 'freezableAt' });
  await client.request({ method: 'evm_setNextBlockTimestamp' as never, params: [`0x${openAt.toString(16)}`] as never });
  await client.request({ method: 'evm_mine' as never, params: [] as never });
  await client.waitForTransactionReceipt({ hash: await lateWallet.writeContract({ address: vault, abi: MARGIN_VAULT_ESCAPE_ABI, functionName: 'freeze' }) });
  const [epoch, , total] = await client.readContract({ address: vault, abi: MARGIN_VAULT_ESCAPE_ABI, functionName: 'escapeRoot' });
  const leaves = await readPublishedLeaves(client, registry, epoch);
  expect(leaves.some((l) => l.account === late.address)).toBe(false);
  const vaultBefore = await client.readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [vault] });

  const keys = new Map<string, Hex>([...ANVIL_ACCOUNTS, MARKET_MAKER_ACCOUNT, DEMO_TAKER_ACCOUNT].map((a) => [a.address.toLowerCase(), a.privateKey as Hex]));
  let paidOut = 0n;
  const escapeAs = async (account: Address): Promise<bigint> => {
    const call = await escapeCallFromChain(client, { vault, account });
    const wallet = testWallet(keys.get(account.toLowerCase())!, chain, anvil.rpcUrl);
    const before = await client.readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [account] });
    const receipt = await client.waitForTransactionReceipt({ hash: await wallet.writeContract({ address: vault, abi: MARGIN_VAULT_ESCAPE_ABI, functionName: call.functionName, args: call.args as never }) });
    expect(receipt.status).toBe('success');
    const after = await client.readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [account] });
    const [ev] = parseEventLogs({ abi: marginVaultAbi, logs: receipt.logs, eventName: 'EscapeWithdrawn' });
    expect(ev!.args).toEqual({ account, amount: after - before, epoch });
    paidOut += after - before;
    return after - before;
  };

  // Every account with a leaf and a key takes exactly its leaf, netted for the vault's flows since.
  const escaped: string[] = [];
  for (const leaf of leaves) {
    if (!keys.has(leaf.account.toLowerCase())) continue;
    const deposited = await client.readContract({ address: vault, abi: marginVaultAbi, functionName: 'depositedOf', args: [leaf.account] });
    const withdrawn = await client.readContract({ address: vault, abi: marginVaultAbi, functionName: 'withdrawnOf', args: [leaf.account] });
    const owed = leaf.equity + leaf.pendingWithdrawals + deposited - leaf.deposited - (withdrawn - leaf.withdrawn);
    if (owed <= 0n) continue;
    expect(await escapeAs(leaf.account)).toBe(owed);
    escaped.push(leaf.account);
    if (leaf.account === lp) expect(owed).toBeGreaterThan(usdc('9950'));
  }
  // The liquidity provider, the market maker and the demo taker at least.
  expect(escaped).toEqual(expect.arrayContaining([lp, MARKET_MAKER_ACCOUNT.address, DEMO_TAKER_ACCOUNT.address]));
  // The late depositor has no leaf: it shows so with its neighbours and takes its 500 back.
  expect((await escapeCallFromChain(client, { vault, account: late.address })).functionName).toBe('escapeUnlisted');
  expect(await escapeAs(late.address)).toBe(usdc('500'));

  // What is left covers the venue's own synthetic accounts (fees, insurance, the pool's dust): nobody
  // was paid out of another's share.
  const synthetic = new Set([FEE_ACCOUNT, INSURANCE_ACCOUNT, POOL_ACCOUNT]);
  const theirs = leaves.filter((l) => synthetic.has(l.account.toLowerCase())).reduce((s, l) => s + l.equity + l.pendingWithdrawals, 0n);
  const pool = leaves.find((l) => l.account.toLowerCase() === POOL_ACCOUNT);
  // The pool's share went to its providers' leaves: the pool keeps at most rounding dust.
  expect((pool?.equity ?? 0n) < 1_000n).toBe(true);
  const left = await client.readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [vault] });
  expect(left).toBe(vaultBefore - paidOut);
  expect(left >= theirs).toBe(true);
  expect(total >= theirs).toBe(true);
}, 240_000);
