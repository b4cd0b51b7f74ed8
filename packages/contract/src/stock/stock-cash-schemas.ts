/** Cash (seed §4A): deposits and withdrawals of a cash token into and out of mUSD, as the API and the `operations` stream show them. */
import { AddressIn, DecimalOut, Millis, Nullable, StringEnum, Type, type Static } from '../common/schema-kit.ts';
import { STOCK_OPERATION_KINDS, STOCK_OPERATION_STATUSES } from './stock-enums.ts';

export const StockCashStepSchema = Type.Object({
  step: Type.String(),
  txHash: Type.Optional(Nullable(Type.String())),
  timestamp: Type.Optional(Nullable(Type.Integer())),
});
export type StockCashStep = Static<typeof StockCashStepSchema>;

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
});
export type StockCashOperation = Static<typeof StockCashOperationSchema>;
