/**
 * One-Click Trade (contract.md §B, docs/perp-api.md "One-Click Trade"): the wallet authorises a
 * session signer to sign its orders until an expiry. `prepare` answers the EIP-712 EnableSession
 * typed data, `enable` takes the message back with the wallet's signature, `GET one-click` shows
 * the session, `disable` revokes it. Prepare, enable and disable need TRADE; the GET needs READ.
 * Every shape is the contract's (packages/contract).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  DisableOneClickBodySchema,
  EnableOneClickBodySchema,
  OneClickStatusSchema,
  perpResponses,
  PrepareOneClickBodySchema,
  PreparedOneClickSchema,
} from '@tokex/contract';
import type { AuthKey } from '../../auth/api-key-service.ts';
import type { OneClickService } from '../one-click-service.ts';
import { perpOk } from '../perp-envelope.ts';
import { available } from './trading-routes.ts';

export const oneClickRoutes: FastifyPluginAsyncTypebox<{ service?: OneClickService }> = async (app, opts) => {
  const tags = ['one-click trade'];
  const caller = (req: { apiKey?: AuthKey }) => req.apiKey as AuthKey;
  const service = () => available(opts.service);

  app.get(
    '/one-click',
    {
      schema: {
        tags,
        summary: "The key's wallet's session signer: whether it is enabled, its address, expiry and enabling time (READ)",
        response: perpResponses(OneClickStatusSchema),
      },
    },
    async (req) => perpOk(req.id, await service().status(caller(req))),
  );

  app.post(
    '/one-click/prepare',
    {
      config: { permission: 'TRADE' },
      schema: {
        tags,
        summary: 'The EIP-712 EnableSession typed data for the wallet to sign (TRADE); nothing is stored',
        body: PrepareOneClickBodySchema,
        response: perpResponses(PreparedOneClickSchema),
      },
    },
    async (req) => perpOk(req.id, service().prepare(caller(req), req.body)),
  );

  app.post(
    '/one-click/enable',
    {
      config: { permission: 'TRADE' },
      schema: {
        tags,
        summary: "Enable the session signer with the wallet's signature over the prepared message (TRADE); it replaces any other session of the account",
        body: EnableOneClickBodySchema,
        response: perpResponses(OneClickStatusSchema),
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
        body: DisableOneClickBodySchema,
        response: perpResponses(OneClickStatusSchema),
      },
    },
    async (req) => perpOk(req.id, await service().disable(caller(req))),
  );
};
