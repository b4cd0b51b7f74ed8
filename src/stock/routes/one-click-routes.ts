/**
 * One Click (seed §4A, 4 endpoints): delegation status, the EIP-712 payload to sign, enabling with
 * the signature and disabling. The `send` variants of orders, cash and stock movements live with
 * their calldata twins and use the send helpers exported here. Every shape is the contract's
 * (packages/contract); this module only routes.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  StockOneClickChangeSchema,
  StockOneClickEnableBodySchema,
  StockOneClickPrepareBodySchema,
  StockOneClickPreparedSchema,
  StockOneClickStatusSchema,
  stockResponses,
  type StockOperationSend,
  type StockOrderSend,
  type StockRelay,
} from '@tokex/contract';
import type { FastifyRequest } from 'fastify';
import { idempotencyKeyOf, requestFingerprint } from '../../http/idempotency-key.ts';
import type { OneClickService, RelayOutcome, SendIdempotency } from '../one-click/one-click-service.ts';
import { oneClickStatusView } from '../one-click/one-click-view.ts';
import { okExactReply, okReply } from './stock-reply.ts';

/** A send's key and its request's fingerprint (method, path and body), or undefined without a key. */
export function sendIdempotencyOf(req: FastifyRequest): SendIdempotency | undefined {
  const key = idempotencyKeyOf(req.headers);
  return key === undefined ? undefined : { key, fingerprint: requestFingerprint(req.method, req.url, req.body) };
}

function relayView(o: RelayOutcome): StockRelay {
  return { requestId: o.requestId, status: o.status, txHash: o.txHash, blockNumber: o.blockNumber, gasUsed: o.gasUsed };
}

export function orderSendView(o: RelayOutcome, cancelled?: string): StockOrderSend {
  const orderIds = cancelled !== undefined && o.status === 'mined' ? [cancelled] : o.orderIds;
  return { ...relayView(o), orderId: orderIds[0] ?? null, orderIds };
}

export function operationSendView(o: RelayOutcome): StockOperationSend {
  return { ...relayView(o), operationId: o.operationIds[0] ?? null, operationIds: o.operationIds };
}

export const oneClickRoutes: FastifyPluginAsyncTypebox<{ oneClick: OneClickService }> = async (app, { oneClick }) => {
  const tags = ['one-click'];

  app.get(
    '/1ct/status',
    { schema: { tags, summary: "One Click delegation of the key's bound wallet, read from the One Click router", response: stockResponses(StockOneClickStatusSchema) } },
    async (req) => okReply(req.id, oneClickStatusView(await oneClick.status(req.apiKey!))),
  );

  app.post(
    '/1ct/prepare',
    {
      schema: {
        tags,
        summary: 'The EIP-712 Delegate payload for the bound wallet to sign (no state change); once enabled, the delegation lasts 30 days from its recording on chain (enable again to extend)',
        body: StockOneClickPrepareBodySchema,
        response: stockResponses(StockOneClickPreparedSchema),
      },
    },
    async (req, reply) => okExactReply(reply, req.id, await oneClick.prepare(req.apiKey!, req.body.deadline)),
  );

  app.post(
    '/1ct/enable',
    {
      schema: {
        tags,
        summary: "Enable One Click with the wallet's signature over the prepared payload (the relayer submits delegateBySig)",
        body: StockOneClickEnableBodySchema,
        response: stockResponses(StockOneClickChangeSchema),
      },
    },
    async (req) => {
      const r = await oneClick.enable(req.apiKey!, req.body);
      return okReply(req.id, { ...oneClickStatusView(r), txHash: r.txHash, requestId: r.requestId });
    },
  );

  app.post(
    '/1ct/disable',
    {
      schema: {
        tags,
        summary: 'Disable One Click: the relayer ends its delegation and refuses on chain every delegation to it the wallet signed (even one never enabled); later sends fail',
        response: stockResponses(StockOneClickChangeSchema),
      },
    },
    async (req) => {
      const r = await oneClick.disable(req.apiKey!);
      return okReply(req.id, { ...oneClickStatusView(r), txHash: r.txHash, requestId: r.requestId });
    },
  );
};
