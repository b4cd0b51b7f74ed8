/**
 * The approve flow and the deposit through the same shape (docs/perp-api.md "Approve flow"):
 * `…/prepare` answers the unsigned EIP-1559 transaction for the wallet to sign, `…/submit` takes
 * the signed bytes and follows them, `GET …/{txHash}` answers where they stand.
 */
import { TX_HASH_PATTERN } from '../common/patterns.ts';
import { AddressIn, DecimalIn, DecimalOut, Millis, Nullable, StringEnum, Type, type Static } from '../common/schema-kit.ts';
import { VAULT_TRANSACTION_KINDS, VAULT_TRANSACTION_STATUSES } from './perp-enums.ts';
import { HexOut } from './perp-schemas.ts';

export const VaultPrepareBodySchema = Type.Object(
  {
    address: AddressIn({ description: 'the wallet of the API key' }),
    amount: DecimalIn({ description: 'collateral (USDC, 6 decimals)' }),
  },
  { additionalProperties: false },
);
export type VaultPrepareBody = Static<typeof VaultPrepareBodySchema>;

/** The unsigned transaction `approve/prepare` and `deposit/prepare` answer (wei amounts as decimal strings). */
export const UnsignedTransactionSchema = Type.Object(
  {
    type: StringEnum(['eip1559'] as const),
    chainId: Type.Integer(),
    from: HexOut(),
    to: HexOut(),
    data: HexOut(),
    value: Type.String(),
    nonce: Type.Integer(),
    gas: Type.String(),
    maxFeePerGas: Type.String(),
    maxPriorityFeePerGas: Type.String(),
  },
  { description: 'the unsigned EIP-1559 transaction for the wallet to sign (wei amounts as decimal strings)' },
);
export type UnsignedTransaction = Static<typeof UnsignedTransactionSchema>;

export const PreparedVaultTransactionSchema = Type.Object({
  transaction: UnsignedTransactionSchema,
  kind: StringEnum(VAULT_TRANSACTION_KINDS),
  amount: DecimalOut(),
  /** The margin vault: the spender of an approve, the callee of a deposit. */
  marginVault: Type.String(),
});
export type PreparedVaultTransaction = Static<typeof PreparedVaultTransactionSchema>;

export const VaultSubmitBodySchema = Type.Object(
  { signedTransaction: Type.String({ minLength: 4, maxLength: 4_096, description: 'the signed raw transaction, 0x hex' }) },
  { additionalProperties: false },
);
export type VaultSubmitBody = Static<typeof VaultSubmitBodySchema>;

export const TxHashParamsSchema = Type.Object({ txHash: Type.String({ pattern: TX_HASH_PATTERN }) });
export type TxHashParams = Static<typeof TxHashParamsSchema>;

/** A vault transaction the API broadcast for the wallet, and where it stands. */
export const VaultTransactionViewSchema = Type.Object({
  txHash: HexOut(),
  kind: StringEnum(VAULT_TRANSACTION_KINDS),
  account: Type.String(),
  amount: DecimalOut({ description: 'collateral (USDC)' }),
  status: StringEnum(VAULT_TRANSACTION_STATUSES, { description: 'pending until its receipt, then mined or reverted' }),
  blockNumber: Nullable(Type.String()),
  submittedAt: Millis(),
});
export type VaultTransactionView = Static<typeof VaultTransactionViewSchema>;
