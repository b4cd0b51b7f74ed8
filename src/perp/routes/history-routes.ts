/** History (contract.md §B): the account's open orders, every order it placed, and its fills. */
import type { FastifyPluginAsync } from 'fastify';
import type { AuthKey } from '../../auth/api-key-service.ts';
import { listOf, pageOf, pageQueryProps } from '../../http/list-paging.ts';
import type { AccountService } from '../account-service.ts';
import { perpOk } from '../perp-envelope.ts';
import { fillSchema, orderSchema, responses, symbolProp, timeRangeProps, type ListQuerystring } from '../perp-schemas.ts';
import type { PerpOrderStatus } from '../store/perp-history-store.ts';
import { available } from './trading-routes.ts';

/** An order as these lists give it: also marked when it is the engine's liquidation order. */
const listedOrderSchema = {
  ...orderSchema,
  required: [...orderSchema.required, 'liquidation'],
  properties: {
    ...orderSchema.properties,
    reason: {
      type: ['string', 'null'],
      description: 'why a done order ended: FILLED, USER_CANCEL, IOC_REMAINDER, SELF_TRADE_PREVENTION, REDUCE_ONLY, LIQUIDATION (cancelled by its account\'s liquidation), CANCEL_AFTER (the dead man\'s switch)',
    },
    liquidation: { type: 'boolean', description: "true for the engine's own order closing the account's position in a liquidation (LIMIT IOC reduce-only at the bankruptcy price, no taker fee)" },
  },
} as const;

const listedFillSchema = {
  ...fillSchema,
  required: [...fillSchema.required, 'liquidation'],
  properties: {
    ...fillSchema.properties,
    liquidation: { type: 'boolean', description: "true on the liquidated account's side of its liquidation order's fill" },
  },
} as const;

export const historyRoutes: FastifyPluginAsync<{ accounts?: AccountService }> = async (app, opts) => {
  const tags = ['history'];
  const caller = (req: { apiKey?: AuthKey }) => req.apiKey as AuthKey;
  const accounts = () => available(opts.accounts);
  const listQuery = (extra: Record<string, unknown> = {}) => ({
    type: 'object',
    additionalProperties: false,
    properties: { symbol: symbolProp, ...extra, ...timeRangeProps, ...pageQueryProps },
  });
  const range = (q: ListQuerystring) => ({ ...pageOf(q), symbol: q.symbol, startTime: q.startTime, endTime: q.endTime });

  app.get<{ Querystring: ListQuerystring }>(
    '/orders/open',
    { schema: { tags, summary: 'Open orders of the account, newest first (READ)', querystring: listQuery(), response: responses(listOf(listedOrderSchema)) } },
    async (req) => perpOk(req.id, await accounts().openOrders(caller(req), range(req.query))),
  );

  app.get<{ Querystring: ListQuerystring & { status?: PerpOrderStatus } }>(
    '/orders/history',
    {
      schema: {
        tags,
        summary: 'Every order of the account (open and done), newest first (READ)',
        querystring: listQuery({ status: { type: 'string', enum: ['NEW', 'PARTIALLY_FILLED', 'FILLED', 'CANCELED', 'EXPIRED'] } }),
        response: responses(listOf(listedOrderSchema)),
      },
    },
    async (req) => perpOk(req.id, await accounts().orderHistory(caller(req), { ...range(req.query), status: req.query.status })),
  );

  app.get<{ Querystring: ListQuerystring & { orderId?: string } }>(
    '/trades',
    {
      schema: {
        tags,
        summary: 'Fills of the account, newest first (READ)',
        querystring: listQuery({ orderId: { type: 'string', pattern: '^[1-9][0-9]{0,15}$' } }),
        response: responses(listOf(listedFillSchema)),
      },
    },
    async (req) =>
      perpOk(req.id, await accounts().trades(caller(req), { ...range(req.query), orderId: req.query.orderId === undefined ? undefined : Number(req.query.orderId) })),
  );
};
