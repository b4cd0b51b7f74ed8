/**
 * The proof-of-reserves epochs (`perp_reserve_epochs`, `perp_reserve_leaves`, `perp_reserve_nodes`,
 * migration 0017; docs/proof-of-reserves.md). An epoch is stored whole (its record, every leaf and
 * every node) in one transaction before anything is sent to the chain, so a restart posts exactly
 * the tree it built, and the API answers a proof from the stored nodes.
 *
 * Amounts are integer strings of collateral-token units (USDC, 6 decimals = micro-USD).
 */
import type { Kysely } from 'kysely';
import type { Address, Hex } from 'viem';
import { kyselyOf, type DbExecutor } from '../../storage/database.ts';
import { withTransaction } from '../../storage/transaction.ts';

// The tables are this module's alone: typed here rather than in the shared schema.
interface ReserveEpochsTable {
  epoch: string | number | bigint;
  root: string;
  total: string;
  leaf_count: number;
  bad_debt: string;
  snapshot_ts: string | number | bigint;
  engine_seq: string | number | bigint;
  chain_id: number;
  registry: string;
  vault: string;
  collateral_token: string;
  status: string;
  tx_hash: string | null;
  block_number: string | number | bigint | null;
  vault_balance: string | null;
  solvent: number | null;
  created_at: string | number | bigint;
  updated_at: string | number | bigint;
}
interface ReserveLeavesTable {
  epoch: string | number | bigint;
  leaf_index: number;
  account: string;
  salt: string;
  equity: string;
  pending_withdrawals: string;
  bad_debt: string;
  /** Migration 0028: NULL in leaves built before 0.2.0. */
  deposited: string | null;
  withdrawn: string | null;
}
interface ReserveNodesTable {
  epoch: string | number | bigint;
  level: number;
  idx: number;
  hash: string;
  sum: string;
}
interface ReservesSchema {
  perp_reserve_epochs: ReserveEpochsTable;
  perp_reserve_leaves: ReserveLeavesTable;
  perp_reserve_nodes: ReserveNodesTable;
}

const k = (db: DbExecutor) => kyselyOf(db) as unknown as Kysely<ReservesSchema>;

export type ReserveEpochStatus = 'BUILT' | 'POSTED' | 'SKIPPED';

export interface ReserveEpoch {
  epoch: number;
  root: Hex;
  total: bigint;
  leafCount: number;
  badDebt: bigint;
  snapshotTs: number;
  engineSeq: number;
  chainId: number;
  registry: Address;
  vault: Address;
  collateralToken: Address;
  status: ReserveEpochStatus;
  txHash: Hex | null;
  blockNumber: number | null;
  vaultBalance: bigint | null;
  solvent: boolean | null;
}

export interface ReserveLeaf {
  leafIndex: number;
  account: Address;
  salt: Hex;
  /** Committed equity (never below 0). */
  equity: bigint;
  pendingWithdrawals: bigint;
  /** Negative equity of the account left out of the tree (0 for a solvent account). */
  badDebt: bigint;
  /** The engine's vault flows committed by the leaf (absent in leaves built before 0.2.0). */
  deposited?: bigint;
  withdrawn?: bigint;
}

/** A node of the stored tree: its hash and the sum under it. */
export interface StoredNode {
  hash: Hex;
  sum: bigint;
}

/** An epoch as built, before it is stored: the record's fixed parts, the tree and its leaves. */
export interface NewReserveEpoch
  extends Pick<ReserveEpoch, 'epoch' | 'badDebt' | 'snapshotTs' | 'engineSeq' | 'chainId' | 'registry' | 'vault' | 'collateralToken'> {
  /** The tree as built (src/perp/reserves/merkle-sum-tree.ts): root, total, levels of nodes. */
  tree: { root: Hex; total: bigint; levels: StoredNode[][] };
  leaves: readonly ReserveLeaf[];
}

function epochOf(r: ReserveEpochsTable): ReserveEpoch {
  return {
    epoch: Number(r.epoch),
    root: r.root as Hex,
    total: BigInt(r.total),
    leafCount: Number(r.leaf_count),
    badDebt: BigInt(r.bad_debt),
    snapshotTs: Number(r.snapshot_ts),
    engineSeq: Number(r.engine_seq),
    chainId: Number(r.chain_id),
    registry: r.registry as Address,
    vault: r.vault as Address,
    collateralToken: r.collateral_token as Address,
    status: r.status as ReserveEpochStatus,
    txHash: r.tx_hash as Hex | null,
    blockNumber: r.block_number === null ? null : Number(r.block_number),
    vaultBalance: r.vault_balance === null ? null : BigInt(r.vault_balance),
    solvent: r.solvent === null ? null : Number(r.solvent) === 1,
  };
}

const CHUNK = 400;

async function insertChunks<T extends keyof ReservesSchema>(db: DbExecutor, table: T, rows: ReservesSchema[T][]): Promise<void> {
  for (let i = 0; i < rows.length; i += CHUNK) {
    // The row types are this module's own; kysely's generic insert cannot follow the union of tables.
    await (k(db) as Kysely<any>).insertInto(table).values(rows.slice(i, i + CHUNK)).execute();
  }
}

/**
 * Stores a built epoch (record BUILT, leaves, nodes) at once; answers false, storing nothing, when
 * the epoch is stored already (a second process, or a restart that raced itself).
 */
