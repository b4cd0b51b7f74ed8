/**
 * Deployments from before the proxies (release 0.1.0: every commit until 0.2.0, 374f31d's included)
 * move to new upgradeable contracts (docs/upgrades.md, "Deployments from before the proxies"). The
 * earlier contracts cannot be upgraded in place, so their state is carried over:
 *
 *   1. close   every open stock order is closed Canceled by the old router's operator: its lock
 *              returns to the user's free balance (the API shows reason MIGRATED);
 *   2. freeze  the old Cashier and Stocks take the owner as their router, so the old router (and
 *              any user calling it) can no longer move a balance;
 *   3. snapshot every account's cash, fees, pending queued operations, every holder's wallet and
 *              exchange balances (in base units), the split multipliers and refs, One Click
 *              delegations, the router's configuration, at one block;
 *   4. drain   the owner, as the old Cashier's router, takes the cash tokens out of it;
 *   5. deploy  the new venue behind proxies, its migration window open, order ids continuing;
 *   6. import  balances, fees, queued operations, holdings, delegations (each once per account:
 *              a rerun never credits twice);
 *   7. fund    the drained tokens go to the new Cashier (what the owner sent, read from the token's
 *              Transfer events: a donation to its address is never counted as funding);
 *   8. finish  the windows close; the Cashier refuses to close unless its cash covers all it owes;
 *   9. retire  every operator of the old router and Cashier is revoked;
 *  10. reconcile: per token, the new contracts hold at least what the old ones owed (a surplus is
 *              reported, never a reason to stop); what the migration credited equals the snapshot.
 *
 * The perpetual MarginVault moves the same way (legacy-vault-migration.ts): its operator pays the
 * vault's collateral to the new vault, whose totals and paid withdrawal ids are imported; a deposit
 * the engine never credited is paid back. The engine's own accounting (journal) does not move: only
 * the custody does. The reconciliation (legacy-reconciliation.ts) checks that the new contracts hold
 * at least what they owe; a surplus is reported. Every old operator is revoked at the end.
 *
 * Every step records what it did in a journal beside the deployment record before the next one
 * starts, so a run stopped at any point (kill -9 included) resumes where it stopped and is
 * idempotent; the journal is kept afterwards as the record of the migration.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import {
  BaseError,
  encodeAbiParameters,
  getAddress,
  hexToBigInt,
  keccak256,
  maxUint128,
  parseAbi,
  toEventSelector,
  type Abi,
  type AbiEvent,
  type Address,
  type Hex,
} from 'viem';
import { APP_VERSION } from '../config/build-info.ts';
import { AppError } from '../errors/app-error.ts';
import { cashierAbi, cashTokenAbi, marginVaultAbi, oneClickRouterAbi, stockAbi, stockRouterAbi } from './abi/generated/index.ts';
import { toChainError, type ChainPublicClient, type ChainWalletClient } from './chain-client.ts';
import { deployStack, TxBatch, type Deployment, type DeploymentContracts } from './deploy-contracts.ts';
import { handOverToTimelock } from './owner-actions.ts';
import type { ContractAddresses, DeploymentRecord, VenueDeployment } from './deployment-file.ts';

/** The old routers' `getOrder`: the fields every release before 0.2.0 shares (later ones append). */
const legacyRouterAbi = parseAbi([
  'function getOrder(uint256 orderId) view returns ((address user, address stock, uint8 side, uint8 orderType, uint8 status, uint8 timeInForce, uint32 deadline, uint64 createdAt, uint128 quantity, uint128 notional, uint128 price, uint128 filledQuantity, uint128 filledNotional, uint128 fees, uint128 locked))',
]);
const ORDER_OPEN = 1;
const ORDER_CANCELING = 2;
const ORDER_CANCELED = 4;
const ONE = 10n ** 36n;
/** Old Stock (split-aware, before 0.2.0) storage: `_baseBalances`, `_freeBase`, `_lockedBase` (OZ ERC20 5 + Ownable2Step first). */
const LEGACY_STOCK_SLOTS = { baseBalances: 10n, freeBase: 12n, lockedBase: 13n } as const;
// The vault's part (0.1.0 vault ABI, late deposits, the move) is legacy-vault-migration.ts.
export { LEGACY_VAULT_ABI, lateDepositReturnId, payFromLegacyVault, VAULT_MIGRATION_WITHDRAWAL_ID } from './legacy-vault-migration.ts';
import { migratePerpVenue } from './legacy-vault-migration.ts';
import { reconcile } from './legacy-reconciliation.ts';
export const CHUNK = 100;
const LOG_RANGE = 5_000n;

