/**
 * API keys (contract.md §B): wallet-signed creation (`prepare` answers the EIP-712 typed data,
 * `POST api-keys` takes the message back with the signature; both public, the wallet's signature
 * authorises them), then listing, relabelling, re-permissioning and deleting the wallet's keys
 * with one of its keys. The secret is answered once, at creation, and nowhere else. Every shape is
 * the contract's (packages/contract).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  ApiKeyInfoSchema,
  ApiKeyParamsSchema,
  CreateApiKeyBodySchema,
  CreatedApiKeySchema,
  DeletedApiKeySchema,
  perpResponses,
  PrepareApiKeyBodySchema,
  PreparedApiKeySchema,
  Type,
  UpdateApiKeyBodySchema,
} from '@tokex/contract';
import { perpOk } from '../perp-envelope.ts';
import type { PerpKeyService } from '../perp-key-service.ts';

export const apiKeyRoutes: FastifyPluginAsyncTypebox<{ service: PerpKeyService }> = async (app, { service }) => {
  const tags = ['api keys'];

  app.post(
    '/api-keys/prepare',
    {
      config: { auth: false },
      schema: {
        tags,
        summary: 'The EIP-712 CreateApiKey typed data for the wallet to sign (no authentication, no state change)',
        security: [],
        body: PrepareApiKeyBodySchema,
        response: perpResponses(PreparedApiKeySchema),
      },
    },
    async (req) => perpOk(req.id, service.prepare(req.body)),
  );

  app.post(
    '/api-keys',
    {
      config: { auth: false },
      schema: {
        tags,
        summary: 'Create a key with the wallet\'s signature over the prepared message; the secret is answered only this once',
        security: [],
        body: CreateApiKeyBodySchema,
        response: perpResponses(CreatedApiKeySchema),
      },
    },
    async (req) => perpOk(req.id, await service.create(req.body)),
  );

  app.get(
    '/api-keys',
    {
      schema: { tags, summary: 'The active keys of the calling key\'s wallet, never a secret (READ)', response: perpResponses(Type.Array(ApiKeyInfoSchema)) },
    },
    async (req) => perpOk(req.id, await service.list(req.apiKey!)),
  );

  app.patch(
    '/api-keys/:apiKey',
    {
      config: { permission: 'TRADE' },
      schema: {
        tags,
        summary: 'Change a key of the same wallet: label, permissions (never beyond the calling key\'s own) (TRADE)',
        params: ApiKeyParamsSchema,
        body: UpdateApiKeyBodySchema,
        response: perpResponses(ApiKeyInfoSchema),
      },
    },
    async (req) => perpOk(req.id, await service.update(req.apiKey!, req.params.apiKey, req.body)),
  );

  app.delete(
    '/api-keys/:apiKey',
    {
      config: { permission: 'TRADE' },
      schema: {
        tags,
        summary: 'Delete a key of the same wallet (the calling key itself included); it stops working at once (TRADE)',
        params: ApiKeyParamsSchema,
        response: perpResponses(DeletedApiKeySchema),
      },
    },
    async (req) => {
      await service.remove(req.apiKey!, req.params.apiKey);
      return perpOk(req.id, { apiKey: req.params.apiKey, deleted: true });
    },
  );
};
