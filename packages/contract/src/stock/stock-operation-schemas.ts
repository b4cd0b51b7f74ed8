/**
 * Cash and stock movements share one shape (seed §4A): for deposits and for withdrawals, a calldata
 * endpoint, its One Click `send` twin, a tx-recording endpoint, a list and a detail. What a cash
 * and a stock operation look like is in stock-cash-schemas.ts and stock-transfer-schemas.ts.
 */
import { PageQueryProps } from '../common/paging.ts';
import { VISIBLE_ASCII_PATTERN } from '../common/patterns.ts';
import { AddressIn, Nullable, StringEnum, Type, type Static, type TSchema } from '../common/schema-kit.ts';
import { STOCK_MAPPING_STATUSES, STOCK_OPERATION_ID_MAX_LENGTH, STOCK_OPERATION_STATUSES } from './stock-enums.ts';
import { StockGasLimitIn, StockSendUserIn } from './stock-one-click-schemas.ts';
import { StockCalldataContextProps } from './stock-order-schemas.ts';
import { StockAddressOut, StockAmountIn, StockTimeRangeProps } from './stock-schemas.ts';

const TokenAmountIn = () => StockAmountIn({ description: "token units, at most the token's decimals" });

/** `{cash|stock}/{deposits|withdrawals}/calldata`: what to move. */
export const StockMoveBodySchema = Type.Object(
  {
    userAddress: Type.Optional(AddressIn({ description: "wallet for the pre-checks (default: the key's bound wallet)" })),
    tokenAddress: AddressIn(),
    tokenAmount: TokenAmountIn(),
  },
  { additionalProperties: false },
);
export type StockMoveBody = Static<typeof StockMoveBodySchema>;

/** `…/send`: the move for the bound wallet, with an optional gas limit. */
export const StockMoveSendBodySchema = Type.Object(
  { userAddress: StockSendUserIn(), tokenAddress: AddressIn(), tokenAmount: TokenAmountIn(), gasLimit: Type.Optional(StockGasLimitIn()) },
  { additionalProperties: false },
);
export type StockMoveSendBody = Static<typeof StockMoveSendBodySchema>;

/** The StockRouter call moving the tokens, for the wallet to send. */
export const StockMoveCalldataSchema = Type.Object({
  toAddress: StockAddressOut({ description: 'the StockRouter' }),
  value: Type.String(),
  callData: Type.String(),
  ...StockCalldataContextProps,
  spenderAddress: Type.Optional(StockAddressOut({ description: 'approve the token to this address before a deposit (the StockRouter)' })),
});
export type StockMoveCalldata = Static<typeof StockMoveCalldataSchema>;

/** `…/tx`: the operations a self-submitted transaction made, each as `operation` shows it. */
export function StockRecordedOperationTxSchema<S extends TSchema>(operation: S) {
  return Type.Object({
    txHash: Type.String(),
    operationId: Type.Optional(Nullable(Type.String())),
    operationStatus: Type.Optional(Nullable(Type.String())),
    operationIds: Type.Array(Type.String()),
    operations: Type.Array(operation),
    indexed: Type.Boolean({ description: 'false when the indexer had not reached the block yet; poll the detail' }),
    mappingStatus: StringEnum(STOCK_MAPPING_STATUSES, { description: 'Pending while indexed is false, Indexed once it is true' }),
  });
}
export type StockRecordedOperationTx<Op> = Omit<Static<ReturnType<typeof StockRecordedOperationTxSchema<TSchema>>>, 'operations'> & { operations: Op[] };

export const StockOperationListQuerySchema = Type.Object({
  status: Type.Optional(StringEnum(STOCK_OPERATION_STATUSES)),
  ...StockTimeRangeProps,
  ...PageQueryProps,
});
export type StockOperationListQuery = Static<typeof StockOperationListQuerySchema>;

export const StockOperationIdParams = Type.Object({
  operationId: Type.String({ minLength: 1, maxLength: STOCK_OPERATION_ID_MAX_LENGTH, pattern: VISIBLE_ASCII_PATTERN }),
});
export type StockOperationIdParams = Static<typeof StockOperationIdParams>;
