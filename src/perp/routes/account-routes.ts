/**
 * Account (contract.md §B): balances, equity and margin levels, the collateral asset, open positions,
 * deposits and withdrawals as the MarginVault's logs give them, and every money movement. Answers
 * that depend on chain state (the collateral credited from the vault) carry `blockInfo`, the last
 * block the perp indexer has followed.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { AuthKey } from '../../auth/api-key-service.ts';
import { listOf, pageOf, pageQueryProps } from '../../http/list-paging.ts';
import type { AccountService } from '../account-service.ts';
import { perpOk } from '../perp-envelope.ts';
import type { PerpVenue } from '../perp-venue.ts';
import { decimalOut, millis, okEnvelope, errorEnvelope, positionSchema, symbolProp, timeRangeProps, type ListQuerystring } from '../perp-schemas.ts';
import { PERP_TRANSACTION_TYPES, type PerpTransactionType } from '../store/perp-history-store.ts';
import { available } from './trading-routes.ts';

const blockInfoSchema = {
  type: 'object',
  required: ['number', 'hash', 'timestamp'],
  description: 'the last block the service has indexed',
  properties: { number: { type: 'string' }, hash: { type: 'string' }, timestamp: millis },
} as const;

/** Responses of a chain-dependent answer: the envelope with `blockInfo`. */
function chainResponses(data: Record<string, unknown>) {
  const ok = okEnvelope(data);
  return { 200: { ...ok, properties: { ...ok.properties, blockInfo: blockInfoSchema } }, '4xx': errorEnvelope, '5xx': errorEnvelope };
}

const accountSchema = {
  type: 'object',
  required: [
    'account', 'asset', 'balance', 'equity', 'unrealisedPnl', 'freeCollateral', 'withdrawable', 'orderMargin', 'positionMargin',
    'maintenanceMargin', 'marginRatio', 'liquidatable', 'deposited', 'withdrawn', 'realisedPnl', 'fees', 'funding',
  ],
  properties: {
    account: { type: 'string' },
    asset: { type: 'string', enum: ['USDC'] },
    balance: { ...decimalOut, description: 'collateral in the wallet of the account (USD), isolated margins excluded' },
    equity: { ...decimalOut, description: 'balance + isolated margins + unrealised PnL' },
    unrealisedPnl: decimalOut,
    freeCollateral: { ...decimalOut, description: 'what new orders and margin moves may use' },
    withdrawable: { ...decimalOut, description: 'free collateral without unrealised profit' },
    orderMargin: { ...decimalOut, description: 'reserved by open orders' },
    positionMargin: { ...decimalOut, description: 'initial margin of cross positions + isolated margins' },
    maintenanceMargin: decimalOut,
    marginRatio: { type: ['string', 'null'], description: 'maintenance margin / equity; 1 is the liquidation line; null when equity ≤ 0' },
    liquidatable: { type: 'boolean' },
    deposited: decimalOut,
    withdrawn: decimalOut,
    realisedPnl: decimalOut,
    fees: { ...decimalOut, description: 'fees paid' },
    funding: { ...decimalOut, description: 'net funding received (negative: paid)' },
  },
} as const;

const movementSchema = {
  type: 'object',
  required: ['id', 'asset', 'amount', 'txHash', 'blockNumber', 'status', 'ts'],
  properties: {
    id: { type: 'string', description: '`txHash-logIndex` of the vault log' },
    asset: { type: 'string' },
    amount: decimalOut,
    txHash: { type: 'string' },
    blockNumber: { type: 'string' },
    withdrawalId: { type: ['string', 'null'] },
    status: { type: 'string', enum: ['PENDING', 'CREDITED', 'PAID'], description: 'a deposit is CREDITED once the engine has applied it, a withdrawal PAID once its vault log is confirmed; PENDING before' },
    ts: millis,
  },
} as const;