const s = (v: bigint) => v.toString();
const b = (v: string) => BigInt(v);

export interface CashAccount {
  user: Address;
  free: string;
  locked: string;
}

export interface StockHolder {
  user: Address;
  walletBase: string;
  freeBase: string;
  lockedBase: string;
}

export interface StockVenueSnapshot {
  block: string;
  owner: Address;
  treasury: Address;
  creditBuffer: string;
  fees: string;
  tokens: Array<{ token: Address; held: string; enabled: boolean; decimals: number; minAmount: string; withdrawBuffer: string }>;
  accounts: CashAccount[];
  queued: Array<{ deposit: boolean; queueId: string; user: Address; token: Address; tokenAmount: string; musdAmount: string }>;
  nextOrderId: string;
  fee: { marketFeeBps: number; limitFeeBps: number };
  operators: Address[];
  stocks: Array<{ symbol: string; name: string; address: Address; multiplier: string; refs: Hex[]; totalSupply: string; holders: StockHolder[] }>;
  delegations: Array<{ user: Address; delegatee: Address; nonce: string }>;
}

export interface VaultSnapshot {
  block: string;
  held: string;
  accounts: Array<{ account: Address; deposited: string; withdrawn: string }>;
  paid: Hex[];
}

export interface Reconciliation {
  /** `cash USDC`, `stock AAPL`, `vault USDC`. */
  what: string;
  before: string;
  after: string;
  ok: boolean;
  /**
   * Tokens held beyond what is owed (a donation to the new contract's public address): reported,
   * never a reason to stop. The Cashier's is credited to the treasury by `cashierSurplusSweepCalls`
   * through the timelock; the vault's stays as reserves above the liabilities.
   */
  surplus?: string;
}

/** A deposit into the old vault the engine never credited (after `creditedThrough`), paid back to its depositor. */
export interface LateDeposit {
  account: Address;
  amount: string;
  block: string;
  txHash: Hex;
  logIndex: number;
  /** The old vault's withdrawal id that pays it back (`lateDepositReturnId`). */
  returnId: Hex;
}

/** The migration's journal: what each step did (docs/upgrades.md). */
export interface MigrationJournal {
  chainId: number;
  fromRelease: '0.1.0';
  toRelease: string;
  startedAt: number;
  finishedAt?: number;
  stock?: {
    old: DeploymentContracts;
    closedOrders?: string[];
    frozen?: boolean;
    snapshot?: StockVenueSnapshot;
    drained?: Record<string, string>;
    deployed?: Omit<Deployment, 'chainId'>;
    imported?: { cash?: boolean; queued?: boolean; fees?: boolean; stocks?: string[]; delegations?: boolean };
    funded?: boolean;
    finished?: boolean;
    /** Every operator of the old router and Cashier revoked. */
    retired?: boolean;
  };
  perp?: {
    old: ContractAddresses;
    /** The last block of the old vault's events the engine credited (its database); a deposit after it is late. */
    creditedThrough?: string;
    snapshot?: VaultSnapshot;
    /** What the engine's accounts own at the snapshot: its balance less the late deposits up to it. */
    owed?: string;
    deployed?: VenueDeployment;
    /** What the old vault paid the new one. */
    movedAmount?: string;
    moved?: boolean;
    imported?: boolean;
    finished?: boolean;
    /** Late deposits paid back to their depositors. */
    lateDeposits?: LateDeposit[];
    /** Every operator of the old vault revoked. */
    retired?: boolean;
  };
  reconciliation?: Reconciliation[];
}

export function migrationJournalPath(recordFile: string): string {
  return recordFile.replace(/\.json$/, '') + '.migration.json';
}

export function readMigrationJournal(file: string): MigrationJournal | undefined {
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as MigrationJournal) : undefined;
}

