/**
 * Proof of reserves (docs/proof-of-reserves.md), in the perp-engine role: at each funding interval
 * (and once at start, for the interval in progress) the accounts are read from the engine in one
 * synchronous pass, the Merkle-sum tree is built and stored whole (epoch, leaves, nodes: one
 * transaction), then its root and total are posted to the ReserveRegistry with the perp operator's
 * key through the process's shared sender, and the MarginVault's collateral-token balance is
 * checked against the total (`solvent`, both figures recorded; a warning when it does not cover it).
 * Since 0.3.0 the root is posted with every leaf (`postReservesWithLeaves`: the registry builds the
 * root itself and publishes the leaves in account order), so any user can rebuild their escape proof
 * from the chain alone; an epoch stored by an earlier release (leaves in salt order, or without the
 * vault flows) cannot be posted so and is SKIPPED: the next interval's epoch takes its place.
 *
 * The epoch is the funding interval's start time in ms (every process agrees on it). Exactly once:
 * an epoch already stored is never rebuilt (a restart in the same interval does nothing new); a
 * stored epoch not yet POSTED is posted from its stored root, after the registry is asked whether it
 * holds it already (a crash between the send and the row's update). The registry itself refuses an
 * epoch not after its latest, so nothing can be posted twice whatever happens here; an epoch a later
 * one overtook on chain is SKIPPED.
 */
import { BaseError, encodeFunctionData, erc20Abi, type Address, type Hex } from 'viem';
import { reserveRegistryAbi } from '../../chain/abi/generated/index.ts';
import { toChainError, type ChainPublicClient } from '../../chain/chain-client.ts';
import type { TxSender } from '../../chain/tx-sender.ts';
import { ChainRevertError } from '../../errors/app-error.ts';
import { periodic, type PeriodicTask } from '../../lib/async.ts';
import type { Logger } from '../../lib/logger.ts';
import type { DbExecutor } from '../../storage/database.ts';
import type { PerpEngine } from '../engine/perp-engine.ts';
import { snapshotLiabilities } from '../reserves/liabilities-snapshot.ts';
import {
  getReserveEpoch,
  insertReserveEpoch,
  latestReserveEpoch,
  listBuiltReserveEpochs,
  listReserveLeaves,
  markReserveEpoch,
  type ReserveEpoch,
} from '../store/reserves-store.ts';
import { fundingTimeAt } from './funding-task.ts';
import { venueChainNow } from '../../lib/venue-clock.ts';

export interface ReservesTaskOptions {
  db: DbExecutor;
  engine: () => Pick<PerpEngine, 'accountAddresses' | 'marginSummary' | 'lastSeq' | 'vaultFlows' | 'lpValues'>;
  publicClient: ChainPublicClient;
  /** The perp operator's sender (an operator of the registry). */
  sender: TxSender;
  chainId: number;
  registry: Address;
  vault: Address;
  collateralToken: Address;
  /** The funding interval (PERP_FUNDING_INTERVAL_MS, or the instruments'). */
  intervalMs: number;
  /** How often the task looks whether a new interval began. Default min(1 000 ms, intervalMs). */
  pollMs?: number;
  salt?: (account: string) => Hex;
  now?: () => number;
  logger?: Pick<Logger, 'info' | 'warn' | 'error'>;
}

export interface ReservesTask extends PeriodicTask {
  /** Builds (if new) and posts the epoch of `at` (default now); answers its stored record. */
  runEpoch(at?: number): Promise<ReserveEpoch | undefined>;
}

/** What a failure may say in the log: the project's short chain error, never viem's text. */
function logSafe(err: unknown): string {
  return err instanceof BaseError ? toChainError(err).message : err instanceof Error ? err.message : String(err);
}

