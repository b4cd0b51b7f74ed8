/**
 * The MarginVault's escape hatch as a wallet calls it (docs/security.md, "Perpetual vault escape
 * hatch"): once the vault is frozen after the operator's silence, an account takes its leaf of the
 * escape root back with `escapeWithdraw`, from the proof `GET account/proof` gave it. The proof is
 * enough, and since 0.3.0 not even needed: every root's leaves are published on chain, and the SDK's
 * `escapeCallFromChain` rebuilds the call (a leaf's path, or an account's absence from the root)
 * from a node alone.
 */
import type { AccountProof } from './perp-account-schemas.ts';

/** A leaf as the ReserveRegistry publishes it (IReserveRegistry.Leaf). */
export const RESERVE_LEAF_COMPONENTS = [
  { name: 'salt', type: 'bytes32' },
  { name: 'account', type: 'address' },
  { name: 'equity', type: 'uint256' },
  { name: 'pendingWithdrawals', type: 'uint256' },
  { name: 'deposited', type: 'uint256' },
  { name: 'withdrawn', type: 'uint256' },
] as const;

const PROOF_STEP_COMPONENTS = [
  { name: 'hash', type: 'bytes32' },
  { name: 'sum', type: 'uint256' },
  { name: 'left', type: 'bool' },
] as const;

const LEAF_PROOF_COMPONENTS = [
  { name: 'leaf', type: 'tuple', components: RESERVE_LEAF_COMPONENTS },
  { name: 'path', type: 'tuple[]', components: PROOF_STEP_COMPONENTS },
] as const;

/** The registry's views and event a user rebuilds an escape proof from (IReserveRegistry.sol). */
export const RESERVE_REGISTRY_LEAVES_ABI = [
  {
    type: 'event',
    name: 'ReserveLeaves',
    anonymous: false,
    inputs: [
      { name: 'epoch', type: 'uint64', indexed: true },
      { name: 'leaves', type: 'tuple[]', indexed: false, components: RESERVE_LEAF_COMPONENTS },
    ],
  },
  {
    type: 'function',
    name: 'latest',
    stateMutability: 'view',
    inputs: [],
    outputs: [
      {
        name: '',
        type: 'tuple',
        components: [
          { name: 'epoch', type: 'uint64' },
          { name: 'root', type: 'bytes32' },
          { name: 'total', type: 'uint128' },
          { name: 'leafCount', type: 'uint64' },
          { name: 'timestamp', type: 'uint64' },
        ],
      },
    ],
  },
  { type: 'function', name: 'leavesPublished', stateMutability: 'view', inputs: [{ name: 'epoch', type: 'uint64' }], outputs: [{ name: '', type: 'bool' }] },
] as const;

