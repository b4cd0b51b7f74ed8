import fc from 'fast-check';
import { bytesToHex, keccak256, stringToHex } from 'viem';
import { describe, expect, it } from 'vitest';
import { keccak256Bytes, keccak256Hex, keccak256Utf8 } from './keccak.ts';

describe('keccak256 in WebAssembly', () => {
  it('equals viem on the empty input and on known vectors', () => {
    expect(keccak256Hex(new Uint8Array())).toBe('0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470');
    expect(bytesToHex(keccak256Utf8('transfer(address,uint256)')).slice(0, 10)).toBe('0xa9059cbb');
  });

  it('equals viem on random bytes, across the 136-byte block boundary', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 600 }), (data) => {
        expect(keccak256Hex(data)).toBe(keccak256(data));
        expect(bytesToHex(keccak256Bytes(data))).toBe(keccak256(data));
      }),
      { numRuns: 500 },
    );
  });

  it("hashes a string's UTF-8 as viem does, lone surrogates included", () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 80 }), (s) => {
        expect(bytesToHex(keccak256Utf8(s))).toBe(keccak256(stringToHex(s)));
      }),
      { numRuns: 500 },
    );
    expect(bytesToHex(keccak256Utf8('\ud800'))).toBe(keccak256(stringToHex('\ud800')));
  });

  it('answers a fresh array each call, so a caller may keep or change it', () => {
    const a = keccak256Bytes(new Uint8Array([1]));
    a.fill(0);
    expect(bytesToHex(keccak256Bytes(new Uint8Array([1])))).toBe(keccak256(new Uint8Array([1])));
  });
});
