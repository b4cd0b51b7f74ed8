/**
 * The approve flow (contract.md §B), and the deposit through the same shape: `…/prepare` answers
 * the unsigned EIP-1559 transaction for the wallet to sign, `…/submit` takes the signed bytes,
 * checks them, broadcasts and follows them, `GET …/{txHash}` answers where they stand. Every shape
 * is the contract's (packages/contract).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  perpResponses,
  PreparedVaultTransactionSchema,
  TxHashParamsSchema,
  VaultPrepareBodySchema,
  VaultSubmitBodySchema,
  VaultTransactionViewSchema,
  type VaultTransactionKind,
} from '@tokex/contract';
import type { AuthKey } from '../../auth/api-key-service.ts';
import { perpOk } from '../perp-envelope.ts';
import type { VaultTransactionService } from '../vault-transaction-service.ts';
import { available } from './trading-routes.ts';

export const approveFlowRoutes: FastifyPluginAsyncTypebox<{ service?: VaultTransactionService }> = async (app, opts) => {
  const tags = ['approve flow'];
  const caller = (req: { apiKey?: AuthKey }) => req.apiKey as AuthKey;
  const service = () => available(opts.service);
  const noun: Record<VaultTransactionKind, string> = { approve: "the collateral token's approve of the margin vault", deposit: "the margin vault's deposit" };

  for (const kind of ['approve', 'deposit'] as const) {
    app.post(
      `/${kind}/prepare`,
      {
        schema: {
          tags,
          summary: `The unsigned EIP-1559 transaction of ${noun[kind]}, for the wallet to sign (TRADE)`,
          body: VaultPrepareBodySchema,
          response: perpResponses(PreparedVaultTransactionSchema),
        },
      },
      async (req) => perpOk(req.id, await service().prepare(kind, req.body, caller(req))),
    );

    app.post(
      `/${kind}/submit`,
      {
        schema: {
          tags,
          summary: `Broadcast the wallet-signed ${kind} and follow it: refused, and not broadcast, unless it is exactly ${noun[kind]} (TRADE)`,
          body: VaultSubmitBodySchema,
          response: perpResponses(VaultTransactionViewSchema),
        },
      },
      async (req) => perpOk(req.id, await service().submit(kind, req.body, caller(req))),
    );

    app.get(
      `/${kind}/:txHash`,
      {
        schema: {
          tags,
          summary: `A ${kind} this API broadcast for the wallet, and where it stands (READ)`,
          params: TxHashParamsSchema,
          response: perpResponses(VaultTransactionViewSchema),
        },
      },
      async (req) => perpOk(req.id, await service().get(kind, req.params.txHash, caller(req))),
    );
  }
};
