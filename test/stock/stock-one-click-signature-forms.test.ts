/**
 * `1ct/enable` reads the wallet's signature as Ethereum does: the 64-byte compact form of EIP-2098
 * and a 65-byte one with v 0/1 are accepted and submitted to the One Click router in the 65-byte,
 * v 27/28 form its OpenZeppelin ECDSA takes (the delegation is recorded on chain); a high-s signature
 * (EIP-2), which recovers the same wallet but which the contract refuses, answers 400 naming
 * `signature` with nothing sent. On anvil, SQLite and, with DATABASE_URL, PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Address, Hex } from 'viem';
import { oneClickRouterAbi } from '../../src/chain/abi/generated/index.ts';
import { chainClients, oneClickUsers, RELAYER, stockApiFailure as failure, type OneClickUser } from '../support/one-click-users.ts';
import { highS, toCompact } from '../support/signature-forms.ts';
import { stackEngines } from '../support/stack-engines.ts';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';

const deadlineIn = (s: number) => Math.floor(Date.now() / 1000) + s;

describe.each(stackEngines('ocsig'))('One Click signature forms ($name)', (engine) => {
  let t: TestStack;
  let env: Record<string, string>;
  let users: OneClickUser[];
  let pub: ReturnType<typeof chainClients>['pub'];

  const relayerNonce = () => pub.getTransactionCount({ address: RELAYER, blockTag: 'pending' });
  const delegateOf = (user: Address) =>
    pub.readContract({ address: t.demo.stock.contracts.oneClickRouter, abi: oneClickRouterAbi, functionName: 'delegateOf', args: [user] });
  /** Prepares a delegation for `u` and answers the wallet's 65-byte signature over it. */
  const prepared = async (u: OneClickUser) => {
    const deadline = deadlineIn(600);
    const { signPayload } = await u.client.post<any>('/api/v1/1ct/prepare', { deadline });
    return { deadline, signature: await u.account.signTypedData(signPayload) };
  };
  const enabledOnChain = async (u: OneClickUser, r: { status: string; txHash: string | null }) => {
    expect(r).toMatchObject({ status: 'enable', delegationStatus: 'enabled' });
    expect((await pub.getTransactionReceipt({ hash: r.txHash as Hex })).status).toBe('success');
    expect(await delegateOf(u.address)).toBe(RELAYER);
  };

  beforeAll(async () => {
    env = engine.env();
    t = await startTestStack({ ...env, INDEXER_POLL_MS: '100' });
    pub = chainClients(t).pub;
    users = await oneClickUsers(t, `ocsig-${engine.name}`, 3);
  }, 120_000);
  afterAll(async () => {
    await t?.stop();
    await engine.cleanup?.(env);
  });

  it('refuses a high-s signature with 400 naming signature, nothing sent; the low-s one then enables', async () => {
    const [alice] = users;
    const before = await relayerNonce();
    const { deadline, signature } = await prepared(alice);
    const err = await failure(alice.client.post('/api/v1/1ct/enable', { signature: highS(signature), deadline }));
    expect([err.httpStatus, err.code]).toEqual([400, 400]);
    expect(err.message).toContain('signature: has a high s value (above secp256k1n/2), which Ethereum refuses (EIP-2)');
    expect(await relayerNonce()).toBe(before);
    expect(await alice.client.get('/api/v1/1ct/status')).toEqual({ status: 'disabled', delegationStatus: 'disabled', delegatee: RELAYER });
    await enabledOnChain(alice, await alice.client.post<any>('/api/v1/1ct/enable', { signature, deadline }));
  });

  it('enables from the 64-byte compact form, submitted as the 65 bytes the router takes', async () => {
    const [, bob] = users;
    const { deadline, signature } = await prepared(bob);
    const compact = toCompact(signature);
    expect(compact).toHaveLength(2 + 128);
    const r = await bob.client.post<any>('/api/v1/1ct/enable', { signature: compact, deadline });
    await enabledOnChain(bob, r);
    const tx = await pub.getTransaction({ hash: r.txHash as Hex });
    // The calldata carries the 65-byte signature (v 27/28), not the compact one.
    expect(tx.input.toLowerCase()).toContain(signature.slice(2).toLowerCase());
    expect(await bob.client.get('/api/v1/1ct/status')).toEqual({ status: 'enable', delegationStatus: 'enabled', delegatee: RELAYER });
  });

  it('enables from a 65-byte signature written with v 0/1', async () => {
    const [, , carol] = users;
    const { deadline, signature } = await prepared(carol);
    const v01 = `${signature.slice(0, 130)}0${Number.parseInt(signature.slice(130), 16) - 27}` as Hex;
    await enabledOnChain(carol, await carol.client.post<any>('/api/v1/1ct/enable', { signature: v01, deadline }));
  });
});
