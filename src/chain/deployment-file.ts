/**
 * The deployment record of one chain (DATA_DIR/deployments/<chainId>.json): one section per venue,
 * so that a restart can deploy a venue the record lacks without touching the others.
 *
 *   { "chainId": 31337, "venues": { "stock": { "blockNumber", "deployedAt", "operator", "contracts": {…} },
 *                                   "perp":  { …, "contracts": { "marginVault", "collateralToken" } } } }
 *
 * Records written before venues existed were the stock section itself with the chain id beside it
 * (`{ chainId, blockNumber, deployedAt, operator, contracts }`): they are read as the stock venue and
 * written back in the new shape.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { isAddress, isHex, type Address, type Hex } from 'viem';
import { AppError } from '../errors/app-error.ts';

/** Contract addresses by name; a group (the stock tokens by symbol) nests one level or more. */
export interface ContractAddresses {
  [name: string]: Address | ContractAddresses;
}

// A type, not an interface: it must fit the record's generic address map.
export type DeploymentContracts = {
  stockRouter: Address;
  oneClickRouter: Address;
  cashier: Address;
  cashToken: Address;
  accountLens: Address;
  /** Stock token per symbol (`AAPL` → 0x…). */
  stocks: Record<string, Address>;
  /**
   * Pays cash dividends to holders of record (docs/corporate-actions.md). Absent from records
   * written before it existed: dividends then fail, naming it, until the venue is redeployed.
   */
  dividendDistributor?: Address;
};

/** The stock venue's section of the deployment record. */
export type StockVenueDeployment = VenueDeployment<DeploymentContracts>;

/** The stock venue as the roles use it: its section with the chain id beside it. */
export interface Deployment {
  chainId: number;
  /** Block of the last deployment transaction, decimal string. */
  blockNumber: string;
  /** Block of the first deployment transaction, decimal string (see VenueDeployment). */
  firstBlockNumber?: string;
  /** When the deployment finished, ms since the epoch. */
  deployedAt: number;
  /** Deployer, owner and operator. */
  operator: Address;
  contracts: DeploymentContracts;
  /** See VenueDeployment. */
  release?: string;
  /** See VenueDeployment. */
  code?: Record<string, DeployedCode>;
  /** See VenueDeployment. */
  retired?: RetiredContracts[];
  /** See VenueDeployment. */
  timelock?: VenueTimelockRecord;
}

/**
 * A venue's timelock (docs/security.md, "Owner and upgrader"): the owner and upgrader of its
 * stateful contracts once the deployment has handed them over. Absent from records written before
 * it existed: the owner is then the deployer's account (an EOA).
 */
export interface VenueTimelockRecord {
  address: Address;
  /** The delay the deployment set, seconds; the chain's `getMinDelay()` is the truth. */
  minDelay: number;
}

/**
 * What is deployed at one of a venue's addresses (docs/upgrades.md): the contract, and for a contract
 * behind a proxy the implementation the proxy delegates to. `codeHash` is keccak256 of the
 * contract's compiled runtime code (immutables as zeros, no metadata hash), which a start compares
 * with its own build to know whether the chain runs this release's code.
 */
export interface DeployedCode {
  contract: string;
  /** The implementation behind the proxy at this address; absent for a contract without a proxy. */
  implementation?: Address;
  codeHash: Hex;
  /**
   * An upgrade under way: the new implementation, deployed, that the proxy is being moved to. A run
   * of the upgrade stopped before it recorded the end finds it here and finishes with it.
   */
  next?: Address;
}

/** A venue's earlier contracts, retired by a migration. */
export interface RetiredContracts {
  /** The release that deployed them. */
  release: string;
  /** When the migration retired them, ms since the epoch. */
  retiredAt: number;
  contracts: ContractAddresses;
}

