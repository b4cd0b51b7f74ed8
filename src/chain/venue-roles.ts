/**
 * Who holds which role on which venue contract: the one machine-readable table (issue 60). The
 * table in docs/security.md ("Who holds which role") is rendered from it (`renderRoleTables`,
 * `npx tsx scripts/write-role-table.ts`) and a test compares the two; another test deploys a venue
 * (and migrates a 0.1.0 one), reads every role of every contract from the chain (`readVenueRoles`)
 * and compares it with `expectedVenueRoles`. Neither can drift from this file without a test failing.
 *
 * A holder is a configured key (src/chain/operator-roles.ts names their variables), the venue's
 * timelock, or another contract of the venue. The admin key (OPERATOR_PRIVATE_KEY, the deployer)
 * holds the timelock's proposer, executor and canceller roles and the treasury's account, and
 * nothing else: it is an operator of no contract. Where the shared key stands in for a role's own
 * key (RPC_URL, one process running every role, no `*_PRIVATE_KEY`), the admin key is that role's
 * key too, and the chain shows it under both names.
 */
import { getAddress, zeroAddress, type Abi, type Address } from 'viem';
import {
  cashierAbi,
  dividendDistributorAbi,
  marginVaultAbi,
  oneClickRouterAbi,
  priceFeedHubAbi,
  reserveRegistryAbi,
  stockAbi,
  stockRouterAbi,
  venueTimelockAbi,
} from './abi/generated/index.ts';
import { AppError } from '../errors/app-error.ts';
import type { ChainPublicClient } from './chain-client.ts';
import type { ContractAddresses, DeploymentRecord, VenueDeployment } from './deployment-file.ts';
import { ownableAbi } from './owner-actions.ts';

/** The keys a venue is configured with. */
export type RoleKey = 'admin' | 'executor' | 'perp-operator' | 'relayer' | 'oracle-publisher' | 'guardian';
export const ROLE_KEYS: readonly RoleKey[] = ['admin', 'executor', 'perp-operator', 'relayer', 'oracle-publisher', 'guardian'];

/** Where each key comes from (the variable; the embedded anvil's account). */
export const ROLE_KEY_SOURCES: Readonly<Record<RoleKey, string>> = {
  admin: '`OPERATOR_PRIVATE_KEY` (the deployer; anvil account 9)',
  executor: '`EXECUTOR_PRIVATE_KEY` (anvil account 8)',
  'perp-operator': '`PERP_OPERATOR_PRIVATE_KEY` (anvil account 6)',
  relayer: '`RELAYER_PRIVATE_KEY` (anvil account 7)',
  'oracle-publisher': '`ORACLE_PUBLISHER_PRIVATE_KEY` (anvil account 5)',
  guardian: '`GUARDIAN_ADDRESS` (anvil account 4; no role holds its key)',
};

/** A holder: a key, the venue's timelock, or a contract of the venue (by its path in the record). */
export type RoleHolder = RoleKey | 'timelock' | 'stockRouter' | 'oneClickRouter' | 'reserveRegistry';

export type VenueContract = 'StockRouter' | 'Cashier' | 'OneClickRouter' | 'Stock' | 'DividendDistributor' | 'PriceFeedHub' | 'MarginVault' | 'ReserveRegistry' | 'VenueTimelock';

export interface VenueRole {
  venue: 'stock' | 'perp';
  contract: VenueContract;
  /** The role's name in this table. */
  role: string;
  /** How the chain answers it. */
  read: string;
  /** Who must hold it, exactly (a set role: every holder, and nobody else). */
  holders: readonly RoleHolder[];
  /** What it allows (docs/security.md has the bounds). */
  power: string;
}

const owned = (venue: VenueRole['venue'], contract: VenueContract): VenueRole[] => [
  { venue, contract, role: 'owner', read: 'owner()', holders: ['timelock'], power: 'configuration (every `onlyOwner` call), after the timelock delay' },
  { venue, contract, role: 'upgrader', read: 'upgrader()', holders: ['timelock'], power: '`upgradeToAndCall`, after the timelock delay' },
];

