import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { getAddress, hashTypedData, parseSignature as viemSignature, recoverAddress, serializeCompactSignature, signatureToCompactSignature, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { ValidationError } from '../errors/app-error.ts';
import { ANVIL_ACCOUNTS } from './anvil-accounts.ts';
import { delegateDigest, delegateType, delegateTypedData, oneClickDomain, verifyDelegation } from './one-click-typed-data.ts';
import { assertNotExpired, defineTypedData, parseSignature, typedDataDomain } from './typed-data.ts';
import { CONTRACT_MD_DELEGATE_TYPES } from '../../test/support/contract-delegate-types.ts';

const alice = privateKeyToAccount(ANVIL_ACCOUNTS[1].privateKey);
const bob = privateKeyToAccount(ANVIL_ACCOUNTS[2].privateKey);
const relayer = ANVIL_ACCOUNTS[7].address;
const router = '0x5FbDB2315678afecb367f032d93F642f64180aa3' as Address;
const domain = oneClickDomain(31337, router);
const message = { user: alice.address, delegatee: relayer, nonce: 3n, deadline: 1_700_000_600 };

const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
/** The 64-byte EIP-2098 form of a 65-byte signature: r ‖ yParity·2²⁵⁵ + s. */
function toCompact(sig: Hex): Hex {
  const { r, s, yParity } = viemSignature(sig);
  return `0x${r.slice(2)}${((BigInt(yParity) << 255n) | BigInt(s)).toString(16).padStart(64, '0')}`;
}
/** The malleated twin (r, n − s, the other v): the same signer recovers from it. */
function highS(sig: Hex): Hex {
  const { r, s, yParity } = viemSignature(sig);
  return `0x${r.slice(2)}${(SECP256K1_N - BigInt(s)).toString(16).padStart(64, '0')}${yParity === 0 ? '1c' : '1b'}`;
}

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
      types: CONTRACT_MD_DELEGATE_TYPES,
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
      expect(err.message).toBe('signature: must be 0x and a 65-byte signature (or a 64-byte EIP-2098 compact one) in hex');
    }
    // Well-formed but no valid point/recovery id: refused without quoting the signature.
    const garbage = `0x${'00'.repeat(64)}05` as Hex;
    const err = await rejection(check({ signature: garbage }));
    expect(err.field).toBe('signature');
    expect(err.message).not.toContain(garbage.slice(2, 20));
    expect(JSON.stringify({ ...err, message: err.message })).not.toContain(signature.slice(2, 30));
  });

  it('accepts the 64-byte EIP-2098 compact form wherever the 65-byte one is, and v as 0/1', async () => {
    const signature = await alice.signTypedData({ domain, types: delegateType.types, primaryType: 'Delegate', message });
    const compact = toCompact(signature);
    expect(compact).toBe(serializeCompactSignature(signatureToCompactSignature(viemSignature(signature))));
    expect(await delegateType.recoverSigner(domain, message, compact)).toBe(alice.address);
    await delegateType.verifySigner(domain, message, compact, alice.address, 'message.user');
    expect(await verifyDelegation({ domain, message, signature: compact, user: alice.address, delegatee: relayer, nowSeconds: 1_700_000_000 })).toEqual(message);
    // Both forms read as the same 65 bytes, v 27/28: what OpenZeppelin's ECDSA.recover takes on chain.
    expect(parseSignature(compact)).toBe(signature.toLowerCase());
    expect(parseSignature(signature.toUpperCase().replace(/^0X/, '0x'))).toBe(signature.toLowerCase());
    const v01 = `${signature.slice(0, 130)}0${Number.parseInt(signature.slice(130), 16) - 27}` as Hex;
    expect(parseSignature(v01)).toBe(signature.toLowerCase());
    expect(await delegateType.recoverSigner(domain, message, v01)).toBe(alice.address);
    // A compact signature of another key, or with the parity bit flipped, recovers someone else.
    const byBob = toCompact(await bob.signTypedData({ domain, types: delegateType.types, primaryType: 'Delegate', message }));
    expect((await rejection(delegateType.verifySigner(domain, message, byBob, alice.address, 'message.user'))).message).toBe('signature: is not signed by message.user');
    const flipped = `0x${compact.slice(2, 66)}${(BigInt(`0x${compact.slice(66)}`) ^ (1n << 255n)).toString(16).padStart(64, '0')}` as Hex;
    expect(await delegateType.recoverSigner(domain, message, flipped)).not.toBe(alice.address);
  });

  it('refuses a high-s signature (EIP-2), although it recovers the same signer', async () => {
    const signature = await alice.signTypedData({ domain, types: delegateType.types, primaryType: 'Delegate', message });
    const malleated = highS(signature);
    expect(malleated.toLowerCase()).not.toBe(signature.toLowerCase());
    // What makes the explicit check necessary: the curve alone accepts the malleated twin.
    expect(await recoverAddress({ hash: delegateDigest(domain, message), signature: malleated })).toBe(alice.address);
    const reason = 'signature: has a high s value (above secp256k1n/2), which Ethereum refuses (EIP-2): send the low-s form (r, n - s, the other v)';
    expect((await rejection(delegateType.recoverSigner(domain, message, malleated))).message).toBe(reason);
    expect((await rejection(delegateType.verifySigner(domain, message, malleated, alice.address, 'message.user'))).message).toBe(reason);
    const err = await rejection(verifyDelegation({ domain, message, signature: malleated, user: alice.address, delegatee: relayer, nowSeconds: 1_700_000_000 }));
    expect(err.field).toBe('signature');
    expect(err.message).not.toContain(malleated.slice(2, 20));
    expect((await rejection(() => parseSignature(malleated, 'body.sig'))).message).toMatch(/^body\.sig: has a high s value/);
    // The boundary: s = n/2 is the largest accepted, n/2 + 1 the smallest refused; r and s in [1, n).
    const n = SECP256K1_N;
    const word = (x: bigint) => x.toString(16).padStart(64, '0');
    const r = signature.slice(2, 66);
    expect(parseSignature(`0x${r}${word(n / 2n)}1c`)).toBe(`0x${r}${word(n / 2n)}1c`);
    expect((await rejection(() => parseSignature(`0x${r}${word(n / 2n + 1n)}1c`))).message).toMatch(/high s value/);
    // The compact form can carry an s in (n/2, 2^255) too (the top bit is the parity): refused alike.
    expect(parseSignature(`0x${r}${word((1n << 255n) | (n / 2n))}`)).toBe(`0x${r}${word(n / 2n)}1c`);
    expect((await rejection(() => parseSignature(`0x${r}${word(n / 2n + 1n)}`))).message).toMatch(/high s value/);
    expect((await rejection(() => parseSignature(`0x${r}${word((1n << 255n) | (n / 2n + 1n))}`))).message).toMatch(/high s value/);
    for (const bad of [`0x${word(0n)}${word(1n)}1b`, `0x${word(n)}${word(1n)}1b`, `0x${r}${word(0n)}1b`, `0x${r}${word(1n)}1d`]) {
      expect((await rejection(() => parseSignature(bad))).message).toMatch(/^signature: is not a valid signature/);
    }
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
    // A compact signature reads as its 65-byte form: r, s without the parity bit, v = 27 + parity.
    expect(parseSignature(`0x${'11'.repeat(64)}`)).toBe(`0x${'11'.repeat(64)}1b`);
    expect(() => assertNotExpired(10n, 11)).toThrow('message.deadline: has expired');
  });
});