/** One venue's section: when and by whom its contracts were deployed, and where they are. */
export interface VenueDeployment<C extends object = ContractAddresses> {
  /**
   * The release (package version) that deployed the venue or last upgraded it. Absent in sections
   * written before 0.2.0, whose contracts have no proxies (docs/upgrades.md, "Migrating").
   */
  release?: string;
  /**
   * By contract path in `contracts` (`stockRouter`, `stocks.AAPL`): what is deployed there. Absent
   * before 0.2.0; a contract without an entry (the demo cash token) is not the venue's to upgrade.
   */
  code?: Record<string, DeployedCode>;
  /**
   * Contracts this venue ran on before a migration moved it (docs/upgrades.md, "Deployments from
   * before the proxies"): kept so that history recorded at those addresses still reads, and so that
   * the indexers still see a late deposit into a retired vault.
   */
  retired?: RetiredContracts[];
  /** Block of the venue's last deployment transaction, decimal string. */
  blockNumber: string;
  /**
   * Block of its first deployment transaction, decimal string: where an indexer starts when the node
   * cannot tell it when the contracts got their code. Absent in records written before it was kept
   * (then `blockNumber`).
   */
  firstBlockNumber?: string;
  /** When the venue's deployment finished, ms since the epoch. */
  deployedAt: number;
  /** Deployer and owner of the venue's contracts (with a timelock: its proposer, executor and canceller). */
  operator: Address;
  contracts: C;
  /** The venue's timelock; absent before 0.2.0's timelock (then `operator` owns the contracts). */
  timelock?: VenueTimelockRecord;
}

export interface DeploymentRecord {
  chainId: number;
  /** By venue name (`stock`, later `perp`). */
  venues: Record<string, VenueDeployment>;
}

export interface ReadDeploymentResult {
  record: DeploymentRecord;
  /** `flat`: the file has the pre-venue shape and should be written back. */
  format: 'venues' | 'flat';
}

/** Contracts every stock venue section must name (besides `stocks`, the tokens by symbol). */
const STOCK_CORE_CONTRACTS = ['stockRouter', 'oneClickRouter', 'cashier', 'cashToken', 'accountLens'] as const;
/** Contracts every perp venue section must name. */
const PERP_CONTRACTS = ['marginVault', 'collateralToken'] as const;

