/**
 * The venue's risk reserves, public like market data (docs/perp-api.md "Insurance fund"): the
 * insurance fund's balance, what it received in liquidation fees and paid in bad debt, the accounts
 * with bad debt not yet resolved, and its movements. No authentication, like `GET time`; requests
 * count against the client's address. The shapes are the contract's (packages/contract).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { InsuranceFundSchema, pageOf, perpResponses, TimeRangeQuerySchema } from '@tokex/contract';
import type { LiquidityService } from '../liquidity-service.ts';
import { perpOk } from '../perp-envelope.ts';
import { available } from './trading-routes.ts';

export const riskRoutes: FastifyPluginAsyncTypebox<{ liquidity?: LiquidityService }> = async (app, opts) => {
  const tags = ['market data'];
  const liquidity = () => available(opts.liquidity);

  app.get(
    '/insurance-fund',
    {
      config: { auth: false },
      schema: {
        tags,
        summary: 'The insurance fund: balance, liquidation fees received, bad debt paid, open bad debt, and its movements newest first (no authentication)',
        security: [],
        querystring: TimeRangeQuerySchema,
        response: perpResponses(InsuranceFundSchema),
      },
    },
    async (req) => {
      const q = req.query;
      const { offset, limit } = pageOf(q);
      return perpOk(req.id, await liquidity().insuranceFund({ offset, limit, startTime: q.startTime, endTime: q.endTime }));
    },
  );
};
