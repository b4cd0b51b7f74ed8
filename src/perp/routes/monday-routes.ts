/**
 * The endpoints Monday Trade's trader-API clients call (docs/perp-api.md "Monday Trade clients"),
 * beside the venue's own: key creation by a personal-sign text message, instruments named
 * `BASE/USDC`, funding history as `{timestamp, long, short}`, and market and limit orders with
 * numeric sides authorised by the API key alone (the wallet having enabled One-Click Trade for the
 * venue's delegate). Every shape is the contract's (packages/contract perp-monday-schemas.ts); the
 * work is the venue's own services' (monday-order-service.ts).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  MondayCreateApiKeyBodySchema,
  MondayCreatedApiKeySchema,
  MondayFundingHistoryQuerySchema,
  MondayFundingPointSchema,
  MondayInstrumentSchema,
  MondayInstrumentsQuerySchema,
  MondayLimitOrderBodySchema,
  MondayMarketOrderBodySchema,
  MondayOrderResultSchema,
  PerpIdempotencyHeaders as idempotencyHeaders,
  perpResponses,
  Type,
} from '@tokex/contract';
import type { AuthKey } from '../../auth/api-key-service.ts';
import { idempotencyKeyOf } from '../idempotency.ts';
import type { MondayOrderService } from '../monday-order-service.ts';
import { perpOk } from '../perp-envelope.ts';
import type { PerpKeyService } from '../perp-key-service.ts';

export const mondayRoutes: FastifyPluginAsyncTypebox<{ keys: PerpKeyService; service: MondayOrderService }> = async (app, { keys, service }) => {
  const tags = ['monday trade clients'];
  const caller = (req: { apiKey?: AuthKey }) => req.apiKey as AuthKey;

  app.post(
    '/api-key/create',
    {
      config: { auth: false },
      schema: {
        tags,
        summary:
          "Create a key (READ, TRADE) with the wallet's personal-sign signature of the five-line text message (no authentication; 45 s window; each nonce once); the secret is answered only this once",
        security: [],
        body: MondayCreateApiKeyBodySchema,
        response: perpResponses(MondayCreatedApiKeySchema),
      },
    },
    async (req) => perpOk(req.id, await keys.createFromText(req.body)),
  );

  app.get(
    '/market/instruments',
    {
      schema: {
        tags,
        summary: "Instruments named BASE/USDC, with the venue's fields (READ)",
        querystring: MondayInstrumentsQuerySchema,
        response: perpResponses(Type.Array(MondayInstrumentSchema)),
      },
    },
    async (req) => perpOk(req.id, service.instruments(req.query.symbol)),
  );

  app.get(
    '/market/funding/history',
    {
      schema: {
        tags,
        summary: 'Funding rates applied, newest first, as {timestamp, long, short}; long positive when longs pay (READ)',
        querystring: MondayFundingHistoryQuerySchema,
        response: perpResponses(Type.Array(MondayFundingPointSchema)),
      },
    },
    async (req) => perpOk(req.id, await service.fundingHistory(req.query)),
  );

  app.post(
    '/order/market',
    {
      schema: {
        tags,
        summary:
          "A market order with a numeric side and a worst price slippageBps from the mark, authorised by the API key alone once the wallet enabled One-Click Trade for the venue's delegate (TRADE); txHash is null (matched off chain)",
        body: MondayMarketOrderBodySchema,
        headers: idempotencyHeaders,
        response: perpResponses(MondayOrderResultSchema),
      },
    },
    async (req) => perpOk(req.id, await service.market(caller(req), req.body, idempotencyKeyOf(req.headers))),
  );

  app.post(
    '/order/limit',
    {
      schema: {
        tags,
        summary:
          "A limit order (GTC, or POST_ONLY with postOnly) with a numeric side, authorised by the API key alone once the wallet enabled One-Click Trade for the venue's delegate (TRADE); txHash is null",
        body: MondayLimitOrderBodySchema,
        headers: idempotencyHeaders,
        response: perpResponses(MondayOrderResultSchema),
      },
    },
    async (req) => perpOk(req.id, await service.limit(caller(req), req.body, idempotencyKeyOf(req.headers))),
  );
};
