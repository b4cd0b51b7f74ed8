/**
 * The venue's risk reserves, public like market data (docs/perp-api.md "Insurance fund"): the
 * insurance fund's balance, what it received in liquidation fees and paid in bad debt, the accounts
 * with bad debt not yet resolved, and its movements. No authentication, like `GET time`; requests
 * count against the client's address.
 */
import type { FastifyPluginAsync } from 'fastify';
import { listOf, pageOf, pageQueryProps } from '../../http/list-paging.ts';
import type { LiquidityService } from '../liquidity-service.ts';
import { perpOk } from '../perp-envelope.ts';
import { decimalOut, insuranceMoveSchema, responses, timeRangeProps, type ListQuerystring } from '../perp-schemas.ts';
import { available } from './trading-routes.ts';

export const riskRoutes: FastifyPluginAsync<{ liquidity?: LiquidityService }> = async (app, opts) => {
  const tags = ['market data'];
  const liquidity = () => available(opts.liquidity);

  app.get<{ Querystring: ListQuerystring }>(
    '/insurance-fund',
    {
      config: { auth: false },
      schema: {
        tags,
        summary: 'The insurance fund: balance, liquidation fees received, bad debt paid, open bad debt, and its movements newest first (no authentication)',
        security: [],
        querystring: { type: 'object', additionalProperties: false, properties: { ...timeRangeProps, ...pageQueryProps } },
        response: responses({
          type: 'object',
          required: ['balance', 'feesReceived', 'badDebtPaid', 'openBadDebt', 'openBadDebtAccounts', 'movements'],
          properties: {
            balance: { ...decimalOut, description: "the fund's collateral (USD)" },
            feesReceived: { ...decimalOut, description: 'liquidation fees received, all time (USD)' },
            badDebtPaid: { ...decimalOut, description: 'bad debt paid, all time (USD)' },
            openBadDebt: { type: 'integer', description: 'accounts with bad debt not yet resolved (withdrawals pause while any exist)' },
            openBadDebtAccounts: { type: 'array', items: { type: 'string' }, description: 'those accounts, sorted' },
            movements: { ...listOf(insuranceMoveSchema), description: "the fund's movements in the page asked for, newest first" },
          },
        }),
      },
    },
    async (req) => {
      const q = req.query;
      const { offset, limit } = pageOf(q);
      return perpOk(req.id, await liquidity().insuranceFund({ offset, limit, startTime: q.startTime, endTime: q.endTime }));
    },
  );
};
