/**
 * Trading (contract.md §B): build and submit signed orders, cancel one or many, take liquidity up
 * to a worst price (`orders/fill`), close a position with a reduce-only order, change leverage and
 * margin mode, move isolated margin. The signed calls take `{message, signature}`: the message as
 * `orders/build` answered it, the wallet's EIP-712 signature over it. Every shape is the contract's
 * (packages/contract); this module only routes.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  AdjustPositionBodySchema,
  BatchCancelBodySchema,
  BatchCancelResultSchema,
  BuiltOrderSchema,
  CancelAllAfterBodySchema,
  CancelAllAfterSchema,
  MarginBodySchema,
  OrderIdIn,
  OrderInputSchema,
  OrderSchema,
  PerpIdempotencyHeaders as idempotencyHeaders,
  perpResponses,
  PositionSchema,
  SignedOrderBodySchema,
  SubmittedOrderSchema,
  Type,
} from '@tokex/contract';
import { AppError } from '../../errors/app-error.ts';
import type { AuthKey } from '../../auth/api-key-service.ts';
import type { OrderService, SubmitMode } from '../order-service.ts';
import { idempotencyKeyOf } from '../idempotency.ts';
import { perpOk } from '../perp-envelope.ts';

/** The engine is not reachable from this instance (no engine in process, no broker configured). */
export function engineUnavailable(): AppError {
  return new AppError('STORAGE_UNAVAILABLE', 'perp engine: not reachable from this instance, try again later', { retryable: true });
}

export function available<T>(service: T | undefined): T {
  if (service === undefined) throw engineUnavailable();
  return service;
}

export interface TradingRouteOptions {
  orders?: OrderService;
}

export const tradingRoutes: FastifyPluginAsyncTypebox<TradingRouteOptions> = async (app, opts) => {
  const tags = ['trading'];
  const caller = (req: { apiKey?: AuthKey }) => req.apiKey as AuthKey;
  const orders = () => available(opts.orders);

  app.post(
    '/orders/build',
    {
      schema: {
        tags,
        summary: 'The EIP-712 order for the wallet to sign, with a fresh nonce (TRADE); nothing is placed',
        body: OrderInputSchema,
        response: perpResponses(BuiltOrderSchema),
      },
    },
    async (req) => perpOk(req.id, orders().build(caller(req), req.body)),
  );

  const submitRoute = (path: string, mode: SubmitMode, summary: string) =>
    app.post(
      path,
      { schema: { tags, summary, body: SignedOrderBodySchema, response: perpResponses(SubmittedOrderSchema) } },
      async (req) => perpOk(req.id, await orders().submit(caller(req), req.body, mode)),
    );
  submitRoute('/orders', 'order', 'Place a signed order (TRADE): the answer carries its status and fills so far');
  submitRoute('/orders/fill', 'fill', 'Take liquidity with a signed IOC or FOK order up to its worst price (TRADE); nothing rests');
  submitRoute('/positions/close', 'close', 'Close a position, whole or in part, with a signed reduce-only order (TRADE)');

  app.delete(
    '/orders/:orderId',
    {
      schema: {
        tags,
        summary: 'Cancel an open order of the account (TRADE)',
        params: Type.Object({ orderId: OrderIdIn }),
        headers: idempotencyHeaders,
        response: perpResponses(OrderSchema),
      },
    },
    async (req) => perpOk(req.id, await orders().cancel(caller(req), req.params.orderId, idempotencyKeyOf(req.headers))),
  );

  app.post(
    '/orders/batch-cancel',
    {
      schema: {
        tags,
        summary: 'Cancel orders by id, or every open order of a symbol (TRADE)',
        body: BatchCancelBodySchema,
        headers: idempotencyHeaders,
        response: perpResponses(BatchCancelResultSchema),
      },
    },
    async (req) => perpOk(req.id, await orders().batchCancel(caller(req), req.body, idempotencyKeyOf(req.headers))),
  );

  app.post(
    '/positions/adjust',
    {
      schema: {
        tags,
        summary: "Set the leverage (and the margin mode, while flat with no open orders) of the account's position on a symbol (TRADE)",
        body: AdjustPositionBodySchema,
        headers: idempotencyHeaders,
        response: perpResponses(PositionSchema),
      },
    },
    async (req) => perpOk(req.id, await orders().adjust(caller(req), req.body, idempotencyKeyOf(req.headers))),
  );

  app.post(
    '/positions/margin',
    {
      schema: {
        tags,
        summary: 'Add (positive amount) or remove (negative) margin of an isolated position (TRADE)',
        body: MarginBodySchema,
        headers: idempotencyHeaders,
        response: perpResponses(PositionSchema),
      },
    },
    async (req) => perpOk(req.id, await orders().margin(caller(req), req.body, idempotencyKeyOf(req.headers))),
  );

  app.post(
    '/orders/cancel-all-after',
    {
      schema: {
        tags,
        summary: "Dead man's switch: cancel every open order of the account unless called again within timeoutMs; 0 disarms (TRADE)",
        body: CancelAllAfterBodySchema,
        headers: idempotencyHeaders,
        response: perpResponses(CancelAllAfterSchema),
      },
    },
    async (req) => perpOk(req.id, await orders().cancelAllAfter(caller(req), req.body, idempotencyKeyOf(req.headers))),
  );
};
