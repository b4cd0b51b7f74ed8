/**
 * The sandbox control API's routes (docs/sandbox.md), registered on the stock API's server under
 * `{prefix}/sandbox/v1` only when the sandbox is on, outside the signed `/api/v1` scope, answering in
 * the stock API's envelope. Every route, and every unknown path under the prefix, first checks
 * `Authorization: Bearer <token>`; then the body is decoded as strict JSON (src/http/request-decoder.ts)
 * and validated against the contract's schema, so bad input is a 400 naming the field.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  SandboxClockAdvanceRequestSchema,
  SandboxClockAdvanceSchema,
  SandboxClockFreezeRequestSchema,
  SandboxClockStateSchema,
  SandboxCorporateActionRequestSchema,
  SandboxCorporateActionSchema,
  SandboxFaultListSchema,
  SandboxFaultRequestSchema,
  SandboxFaultSchema,
  SandboxFaultsClearedSchema,
  SandboxFundRequestSchema,
  SandboxFundSchema,
  SandboxPriceAnswerSchema,
  SandboxPriceRequestSchema,
  SandboxResetSchema,
  SandboxRevertSchema,
  SandboxSnapshotDeletedSchema,
  SandboxSnapshotIdParamsSchema,
  SandboxSnapshotListSchema,
  SandboxSnapshotSchema,
  stockResponses,
} from '@tokex/contract';
import { ConflictError, NotFoundError } from '../errors/app-error.ts';
import type { Logger } from '../lib/logger.ts';
import { idempotencyKeyOf, requestFingerprint } from '../http/idempotency-key.ts';
import { decodeJsonRequest } from '../http/request-decoder.ts';
import { okReply } from '../stock/routes/stock-reply.ts';
import type { SandboxCorporateActions } from './sandbox-corporate-actions.ts';
import type { SandboxFunding } from './sandbox-funding.ts';
import { createIdempotentCalls } from './sandbox-idempotency.ts';
import type { SandboxClock } from './sandbox-clock.ts';
import type { SandboxService } from './sandbox-service.ts';
import type { SandboxVenueControl } from './sandbox-state.ts';
import { bearerMatches } from './sandbox-token.ts';

export interface SandboxRoutesOptions {
  token: string;
  service: SandboxService;
  clock: SandboxClock;
  funding: SandboxFunding;
  corporateActions: SandboxCorporateActions;
  /** Snapshots, revert and reset: undefined where the venue cannot be started again in this process. */
  venue: () => SandboxVenueControl | undefined;
  logger: Pick<Logger, 'warn'>;
}

