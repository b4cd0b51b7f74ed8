/**
 * The perpetual API's shapes (contract.md §B, docs/perp-api.md): each schema is what the server
 * validates and serialises with and what openapi/perp-api.json prints; each type is derived from it.
 * Amounts, prices and sizes are exact decimal strings, times milliseconds since the Unix epoch.
 */
import type { SchemaOptions, TUnsafe } from '@sinclair/typebox';
import { IDEMPOTENCY_KEY_PATTERN, IdempotencyHeaders, MAX_IDEMPOTENCY_KEY } from '../common/idempotency.ts';
import { SIGNATURE_PATTERN, VISIBLE_ASCII_PATTERN } from '../common/patterns.ts';
import { PageQueryProps } from '../common/paging.ts';
import { AnyObject, DecimalIn, DecimalOut, Millis, Nullable, SignedDecimalIn, StringEnum, Type, type Static, type TSchema } from '../common/schema-kit.ts';
import {
  MARGIN_MODES,
  MAX_BATCH_CANCEL,
  MAX_BATCH_ORDERS,
  MAX_CLIENT_ORDER_ID,
  MAX_ORDER_ID_LENGTH,
  ORDER_ID_PATTERN,
  ORDER_SIDES,
  ORDER_STATUSES,
  ORDER_TYPES,
  PERMISSIONS,
  POSITION_SIDES,
  type PerpPermission,
  TIME_IN_FORCES,
  TRADE_ROLES,
  TRIGGER_BY,
} from './perp-enums.ts';

// ------------------------------------------------------------------ envelope

/** The success envelope `{code: 0, msg: "ok", data, requestId}` around `data`. */
export function PerpOk<S extends TSchema>(data: S) {
  return Type.Object({
    code: Type.Integer({ enum: [0] }),
    msg: Type.String(),
    data,
    requestId: Type.String({ format: 'uuid' }),
  });
}

export const PerpErrorEnvelopeSchema = Type.Object({
  code: Type.Integer({
    description:
      'a code of the documented table (docs/perp-api.md): 10xxx parameters, 20xxx authentication, 30001 permission, 40xxx not found, 42900 rate limit, 50xxx server, 51xxx/52xxx trading',
  }),
  msg: Type.String(),
  data: AnyObject({ description: '`{field}` for a parameter error, otherwise `{}`' }),
  requestId: Type.String({ format: 'uuid' }),
});

/** A route's responses: the success schema plus the error envelope for every failure status. */
export function perpResponses<S extends TSchema>(data: S) {
  return { 200: PerpOk(data), '4xx': PerpErrorEnvelopeSchema, '5xx': PerpErrorEnvelopeSchema };
}

export const BlockInfoSchema = Type.Object(
  { number: Type.String(), hash: Type.String(), timestamp: Millis() },
  { description: 'the last block the service has indexed' },
);
export type BlockInfo = Static<typeof BlockInfoSchema>;

/** The responses of an answer that depends on chain state: the success envelope also carries `blockInfo`. */
export function perpChainResponses<S extends TSchema>(data: S) {
  const ok = Type.Object({ ...PerpOk(data).properties, blockInfo: Type.Optional(BlockInfoSchema) });
  return { 200: ok, '4xx': PerpErrorEnvelopeSchema, '5xx': PerpErrorEnvelopeSchema };
}

// ------------------------------------------------------------------ pieces

/** The optional `Idempotency-Key` of a state-changing call the key alone authorises (docs/perp-api.md "Idempotency"). */
export const PerpIdempotencyHeaders = IdempotencyHeaders(
  'names the request (1 to 64 visible ASCII characters, unique per account and endpoint): a retry with the same key is answered as the first request and applied at most once; the same key with another request is 10002',
);

export const SymbolParam = Type.String({ minLength: 1, maxLength: 33, description: 'instrument, e.g. BTC-USD' });
export const OrderIdOut = Type.String({ description: 'engine order id (decimal string)' });
export const OrderIdIn = Type.String({ minLength: 1, maxLength: MAX_ORDER_ID_LENGTH });
export const SignatureIn = (description: string) => Type.String({ pattern: SIGNATURE_PATTERN, description });
export const PermissionList = Type.Array(StringEnum(PERMISSIONS), { minItems: 1, maxItems: 3, uniqueItems: true });
export const TimeRangeProps = {
  startTime: Type.Optional(Millis({ minimum: 0 })),
  endTime: Type.Optional(Millis({ minimum: 0 })),
};

