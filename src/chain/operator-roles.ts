/**
 * Which key each role that sends transactions uses. A nonce sequence is safe only inside one
 * process (src/chain/tx-sender.ts shares it between the workers of a process); two processes that
 * send with one key collide on nonces. So each sending role has its own key, and the shared
 * `OPERATOR_PRIVATE_KEY` stands in for the role keys only in a process that runs every role.
 *
 * | role            | key variable                | embedded anvil account | what the chain must allow                 |
 * | --------------- | --------------------------- | ---------------------- | ----------------------------------------- |
 * | `executor`      | `EXECUTOR_PRIVATE_KEY`      | 8                      | operator on the StockRouter and the Cashier |
 * | `relayer`       | `RELAYER_PRIVATE_KEY`       | 7                      | none: it is the `delegatee` users sign for |
 * | `perp-operator` | `PERP_OPERATOR_PRIVATE_KEY` | 6                      | operator on the perpetual venue's contracts |
 * | `oracle-publisher` | `ORACLE_PUBLISHER_PRIVATE_KEY` | 5               | publisher on the PriceFeedHub             |
 *
 * Account 9 stays the embedded stack's deployer, owner and treasury (`OPERATOR_ACCOUNT`,
 * `OPERATOR_PRIVATE_KEY` elsewhere); accounts 0..3 are the demo wallets; 4 stays free. The oracle
 * publisher's key is not the executor's: the executor's fills are checked against what the
 * publisher writes, so a leaked executor key alone cannot move that bound.
 */
import { getAddress, type Address, type Hex } from 'viem';
import { privateKeyToAddress } from 'viem/accounts';
import { AppError } from '../errors/app-error.ts';
import { ANVIL_ACCOUNTS, DEMO_WALLETS, EXECUTOR_ACCOUNT, ORACLE_PUBLISHER_ACCOUNT, type DevAccount } from './anvil-accounts.ts';

export type SenderRole = 'executor' | 'relayer' | 'perp-operator' | 'oracle-publisher';
export const SENDER_ROLES: readonly SenderRole[] = ['executor', 'relayer', 'perp-operator', 'oracle-publisher'];

export interface SenderRoleSpec {
  /** The role's own key. */
  keyEnv: string;
  /** The role's address, for processes that need it without the key (the deployer granting rights, the API naming the relayer). */
  addressEnv: string;
  /** The well-known anvil account the embedded stack gives the role. */
  devAccount: DevAccount;
  /** What the contracts must grant the address. */
  contractRights: 'stock-operator' | 'none' | 'perp-operator' | 'oracle-publisher';
}

export const SENDER_ROLE_SPECS: Readonly<Record<SenderRole, SenderRoleSpec>> = {
  executor: { keyEnv: 'EXECUTOR_PRIVATE_KEY', addressEnv: 'EXECUTOR_ADDRESS', devAccount: EXECUTOR_ACCOUNT, contractRights: 'stock-operator' },
  relayer: { keyEnv: 'RELAYER_PRIVATE_KEY', addressEnv: 'RELAYER_ADDRESS', devAccount: ANVIL_ACCOUNTS[7], contractRights: 'none' },
  'perp-operator': {
    keyEnv: 'PERP_OPERATOR_PRIVATE_KEY',
    addressEnv: 'PERP_OPERATOR_ADDRESS',
    devAccount: ANVIL_ACCOUNTS[6],
    contractRights: 'perp-operator',
  },
  'oracle-publisher': {
    keyEnv: 'ORACLE_PUBLISHER_PRIVATE_KEY',
    addressEnv: 'ORACLE_PUBLISHER_ADDRESS',
    devAccount: ORACLE_PUBLISHER_ACCOUNT,
    contractRights: 'oracle-publisher',
  },
};

/** The shared key's variable: deployer and owner, and every role's key in a process that runs them all. */
export const SHARED_OPERATOR_KEY_ENV = 'OPERATOR_PRIVATE_KEY';

/** The keys and addresses the configuration holds (src/config parses and checks the variables). */
export interface RoleKeys {
  /** `OPERATOR_PRIVATE_KEY`. */
  shared?: Hex;
  /** Each role's own `*_PRIVATE_KEY`. */
  own?: Partial<Record<SenderRole, Hex>>;
  /** Each role's `*_ADDRESS`, for processes that need the address without the key. */
  addresses?: Partial<Record<SenderRole, Address>>;
}

