import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeAbiParameters, getAddress, keccak256, type Address, type Hex } from 'viem';
import { build, buildFromNodes, leafHash, leafNode, MAX_SUM, parentOf, pathPositions, proof, verify, ZERO_HASH, type LeafInput } from './merkle-sum-tree.ts';

const hex32 = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => `0x${Buffer.from(b).toString('hex')}` as Hex);
const address = fc.uint8Array({ minLength: 20, maxLength: 20 }).map((b) => getAddress(`0x${Buffer.from(b).toString('hex')}`) as Address);
const amount = fc.bigInt({ min: 0n, max: 10n ** 15n });
const leaf: fc.Arbitrary<LeafInput> = fc.record({ salt: hex32, account: address, equity: amount, pendingWithdrawals: amount });
const leaves = fc.array(leaf, { minLength: 1, maxLength: 40 });

describe('merkle-sum tree', () => {
  it('hashes a leaf as keccak256(abi.encode(salt, account, equity, pending)) and a node over both sums', () => {
    const l: LeafInput = { salt: `0x${'11'.repeat(32)}`, account: '0x00000000000000000000000000000000000000aa', equity: 5n, pendingWithdrawals: 7n };
    const expected = keccak256(encodeAbiParameters([{ type: 'bytes32' }, { type: 'address' }, { type: 'uint256' }, { type: 'uint256' }], [l.salt, l.account, 5n, 7n]));
    expect(leafHash(l)).toBe(expected);
    expect(leafNode(l).sum).toBe(12n);
    const tree = build([l, { ...l, equity: 1n }]);
    const node = keccak256(encodeAbiParameters([{ type: 'bytes32' }, { type: 'uint256' }, { type: 'bytes32' }, { type: 'uint256' }], [expected, 12n, leafHash({ ...l, equity: 1n }), 8n]));
    expect(tree.root).toBe(node);
    expect(tree.total).toBe(20n);
  });

  it('a leaf with vault flows hashes all six fields (0.2.0), and a changed flow fails its proof', () => {
    const l: LeafInput = { salt: `0x${'44'.repeat(32)}`, account: '0x00000000000000000000000000000000000000dd', equity: 9n, pendingWithdrawals: 1n, deposited: 25n, withdrawn: 15n };
    const types = [{ type: 'bytes32' }, { type: 'address' }, { type: 'uint256' }, { type: 'uint256' }, { type: 'uint256' }, { type: 'uint256' }] as const;
    expect(leafHash(l)).toBe(keccak256(encodeAbiParameters(types, [l.salt, l.account, 9n, 1n, 25n, 15n])));
    // The flows are not part of the sum: the tree's total is still equity + pending.
    const other = { ...l, account: '0x00000000000000000000000000000000000000ee' as Address };
    const tree = build([l, other]);
    expect(tree.total).toBe(20n);
    expect(verify(l, proof(tree, 0), tree.root, tree.total)).toBe(true);
    expect(verify({ ...l, deposited: 26n }, proof(tree, 0), tree.root, tree.total)).toBe(false);
    expect(verify({ ...l, withdrawn: 14n }, proof(tree, 0), tree.root, tree.total)).toBe(false);
    // A leaf of four fields is another hash: an old leaf cannot pass for a new one.
    expect(verify({ ...l, deposited: undefined, withdrawn: undefined }, proof(tree, 0), tree.root, tree.total)).toBe(false);
    expect(() => leafHash({ ...l, withdrawn: undefined })).toThrow(/both flow totals/);
  });

  it('pairs an odd node with the zero leaf; one leaf is its own root; no leaf is the zero root', () => {
    const l: LeafInput = { salt: `0x${'22'.repeat(32)}`, account: '0x00000000000000000000000000000000000000bb', equity: 3n, pendingWithdrawals: 0n };
    expect(build([])).toEqual({ root: ZERO_HASH, total: 0n, levels: [] });
    expect(build([l]).root).toBe(leafHash(l));
    expect(proof(build([l]), 0)).toEqual([]);
    const three = build([l, l, l]);
    const pair = parentOf(leafNode(l), leafNode(l));
    const odd = parentOf(leafNode(l), { hash: ZERO_HASH, sum: 0n });
    expect(three.root).toBe(parentOf(pair, odd).hash);
    expect(three.total).toBe(9n);
  });

  it('every leaf proof verifies, the total is the sum of the leaves, and pathPositions names the siblings', () => {
    fc.assert(
      fc.property(leaves, (ls) => {
        const tree = build(ls);
        expect(tree.total).toBe(ls.reduce((s, l) => s + l.equity + l.pendingWithdrawals, 0n));
        ls.forEach((l, i) => {
          const path = proof(tree, i);
          expect(verify(l, path, tree.root, tree.total)).toBe(true);
          const positions = pathPositions(ls.length, i);
          expect(positions.length).toBe(path.length);
          positions.forEach(([level, idx], k) => expect(tree.levels[level][idx]?.hash ?? ZERO_HASH).toBe(path[k].hash));
        });
      }),
      { numRuns: 60 },
    );
  });

  it('a changed value, salt or account, a wrong total or root fails', () => {
    fc.assert(
      fc.property(leaves, fc.nat(), fc.bigInt({ min: 1n, max: 1000n }), (ls, pick, delta) => {
        const tree = build(ls);
        const i = pick % ls.length;
        const path = proof(tree, i);
        const l = ls[i];
        expect(verify({ ...l, equity: l.equity + delta }, path, tree.root, tree.total)).toBe(false);
        expect(verify({ ...l, pendingWithdrawals: l.pendingWithdrawals + delta }, path, tree.root, tree.total)).toBe(false);
        // Value moved between the parts: the sum is the same, the hash is not.
        if (l.equity >= delta) expect(verify({ ...l, equity: l.equity - delta, pendingWithdrawals: l.pendingWithdrawals + delta }, path, tree.root, tree.total)).toBe(false);
        expect(verify({ ...l, salt: `0x${'00'.repeat(32)}` }, path, tree.root, tree.total)).toBe(l.salt === `0x${'00'.repeat(32)}`);
        expect(verify(l, path, tree.root, tree.total + delta)).toBe(false);
        expect(verify(l, path, ZERO_HASH, tree.total)).toBe(false);
      }),
      { numRuns: 60 },
    );
  });

  it('a swapped, altered or re-sided sibling fails', () => {
    fc.assert(
      fc.property(fc.array(leaf, { minLength: 2, maxLength: 40 }), fc.nat(), fc.nat(), (ls, pick, stepPick) => {
        const tree = build(ls);
        const i = pick % ls.length;
        const path = proof(tree, i);
        const k = stepPick % path.length;
        const step = path[k];
        const flipped = path.map((s, j) => (j === k ? { ...s, side: s.side === 'left' ? ('right' as const) : ('left' as const) } : s));
        // Swapping two siblings of equal hash changes nothing: only assert when they differ.
        if (step.hash !== leafHash(ls[i]) || k > 0) expect(verify(ls[i], flipped, tree.root, tree.total)).toBe(false);
        const moreSum = path.map((s, j) => (j === k ? { ...s, sum: s.sum + 1n } : s));
        expect(verify(ls[i], moreSum, tree.root, tree.total + 1n)).toBe(false);
        if (path.length > 1) {
          const swapped = [path[1], path[0], ...path.slice(2)];
          if (path[0].hash !== path[1].hash) expect(verify(ls[i], swapped, tree.root, tree.total)).toBe(false);
        }
      }),
      { numRuns: 60 },
    );
  });

  it('refuses a negative or overflowing value or sum', () => {
    const l: LeafInput = { salt: `0x${'33'.repeat(32)}`, account: '0x00000000000000000000000000000000000000cc', equity: 1n, pendingWithdrawals: 0n };
    expect(() => build([{ ...l, equity: -1n }])).toThrow(/outside/);
    expect(() => build([{ ...l, equity: MAX_SUM }])).toThrow(/outside/);
    expect(() => build([{ ...l, equity: MAX_SUM - 1n, pendingWithdrawals: 1n }])).toThrow(/outside/);
    // Two leaves each in range whose sum is not.
    expect(() => build([{ ...l, equity: MAX_SUM - 1n }, { ...l, equity: 1n }])).toThrow(/node sum/);
    expect(() => buildFromNodes([{ hash: ZERO_HASH, sum: -5n }])).toThrow(/outside/);

    // A path whose sibling carries a negative sum (cancelling value) or wraps 2^128 is refused.
    const tree = build([l, { ...l, equity: 10n }]);
    const path = proof(tree, 0);
    expect(verify(l, path, tree.root, tree.total)).toBe(true);
    expect(verify(l, [{ ...path[0], sum: -10n }], tree.root, -9n)).toBe(false);
    expect(verify(l, [{ ...path[0], sum: MAX_SUM - 1n }], tree.root, MAX_SUM)).toBe(false);
    expect(verify({ ...l, equity: -1n }, path, tree.root, tree.total)).toBe(false);
  });
});