const timelockRoles = (venue: VenueRole['venue']): VenueRole[] => [
  { venue, contract: 'VenueTimelock', role: 'proposer', read: 'hasRole(PROPOSER_ROLE, a)', holders: ['admin'], power: 'schedules owner changes and upgrades' },
  { venue, contract: 'VenueTimelock', role: 'executor', read: 'hasRole(EXECUTOR_ROLE, a)', holders: ['admin'], power: 'executes a scheduled operation once its delay has passed' },
  { venue, contract: 'VenueTimelock', role: 'canceller', read: 'hasRole(CANCELLER_ROLE, a)', holders: ['admin'], power: 'cancels a scheduled operation' },
  { venue, contract: 'VenueTimelock', role: 'admin', read: 'hasRole(DEFAULT_ADMIN_ROLE, a)', holders: ['timelock'], power: 'grants and revokes the timelock\'s roles (only through its own operations)' },
];

/** The table. Every venue contract's every role, and who holds it after a deployment or a migration. */
export const VENUE_ROLES: readonly VenueRole[] = [
  ...owned('stock', 'StockRouter'),
  { venue: 'stock', contract: 'StockRouter', role: 'operator', read: 'isOperator(a)', holders: ['executor'], power: 'settles fills and closes (`settleOrders`), within the loss budget and the oracle band' },
  { venue: 'stock', contract: 'StockRouter', role: 'guardian', read: 'guardian()', holders: ['guardian'], power: '`pause()` and `unpause()`' },
  { venue: 'stock', contract: 'StockRouter', role: 'trusted forwarder', read: 'trustedForwarder()', holders: ['oneClickRouter'], power: 'calls as a user who delegated (One Click), immutable' },
  ...owned('stock', 'Cashier'),
  { venue: 'stock', contract: 'Cashier', role: 'operator', read: 'isOperator(a)', holders: ['executor'], power: 'settles queued deposits and withdrawals, funds the treasury' },
  { venue: 'stock', contract: 'Cashier', role: 'router', read: 'router()', holders: ['stockRouter'], power: 'moves users\' balances' },
  { venue: 'stock', contract: 'Cashier', role: 'treasury', read: 'treasury()', holders: ['admin'], power: 'the treasury\'s account (counterparty of every fill): withdraws its free balance like any account' },
  ...owned('stock', 'OneClickRouter'),
  { venue: 'stock', contract: 'OneClickRouter', role: 'stock router', read: 'stockRouter()', holders: ['stockRouter'], power: 'the only contract `execute` calls' },
  ...owned('stock', 'Stock'),
  { venue: 'stock', contract: 'Stock', role: 'router', read: 'router()', holders: ['stockRouter'], power: 'moves users\' stock balances' },
  ...owned('stock', 'DividendDistributor'),
  { venue: 'stock', contract: 'DividendDistributor', role: 'operator', read: 'isOperator(a)', holders: ['executor'], power: 'opens and pays dividends from its own funds' },
  ...owned('stock', 'PriceFeedHub'),
  { venue: 'stock', contract: 'PriceFeedHub', role: 'publisher', read: 'isPublisher(a)', holders: ['oracle-publisher'], power: 'publishes feed answers (at most 60 s ahead)' },
  ...timelockRoles('stock'),
  ...owned('perp', 'MarginVault'),
  { venue: 'perp', contract: 'MarginVault', role: 'operator', read: 'isOperator(a)', holders: ['perp-operator'], power: 'relays wallet-signed withdrawals, within the cap per period' },
  { venue: 'perp', contract: 'MarginVault', role: 'guardian', read: 'guardian()', holders: ['guardian'], power: 'pauses and unpauses the operator\'s payments' },
  { venue: 'perp', contract: 'MarginVault', role: 'reserve registry', read: 'reserveRegistry()', holders: ['reserveRegistry'], power: 'the roots the escape hatch pays against' },
  ...owned('perp', 'ReserveRegistry'),
  { venue: 'perp', contract: 'ReserveRegistry', role: 'operator', read: 'isOperator(a)', holders: ['perp-operator'], power: 'posts proof-of-reserves roots (append-only, at most an hour ahead)' },
  ...timelockRoles('perp'),
];

