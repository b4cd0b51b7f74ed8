/**
 * One-Click Trade (contract.md §B, docs/perp-api.md "One-Click Trade"): the wallet authorises a
 * session signer to sign its orders until an expiry. `prepare` answers the EIP-712 EnableSession
 * typed data, `enable` takes the message back with the wallet's signature, `GET one-click` shows
 * the session, `disable` revokes it. Prepare, enable and disable need TRADE; the GET needs READ.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { AuthKey } from '../../auth/api-key-service.ts';
import { SIGNATURE_PATTERN } from '../../http/schema-patterns.ts';
import type { OneClickService } from '../one-click-service.ts';
import { perpOk } from '../perp-envelope.ts';
import { address, millis, responses, typedDataSchema } from '../perp-schemas.ts';
import { available } from './trading-routes.ts';

const statusSchema = {
  type: 'object',
  required: ['enabled', 'sessionAddress', 'expiresAt', 'enabledAt'],
  additionalProperties: false,
  properties: {
    enabled: { type: 'boolean', description: 'true while the session signer may sign orders: enabled, not disabled, not expired' },
    sessionAddress: { type: ['string', 'null'], description: 'the last session signer enabled (EIP-55), also after it ended; null when none ever was' },
    expiresAt: { type: ['integer', 'null'], description: 'ms; when the last session ends (or ended)' },
    enabledAt: { type: ['integer', 'null'], description: 'ms; when the last session was enabled' },
  },
} as const;

const prepareAnswer = {
  type: 'object',
  required: ['typedData'],
  properties: {
    typedData: typedDataSchema(
      'complete EIP-712 typed data for eth_signTypedData_v4: domain TokexPerp / 1 / chain id / margin vault (the orders\' domain), primaryType EnableSession(address account,address session,uint64 expiresAt,uint64 nonce); expiresAt (ms) and nonce are decimal strings',
    ),
  },
} as const;

export const oneClickRoutes: FastifyPluginAsync<{ service?: OneClickService }> = async (app, opts) => {
  const tags = ['one-click trade'];
  const caller = (req: { apiKey?: AuthKey }) => req.apiKey as AuthKey;
  const service = () => available(opts.service);

  app.get(
    '/one-click',
    {
      schema: {
        tags,
        summary: "The key's wallet's session signer: whether it is enabled, its address, expiry and enabling time (READ)",
        response: responses(statusSchema),
      },
    },
    async (req) => perpOk(req.id, await service().status(caller(req))),
  );

  app.post<{ Body: { sessionAddress: string; expiresAt: number } }>(
    '/one-click/prepare',
    {
      config: { permission: 'TRADE' },
      schema: {
        tags,
        summary: 'The EIP-712 EnableSession typed data for the wallet to sign (TRADE); nothing is stored',
        body: {
          type: 'object',
          required: ['sessionAddress', 'expiresAt'],
          additionalProperties: false,
          properties: {
            sessionAddress: { ...address, description: 'the session signer: a key the trading program holds, not the wallet' },
            expiresAt: { ...millis, description: 'ms, in the future and at most 30 days ahead' },
          },
        },
        response: responses(prepareAnswer),
      },
    },
    async (req) => perpOk(req.id, service().prepare(caller(req), req.body)),
  );

  app.post<{ Body: { message: unknown; signature: string } }>(
    '/one-click/enable',
    {
      config: { permission: 'TRADE' },
      schema: {
        tags,
        summary: "Enable the session signer with the wallet's signature over the prepared message (TRADE); it replaces any other session of the account",
        body: {
          type: 'object',
          required: ['message', 'signature'],
          additionalProperties: false,
          properties: {
            message: { type: 'object', additionalProperties: true, description: 'typedData.message exactly as one-click/prepare answered it' },
            signature: { type: 'string', pattern: SIGNATURE_PATTERN, description: "the wallet's EIP-712 signature (a session key's is refused)" },
          },
        },
        response: responses(statusSchema),
      },
    },
    async (req) => perpOk(req.id, await service().enable(caller(req), req.body)),
  );

  app.post(
    '/one-click/disable',
    {
      config: { permission: 'TRADE' },
      // No body is the usual call; it is validated as {} (the scope's hooks have decoded it by now).
      preValidation: async (req) => {
        if (req.body === undefined || req.body === null) req.body = {};
      },
      schema: {
        tags,
        summary: 'Revoke the session signer at once (TRADE); idempotent. The address cannot be enabled again before its old expiry',
        body: { type: 'object', additionalProperties: false, maxProperties: 0, description: 'no body, or {}' },
        response: responses(statusSchema),
      },
    },
    async (req) => perpOk(req.id, await service().disable(caller(req))),
  );
};