export const sandboxRoutes: FastifyPluginAsyncTypebox<SandboxRoutesOptions> = async (app, opts) => {
  const { service, clock, funding, corporateActions, token, logger } = opts;
  // The funds already answered under an Idempotency-Key (sandbox-idempotency.ts).
  const funds = createIdempotentCalls();
  const advances = createIdempotentCalls();
  // The bearer check answers itself: a plain HTTP 401 with WWW-Authenticate (RFC 6750), the envelope's
  // code 401 and 'Unauthorized', never which part was wrong (the reason goes to the log under the uuid).
  // The signed API's HTTP 400 for its 401 is Anchored's convention for signed requests, not this API's.
  app.addHook('onRequest', async (request, reply) => {
    if (bearerMatches(request.headers.authorization, token)) return;
    logger.warn({ uuid: request.id, reason: request.headers.authorization === undefined ? 'no Authorization header' : 'not the sandbox token' }, 'sandbox: authentication failed');
    return reply
      .code(401)
      .header('www-authenticate', 'Bearer realm="tokex-sandbox"')
      .send({ code: 401, errMsg: 'Unauthorized', uuid: request.id, t: Date.now() });
  });
  app.addHook('preValidation', decodeJsonRequest);
  // Unknown paths under the prefix authenticate first, as the signed scope's do.
  app.setNotFoundHandler(async () => {
    throw new NotFoundError('route');
  });
  // Hidden from the stock API's OpenAPI document: docs/sandbox.md documents these routes.
  const hide = true;

  app.get('/clock', { schema: { hide, response: stockResponses(SandboxClockStateSchema) } }, async (request) => okReply(request.id, clock.clock()));

  // An advance is not idempotent by itself (a retry would move the clock twice): under an
  // Idempotency-Key a retry answers the first advance again, as a retried fund does.
  app.post('/clock/advance', { schema: { hide, body: SandboxClockAdvanceRequestSchema, response: stockResponses(SandboxClockAdvanceSchema) } }, async (request, reply) => {
    const key = idempotencyKeyOf(request.headers);
    const { value, replayed } = await advances.run(key, requestFingerprint('POST', '/clock/advance', request.body), () => clock.advance(request.body.seconds));
    if (replayed) reply.header('idempotent-replayed', 'true');
    return okReply(request.id, value);
  });

  app.post('/clock/freeze', { schema: { hide, body: SandboxClockFreezeRequestSchema, response: stockResponses(SandboxClockStateSchema) } }, async (request) =>
    okReply(request.id, clock.freeze(request.body.frozen)),
  );

  app.post('/prices', { schema: { hide, body: SandboxPriceRequestSchema, response: stockResponses(SandboxPriceAnswerSchema) } }, async (request) =>
    okReply(request.id, await service.setPrice(request.body)),
  );

  app.post('/fund', { schema: { hide, body: SandboxFundRequestSchema, response: stockResponses(SandboxFundSchema) } }, async (request, reply) => {
    const key = idempotencyKeyOf(request.headers);
    const { value, replayed } = await funds.run(key, requestFingerprint('POST', '/fund', request.body), () => funding.fund(request.body));
    // A client can tell a replayed answer from a new mint (the header Stripe's API sends, for one).
    if (replayed) reply.header('idempotent-replayed', 'true');
    return okReply(request.id, value);
  });

  app.post('/corporate-actions', { schema: { hide, body: SandboxCorporateActionRequestSchema, response: stockResponses(SandboxCorporateActionSchema) } }, async (request) =>
    okReply(request.id, await corporateActions.schedule(request.body)),
  );

  app.get('/faults', { schema: { hide, response: stockResponses(SandboxFaultListSchema) } }, async (request) => okReply(request.id, { faults: service.listFaults() }));

  app.post('/faults', { schema: { hide, body: SandboxFaultRequestSchema, response: stockResponses(SandboxFaultSchema) } }, async (request) =>
    okReply(request.id, await service.addFault(request.body)),
  );

  app.delete('/faults', { schema: { hide, response: stockResponses(SandboxFaultsClearedSchema) } }, async (request) =>
    okReply(request.id, { cleared: await service.clearFaults() }),
  );

  // Snapshots, revert and reset (docs/sandbox.md): the venue stops and starts again in this process.
  const venue = (): SandboxVenueControl => {
    const control = opts.venue();
    if (!control) {
      throw new ConflictError('snapshots: only a process that runs every role on the embedded storage (no DATABASE_URL) can stop its venue and start it again; `tokex start` with the defaults does');
    }
    return control;
  };
  // The server that answers these is closed under them (the venue starts again on a new one): the
  // client's connection ends with the answer, and its next request reaches the new server.
  const closing = (reply: { header(name: string, value: string): unknown }) => reply.header('connection', 'close');
  app.get('/snapshots', { schema: { hide, response: stockResponses(SandboxSnapshotListSchema) } }, async (request) => okReply(request.id, { snapshots: venue().list() }));
  app.post('/snapshots', { schema: { hide, response: stockResponses(SandboxSnapshotSchema) } }, async (request, reply) => {
    const control = venue();
    closing(reply);
    return okReply(request.id, await control.snapshot());
  });
  app.post('/snapshots/:id/revert', { schema: { hide, params: SandboxSnapshotIdParamsSchema, response: stockResponses(SandboxRevertSchema) } }, async (request, reply) => {
    const control = venue();
    closing(reply);
    const done = await control.revert(request.params.id);
    return okReply(request.id, { ...done, clock: clock.clock() });
  });
  app.delete('/snapshots/:id', { schema: { hide, params: SandboxSnapshotIdParamsSchema, response: stockResponses(SandboxSnapshotDeletedSchema) } }, async (request) => {
    venue().drop(request.params.id);
    return okReply(request.id, { id: request.params.id, deleted: true as const });
  });
  app.post('/reset', { schema: { hide, response: stockResponses(SandboxResetSchema) } }, async (request, reply) => {
    const control = venue();
    closing(reply);
    const done = await control.reset();
    return okReply(request.id, { reset: true as const, ...done, clock: clock.clock() });
  });
};
