/**
 * The liquidity pool (contract.md §B, docs/perp-api.md "Liquidity pool"): add collateral for shares,
 * remove shares for their value after the lock-up (TRANSFER permission: both move collateral, and
 * like withdrawals they take no order signature, so a One-Click session key has no path here), the
 * account's shares and their value, and its additions and removals. Every shape is the contract's
 * (packages/contract).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  LiquidityAddBodySchema,
  LiquidityHistorySchema,
  LiquidityMoveSchema,
  LiquidityPositionSchema,
  LiquidityRemoveBodySchema,
  ListOf,
  pageOf,
  PerpIdempotencyHeaders as idempotencyHeaders,
  perpResponses,
  TimeRangeQuerySchema,
} from '@tokex/contract';
import type { AuthKey } from '../../auth/api-key-service.ts';
import { idempotencyKeyOf } from '../idempotency.ts';
import type { LiquidityService } from '../liquidity-service.ts';
import { perpOk } from '../perp-envelope.ts';
import { available } from './trading-routes.ts';

export const liquidityRoutes: FastifyPluginAsyncTypebox<{ liquidity?: LiquidityService }> = async (app, opts) => {
  const tags = ['liquidity'];
  const caller = (req: { apiKey?: AuthKey }) => req.apiKey as AuthKey;
  const liquidity = () => available(opts.liquidity);

  app.post(
    '/liquidity/add',
    {
      config: { permission: 'TRANSFER' },
      schema: {
        tags,
        summary: "Move withdrawable collateral into the liquidity pool for shares, locked for PERP_LP_LOCKUP_MS from now (TRANSFER)",
        body: LiquidityAddBodySchema,
        headers: idempotencyHeaders,
        response: perpResponses(LiquidityMoveSchema),
      },
    },
    async (req) => perpOk(req.id, await liquidity().add(caller(req), req.body, idempotencyKeyOf(req.headers))),
  );

  app.post(
    '/liquidity/remove',
    {
      config: { permission: 'TRANSFER' },
      schema: {
        tags,
        summary: 'Burn pool shares for shares × pool equity ÷ total shares, once the lock-up has ended (TRANSFER)',
        body: LiquidityRemoveBodySchema,
        headers: idempotencyHeaders,
        response: perpResponses(LiquidityMoveSchema),
      },
    },
    async (req) => perpOk(req.id, await liquidity().remove(caller(req), req.body, idempotencyKeyOf(req.headers))),
  );

  app.get(
    '/liquidity/positions',
    {
      schema: {
        tags,
        summary: "The account's pool shares, their value, PnL and lock-up, with the pool's equity and total shares (READ)",
        response: perpResponses(LiquidityPositionSchema),
      },
    },
    async (req) => perpOk(req.id, liquidity().positions(caller(req))),
  );

  app.get(
    '/liquidity/history',
    {
      schema: {
        tags,
        summary: "The account's additions to and removals from the pool, newest first (READ)",
        querystring: TimeRangeQuerySchema,
        response: perpResponses(ListOf(LiquidityHistorySchema)),
      },
    },
    async (req) => {
      const q = req.query;
      const { offset, limit } = pageOf(q);
      return perpOk(req.id, await liquidity().history(caller(req), { offset, limit, startTime: q.startTime, endTime: q.endTime }));
    },
  );
};
