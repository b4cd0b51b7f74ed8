import fc from 'fast-check';
import { concatHex, encodeAbiParameters, keccak256, type Address } from 'viem';
import { describe, expect, it } from 'vitest';
import { buildMerkleTree, hashPair, leafHash, processProof } from './merkle-tree.ts';

const addr = (n: number): Address => `0x${n.toString(16).padStart(40, '0')}` as Address;

describe('dividend Merkle tree', () => {
  it('hashes leaves as OpenZeppelin\'s standard tree does and pairs sorted', () => {
    const inner = keccak256(encodeAbiParameters([{ type: 'address' }, { type: 'uint256' }], [addr(1), 5n]));
    expect(leafHash(addr(1), 5n)).toBe(keccak256(inner));
    const [a, b] = [leafHash(addr(1), 5n), leafHash(addr(2), 7n)];
    expect(hashPair(a, b)).toBe(hashPair(b, a));
    expect(hashPair(a, b)).toBe(BigInt(a) < BigInt(b) ? keccak256(concatHex([a, b])) : keccak256(concatHex([b, a])));
  });

  it('a single leaf is the root with an empty proof; no leaves give the zero root', () => {
    const t = buildMerkleTree([{ account: addr(3), amount: 9n }]);
    expect(t.root).toBe(leafHash(addr(3), 9n));
    expect(t.proofOf(addr(3))).toEqual([]);
    expect(buildMerkleTree([]).root).toBe(`0x${'0'.repeat(64)}`);
    expect(() => t.proofOf(addr(4))).toThrow(/no leaf/);
    expect(() => buildMerkleTree([{ account: addr(1), amount: 1n }, { account: addr(1), amount: 2n }])).toThrow(/twice/);
  });

  it('property: every leaf\'s proof leads to the root, and a wrong amount does not', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 1, max: 1 << 30 }), { minLength: 1, maxLength: 70 }), (ids) => {
        const leaves = ids.map((id) => ({ account: addr(id), amount: BigInt(id) * 3n }));
        const t = buildMerkleTree(leaves);
        for (const l of leaves) {
          const proof = t.proofOf(l.account);
          expect(proof.length).toBeLessThanOrEqual(Math.ceil(Math.log2(leaves.length)));
          expect(processProof(leafHash(l.account, l.amount), proof)).toBe(t.root);
          if (leaves.length > 1) expect(processProof(leafHash(l.account, l.amount + 1n), proof)).not.toBe(t.root);
        }
      }),
      { numRuns: 60 },
    );
  });
});
