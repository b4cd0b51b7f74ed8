/**
 * The perpetual API's WebSocket endpoint, `/v4/public/ws` (contract.md §C, docs/streams.md): the
 * shared endpoint with this venue's channels, symbols, error codes and `auth`. `auth` is the REST
 * signature over `ts + "GET" + "/v4/public/ws"` with an empty body, checked by the same function as
 * every request (timestamp window, key, whitelist, signature, replay), and needs READ.
 *
 * Order entry (contract.md §B, "Order entry for trading firms"): after `auth`,
 * `{"op":"order","id","action":"place"|"batch"|"cancel"|"amend","body"}` makes the REST call
 * (`POST orders`, `POST orders/batch`, `DELETE orders/{orderId}`, `POST orders/amend`) and answers
 * `{"type":"result","id","code","msg","data"}`: `data` is the text REST would send in its envelope's
 * `data` (the route's own response schema serialises it), a refusal the code, message and data REST
 * would answer (perpEnvelope.renderError). The same checks in the same order as REST: the key as it
 * stands now (deleted, expired or narrowed since `auth` stops it), one count against the key's REST
 * bucket with the REST call's weight (the API's own rate-limit checker, so REST and the stream spend
 * one budget, across instances with Redis), TRADE, then the body against the route's schema with
 * Fastify's own validator and wording. Orders are applied by the same order service, so signatures,
 * order nonces and idempotency are REST's: a signed order sent here and over REST is one order.
 */
import { sharedCompilersFactory } from '../../http/schema-compilers.ts';
import Fastify, { type FastifyInstance } from 'fastify';
import fastJson from 'fast-json-stringify';
import {
  BatchOrdersBodySchema,
  BatchOrdersResultSchema,
  OrderSchema,
  SignedOrderBodySchema,
  STREAM_ORDER_ACTIONS,
  StreamCancelBodySchema,
  SubmittedOrderSchema,
  Type,
  type Static,
  type StreamOrderAction,
  type TSchema,
} from '@tokex/contract';
import { AppError, isAppError, ForbiddenError, UnauthorizedError, ValidationError } from '../../errors/app-error.ts';
import { hasPermission } from '../../auth/api-key-model.ts';
import type { ApiKeyService, AuthKey } from '../../auth/api-key-service.ts';
import type { NonceStore } from '../../auth/nonce-store.ts';
import type { Logger } from '../../lib/logger.ts';
import { validationFromAjv } from '../../http/create-http-server.ts';
import { rateLimitedError, type RateLimitCheck } from '../../http/rate-limiter.ts';
import { attachStreamEndpoint, type StreamEndpoint, type StreamLimits, type StreamOp } from '../../streams/stream-endpoint.ts';
import type { StreamHub } from '../../streams/stream-hub.ts';
import { createPerpKeyCheck, createPerpSignatureCheck, keyBucket, perpRequestWeight } from '../perp-auth-hook.ts';
import { perpEnvelope } from '../perp-envelope.ts';
import { PERP_ERROR_CODES, perpErrorOf } from '../perp-error-codes.ts';
import type { OrderService } from '../order-service.ts';
import { walletOf } from '../venue-calls.ts';
import { perpChannels } from './perp-stream-channels.ts';

export const PERP_WS_PATH = '/v4/public/ws';

const code = (name: keyof typeof PERP_ERROR_CODES) => PERP_ERROR_CODES[name].code;
/** A private channel or an order before `auth`. */
const AUTH_REQUIRED = code('PERMISSION_DENIED');

export interface PerpStreamEndpointOptions {
  hub: StreamHub;
  keys: ApiKeyService;
  nonces: NonceStore;
  chainId: number;
  isSymbol(symbol: string): boolean;
  logger: Logger;
  limits?: Partial<StreamLimits>;
  now?: () => number;
  /**
   * Order entry (`op: "order"`): the API's order service (perpOrderServiceOf) and its rate-limit
   * checker (rateLimitOf), the instances REST uses. Without both the op is not offered.
   */
  orders?: OrderService;
  rateLimit?: RateLimitCheck;
  /**
   * Awaited before a cancel or an amendment, as REST's hook does (perp-venue.ts `settled`): with
   * the engine apart, the replica then holds every order this process answered.
   */
  settled?: () => Promise<void>;
}

/** A connection's session once `auth` succeeded: the key is looked up again for every order. */
interface PerpSession {
  account: string;
  apiKey: string;
}

const EMPTY = new Uint8Array(0);

/** A connection's order lane as an action sees it (StreamOpContext's `turn` and `ordered`). */
type OrderLane = { turn: Promise<void>; ordered: () => void };

/** The REST call each action makes: its route (for the weight), body schema and answer schema. */
interface OrderAction {
  route: string;
  body: TSchema;
  answer: TSchema;
  /** Reads no engine state, answers from the engine's reply (REST's `answersFromReply`): does not wait for `settled`. */
  answersFromReply?: true;
  /** Called with a body `body` has validated; awaits `lane.turn` before its effect, calls `lane.ordered` once its command is handed to the engine. */
  run(orders: OrderService, key: AuthKey, body: unknown, lane: OrderLane): Promise<unknown>;
}

