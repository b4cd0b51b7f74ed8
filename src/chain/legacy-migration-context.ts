/**
 * What every step of the legacy migration works with (legacy-stock-migration.ts,
 * legacy-vault-migration.ts): the caller's parameters, the step context with its journal, the owner's
 * estimated transactions, and the accounts the old contracts' logs name.
 */
import { getAddress, toEventSelector, type Abi, type AbiEvent, type Address } from 'viem';
import { cashierAbi, marginVaultAbi, oneClickRouterAbi, stockAbi, stockRouterAbi } from './abi/generated/index.ts';
import type { ChainPublicClient, ChainWalletClient } from './chain-client.ts';
import { TxBatch } from './deploy-tx-batch.ts';
import type { DeploymentRecord } from './deployment-file.ts';
import type { MigrationJournal } from './legacy-migration-journal.ts';

/** Accounts per import transaction. */
export const CHUNK = 100;
const LOG_RANGE = 5_000n;

export interface MigrateParams {
  /** The venues' timelock delay the migration sets at its end, seconds. Default 0 (a start sets TIMELOCK_DELAY_S after its configuration). */
  timelockDelayS?: number;
  publicClient: ChainPublicClient;
  /** The old contracts' owner: it freezes, drains and (as the new venue's deployer, owner and upgrader) imports. */
  ownerWallet: ChainWalletClient;
  record: DeploymentRecord;
  journalFile: string;
  /**
   * Called once the stock orders are closed on chain and before the old contracts are frozen: the
   * caller brings its database up to the chain's head (the old indexer projects the closes).
   */
  afterOrdersClosed?(closed: readonly string[]): Promise<void>;
  /**
   * Called once before the old vault's snapshot (the perp indexer catches up): answers the last block
   * of the old vault's events the database holds. Every deposit after it is late: returned to its
   * depositor, not moved (the engine never credits it). Without an answer, the snapshot's block.
   */
  beforeVaultMoved?(): Promise<bigint | void>;
  /**
   * Called once the old vault's collateral is in the new vault, before the paid withdrawal ids are
   * imported: a payment signed for the old vault that has not landed can no longer pay anything
   * there, and the caller has it signed again for the new vault.
   */
  afterVaultMoved?(): Promise<void>;
  onStep?(line: string): void;
  /** Makes what was mined so far durable before a step is recorded (the embedded anvil's `flushState`). */
  durable?(): Promise<void>;
  /** The new vault's cap on payments per period (docs/security.md). Default deploy-perp-venue's DEFAULT_WITHDRAWAL_CAP. */
  withdrawalCap?: { amount: bigint; periodSeconds: number };
  /**
   * The new venues' role keys (src/chain/venue-roles.ts): `stock` the operators of the new
   * StockRouter, Cashier and DividendDistributor (the executor's address), `perp` of the new
   * MarginVault and ReserveRegistry (the perp operator's), `guardian` the pauser of both. Default:
   * the old contracts' operators but the owner, and no guardian. The owner (the admin key) is made an
   * operator of no new contract either way.
   */
  roles?: { stock?: readonly Address[]; perp?: readonly Address[]; guardian?: Address };
}

export interface StepContext extends MigrateParams {
  journal: MigrationJournal;
  save(): Promise<void>;
  say(line: string): void;
}

/**
 * One transaction of the owner's, estimated first: a refusal surfaces with the contract's reason
 * before anything is sent, and a batch of a hundred accounts gets the gas it needs.
 */
export async function send(ctx: StepContext, label: string, to: Address, abi: Abi, functionName: string, args: readonly unknown[]): Promise<void> {
  const gas = await ctx.publicClient.estimateContractGas({ address: to, abi, functionName, args, account: ctx.ownerWallet.account });
  const tx = await TxBatch.open(ctx.publicClient, ctx.ownerWallet);
  await tx.call(label, to, abi, functionName, args, (gas * 6n) / 5n + 20_000n);
  await tx.finish();
}

/**
 * Which indexed parameters of each event are addresses, by topic0: the events of every contract a
 * migration reads (their signatures are the same in every release, except the StockRouter's
 * `OrderFilled`, whose 0.1.0 forms differ only in unindexed fields).
 */
const ADDRESS_TOPICS: ReadonlyMap<string, number[]> = (() => {
  const map = new Map<string, number[]>();
  for (const abi of [stockRouterAbi, cashierAbi, stockAbi, oneClickRouterAbi, marginVaultAbi] as readonly Abi[]) {
    for (const item of abi) {
      if (item.type !== 'event') continue;
      const indexed = item.inputs.filter((i) => i.indexed);
      const at = indexed.flatMap((i, n) => (i.type === 'address' ? [n + 1] : []));
      map.set(toEventSelector(item as AbiEvent), at);
    }
  }
  return map;
})();

/**
 * Every account that ever touched `addresses`: the address-typed indexed parameters of their logs up
 * to `toBlock`. An event this build does not know (an earlier release's) counts its topics that hold
 * an address with at least one of its first eight bytes set, so an indexed order id is not taken for
 * one.
 */
export async function accountsSeen(client: ChainPublicClient, addresses: Address[], fromBlock: bigint, toBlock: bigint): Promise<Address[]> {
  const seen = new Set<string>();
  for (let from = fromBlock; from <= toBlock; from += LOG_RANGE) {
    const to = from + LOG_RANGE - 1n < toBlock ? from + LOG_RANGE - 1n : toBlock;
    const logs = await client.getLogs({ address: addresses, fromBlock: from, toBlock: to });
    for (const log of logs) {
      const known = log.topics[0] ? ADDRESS_TOPICS.get(log.topics[0]) : undefined;
      const candidates = known ? known.map((i) => log.topics[i]) : log.topics.slice(1).filter((t) => t !== undefined && /^0x0{24}(?!0{16})[0-9a-f]{40}$/i.test(t));
      for (const topic of candidates) {
        if (topic && !/^0x0{64}$/.test(topic)) seen.add(getAddress(`0x${topic.slice(26)}`));
      }
    }
  }
  return [...seen].sort() as Address[];
}

export async function mapChunked<T, R>(items: readonly T[], fn: (item: T) => Promise<R>, width = 16): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += width) out.push(...(await Promise.all(items.slice(i, i + width).map(fn))));
  return out;
}
