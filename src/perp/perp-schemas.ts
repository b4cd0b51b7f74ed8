/** JSON-schema pieces shared by the perpetual API's route modules (validation, response shape, OpenAPI). */
import { idempotencyHeadersSchema } from '../http/idempotency-key.ts';
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
/**
 * The optional `Idempotency-Key` header of a state-changing call the key alone authorises
 * (docs/perp-api.md "Idempotency"; parsed by src/http/idempotency-key.ts). Fastify hands
 * header names over lower-case.
 */
export const idempotencyHeaders = idempotencyHeadersSchema(
  'names the request (1 to 64 visible ASCII characters, unique per account and endpoint): a retry with the same key is answered as the first request and applied at most once; the same key with another request is 10002',
);

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

// ------------------------------------------------------------------ liquidity pool, insurance fund

/** Pool shares: a decimal string with up to 6 decimals (1 share = 1 USD into an empty pool). */
export const sharesOut = { type: 'string', description: 'pool shares, exact decimal string (6 decimals)' } as const;

export const liquidityMoveSchema = {
  type: 'object',
  required: ['action', 'amount', 'shares', 'lockedUntil', 'ts'],
  properties: {
    action: { type: 'string', enum: ['ADD', 'REMOVE'] },
    amount: { ...decimalOut, description: 'USD moved into (ADD) or paid out of (REMOVE) the pool' },
    shares: { ...sharesOut, description: 'shares minted (ADD) or burned (REMOVE)' },
    lockedUntil: { ...millis, description: "until when the holder's shares are locked" },
    ts: { ...millis, description: 'when the move was applied (the first request\'s time on a retry with the same Idempotency-Key)' },
  },
} as const;

export const liquidityPositionSchema = {
  type: 'object',
  required: ['shares', 'value', 'netDeposited', 'pnl', 'lockedUntil', 'poolEquity', 'totalShares'],
  properties: {
    shares: sharesOut,
    value: { ...decimalOut, description: 'shares × pool equity ÷ total shares, rounded down (USD)' },
    netDeposited: { ...decimalOut, description: 'USD added minus USD removed' },
    pnl: { ...decimalOut, description: 'value − netDeposited (USD)' },
    lockedUntil: { type: ['integer', 'null'], description: 'until when the shares are locked (ms); null without shares' },
    poolEquity: { ...decimalOut, description: "the pool's equity: collateral + isolated margin + unrealised PnL at the mark (USD)" },
    totalShares: sharesOut,
  },
} as const;

export const liquidityHistorySchema = {
  type: 'object',
  required: ['id', 'action', 'amount', 'shares', 'holderShares', 'totalShares', 'poolEquity', 'lockedUntil', 'ts'],
  properties: {
    id: { type: 'string', description: 'the engine event seq of the move' },
    action: { type: 'string', enum: ['ADD', 'REMOVE'] },
    amount: decimalOut,
    shares: sharesOut,
    holderShares: { ...sharesOut, description: "the account's shares after the move" },
    totalShares: { ...sharesOut, description: 'all shares after the move' },
    poolEquity: { ...decimalOut, description: 'pool equity after the move (USD)' },
    lockedUntil: millis,
    ts: millis,
  },
} as const;

export const insuranceMoveSchema = {
  type: 'object',
  required: ['id', 'reason', 'account', 'delta', 'balance', 'ts'],
  properties: {
    id: { type: 'string', description: 'the engine event seq of the movement' },
    reason: { type: 'string', enum: ['liquidationFee', 'badDebt'] },
    account: { type: 'string', description: 'the account liquidated, or whose bad debt was paid' },
    delta: { ...decimalOut, description: 'signed USD: positive into the fund' },
    balance: { ...decimalOut, description: "the fund's balance after" },
    ts: millis,
  },
} as const;

/** Complete EIP-712 typed data as the signing flows answer it (`description` names the primary type). */
export function typedDataSchema(description: string) {
  return {
    type: 'object',
    required: ['domain', 'types', 'primaryType', 'message'],
    additionalProperties: true,
    description,
    properties: {
      domain: { type: 'object', additionalProperties: true },
      types: { type: 'object', additionalProperties: true },
      primaryType: { type: 'string' },
      message: { type: 'object', additionalProperties: true },
    },
  } as const;
}