function orderAction<B extends TSchema>(a: {
  route: string;
  body: B;
  answer: TSchema;
  answersFromReply?: true;
  run(orders: OrderService, key: AuthKey, body: Static<B>, lane: OrderLane): Promise<unknown>;
}): OrderAction {
  return a as OrderAction;
}

const ORDER_ACTIONS: Readonly<Record<StreamOrderAction, OrderAction>> = {
  place: orderAction({ route: 'POST orders', body: SignedOrderBodySchema, answer: SubmittedOrderSchema, answersFromReply: true, run: (o, k, b, lane) => o.submit(k, b, 'order', { turn: lane.turn, onSubmitted: lane.ordered }) }),
  batch: orderAction({ route: 'POST orders/batch', body: BatchOrdersBodySchema, answer: BatchOrdersResultSchema, answersFromReply: true, run: (o, k, b, lane) => o.submitBatch(k, b, { turn: lane.turn, onSubmitted: lane.ordered }) }),
  // A cancel waits for its turn and holds the lane until it is answered: what follows it sees the order gone.
  cancel: orderAction({
    route: 'DELETE orders/{orderId}',
    body: StreamCancelBodySchema,
    answer: OrderSchema,
    run: async (o, k, b, lane) => {
      await lane.turn;
      return o.cancel(k, b.orderId, b.idempotencyKey);
    },
  }),
  amend: orderAction({ route: 'POST orders/amend', body: SignedOrderBodySchema, answer: SubmittedOrderSchema, run: (o, k, b, lane) => o.amend(k, b, { turn: lane.turn, onSubmitted: lane.ordered }) }),
};
export const ORDER_ACTION_NAMES: readonly StreamOrderAction[] = STREAM_ORDER_ACTIONS;

/** Ajv's options as createHttpServer gives them to Fastify: no coercion, defaults, the first error, verbose. */
const REQUEST_AJV_OPTIONS = { removeAdditional: false, coerceTypes: false, useDefaults: true, allErrors: false, verbose: true } as const;

type Validate = ((data: unknown) => boolean) & { errors?: unknown[] | null };

/**
 * Each action's body validator, compiled by Fastify's own validator compiler (its Ajv, with the
 * REST server's options), so a body is judged as the route judges it and refused in the same words
 * (validationFromAjv). Fastify hands its compiler out once a server with a validated route is ready,
 * hence the empty server.
 */
async function compileBodyValidators(): Promise<Map<string, Validate>> {
  // Once per process: the schemas are constants, and a sandbox's revert builds this endpoint again.
  // A failure is not kept: the next build compiles again.
  return (bodyValidators ??= compileBodyValidatorsOnce().catch((err) => {
    bodyValidators = undefined;
    throw err;
  }));
}
let bodyValidators: Promise<Map<string, Validate>> | undefined;
let answerRenderers: Map<string, (data: unknown) => string> | undefined;

async function compileBodyValidatorsOnce(): Promise<Map<string, Validate>> {
  const f = Fastify({ ajv: { customOptions: REQUEST_AJV_OPTIONS }, schemaController: { compilersFactory: sharedCompilersFactory } });
  f.post('/', { schema: { body: Type.Object({}) } }, async () => null);
  await f.ready();
  const compile = f.validatorCompiler;
  if (!compile) throw new Error('perp streams: no validator compiler');
  const out = new Map<string, Validate>();
  for (const [name, a] of Object.entries(ORDER_ACTIONS)) {
    out.set(name, compile({ schema: a.body, method: 'POST', url: `/ws/${name}`, httpPart: 'body' }) as Validate);
  }
  await f.close();
  return out;
}

/** A refusal as REST answers it: the table's code, REST's message and data (never a secret). */
function refusalOf(err: AppError): { code: number; msg: string; data: Record<string, unknown> } {
  const { code: c, msg, data } = perpEnvelope.renderError(err, '').body as { code: number; msg: string; data: Record<string, unknown> };
  // REST says when to retry in a header; a frame has none.
  const extra = err.code === 'RATE_LIMITED' ? { retryAfter: (err as AppError & { retryAfterSeconds?: number }).retryAfterSeconds ?? 60 } : {};
  return { code: c, msg, data: { ...data, ...extra } };
}

