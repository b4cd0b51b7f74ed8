/** Stock (seed §4A): stock tokens moved between the wallet and the exchange balance, as the API and the `operations` stream show them. */
import { AddressIn, DecimalOut, Millis, Nullable, StringEnum, Type, type Static } from '../common/schema-kit.ts';
import { StockCashMappingSchema } from './stock-cash-schemas.ts';
import { STOCK_MAPPING_STATUSES, STOCK_OPERATION_KINDS, STOCK_OPERATION_STATUSES } from './stock-enums.ts';
import { StockAddressOut, StockDecimalNumberOut } from './stock-schemas.ts';

/**
 * `depositOperation` / `withdrawalOperation` of a stock transfer. Anchored documents this shape for
 * cash operations only (anchored-reference.md §4.4; stock details are not shown, §4.5): tokex gives a
 * stock transfer the same shape, so one client reads both.
 */
export const StockTransferMoveSchema = Type.Object({
  operationId: Type.String(),
  userAddress: StockAddressOut(),
  tokenAddress: StockAddressOut(),
  status: StringEnum(STOCK_OPERATION_STATUSES, { description: 'the same as operationStatus' }),
  isInstant: Type.Boolean({ description: 'always true: the tokens move in the transaction itself' }),
  amount: StockDecimalNumberOut({ description: 'stock token amount (tokenAmount)' }),
  feeAmount: StockDecimalNumberOut({ description: 'fee in stock tokens: 0 (none is charged)' }),
  createTxHash: Type.String({ description: 'the transaction that made the operation (txHash)' }),
});
export type StockTransferMove = Static<typeof StockTransferMoveSchema>;

export const StockTransferOperationSchema = Type.Object({
  operationId: Type.String({ description: 'assigned by the indexer; stock events carry none' }),
  operationStatus: StringEnum(STOCK_OPERATION_STATUSES),
  kind: StringEnum(STOCK_OPERATION_KINDS),
  txHash: Type.String(),
  userAddress: AddressIn(),
  tokenAddress: AddressIn(),
  symbol: Nullable(Type.String()),
  tokenAmount: DecimalOut(),
  createdAt: Millis(),
  updatedAt: Millis(),
  mappingStatus: StringEnum(STOCK_MAPPING_STATUSES, { description: 'Indexed: the indexer linked the transaction to this operation' }),
  mapping: StockCashMappingSchema,
  depositOperation: Nullable(StockTransferMoveSchema, { description: 'a deposit; null for a withdrawal' }),
  withdrawalOperation: Nullable(StockTransferMoveSchema, { description: 'a withdrawal; null for a deposit' }),
});
export type StockTransferOperation = Static<typeof StockTransferOperationSchema>;
