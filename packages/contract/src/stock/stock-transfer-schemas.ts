/** Stock (seed §4A): stock tokens moved between the wallet and the exchange balance, as the API and the `operations` stream show them. */
import { AddressIn, DecimalOut, Millis, Nullable, StringEnum, Type, type Static } from '../common/schema-kit.ts';
import { STOCK_OPERATION_KINDS, STOCK_OPERATION_STATUSES } from './stock-enums.ts';

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
});
export type StockTransferOperation = Static<typeof StockTransferOperationSchema>;