/** The query of a list filtered by time only: the range and the page. */
export const TimeRangeQuerySchema = Type.Object({ ...TimeRangeProps, ...PageQueryProps }, { additionalProperties: false });
export type TimeRangeQuery = Static<typeof TimeRangeQuerySchema>;

/**
 * A `0x`-prefixed hex string the server answers (an address, a hash, a transaction): printed as the
 * plain string it has always been, typed as viem's `0x${string}`.
 */
export const HexOut = (options: SchemaOptions = {}): TUnsafe<`0x${string}`> => Type.Unsafe<`0x${string}`>({ type: 'string', ...options });

/**
 * The permissions of a key as the answers list them: printed as strings (as the document always
 * has), always among READ, TRADE, TRANSFER.
 */
export const PermissionsOut = (): TUnsafe<PerpPermission[]> => Type.Unsafe<PerpPermission[]>({ type: 'array', items: { type: 'string' } });

// ------------------------------------------------------------------ orders

export const OrderSchema = Type.Object({
  orderId: OrderIdOut,
  clientOrderId: Nullable(Type.String()),
  symbol: Type.String(),
  side: StringEnum(ORDER_SIDES),
  type: StringEnum(ORDER_TYPES),
  timeInForce: StringEnum(TIME_IN_FORCES),
  price: Nullable(Type.String(), { description: 'limit or worst price; null for a market order without one' }),
  size: DecimalOut(),
  filledSize: DecimalOut(),
  remainingSize: DecimalOut({ description: 'resting size (0 once the order is done)' }),
  avgPrice: Nullable(Type.String(), { description: 'average fill price (tick decimals + 4, rounded down); null before a fill' }),
  fee: DecimalOut({ description: 'fees paid by this order so far (USD)' }),
  status: StringEnum(ORDER_STATUSES),
  reason: Nullable(Type.String(), {
    description:
      'why a done order ended: FILLED, USER_CANCEL, IOC_REMAINDER, SELF_TRADE_PREVENTION, REDUCE_ONLY, POSITION_CLOSED, INSUFFICIENT_MARGIN, PRICE_BAND, POST_ONLY_WOULD_CROSS',
  }),
  reduceOnly: Type.Boolean(),
  triggerPrice: Nullable(Type.String(), { description: 'a trigger order\'s trigger price; null for LIMIT and MARKET orders' }),
  triggerBy: Nullable(StringEnum(TRIGGER_BY), { description: 'what a trigger order watches: MARK or LAST; null for LIMIT and MARKET orders' }),
  triggeredAt: Nullable(Millis(), { description: 'when a trigger order fired; null before (status UNTRIGGERED) and for LIMIT and MARKET orders' }),
  closePosition: Type.Boolean({ description: 'a trigger that closes the whole position when it fires (size 0 until then)' }),
  createdAt: Millis(),
  updatedAt: Millis(),
});
export type Order = Static<typeof OrderSchema>;

/** An order as the lists show it: marked when it is the engine's liquidation order. */
export const ListedOrderSchema = Type.Object({
  ...OrderSchema.properties,
  reason: Nullable(Type.String(), {
    description:
      "why a done order ended: FILLED, USER_CANCEL, IOC_REMAINDER, SELF_TRADE_PREVENTION, REDUCE_ONLY, LIQUIDATION (cancelled by its account's liquidation), CANCEL_AFTER (the dead man's switch)",
  }),
  liquidation: Type.Boolean({
    description: "true for the engine's own order closing the account's position in a liquidation (LIMIT IOC reduce-only at the bankruptcy price, no taker fee)",
  }),
});
export type ListedOrder = Static<typeof ListedOrderSchema>;

export const FillSchema = Type.Object({
  tradeId: Type.String(),
  orderId: OrderIdOut,
  symbol: Type.String(),
  side: StringEnum(ORDER_SIDES),
  role: StringEnum(TRADE_ROLES),
  price: DecimalOut(),
  size: DecimalOut(),
  notional: DecimalOut(),
  fee: DecimalOut(),
  realisedPnl: DecimalOut(),
  ts: Millis(),
});
export type Fill = Static<typeof FillSchema>;