const transactionSchema = {
  type: 'object',
  required: ['id', 'type', 'symbol', 'amount', 'asset', 'ref', 'ts'],
  properties: {
    id: { type: 'string' },
    type: { type: 'string', enum: [...PERP_TRANSACTION_TYPES] },
    symbol: { type: ['string', 'null'] },
    amount: { ...decimalOut, description: 'signed USD: positive credits the account' },
    asset: { type: 'string' },
    ref: { type: ['string', 'null'], description: 'the order id (fees, PnL), the vault transaction (deposits) or the funding time' },
    ts: millis,
  },
} as const;

export const accountRoutes: FastifyPluginAsync<{ accounts?: AccountService; venue?: PerpVenue }> = async (app, opts) => {
  const tags = ['account'];
  const caller = (req: { apiKey?: AuthKey }) => req.apiKey as AuthKey;
  const accounts = () => available(opts.accounts);
  const blockInfo = async () => (await opts.venue?.blockInfo()) ?? undefined;

  app.get('/account', { schema: { tags, summary: 'Balance, equity, free collateral and margin levels (READ)', response: chainResponses(accountSchema) } }, async (req) =>
    perpOk(req.id, accounts().account(caller(req)), await blockInfo()),
  );

  app.get(
    '/account/assets',
    {
      schema: {
        tags,
        summary: 'The collateral asset of the account (READ)',
        response: chainResponses({
          type: 'array',
          items: {
            type: 'object',
            required: ['asset', 'balance', 'equity', 'available', 'withdrawable', 'orderMargin', 'positionMargin'],
            properties: {
              asset: { type: 'string' },
              balance: decimalOut,
              equity: decimalOut,
              available: decimalOut,
              withdrawable: decimalOut,
              orderMargin: decimalOut,
              positionMargin: decimalOut,
            },
          },
        }),
      },
    },
    async (req) => perpOk(req.id, accounts().assets(caller(req)), await blockInfo()),
  );

  app.get<{ Querystring: ListQuerystring }>(
    '/positions',
    {
      schema: {
        tags,
        summary: 'Open positions with entry, mark, PnL, margin and liquidation price (READ)',
        querystring: { type: 'object', additionalProperties: false, properties: { symbol: symbolProp, ...pageQueryProps } },
        response: chainResponses(listOf(positionSchema)),
      },
    },
    async (req) => perpOk(req.id, accounts().positions(caller(req), { ...pageOf(req.query), symbol: req.query.symbol }), await blockInfo()),
  );

  for (const [path, kind, summary] of [
    ['/account/deposits', 'deposit', 'Deposits into the margin vault, as indexed from the chain (READ)'],
    ['/account/withdrawals', 'withdrawal', 'Withdrawals paid by the margin vault, as indexed from the chain (READ)'],
  ] as const) {
    app.get<{ Querystring: ListQuerystring }>(
      path,
      {
        schema: {
          tags,
          summary,
          querystring: { type: 'object', additionalProperties: false, properties: { ...timeRangeProps, ...pageQueryProps } },
          response: chainResponses(listOf(movementSchema)),
        },
      },
      async (req) => perpOk(req.id, await accounts().movements(caller(req), kind, { ...pageOf(req.query), startTime: req.query.startTime, endTime: req.query.endTime }), await blockInfo()),
    );
  }

  app.get<{ Querystring: ListQuerystring & { type?: PerpTransactionType } }>(
    '/account/transactions',
    {
      schema: {
        tags,
        summary: 'Money in and out of the account: deposits, withdrawals, fees, realised PnL, funding (READ)',
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: { type: { type: 'string', enum: [...PERP_TRANSACTION_TYPES] }, symbol: symbolProp, ...timeRangeProps, ...pageQueryProps },
        },
        response: chainResponses(listOf(transactionSchema)),
      },
    },
    async (req) => {
      const q = req.query;
      return perpOk(req.id, await accounts().transactions(caller(req), { ...pageOf(q), symbol: q.symbol, type: q.type, startTime: q.startTime, endTime: q.endTime }), await blockInfo());
    },
  );
};
