import { describe, expect, it } from 'vitest';
import { hashTypedData, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { ValidationError } from '../errors/app-error.ts';
import { ANVIL_ACCOUNTS } from './anvil-accounts.ts';
import { delegateDigest, delegateType, delegateTypedData, oneClickDomain, verifyDelegation } from './one-click-typed-data.ts';
import { assertNotExpired, defineTypedData, parseSignature, typedDataDomain } from './typed-data.ts';

const alice = privateKeyToAccount(ANVIL_ACCOUNTS[1].privateKey);
const bob = privateKeyToAccount(ANVIL_ACCOUNTS[2].privateKey);
const relayer = ANVIL_ACCOUNTS[7].address;
const router = '0x5FbDB2315678afecb367f032d93F642f64180aa3' as Address;
const domain = oneClickDomain(31337, router);
const message = { user: alice.address, delegatee: relayer, nonce: 3n, deadline: 1_700_000_600 };

async function rejection(p: Promise<unknown> | (() => unknown)): Promise<ValidationError> {
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (err) {
    expect(err).toBeInstanceOf(ValidationError);
    return err as ValidationError;
  }
  throw new Error('expected a ValidationError');
}

describe('One Click delegation typed data', () => {
  it('builds complete, JSON-safe typed data as contract.md asks', () => {
    const td = delegateTypedData(domain, message);
    expect(JSON.parse(JSON.stringify(td))).toEqual({
      domain: { name: 'OneClickRouter', version: '1', chainId: 31337, verifyingContract: router },
      types: {
        EIP712Domain: [
          { name: 'name', type: 'string' },
          { name: 'version', type: 'string' },
          { name: 'chainId', type: 'uint256' },
          { name: 'verifyingContract', type: 'address' },
        ],
        Delegate: [
          { name: 'user', type: 'address' },
          { name: 'delegatee', type: 'address' },
          { name: 'nonce', type: 'uint64' },
          { name: 'deadline', type: 'uint32' },
        ],
      },
      primaryType: 'Delegate',
      message: { user: alice.address, delegatee: relayer, nonce: '3', deadline: 1_700_000_600 },
    });
  });

  it('hashes as viem does, from typed values or from the JSON a client sends back', () => {
    const td = delegateTypedData(domain, message);
    const expected = hashTypedData({ domain, types: delegateType.types, primaryType: 'Delegate', message });
    expect(delegateDigest(domain, message)).toBe(expected);
    expect(delegateType.hash(domain, JSON.parse(JSON.stringify(td.message)))).toBe(expected);
    expect(delegateType.hash(domain, { ...message, nonce: 4n })).not.toBe(expected);
    expect(delegateType.hash(oneClickDomain(1, router), message)).not.toBe(expected);
  });

  it("recovers the signer of viem's signTypedData, from the typed data as a wallet receives it", async () => {
    const td = JSON.parse(JSON.stringify(delegateTypedData(domain, message)));
    const signature = await alice.signTypedData(td);
    expect(await delegateType.recoverSigner(domain, td.message, signature)).toBe(alice.address);
    await delegateType.verifySigner(domain, td.message, signature, alice.address, 'message.user');

    const verified = await verifyDelegation({ domain, message: td.message, signature, user: alice.address, delegatee: relayer, nowSeconds: 1_700_000_000 });
    expect(verified).toEqual(message);
  });

  it('refuses a signer mismatch, an altered field, a bad format and an expired deadline, naming the field', async () => {
    const signature = await alice.signTypedData({ domain, types: delegateType.types, primaryType: 'Delegate', message });
    const byBob = await bob.signTypedData({ domain, types: delegateType.types, primaryType: 'Delegate', message });
    const now = 1_700_000_000;
    const check = (over: Partial<Parameters<typeof verifyDelegation>[0]>) =>
      verifyDelegation({ domain, message, signature, user: alice.address, delegatee: relayer, nowSeconds: now, ...over });

    const mismatch = await rejection(check({ signature: byBob }));
    expect(mismatch.field).toBe('signature');
    expect(mismatch.message).toBe('signature: is not signed by message.user');
    expect((await rejection(check({ message: { ...message, nonce: 4n } }))).field).toBe('signature');
    expect((await rejection(check({ domain: oneClickDomain(1, router) }))).field).toBe('signature');

    const expired = await rejection(check({ nowSeconds: message.deadline + 1 }));
    expect(expired.message).toBe('message.deadline: has expired');
    await check({ nowSeconds: message.deadline }); // the contract's `block.timestamp > deadline`

    expect((await rejection(check({ user: bob.address }))).field).toBe('message.user');
    expect((await rejection(check({ delegatee: bob.address }))).field).toBe('message.delegatee');

    for (const bad of [undefined, 42, '0x', signature.slice(0, 100), `${signature}00`, signature.replace(/^0x/, ''), signature.replace(/.$/, 'g')]) {
      const err = await rejection(check({ signature: bad }));
      expect(err.field).toBe('signature');
      expect(err.message).toBe('signature: must be 0x and a 65-byte signature in hex');
    }
    // Well-formed but no valid point/recovery id: refused without quoting the signature.
    const garbage = `0x${'00'.repeat(64)}05` as Hex;
    const err = await rejection(check({ signature: garbage }));
    expect(err.field).toBe('signature');
    expect(err.message).not.toContain(garbage.slice(2, 20));
    expect(JSON.stringify({ ...err, message: err.message })).not.toContain(signature.slice(2, 30));
  });

  it('reads a message field by field: required, no extras, types and ranges', async () => {
    const ok = { user: alice.address.toLowerCase(), delegatee: relayer, nonce: '7', deadline: 5 };
    expect(delegateType.parseMessage(ok)).toEqual({ user: alice.address, delegatee: relayer, nonce: 7n, deadline: 5n });
    const cases: Array<[unknown, string]> = [
      [null, 'message: must be an object (Delegate)'],
      [[], 'message: must be an object (Delegate)'],
      [{ ...ok, deadline: undefined }, 'message.deadline: is required'],
      [{ ...ok, extra: 1 }, 'message.extra: is not a field of Delegate'],
      [{ ...ok, user: '0x1234' }, 'message.user: must be an address'],
      [{ ...ok, nonce: '1.5' }, 'message.nonce: must be an integer (a decimal string)'],
      [{ ...ok, nonce: '1e3' }, 'message.nonce: must be an integer (a decimal string)'],
      [{ ...ok, nonce: '-1' }, 'message.nonce: must be an integer (a decimal string)'],
      [{ ...ok, nonce: ['1'] }, 'message.nonce: must be an integer (a decimal string)'],
      [{ ...ok, nonce: (2n ** 64n).toString() }, 'message.nonce: is out of range for uint64'],
      [{ ...ok, deadline: 2 ** 32 }, 'message.deadline: is out of range for uint32'],
      [{ ...ok, deadline: 1.5 }, 'message.deadline: must be an integer (a decimal string)'],
    ];
    for (const [raw, text] of cases) expect((await rejection(() => delegateType.parseMessage(raw))).message).toBe(text);
  });
});

describe('typed data for other flows', () => {
  // The shape a perpetual order could take: nested struct, signed integers, bytes32, bool, string.
  const order = defineTypedData({
    primaryType: 'Order',
    types: {
      Order: [
        { name: 'account', type: 'address' },
        { name: 'market', type: 'Market' },
        { name: 'size', type: 'int256' },
        { name: 'price', type: 'uint256' },
        { name: 'reduceOnly', type: 'bool' },
        { name: 'clientOrderId', type: 'bytes32' },
        { name: 'expiry', type: 'uint64' },
      ],
      Market: [
        { name: 'symbol', type: 'string' },
        { name: 'id', type: 'uint16' },
      ],
    },
  });
  const perpDomain = typedDataDomain({ name: 'PerpExchange', version: '1', chainId: 31337, verifyingContract: router });
  const msg = {
    account: alice.address,
    market: { symbol: 'BTC-USD', id: 1 },
    size: -(10n ** 30n),
    price: 65_000n * 10n ** 18n,
    reduceOnly: true,
    clientOrderId: `0x${'ab'.repeat(32)}` as Hex,
    expiry: 1_700_000_000n,
  };

  it('signs with viem and recovers through the JSON round trip', async () => {
    const td = JSON.parse(JSON.stringify(order.build(perpDomain, msg)));
    expect(td.message.size).toBe('-1000000000000000000000000000000');
    expect(td.message.market).toEqual({ symbol: 'BTC-USD', id: 1 });
    const signature = await alice.signTypedData({ domain: perpDomain, types: order.types, primaryType: 'Order', message: msg });
    expect(await order.recoverSigner(perpDomain, td.message, signature)).toBe(alice.address);
    expect(order.hash(perpDomain, td.message)).toBe(hashTypedData({ domain: perpDomain, types: order.types, primaryType: 'Order', message: msg }));
    expect((await rejection(() => order.parseMessage({ ...td.message, market: { symbol: 'X', id: 70_000 } }))).field).toBe('message.market.id');
    expect((await rejection(() => order.parseMessage({ ...td.message, clientOrderId: '0xab' }))).message).toBe('message.clientOrderId: must be 32 bytes');
  });

  it('refuses unsupported definitions and malformed domains', async () => {
    expect(() => defineTypedData({ primaryType: 'A', types: { A: [{ name: 'xs', type: 'uint256[]' }] } })).toThrow(/unsupported type/);
    expect(() => defineTypedData({ primaryType: 'A', types: { B: [] } })).toThrow(/no type A/);
    expect(() => defineTypedData({ primaryType: 'A', types: { A: [], EIP712Domain: [] } })).toThrow(/EIP712Domain/);
    expect((await rejection(() => typedDataDomain({ name: 'x', version: '1', chainId: 0, verifyingContract: router }))).field).toBe('domain.chainId');
    expect((await rejection(() => typedDataDomain({ name: 'x', version: '1', chainId: 1, verifyingContract: '0x12' }))).field).toBe('domain.verifyingContract');
    expect(parseSignature(`0x${'11'.repeat(64)}`)).toBe(`0x${'11'.repeat(64)}`);
    expect(() => assertNotExpired(10n, 11)).toThrow('message.deadline: has expired');
  });
});