export async function insertReserveEpoch(db: DbExecutor, e: NewReserveEpoch, now: number): Promise<boolean> {
  return withTransaction(db, async (tx) => {
    const existing = await k(tx).selectFrom('perp_reserve_epochs').select('epoch').where('epoch', '=', e.epoch).executeTakeFirst();
    if (existing) return false;
    await k(tx)
      .insertInto('perp_reserve_epochs')
      .values({
        epoch: e.epoch, root: e.tree.root, total: e.tree.total.toString(), leaf_count: e.leaves.length, bad_debt: e.badDebt.toString(),
        snapshot_ts: e.snapshotTs, engine_seq: e.engineSeq, chain_id: e.chainId, registry: e.registry.toLowerCase(), vault: e.vault.toLowerCase(),
        collateral_token: e.collateralToken.toLowerCase(), status: 'BUILT', tx_hash: null, block_number: null, vault_balance: null, solvent: null,
        created_at: now, updated_at: now,
      })
      .execute();
    await insertChunks(tx, 'perp_reserve_leaves', e.leaves.map((l) => ({
      epoch: e.epoch, leaf_index: l.leafIndex, account: l.account.toLowerCase(), salt: l.salt, equity: l.equity.toString(),
      pending_withdrawals: l.pendingWithdrawals.toString(), bad_debt: l.badDebt.toString(),
      deposited: l.deposited === undefined ? null : l.deposited.toString(), withdrawn: l.withdrawn === undefined ? null : l.withdrawn.toString(),
    })));
    const nodes: ReserveNodesTable[] = [];
    e.tree.levels.forEach((level, li) => level.forEach((n, idx) => nodes.push({ epoch: e.epoch, level: li, idx, hash: n.hash, sum: n.sum.toString() })));
    await insertChunks(tx, 'perp_reserve_nodes', nodes);
    return true;
  });
}

export async function getReserveEpoch(db: DbExecutor, epoch: number): Promise<ReserveEpoch | undefined> {
  const r = await k(db).selectFrom('perp_reserve_epochs').selectAll().where('epoch', '=', epoch).executeTakeFirst();
  return r ? epochOf(r) : undefined;
}

/** The newest stored epoch whatever its status, or the newest with `status`. */
export async function latestReserveEpoch(db: DbExecutor, status?: ReserveEpochStatus): Promise<ReserveEpoch | undefined> {
  let q = k(db).selectFrom('perp_reserve_epochs').selectAll();
  if (status) q = q.where('status', '=', status);
  const r = await q.orderBy('epoch', 'desc').limit(1).executeTakeFirst();
  return r ? epochOf(r) : undefined;
}

/** Epochs stored but not yet decided on chain, oldest first. */
export async function listBuiltReserveEpochs(db: DbExecutor): Promise<ReserveEpoch[]> {
  const rows = await k(db).selectFrom('perp_reserve_epochs').selectAll().where('status', '=', 'BUILT').orderBy('epoch', 'asc').execute();
  return rows.map(epochOf);
}

export async function markReserveEpoch(
  db: DbExecutor,
  epoch: number,
  patch: { status?: ReserveEpochStatus; txHash?: Hex | null; blockNumber?: number | null; vaultBalance?: bigint; solvent?: boolean },
  now: number,
): Promise<void> {
  await k(db)
    .updateTable('perp_reserve_epochs')
    .set({
      ...(patch.status !== undefined ? { status: patch.status } : {}),
      ...(patch.txHash !== undefined ? { tx_hash: patch.txHash } : {}),
      ...(patch.blockNumber !== undefined ? { block_number: patch.blockNumber } : {}),
      ...(patch.vaultBalance !== undefined ? { vault_balance: patch.vaultBalance.toString() } : {}),
      ...(patch.solvent !== undefined ? { solvent: patch.solvent ? 1 : 0 } : {}),
      updated_at: now,
    })
    .where('epoch', '=', epoch)
    .execute();
}

function leafOf(r: ReserveLeavesTable): ReserveLeaf {
  return {
    leafIndex: Number(r.leaf_index), account: r.account as Address, salt: r.salt as Hex, equity: BigInt(r.equity),
    pendingWithdrawals: BigInt(r.pending_withdrawals), badDebt: BigInt(r.bad_debt),
    ...(r.deposited !== null && r.withdrawn !== null ? { deposited: BigInt(r.deposited), withdrawn: BigInt(r.withdrawn) } : {}),
  };
}

export async function getReserveLeaf(db: DbExecutor, epoch: number, account: string): Promise<ReserveLeaf | undefined> {
  const r = await k(db).selectFrom('perp_reserve_leaves').selectAll().where('epoch', '=', epoch).where('account', '=', account.toLowerCase()).executeTakeFirst();
  return r ? leafOf(r) : undefined;
}

/** Every leaf of an epoch in the tree's order (what the registry publishes with the root). */
export async function listReserveLeaves(db: DbExecutor, epoch: number): Promise<ReserveLeaf[]> {
  const rows = await k(db).selectFrom('perp_reserve_leaves').selectAll().where('epoch', '=', epoch).orderBy('leaf_index').execute();
  return rows.map(leafOf);
}

/** The stored nodes at `positions` ([level, index]) of an epoch's tree; a position with no node is absent from the map. */
export async function getReserveNodes(db: DbExecutor, epoch: number, positions: ReadonlyArray<readonly [number, number]>): Promise<Map<string, StoredNode>> {
  if (positions.length === 0) return new Map();
  const rows = await k(db)
    .selectFrom('perp_reserve_nodes')
    .select(['level', 'idx', 'hash', 'sum'])
    .where('epoch', '=', epoch)
    .where((eb) => eb.or(positions.map(([level, idx]) => eb.and([eb('level', '=', level), eb('idx', '=', idx)]))))
    .execute();
  return new Map(rows.map((r) => [`${r.level}:${r.idx}`, { hash: r.hash as Hex, sum: BigInt(r.sum) }]));
}