function orderOp(opts: PerpStreamEndpointOptions & { orders: OrderService; rateLimit: RateLimitCheck }): StreamOp<PerpSession> {
  const { orders, rateLimit, logger, settled } = opts;
  const checkKey = createPerpKeyCheck(opts);
  const render = (answerRenderers ??= new Map(Object.entries(ORDER_ACTIONS).map(([name, a]) => [name, fastJson(a.answer as object as fastJson.Schema)])));
  // Compiled once, in the background: the first order waits for it.
  const validators = compileBodyValidators();
  validators.catch((err) => logger.error({ err }, 'perp streams: body validators not compiled'));

  const result = (id: string | undefined, c: number, msg: string, data: Record<string, unknown> = {}) => ({ type: 'result', ...(id !== undefined ? { id } : {}), code: c, msg, data });
  // Each connection's key checks and rate-limit counts, one after the other in arrival order (the
  // rest of an order's checks run together with the next ones'): past the budget it is always the
  // later orders that are refused, never an earlier one while a later one passes.
  const admissions = new WeakMap<PerpSession, Promise<unknown>>();
  const admitInOrder = <T>(session: PerpSession, admit: () => Promise<T>): Promise<T> => {
    const next = (admissions.get(session) ?? Promise.resolve()).then(admit);
    admissions.set(session, next.catch(() => undefined));
    return next;
  };

  return {
    refused: (id, c, msg) => result(id, c, msg),
    async handle(msg, { id, session, peer, turn, ordered }) {
      const action = typeof msg.action === 'string' && Object.hasOwn(ORDER_ACTIONS, msg.action) ? (msg.action as StreamOrderAction) : undefined;
      try {
        if (session === undefined) return result(id, AUTH_REQUIRED, 'auth first: orders need an authenticated connection');
        const body = msg.body;
        const key = await admitInOrder(session, async () => {
          const k = await checkKey(session.apiKey, peer);
          // Every order message of an authenticated connection counts, as every authenticated request does.
          const state = await rateLimit(undefined, keyBucket(k.apiKey), action ? perpRequestWeight(ORDER_ACTIONS[action].route, body) : 1);
          if (state.limited) throw rateLimitedError(state);
          return k;
        });
        // Without an id the result could not be matched to its order: nothing is done.
        if (id === undefined) throw new ValidationError('id', 'required on an order: the result carries it');
        if (!hasPermission(key, 'TRADE')) throw new ForbiddenError('TRADE permission required');
        if (action === undefined) throw new ValidationError('action', `must be one of ${ORDER_ACTION_NAMES.join(', ')}`);
        const validate = (await validators).get(action)!;
        if (!validate(body)) throw validationFromAjv((validate.errors ?? []) as Parameters<typeof validationFromAjv>[0], 'body');
        if (!ORDER_ACTIONS[action].answersFromReply) await settled?.();
        const data = await ORDER_ACTIONS[action].run(orders, key, body, { turn, ordered });
        return `{"type":"result","id":${JSON.stringify(id)},"code":0,"msg":"ok","data":${render.get(action)!(data)}}`;
      } catch (err) {
        if (isAppError(err)) {
          const r = refusalOf(err);
          return result(id, r.code, r.msg, r.data);
        }
        logger.error({ err, action }, 'perp streams: order failed');
        return result(id, code('INTERNAL'), 'Internal server error');
      }
    },
  };
}

export function attachPerpStreams(app: FastifyInstance, opts: PerpStreamEndpointOptions): StreamEndpoint {
  const check = createPerpSignatureCheck(opts);
  const { orders, rateLimit } = opts;
  return attachStreamEndpoint<PerpSession>(app, {
    paths: [PERP_WS_PATH],
    hub: opts.hub,
    catalog: perpChannels(),
    isSymbol: opts.isSymbol,
    limits: opts.limits,
    logger: opts.logger,
    codes: {
      invalid: code('INVALID'),
      unknownSymbol: code('UNKNOWN_SYMBOL'),
      authRequired: AUTH_REQUIRED,
      rateLimited: code('RATE_LIMITED'),
      gone: code('SNAPSHOT_REQUIRED'),
      unavailable: code('STORAGE_UNAVAILABLE'),
    },
    async authenticate(frame, peer) {
      const { apiKey, sign } = frame;
      const ts = typeof frame.ts === 'number' ? String(frame.ts) : frame.ts;
      if (typeof apiKey !== 'string' || typeof sign !== 'string' || typeof ts !== 'string') {
        throw new UnauthorizedError('auth: apiKey, ts and sign are required', { failure: 'credentials' });
      }
      const key = await check({ apiKey, sign, ts, method: 'GET', requestPath: PERP_WS_PATH, body: EMPTY, peer });
      if (!hasPermission(key, 'READ')) throw new ForbiddenError('READ permission required');
      return { account: walletOf(key), apiKey: key.apiKey };
    },
    authRefusal(err) {
      if (!isAppError(err)) return { code: code('INTERNAL'), msg: 'internal error' };
      const entry = perpErrorOf(err);
      // The table's words, as REST answers: never the key, the signature or the reason's detail.
      return { code: entry.code, msg: entry.meaning };
    },
    ...(orders && rateLimit ? { ops: { order: orderOp({ ...opts, orders, rateLimit }) } } : {}),
  });
}
