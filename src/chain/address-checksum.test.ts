import fc from 'fast-check';
import { checksumAddress as viemChecksum, getAddress, isAddress } from 'viem';
import { describe, expect, it } from 'vitest';
import { checksumAddress, checksumAddressOfBytes, isAddressText } from './address-checksum.ts';

const hex40 = fc.uint8Array({ minLength: 20, maxLength: 20 }).map((b) => Buffer.from(b).toString('hex'));

describe('EIP-55 checksums on the WebAssembly Keccak', () => {
  it("spells EIP-55's own test vectors as the EIP does", () => {
    for (const a of ['0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359', '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB', '0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb']) {
      expect(checksumAddress(a.toLowerCase())).toBe(a);
      expect(checksumAddress(`0x${a.slice(2).toUpperCase()}`)).toBe(a);
    }
  });

  it("equals viem's checksum for random addresses in lower, upper and mixed case", () => {
    fc.assert(
      fc.property(hex40, fc.array(fc.boolean(), { minLength: 40, maxLength: 40 }), (h, upper) => {
        const expected = viemChecksum(`0x${h}`);
        expect(checksumAddress(`0x${h}`)).toBe(expected);
        expect(checksumAddress(`0x${h.toUpperCase()}`)).toBe(expected);
        const mixed = `0x${[...h].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join('')}`;
        expect(checksumAddress(mixed)).toBe(getAddress(mixed));
      }),
      { numRuns: 1_000 },
    );
  });

  it("checksums random 20 bytes as viem checksums their hex", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 20, maxLength: 20 }), (b) => {
        expect(checksumAddressOfBytes(b)).toBe(viemChecksum(`0x${Buffer.from(b).toString('hex')}`));
      }),
      { numRuns: 1_000 },
    );
  });

  it('checksums 20 bytes, a view into a larger buffer included', () => {
    const big = new Uint8Array(32).map((_, i) => i * 7 + 3);
    const tail = big.subarray(12);
    expect(checksumAddressOfBytes(tail)).toBe(viemChecksum(`0x${Buffer.from(tail).toString('hex')}`));
  });

  it("tells an address as viem's non-strict isAddress does", () => {
    for (const v of ['0x' + 'a'.repeat(40), '0x' + 'A'.repeat(40), '0x' + 'g'.repeat(40), '0x' + 'a'.repeat(39), '0X' + 'a'.repeat(40), 'a'.repeat(42), '', ' 0x' + 'a'.repeat(40)]) {
      expect(isAddressText(v)).toBe(isAddress(v, { strict: false }));
    }
    expect(isAddressText(42)).toBe(false);
  });
});