/** The contract behind each path of a venue's record section (`stocks.AAPL` → Stock). */
const CONTRACT_OF_PATH: Readonly<Record<string, VenueContract>> = {
  stockRouter: 'StockRouter',
  cashier: 'Cashier',
  oneClickRouter: 'OneClickRouter',
  dividendDistributor: 'DividendDistributor',
  priceFeedHub: 'PriceFeedHub',
  marginVault: 'MarginVault',
  reserveRegistry: 'ReserveRegistry',
};

/** One role of one deployed contract: the table's expectation, or what the chain answered. */
export interface RoleState {
  venue: string;
  /** The contract's path in the record (`stockRouter`, `stocks.AAPL`, `timelock`). */
  path: string;
  role: string;
  /** Holder names, sorted; an address no name fits is written as the address. */
  holders: string[];
}

function pathsOf(section: VenueDeployment): Array<{ path: string; contract: VenueContract; address: Address }> {
  const out: Array<{ path: string; contract: VenueContract; address: Address }> = [];
  const walk = (group: ContractAddresses, prefix: string) => {
    for (const [name, v] of Object.entries(group)) {
      if (typeof v !== 'string') walk(v, `${prefix}${name}.`);
      else if (prefix === 'stocks.') out.push({ path: `stocks.${name}`, contract: 'Stock', address: getAddress(v) });
      else if (prefix === '' && CONTRACT_OF_PATH[name]) out.push({ path: name, contract: CONTRACT_OF_PATH[name], address: getAddress(v) });
    }
  };
  walk(section.contracts, '');
  if (section.timelock) out.push({ path: 'timelock', contract: 'VenueTimelock', address: getAddress(section.timelock.address) });
  return out;
}

/** The roles the table gives every contract the record names (venues `stock` and `perp`). */
export function expectedVenueRoles(record: DeploymentRecord): RoleState[] {
  const out: RoleState[] = [];
  for (const [venue, section] of Object.entries(record.venues)) {
    for (const c of pathsOf(section)) {
      for (const r of VENUE_ROLES) {
        if (r.venue === venue && r.contract === c.contract) out.push({ venue, path: c.path, role: r.role, holders: [...r.holders].sort() });
      }
    }
  }
  return sortStates(out);
}

function sortStates(states: RoleState[]): RoleState[] {
  return states.sort((a, b) => a.venue.localeCompare(b.venue) || a.path.localeCompare(b.path) || a.role.localeCompare(b.role));
}

const SET_ROLE_EVENTS: Partial<Record<VenueContract, { abi: Abi; event: string; arg: string; check: (a: Address) => { functionName: string; args: readonly unknown[] } }>> = {
  StockRouter: { abi: stockRouterAbi, event: 'OperatorSet', arg: 'operator', check: (a) => ({ functionName: 'isOperator', args: [a] }) },
  Cashier: { abi: cashierAbi, event: 'OperatorSet', arg: 'operator', check: (a) => ({ functionName: 'isOperator', args: [a] }) },
  DividendDistributor: { abi: dividendDistributorAbi, event: 'OperatorSet', arg: 'operator', check: (a) => ({ functionName: 'isOperator', args: [a] }) },
  MarginVault: { abi: marginVaultAbi, event: 'OperatorSet', arg: 'operator', check: (a) => ({ functionName: 'isOperator', args: [a] }) },
  ReserveRegistry: { abi: reserveRegistryAbi, event: 'OperatorSet', arg: 'operator', check: (a) => ({ functionName: 'isOperator', args: [a] }) },
  PriceFeedHub: { abi: priceFeedHubAbi, event: 'PublisherSet', arg: 'publisher', check: (a) => ({ functionName: 'isPublisher', args: [a] }) },
};