/** A fill of the account's trade history: marked when it is the liquidated side of a liquidation. */
export const TradeSchema = Type.Object({
  ...FillSchema.properties,
  liquidation: Type.Boolean({ description: "true on the liquidated account's side of its liquidation order's fill" }),
});
export type Trade = Static<typeof TradeSchema>;

/** `GET orders/open`: the account's open orders, filtered by symbol and creation time. */
export const OpenOrdersQuerySchema = Type.Object(
  { symbol: Type.Optional(SymbolParam), ...TimeRangeProps, ...PageQueryProps },
  { additionalProperties: false },
);
export type OpenOrdersQuery = Static<typeof OpenOrdersQuerySchema>;

/** `GET orders/history`: also by status. */
export const OrderHistoryQuerySchema = Type.Object(
  { symbol: Type.Optional(SymbolParam), status: Type.Optional(StringEnum(ORDER_STATUSES)), ...TimeRangeProps, ...PageQueryProps },
  { additionalProperties: false },
);
export type OrderHistoryQuery = Static<typeof OrderHistoryQuerySchema>;

/** `GET trades`: the account's fills, also of one order. */
export const TradesQuerySchema = Type.Object(
  { symbol: Type.Optional(SymbolParam), orderId: Type.Optional(Type.String({ pattern: ORDER_ID_PATTERN })), ...TimeRangeProps, ...PageQueryProps },
  { additionalProperties: false },
);
export type TradesQuery = Static<typeof TradesQuerySchema>;

/** What `orders/build` takes (decimal strings; the key's wallet is the account). */
export const OrderInputSchema = Type.Object(
  {
    symbol: SymbolParam,
    side: StringEnum(ORDER_SIDES),
    type: StringEnum(ORDER_TYPES),
    size: Type.Optional(DecimalIn({ description: 'base units, a multiple of the lot size; omitted only with closePosition' })),
    price: Type.Optional(DecimalIn({ description: 'LIMIT, STOP_LIMIT, TAKE_PROFIT_LIMIT: the limit price (required); the *MARKET types: optional worst price' })),
    timeInForce: Type.Optional(StringEnum(TIME_IN_FORCES, { description: 'the LIMIT types default GTC; the MARKET types IOC (default) or FOK' })),
    reduceOnly: Type.Optional(Type.Boolean()),
    triggerPrice: Type.Optional(DecimalIn({ description: 'STOP_* and TAKE_PROFIT_*: the price that fires the order (required for them, refused for others)' })),
    triggerBy: Type.Optional(StringEnum(TRIGGER_BY, { description: 'the price the trigger watches: MARK (default) or LAST' })),
    closePosition: Type.Optional(
      Type.Boolean({ description: 'STOP_* and TAKE_PROFIT_* only, size omitted: close the whole position when it fires; cancelled when the position reaches zero' }),
    ),
    clientOrderId: Type.Optional(
      Type.String({ minLength: 1, maxLength: MAX_CLIENT_ORDER_ID, pattern: VISIBLE_ASCII_PATTERN, description: 'idempotency key per account' }),
    ),
    expiry: Type.Optional(Millis({ description: 'until when the signed order may arrive (default now + 10 minutes, at most 30 days ahead)' })),
  },
  { additionalProperties: false },
);
export type OrderInput = Static<typeof OrderInputSchema>;

/** What `POST orders`, `orders/fill` and `positions/close` take. */
export const SignedOrderBodySchema = Type.Object(
  {
    message: AnyObject({ description: 'typedData.message exactly as orders/build answered it' }),
    signature: SignatureIn("the wallet's EIP-712 signature over the order"),
  },
  { additionalProperties: false },
);
export type SignedOrderBody = Static<typeof SignedOrderBodySchema>;

/** The answer of `POST orders`, `orders/fill` and `positions/close`. */
export const SubmittedOrderSchema = Type.Object({
  ...OrderSchema.properties,
  fills: Type.Array(FillSchema, { description: "this order's fills so far (the taker side)" }),
  duplicate: Type.Boolean({ description: 'true when the answer repeats an order placed before (same clientOrderId or the same signed order)' }),
});
export type SubmittedOrder = Static<typeof SubmittedOrderSchema>;

