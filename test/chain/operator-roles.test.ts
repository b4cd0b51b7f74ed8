/**
 * Each sending role has its own key; the deployment grants the executor's the operator rights the
 * contracts check, and the executor settles through the process's sender for that key.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeFunctionData } from 'viem';
import { cashierAbi, stockRouterAbi } from '../../src/chain/abi/generated/index.ts';
import { ANVIL_ACCOUNTS, DEMO_WALLETS, OPERATOR_ACCOUNT } from '../../src/chain/anvil-accounts.ts';
import {
  assertDistinctRoleKeys,
  SENDER_ROLE_SPECS,
  SENDER_ROLES,
  senderAddress,
  senderKey,
  senderKeys,
  stockOperatorGrants,
} from '../../src/chain/operator-roles.ts';
import { senderFor } from '../../src/chain/tx-sender.ts';
import { startChainFixture, type ChainFixture } from '../support/chain-fixture.ts';

const embedded = { keys: {}, embeddedAnvil: true, allInOneProcess: true };
const K = (i: number) => ANVIL_ACCOUNTS[i];

describe('role keys', () => {
  it('the embedded stack gives each role its own dev account: none a demo wallet, none the deployer', () => {
    const addresses = SENDER_ROLES.map((r) => senderKey(r, embedded).address);
    expect(addresses).toEqual([K(8).address, K(7).address, K(6).address, K(5).address]);
    expect(new Set([...addresses, OPERATOR_ACCOUNT.address, ...DEMO_WALLETS.map((w) => w.address)]).size).toBe(addresses.length + 1 + DEMO_WALLETS.length);
    expect(senderKey('executor', embedded).source).toBe('dev-account');
  });

  it("a role's own key wins; the shared key serves only a process running every role", () => {
    const keys = { shared: K(9).privateKey, own: { executor: K(5).privateKey } };
    expect(senderKey('executor', { keys, embeddedAnvil: false, allInOneProcess: false })).toEqual({
      role: 'executor',
      privateKey: K(5).privateKey,
      address: K(5).address,
      source: 'role-key',
    });
    expect(senderKey('relayer', { keys, embeddedAnvil: false, allInOneProcess: true }).source).toBe('shared-operator-key');
    expect(() => senderKey('relayer', { keys, embeddedAnvil: false, allInOneProcess: false })).toThrow(
      'RELAYER_PRIVATE_KEY is required: the relayer runs in a process of its own, and OPERATOR_PRIVATE_KEY serves only a process that runs every role',
    );
    expect(() => senderKey('executor', { keys: {}, embeddedAnvil: false, allInOneProcess: true })).toThrow(
      'EXECUTOR_PRIVATE_KEY (or OPERATOR_PRIVATE_KEY) is required to run the executor',
    );
  });

  it('refuses one key for two roles and a demo wallet key', () => {
    expect(() => assertDistinctRoleKeys({ own: { executor: K(5).privateKey, relayer: K(5).privateKey } })).toThrow(
      'EXECUTOR_PRIVATE_KEY and RELAYER_PRIVATE_KEY: the same key; each sending role needs its own',
    );
    expect(() => senderKeys(['executor'], { keys: { own: { 'perp-operator': DEMO_WALLETS[0].privateKey } }, embeddedAnvil: true, allInOneProcess: true })).toThrow(
      /PERP_OPERATOR_PRIVATE_KEY: is a demo wallet's key/,
    );
    expect(Object.keys(senderKeys(['executor', 'relayer'], embedded))).toEqual(['executor', 'relayer']);
  });

  it('answers the address a role sends with, without its key when an *_ADDRESS is set', () => {
    const opts = { keys: { addresses: { relayer: K(4).address } }, embeddedAnvil: false, allInOneProcess: false };
    expect(senderAddress('relayer', opts)).toBe(K(4).address);
    expect(senderAddress('executor', opts)).toBeUndefined();
    expect(stockOperatorGrants(opts)).toEqual([]);
    expect(stockOperatorGrants(embedded)).toEqual([K(8).address]);
    expect(SENDER_ROLE_SPECS.relayer.contractRights).toBe('none');
  });
});

describe('on chain', () => {
  let f: ChainFixture;
  beforeAll(async () => {
    f = await startChainFixture({ deployOptions: { operators: stockOperatorGrants(embedded) } });
  });
  afterAll(async () => {
    await f?.stop();
  });

  it("the executor's key is an operator of both contracts and settles through its sender; the relayer's is not", async () => {
    const executor = senderKey('executor', embedded);
    const relayer = senderKey('relayer', embedded);
    const { stockRouter, cashier } = f.deployment.contracts;
    const isOperator = (address: `0x${string}`) =>
      Promise.all([
        f.publicClient.readContract({ address: stockRouter, abi: stockRouterAbi, functionName: 'isOperator', args: [address] }),
        f.publicClient.readContract({ address: cashier, abi: cashierAbi, functionName: 'isOperator', args: [address] }),
      ]);
    expect(await isOperator(executor.address)).toEqual([true, true]);
    expect(await isOperator(relayer.address)).toEqual([false, false]);

    const settle = { to: stockRouter, data: encodeFunctionData({ abi: stockRouterAbi, functionName: 'settleOrders', args: [[], []] }), gas: 200_000n };
    const ok = await senderFor({ publicClient: f.publicClient, privateKey: executor.privateKey }).send(settle);
    expect(ok.status).toBe('success');
    expect(ok.from.toLowerCase()).toBe(executor.address.toLowerCase());
    const refused = await senderFor({ publicClient: f.publicClient, privateKey: relayer.privateKey }).send(settle);
    expect(refused.status).toBe('reverted');
  });
});