describe('the EIP-712 digest computed here', () => {
  // Every atomic kind, a nested struct and a struct used twice (its type once in the type string),
  // dependencies out of alphabetical order.
  const kind = defineTypedData({
    primaryType: 'Mail',
    types: {
      Mail: [
        { name: 'from', type: 'Person' },
        { name: 'to', type: 'Person' },
        { name: 'note', type: 'string' },
        { name: 'blob', type: 'bytes' },
        { name: 'tag', type: 'bytes4' },
        { name: 'amount', type: 'int128' },
        { name: 'nonce', type: 'uint64' },
        { name: 'flag', type: 'bool' },
        { name: 'asset', type: 'Asset' },
      ],
      Person: [
        { name: 'wallet', type: 'address' },
        { name: 'name', type: 'string' },
      ],
      Asset: [
        { name: 'id', type: 'uint8' },
        { name: 'hash', type: 'bytes32' },
      ],
    },
  });
  const hex = (n: number) => fc.uint8Array({ minLength: n, maxLength: n }).map((b) => `0x${Buffer.from(b).toString('hex')}` as Hex);
  const person = fc.record({ wallet: hex(20).map((h) => getAddress(h)), name: fc.string({ unit: 'grapheme', maxLength: 20 }) });

  it('names a nested field in its errors by its whole path, and reads the message again when it is not one it parsed', async () => {
    const ok = {
      from: { wallet: alice.address, name: 'a' },
      to: { wallet: relayer, name: 'b' },
      note: 'n',
      blob: '0x',
      tag: '0x01020304',
      amount: '-5',
      nonce: '7',
      flag: false,
      asset: { id: 3, hash: `0x${'cd'.repeat(32)}` },
    };
    const cases: Array<[unknown, string]> = [
      [{ ...ok, to: { ...ok.to, wallet: '0x12' } }, 'message.to.wallet: must be an address'],
      [{ ...ok, asset: { ...ok.asset, id: 256 } }, 'message.asset.id: is out of range for uint8'],
      [{ ...ok, asset: { ...ok.asset, hash: '0xab' } }, 'message.asset.hash: must be 32 bytes'],
      [{ ...ok, from: { ...ok.from, name: 5 } }, 'message.from.name: must be a string'],
      [{ ...ok, flag: 'yes' }, 'message.flag: must be true or false'],
      [{ ...ok, from: { ...ok.from, extra: 1 } }, 'message.from.extra: is not a field of Person'],
      [{ ...ok, asset: null }, 'message.asset: is required'],
      [{ ...ok, asset: 'x' }, 'message.asset: must be an object (Asset)'],
    ];
    for (const [raw, text] of cases) expect((await rejection(() => kind.parseMessage(raw))).message).toBe(text);
    const domain = typedDataDomain({ name: 'Mail', version: '1', chainId: 1, verifyingContract: router });
    const parsed = kind.parseMessage(ok);
    // A copy is not a message it parsed: read again, and refused if it no longer reads.
    expect(kind.hash(domain, { ...parsed })).toBe(kind.hash(domain, parsed));
    expect(await rejection(() => kind.hash(domain, { ...parsed, nonce: 'seven' }))).toMatchObject({ message: 'message.nonce: must be an integer (a decimal string)' });
  });

  it('equals viem hashTypedData for random messages, domains and every kind the services define', () => {
    fc.assert(
      fc.property(
        fc.record({
          from: person,
          to: person,
          // Repeated short strings come from the string-word cache, long ones never enter it, and
          // lone surrogates are hashed as the U+FFFD that viem's TextEncoder writes.
          note: fc.oneof(fc.string({ unit: 'grapheme', maxLength: 40 }), fc.constantFrom('BUY', 'SELL', ''), fc.string({ unit: 'binary', minLength: 60, maxLength: 70 })),
          blob: fc.uint8Array({ maxLength: 70 }).map((b) => `0x${Buffer.from(b).toString('hex')}` as Hex),
          tag: hex(4),
          amount: fc.bigInt({ min: -(1n << 127n), max: (1n << 127n) - 1n }),
          nonce: fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }),
          flag: fc.boolean(),
          asset: fc.record({ id: fc.integer({ min: 0, max: 255 }).map(BigInt), hash: hex(32) }),
        }),
        fc.record({ name: fc.string({ maxLength: 12 }), version: fc.constantFrom('1', '2'), chainId: fc.integer({ min: 1, max: 2 ** 40 }), verifyingContract: hex(20) }),
        (message, d) => {
          const domain = typedDataDomain(d);
          const expected = hashTypedData({ domain, types: kind.types, primaryType: 'Mail', message } as Parameters<typeof hashTypedData>[0]);
          // From typed values and from the JSON a client sends back.
          expect(kind.hash(domain, message)).toBe(expected);
          const json = JSON.parse(JSON.stringify(kind.build(domain, message).message));
          expect(kind.hash(domain, json)).toBe(expected);
          // A message parseMessage answered is hashed as it is, not read again: the same digest.
          expect(kind.hash(domain, kind.parseMessage(json))).toBe(expected);
        },
      ),
      { numRuns: 500 },
    );
  });
});
