/**
 * The liquidity pool (contract.md §B, docs/perp-api.md "Liquidity pool"): add collateral for shares,
 * remove shares for their value after the lock-up (TRANSFER permission: both move collateral, and
 * like withdrawals they take no order signature, so a One-Click session key has no path here), the
 * account's shares and their value, and its additions and removals.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { AuthKey } from '../../auth/api-key-service.ts';
import { listOf, pageOf, pageQueryProps } from '../../http/list-paging.ts';
import { idempotencyKeyOf } from '../idempotency.ts';
import type { LiquidityService } from '../liquidity-service.ts';
import { perpOk } from '../perp-envelope.ts';
import { decimal, idempotencyHeaders, liquidityHistorySchema, liquidityMoveSchema, liquidityPositionSchema, responses, timeRangeProps, type ListQuerystring } from '../perp-schemas.ts';
import { available } from './trading-routes.ts';

export const liquidityRoutes: FastifyPluginAsync<{ liquidity?: LiquidityService }> = async (app, opts) => {
  const tags = ['liquidity'];
  const caller = (req: { apiKey?: AuthKey }) => req.apiKey as AuthKey;
  const liquidity = () => available(opts.liquidity);

  app.post<{ Body: { amount: string } }>(
    '/liquidity/add',
    {
      config: { permission: 'TRANSFER' },
      schema: {
        tags,
        summary: "Move withdrawable collateral into the liquidity pool for shares, locked for PERP_LP_LOCKUP_MS from now (TRANSFER)",
        body: {
          type: 'object',
          required: ['amount'],
          additionalProperties: false,
          properties: { amount: { ...decimal, description: 'USD, at most 6 decimals, at most the withdrawable collateral' } },
        },
        headers: idempotencyHeaders,
        response: responses(liquidityMoveSchema),
      },
    },
    async (req) => perpOk(req.id, await liquidity().add(caller(req), req.body, idempotencyKeyOf(req.headers))),
  );

  app.post<{ Body: { shares: string } }>(
    '/liquidity/remove',
    {
      config: { permission: 'TRANSFER' },
      schema: {
        tags,
        summary: 'Burn pool shares for shares × pool equity ÷ total shares, once the lock-up has ended (TRANSFER)',
        body: {
          type: 'object',
          required: ['shares'],
          additionalProperties: false,
          properties: { shares: { ...decimal, description: 'pool shares, at most 6 decimals, at most those the account holds' } },
        },
        headers: idempotencyHeaders,
        response: responses(liquidityMoveSchema),
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
        response: responses(liquidityPositionSchema),
      },
    },
    async (req) => perpOk(req.id, liquidity().positions(caller(req))),
  );

  app.get<{ Querystring: ListQuerystring }>(
    '/liquidity/history',
    {
      schema: {
        tags,
        summary: "The account's additions to and removals from the pool, newest first (READ)",
        querystring: { type: 'object', additionalProperties: false, properties: { ...timeRangeProps, ...pageQueryProps } },
        response: responses(listOf(liquidityHistorySchema)),
      },
    },
    async (req) => {
      const q = req.query;
      const { offset, limit } = pageOf(q);
      return perpOk(req.id, await liquidity().history(caller(req), { offset, limit, startTime: q.startTime, endTime: q.endTime }));
    },
  );
};
