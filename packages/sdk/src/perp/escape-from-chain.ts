/**
 * The perpetual vault's escape hatch from the chain alone (docs/security.md, "Perpetual vault escape
 * hatch"): since 0.3.0 every reserves root is posted with its leaves, in account order, in the
 * registry's `ReserveLeaves` event. With a node and an address, this rebuilds the tree of the root the
 * vault froze on (or, before a freeze, of the latest root), checks it against the chain's root and
 * total, and answers the call that pays the account: `escapeWithdraw` with its leaf and path, or, for
 * an account with no leaf (it deposited after the snapshot), `escapeUnlisted` with its two neighbours.
 * No API, no saved proof: a proof of an older epoch is simply not needed any more.
 */
import {
  MARGIN_VAULT_ESCAPE_ABI,
  RESERVE_REGISTRY_LEAVES_ABI,
  type EscapeWithdrawArgs,
} from '@tokex/contract';
import type { Address, Hex, PublicClient } from 'viem';
import { build, proof, type LeafInput, type MerkleSumTree } from './reserves-tree.ts';

type Leaf = Required<LeafInput>;
type Step = { hash: Hex; sum: bigint; left: boolean };
export type EscapeLeafProof = { leaf: Leaf; path: Step[] };

export type EscapeCall =
  | { functionName: 'escapeWithdraw'; args: EscapeWithdrawArgs; epoch: bigint; leaf: Leaf }
  | { functionName: 'escapeUnlisted'; args: readonly [neighbours: readonly EscapeLeafProof[]]; epoch: bigint; leaf: null };

export interface EscapeFromChainOptions {
  /** The MarginVault (from your own configuration: demo.json, the deployment file). */
  vault: Address;
  account: Address;
  /** Where to search the registry's events from (default 0: the whole chain). */
  fromBlock?: bigint;
}

type ChainReader = Pick<PublicClient, 'readContract' | 'getContractEvents'>;

const addressKey = (a: string): bigint => BigInt(a);

/** The epoch the vault pays against: the frozen one, or before a freeze the registry's latest. */
async function escapeEpoch(client: ChainReader, vault: Address, registry: Address): Promise<{ epoch: bigint; root: Hex; total: bigint }> {
  const [epoch, root, total, frozenAt] = await client.readContract({ address: vault, abi: MARGIN_VAULT_ESCAPE_ABI, functionName: 'escapeRoot' });
  if (frozenAt !== 0n) return { epoch, root, total };
  const latest = await client.readContract({ address: registry, abi: RESERVE_REGISTRY_LEAVES_ABI, functionName: 'latest' });
  return { epoch: latest.epoch, root: latest.root, total: latest.total };
}

/** Every leaf the registry published for `epoch`, in the tree's order. */
export async function readPublishedLeaves(client: ChainReader, registry: Address, epoch: bigint, fromBlock = 0n): Promise<Leaf[]> {
  const logs = await client.getContractEvents({
    address: registry, abi: RESERVE_REGISTRY_LEAVES_ABI, eventName: 'ReserveLeaves', args: { epoch }, fromBlock, toBlock: 'latest', strict: true,
  });
  if (logs.length === 0) {
    throw new Error(`epoch ${epoch} was posted without its leaves (a root from before 0.3.0): only the proof GET account/proof gave for it can escape against it`);
  }
  return logs[0]!.args.leaves.map((l) => ({ ...l }));
}

const stepsOf = (tree: MerkleSumTree, index: number): Step[] =>
  proof(tree, index).map((s) => ({ hash: s.hash, sum: s.sum, left: s.side === 'left' }));

/**
 * The call that pays `account` through the escape hatch, rebuilt from the chain. Throws when the
 * published leaves do not rebuild the chain's root (they always do for a root the registry built
 * itself) or the root's leaves were never published.
 */
export async function escapeCallFromChain(client: ChainReader, opts: EscapeFromChainOptions): Promise<EscapeCall> {
  const registry = await client.readContract({ address: opts.vault, abi: MARGIN_VAULT_ESCAPE_ABI, functionName: 'reserveRegistry' });
  const { epoch, root, total } = await escapeEpoch(client, opts.vault, registry);
  if (epoch === 0n) throw new Error('the registry holds no reserves root: there is nothing to escape against');
  const leaves = await readPublishedLeaves(client, registry, epoch, opts.fromBlock);
  const tree = build(leaves);
  if (tree.root.toLowerCase() !== root.toLowerCase() || tree.total !== total) {
    throw new Error(`the leaves published for epoch ${epoch} rebuild root ${tree.root} (total ${tree.total}), not the chain's ${root} (${total})`);
  }
  const me = addressKey(opts.account);
  // The first leaf sorting after the account (the leaves are strictly increasing by account).
  let above = leaves.findIndex((l) => addressKey(l.account) >= me);
  if (above >= 0 && addressKey(leaves[above]!.account) === me) {
    const leaf = leaves[above]!;
    const args: EscapeWithdrawArgs = [leaf.salt, leaf.equity, leaf.pendingWithdrawals, leaf.deposited, leaf.withdrawn, stepsOf(tree, above)];
    return { functionName: 'escapeWithdraw', args, epoch, leaf };
  }
  if (above < 0) above = leaves.length;
  const neighbours: EscapeLeafProof[] = [];
  if (above > 0) neighbours.push({ leaf: leaves[above - 1]!, path: stepsOf(tree, above - 1) });
  if (above < leaves.length) neighbours.push({ leaf: leaves[above]!, path: stepsOf(tree, above) });
  return { functionName: 'escapeUnlisted', args: [neighbours], epoch, leaf: null };
}
