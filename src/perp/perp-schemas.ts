/** JSON-schema pieces shared by the perpetual API's route modules (validation, response shape, OpenAPI). */
import { ADDRESS_PATTERN, DECIMAL_PATTERN } from '../http/schema-patterns.ts';

export const address = { type: 'string', pattern: ADDRESS_PATTERN } as const;
export const decimal = { type: 'string', pattern: DECIMAL_PATTERN } as const;
export const decimalOut = { type: 'string', description: 'exact decimal string' } as const;
export const millis = { type: 'integer', description: 'milliseconds since the Unix epoch' } as const;

export const permissionList = {
  type: 'array',
  minItems: 1,
  maxItems: 3,
  uniqueItems: true,
  items: { type: 'string', enum: ['READ', 'TRADE', 'TRANSFER'] },
} as const;

/** Wraps a data schema in the success envelope `{code: 0, msg: "ok", data, requestId}`. */
export function okEnvelope(data: Record<string, unknown>) {
  return {
    type: 'object',
    required: ['code', 'msg', 'data', 'requestId'],
    properties: {
      code: { type: 'integer', enum: [0] },
      msg: { type: 'string' },
      data,
      requestId: { type: 'string', format: 'uuid' },
    },
  } as const;
}

export const errorEnvelope = {
  type: 'object',
  required: ['code', 'msg', 'data', 'requestId'],
  properties: {
    code: { type: 'integer', description: 'a code of the documented table (docs/perp-api.md): 10xxx parameters, 20xxx authentication, 30001 permission, 40xxx not found, 42900 rate limit, 50xxx server, 51xxx/52xxx trading' },
    msg: { type: 'string' },
    data: { type: 'object', additionalProperties: true, description: '`{field}` for a parameter error, otherwise `{}`' },
    requestId: { type: 'string', format: 'uuid' },
  },
} as const;

/** Standard responses: the success schema plus the error envelope for every failure status. */
export function responses(data: Record<string, unknown>) {
  return {
    200: okEnvelope(data),
    '4xx': errorEnvelope,
    '5xx': errorEnvelope,
  };
}

/** Signed decimal (a margin change): `-12.5` removes, `12.5` adds. */
export const signedDecimal = { type: 'string', pattern: '^-?(0|[1-9][0-9]*)(\\.[0-9]+)?$', description: 'signed decimal string' } as const;
export const symbolProp = { type: 'string', minLength: 1, maxLength: 33, description: 'instrument, e.g. BTC-USD' } as const;
export const orderIdProp = { type: 'string', description: 'engine order id (decimal string)' } as const;

export const orderSchema = {
  type: 'object',
  required: ['orderId', 'clientOrderId', 'symbol', 'side', 'type', 'timeInForce', 'price', 'size', 'filledSize', 'remainingSize', 'avgPrice', 'fee', 'status', 'reason', 'reduceOnly', 'createdAt', 'updatedAt'],
  properties: {
    orderId: orderIdProp,
    clientOrderId: { type: ['string', 'null'] },
    symbol: { type: 'string' },
    side: { type: 'string', enum: ['BUY', 'SELL'] },
    type: { type: 'string', enum: ['LIMIT', 'MARKET'] },
    timeInForce: { type: 'string', enum: ['GTC', 'IOC', 'FOK', 'POST_ONLY'] },
    price: { type: ['string', 'null'], description: 'limit or worst price; null for a market order without one' },
    size: decimalOut,
    filledSize: decimalOut,
    remainingSize: { ...decimalOut, description: 'resting size (0 once the order is done)' },
    avgPrice: { type: ['string', 'null'], description: 'average fill price (tick decimals + 4, rounded down); null before a fill' },
    fee: { ...decimalOut, description: 'fees paid by this order so far (USD)' },
    status: { type: 'string', enum: ['NEW', 'PARTIALLY_FILLED', 'FILLED', 'CANCELED', 'EXPIRED'] },
    reason: { type: ['string', 'null'], description: 'why a done order ended: FILLED, USER_CANCEL, IOC_REMAINDER, SELF_TRADE_PREVENTION, REDUCE_ONLY' },
    reduceOnly: { type: 'boolean' },
    createdAt: millis,
    updatedAt: millis,
  },
} as const;

export const fillSchema = {
  type: 'object',
  required: ['tradeId', 'orderId', 'symbol', 'side', 'role', 'price', 'size', 'notional', 'fee', 'realisedPnl', 'ts'],
  properties: {
    tradeId: { type: 'string' },
    orderId: orderIdProp,
    symbol: { type: 'string' },
    side: { type: 'string', enum: ['BUY', 'SELL'] },
    role: { type: 'string', enum: ['MAKER', 'TAKER'] },
    price: decimalOut,
    size: decimalOut,
    notional: decimalOut,
    fee: decimalOut,
    realisedPnl: decimalOut,
    ts: millis,
  },
} as const;

export const positionSchema = {
  type: 'object',
  required: ['symbol', 'side', 'size', 'entryPrice', 'markPrice', 'notional', 'unrealisedPnl', 'realisedPnl', 'funding', 'margin', 'maintenanceMargin', 'leverage', 'marginMode', 'liquidationPrice'],
  properties: {
    symbol: { type: 'string' },
    side: { type: 'string', enum: ['LONG', 'SHORT', 'FLAT'] },
    size: decimalOut,
    entryPrice: { type: ['string', 'null'] },
    markPrice: { type: ['string', 'null'] },
    notional: { ...decimalOut, description: 'size × mark (USD)' },
    unrealisedPnl: decimalOut,
    realisedPnl: decimalOut,
    funding: { ...decimalOut, description: 'net funding received (negative: paid)' },
    margin: { ...decimalOut, description: 'initial margin (cross) or the isolated margin' },
    maintenanceMargin: decimalOut,
    leverage: { type: 'integer' },
    marginMode: { type: 'string', enum: ['cross', 'isolated'] },
    liquidationPrice: { type: ['string', 'null'], description: 'mark price at which the position would be liquidated, others unchanged; null when none' },
  },
} as const;

export const timeRangeProps = {
  startTime: { ...millis, minimum: 0 },
  endTime: { ...millis, minimum: 0 },
} as const;

/** The query of a list endpoint: paging, and the filters most lists take. */
export interface ListQuerystring {
  page?: number;
  limit?: number;
  symbol?: string;
  startTime?: number;
  endTime?: number;
}