export function createReservesTask(opts: ReservesTaskOptions): ReservesTask {
  const { db, publicClient, sender, registry } = opts;
  const now = opts.now ?? venueChainNow;
  const log = opts.logger;

  const chainRecord = async (epoch?: number): Promise<{ epoch: number; root: Hex; total: bigint } | undefined> => {
    try {
      const r =
        epoch === undefined
          ? await publicClient.readContract({ address: registry, abi: reserveRegistryAbi, functionName: 'latest' })
          : await publicClient.readContract({ address: registry, abi: reserveRegistryAbi, functionName: 'rootOf', args: [BigInt(epoch)] });
      return { epoch: Number(r.epoch), root: r.root, total: r.total };
    } catch (err) {
      const e = toChainError(err);
      if (epoch !== undefined && e instanceof ChainRevertError && e.errorName === 'UnknownEpoch') return undefined;
      throw e;
    }
  };

  /** After the registry holds the epoch: the vault's balance against the total. */
  const checkSolvency = async (e: ReserveEpoch): Promise<void> => {
    let balance: bigint;
    try {
      balance = await publicClient.readContract({ address: opts.collateralToken, abi: erc20Abi, functionName: 'balanceOf', args: [opts.vault] });
    } catch (err) {
      throw toChainError(err);
    }
    const solvent = balance >= e.total;
    await markReserveEpoch(db, e.epoch, { vaultBalance: balance, solvent }, now());
    const fields = { epoch: e.epoch, liabilities: e.total.toString(), reserves: balance.toString(), badDebt: e.badDebt.toString(), leaves: e.leafCount };
    if (solvent) log?.info(fields, 'perp reserves: posted; the vault covers the liabilities');
    else log?.warn(fields, 'perp reserves: posted; the vault holds LESS than the liabilities');
  };

  /** The stored leaves as the registry takes them; undefined when they are not strictly in account order with their flows. */
  const postableLeaves = async (e: ReserveEpoch) => {
    const stored = await listReserveLeaves(db, e.epoch);
    const out = [];
    let previous = -1n;
    for (const l of stored) {
      const key = BigInt(l.account);
      if (key <= previous || l.deposited === undefined || l.withdrawn === undefined) return undefined;
      previous = key;
      out.push({ salt: l.salt, account: l.account, equity: l.equity, pendingWithdrawals: l.pendingWithdrawals, deposited: l.deposited, withdrawn: l.withdrawn });
    }
    return stored.length === e.leafCount ? out : undefined;
  };

  /** Decides a stored BUILT epoch from the registry, sending the record when it is not there yet. */
  const publish = async (e: ReserveEpoch): Promise<void> => {
    for (let attempt = 0; attempt < 2; attempt++) {
      const latest = await chainRecord();
      if (latest && latest.epoch >= e.epoch) {
        const onChain = latest.epoch === e.epoch ? latest : await chainRecord(e.epoch);
        if (onChain && onChain.root.toLowerCase() === e.root.toLowerCase() && onChain.total === e.total) {
          await markReserveEpoch(db, e.epoch, { status: 'POSTED' }, now());
          await checkSolvency({ ...e, status: 'POSTED' });
        } else {
          if (onChain) log?.error({ epoch: e.epoch, stored: e.root, onChain: onChain.root }, 'perp reserves: the registry holds another root for this epoch');
          else log?.warn({ epoch: e.epoch, latestOnChain: latest.epoch }, 'perp reserves: a later epoch is on chain; this one is skipped');
          await markReserveEpoch(db, e.epoch, { status: 'SKIPPED' }, now());
        }
        return;
      }
      if (attempt > 0) break;
      const leaves = await postableLeaves(e);
      if (leaves === undefined) {
        log?.warn({ epoch: e.epoch }, 'perp reserves: epoch built by an earlier release (leaves not in account order); skipped, the next one is posted with its leaves');
        await markReserveEpoch(db, e.epoch, { status: 'SKIPPED' }, now());
        return;
      }
      const data = encodeFunctionData({
        abi: reserveRegistryAbi,
        functionName: 'postReservesWithLeaves',
        args: [BigInt(e.epoch), BigInt(e.snapshotTs), leaves],
      });
      let gas: bigint;
      try {
        gas = await publicClient.estimateGas({ account: sender.address, to: registry, data });
      } catch (err) {
        throw toChainError(err);
      }
      const receipt = await sender.send({ to: registry, data, gas: (gas * 13n) / 10n }, undefined, {
        onSigned: (tx) => markReserveEpoch(db, e.epoch, { txHash: tx.hash }, now()),
      });
      if (receipt.status === 'success') {
        await markReserveEpoch(db, e.epoch, { status: 'POSTED', txHash: receipt.transactionHash, blockNumber: Number(receipt.blockNumber) }, now());
        await checkSolvency({ ...e, status: 'POSTED' });
        return;
      }
      // Reverted: another version or process may have posted it first; the registry decides.
    }
    throw new Error(`perp reserves: epoch ${e.epoch} could not be posted; retrying`);
  };

  const runEpoch = async (at = now()): Promise<ReserveEpoch | undefined> => {
    // Epochs stored before a restart first, oldest first: the registry takes them in order only.
    for (const built of await listBuiltReserveEpochs(db)) {
      if (built.registry.toLowerCase() !== registry.toLowerCase() || built.chainId !== opts.chainId) {
        // Built for a registry this deployment no longer uses (redeployed): never posted elsewhere.
        log?.warn({ epoch: built.epoch, registry: built.registry }, 'perp reserves: epoch built for another registry; skipped');
        await markReserveEpoch(db, built.epoch, { status: 'SKIPPED' }, now());
        continue;
      }
      await publish(built);
    }
    const epoch = fundingTimeAt(at, opts.intervalMs);
    const newest = await latestReserveEpoch(db);
    if (newest === undefined || newest.epoch < epoch) {
      const snap = snapshotLiabilities(opts.engine(), opts.salt);
      const stored = await insertReserveEpoch(
        db,
        {
          epoch, tree: snap.tree, leaves: snap.leaves, badDebt: snap.badDebt, snapshotTs: now(), engineSeq: snap.engineSeq,
          chainId: opts.chainId, registry, vault: opts.vault, collateralToken: opts.collateralToken,
        },
        now(),
      );
      if (stored) {
        const e = await getReserveEpoch(db, epoch);
        if (e) await publish(e);
      }
    }
    const current = await getReserveEpoch(db, epoch);
    // Posted, but the balance read failed afterwards: check it again.
    if (current?.status === 'POSTED' && current.solvent === null) {
      await checkSolvency(current);
      return getReserveEpoch(db, epoch);
    }
    return current;
  };

  // The newest epoch decided on chain (POSTED or SKIPPED): until the next interval a poll costs nothing.
  let done = -1;
  const poll = async (): Promise<void> => {
    const t = now();
    if (fundingTimeAt(t, opts.intervalMs) <= done) return;
    const epoch = fundingTimeAt(t, opts.intervalMs);
    const e = await runEpoch(t);
    // Undefined: a later epoch is stored already (the interval setting changed); nothing to do here.
    if (e === undefined || (e.status !== 'BUILT' && (e.status !== 'POSTED' || e.solvent !== null))) done = epoch;
  };
  const task = periodic(opts.pollMs ?? Math.min(1_000, opts.intervalMs), poll, (err) =>
    log?.warn({ err: logSafe(err) }, 'perp reserves: round failed; retrying'),
  );
  return { ...task, runEpoch };
}
