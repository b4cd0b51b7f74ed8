/**
 * A withdrawal through the embedded stack (role `all`): the perp-engine role's withdrawal task pays
 * it with the perp operator's key (anvil account 6) from the vault to wallets[0]; the stack restarted
 * on the same data shows it COMPLETED and pays nothing again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { erc20Abi, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { marginVaultAbi } from '../../src/chain/abi/generated/index.ts';
import { createChainClients, type ChainPublicClient } from '../../src/chain/chain-client.ts';
import type { PerpWithdrawal } from '@tokex/sdk';
import { withdrawalIdOf } from '../../src/perp/withdrawal-service.ts';
import { until } from '../support/poll.ts';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';
import { stackEngines } from '../support/stack-engines.ts';

describe.each(stackEngines('perpwd'))('perp withdrawals in the stack ($name)', (engine) => {
  let t: TestStack;
  let env: Record<string, string>;
  let chain: ChainPublicClient;
  let wallet: Address;
  let vault: Address;
  let token: Address;
  const balanceOf = (a: Address) => chain.readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [a] });

  beforeAll(async () => {
    env = { ...engine.env(), PERP_RATE_LIMIT_PER_MIN: '6000' };
    t = await startTestStack(env);
    chain = createChainClients({ rpcUrl: t.stack.rpcUrl, chainId: t.demo.chainId, pollingIntervalMs: 50 }).publicClient;
    wallet = t.demo.wallets[0]!.address as Address;
    vault = t.demo.perp!.contracts!.marginVault as Address;
    token = t.demo.perp!.contracts!.collateralToken as Address;
  });
  afterAll(async () => {
    await t?.stop();
    await engine.cleanup?.(env);
  });

  it("pays wallets[0] from the vault through the perp-engine role's task, once, across a restart", async () => {
    const api = t.perpTrader!;
    await until(() => api.get<Record<string, string>>('account'), (a) => a.balance === '10000', 30_000);
    const before = await balanceOf(wallet);
    const w = await api.withdraw(privateKeyToAccount(t.demo.wallets[0]!.privateKey as Hex), { amount: '12.5', clientWithdrawalId: 'stack-1' });
    expect(w).toMatchObject({ withdrawalId: withdrawalIdOf(wallet, 'stack-1'), address: wallet.toLowerCase(), amount: '12.5', duplicate: false });
    const done = await api.waitForWithdrawal('stack-1', { timeoutMs: 30_000 });
    expect(done).toMatchObject({ status: 'COMPLETED', txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    expect(await balanceOf(wallet)).toBe(before + 12_500_000n);
    expect(await api.get('account')).toMatchObject({ balance: '9987.5', pendingWithdrawals: '0', withdrawn: '12.5' });

    await t.stop();
    t = await startTestStack(env, { dataDir: t.dataDir });
    // The restarted anvil (same state) listens on a port of its own.
    chain = createChainClients({ rpcUrl: t.stack.rpcUrl, chainId: t.demo.chainId, pollingIntervalMs: 50 }).publicClient;
    const again = t.perpTrader!;
    const listed = await again.listWithdrawals();
    expect(listed.rows.find((x: PerpWithdrawal) => x.clientWithdrawalId === 'stack-1')).toMatchObject({ status: 'COMPLETED', txHash: done.txHash });
    expect(await again.withdraw(privateKeyToAccount(t.demo.wallets[0]!.privateKey as Hex), { amount: '12.5', clientWithdrawalId: 'stack-1' })).toMatchObject({ status: 'COMPLETED', duplicate: true });
    const logs = await chain.getContractEvents({ address: vault, abi: marginVaultAbi, eventName: 'Withdrawn', args: { withdrawalId: w.withdrawalId }, fromBlock: 0n });
    expect(logs).toHaveLength(1);
    expect(await balanceOf(wallet)).toBe(before + 12_500_000n);
  });
});
