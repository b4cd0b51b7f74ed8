import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeFunctionResult, encodeFunctionData, encodeFunctionResult, getAddress, type Address } from 'viem';
import { accountLensAbi } from './abi/generated/index.ts';
import { decodeAccount, getAccountEncoder, LensDecodingError } from './account-lens-codec.ts';

const address = fc.uint8Array({ minLength: 20, maxLength: 20 }).map((b) => getAddress(`0x${Buffer.from(b).toString('hex')}`) as Address);
const uint = fc.bigInt({ min: 0n, max: (1n << 256n) - 1n });
const account = fc.record({
  blockNumber: uint,
  freeMusd: uint,
  lockedMusd: uint,
  stocks: fc.array(fc.record({ stock: address, wallet: uint, exchange: uint, locked: uint, allowance: uint }), { maxLength: 8 }),
  cashTokens: fc.array(fc.record({ token: address, wallet: uint, allowance: uint }), { maxLength: 4 }),
});

function viemAnswer(a: unknown): `0x${string}` {
  return encodeFunctionResult({ abi: accountLensAbi, functionName: 'getAccount', result: a } as never);
}

describe('AccountLens.getAccount codec', () => {
  it('encodes the same calldata as viem for any user, spender and lists', () => {
    fc.assert(
      fc.property(address, address, fc.array(address, { maxLength: 8 }), fc.array(address, { maxLength: 4 }), (user, spender, stocks, cash) => {
        const ours = getAccountEncoder(accountLensAbi, stocks, cash)(user, spender);
        const viem = encodeFunctionData({ abi: accountLensAbi, functionName: 'getAccount', args: [user, stocks, cash, spender] });
        expect(ours).toBe(viem);
      }),
      { numRuns: 200 },
    );
  });

  it('decodes what viem decodes, extreme values and empty lists included', () => {
    fc.assert(
      fc.property(account, (a) => {
        const data = viemAnswer(a);
        const viem = decodeFunctionResult({ abi: accountLensAbi, functionName: 'getAccount', data });
        expect(decodeAccount(data)).toEqual(viem);
        expect(decodeAccount(data)).toEqual(a);
      }),
      { numRuns: 300 },
    );
  });

  it('refuses truncated, misaligned or out-of-range answers instead of reading garbage', () => {
    const data = viemAnswer({
      blockNumber: 7n,
      freeMusd: 1n,
      lockedMusd: 2n,
      stocks: [{ stock: getAddress('0x' + '11'.repeat(20)), wallet: 1n, exchange: 2n, locked: 3n, allowance: 4n }],
      cashTokens: [],
    });
    expect(() => decodeAccount('0x')).toThrow(LensDecodingError);
    expect(() => decodeAccount(data.slice(0, -64))).toThrow(LensDecodingError);
    expect(() => decodeAccount(data.slice(0, -1))).toThrow(LensDecodingError);
    // The stocks array claims a huge length.
    const words = data.slice(2).match(/.{64}/g)!;
    const lengthAt = 1 + 0x20 * 0 + Number(BigInt('0x' + words[4]) / 32n);
    const bad = [...words];
    bad[lengthAt] = 'f'.repeat(64);
    expect(() => decodeAccount('0x' + bad.join(''))).toThrow(LensDecodingError);
    // An address word with high bits set.
    const dirty = [...words];
    dirty[lengthAt + 1] = '1' + dirty[lengthAt + 1].slice(1);
    expect(() => decodeAccount('0x' + dirty.join(''))).toThrow(LensDecodingError);
  });
});
