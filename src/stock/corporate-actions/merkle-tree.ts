/**
 * The Merkle tree of a dividend distribution: OpenZeppelin's standard tree
 * (`@openzeppelin/merkle-tree`), whose proofs `MerkleProof.verify` checks in
 * `contracts/DividendDistributor.sol`:
 *
 * - a leaf is `keccak256(bytes.concat(keccak256(abi.encode(address account, uint256 amount))))`
 *   (the double hash keeps a 64-byte leaf preimage from ever being an inner node's);
 * - an inner node is `keccak256` of its two children sorted ascending (`Hashes.commutativeKeccak256`),
 *   so a proof is a plain list of siblings.
 *
 * `leafHash`, `hashPair` and `processProof` restate the contract's side, for the tests and for a
 * holder checking its own proof.
 */
import { createRequire } from 'node:module';
import type { StandardMerkleTree as Tree } from '@openzeppelin/merkle-tree';
import { concatHex, encodeAbiParameters, keccak256, type Address, type Hex } from 'viem';

export interface MerkleLeafInput {
  account: Address;
  amount: bigint;
}

export interface MerkleTree {
  root: Hex;
  /** The proof of `account`'s leaf; throws for an account the tree does not hold. */
  proofOf(account: Address): Hex[];
  /** Leaf hash by lower-case account. */
  readonly leaves: ReadonlyMap<string, Hex>;
}

const ZERO_ROOT = `0x${'0'.repeat(64)}` as Hex;
const LEAF_ENCODING = ['address', 'uint256'];

export function leafHash(account: Address, amount: bigint): Hex {
  return keccak256(keccak256(encodeAbiParameters([{ type: 'address' }, { type: 'uint256' }], [account, amount])));
}

/** keccak256 of the pair sorted ascending, as OpenZeppelin's `Hashes.commutativeKeccak256`. */
export function hashPair(a: Hex, b: Hex): Hex {
  return BigInt(a) <= BigInt(b) ? keccak256(concatHex([a, b])) : keccak256(concatHex([b, a]));
}

/** Walks `proof` up from `leaf`, as `MerkleProof.processProof` does. */
export function processProof(leaf: Hex, proof: readonly Hex[]): Hex {
  return proof.reduce<Hex>((node, sibling) => hashPair(node, sibling), leaf);
}

/** Builds the tree of `leaves` (accounts must be distinct; an empty list has the all-zero root). */
export function buildMerkleTree(leaves: readonly MerkleLeafInput[]): MerkleTree {
  const index = new Map<string, number>();
  for (const [i, l] of leaves.entries()) {
    const key = l.account.toLowerCase();
    if (index.has(key)) throw new Error(`merkle tree: account ${key} appears twice`);
    if (l.amount < 0n) throw new Error('merkle tree: negative amount');
    index.set(key, i);
  }
  if (leaves.length === 0) {
    return { root: ZERO_ROOT, leaves: new Map(), proofOf: (account) => { throw new Error(`merkle tree: no leaf for ${account}`); } };
  }
  // Amounts as decimal strings: the library encodes them with abi.encode, exactly, whatever their size.
  // Loaded at the first distribution (it brings @metamask's ABI coder): a start does not need it.
  const { StandardMerkleTree } = createRequire(import.meta.url)('@openzeppelin/merkle-tree') as { StandardMerkleTree: typeof Tree };
  const tree = StandardMerkleTree.of(leaves.map((l) => [l.account, l.amount.toString()]), LEAF_ENCODING);
  const hashes = new Map<string, Hex>(leaves.map((l) => [l.account.toLowerCase(), tree.leafHash([l.account, l.amount.toString()]) as Hex]));
  return {
    root: tree.root as Hex,
    leaves: hashes,
    proofOf(account) {
      const i = index.get(account.toLowerCase());
      if (i === undefined) throw new Error(`merkle tree: no leaf for ${account}`);
      return tree.getProof(i) as Hex[];
    },
  };
}
