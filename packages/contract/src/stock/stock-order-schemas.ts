/**
 * Orders (seed §4A, contract.md §A Values): the order body of the calldata endpoints and their One
 * Click `send` twins, the calldata answer, recording a self-submitted transaction, the list query,
 * and an order as the API shows it (also the `orders` stream).
 */
import { PageQueryProps } from '../common/paging.ts';
import { VISIBLE_ASCII_OR_EMPTY_PATTERN } from '../common/patterns.ts';
import { AddressIn, DecimalOut, Millis, Nullable, StringEnum, Type, type Static } from '../common/schema-kit.ts';
import {
  STOCK_ANCHORED_ORDER_STATUSES,
  STOCK_MAPPING_STATUSES,
  STOCK_ROUTER_METHODS,
  STOCK_CLOSED_ORDER_STATUSES,
  STOCK_DEFAULT_SLIPPAGE_BPS,
  STOCK_MAX_SLIPPAGE_BPS,
  STOCK_OPEN_ORDER_STATUSES,
  STOCK_ORDER_LIST_STATES,
  STOCK_ORDER_SIDES,
  STOCK_ORDER_STATES,
  STOCK_ORDER_STATUSES,
  STOCK_ORDER_TYPES,
  STOCK_SYMBOL_MAX_LENGTH,
  STOCK_TIME_IN_FORCES,
} from './stock-enums.ts';
import { StockGasLimitIn, StockSendUserIn } from './stock-one-click-schemas.ts';
import { NullableStringEnum, StockAddressOut, StockAmountIn, StockDeadlineIn, StockTimeRangeProps } from './stock-schemas.ts';

// ------------------------------------------------------------------ requests

/**
 * An order as `orders/calldata` takes it. `side` and `type` are accepted in any case and checked
 * with the amounts against the order type by the server (a market buy spends `notional`, a market
 * sell and a limit order give `quantity`, a limit order `price` and `timeInForce` DAY).
 */
export const StockOrderBodyProps = {
  symbol: Type.Optional(Type.String({ minLength: 1, maxLength: STOCK_SYMBOL_MAX_LENGTH, description: 'stock symbol (or stockAddress)' })),
  stockAddress: Type.Optional(AddressIn()),
  side: Type.Optional(Type.String({ description: 'Buy or Sell (case-insensitive)' })),
  type: Type.Optional(Type.String({ description: 'Market or Limit (case-insensitive)' })),
  quantity: Type.Optional(StockAmountIn({ description: 'stock quantity: market sell and limit orders' })),
  notional: Type.Optional(StockAmountIn({ description: 'mUSD to spend, fee included: market buy only' })),
  price: Type.Optional(StockAmountIn({ description: 'limit price in USD per share: limit orders' })),
  timeInForce: Type.Optional(Type.String({ description: 'DAY (the only value accepted)' })),
  worstPrice: Type.Optional(
    StockAmountIn({ description: 'market orders: no fill above it (a buy) or below it (a sell), USD per share; default the quote moved by slippageBps' }),
  ),
  slippageBps: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: STOCK_MAX_SLIPPAGE_BPS,
      description: `market orders without worstPrice: the worst price is the ask (a buy) or the bid (a sell) moved by this many bps (default ${STOCK_DEFAULT_SLIPPAGE_BPS})`,
    }),
  ),
  deadline: Type.Optional(StockDeadlineIn()),
  userAddress: Type.Optional(AddressIn({ description: "wallet for the balance pre-checks (default: the key's bound wallet)" })),
};
export const StockOrderBodySchema = Type.Object(StockOrderBodyProps, { additionalProperties: false });
export type StockOrderBody = Static<typeof StockOrderBodySchema>;

/** `orders/with-deposit/calldata`: the order plus, for a buy, the cash to deposit with it. */
export const StockOrderWithDepositBodyProps = {
  ...StockOrderBodyProps,
  tokenAddress: Type.Optional(AddressIn({ description: 'buy: the cash token to deposit (default the configured cash token)' })),
  tokenAmount: Type.Optional(StockAmountIn({ description: 'buy: cash token amount to deposit (default: what the order locks)' })),
};
export const StockOrderWithDepositBodySchema = Type.Object(StockOrderWithDepositBodyProps, { additionalProperties: false });
export type StockOrderWithDepositBody = Static<typeof StockOrderWithDepositBodySchema>;

/** `orders/send`: the order for the bound wallet, with an optional gas limit. */
export const StockOrderSendBodySchema = Type.Object(
  { ...StockOrderBodyProps, userAddress: StockSendUserIn(), gasLimit: Type.Optional(StockGasLimitIn()) },
  { additionalProperties: false },
);
export type StockOrderSendBody = Static<typeof StockOrderSendBodySchema>;

/** `orders/with-deposit/send`. */
export const StockOrderWithDepositSendBodySchema = Type.Object(
  { ...StockOrderWithDepositBodyProps, userAddress: StockSendUserIn(), gasLimit: Type.Optional(StockGasLimitIn()) },
  { additionalProperties: false },
);
export type StockOrderWithDepositSendBody = Static<typeof StockOrderWithDepositSendBodySchema>;

/** `DELETE orders/{orderId}/send` may carry `{gasLimit}` (checked by the handler: the route declares no body). */
export type StockCancelSendBody = { gasLimit?: number | string };

const orderStatusList = `${STOCK_ORDER_STATUSES.slice(0, -1).join(', ')} or ${STOCK_ORDER_STATUSES[STOCK_ORDER_STATUSES.length - 1]}`;

