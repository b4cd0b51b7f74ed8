/**
 * History (contract.md §B): the account's open orders, every order it placed, and its fills. Every
 * shape is the contract's (packages/contract).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ListedOrderSchema, ListOf, OpenOrdersQuerySchema, OrderHistoryQuerySchema, pageOf, perpResponses, TradeSchema, TradesQuerySchema, type OpenOrdersQuery } from '@tokex/contract';
import type { AuthKey } from '../../auth/api-key-service.ts';
import type { AccountService } from '../account-service.ts';
import { perpOk } from '../perp-envelope.ts';
import { available } from './trading-routes.ts';

export const historyRoutes: FastifyPluginAsyncTypebox<{ accounts?: AccountService }> = async (app, opts) => {
  const tags = ['history'];
  const caller = (req: { apiKey?: AuthKey }) => req.apiKey as AuthKey;
  const accounts = () => available(opts.accounts);
  const range = (q: OpenOrdersQuery) => ({ ...pageOf(q), symbol: q.symbol, startTime: q.startTime, endTime: q.endTime });

  app.get(
    '/orders/open',
    {
      schema: { tags, summary: 'Open orders of the account, newest first (READ)', querystring: OpenOrdersQuerySchema, response: perpResponses(ListOf(ListedOrderSchema)) },
    },
    async (req) => perpOk(req.id, await accounts().openOrders(caller(req), range(req.query))),
  );

  app.get(
    '/orders/history',
    {
      schema: {
        tags,
        summary: 'Every order of the account (open and done), newest first (READ)',
        querystring: OrderHistoryQuerySchema,
        response: perpResponses(ListOf(ListedOrderSchema)),
      },
    },
    async (req) => perpOk(req.id, await accounts().orderHistory(caller(req), { ...range(req.query), status: req.query.status })),
  );

  app.get(
    '/trades',
    {
      schema: {
        tags,
        summary: 'Fills of the account, newest first (READ)',
        querystring: TradesQuerySchema,
        response: perpResponses(ListOf(TradeSchema)),
      },
    },
    async (req) =>
      perpOk(req.id, await accounts().trades(caller(req), { ...range(req.query), orderId: req.query.orderId === undefined ? undefined : Number(req.query.orderId) })),
  );
};
