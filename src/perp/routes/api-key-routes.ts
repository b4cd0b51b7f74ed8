/**
 * API keys (contract.md §B): wallet-signed creation (`prepare` answers the EIP-712 typed data,
 * `POST api-keys` takes the message back with the signature; both public, the wallet's signature
 * authorises them), then listing, relabelling, re-permissioning and deleting the wallet's keys
 * with one of its keys. The secret is answered once, at creation, and nowhere else.
 */
import type { FastifyPluginAsync } from 'fastify';
import { SIGNATURE_PATTERN, VISIBLE_ASCII_PATTERN } from '../../http/schema-patterns.ts';
import { MAX_LABEL_LENGTH } from '../../auth/api-key-model.ts';
import { perpOk } from '../perp-envelope.ts';
import type { PerpKeyService } from '../perp-key-service.ts';
import { address, millis, permissionList, responses, typedDataSchema } from '../perp-schemas.ts';

const labelProp = { type: 'string', maxLength: MAX_LABEL_LENGTH, description: 'free text for the owner' } as const;

const keySchema = {
  type: 'object',
  required: ['apiKey', 'label', 'permissions', 'createdAt', 'updatedAt'],
  properties: {
    apiKey: { type: 'string' },
    label: { type: 'string' },
    permissions: { type: 'array', items: { type: 'string' } },
    createdAt: millis,
    updatedAt: millis,
  },
} as const;

const apiKeyParam = {
  type: 'object',
  required: ['apiKey'],
  properties: { apiKey: { type: 'string', minLength: 1, maxLength: 128, pattern: VISIBLE_ASCII_PATTERN } },
} as const;

const createKeyTypedData = typedDataSchema(
  'complete EIP-712 typed data for eth_signTypedData_v4: domain TokexPerp / 1 / chain id / margin vault, primaryType CreateApiKey(address wallet,string label,string permissions,uint64 nonce,uint64 expiry); nonce and expiry (ms) are decimal strings',
);

export const apiKeyRoutes: FastifyPluginAsync<{ service: PerpKeyService }> = async (app, { service }) => {
  const tags = ['api keys'];

  app.post<{ Body: { address: string; label?: string; permissions: string[] } }>(
    '/api-keys/prepare',
    {
      config: { auth: false },
      schema: {
        tags,
        summary: 'The EIP-712 CreateApiKey typed data for the wallet to sign (no authentication, no state change)',
        security: [],
        body: {
          type: 'object',
          required: ['address', 'permissions'],
          additionalProperties: false,
          properties: { address: { ...address, description: 'the wallet that signs and owns the key' }, label: labelProp, permissions: permissionList },
        },
        response: responses({ type: 'object', required: ['typedData'], properties: { typedData: createKeyTypedData } }),
      },
    },
    async (req) => perpOk(req.id, service.prepare(req.body)),
  );

  app.post<{ Body: { message: Record<string, unknown>; signature: string } }>(
    '/api-keys',
    {
      config: { auth: false },
      schema: {
        tags,
        summary: 'Create a key with the wallet\'s signature over the prepared message; the secret is answered only this once',
        security: [],
        body: {
          type: 'object',
          required: ['message', 'signature'],
          additionalProperties: false,
          properties: {
            message: { type: 'object', description: 'typedData.message as prepare answered it' },
            signature: { type: 'string', pattern: SIGNATURE_PATTERN },
          },
        },
        response: responses({
          type: 'object',
          required: ['apiKey', 'apiSecret', 'label', 'permissions'],
          properties: {
            apiKey: { type: 'string' },
            apiSecret: { type: 'string', description: 'shown only in this answer; store it safely' },
            label: { type: 'string' },
            permissions: { type: 'array', items: { type: 'string' } },
          },
        }),
      },
    },
    async (req) => perpOk(req.id, await service.create(req.body)),
  );

  app.get(
    '/api-keys',
    {
      schema: { tags, summary: 'The active keys of the calling key\'s wallet, never a secret (READ)', response: responses({ type: 'array', items: keySchema }) },
    },
    async (req) => perpOk(req.id, await service.list(req.apiKey!)),
  );

  app.patch<{ Params: { apiKey: string }; Body: { label?: string; permissions?: string[] } }>(
    '/api-keys/:apiKey',
    {
      config: { permission: 'TRADE' },
      schema: {
        tags,
        summary: 'Change a key of the same wallet: label, permissions (never beyond the calling key\'s own) (TRADE)',
        params: apiKeyParam,
        body: { type: 'object', additionalProperties: false, minProperties: 1, properties: { label: labelProp, permissions: permissionList } },
        response: responses(keySchema),
      },
    },
    async (req) => perpOk(req.id, await service.update(req.apiKey!, req.params.apiKey, req.body)),
  );

  app.delete<{ Params: { apiKey: string } }>(
    '/api-keys/:apiKey',
    {
      config: { permission: 'TRADE' },
      schema: {
        tags,
        summary: 'Delete a key of the same wallet (the calling key itself included); it stops working at once (TRADE)',
        params: apiKeyParam,
        response: responses({ type: 'object', required: ['apiKey', 'deleted'], properties: { apiKey: { type: 'string' }, deleted: { type: 'boolean' } } }),
      },
    },
    async (req) => {
      await service.remove(req.apiKey!, req.params.apiKey);
      return perpOk(req.id, { apiKey: req.params.apiKey, deleted: true });
    },
  );
};