/** `POST orders/batch`: 1 to 20 signed orders, each as `POST orders` takes it. */
export const BatchOrdersBodySchema = Type.Object(
  { orders: Type.Array(SignedOrderBodySchema, { minItems: 1, maxItems: MAX_BATCH_ORDERS }) },
  { additionalProperties: false },
);
export type BatchOrdersBody = Static<typeof BatchOrdersBodySchema>;

/** One order's answer in a batch: `{code: 0, order}` placed, or `{code, msg}` refused (the code of the error table). */
export const BatchOrderResultSchema = Type.Object({
  code: Type.Integer({ description: '0 when placed, else the error code this order alone would have been answered with' }),
  msg: Type.Optional(Type.String()),
  order: Type.Optional(SubmittedOrderSchema),
});
export type BatchOrderResult = Static<typeof BatchOrderResultSchema>;

export const BatchOrdersResultSchema = Type.Object({
  results: Type.Array(BatchOrderResultSchema, { description: 'one answer per order, in input order' }),
});
export type BatchOrdersResult = Static<typeof BatchOrdersResultSchema>;

/** `POST orders/amend/build`: the new price and/or size (the new total size, fills included) of an open order. */
export const AmendInputSchema = Type.Object(
  {
    orderId: Type.String({ pattern: ORDER_ID_PATTERN, description: 'an open order of the account' }),
    price: Type.Optional(DecimalIn({ description: 'the new limit price; omitted: unchanged' })),
    size: Type.Optional(DecimalIn({ description: 'the new total size, more than what has filled; omitted: unchanged' })),
    expiry: Type.Optional(Millis({ description: 'until when the signed amendment may arrive (default now + 10 minutes)' })),
  },
  { additionalProperties: false },
);
export type AmendInput = Static<typeof AmendInputSchema>;

export const BuiltAmendSchema = Type.Object({
  typedData: AnyObject({
    description:
      'complete EIP-712 typed data: domain TokexPerp / 1 / chain id / margin vault; primaryType AmendOrder(address account,uint64 orderId,string price,string size,uint64 nonce,uint64 expiry)',
  }),
  amendHash: Type.String({ description: 'the EIP-712 hash of the amendment' }),
});
export type BuiltAmend = { typedData: TypedData; amendHash: string };

/**
 * Order entry over the private perp stream (contract.md §B, docs/streams.md): after `auth`,
 * `{"op":"order","id","action","body"}` with `body` the REST call's JSON body, answered by
 * `{"type":"result","id","code","msg","data"}` with `data` as REST answers it.
 */
export const STREAM_ORDER_ACTIONS = ['place', 'batch', 'cancel', 'amend'] as const;
export type StreamOrderAction = (typeof STREAM_ORDER_ACTIONS)[number];

/**
 * `cancel`'s body: the order, and optionally the `Idempotency-Key` REST takes as a header (the same
 * key makes a retry over either transport answer as the first call).
 */
export const StreamCancelBodySchema = Type.Object(
  {
    orderId: OrderIdIn,
    idempotencyKey: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_IDEMPOTENCY_KEY, pattern: IDEMPOTENCY_KEY_PATTERN })),
  },
  { additionalProperties: false },
);
export type StreamCancelBody = Static<typeof StreamCancelBodySchema>;

export const StreamOrderFrameSchema = Type.Object({
  op: Type.Literal('order'),
  id: Type.String({ minLength: 1 }),
  action: StringEnum(STREAM_ORDER_ACTIONS),
  body: AnyObject(),
});
export type StreamOrderFrame = Static<typeof StreamOrderFrameSchema>;

/** The answer to an `order` frame: code 0 and `data` as REST answers, or the REST error's code and msg. */
export interface StreamResultFrame<T = unknown> {
  type: 'result';
  id: string;
  code: number;
  msg: string;
  data: T;
}

/** `GET orders/client/{clientOrderId}`. */
export const ClientOrderIdIn = Type.String({ minLength: 1, maxLength: MAX_CLIENT_ORDER_ID, pattern: VISIBLE_ASCII_PATTERN });

