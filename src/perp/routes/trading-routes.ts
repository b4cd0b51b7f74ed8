/**
 * Trading (contract.md §B): build and submit signed orders, cancel one or many, take liquidity up
 * to a worst price (`orders/fill`), close a position with a reduce-only order, change leverage and
 * margin mode, move isolated margin. The signed calls take `{message, signature}`: the message as
 * `orders/build` answered it, the wallet's EIP-712 signature over it.
 */
import type { FastifyPluginAsync } from 'fastify';
import { AppError } from '../../errors/app-error.ts';
import { SIGNATURE_PATTERN } from '../../http/schema-patterns.ts';
import type { AuthKey } from '../../auth/api-key-service.ts';
import type { MarginMode } from '../engine/engine-types.ts';
import type { BuildOrderInput, OrderService, SubmitMode } from '../order-service.ts';
import { idempotencyKeyOf } from '../idempotency.ts';
import { perpOk } from '../perp-envelope.ts';
import { decimal, fillSchema, idempotencyHeaders, millis, orderSchema, positionSchema, responses, signedDecimal, symbolProp } from '../perp-schemas.ts';

/** The engine is not reachable from this instance (no engine in process, no broker configured). */
export function engineUnavailable(): AppError {
  return new AppError('STORAGE_UNAVAILABLE', 'perp engine: not reachable from this instance, try again later', { retryable: true });
}

export function available<T>(service: T | undefined): T {
  if (service === undefined) throw engineUnavailable();
  return service;
}

const signedBody = {
  type: 'object',
  required: ['message', 'signature'],
  additionalProperties: false,
  properties: {
    message: { type: 'object', additionalProperties: true, description: 'typedData.message exactly as orders/build answered it' },
    signature: { type: 'string', pattern: SIGNATURE_PATTERN, description: "the wallet's EIP-712 signature over the order" },
  },
} as const;

const submittedSchema = {
  ...orderSchema,
  required: [...orderSchema.required, 'fills', 'duplicate'],
  properties: {
    ...orderSchema.properties,
    fills: { type: 'array', items: fillSchema, description: "this order's fills so far (the taker side)" },
    duplicate: { type: 'boolean', description: 'true when the answer repeats an order placed before (same clientOrderId or the same signed order)' },
  },
} as const;

const typedDataSchema = {
  type: 'object',
  required: ['typedData', 'orderHash'],
  properties: {
    typedData: {
      type: 'object',
      additionalProperties: true,
      description:
        'complete EIP-712 typed data: domain TokexPerp / 1 / chain id / margin vault; primaryType Order(address account,string symbol,string side,string orderType,string size,string price,string timeInForce,bool reduceOnly,string clientOrderId,uint64 nonce,uint64 expiry)',
    },
    orderHash: { type: 'string', description: 'the EIP-712 hash of the order' },
  },
} as const;

export interface TradingRouteOptions {
  orders?: OrderService;
}

