/**
 * Account (contract.md §B): balances, equity and margin levels, the collateral asset, open positions,
 * deposits as the MarginVault's logs give them, withdrawals (requested here with TRANSFER, paid by the
 * vault: withdrawal-service.ts) with their payment status, and every money movement. Answers
 * that depend on chain state (the collateral credited from the vault) carry `blockInfo`, the last
 * block the perp indexer has followed.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { AuthKey } from '../../auth/api-key-service.ts';
import { listOf, pageOf, pageQueryProps } from '../../http/list-paging.ts';
import type { AccountService } from '../account-service.ts';
import type { WithdrawalService } from '../withdrawal-service.ts';
import { WITHDRAWAL_STATUSES, type WithdrawalStatus } from '../store/withdrawal-store.ts';
import { perpOk } from '../perp-envelope.ts';
import type { PerpVenue } from '../perp-venue.ts';
import { decimal, decimalOut, millis, okEnvelope, errorEnvelope, positionSchema, symbolProp, timeRangeProps, type ListQuerystring } from '../perp-schemas.ts';
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
    'account', 'asset', 'balance', 'equity', 'unrealisedPnl', 'freeCollateral', 'withdrawable', 'pendingWithdrawals', 'orderMargin', 'positionMargin',
    'maintenanceMargin', 'marginRatio', 'liquidatable', 'deposited', 'withdrawn', 'realisedPnl', 'fees', 'funding',
  ],
  properties: {
    account: { type: 'string' },
    asset: { type: 'string', enum: ['USDC'] },
    balance: { ...decimalOut, description: 'collateral in the wallet of the account (USD), isolated margins excluded' },
    equity: { ...decimalOut, description: 'balance + isolated margins + unrealised PnL' },
    unrealisedPnl: decimalOut,
    freeCollateral: { ...decimalOut, description: 'what new orders and margin moves may use' },
    withdrawable: { ...decimalOut, description: 'what a withdrawal may take now: min(balance, balance + cross uPnL) − cross initial margin − order margin, with isolated losses; never unrealised profit' },
    pendingWithdrawals: { ...decimalOut, description: 'reserved for withdrawals not paid yet (already out of balance)' },
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
    status: { type: 'string', enum: ['PENDING', 'CREDITED', 'REFUSED', 'PAID'], description: 'a deposit is CREDITED once the engine has applied it, REFUSED (see `reason`) when the engine never will; a withdrawal PAID once its vault log is confirmed; PENDING before' },
    reason: { type: ['string', 'null'], description: 'why the engine refused a deposit (REFUSED only)' },
    ts: millis,
  },
} as const;

const withdrawalSchema = {
  type: 'object',
  required: ['withdrawalId', 'clientWithdrawalId', 'address', 'asset', 'amount', 'status', 'txHash', 'blockNumber', 'reason', 'createdAt', 'updatedAt'],
  properties: {
    withdrawalId: { type: 'string', description: "the vault's bytes32 id: keccak256(abi.encode(\"tokex.perp.withdrawal\", account, clientWithdrawalId))" },
    clientWithdrawalId: { type: ['string', 'null'] },
    address: { type: 'string', description: 'the wallet paid: the account itself' },
    asset: { type: 'string', enum: ['USDC'] },
    amount: decimalOut,
    status: {
      type: 'string',
      enum: [...WITHDRAWAL_STATUSES],
      description: 'PENDING reserved; SENT the payment transaction is broadcast (txHash); COMPLETED mined and settled; FAILED not payable, the reserve returned to the balance (reason)',
    },
    txHash: { type: ['string', 'null'], description: 'the payment transaction (the mined one once COMPLETED)' },
    blockNumber: { type: ['string', 'null'] },
    reason: { type: ['string', 'null'], description: 'why it FAILED, or what delayed it' },
    createdAt: millis,
    updatedAt: millis,
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

export const accountRoutes: FastifyPluginAsync<{ accounts?: AccountService; venue?: PerpVenue; withdrawals?: WithdrawalService }> = async (app, opts) => {
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
            required: ['asset', 'balance', 'equity', 'available', 'withdrawable', 'pendingWithdrawals', 'orderMargin', 'positionMargin'],
            properties: {
              asset: { type: 'string' },
              balance: decimalOut,
              equity: decimalOut,
              available: decimalOut,
              withdrawable: decimalOut,
              pendingWithdrawals: decimalOut,
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

  // Withdrawals (docs/perp-api.md "Withdrawals"): requested here, reserved by the engine, paid by the
  // perp engine's withdrawal task from the vault to the key's own wallet. One list: the withdrawals
  // requested through this endpoint with their payment status (it replaced the vault's raw logs).
  const withdrawals = () => available(opts.withdrawals);
  app.post<{ Body: { amount: string; clientWithdrawalId: string } }>(
    '/account/withdrawals',
    {
      config: { permission: 'TRANSFER' },
      schema: {
        tags,
        summary: "Withdraw collateral to the key's own wallet (TRANSFER): reserved at once, paid by the margin vault",
        body: {
          type: 'object',
          required: ['amount', 'clientWithdrawalId'],
          additionalProperties: false,
          properties: {
            amount: { ...decimal, description: 'USD (USDC), at most 6 decimals, at most `withdrawable`' },
            clientWithdrawalId: {
              type: 'string', minLength: 1, maxLength: 64, pattern: '^[!-~]+$',
              description: 'your id of the withdrawal (1 to 64 visible ASCII characters): the same id answers the same withdrawal; another amount under it is 51021',
            },
          },
        },
        response: chainResponses({ ...withdrawalSchema, required: [...withdrawalSchema.required, 'duplicate'], properties: { ...withdrawalSchema.properties, duplicate: { type: 'boolean', description: 'true when the answer is a withdrawal requested before under this clientWithdrawalId' } } }),
      },
    },
    async (req) => perpOk(req.id, await withdrawals().request(caller(req), req.body), await blockInfo()),
  );

  app.get<{ Querystring: ListQuerystring & { status?: WithdrawalStatus } }>(
    '/account/withdrawals',
    {
      schema: {
        tags,
        summary: 'Withdrawals of the account with their payment status (READ)',
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: { status: { type: 'string', enum: [...WITHDRAWAL_STATUSES] }, ...timeRangeProps, ...pageQueryProps },
        },
        response: chainResponses(listOf(withdrawalSchema)),
      },
    },
    async (req) => {
      const q = req.query;
      return perpOk(req.id, await withdrawals().list(caller(req), { ...pageOf(q), status: q.status, startTime: q.startTime, endTime: q.endTime }), await blockInfo());
    },
  );

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
