/**
 * The Merkle-sum tree of the perpetual venue's liabilities (docs/proof-of-reserves.md): the venue
 * builds it, the ReserveRegistry checks it on chain (contracts/libraries/ReservesTree.sol, the same
 * rules) and a user rebuilds it from the leaves the registry published. Pure: no I/O, bigint only. Amounts are collateral-token units (USDC, 6 decimals), which are also the
 * engine's internal unit (micro-USD), so no conversion is ever made.
 *
 *   leaf  = keccak256(abi.encode(bytes32 salt, address account, uint256 equity, uint256 pendingWithdrawals,
 *                                uint256 deposited, uint256 withdrawn))
 *           value = equity + pendingWithdrawals
 *
 * `deposited` and `withdrawn` are the engine's totals of what the MarginVault took from and paid to
 * the account when the snapshot was read: the vault's escape hatch pays a leaf plus what it took
 * since, less what it paid since (IMarginVault.escapeWithdraw). They add nothing to the sum. Epochs
 * built before 0.2.0 have leaves of the first four fields only (both absent here), and still verify.
 *   node  = keccak256(abi.encode(bytes32 leftHash, uint256 leftSum, bytes32 rightHash, uint256 rightSum))
 *           sum = leftSum + rightSum
 *
 * A node commits to each child's sum separately (not only to their total): a venue cannot move value
 * between two subtrees without changing the hash. Every value and every sum is range-checked to
 * [0, 2^128): a negative or wrapped sum could otherwise hide liabilities. A level of odd length is
 * completed with the zero leaf (hash 0x00…00, sum 0). A tree of one leaf has that leaf as its root;
 * a tree of none has root 0x00…00 and total 0.
 *
 * The equity committed is never negative: an account whose equity is below zero is committed with
 * equity 0 (its debt is the venue's loss, not an asset that would offset what other users are
 * owed); the caller counts that shortfall apart as bad debt.
 */
import { encodeAbiParameters, keccak256, type Address, type Hex } from 'viem';

/** Values and sums must stay below this (a uint128). */
export const MAX_SUM = 1n << 128n;
export const ZERO_HASH: Hex = `0x${'0'.repeat(64)}`;

export interface LeafInput {
  /** 32 random bytes, 0x-prefixed (per account and epoch). */
  salt: Hex;
  account: Address;
  /** Equity committed, ≥ 0 (clamped by the caller). */
  equity: bigint;
  pendingWithdrawals: bigint;
  /** The engine's total of vault deposits credited to the account (absent in leaves before 0.2.0). */
  deposited?: bigint;
  /** The engine's total of vault payments to the account (absent in leaves before 0.2.0). */
  withdrawn?: bigint;
}

export interface TreeNode {
  hash: Hex;
  sum: bigint;
}

export interface PathStep {
  /** The sibling's hash and sum. */
  hash: Hex;
  sum: bigint;
  /** Where the sibling sits: `left` means node = H(sibling, current). */
  side: 'left' | 'right';
}

export interface MerkleSumTree {
  root: Hex;
  total: bigint;
  /** levels[0] are the leaves, the last level is the root (absent for a tree of no leaf). */
  levels: TreeNode[][];
}

function checkRange(what: string, v: bigint): void {
  if (v < 0n || v >= MAX_SUM) throw new RangeError(`reserves tree: ${what} ${v} is outside [0, 2^128)`);
}

export function leafValue(leaf: Pick<LeafInput, 'equity' | 'pendingWithdrawals'>): bigint {
  checkRange('equity', leaf.equity);
  checkRange('pendingWithdrawals', leaf.pendingWithdrawals);
  const v = leaf.equity + leaf.pendingWithdrawals;
  checkRange('leaf value', v);
  return v;
}