/** The vault's escape functions and views (IMarginVault.sol), for viem or any ABI encoder. */
export const MARGIN_VAULT_ESCAPE_ABI = [
  {
    type: 'function',
    name: 'escapeWithdraw',
    stateMutability: 'nonpayable',
    inputs: [
      { name: 'salt', type: 'bytes32' },
      { name: 'equity', type: 'uint256' },
      { name: 'pendingWithdrawals', type: 'uint256' },
      { name: 'deposited', type: 'uint256' },
      { name: 'withdrawn', type: 'uint256' },
      { name: 'path', type: 'tuple[]', components: PROOF_STEP_COMPONENTS },
    ],
    outputs: [],
  },
  {
    type: 'function',
    name: 'escapeUnlisted',
    stateMutability: 'nonpayable',
    inputs: [{ name: 'neighbours', type: 'tuple[]', components: LEAF_PROOF_COMPONENTS }],
    outputs: [],
  },
  { type: 'function', name: 'freeze', stateMutability: 'nonpayable', inputs: [], outputs: [] },
  { type: 'function', name: 'freezeOverdue', stateMutability: 'nonpayable', inputs: [{ name: 'account', type: 'address' }], outputs: [] },
  { type: 'function', name: 'requestForcedWithdrawal', stateMutability: 'nonpayable', inputs: [{ name: 'amount', type: 'uint256' }], outputs: [] },
  { type: 'function', name: 'cancelForcedWithdrawal', stateMutability: 'nonpayable', inputs: [], outputs: [] },
  {
    type: 'function',
    name: 'forcedWithdrawal',
    stateMutability: 'view',
    inputs: [{ name: 'account', type: 'address' }],
    outputs: [
      { name: 'amount', type: 'uint256' },
      { name: 'requestedAt', type: 'uint64' },
      { name: 'dueAt', type: 'uint256' },
    ],
  },
  { type: 'function', name: 'reserveRegistry', stateMutability: 'view', inputs: [], outputs: [{ name: '', type: 'address' }] },
  { type: 'function', name: 'freezableAt', stateMutability: 'view', inputs: [], outputs: [{ name: '', type: 'uint256' }] },
  {
    type: 'function',
    name: 'escapeRoot',
    stateMutability: 'view',
    inputs: [],
    outputs: [
      { name: 'epoch', type: 'uint64' },
      { name: 'root', type: 'bytes32' },
      { name: 'total', type: 'uint256' },
      { name: 'frozenAt', type: 'uint64' },
    ],
  },
  // The refusals a wallet may meet on this path, so that they decode by name.
  { type: 'error', name: 'VaultNotFrozen', inputs: [] },
  { type: 'error', name: 'VaultFrozen', inputs: [] },
  { type: 'error', name: 'InvalidEscapeProof', inputs: [] },
  { type: 'error', name: 'NothingToEscape', inputs: [{ name: 'account', type: 'address' }] },
  { type: 'error', name: 'NoReservesRoot', inputs: [] },
  { type: 'error', name: 'OperatorNotSilent', inputs: [{ name: 'openAt', type: 'uint256' }] },
  { type: 'error', name: 'InvalidAbsenceProof', inputs: [] },
  { type: 'error', name: 'ForcedWithdrawalPending', inputs: [{ name: 'account', type: 'address' }] },
  { type: 'error', name: 'NoForcedWithdrawal', inputs: [{ name: 'account', type: 'address' }] },
  { type: 'error', name: 'NothingDeposited', inputs: [{ name: 'account', type: 'address' }] },
  { type: 'error', name: 'ForcedWithdrawalNotDue', inputs: [{ name: 'account', type: 'address' }, { name: 'dueAt', type: 'uint256' }] },
  { type: 'error', name: 'InsufficientVaultBalance', inputs: [{ name: 'available', type: 'uint256' }, { name: 'needed', type: 'uint256' }] },
] as const;

export type EscapeWithdrawArgs = readonly [
  salt: `0x${string}`,
  equity: bigint,
  pendingWithdrawals: bigint,
  deposited: bigint,
  withdrawn: bigint,
  path: ReadonlyArray<{ hash: `0x${string}`; sum: bigint; left: boolean }>,
];

/**
 * The arguments of `escapeWithdraw` for a proof of `GET account/proof`. A proof of an epoch built
 * before 0.2.0 has no vault flows and cannot be used (its leaf is of another shape): throws.
 */
export function escapeWithdrawArgs(proof: Pick<AccountProof, 'salt' | 'equity' | 'pendingWithdrawals' | 'deposited' | 'withdrawn' | 'path'>): EscapeWithdrawArgs {
  if (proof.deposited === null || proof.withdrawn === null) {
    throw new TypeError('this proof is of an epoch built before 0.2.0: its leaf carries no vault flows, so the escape hatch cannot pay it; fetch a newer proof');
  }
  return [
    proof.salt as `0x${string}`,
    BigInt(proof.equity),
    BigInt(proof.pendingWithdrawals),
    BigInt(proof.deposited),
    BigInt(proof.withdrawn),
    proof.path.map((s) => ({ hash: s.hash as `0x${string}`, sum: BigInt(s.sum), left: s.side === 'left' })),
  ];
}