function writeJournal(file: string, journal: MigrationJournal): void {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(journal, null, 2)}\n`);
  renameSync(tmp, file);
}

/** The venues of a record that were deployed before the proxies (no `release`). */
export function legacyVenues(record: DeploymentRecord): string[] {
  return Object.entries(record.venues).filter(([, v]) => v.release === undefined).map(([name]) => name);
}

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

export interface MigrateResult {
  record: DeploymentRecord;
  journal: MigrationJournal;
  /** Old → new address of every contract that moved (lower case), for the database's restatement. */
  moved: Record<string, Address>;
}

/**
 * Moves every legacy venue of `record` to new upgradeable contracts. Resumable and idempotent; the
 * answer's record has the new sections (release, code) and the old contracts under `retired`.
 */
export async function migrateLegacyVenues(params: MigrateParams): Promise<MigrateResult> {
  const { publicClient, journalFile } = params;
  const say = (line: string) => params.onStep?.(line);
  const record = structuredClone(params.record);
  const legacy = legacyVenues(record);
  let journal = readMigrationJournal(journalFile);
  // A finished journal is the migration of this record already done (the process stopped before the
  // record was written): its result is answered again, nothing is sent.
  if (!journal || journal.chainId !== record.chainId) {
    journal = { chainId: record.chainId, fromRelease: '0.1.0', toRelease: APP_VERSION, startedAt: Date.now() };
  }
  // The chain first (an embedded chain's state file), then the journal: the record never runs ahead.
  const save = async () => {
    await params.durable?.();
    writeJournal(journalFile, journal!);
  };
  const moved: Record<string, Address> = {};
  try {
    if (legacy.includes('stock')) {
      const section = record.venues.stock as unknown as Omit<Deployment, 'chainId'>;
      journal.stock ??= { old: section.contracts };
      await save();
      const next = await migrateStockVenue({ ...params, journal, save, say });
      addMoves(moved, journal.stock.old as unknown as ContractAddresses, next.contracts as unknown as ContractAddresses);
      record.venues.stock = { ...(next as unknown as VenueDeployment), retired: [...(section as VenueDeployment).retired ?? [], { release: '0.1.0', retiredAt: journal.startedAt, contracts: journal.stock.old as unknown as ContractAddresses }] };
    }
    if (legacy.includes('perp')) {
      const section = record.venues.perp;
      journal.perp ??= { old: section.contracts };
      await save();
      const stockSection = record.venues.stock as unknown as Omit<Deployment, 'chainId'> | undefined;
      const next = await migratePerpVenue({ ...params, journal, save, say, collateralFallback: stockSection?.contracts.cashToken });
      addMoves(moved, journal.perp.old, next.contracts);
      record.venues.perp = { ...next, retired: [...(section.retired ?? []), { release: '0.1.0', retiredAt: journal.startedAt, contracts: journal.perp.old }] };
    }
    if (journal.finishedAt === undefined) {
      journal.reconciliation = await reconcile(publicClient, journal);
      const bad = journal.reconciliation.filter((r) => !r.ok);
      await save();
      if (bad.length > 0) {
        throw new AppError('INTERNAL', `migration: the reconciliation does not balance: ${bad.map((r) => `${r.what} before ${r.before} after ${r.after}`).join('; ')}`);
      }
      for (const r of journal.reconciliation) {
        say(r.surplus && r.surplus !== '0'
          ? `reconciled ${r.what}: ${r.before} owed, ${r.after} held: a surplus of ${r.surplus} (sent to its public address by someone; recorded in the journal${r.what.startsWith('cash') ? ', sweepable to the treasury through the timelock' : ''})`
          : `reconciled ${r.what}: ${r.before} before = ${r.after} after`);
      }
      journal.finishedAt = Date.now();
      await save();
    }
    // Migrated and reconciled: the new contracts pass to their venues' timelocks (docs/security.md,
    // "Owner and upgrader"). Idempotent: a resumed run finds them handed over. The delay is set here
    // only when asked; otherwise the next start sets it after its own configuration.
    const handOver = await handOverToTimelock({ publicClient, wallet: params.ownerWallet, record, delaySeconds: params.timelockDelayS ?? 0 });
    if (handOver.handedOver.length > 0) say(`owner and upgrader of ${handOver.handedOver.length} contract(s): the venues' timelocks`);
    return { record, journal, moved };
  } catch (err) {
    throw err instanceof BaseError ? toChainError(err) : err;
  }
}

