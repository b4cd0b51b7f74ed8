/**
 * The approve flow (contract.md §B), and the deposit through the same shape: `…/prepare` answers
 * the unsigned EIP-1559 transaction for the wallet to sign, `…/submit` takes the signed bytes,
 * checks them, broadcasts and follows them, `GET …/{txHash}` answers where they stand.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { AuthKey } from '../../auth/api-key-service.ts';
import { TX_HASH_PATTERN } from '../../http/schema-patterns.ts';
import { perpOk } from '../perp-envelope.ts';
import { address, decimal, decimalOut, millis, responses } from '../perp-schemas.ts';
import type { VaultTransactionKind } from '../store/vault-transaction-store.ts';
import type { VaultTransactionService } from '../vault-transaction-service.ts';
import { available } from './trading-routes.ts';

const transactionSchema = {
  type: 'object',
  required: ['txHash', 'kind', 'account', 'amount', 'status', 'blockNumber', 'submittedAt'],
  properties: {
    txHash: { type: 'string' },
    kind: { type: 'string', enum: ['approve', 'deposit'] },
    account: { type: 'string' },
    amount: { ...decimalOut, description: 'collateral (USDC)' },
    status: { type: 'string', enum: ['pending', 'mined', 'reverted'], description: 'pending until its receipt, then mined or reverted' },
    blockNumber: { type: ['string', 'null'] },
    submittedAt: millis,
  },
} as const;

const preparedSchema = {
  type: 'object',
  required: ['transaction', 'kind', 'amount', 'marginVault'],
  properties: {
    transaction: {
      type: 'object',
      required: ['type', 'chainId', 'from', 'to', 'data', 'value', 'nonce', 'gas', 'maxFeePerGas', 'maxPriorityFeePerGas'],
      description: 'the unsigned EIP-1559 transaction for the wallet to sign (wei amounts as decimal strings)',
      properties: {
        type: { type: 'string', enum: ['eip1559'] },
        chainId: { type: 'integer' },
        from: { type: 'string' },
        to: { type: 'string' },
        data: { type: 'string' },
        value: { type: 'string' },
        nonce: { type: 'integer' },
        gas: { type: 'string' },
        maxFeePerGas: { type: 'string' },
        maxPriorityFeePerGas: { type: 'string' },
      },
    },
    kind: { type: 'string', enum: ['approve', 'deposit'] },
    amount: decimalOut,
    marginVault: { type: 'string' },
  },
} as const;

export const approveFlowRoutes: FastifyPluginAsync<{ service?: VaultTransactionService }> = async (app, opts) => {
  const tags = ['approve flow'];
  const caller = (req: { apiKey?: AuthKey }) => req.apiKey as AuthKey;
  const service = () => available(opts.service);
  const noun: Record<VaultTransactionKind, string> = { approve: "the collateral token's approve of the margin vault", deposit: "the margin vault's deposit" };

  for (const kind of ['approve', 'deposit'] as const) {
    app.post<{ Body: { address: string; amount: string } }>(
      `/${kind}/prepare`,
      {
        schema: {
          tags,
          summary: `The unsigned EIP-1559 transaction of ${noun[kind]}, for the wallet to sign (TRADE)`,
          body: {
            type: 'object',
            required: ['address', 'amount'],
            additionalProperties: false,
            properties: { address: { ...address, description: 'the wallet of the API key' }, amount: { ...decimal, description: 'collateral (USDC, 6 decimals)' } },
          },
          response: responses(preparedSchema),
        },
      },
      async (req) => perpOk(req.id, await service().prepare(kind, req.body, caller(req))),
    );

    app.post<{ Body: { signedTransaction: string } }>(
      `/${kind}/submit`,
      {
        schema: {
          tags,
          summary: `Broadcast the wallet-signed ${kind} and follow it: refused, and not broadcast, unless it is exactly ${noun[kind]} (TRADE)`,
          body: {
            type: 'object',
            required: ['signedTransaction'],
            additionalProperties: false,
            properties: { signedTransaction: { type: 'string', minLength: 4, maxLength: 4_096, description: 'the signed raw transaction, 0x hex' } },
          },
          response: responses(transactionSchema),
        },
      },
      async (req) => perpOk(req.id, await service().submit(kind, req.body, caller(req))),
    );

    app.get<{ Params: { txHash: string } }>(
      `/${kind}/:txHash`,
      {
        schema: {
          tags,
          summary: `A ${kind} this API broadcast for the wallet, and where it stands (READ)`,
          params: { type: 'object', required: ['txHash'], properties: { txHash: { type: 'string', pattern: TX_HASH_PATTERN } } },
          response: responses(transactionSchema),
        },
      },
      async (req) => perpOk(req.id, await service().get(kind, req.params.txHash, caller(req))),
    );
  }
};