export function leafHash(leaf: LeafInput): Hex {
  leafValue(leaf);
  if (leaf.deposited !== undefined || leaf.withdrawn !== undefined) {
    if (leaf.deposited === undefined || leaf.withdrawn === undefined) throw new RangeError('reserves tree: a leaf has both flow totals or neither');
    checkRange('deposited', leaf.deposited);
    checkRange('withdrawn', leaf.withdrawn);
    return keccak256(
      encodeAbiParameters(
        [{ type: 'bytes32' }, { type: 'address' }, { type: 'uint256' }, { type: 'uint256' }, { type: 'uint256' }, { type: 'uint256' }],
        [leaf.salt, leaf.account, leaf.equity, leaf.pendingWithdrawals, leaf.deposited, leaf.withdrawn],
      ),
    );
  }
  return keccak256(
    encodeAbiParameters(
      [{ type: 'bytes32' }, { type: 'address' }, { type: 'uint256' }, { type: 'uint256' }],
      [leaf.salt, leaf.account, leaf.equity, leaf.pendingWithdrawals],
    ),
  );
}

export function leafNode(leaf: LeafInput): TreeNode {
  return { hash: leafHash(leaf), sum: leafValue(leaf) };
}

/** The parent of two nodes; throws when a sum is out of range. */
export function parentOf(left: TreeNode, right: TreeNode): TreeNode {
  checkRange('left sum', left.sum);
  checkRange('right sum', right.sum);
  const sum = left.sum + right.sum;
  checkRange('node sum', sum);
  return {
    hash: keccak256(
      encodeAbiParameters([{ type: 'bytes32' }, { type: 'uint256' }, { type: 'bytes32' }, { type: 'uint256' }], [left.hash, left.sum, right.hash, right.sum]),
    ),
    sum,
  };
}

const ZERO_NODE: TreeNode = { hash: ZERO_HASH, sum: 0n };

/** Builds the tree over leaf nodes already hashed (the store keeps them so). */
export function buildFromNodes(leaves: readonly TreeNode[]): MerkleSumTree {
  if (leaves.length === 0) return { root: ZERO_HASH, total: 0n, levels: [] };
  for (const l of leaves) checkRange('leaf value', l.sum);
  const levels: TreeNode[][] = [leaves.slice()];
  while (levels[levels.length - 1].length > 1) {
    const below = levels[levels.length - 1];
    const up: TreeNode[] = [];
    for (let i = 0; i < below.length; i += 2) up.push(parentOf(below[i], below[i + 1] ?? ZERO_NODE));
    levels.push(up);
  }
  const top = levels[levels.length - 1][0];
  return { root: top.hash, total: top.sum, levels };
}

export function build(leaves: readonly LeafInput[]): MerkleSumTree {
  return buildFromNodes(leaves.map(leafNode));
}

/** The path from leaf `index` to the root: the sibling at each level, bottom up. */
export function proof(tree: MerkleSumTree, index: number): PathStep[] {
  const leaves = tree.levels[0];
  if (!leaves || !Number.isSafeInteger(index) || index < 0 || index >= leaves.length) throw new RangeError(`reserves tree: leaf index ${index} is not in the tree`);
  const path: PathStep[] = [];
  let i = index;
  for (let level = 0; level < tree.levels.length - 1; level++) {
    const nodes = tree.levels[level];
    const sibling = nodes[i ^ 1] ?? ZERO_NODE;
    path.push({ hash: sibling.hash, sum: sibling.sum, side: i % 2 === 0 ? 'right' : 'left' });
    i >>= 1;
  }
  return path;
}

/** The sibling positions `proof` reads for leaf `index` of a tree of `leafCount` leaves: [level, index] bottom up. */
export function pathPositions(leafCount: number, index: number): Array<[level: number, index: number]> {
  const out: Array<[number, number]> = [];
  let n = leafCount;
  let i = index;
  for (let level = 0; n > 1; level++) {
    out.push([level, i ^ 1]);
    i >>= 1;
    n = Math.ceil(n / 2);
  }
  return out;
}

/** Recomputes the root from a leaf and its path; false on any mismatch or out-of-range sum. */
export function verify(leaf: LeafInput, path: readonly PathStep[], root: Hex, total: bigint): boolean {
  try {
    let node = leafNode(leaf);
    for (const step of path) {
      const sibling = { hash: step.hash, sum: step.sum };
      if (step.side === 'left') node = parentOf(sibling, node);
      else if (step.side === 'right') node = parentOf(node, sibling);
      else return false;
    }
    return node.hash.toLowerCase() === root.toLowerCase() && node.sum === total;
  } catch {
    return false;
  }
}
