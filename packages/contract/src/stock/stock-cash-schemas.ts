/** Cash (seed §4A): deposits and withdrawals of a cash token into and out of mUSD, as the API and the `operations` stream show them. */
import { AddressIn, DecimalOut, Millis, Nullable, StringEnum, Type, type Static } from '../common/schema-kit.ts';
import { STOCK_MAPPING_STATUSES, STOCK_OPERATION_KINDS, STOCK_OPERATION_STATUSES } from './stock-enums.ts';
import { StockAddressOut, StockDecimalNumberOut } from './stock-schemas.ts';

export const StockCashStepSchema = Type.Object({
  step: Type.String(),
  txHash: Type.Optional(Nullable(Type.String())),
  timestamp: Type.Optional(Nullable(Type.Integer())),
});
export type StockCashStep = Static<typeof StockCashStepSchema>;

/** `mapping` of a cash operation: its transaction linked to the operation it made (anchored-reference.md §4.4). */
export const StockCashMappingSchema = Type.Object({
  txHash: Type.String(),
  operationType: StringEnum(['deposit', 'withdraw'] as const, { description: "Anchored's operationType of the transaction" }),
  operationId: Type.String(),
  status: StringEnum(STOCK_MAPPING_STATUSES, { description: 'the same as mappingStatus' }),
});
export type StockCashMapping = Static<typeof StockCashMappingSchema>;

/** What `depositOperation` and `withdrawalOperation` share (anchored-reference.md §4.4). */
const CashMoveProps = {
  operationId: Type.String(),
  userAddress: StockAddressOut(),
  tokenAddress: StockAddressOut(),
  status: StringEnum(STOCK_OPERATION_STATUSES, { description: 'the same as operationStatus' }),
  isInstant: Type.Boolean({ description: 'settled through the cashier buffers at once (the same as instant)' }),
  amount: StockDecimalNumberOut({ description: 'cash token amount (tokenAmount)' }),
  feeAmount: StockDecimalNumberOut({ description: 'fee, cash token units: 0 (the Cashier charges no fee on deposits or withdrawals)' }),
  createTxHash: Type.String({ description: 'the transaction that made the operation (txHash)' }),
  settleTxHash: Nullable(Type.String(), { description: "the operator's settlement of a queued operation; null when instant or not settled yet" }),
};

export const StockCashDepositOperationSchema = Type.Object({
  ...CashMoveProps,
  creditAmount: StockDecimalNumberOut({ description: 'mUSD credited (mUsdAmount)' }),
});
export type StockCashDepositOperation = Static<typeof StockCashDepositOperationSchema>;

export const StockCashWithdrawalOperationSchema = Type.Object({
  ...CashMoveProps,
  debitAmount: StockDecimalNumberOut({ description: 'mUSD debited (mUsdAmount)' }),
});
export type StockCashWithdrawalOperation = Static<typeof StockCashWithdrawalOperationSchema>;

/**
 * A cash deposit or withdrawal: tokex's fields, and Anchored's detail shape beside them
 * (`mappingStatus`, `operationStatus`, `mapping`, `depositOperation` or `withdrawalOperation`).
 */
export const StockCashOperationSchema = Type.Object({
  operationId: Type.String(),
  operationStatus: StringEnum(STOCK_OPERATION_STATUSES),
  kind: StringEnum(STOCK_OPERATION_KINDS),
  txHash: Type.String(),
  userAddress: AddressIn(),
  tokenAddress: AddressIn(),
  tokenSymbol: Type.Optional(Nullable(Type.String())),
  tokenAmount: DecimalOut(),
  mUsdAmount: DecimalOut(),
  instant: Type.Boolean({ description: 'false when the cashier buffer queued it for the operator' }),
  queueId: Type.Optional(Nullable(Type.String())),
  settleTxHash: Type.Optional(Nullable(Type.String())),
  steps: Type.Array(StockCashStepSchema),
  createdAt: Millis(),
  updatedAt: Millis(),
  completedAt: Type.Optional(Nullable(Type.Integer())),
  mappingStatus: StringEnum(STOCK_MAPPING_STATUSES, { description: 'Indexed: the indexer linked the transaction to this operation' }),
  mapping: StockCashMappingSchema,
  depositOperation: Nullable(StockCashDepositOperationSchema, { description: 'a deposit; null for a withdrawal' }),
  withdrawalOperation: Nullable(StockCashWithdrawalOperationSchema, { description: 'a withdrawal; null for a deposit' }),
});
export type StockCashOperation = Static<typeof StockCashOperationSchema>;
