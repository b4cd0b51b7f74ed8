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
  AmendInputSchema,
  BatchOrdersBodySchema,
  BatchOrdersResultSchema,
  BuiltAmendSchema,
  ClientOrderIdIn,
  ListedOrderSchema,
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

  // An order or a fill is answered from the engine's reply (venue-api.ts `answersFromReply`); a
  // close reads the position first.
  const submitRoute = (path: string, mode: SubmitMode, summary: string) =>
    app.post(
      path,
      { schema: { tags, summary, body: SignedOrderBodySchema, response: perpResponses(SubmittedOrderSchema) }, config: { answersFromReply: mode !== 'close' } },
      async (req) => perpOk(req.id, await orders().submit(caller(req), req.body, mode)),
    );
  submitRoute('/orders', 'order', 'Place a signed order (TRADE): the answer carries its status and fills so far');
  submitRoute('/orders/fill', 'fill', 'Take liquidity with a signed IOC or FOK order up to its worst price (TRADE); nothing rests');
  submitRoute('/positions/close', 'close', 'Close a position, whole or in part, with a signed reduce-only order (TRADE)');

  app.post(
    '/orders/batch',
    {
      config: { answersFromReply: true },
      schema: {
        tags,
        summary: 'Place 1 to 20 signed orders at once (TRADE): applied in order, journalled in one commit, each answered on its own; weighs 1 + ⌊n/10⌋ rate-limit units',
        body: BatchOrdersBodySchema,
        response: perpResponses(BatchOrdersResultSchema),
      },
    },
    async (req) => perpOk(req.id, await orders().submitBatch(caller(req), req.body)),
  );

  app.post(
    '/orders/amend/build',
    {
      schema: {
        tags,
        summary: 'The EIP-712 amendment (new price and/or total size) of an open order for the wallet to sign (TRADE); nothing changes yet',
        body: AmendInputSchema,
        response: perpResponses(BuiltAmendSchema),
      },
    },
    async (req) => perpOk(req.id, orders().buildAmend(caller(req), req.body)),
  );

  app.post(
    '/orders/amend',
    {
      schema: {
        tags,
        summary: 'Apply a signed amendment (TRADE): the order under the same id; a smaller size at the same price keeps its queue place, anything else re-queues it',
        body: SignedOrderBodySchema,
        response: perpResponses(SubmittedOrderSchema),
      },
    },
    async (req) => perpOk(req.id, await orders().amend(caller(req), req.body)),
  );

  /** `GET` of one of the account's orders in any state (READ), found by `param` of its path. */
  const getOrderBy = (path: string, by: string, param: 'orderId' | 'clientOrderId', find: (key: AuthKey, value: string) => ReturnType<OrderService['getOrder']>) =>
    app.get(
      path,
      {
        schema: {
          tags,
          summary: `One of the account's orders in any state, by ${by} (READ)`,
          params: Type.Object({ [param]: param === 'orderId' ? OrderIdIn : ClientOrderIdIn }),
          response: perpResponses(ListedOrderSchema),
        },
      },
      async (req) => perpOk(req.id, await find(caller(req), (req.params as Record<string, string>)[param])),
    );
  getOrderBy('/orders/client/:clientOrderId', 'its clientOrderId', 'clientOrderId', (key, id) => orders().getOrderByClientId(key, id));
  getOrderBy('/orders/:orderId', 'id', 'orderId', (key, id) => orders().getOrder(key, id));

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