function addMoves(moved: Record<string, Address>, old: ContractAddresses, next: ContractAddresses): void {
  for (const [name, value] of Object.entries(old)) {
    const fresh = next[name];
    if (typeof value === 'string' && typeof fresh === 'string' && value.toLowerCase() !== fresh.toLowerCase()) moved[value.toLowerCase()] = fresh;
    else if (typeof value === 'object' && typeof fresh === 'object') addMoves(moved, value, fresh);
  }
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

function mappingSlot(key: Address, slot: bigint): Hex {
  return keccak256(encodeAbiParameters([{ type: 'address' }, { type: 'uint256' }], [key, slot]));
}

async function migrateStockVenue(ctx: StepContext): Promise<Omit<Deployment, 'chainId'>> {
  const { publicClient: client, journal, save, say } = ctx;
  const j = journal.stock!;
  const old = j.old;
  const owner = ctx.ownerWallet.account.address;
  const firstBlock = BigInt((ctx.record.venues.stock.firstBlockNumber ?? ctx.record.venues.stock.blockNumber));

  // 1. close every open order (its lock returns to the free balance). Looked at again on every run
  // until the old venue is frozen on chain: an embedded chain killed hard may have lost the closes.
  const frozenOnChain = (await client.readContract({ address: old.cashier, abi: cashierAbi, functionName: 'router' })).toLowerCase() === owner.toLowerCase();
  if (!frozenOnChain) {
    const next = await client.readContract({ address: old.stockRouter, abi: stockRouterAbi, functionName: 'nextOrderId' });
    const ids = Array.from({ length: Number(next - 1n) }, (_, i) => BigInt(i + 1));
    const orders = await mapChunked(ids, async (id) => ({ id, order: await client.readContract({ address: old.stockRouter, abi: legacyRouterAbi, functionName: 'getOrder', args: [id] }) }));
    const open = orders.filter(({ order }) => order.status === ORDER_OPEN || order.status === ORDER_CANCELING).map(({ id }) => id);
    if (open.length > 0) {
      const isOperator = await client.readContract({ address: old.stockRouter, abi: stockRouterAbi, functionName: 'isOperator', args: [owner] });
      if (!isOperator) await send(ctx, 'old router.setOperator(owner)', old.stockRouter, stockRouterAbi, 'setOperator', [owner, true]);
      for (let i = 0; i < open.length; i += CHUNK) {
        const closes = open.slice(i, i + CHUNK).map((orderId) => ({ orderId, status: ORDER_CANCELED }));
        await send(ctx, 'old router.settleOrders (closes)', old.stockRouter, stockRouterAbi, 'settleOrders', [[], closes]);
      }
    }
    j.closedOrders = [...new Set([...(j.closedOrders ?? []), ...open.map(s)])];
    await save();
    say(`stock: ${open.length} open order(s) closed Canceled on the old router, their locks returned`);
  }
  // The database follows the old contracts only until they are frozen: after that they emit the
  // migration's own moves (the owner's drain), which are not users' operations.
  if (!frozenOnChain) await ctx.afterOrdersClosed?.(j.closedOrders ?? []);

  // 2. freeze: nothing but the owner can move a balance of the old contracts any more (each router
  // read again: the chain is the truth, not the journal).
  {
    const targets: Array<[string, Address, Abi]> = [['old cashier', old.cashier, cashierAbi], ...Object.entries(old.stocks).map(([sym, a]): [string, Address, Abi] => [`old ${sym}`, a, stockAbi])];
    for (const [label, address, abi] of targets) {
      const router = (await client.readContract({ address, abi, functionName: 'router' })) as Address;
      if (router.toLowerCase() !== owner.toLowerCase()) await send(ctx, `${label}.setRouter(owner)`, address, abi, 'setRouter', [owner]);
    }
    if (!j.frozen) {
      j.frozen = true;
      await save();
      say('stock: the old Cashier and Stocks are frozen (their router is the owner)');
    }
  }

  // 3. snapshot at one block.
  if (!j.snapshot) {
    j.snapshot = await snapshotStockVenue(client, old, owner, firstBlock);
    await save();
    say(`stock: snapshot at block ${j.snapshot.block}: ${j.snapshot.accounts.length} cash account(s), ${j.snapshot.stocks.reduce((n, x) => n + x.holders.length, 0)} holding(s), ${j.snapshot.delegations.length} delegation(s), ${j.snapshot.queued.length} queued operation(s)`);
  }
  const snap = j.snapshot;

  // 4. drain the old Cashier's cash tokens to the owner (as its router).
  j.drained ??= {};
  for (const t of snap.tokens) {
    const held = await client.readContract({ address: t.token, abi: cashTokenAbi, functionName: 'balanceOf', args: [old.cashier] });
    if (held > 0n) {
      // A credit the buffer covers, then a withdrawal the token's buffer covers: the owner takes the tokens out.
      const config = await client.readContract({ address: old.cashier, abi: cashierAbi, functionName: 'tokenConfig', args: [t.token] });
      const musd = held * 10n ** BigInt(18 - config.decimals);
      if (!config.enabled) await send(ctx, 'old cashier.configureToken', old.cashier, cashierAbi, 'configureToken', [t.token, true, config.decimals, 0n, config.withdrawBuffer]);
      if (config.minAmount > held) await send(ctx, 'old cashier.configureToken (min)', old.cashier, cashierAbi, 'configureToken', [t.token, true, config.decimals, 0n, config.withdrawBuffer]);
      const buffer = await client.readContract({ address: old.cashier, abi: cashierAbi, functionName: 'creditBuffer' });
      if (buffer < musd) await send(ctx, 'old cashier.setCreditBuffer', old.cashier, cashierAbi, 'setCreditBuffer', [musd]);
      await send(ctx, 'old cashier.creditDeposit(owner)', old.cashier, cashierAbi, 'creditDeposit', [owner, t.token, held]);
      await send(ctx, 'old cashier.setWithdrawBuffer', old.cashier, cashierAbi, 'setWithdrawBuffer', [t.token, held > maxUint128 ? maxUint128 : held]);
      await send(ctx, 'old cashier.debitWithdrawal(owner)', old.cashier, cashierAbi, 'debitWithdrawal', [owner, t.token, held]);
    }
    // What was held at the snapshot (frozen since): a run that died after the withdrawal finds
    // nothing left to take, but the amount owed to the new Cashier is still all of it.
    if (j.drained[t.token] === undefined) {
      j.drained[t.token] = t.held;
      await save();
      say(`stock: ${t.held} units of ${t.token} taken out of the old Cashier`);
    }
  }

  // 5. the new venue, its migration window open (deployed again if the chain lost it).
  const deployedCode = j.deployed ? await client.getCode({ address: j.deployed.contracts.stockRouter }) : undefined;
  if (!j.deployed || deployedCode === undefined || deployedCode === '0x') {
    const symbols = snap.stocks.map((x) => ({ symbol: x.symbol, name: x.name }));
    const usdc = snap.tokens[0];
    const deployment = await deployStack({
      publicClient: client,
      walletClient: ctx.ownerWallet,
      symbols,
      demoWallets: [],
      options: {
        treasury: snap.treasury,
        operators: [...(ctx.roles?.stock ?? snap.operators.filter((o) => o.toLowerCase() !== owner.toLowerCase()))],
        guardian: ctx.roles?.guardian,
        creditBuffer: b(snap.creditBuffer),
        withdrawBuffer: usdc ? b(usdc.withdrawBuffer) : 0n,
        minAmount: usdc ? b(usdc.minAmount) : 0n,
        treasuryFunding: 0n,
        walletCash: 0n,
        walletStock: 0n,
        marketFeeBps: snap.fee.marketFeeBps,
        limitFeeBps: snap.fee.limitFeeBps,
        firstOrderId: b(snap.nextOrderId),
        migrating: true,
        cashToken: usdc?.token,
      },
    });
    const { chainId: _c, ...section } = deployment;
    j.deployed = section;
    j.imported = {};
    await save();
    say(`stock: the new venue is deployed behind proxies (StockRouter ${section.contracts.stockRouter}); order ids continue at ${snap.nextOrderId}`);
  }
  const next = j.deployed;
  // While a window is open on chain every run sends its imports again: the contracts skip what they
  // hold already, and a chain that lost blocks gets them back. A closed window imports nothing.
  const windowOpen = (address: Address, abi: Abi) => client.readContract({ address, abi, functionName: 'migrating' }) as Promise<boolean>;
  const cashierOpen = await windowOpen(next.contracts.cashier, cashierAbi);
  const oneClickOpen = await windowOpen(next.contracts.oneClickRouter, oneClickRouterAbi);
  const imported: NonNullable<NonNullable<MigrationJournal['stock']>['imported']> = {
    cash: !cashierOpen,
    fees: !cashierOpen,
    queued: !cashierOpen,
    delegations: !oneClickOpen,
    stocks: [],
  };
  for (const x of snap.stocks) if (!(await windowOpen(next.contracts.stocks[x.symbol], stockAbi))) imported.stocks!.push(x.symbol);
  j.imported = imported;

  // 6. import.
  if (!imported.cash) {
    const accounts = snap.accounts.filter((a) => b(a.free) + b(a.locked) > 0n);
    for (let i = 0; i < accounts.length; i += CHUNK) {
      const part = accounts.slice(i, i + CHUNK);
      // Every lock was released by step 1; a lock left (an order placed in between) is free now too.
      await send(ctx, 'cashier.migrateBalances', next.contracts.cashier, cashierAbi, 'migrateBalances', [part.map((a) => a.user), part.map((a) => b(a.free) + b(a.locked))]);
    }
    imported.cash = true;
    await save();
  }
  if (!imported.fees) {
    if (b(snap.fees) > 0n) await send(ctx, 'cashier.migrateFees', next.contracts.cashier, cashierAbi, 'migrateFees', [b(snap.fees)]);
    imported.fees = true;
    await save();
  }
  if (!imported.queued) {
    for (const q of snap.queued) {
      await send(ctx, 'cashier.migrateQueuedOp', next.contracts.cashier, cashierAbi, 'migrateQueuedOp', [q.deposit, b(q.queueId), q.user, q.token, b(q.tokenAmount), b(q.musdAmount)]);
    }
    imported.queued = true;
    await save();
  }
  for (const x of snap.stocks) {
    if (imported.stocks!.includes(x.symbol)) continue;
    const token = next.contracts.stocks[x.symbol];
    if (b(x.multiplier) !== ONE || x.refs.length > 0) {
      const current = await client.readContract({ address: token, abi: stockAbi, functionName: 'multiplier' });
      const supply = await client.readContract({ address: token, abi: stockAbi, functionName: 'totalSupply' });
      if (supply === 0n && (current !== b(x.multiplier) || x.refs.length > 0)) {
        await send(ctx, `${x.symbol}.migrateMultiplier`, token, stockAbi, 'migrateMultiplier', [b(x.multiplier), x.refs]);
      }
    }
    const holders = x.holders.filter((h) => b(h.walletBase) + b(h.freeBase) + b(h.lockedBase) > 0n);
    for (let i = 0; i < holders.length; i += CHUNK) {
      const part = holders.slice(i, i + CHUNK);
      await send(ctx, `${x.symbol}.migrateHolders`, token, stockAbi, 'migrateHolders', [part.map((h) => h.user), part.map((h) => b(h.walletBase)), part.map((h) => b(h.freeBase) + b(h.lockedBase))]);
    }
    imported.stocks!.push(x.symbol);
    await save();
  }
  if (!imported.delegations) {
    // 0.1.0 delegations never expired: the new router gives each one DELEGATION_LIFETIME (30 days)
    // from this call, as a new one, after which the wallet enables again (CHANGELOG 0.2.0, issue 43).
    for (let i = 0; i < snap.delegations.length; i += CHUNK) {
      const part = snap.delegations.slice(i, i + CHUNK);
      await send(ctx, 'oneClickRouter.migrateDelegations', next.contracts.oneClickRouter, oneClickRouterAbi, 'migrateDelegations', [part.map((d) => d.user), part.map((d) => d.delegatee), part.map((d) => b(d.nonce))]);
    }
    imported.delegations = true;
    await save();
    say('stock: balances, fees, queued operations, holdings and delegations imported');
  }

  // 7. fund the new Cashier with what was drained: what the owner sent it is read from the token's
  // Transfer events on every run (a run that died after its transfer sends nothing again), not from
  // the Cashier's balance, which anyone can raise (a donation to its predictable address is a
  // surplus the reconciliation reports, never a part of the funding).
  {
    for (const t of snap.tokens) {
      const amount = b(j.drained![t.token] ?? '0');
      if (amount === 0n) continue;
      const sent = await transferredTo(client, t.token, owner, next.contracts.cashier, BigInt(next.firstBlockNumber ?? next.blockNumber));
      if (sent < amount) await send(ctx, 'fund the new Cashier', t.token, cashTokenAbi, 'transfer', [next.contracts.cashier, amount - sent]);
    }
    if (!j.funded) {
      j.funded = true;
      await save();
      say('stock: the new Cashier holds the cash');
    }
  }

  // 8. close the migration windows for good.
  {
    const windows: Array<[string, Address, Abi]> = [['cashier', next.contracts.cashier, cashierAbi], ['oneClickRouter', next.contracts.oneClickRouter, oneClickRouterAbi], ...Object.entries(next.contracts.stocks).map(([sym, a]): [string, Address, Abi] => [sym, a, stockAbi])];
    for (const [label, address, abi] of windows) {
      const open = (await client.readContract({ address, abi, functionName: 'migrating' })) as boolean;
      if (open) {
        await send(ctx, `${label}.finishMigration`, address, abi, 'finishMigration', []);
      }
    }
    if (!j.finished) {
      j.finished = true;
      await save();
      say('stock: migration windows closed');
    }
  }

  // 9. the old router and Cashier keep no operator (the owner's own, made for the closes, included):
  // frozen already, they now have nobody who could act on them.
  if (!j.retired) {
    for (const [label, address, abi] of [['old router', old.stockRouter, stockRouterAbi], ['old cashier', old.cashier, cashierAbi]] as const) {
      const named = await client.getContractEvents({ address, abi: abi as Abi, eventName: 'OperatorSet', fromBlock: firstBlock }).catch(() => []);
      const candidates = new Set([...snap.operators, owner, ...named.map((l) => getAddress((l.args as { operator: Address }).operator))].map((a) => getAddress(a)));
      for (const op of candidates) {
        if (await client.readContract({ address, abi: abi as Abi, functionName: 'isOperator', args: [op] })) await send(ctx, `${label}.setOperator(false)`, address, abi as Abi, 'setOperator', [op, false]);
      }
    }
    j.retired = true;
    await save();
    say('stock: the old router and Cashier have no operator left');
  }
  return next;
}

/** What `from` sent `to` in `token` from `fromBlock` on (the token's Transfer events). */
async function transferredTo(client: ChainPublicClient, token: Address, from: Address, to: Address, fromBlock: bigint): Promise<bigint> {
  const logs = await client.getContractEvents({ address: token, abi: cashTokenAbi, eventName: 'Transfer', args: { from, to } as never, fromBlock });
  return logs.reduce((n, l) => n + ((l.args as { value: bigint }).value ?? 0n), 0n);
}

async function snapshotStockVenue(client: ChainPublicClient, old: DeploymentContracts, owner: Address, firstBlock: bigint): Promise<StockVenueSnapshot> {
  // The head now, not viem's block number of up to one polling interval ago (cacheTime): the steps
  // just before (open orders closed) are mined after it, and a snapshot taken at that older block
  // would miss them (the perp snapshot below did: CI, a withdrawal paid just before it).
  const block = await client.getBlockNumber({ cacheTime: 0 });
  const at = { blockNumber: block } as const;
  const stocks = Object.entries(old.stocks);
  const seen = await accountsSeen(client, [old.stockRouter, old.cashier, old.oneClickRouter, ...stocks.map(([, a]) => a)], firstBlock, block);
  const [treasury, creditBuffer, fees, supported, nextDeposit, nextWithdrawal, nextOrderId, fee] = await Promise.all([
    client.readContract({ address: old.cashier, abi: cashierAbi, functionName: 'treasury', ...at }),
    client.readContract({ address: old.cashier, abi: cashierAbi, functionName: 'creditBuffer', ...at }),
    client.readContract({ address: old.cashier, abi: cashierAbi, functionName: 'feeBalance', ...at }),
    client.readContract({ address: old.cashier, abi: cashierAbi, functionName: 'supportedTokens', ...at }),
    client.readContract({ address: old.cashier, abi: cashierAbi, functionName: 'nextDepositQueueId', ...at }),
    client.readContract({ address: old.cashier, abi: cashierAbi, functionName: 'nextWithdrawalQueueId', ...at }),
    client.readContract({ address: old.stockRouter, abi: stockRouterAbi, functionName: 'nextOrderId', ...at }),
    client.readContract({ address: old.stockRouter, abi: stockRouterAbi, functionName: 'feeConfig', ...at }),
  ]);
  const users = [...new Set([...seen, getAddress(treasury), getAddress(owner)])].filter((u) => ![old.cashier, old.stockRouter, old.oneClickRouter, ...stocks.map(([, a]) => a)].some((c) => c.toLowerCase() === u.toLowerCase()));
  const tokens = await Promise.all(
    supported.map(async (token) => {
      const [config, held] = await Promise.all([
        client.readContract({ address: old.cashier, abi: cashierAbi, functionName: 'tokenConfig', args: [token], ...at }),
        client.readContract({ address: token, abi: cashTokenAbi, functionName: 'balanceOf', args: [old.cashier], ...at }),
      ]);
      return { token: getAddress(token), held: s(held), enabled: config.enabled, decimals: config.decimals, minAmount: s(config.minAmount), withdrawBuffer: s(config.withdrawBuffer) };
    }),
  );
  const accounts = (
    await mapChunked(users, async (user) => {
      const [free, locked] = await Promise.all([
        client.readContract({ address: old.cashier, abi: cashierAbi, functionName: 'balanceOf', args: [user], ...at }),
        client.readContract({ address: old.cashier, abi: cashierAbi, functionName: 'lockedOf', args: [user], ...at }),
      ]);
      return { user, free: s(free), locked: s(locked) };
    })
  ).filter((a) => a.free !== '0' || a.locked !== '0');
  const queued: StockVenueSnapshot['queued'] = [];
  for (const [deposit, count] of [[true, nextDeposit], [false, nextWithdrawal]] as const) {
    for (let id = 1n; id < count; id++) {
      const op = await client.readContract({ address: old.cashier, abi: cashierAbi, functionName: deposit ? 'queuedDeposit' : 'queuedWithdrawal', args: [id], ...at });
      if (op.status === 1) queued.push({ deposit, queueId: s(id), user: op.user, token: op.token, tokenAmount: s(op.tokenAmount), musdAmount: s(op.musdAmount) });
    }
  }
  const operators = (await mapChunked(users, async (u) => ((await client.readContract({ address: old.stockRouter, abi: stockRouterAbi, functionName: 'isOperator', args: [u], ...at })) ? u : undefined))).filter((u): u is Address => u !== undefined);

  const stockSnaps = await Promise.all(
    stocks.map(async ([symbol, address]) => {
      const [name, totalSupply] = await Promise.all([
        client.readContract({ address, abi: stockAbi, functionName: 'name', ...at }),
        client.readContract({ address, abi: stockAbi, functionName: 'totalSupply', ...at }),
      ]);
      // Split-aware Stocks (late 0.1.0) have a multiplier; the first ones hold shares as base units.
      const multiplier = await client.readContract({ address, abi: stockAbi, functionName: 'multiplier', ...at }).catch(() => undefined);
      const refs: Hex[] = [];
      if (multiplier !== undefined) {
        const changes = await client.getLogs({ address, event: stockAbi.find((e) => e.type === 'event' && e.name === 'MultiplierChanged') as never, fromBlock: firstBlock, toBlock: block });
        for (const log of changes) refs.push((log as unknown as { args: { ref: Hex } }).args.ref);
      }
      const holders = (
        await mapChunked(users, async (user): Promise<StockHolder> => {
          const [wallet, free, locked] = await Promise.all([
            client.readContract({ address, abi: stockAbi, functionName: 'balanceOf', args: [user], ...at }),
            client.readContract({ address, abi: stockAbi, functionName: 'stockBalance', args: [user], ...at }),
            client.readContract({ address, abi: stockAbi, functionName: 'lockedStockBalance', args: [user], ...at }),
          ]);
          if (multiplier === undefined) return { user, walletBase: s(wallet), freeBase: s(free), lockedBase: s(locked) };
          // Exact base units from storage; each must show as the shares the contract answers.
          const read = async (slot: bigint) => hexToBigInt((await client.getStorageAt({ address, slot: mappingSlot(user, slot), ...at })) ?? '0x0');
          const [wb, fb, lb] = await Promise.all([read(LEGACY_STOCK_SLOTS.baseBalances), read(LEGACY_STOCK_SLOTS.freeBase), read(LEGACY_STOCK_SLOTS.lockedBase)]);
          const shown = (base: bigint) => (base * multiplier) / ONE;
          if (shown(wb) !== wallet || shown(fb) !== free || shown(lb) !== locked) {
            throw new AppError('INTERNAL', `migration: ${symbol}'s storage is not the layout this migration knows (base units of ${user} do not show as its shares); nothing was imported`);
          }
          return { user, walletBase: s(wb), freeBase: s(fb), lockedBase: s(lb) };
        })
      ).filter((h) => h.walletBase !== '0' || h.freeBase !== '0' || h.lockedBase !== '0');
      return { symbol, name, address, multiplier: s(multiplier ?? ONE), refs, totalSupply: s(totalSupply), holders };
    }),
  );
  const delegations = (
    await mapChunked(users, async (user) => {
      const [delegatee, nonce] = await Promise.all([
        client.readContract({ address: old.oneClickRouter, abi: oneClickRouterAbi, functionName: 'delegateOf', args: [user], ...at }),
        client.readContract({ address: old.oneClickRouter, abi: oneClickRouterAbi, functionName: 'nonces', args: [user], ...at }),
      ]);
      return { user, delegatee, nonce: s(nonce) };
    })
  ).filter((d) => d.nonce !== '0' || d.delegatee !== '0x0000000000000000000000000000000000000000');
  return {
    block: s(block),
    owner,
    treasury: getAddress(treasury),
    creditBuffer: s(creditBuffer),
    fees: s(fees),
    tokens,
    accounts,
    queued,
    nextOrderId: s(nextOrderId),
    fee: { marketFeeBps: fee.marketFeeBps, limitFeeBps: fee.limitFeeBps },
    operators,
    stocks: stockSnaps,
    delegations,
  };
}
