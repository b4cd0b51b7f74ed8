/**
 * `GET account/proof` (docs/proof-of-reserves.md): the caller's leaf in the latest epoch the
 * ReserveRegistry holds, with the Merkle path to its root and where to check it on chain. Read from
 * the stored epoch alone (no engine, no chain call): any perp API instance can answer it.
 */
import type { Address, Hex } from 'viem';
import { NotFoundError } from '../../errors/app-error.ts';
import type { DbExecutor } from '../../storage/database.ts';
import { getReserveLeaf, getReserveNodes, latestReserveEpoch } from '../store/reserves-store.ts';
import { leafHash, pathPositions, ZERO_HASH, type PathStep } from './merkle-sum-tree.ts';

/** Amounts are integer strings of collateral-token units (USDC, `decimals` 6). */
export interface AccountProofBody {
  epoch: number;
  account: string;
  leafIndex: number;
  salt: Hex;
  equity: string;
  pendingWithdrawals: string;
  /** The vault flows the leaf commits (null in epochs built before 0.2.0, whose leaves have four fields). */
  deposited: string | null;
  withdrawn: string | null;
  value: string;
  leafHash: Hex;
  path: Array<{ hash: Hex; sum: string; side: 'left' | 'right' }>;
  root: Hex;
  total: string;
  leafCount: number;
  badDebt: string;
  snapshotTs: number;
  decimals: number;
  chainId: number;
  reserveRegistry: Address;
  vault: Address;
  collateralToken: Address;
  txHash: Hex | null;
  vaultBalance: string | null;
  solvent: boolean | null;
}

export const RESERVE_UNIT_DECIMALS = 6;

export async function accountProof(db: DbExecutor, wallet: string): Promise<AccountProofBody> {
  const e = await latestReserveEpoch(db, 'POSTED');
  if (!e) throw new NotFoundError('proof');
  const leaf = await getReserveLeaf(db, e.epoch, wallet);
  if (!leaf) throw new NotFoundError('proof');
  const path = await readPath(db, e.epoch, e.leafCount, leaf.leafIndex);
  return {
    epoch: e.epoch,
    account: leaf.account.toLowerCase(),
    leafIndex: leaf.leafIndex,
    salt: leaf.salt,
    equity: leaf.equity.toString(),
    pendingWithdrawals: leaf.pendingWithdrawals.toString(),
    deposited: leaf.deposited === undefined ? null : leaf.deposited.toString(),
    withdrawn: leaf.withdrawn === undefined ? null : leaf.withdrawn.toString(),
    value: (leaf.equity + leaf.pendingWithdrawals).toString(),
    leafHash: leafHash(leaf),
    path: path.map((s) => ({ hash: s.hash, sum: s.sum.toString(), side: s.side })),
    root: e.root,
    total: e.total.toString(),
    leafCount: e.leafCount,
    badDebt: e.badDebt.toString(),
    snapshotTs: e.snapshotTs,
    decimals: RESERVE_UNIT_DECIMALS,
    chainId: e.chainId,
    reserveRegistry: e.registry,
    vault: e.vault,
    collateralToken: e.collateralToken,
    txHash: e.txHash,
    vaultBalance: e.vaultBalance === null ? null : e.vaultBalance.toString(),
    solvent: e.solvent,
  };
}

/** The Merkle path of leaf `leafIndex` from the stored nodes (a missing sibling is the zero leaf). */
async function readPath(db: DbExecutor, epoch: number, leafCount: number, leafIndex: number): Promise<PathStep[]> {
  const positions = pathPositions(leafCount, leafIndex);
  const nodes = await getReserveNodes(db, epoch, positions);
  let i = leafIndex;
  return positions.map(([level, idx]) => {
    const n = nodes.get(`${level}:${idx}`) ?? { hash: ZERO_HASH, sum: 0n };
    const side = i % 2 === 0 ? ('right' as const) : ('left' as const);
    i >>= 1;
    return { hash: n.hash, sum: n.sum, side };
  });
}