/**
 * Every role of every venue contract the record names, as the chain answers it now. A set role
 * (operators, publishers, the timelock's roles) is asked of every configured key and of every
 * address its events ever named, so an operator granted by anyone shows. `keys` are the configured
 * keys' addresses; an address that is none of them (nor the timelock, nor a venue contract) shows as
 * itself.
 */
export async function readVenueRoles(params: {
  publicClient: ChainPublicClient;
  record: DeploymentRecord;
  keys: Partial<Record<RoleKey, Address>>;
}): Promise<RoleState[]> {
  const { publicClient: client, record } = params;
  const out: RoleState[] = [];
  for (const [venue, section] of Object.entries(record.venues)) {
    const names = new Map<string, string[]>();
    const name = (a: Address, n: string) => names.set(a.toLowerCase(), [...(names.get(a.toLowerCase()) ?? []), n]);
    for (const k of ROLE_KEYS) if (params.keys[k]) name(params.keys[k]!, k);
    if (section.timelock) name(section.timelock.address, 'timelock');
    for (const p of ['stockRouter', 'oneClickRouter', 'reserveRegistry']) {
      const a = (section.contracts as Record<string, unknown>)[p];
      if (typeof a === 'string') name(a as Address, p);
    }
    const label = (a: Address) => (names.get(a.toLowerCase()) ?? [getAddress(a)]).join('+');
    const single = (a: Address) => (BigInt(a) === 0n ? [] : [label(a)]);
    const fromBlock = BigInt(section.firstBlockNumber ?? section.blockNumber);
    const read = <T>(address: Address, abi: Abi, functionName: string, args: readonly unknown[] = []) =>
      client.readContract({ address, abi, functionName, args }) as Promise<T>;
    const known = [...new Set([...ROLE_KEYS.flatMap((k) => (params.keys[k] ? [getAddress(params.keys[k]!)] : [])), ...(section.timelock ? [getAddress(section.timelock.address)] : [])])];
    for (const c of pathsOf(section)) {
      const push = (role: string, holders: string[]) => out.push({ venue, path: c.path, role, holders: [...new Set(holders)].sort() });
      if (c.contract === 'VenueTimelock') {
        const logs = await client.getContractEvents({ address: c.address, abi: venueTimelockAbi, eventName: 'RoleGranted', fromBlock });
        const candidates = [...new Set([...known, ...logs.map((l) => getAddress((l.args as { account: Address }).account))])];
        for (const [role, constant] of [['proposer', 'PROPOSER_ROLE'], ['executor', 'EXECUTOR_ROLE'], ['canceller', 'CANCELLER_ROLE'], ['admin', 'DEFAULT_ADMIN_ROLE']] as const) {
          const hash = await read<`0x${string}`>(c.address, venueTimelockAbi, constant);
          const holders: string[] = [];
          for (const a of candidates) if (await read<boolean>(c.address, venueTimelockAbi, 'hasRole', [hash, a])) holders.push(label(a));
          push(role, holders);
        }
        continue;
      }
      push('owner', single(await read<Address>(c.address, ownableAbi, 'owner')));
      push('upgrader', single(await read<Address>(c.address, ownableAbi, 'upgrader')));
      // A transfer under way would hand a role over at the next accept: it is a holder-to-be.
      const pendingOwner = await read<Address>(c.address, ownableAbi, 'pendingOwner');
      const pendingUpgrader = await read<Address>(c.address, ownableAbi, 'pendingUpgrader');
      if (pendingOwner !== zeroAddress) push('pending owner', single(pendingOwner));
      if (pendingUpgrader !== zeroAddress) push('pending upgrader', single(pendingUpgrader));
      const set = SET_ROLE_EVENTS[c.contract];
      if (set) {
        const logs = await client.getContractEvents({ address: c.address, abi: set.abi, eventName: set.event, fromBlock });
        const candidates = [...new Set([...known, ...logs.map((l) => getAddress((l.args as Record<string, Address>)[set.arg]))])];
        const holders: string[] = [];
        for (const a of candidates) {
          const q = set.check(a);
          if (await read<boolean>(c.address, set.abi, q.functionName, q.args)) holders.push(label(a));
        }
        push(set.event === 'PublisherSet' ? 'publisher' : 'operator', holders);
      }
      if (c.contract === 'StockRouter') {
        push('guardian', single(await read<Address>(c.address, stockRouterAbi, 'guardian')));
        push('trusted forwarder', single(await read<Address>(c.address, stockRouterAbi, 'trustedForwarder')));
      }
      if (c.contract === 'Cashier') {
        push('router', single(await read<Address>(c.address, cashierAbi, 'router')));
        push('treasury', single(await read<Address>(c.address, cashierAbi, 'treasury')));
      }
      if (c.contract === 'OneClickRouter') push('stock router', single(await read<Address>(c.address, oneClickRouterAbi, 'stockRouter')));
      if (c.contract === 'Stock') push('router', single(await read<Address>(c.address, stockAbi, 'router')));
      if (c.contract === 'MarginVault') {
        push('guardian', single(await read<Address>(c.address, marginVaultAbi, 'guardian')));
        push('reserve registry', single(await read<Address>(c.address, marginVaultAbi, 'reserveRegistry')));
      }
    }
  }
  return sortStates(out);
}

