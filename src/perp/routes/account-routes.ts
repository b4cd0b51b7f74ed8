/**
 * Account (contract.md §B): balances, equity and margin levels, the collateral asset, open positions,
 * deposits as the MarginVault's logs give them, withdrawals (requested here with TRANSFER, paid by the
 * vault: withdrawal-service.ts) with their payment status, and every money movement. Answers
 * that depend on chain state (the collateral credited from the vault) carry `blockInfo`, the last
 * block the perp indexer has followed. Every shape is the contract's (packages/contract).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  AccountAssetSchema,
  AccountDepositSchema,
  AccountSummarySchema,
  AccountTransactionSchema,
  BuildWithdrawalBodySchema,
  BuiltWithdrawalSchema,
  ListOf,
  pageOf,
  PerpWithdrawalSchema,
  perpChainResponses,
  PositionSchema,
  PositionsQuerySchema,
  RequestedWithdrawalSchema,
  TimeRangeQuerySchema,
  TransactionsQuerySchema,
  Type,
  WithdrawalsQuerySchema,
  WithdrawBodySchema,
} from '@tokex/contract';
import type { AuthKey } from '../../auth/api-key-service.ts';
import type { AccountService } from '../account-service.ts';
import type { WithdrawalService } from '../withdrawal-service.ts';
import { perpOk } from '../perp-envelope.ts';
import type { PerpVenue } from '../perp-venue.ts';
import { available } from './trading-routes.ts';

export const accountRoutes: FastifyPluginAsyncTypebox<{ accounts?: AccountService; venue?: PerpVenue; withdrawals?: WithdrawalService }> = async (app, opts) => {
  const tags = ['account'];
  const caller = (req: { apiKey?: AuthKey }) => req.apiKey as AuthKey;
  const accounts = () => available(opts.accounts);
  const blockInfo = async () => (await opts.venue?.blockInfo()) ?? undefined;

  app.get(
    '/account',
    { schema: { tags, summary: 'Balance, equity, free collateral and margin levels (READ)', response: perpChainResponses(AccountSummarySchema) } },
    async (req) => perpOk(req.id, accounts().account(caller(req)), await blockInfo()),
  );

  app.get(
    '/account/assets',
    { schema: { tags, summary: 'The collateral asset of the account (READ)', response: perpChainResponses(Type.Array(AccountAssetSchema)) } },
    async (req) => perpOk(req.id, accounts().assets(caller(req)), await blockInfo()),
  );

  app.get(
    '/positions',
    {
      schema: {
        tags,
        summary: 'Open positions with entry, mark, PnL, margin and liquidation price (READ)',
        querystring: PositionsQuerySchema,
        response: perpChainResponses(ListOf(PositionSchema)),
      },
    },
    async (req) => perpOk(req.id, accounts().positions(caller(req), { ...pageOf(req.query), symbol: req.query.symbol }), await blockInfo()),
  );

  app.get(
    '/account/deposits',
    {
      schema: {
        tags,
        summary: 'Deposits into the margin vault, as indexed from the chain (READ)',
        querystring: TimeRangeQuerySchema,
        response: perpChainResponses(ListOf(AccountDepositSchema)),
      },
    },
    async (req) => {
      const q = req.query;
      return perpOk(req.id, await accounts().movements(caller(req), 'deposit', { ...pageOf(q), startTime: q.startTime, endTime: q.endTime }), await blockInfo());
    },
  );

  // Withdrawals (docs/perp-api.md "Withdrawals"): requested here, reserved by the engine, paid by the
  // perp engine's withdrawal task from the vault to the key's own wallet. One list: the withdrawals
  // requested through this endpoint with their payment status (it replaced the vault's raw logs).
  const withdrawals = () => available(opts.withdrawals);
  app.post(
    '/account/withdrawals/build',
    {
      config: { permission: 'TRANSFER' },
      schema: {
        tags,
        summary: 'The EIP-712 Withdrawal the wallet signs for a withdrawal (TRANSFER); nothing is reserved',
        body: BuildWithdrawalBodySchema,
        response: perpChainResponses(BuiltWithdrawalSchema),
      },
    },
    async (req) => perpOk(req.id, withdrawals().build(caller(req), req.body), await blockInfo()),
  );

  app.post(
    '/account/withdrawals',
    {
      config: { permission: 'TRANSFER' },
      schema: {
        tags,
        summary: "Withdraw collateral to the key's own wallet (TRANSFER) with the wallet's signature of the built Withdrawal: reserved at once, paid by the margin vault against that signature",
        body: WithdrawBodySchema,
        response: perpChainResponses(RequestedWithdrawalSchema),
      },
    },
    async (req) => perpOk(req.id, await withdrawals().request(caller(req), req.body), await blockInfo()),
  );

  app.get(
    '/account/withdrawals',
    {
      schema: {
        tags,
        summary: 'Withdrawals of the account with their payment status (READ)',
        querystring: WithdrawalsQuerySchema,
        response: perpChainResponses(ListOf(PerpWithdrawalSchema)),
      },
    },
    async (req) => {
      const q = req.query;
      return perpOk(req.id, await withdrawals().list(caller(req), { ...pageOf(q), status: q.status, startTime: q.startTime, endTime: q.endTime }), await blockInfo());
    },
  );

  app.get(
    '/account/transactions',
    {
      schema: {
        tags,
        summary: 'Money in and out of the account: deposits, withdrawals, fees, realised PnL, funding (READ)',
        querystring: TransactionsQuerySchema,
        response: perpChainResponses(ListOf(AccountTransactionSchema)),
      },
    },
    async (req) => {
      const q = req.query;
      return perpOk(req.id, await accounts().transactions(caller(req), { ...pageOf(q), symbol: q.symbol, type: q.type, startTime: q.startTime, endTime: q.endTime }), await blockInfo());
    },
  );
};
