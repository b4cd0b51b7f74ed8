/**
 * Proof of reserves (docs/proof-of-reserves.md): `GET account/proof` gives the caller's leaf of the
 * latest liabilities tree the ReserveRegistry holds and its Merkle path, to check against the root
 * on chain and the vault's balance (examples/verify-reserves.ts). Amounts are integer strings of
 * collateral-token units, as the leaf hashes them. The shape is the contract's AccountProofSchema.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AccountProofSchema, perpResponses } from '@tokex/contract';
import type { AuthKey } from '../../auth/api-key-service.ts';
import type { DbExecutor } from '../../storage/database.ts';
import { walletOf } from '../venue-calls.ts';
import { perpOk } from '../perp-envelope.ts';
import { accountProof } from '../reserves/proof-service.ts';

export const reservesRoutes: FastifyPluginAsyncTypebox<{ db: DbExecutor }> = async (app, opts) => {
  const tags = ['account'];
  app.get(
    '/account/proof',
    {
      schema: {
        tags,
        summary: "Proof of reserves: the caller's leaf of the latest posted liabilities tree and its Merkle path (READ); 40000 when the account is not in it",
        response: perpResponses(AccountProofSchema),
      },
    },
    async (req) => perpOk(req.id, await accountProof(opts.db, walletOf((req as { apiKey?: AuthKey }).apiKey as AuthKey))),
  );
};