export interface SenderKey {
  role: SenderRole;
  privateKey: Hex;
  address: Address;
  /** Where the key came from (for the start-up log; never the key itself). */
  source: 'role-key' | 'dev-account' | 'shared-operator-key';
}

export interface SenderKeyOptions {
  keys: RoleKeys;
  /** The process runs its own anvil (no `RPC_URL`). */
  embeddedAnvil: boolean;
  /** The process runs every role (`--role all`): one process, so one key may serve them all. */
  allInOneProcess: boolean;
}

/**
 * The key `role` sends with, in order: its own variable; the embedded stack's dev account; the
 * shared `OPERATOR_PRIVATE_KEY` when this process runs every role. Throws naming the variable to
 * set when none applies — a role in a process of its own needs its own key.
 */
export function senderKey(role: SenderRole, opts: SenderKeyOptions): SenderKey {
  const spec = SENDER_ROLE_SPECS[role];
  const own = opts.keys.own?.[role];
  if (own) return { role, privateKey: own, address: privateKeyToAddress(own), source: 'role-key' };
  if (opts.embeddedAnvil) return { role, privateKey: spec.devAccount.privateKey, address: spec.devAccount.address, source: 'dev-account' };
  const shared = opts.keys.shared;
  if (shared && opts.allInOneProcess) return { role, privateKey: shared, address: privateKeyToAddress(shared), source: 'shared-operator-key' };
  throw new AppError(
    'INTERNAL',
    opts.allInOneProcess
      ? `${spec.keyEnv} (or ${SHARED_OPERATOR_KEY_ENV}) is required to run the ${role}`
      : `${spec.keyEnv} is required: the ${role} runs in a process of its own, and ${SHARED_OPERATOR_KEY_ENV} serves only a process that runs every role`,
  );
}

/**
 * The keys of the sending roles this process runs. Refuses one key set for two roles: roles may
 * run in separate processes, and two processes must never send with one key.
 */
export function senderKeys(roles: readonly SenderRole[], opts: SenderKeyOptions): Partial<Record<SenderRole, SenderKey>> {
  assertDistinctRoleKeys(opts.keys);
  const out: Partial<Record<SenderRole, SenderKey>> = {};
  for (const role of roles) out[role] = senderKey(role, opts);
  return out;
}

/** Throws when two roles' own variables hold one key, or a role's key is a demo wallet's. */
export function assertDistinctRoleKeys(keys: RoleKeys): void {
  const seen = new Map<string, string>();
  const demo = new Set(DEMO_WALLETS.map((w) => w.address.toLowerCase()));
  for (const role of SENDER_ROLES) {
    const name = SENDER_ROLE_SPECS[role].keyEnv;
    const key = keys.own?.[role];
    if (!key) continue;
    const address = privateKeyToAddress(key).toLowerCase();
    if (demo.has(address)) throw new AppError('INTERNAL', `${name}: is a demo wallet's key; give the ${role} a key of its own`);
    const other = seen.get(address);
    if (other) throw new AppError('INTERNAL', `${other} and ${name}: the same key; each sending role needs its own`);
    seen.set(address, name);
  }
}

/**
 * The address `role` sends with, for a process that may not hold the key (the deployer granting
 * rights, the stock API naming the relayer as delegatee): the role's key, its `*_ADDRESS`
 * variable, the embedded dev account, or the shared key when one process runs every role.
 * Undefined when none is configured.
 */
export function senderAddress(role: SenderRole, opts: SenderKeyOptions): Address | undefined {
  const spec = SENDER_ROLE_SPECS[role];
  const own = opts.keys.own?.[role];
  if (own) return privateKeyToAddress(own);
  const configured = opts.keys.addresses?.[role];
  if (configured !== undefined) return getAddress(configured);
  if (opts.embeddedAnvil) return spec.devAccount.address;
  const shared = opts.keys.shared;
  return shared && opts.allInOneProcess ? privateKeyToAddress(shared) : undefined;
}

/**
 * The addresses the StockRouter and the Cashier must hold as operators (`DeployStackOptions.operators`,
 * and `setOperator(address, true)` by the owner on a deployment made before): the executor's, and
 * nobody else (src/chain/venue-roles.ts). Empty when the executor's address is not configured here.
 */
export function stockOperatorGrants(opts: SenderKeyOptions): Address[] {
  const executor = senderAddress('executor', opts);
  return executor ? [executor] : [];
}