export const StockOrderListQuerySchema = Type.Object({
  symbol: Type.Optional(Type.String({ maxLength: STOCK_SYMBOL_MAX_LENGTH, pattern: VISIBLE_ASCII_OR_EMPTY_PATTERN })),
  status: Type.Optional(Type.String({ description: orderStatusList })),
  state: Type.Optional(StringEnum(STOCK_ORDER_LIST_STATES)),
  ...StockTimeRangeProps,
  ...PageQueryProps,
});
export type StockOrderListQuery = Static<typeof StockOrderListQuerySchema>;

// ------------------------------------------------------------------ answers

/**
 * What every calldata answer carries beside the call itself: the router function, and the chain and
 * product the call is for (anchored-reference.md §4.3, as Anchored answers them).
 */
export const StockCalldataContextProps = {
  method: StringEnum(STOCK_ROUTER_METHODS, { description: 'the StockRouter function callData calls' }),
  chainId: Type.Integer({ description: 'the chain to send it on (CHAIN_ID)' }),
  productType: Type.String({ description: 'the product (STOCK_PRODUCT, what x-api-p carries)' }),
};

/** The StockRouter call placing or cancelling an order, for the wallet to send. */
export const StockCalldataSchema = Type.Object({
  toAddress: StockAddressOut({ description: 'the StockRouter' }),
  value: Type.String(),
  callData: Type.String(),
  ...StockCalldataContextProps,
  spenderAddress: Type.Optional(StockAddressOut({ description: 'the address to approve token allowances to (the StockRouter)' })),
});
export type StockCalldata = Static<typeof StockCalldataSchema>;

/** `POST orders/tx`. */
export const StockRecordedOrderTxSchema = Type.Object({
  txHash: Type.String(),
  orderId: Type.Optional(Nullable(Type.String())),
  orderIds: Type.Array(Type.String()),
  indexed: Type.Boolean({ description: 'false when the indexer had not reached the block yet; poll GET orders/tx/{txHash}' }),
  mappingStatus: StringEnum(STOCK_MAPPING_STATUSES, { description: 'Pending while indexed is false, Indexed once it is true' }),
});
export type StockRecordedOrderTx = Static<typeof StockRecordedOrderTxSchema>;

export const StockOrderFillSchema = Type.Object({
  quantity: DecimalOut(),
  price: DecimalOut(),
  notional: DecimalOut(),
  fee: DecimalOut(),
  txHash: Type.String(),
  timestamp: Millis(),
});
export type StockOrderFill = Static<typeof StockOrderFillSchema>;

const NullableDecimal = () => Nullable(Type.String(), { description: 'exact decimal string, or null when it does not apply' });

export const StockOpenOrderSchema = Type.Object({
  status: StringEnum(STOCK_OPEN_ORDER_STATUSES),
  filledQuantity: DecimalOut(),
  remainingQuantity: Type.Optional(NullableDecimal()),
  lockedAmount: DecimalOut({ description: 'mUSD for a buy, stock for a sell' }),
});
export type StockOpenOrder = Static<typeof StockOpenOrderSchema>;

export const StockOrderHistorySchema = Type.Object({
  status: StringEnum(STOCK_CLOSED_ORDER_STATUSES),
  filledQuantity: DecimalOut(),
  filledNotional: DecimalOut(),
  averagePrice: Type.Optional(NullableDecimal()),
  fees: DecimalOut(),
  fills: Type.Array(StockOrderFillSchema),
  settledAt: Type.Optional(Nullable(Type.Integer())),
  settleTxHash: Type.Optional(Nullable(Type.String())),
  reason: Type.Optional(
    Nullable(Type.String(), {
      description:
        'why the executor rejected or expired the order, e.g. `no fresh quote for AAPL within 60 s (a quote older than 30 s is not used)`, or why the venue cancelled it (`MIGRATED: …`, an order open when the venue moved to new contracts, its lock returned); null for FILLED and for CANCELED by its owner (docs/stock-api.md)',
    }),
  ),
});
export type StockOrderHistory = Static<typeof StockOrderHistorySchema>;

/** An order as the API shows it: `openOrder` while open or canceling, `history` once done. */
export const StockOrderSchema = Type.Object({
  orderId: Type.String({ description: 'decimal string of the on-chain order id' }),
  symbol: Nullable(Type.String()),
  stockAddress: Type.String(),
  userAddress: Type.String(),
  side: StringEnum(STOCK_ORDER_SIDES),
  type: StringEnum(STOCK_ORDER_TYPES),
  state: StringEnum(STOCK_ORDER_STATES),
  status: StringEnum(STOCK_ANCHORED_ORDER_STATUSES, {
    description: "the order's status in Anchored's words: New, Partial filled, Filled, Canceled, Expired or Rejected (docs/stock-api.md maps state to it)",
  }),
  timeInForce: Type.Optional(NullableStringEnum(STOCK_TIME_IN_FORCES)),
  deadline: Type.Integer({ description: 'Unix seconds' }),
  quantity: Type.Optional(NullableDecimal()),
  notional: Type.Optional(NullableDecimal()),
  price: Type.Optional(NullableDecimal()),
  txHash: Type.String(),
  cancelTxHash: Type.Optional(Nullable(Type.String())),
  createdAt: Millis(),
  updatedAt: Millis(),
  fees: DecimalOut(),
  fills: Type.Array(StockOrderFillSchema),
  openOrder: Type.Optional(StockOpenOrderSchema),
  history: Type.Optional(StockOrderHistorySchema),
});
export type StockOrder = Static<typeof StockOrderSchema>;