/** Complete EIP-712 typed data as the signing flows answer it (`description` names the primary type). */
export function TypedDataSchema(description: string) {
  return Type.Object(
    {
      domain: AnyObject(),
      types: AnyObject(),
      primaryType: Type.String(),
      message: AnyObject(),
    },
    { additionalProperties: true, description },
  );
}

/** Complete typed data as a client reads it. */
export interface TypedData {
  domain: { name?: string; version?: string; chainId: number; verifyingContract?: string };
  types: Record<string, Array<{ name: string; type: string }>>;
  primaryType: string;
  message: Record<string, unknown>;
}

export const BuiltOrderSchema = Type.Object({
  typedData: AnyObject(
    {
      description:
        'complete EIP-712 typed data: domain TokexPerp / 1 / chain id / margin vault; primaryType Order(address account,string symbol,string side,string orderType,string size,string price,string timeInForce,bool reduceOnly,string clientOrderId,uint64 nonce,uint64 expiry), or for STOP_* and TAKE_PROFIT_* TriggerOrder (the same fields with string triggerPrice,string triggerBy,bool closePosition before nonce)',
    },
  ),
  orderHash: Type.String({ description: 'the EIP-712 hash of the order' }),
});
export type BuiltOrder = { typedData: TypedData; orderHash: string };

export const BatchCancelBodySchema = Type.Object(
  {
    orderIds: Type.Optional(Type.Array(OrderIdIn, { minItems: 1, maxItems: MAX_BATCH_CANCEL })),
    symbol: Type.Optional(SymbolParam),
  },
  { additionalProperties: false },
);
export type BatchCancelBody = Static<typeof BatchCancelBodySchema>;

export const BatchCancelResultSchema = Type.Object({
  canceled: Type.Array(Type.String()),
  failed: Type.Array(Type.Object({ orderId: Type.String(), code: Type.String(), msg: Type.String() })),
});
export type BatchCancelResult = Static<typeof BatchCancelResultSchema>;

export const CancelAllAfterBodySchema = Type.Object(
  { timeoutMs: Type.Integer({ description: '0 disarms; otherwise 5000 to 86400000 ms from now, re-arming moves the deadline' }) },
  { additionalProperties: false },
);

export const CancelAllAfterSchema = Type.Object({
  armed: Type.Boolean(),
  deadline: Nullable(Type.Integer(), { description: 'when the open orders go (ms): at the first mark update from then; null when disarmed' }),
  timeoutMs: Type.Integer(),
});
export type CancelAllAfterStatus = Static<typeof CancelAllAfterSchema>;

// ------------------------------------------------------------------ positions

export const PositionSchema = Type.Object({
  symbol: Type.String(),
  side: StringEnum(POSITION_SIDES),
  size: DecimalOut(),
  entryPrice: Nullable(Type.String()),
  markPrice: Nullable(Type.String()),
  notional: DecimalOut({ description: 'size × mark (USD)' }),
  unrealisedPnl: DecimalOut(),
  realisedPnl: DecimalOut(),
  funding: DecimalOut({ description: 'net funding received (negative: paid)' }),
  margin: DecimalOut({ description: 'initial margin (cross) or the isolated margin' }),
  maintenanceMargin: DecimalOut(),
  leverage: Type.Integer(),
  marginMode: StringEnum(MARGIN_MODES),
  liquidationPrice: Nullable(Type.String(), { description: 'mark price at which the position would be liquidated, others unchanged; null when none' }),
});
export type Position = Static<typeof PositionSchema>;

export const AdjustPositionBodySchema = Type.Object(
  {
    symbol: SymbolParam,
    leverage: Type.Integer({ minimum: 1, maximum: 1000 }),
    marginMode: Type.Optional(StringEnum(MARGIN_MODES)),
  },
  { additionalProperties: false },
);
export type AdjustPositionBody = Static<typeof AdjustPositionBodySchema>;

export const MarginBodySchema = Type.Object(
  { symbol: SymbolParam, amount: SignedDecimalIn({ description: 'USD; positive adds, negative removes' }) },
  { additionalProperties: false },
);
export type MarginBody = Static<typeof MarginBodySchema>;