function invalid(file: string, why: string): AppError {
  return new AppError('INTERNAL', `deployment file ${path.basename(file)}: ${why}`);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function checkAddresses(file: string, field: string, value: unknown): void {
  if (isObject(value)) {
    for (const [name, inner] of Object.entries(value)) checkAddresses(file, `${field}.${name}`, inner);
    return;
  }
  if (typeof value !== 'string' || !isAddress(value, { strict: false })) throw invalid(file, `${field} is not an address`);
}

function checkVenue(file: string, field: string, name: string, v: unknown): VenueDeployment {
  if (!isObject(v)) throw invalid(file, `${field} missing`);
  if (typeof v.blockNumber !== 'string' || !/^\d+$/.test(v.blockNumber) || typeof v.deployedAt !== 'number') {
    throw invalid(file, `${field}: blockNumber or deployedAt missing`);
  }
  if (v.firstBlockNumber !== undefined && (typeof v.firstBlockNumber !== 'string' || !/^\d+$/.test(v.firstBlockNumber) || BigInt(v.firstBlockNumber) > BigInt(v.blockNumber))) {
    throw invalid(file, `${field}.firstBlockNumber must be a block number no later than blockNumber`);
  }
  checkAddresses(file, `${field}.operator`, v.operator);
  if (!isObject(v.contracts)) throw invalid(file, `${field}.contracts missing`);
  if (name === 'stock') {
    for (const key of STOCK_CORE_CONTRACTS) checkAddresses(file, `${field}.contracts.${key}`, v.contracts[key]);
    if (!isObject(v.contracts.stocks)) throw invalid(file, `${field}.contracts.stocks missing`);
  }
  if (name === 'perp') {
    for (const key of PERP_CONTRACTS) checkAddresses(file, `${field}.contracts.${key}`, v.contracts[key]);
  }
  checkAddresses(file, `${field}.contracts`, v.contracts);
  if (v.release !== undefined && (typeof v.release !== 'string' || !RELEASE.test(v.release))) {
    throw invalid(file, `${field}.release is not a version`);
  }
  if (v.code !== undefined) checkCode(file, `${field}.code`, v.code);
  if (v.retired !== undefined) {
    if (!Array.isArray(v.retired)) throw invalid(file, `${field}.retired is not a list`);
    v.retired.forEach((r: unknown, i: number) => {
      if (!isObject(r) || typeof r.release !== 'string' || typeof r.retiredAt !== 'number') throw invalid(file, `${field}.retired[${i}]: release or retiredAt missing`);
      checkAddresses(file, `${field}.retired[${i}].contracts`, r.contracts);
    });
  }
  if (v.timelock !== undefined) {
    if (!isObject(v.timelock) || typeof v.timelock.minDelay !== 'number' || !Number.isSafeInteger(v.timelock.minDelay) || v.timelock.minDelay < 0) {
      throw invalid(file, `${field}.timelock: address or minDelay missing`);
    }
    checkAddresses(file, `${field}.timelock.address`, v.timelock.address);
  }
  return {
    ...(v.release !== undefined ? { release: v.release as string } : {}),
    ...(v.timelock !== undefined ? { timelock: { address: (v.timelock as Record<string, unknown>).address as Address, minDelay: (v.timelock as Record<string, unknown>).minDelay as number } } : {}),
    ...(v.code !== undefined ? { code: v.code as Record<string, DeployedCode> } : {}),
    ...(v.retired !== undefined ? { retired: v.retired as RetiredContracts[] } : {}),
    blockNumber: v.blockNumber,
    ...(v.firstBlockNumber !== undefined ? { firstBlockNumber: v.firstBlockNumber as string } : {}),
    deployedAt: v.deployedAt,
    operator: v.operator as Address,
    contracts: v.contracts as ContractAddresses,
  };
}

const RELEASE = /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/;

function checkCode(file: string, field: string, code: unknown): void {
  if (!isObject(code)) throw invalid(file, `${field} is not an object`);
  for (const [name, entry] of Object.entries(code)) {
    if (!isObject(entry) || typeof entry.contract !== 'string' || entry.contract === '') throw invalid(file, `${field}.${name}.contract missing`);
    if (typeof entry.codeHash !== 'string' || !isHex(entry.codeHash) || entry.codeHash.length !== 66) throw invalid(file, `${field}.${name}.codeHash is not a hash`);
    if (entry.implementation !== undefined) checkAddresses(file, `${field}.${name}.implementation`, entry.implementation);
    if (entry.next !== undefined) checkAddresses(file, `${field}.${name}.next`, entry.next);
  }
}

/** Parses a record's JSON text, either shape; throws naming the first malformed field. */
export function parseDeploymentRecord(text: string, file = 'deployment.json'): ReadDeploymentResult {
  let d: unknown;
  try {
    d = JSON.parse(text);
  } catch {
    throw invalid(file, 'not JSON');
  }
  if (!isObject(d) || typeof d.chainId !== 'number' || !Number.isSafeInteger(d.chainId)) throw invalid(file, 'chainId missing');
  if (d.venues === undefined) {
    // The pre-venue shape: the stock section with the chain id beside it; checked under its old field names.
    const { chainId, ...stock } = d;
    return { record: { chainId: chainId as number, venues: { stock: checkVenue(file, 'record', 'stock', stock) } }, format: 'flat' };
  }
  if (!isObject(d.venues)) throw invalid(file, 'venues is not an object');
  const venues: Record<string, VenueDeployment> = {};
  for (const [name, v] of Object.entries(d.venues)) venues[name] = checkVenue(file, `venues.${name}`, name, v);
  return { record: { chainId: d.chainId, venues }, format: 'venues' };
}

/** Reads a deployment record; `undefined` when the file does not exist, an error when it is malformed. */
export async function readDeploymentRecord(file: string): Promise<ReadDeploymentResult | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  return parseDeploymentRecord(text, file);
}

/** Writes a deployment record (always the venue shape) as pretty JSON, atomically (temp file + rename). */
export async function writeDeploymentRecord(file: string, record: DeploymentRecord): Promise<void> {
  await mkdir(path.dirname(path.resolve(file)), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  const body: DeploymentRecord = { chainId: record.chainId, venues: record.venues };
  await writeFile(tmp, `${JSON.stringify(body, null, 2)}\n`);
  await rename(tmp, file);
}

/** The stock venue of the record in `file` with its chain id, or undefined when there is none. */
export async function readDeployment(file: string): Promise<Deployment | undefined> {
  const read = await readDeploymentRecord(file);
  // The stock section's shape was checked when read.
  const stock = read?.record.venues.stock as VenueDeployment<Deployment['contracts']> | undefined;
  return read && stock ? { chainId: read.record.chainId, ...stock } : undefined;
}

/** Records the stock venue in `file`, keeping the other venues of the same chain. */
export async function writeDeployment(file: string, deployment: Deployment): Promise<void> {
  const { chainId, ...stock } = deployment;
  const read = await readDeploymentRecord(file);
  const others = read && read.record.chainId === chainId ? read.record.venues : {};
  await writeDeploymentRecord(file, { chainId, venues: { ...others, stock } });
}
