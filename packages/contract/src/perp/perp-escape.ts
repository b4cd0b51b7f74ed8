/**
 * The MarginVault's escape hatch as a wallet calls it (docs/security.md, "Perpetual vault escape
 * hatch"): once the vault is frozen after the operator's silence, an account takes its leaf of the
 * escape root back with `escapeWithdraw`, from the proof `GET account/proof` gave it. The proof is
 * all it needs: keep the latest one, since the API may be gone when the hatch opens.
 */
import type { AccountProof } from './perp-account-schemas.ts';

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
      {
        name: 'path',
        type: 'tuple[]',
        components: [
          { name: 'hash', type: 'bytes32' },
          { name: 'sum', type: 'uint256' },
          { name: 'left', type: 'bool' },
        ],
      },
    ],
    outputs: [],
  },
  { type: 'function', name: 'freeze', stateMutability: 'nonpayable', inputs: [], outputs: [] },
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
