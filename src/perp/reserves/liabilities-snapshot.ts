/**
 * What the venue owes, read from the engine in one synchronous pass (docs/proof-of-reserves.md):
 * the engine is single-writer and applies commands between awaits, so a loop without an await sees
 * one consistent state, at one sequence number.
 *
 * Every account the engine holds is a leaf (the venue's fee account included: it only adds to the
 * liabilities), in the order of their salts: a fresh random order each epoch, so the sibling whose
 * sum a proof reveals is not the same, guessable neighbour every time (as sorting by address would make it). A leaf's value is max(equity, 0) + pending withdrawals, in
 * collateral-token units (USDC 6 decimals = the engine's micro-USD). An account below zero is
 * committed at equity 0 and its shortfall reported as bad debt beside the total: the venue cannot
 * count a user's debt as an asset that offsets what it owes everyone else.
 *
 * Each leaf also commits the account's vault flows as the engine knows them (deposits credited,
 * payments confirmed): the vault's escape hatch settles the difference to its own totals.
 */
import { randomBytes } from 'node:crypto';
import { getAddress, type Hex } from 'viem';
import type { PerpEngine } from '../engine/perp-engine.ts';
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

/** A fresh 32-byte salt per account and epoch: it keeps a leaf from being guessed from its parts, and orders the leaves. */
export const randomSalt = (): Hex => `0x${randomBytes(32).toString('hex')}`;

export function snapshotLiabilities(
  engine: Pick<PerpEngine, 'accountAddresses' | 'marginSummary' | 'lastSeq' | 'vaultFlows'>,
  salt: (account: string) => Hex = randomSalt,
): LiabilitiesSnapshot {
  // No await from here to the end of the loop: one state of the engine.
  const engineSeq = engine.lastSeq;
  const accounts = engine.accountAddresses().map((a) => a.toLowerCase()).sort();
  const unordered: ReserveLeaf[] = [];
  let badDebt = 0n;
  for (const account of accounts) {
    const m = engine.marginSummary(account);
    const equity = m?.equity ?? 0n;
    const pending = m?.pendingWithdrawals ?? 0n;
    const debt = equity < 0n ? -equity : 0n;
    const flows = engine.vaultFlows(account) ?? { deposited: 0n, withdrawn: 0n };
    badDebt += debt;
    unordered.push({
      leafIndex: 0,
      account: getAddress(account),
      salt: salt(account),
      equity: equity < 0n ? 0n : equity,
      pendingWithdrawals: pending < 0n ? 0n : pending,
      badDebt: debt,
      deposited: flows.deposited,
      withdrawn: flows.withdrawn,
    });
  }
  // Ties (a caller's fixed salts) fall back to the address order: the result is deterministic.
  const leaves = unordered
    .sort((a, b) => (a.salt < b.salt ? -1 : a.salt > b.salt ? 1 : a.account.toLowerCase() < b.account.toLowerCase() ? -1 : 1))
    .map((l, i) => ({ ...l, leafIndex: i }));
  return { leaves, tree: build(leaves), badDebt, engineSeq };
}