// ------------------------------------------------------------------ the table in docs/security.md

export const ROLE_TABLE_START = '<!-- roles:start (generated from src/chain/venue-roles.ts: npx tsx scripts/write-role-table.ts) -->';
export const ROLE_TABLE_END = '<!-- roles:end -->';

const holderText = (h: RoleHolder): string =>
  (ROLE_KEYS as readonly string[]).includes(h) ? `**${h}** key` : h === 'timelock' ? 'the venue\'s timelock' : `the venue's ${h === 'stockRouter' ? 'StockRouter' : h === 'oneClickRouter' ? 'OneClickRouter' : 'ReserveRegistry'}`;

/** The markdown between the markers: the table by contract, then what each key holds. */
export function renderRoleTables(): string {
  const lines: string[] = [];
  lines.push('| venue | contract | role (read on chain) | held by, exactly | allows |', '| --- | --- | --- | --- | --- |');
  for (const r of VENUE_ROLES) {
    const contract = r.contract === 'Stock' ? 'Stock (each)' : r.contract;
    lines.push(`| ${r.venue} | ${contract} | ${r.role} (\`${r.read}\`) | ${r.holders.map(holderText).join(', ')} | ${r.power} |`);
  }
  lines.push('', '| key | source | every role it holds |', '| --- | --- | --- |');
  for (const k of ROLE_KEYS) {
    const held = VENUE_ROLES.filter((r) => r.holders.includes(k)).map((r) => `${r.venue} ${r.contract}.${r.role}`);
    lines.push(`| **${k}** | ${ROLE_KEY_SOURCES[k]} | ${held.length > 0 ? held.join(', ') : 'none on chain (users delegate to it: `OneClickRouter.delegateOf`; it acts only as them)'} |`);
  }
  return lines.join('\n');
}

/** `doc` with the text between the markers replaced by {@link renderRoleTables}. */
export function withRenderedRoleTables(doc: string): string {
  const start = doc.indexOf(ROLE_TABLE_START);
  const end = doc.indexOf(ROLE_TABLE_END);
  if (start < 0 || end < start) throw new AppError('INTERNAL', `the role table's markers are missing: ${ROLE_TABLE_START} … ${ROLE_TABLE_END}`);
  return `${doc.slice(0, start + ROLE_TABLE_START.length)}\n${renderRoleTables()}\n${doc.slice(end)}`;
}
