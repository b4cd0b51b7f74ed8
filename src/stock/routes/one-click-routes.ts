/**
 * One Click (seed §4A, 4 endpoints): delegation status, the EIP-712 payload to sign, enabling with
 * the signature and disabling. The `send` variants of orders, cash and stock movements live with
 * their calldata twins and use the schemas exported here.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { SIGNATURE_PATTERN } from '../../http/schema-patterns.ts';
import { idempotencyHeadersSchema, idempotencyKeyOf, requestFingerprint } from '../../http/idempotency-key.ts';
import type { OneClickService, RelayOutcome, SendIdempotency } from '../one-click/one-click-service.ts';
import { stockOk } from '../stock-envelope.ts';
import { address, responses } from '../stock-schemas.ts';

/** The optional gas limit every send takes (seed §4A: "an optional gasLimit can be passed"). */
export const gasLimitProp = {
  anyOf: [{ type: 'integer' }, { type: 'string' }],
  description: 'gas limit of the relayed transaction (default: the node\'s estimate × 1.5)',
} as const;

/** The optional `Idempotency-Key` of every send (docs/one-click.md, "Retries"). */
export const sendHeaders = idempotencyHeadersSchema(
  'names the send (1 to 64 visible ASCII characters, unique per API key): a retry with the same key is answered with the transaction the first attempt queued, never a second one; the same key with another request is 409',
);

/** A send's key and its request's fingerprint (method, path and body), or undefined without a key. */
export function sendIdempotencyOf(req: FastifyRequest): SendIdempotency | undefined {
  const key = idempotencyKeyOf(req.headers);
  return key === undefined ? undefined : { key, fingerprint: requestFingerprint(req.method, req.url, req.body) };
}

const relayProps = {
  requestId: { type: 'string', description: 'the relay request (server log and support)' },
  status: { type: 'string', enum: ['mined', 'pending'], description: 'pending: the receipt did not come within the wait; poll the list or detail' },
  txHash: { type: ['string', 'null'] },
  blockNumber: { type: ['string', 'null'] },
  gasUsed: { type: ['string', 'null'] },
} as const;

export const orderSendSchema = {
  type: 'object',
  required: ['requestId', 'status', 'txHash', 'orderIds'],
  properties: {
    ...relayProps,
    orderId: { type: ['string', 'null'], description: 'the order placed (or cancelled), once mined' },
    orderIds: { type: 'array', items: { type: 'string' } },
  },
} as const;

export const operationSendSchema = {
  type: 'object',
  required: ['requestId', 'status', 'txHash', 'operationIds'],
  properties: {
    ...relayProps,
    operationId: { type: ['string', 'null'], description: 'the operation, once mined; poll its detail until final' },
    operationIds: { type: 'array', items: { type: 'string' } },
  },
} as const;

function relayView(o: RelayOutcome) {
  return { requestId: o.requestId, status: o.status, txHash: o.txHash, blockNumber: o.blockNumber, gasUsed: o.gasUsed };
}

export function orderSendView(o: RelayOutcome, cancelled?: string) {
  const orderIds = cancelled !== undefined && o.status === 'mined' ? [cancelled] : o.orderIds;
  return { ...relayView(o), orderId: orderIds[0] ?? null, orderIds };
}

export function operationSendView(o: RelayOutcome) {
  return { ...relayView(o), operationId: o.operationIds[0] ?? null, operationIds: o.operationIds };
}

const statusSchema = {
  type: 'object',
  required: ['status', 'delegatee'],
  properties: {
    status: { type: 'string', enum: ['enabled', 'disabled'] },
    delegatee: { ...address, description: 'the relayer the bound wallet delegates to' },
  },
} as const;

const changeSchema = {
  type: 'object',
  required: ['status', 'delegatee', 'txHash'],
  properties: {
    ...statusSchema.properties,
    txHash: { type: ['string', 'null'], description: 'the relayed delegateBySig or revokeDelegation (null when nothing had to change)' },
    requestId: { type: ['string', 'null'] },
  },
} as const;

const deadlineProp = { type: 'integer', description: 'Unix seconds, in the future, at most 30 days ahead' } as const;

export const oneClickRoutes: FastifyPluginAsync<{ oneClick: OneClickService }> = async (app, { oneClick }) => {
  const tags = ['one-click'];

  app.get('/1ct/status', { schema: { tags, summary: 'One Click delegation of the key\'s bound wallet, read from the One Click router', response: responses(statusSchema) } }, async (req) =>
    stockOk(req.id, await oneClick.status(req.apiKey!)),
  );

  app.post<{ Body: { deadline?: number } }>(
    '/1ct/prepare',
    {
      schema: {
        tags,
        summary: 'The EIP-712 Delegate payload for the bound wallet to sign (no state change)',
        body: { type: 'object', required: ['deadline'], additionalProperties: false, properties: { deadline: deadlineProp } },
        response: responses({
          type: 'object',
          required: ['delegatee', 'nonce', 'deadline', 'signPayload'],
          properties: {
            delegatee: address,
            nonce: { type: 'string', description: 'the router\'s delegation nonce of the wallet' },
            deadline: { type: 'integer' },
            signPayload: {
              type: 'object',
              additionalProperties: true,
              description: 'complete EIP-712 typed data (domain, types with EIP712Domain, primaryType Delegate, message) for eth_signTypedData_v4',
            },
          },
        }),
      },
    },
    async (req) => stockOk(req.id, await oneClick.prepare(req.apiKey!, req.body.deadline)),
  );

  app.post<{ Body: { signature: string; deadline: number } }>(
    '/1ct/enable',
    {
      schema: {
        tags,
        summary: 'Enable One Click with the wallet\'s signature over the prepared payload (the relayer submits delegateBySig)',
        body: {
          type: 'object',
          required: ['signature', 'deadline'],
          additionalProperties: false,
          properties: { signature: { type: 'string', pattern: SIGNATURE_PATTERN }, deadline: deadlineProp },
        },
        response: responses(changeSchema),
      },
    },
    async (req) => stockOk(req.id, await oneClick.enable(req.apiKey!, req.body)),
  );

  app.post(
    '/1ct/disable',
    {
      schema: {
        tags,
        summary: 'Disable One Click (the relayer revokes its delegation); later sends fail',
        response: responses(changeSchema),
      },
    },
    async (req) => stockOk(req.id, await oneClick.disable(req.apiKey!)),
  );
};
