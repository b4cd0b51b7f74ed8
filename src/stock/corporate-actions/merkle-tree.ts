/**
 * The Merkle tree of a dividend distribution, in the form OpenZeppelin's `MerkleProof` verifies and
 * `contracts/DividendDistributor.sol` checks:
 *
 * - a leaf is `keccak256(bytes.concat(keccak256(abi.encode(address account, uint256 amount))))`,
 *   OpenZeppelin's standard leaf (the double hash keeps a 64-byte leaf preimage from ever being an
 *   inner node's);
 * - an inner node is `keccak256` of its two children sorted ascending (`Hashes.commutativeKeccak256`),
 *   so a proof is a plain list of siblings, without left/right flags;
 * - leaves are sorted by hash and paired layer by layer; a layer's odd last node moves up unpaired
 *   (it contributes no sibling to the proofs below it).
 *
 * The layout differs from `@openzeppelin/merkle-tree`'s (a complete tree in an array) but every
 * proof verifies with the same `MerkleProof.verify`, which is all the contract needs.
 */
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
  const byAccount = new Map<string, Hex>();
  for (const l of leaves) {
    const key = l.account.toLowerCase();
    if (byAccount.has(key)) throw new Error(`merkle tree: account ${key} appears twice`);
    if (l.amount < 0n) throw new Error('merkle tree: negative amount');
    byAccount.set(key, leafHash(l.account, l.amount));
  }
  const first = [...byAccount.values()].sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0));
  const layers: Hex[][] = [first];
  while (layers[layers.length - 1].length > 1) {
    const below = layers[layers.length - 1];
    const above: Hex[] = [];
    for (let i = 0; i < below.length; i += 2) above.push(i + 1 < below.length ? hashPair(below[i], below[i + 1]) : below[i]);
    layers.push(above);
  }
  const root = first.length === 0 ? ZERO_ROOT : layers[layers.length - 1][0];
  const positions = new Map<Hex, number>(first.map((h, i) => [h, i]));
  return {
    root,
    leaves: byAccount,
    proofOf(account) {
      const leaf = byAccount.get(account.toLowerCase());
      if (leaf === undefined) throw new Error(`merkle tree: no leaf for ${account}`);
      let index = positions.get(leaf) as number;
      const proof: Hex[] = [];
      for (let level = 0; level < layers.length - 1; level++) {
        const layer = layers[level];
        const sibling = index ^ 1;
        if (sibling < layer.length) proof.push(layer[sibling]);
        index >>= 1;
      }
      return proof;
    },
  };
}