export const tradingRoutes: FastifyPluginAsync<TradingRouteOptions> = async (app, opts) => {
  const tags = ['trading'];
  const caller = (req: { apiKey?: AuthKey }) => req.apiKey as AuthKey;
  const orders = () => available(opts.orders);

  app.post<{ Body: BuildOrderInput }>(
    '/orders/build',
    {
      schema: {
        tags,
        summary: 'The EIP-712 order for the wallet to sign, with a fresh nonce (TRADE); nothing is placed',
        body: {
          type: 'object',
          required: ['symbol', 'side', 'type', 'size'],
          additionalProperties: false,
          properties: {
            symbol: symbolProp,
            side: { type: 'string', enum: ['BUY', 'SELL'] },
            type: { type: 'string', enum: ['LIMIT', 'MARKET'] },
            size: { ...decimal, description: 'base units, a multiple of the lot size' },
            price: { ...decimal, description: 'LIMIT: the limit price (required); MARKET: optional worst price' },
            timeInForce: { type: 'string', enum: ['GTC', 'IOC', 'FOK', 'POST_ONLY'], description: 'LIMIT default GTC; MARKET IOC (default) or FOK' },
            reduceOnly: { type: 'boolean' },
            clientOrderId: { type: 'string', minLength: 1, maxLength: 64, pattern: '^[!-~]+$', description: 'idempotency key per account' },
            expiry: { ...millis, description: 'until when the signed order may arrive (default now + 10 minutes, at most 30 days ahead)' },
          },
        },
        response: responses(typedDataSchema),
      },
    },
    async (req) => perpOk(req.id, orders().build(caller(req), req.body)),
  );

  const submitRoute = (path: string, mode: SubmitMode, summary: string) =>
    app.post<{ Body: { message: unknown; signature: string } }>(
      path,
      { schema: { tags, summary, body: signedBody, response: responses(submittedSchema) } },
      async (req) => perpOk(req.id, await orders().submit(caller(req), req.body, mode)),
    );
  submitRoute('/orders', 'order', 'Place a signed order (TRADE): the answer carries its status and fills so far');
  submitRoute('/orders/fill', 'fill', 'Take liquidity with a signed IOC or FOK order up to its worst price (TRADE); nothing rests');
  submitRoute('/positions/close', 'close', 'Close a position, whole or in part, with a signed reduce-only order (TRADE)');

  app.delete<{ Params: { orderId: string } }>(
    '/orders/:orderId',
    {
      schema: {
        tags,
        summary: 'Cancel an open order of the account (TRADE)',
        params: { type: 'object', required: ['orderId'], properties: { orderId: { type: 'string', minLength: 1, maxLength: 20 } } },
        headers: idempotencyHeaders,
        response: responses(orderSchema),
      },
    },
    async (req) => perpOk(req.id, await orders().cancel(caller(req), req.params.orderId, idempotencyKeyOf(req.headers))),
  );

  app.post<{ Body: { orderIds?: string[]; symbol?: string } }>(
    '/orders/batch-cancel',
    {
      schema: {
        tags,
        summary: 'Cancel orders by id, or every open order of a symbol (TRADE)',
        body: {
          type: 'object',
          additionalProperties: false,
          properties: {
            orderIds: { type: 'array', minItems: 1, maxItems: 100, items: { type: 'string', minLength: 1, maxLength: 20 } },
            symbol: symbolProp,
          },
        },
        headers: idempotencyHeaders,
        response: responses({
          type: 'object',
          required: ['canceled', 'failed'],
          properties: {
            canceled: { type: 'array', items: { type: 'string' } },
            failed: {
              type: 'array',
              items: { type: 'object', required: ['orderId', 'code', 'msg'], properties: { orderId: { type: 'string' }, code: { type: 'string' }, msg: { type: 'string' } } },
            },
          },
        }),
      },
    },
    async (req) => perpOk(req.id, await orders().batchCancel(caller(req), req.body, idempotencyKeyOf(req.headers))),
  );

  app.post<{ Body: { symbol: string; leverage: number; marginMode?: MarginMode } }>(
    '/positions/adjust',
    {
      schema: {
        tags,
        summary: "Set the leverage (and the margin mode, while flat with no open orders) of the account's position on a symbol (TRADE)",
        body: {
          type: 'object',
          required: ['symbol', 'leverage'],
          additionalProperties: false,
          properties: {
            symbol: symbolProp,
            leverage: { type: 'integer', minimum: 1, maximum: 1000 },
            marginMode: { type: 'string', enum: ['cross', 'isolated'] },
          },
        },
        headers: idempotencyHeaders,
        response: responses(positionSchema),
      },
    },
    async (req) => perpOk(req.id, await orders().adjust(caller(req), req.body, idempotencyKeyOf(req.headers))),
  );

  app.post<{ Body: { symbol: string; amount: string } }>(
    '/positions/margin',
    {
      schema: {
        tags,
        summary: 'Add (positive amount) or remove (negative) margin of an isolated position (TRADE)',
        body: {
          type: 'object',
          required: ['symbol', 'amount'],
          additionalProperties: false,
          properties: { symbol: symbolProp, amount: { ...signedDecimal, description: 'USD; positive adds, negative removes' } },
        },
        headers: idempotencyHeaders,
        response: responses(positionSchema),
      },
    },
    async (req) => perpOk(req.id, await orders().margin(caller(req), req.body, idempotencyKeyOf(req.headers))),
  );

  app.post<{ Body: { timeoutMs: number } }>(
    '/orders/cancel-all-after',
    {
      schema: {
        tags,
        summary: "Dead man's switch: cancel every open order of the account unless called again within timeoutMs; 0 disarms (TRADE)",
        body: {
          type: 'object',
          required: ['timeoutMs'],
          additionalProperties: false,
          properties: {
            timeoutMs: { type: 'integer', description: '0 disarms; otherwise 5000 to 86400000 ms from now, re-arming moves the deadline' },
          },
        },
        headers: idempotencyHeaders,
        response: responses({
          type: 'object',
          required: ['armed', 'deadline', 'timeoutMs'],
          properties: {
            armed: { type: 'boolean' },
            deadline: { type: ['integer', 'null'], description: 'when the open orders go (ms): at the first mark update from then; null when disarmed' },
            timeoutMs: { type: 'integer' },
          },
        }),
      },
    },
    async (req) => perpOk(req.id, await orders().cancelAllAfter(caller(req), req.body, idempotencyKeyOf(req.headers))),
  );
};
