/**
 * What the venue owes, read from the engine in one synchronous pass (docs/proof-of-reserves.md):
 * the engine is single-writer and applies commands between awaits, so a loop without an await sees
 * one consistent state, at one sequence number.
 *
 * Every account the engine holds is a leaf (the venue's fee account included: it only adds to the
 * liabilities), in the order of their addresses: since 0.3.0 the leaves are published on chain with
 * the root, and the registry checks this order, which is what lets an account with no leaf show so
 * to the vault's escape hatch. A leaf's value is max(equity, 0) + pending withdrawals, in
 * collateral-token units (USDC 6 decimals = the engine's micro-USD). An account below zero is
 * committed at equity 0 and its shortfall reported as bad debt beside the total: the venue cannot
 * count a user's debt as an asset that offsets what it owes everyone else.
 *
 * A liquidity provider's share of the pool is in its own leaf (its equity plus what its shares are
 * worth), and out of the pool's: the pool's synthetic account keeps only the rounding dust, so the
 * escape hatch pays each provider its share and the total is unchanged.
 *
 * Each leaf also commits the account's vault flows as the engine knows them (deposits credited,
 * payments confirmed): the vault's escape hatch settles the difference to its own totals.
 */
import { randomBytes } from 'node:crypto';
import { getAddress, type Hex } from 'viem';
import { POOL_ACCOUNT, type PerpEngine } from '../engine/perp-engine.ts';
import type { ReserveLeaf } from '../store/reserves-store.ts';
import { build, type MerkleSumTree } from './merkle-sum-tree.ts';

export interface LiabilitiesSnapshot {
  leaves: ReserveLeaf[];
  tree: MerkleSumTree;
  /** Sum of the negative equities left out of the tree (≥ 0). */
  badDebt: bigint;
  /** The engine's last applied sequence number when read. */
  engineSeq: number;
}

/** A fresh 32-byte salt per account and epoch (published with the leaf since 0.3.0; kept so the leaf's shape is unchanged). */
export const randomSalt = (): Hex => `0x${randomBytes(32).toString('hex')}`;

export function snapshotLiabilities(
  engine: Pick<PerpEngine, 'accountAddresses' | 'marginSummary' | 'lastSeq' | 'vaultFlows' | 'lpValues'>,
  salt: (account: string) => Hex = randomSalt,
): LiabilitiesSnapshot {
  // No await from here to the end of the loop: one state of the engine.
  const engineSeq = engine.lastSeq;
  // Numeric address order, which the registry checks (strictly increasing uint160); for lower-case
  // hex of one length it is the string order.
  const accounts = engine.accountAddresses().map((a) => a.toLowerCase()).sort();
  const lp = engine.lpValues();
  let lpTotal = 0n;
  for (const v of lp.values()) lpTotal += v;
  const leaves: ReserveLeaf[] = [];
  let badDebt = 0n;
  for (const account of accounts) {
    const m = engine.marginSummary(account);
    const own = m?.equity ?? 0n;
    const debt = own < 0n ? -own : 0n;
    // The pool keeps its equity less what its providers' shares are worth (the shares round down, so
    // only dust is left); a provider's leaf adds its shares' worth to its own equity.
    const equity = account === POOL_ACCOUNT ? own - lpTotal : own + (lp.get(account) ?? 0n);
    const pending = m?.pendingWithdrawals ?? 0n;
    const flows = engine.vaultFlows(account) ?? { deposited: 0n, withdrawn: 0n };
    badDebt += debt;
    leaves.push({
      leafIndex: leaves.length,
      account: getAddress(account),
      salt: salt(account),
      equity: equity < 0n ? 0n : equity,
      pendingWithdrawals: pending < 0n ? 0n : pending,
      badDebt: debt,
      deposited: flows.deposited,
      withdrawn: flows.withdrawn,
    });
  }
  return { leaves, tree: build(leaves), badDebt, engineSeq };
}
