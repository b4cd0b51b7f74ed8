/**
 * The WebSocket endpoint of a venue (contract.md §C, docs/streams.md) on its API's HTTP server:
 * frames in, hub subscriptions and frames out. The venue supplies its channels, symbols, `auth`
 * check and error codes; the rules below are the same for both APIs.
 *
 * Limits (each documented): 50 subscriptions and 20 messages a second (bursts of 40) per connection,
 * 10 invalid frames, 4 KiB a frame, 4 MiB of unsent frames (a client that does not read), 100
 * connections per address. Past one: an error frame, then a close with 1008 and the reason. The
 * server pings every 20 s and closes a connection it has heard nothing from for 60 s.
 *
 * A venue may add ops of its own (`opts.ops`, the perp API's `order`): requests that wait on
 * something slow (the engine). They keep their own lane per connection, in arrival order: each starts
 * after every message received before it (so an `order` sent right after `auth` sees its outcome), and
 * may do its own checks (a signature, a nonce) at once, while earlier ops still run; its effect waits
 * for `ctx.turn`, which resolves once every op before it is ordered (its command handed to the engine,
 * `ctx.ordered()`) or done. So orders pipeline on a connection, their checks in parallel, but are
 * applied in the order sent; answers leave in that order too.
 * Later subscribes and pings go on meanwhile. At most `opsQueued` wait per
 * connection; past that the venue's refusal is answered at once. Once the connection has sent `auth`,
 * a frame of such an op may be up to `opFrameBytes` (a batch of signed orders is larger than any
 * subscribe); every other frame stays within `maxFrameBytes`.
 *
 * A venue whose streams come in several sets (the stock API's chains, one publisher each) gives each
 * connection one set, its route (`opts.routeOf`): the one its URL's query names, else the default;
 * its `auth` may pick another while the route is not fixed, i.e. while the URL named none and the
 * connection has subscribed to nothing. Every subscription of a connection is on its route's hub.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { WebSocketServer, type WebSocket } from 'ws';
// The close of a drop: 1012 "service restart", the IANA code for a server restarting (RFC 6455 §7.4).
import { SANDBOX_STREAM_DROP_CLOSE } from '@tokex/contract';
import type { Logger } from '../lib/logger.ts';
import { upgradeRefusalOf } from '../http/create-http-server.ts';
import { requestFaultsOf, type StreamDropMode } from '../http/request-faults.ts';
import type { ChannelCatalog } from './stream-channels.ts';
import { StreamRefusal, type StreamHub, type StreamSink } from './stream-hub.ts';
import { apiLabelOf, recordAuthRefusal, recordDroppedFrame, recordStreamReset, trackStreamEndpoint } from '../observability/metrics-registry.ts';

export interface StreamCodes {
  /** A frame that is not a valid message: bad JSON, unknown op or channel, a bad field. */
  invalid: number;
  unknownSymbol: number;
  /** A private channel before a successful `auth`. */
  authRequired: number;
  rateLimited: number;
  /** `since` not retained, or the stream restarted. */
  gone: number;
  /** The streams cannot be served just now (retry). */
  unavailable: number;
}

export interface StreamLimits {
  subscriptions: number;
  messagesPerSecond: number;
  burst: number;
  invalidFrames: number;
  maxFrameBytes: number;
  maxBufferedBytes: number;
  connectionsPerAddress: number;
  pingMs: number;
  idleMs: number;
  /** Messages of the venue's own ops waiting or running per connection (see `ops`). */
  opsQueued: number;
  /** The largest frame of a venue op once the connection has sent `auth` (others: `maxFrameBytes`). */
  opFrameBytes: number;
}

export const DEFAULT_STREAM_LIMITS: StreamLimits = {
  subscriptions: 50,
  messagesPerSecond: 20,
  burst: 40,
  invalidFrames: 10,
  maxFrameBytes: 4_096,
  maxBufferedBytes: 4 * 1024 * 1024,
  connectionsPerAddress: 100,
  pingMs: 20_000,
  idleMs: 60_000,
  opsQueued: 16,
  opFrameBytes: 32_768,
};

/** A refusal of `auth`, in the venue's words (its code and a message that names no secret). */
export interface AuthRefusal {
  code: number;
  msg: string;
}

/** What a venue op is handed with its message. */
export interface StreamOpContext<S> {
  /** The message's `id` (checked: absent, or 1 to 64 characters). */
  id: string | undefined;
  /** What `authenticate` answered for this connection; undefined before a successful `auth`. */
  session: S | undefined;
  peer: string;
  /**
   * Resolves once every earlier op of the connection is ordered or done: the op awaits it before its
   * effect (handing its command to the engine), and may check its message before.
   */
  turn: Promise<void>;
  /**
   * The op calls this once its effect is ordered (a command handed to the engine, which applies
   * commands in the order it receives them): the connection's next op may take its turn then,
   * before this one's answer, which still leaves in order. An op that never calls it holds the lane
   * until done.
   */
  ordered(): void;
}

/** An op of the venue's own (`order` on the perp API): its answer is a frame of its choosing. */
export interface StreamOp<S> {
  /** The frame (JSON text, or an object to serialise) answering `msg`; a throw answers an error frame. */
  handle(msg: Record<string, unknown>, ctx: StreamOpContext<S>): Promise<string | Record<string, unknown>>;
  /** The frame answering a message of this op that the endpoint refuses itself (too many waiting). */
  refused(id: string | undefined, code: number, msg: string): string | Record<string, unknown>;
}

/** One set of a venue's streams: its hub and its symbols. */
export interface StreamRoute {
  hub: StreamHub;
  isSymbol(symbol: string): boolean;
}

/** The route a connection is on, as `authenticate` is shown it. */
export interface StreamConnectionRoute {
  route: StreamRoute;
  /** The URL named it, or the connection subscribed on it: an `auth` may no longer move the connection. */
  fixed: boolean;
}

/** The upgrade's query named something the venue does not serve: refused with HTTP 400 and this text. */
export class StreamUpgradeRefusal extends Error {}

export interface StreamEndpointOptions<S extends { account: string } = { account: string }> {
  /** Paths the endpoint answers (the service prefix included). */
  paths: readonly string[];
  /** The default route's hub and symbols (the only ones without `routeOf`). */
  hub: StreamHub;
  catalog: ChannelCatalog;
  isSymbol(symbol: string): boolean;
  /**
   * A venue with several sets of streams: the route the upgrade's query names (undefined: the
   * default, `hub` and `isSymbol`); a StreamUpgradeRefusal thrown refuses the upgrade (HTTP 400).
   */
  routeOf?(query: URLSearchParams): StreamRoute | undefined;
  /**
   * Checks an `auth` frame; resolves to the account whose private streams the connection may read,
   * and whatever else the venue's ops need of the session (handed to them as `session`). With
   * `routeOf`, it is shown the connection's route and may answer another (`route`), which the
   * connection then takes (only while the route is not fixed: the venue refuses otherwise).
   */
  authenticate(frame: Record<string, unknown>, peer: string | undefined, connection: StreamConnectionRoute): Promise<S & { route?: StreamRoute }>;
  /** The venue's code and message for a failed `auth` (never a secret). */
  authRefusal(err: unknown): AuthRefusal;
  codes: StreamCodes;
  limits?: Partial<StreamLimits>;
  logger: Pick<Logger, 'info' | 'warn' | 'error'>;
  /** The venue's own ops by name (not subscribe, unsubscribe, auth or ping). */
  ops?: Readonly<Record<string, StreamOp<S>>>;
}

const ID_MAX = 64;

function validId(id: unknown): boolean {
  return typeof id === 'string' && id.length > 0 && id.length <= ID_MAX;
}

class FrameError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

export interface StreamEndpoint {
  /** Open connections (tests, metrics). */
  connections(): number;
  /**
   * Drops every open connection as a real disconnect looks to its client (the sandbox's
   * `stream-drop` fault): `close` sends 1012 "service restart", as a venue restarting does;
   * `terminate` cuts the socket without a close frame (the client reports 1006). Answers how many.
   */
  drop(mode: StreamDropMode): number;
  close(): Promise<void>;
}

const BUILT_IN_OPS = ['subscribe', 'unsubscribe', 'auth', 'ping'];

export function attachStreamEndpoint<S extends { account: string }>(app: FastifyInstance, opts: StreamEndpointOptions<S>): StreamEndpoint {
  const limits = { ...DEFAULT_STREAM_LIMITS, ...opts.limits };
  const { codes, hub, catalog, logger } = opts;
  const ops = new Map(Object.entries(opts.ops ?? {}));
  for (const name of ops.keys()) if (BUILT_IN_OPS.includes(name)) throw new Error(`stream endpoint: op ${name} is built in`);
  const opNames = [...BUILT_IN_OPS, ...ops.keys()].join(', ');
  // Frames above maxFrameBytes are refused below unless they are an authenticated venue op.
  const maxPayload = ops.size > 0 ? Math.max(limits.maxFrameBytes, limits.opFrameBytes) : limits.maxFrameBytes;
  const wss = new WebSocketServer({ noServer: true, maxPayload, perMessageDeflate: false });
  const perAddress = new Map<string, number>();
  // Each served connection's drop (see `drop`), removed at its cleanup.
  const droppers = new Set<(mode: StreamDropMode) => void>();
  const paths = new Set(opts.paths);
  // Each open connection's subscriptions, counted by channel at scrape time only.
  const api = apiLabelOf(app);
  const live = new Set<Map<string, { channel: string }>>();
  const untrack = trackStreamEndpoint({
    api,
    connections: () => wss.clients.size,
    subscriptions() {
      const by = new Map<string, number>();
      for (const subs of live) for (const s of subs.values()) by.set(s.channel, (by.get(s.channel) ?? 0) + 1);
      return by;
    },
  });

  function onUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    if (!paths.has(path)) {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    // Production behind trusted proxies: a WebSocket that did not reach the proxy over TLS is refused like a request.
    const refusal = upgradeRefusalOf(app, req);
    if (refusal) {
      socket.end(`HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(refusal.message)}\r\n\r\n${refusal.message}`);
      return;
    }
    let named: StreamRoute | undefined;
    if (opts.routeOf !== undefined && q !== -1) {
      try {
        named = opts.routeOf(new URLSearchParams(url.slice(q + 1)));
      } catch (err) {
        if (!(err instanceof StreamUpgradeRefusal)) throw err;
        socket.end(`HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(err.message)}\r\n\r\n${err.message}`);
        return;
      }
    }
    const peer = req.socket.remoteAddress ?? 'unknown';
    const open = perAddress.get(peer) ?? 0;
    if (open >= limits.connectionsPerAddress) {
      socket.end('HTTP/1.1 429 Too Many Requests\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => serve(ws, peer, named));
  }
  app.server.on('upgrade', onUpgrade);
  const drop = (mode: StreamDropMode): number => {
    const all = [...droppers];
    for (const d of all) d(mode);
    return all.length;
  };
  // An API with injected faults (the sandbox's) can drop this endpoint's connections.
  const faults = requestFaultsOf(app);
  const detachFaults = faults?.source.attachStream?.(faults.api, { drop }) ?? (() => undefined);
  // Upgraded sockets would hold the HTTP server's close open: they go first.
  app.addHook('preClose', async () => {
    untrack();
    detachFaults();
    for (const ws of wss.clients) ws.close(1001, 'server shutting down');
  });

  const defaultRoute: StreamRoute = { hub, isSymbol: opts.isSymbol };

  function serve(ws: WebSocket, peer: string, named: StreamRoute | undefined): void {
    perAddress.set(peer, (perAddress.get(peer) ?? 0) + 1);
    // The connection's set of streams: fixed once named by the URL or subscribed on.
    const conn: StreamConnectionRoute = { route: named ?? defaultRoute, fixed: named !== undefined };
    const subs = new Map<string, { channel: string; subject: string; hub: StreamHub }>();
    live.add(subs);
    let account: string | undefined;
    let session: S | undefined;
    let authSent = false;
    let authenticating = false;
    let closed = false;
    let invalid = 0;
    let tokens = limits.burst;
    let refilled = Date.now();
    let heard = Date.now();
    let queue: Promise<void> = Promise.resolve();
    // The venue ops' lane (see the header): its own order, never holding up the queue above.
    let opLane: Promise<void> = Promise.resolve();
    let answered: Promise<void> = Promise.resolve();
    let opsWaiting = 0;

    const send = (f: Buffer | string) => {
      if (closed) return recordDroppedFrame(api, 'closed');
      if (ws.bufferedAmount > limits.maxBufferedBytes) {
        recordDroppedFrame(api, 'slow_consumer');
        shut('too many unread messages: read faster or subscribe to less');
        return;
      }
      // Text frames (contract.md §C), also for the hub's shared Buffers, which ws would send as binary.
      ws.send(f, { binary: false });
    };
    const error = (id: unknown, code: number, msg: string) =>
      send(JSON.stringify({ type: 'error', ...(id !== undefined ? { id } : {}), code, msg }));
    // A dropped connection stops taking frames at once, as a shut one does, whatever its client does next.
    const dropper = (mode: StreamDropMode) => {
      if (closed) return;
      if (mode === 'terminate') ws.terminate();
      else ws.close(SANDBOX_STREAM_DROP_CLOSE.code, SANDBOX_STREAM_DROP_CLOSE.reason);
      cleanup();
    };
    droppers.add(dropper);
    const shut = (reason: string) => {
      if (closed) return;
      // Sent before the close frame, so the client reads the reason in the same place as every error.
      ws.close(1008, reason.slice(0, 120));
      cleanup();
    };
    const sink: StreamSink = {
      send,
      dropped(key) {
        recordStreamReset(api);
        subs.delete(key);
      },
    };
    const cleanup = () => {
      if (closed) return;
      closed = true;
      droppers.delete(dropper);
      clearInterval(timer);
      for (const s of subs.values()) s.hub.unsubscribe(s.channel, s.subject, sink);
      subs.clear();
      live.delete(subs);
      const n = (perAddress.get(peer) ?? 1) - 1;
      if (n <= 0) perAddress.delete(peer);
      else perAddress.set(peer, n);
    };

    const timer = setInterval(() => {
      if (Date.now() - heard > limits.idleMs) {
        error(undefined, codes.invalid, `nothing received for ${limits.idleMs / 1000} s`);
        shut(`silent for ${limits.idleMs / 1000} s`);
        return;
      }
      ws.ping();
    }, limits.pingMs);
    timer.unref();

    ws.on('pong', () => {
      heard = Date.now();
    });
    ws.on('close', cleanup);
    ws.on('error', (err) => {
      logger.warn({ err: { message: err.message }, peer }, 'stream connection error');
      cleanup();
    });
    ws.on('message', (raw, isBinary) => {
      heard = Date.now();
      const t = Date.now();
      tokens = Math.min(limits.burst, tokens + ((t - refilled) / 1000) * limits.messagesPerSecond);
      refilled = t;
      if (tokens < 1) {
        error(undefined, codes.rateLimited, `more than ${limits.messagesPerSecond} messages a second`);
        shut('message rate limit exceeded');
        return;
      }
      tokens -= 1;
      // Only a venue op may be larger, once the connection has sent `auth` (it may still be
      // running: the op waits for its outcome, and is refused by the venue if it failed).
      const oversize = (Array.isArray(raw) ? raw.reduce((n, b) => n + b.length, 0) : raw.byteLength) > limits.maxFrameBytes;
      if (oversize && (ops.size === 0 || !authSent)) return tooBig();
      let msg: Record<string, unknown>;
      try {
        if (isBinary) throw new FrameError(codes.invalid, 'binary frames are not accepted: send JSON text');
        const parsed: unknown = JSON.parse(raw.toString());
        if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new FrameError(codes.invalid, 'a message is a JSON object');
        msg = parsed as Record<string, unknown>;
      } catch (err) {
        if (oversize) return tooBig();
        refuse(undefined, err instanceof FrameError ? err : new FrameError(codes.invalid, 'a message is a JSON object'));
        return;
      }
      const op = typeof msg.op === 'string' ? ops.get(msg.op) : undefined;
      if (op !== undefined) return enqueueOp(op, msg);
      if (oversize) return tooBig();
      if (msg.op === 'auth') authSent = true;
      // One message at a time, in order: a subscribe sent right after `auth` sees its outcome.
      queue = queue.then(() => handle(msg)).catch((err) => refuse(typeof msg.id === 'string' ? msg.id : undefined, err));
    });

    function tooBig(): void {
      // As ws answers a frame above maxPayload.
      if (closed) return;
      ws.close(1009, 'message too big');
      cleanup();
    }

    function enqueueOp(op: StreamOp<S>, msg: Record<string, unknown>): void {
      const id = msg.id;
      if (id !== undefined && !validId(id)) return refuse(undefined, new FrameError(codes.invalid, `id: a string of 1 to ${ID_MAX} characters`));
      const opId = id as string | undefined;
      const answer = (frame: string | Record<string, unknown>) => send(typeof frame === 'string' ? frame : JSON.stringify(frame));
      if (opsWaiting >= limits.opsQueued) {
        answer(op.refused(opId, codes.rateLimited, `more than ${limits.opsQueued} ${String(msg.op)} messages waiting on this connection: wait for their results`));
        return;
      }
      opsWaiting += 1;
      // After every message received before this one (an `auth` included); its turn comes once the
      // ops before it are ordered: a trading firm pipelines orders on one connection, their checks
      // (signature recovery, nonce claims) running together, each applied in the order sent.
      const turn = opLane;
      let ordered!: () => void;
      const isOrdered = new Promise<void>((resolve) => (ordered = resolve));
      const run = queue.then(() => op.handle(msg, { id: opId, session, peer, turn, ordered }));
      const ended = run.then(
        () => undefined,
        () => undefined,
      );
      // Never before this op's own turn: an op that fails its checks early must not let a later one
      // overtake the ops before it.
      opLane = turn.then(() => Promise.race([isOrdered, ended]));
      // Answers leave in the order the messages came.
      const earlier = answered;
      answered = earlier
        .then(() => run)
        .then(answer, (err) => refuse(opId, err))
        .catch((err) => logger.error({ err }, 'stream endpoint: an op answer failed'))
        .finally(() => {
          opsWaiting -= 1;
        });
    }

    function refuse(id: unknown, err: unknown): void {
      if (err instanceof FrameError) {
        if (err.code === codes.invalid && ++invalid > limits.invalidFrames) {
          error(id, err.code, err.message);
          shut('too many invalid messages');
          return;
        }
        error(id, err.code, err.message);
        return;
      }
      if (err instanceof StreamRefusal) {
        error(id, err.reason === 'gone' ? codes.gone : codes.unavailable, err.message);
        return;
      }
      logger.error({ err }, 'stream endpoint: unexpected failure');
      error(id, codes.unavailable, 'internal error');
    }

    async function handle(msg: Record<string, unknown>): Promise<void> {
      const id = msg.id;
      if (id !== undefined && !validId(id)) throw new FrameError(codes.invalid, `id: a string of 1 to ${ID_MAX} characters`);
      switch (msg.op) {
        case 'ping':
          send(JSON.stringify({ type: 'pong', ...(id !== undefined ? { id } : {}) }));
          return;
        case 'auth':
          return auth(id as string | undefined, msg);
        case 'subscribe':
          return subscribe(id as string | undefined, msg);
        case 'unsubscribe':
          return unsubscribe(id as string | undefined, msg);
        default:
          throw new FrameError(codes.invalid, `op: must be one of ${opNames}`);
      }
    }

    async function auth(id: string | undefined, msg: Record<string, unknown>): Promise<void> {
      if (account !== undefined || authenticating) throw new FrameError(codes.invalid, 'auth: this connection is already authenticated');
      authenticating = true;
      try {
        const who = await opts.authenticate(msg, peer, { ...conn });
        // Routes are told apart by their hub (the default route is built here from `hub`).
        if (who.route !== undefined && who.route.hub !== conn.route.hub) {
          // The venue answers another route only while none is fixed; checked again here.
          if (conn.fixed) throw new Error('stream endpoint: auth moved a connection whose route is fixed');
          conn.route = who.route;
        }
        account = who.account;
        session = who;
        send(JSON.stringify({ type: 'authenticated', ...(id !== undefined ? { id } : {}), account }));
      } catch (err) {
        const r = opts.authRefusal(err);
        recordAuthRefusal(api, 'stream', err);
        // The cause as the check worded it (never a secret or a signature), for the operator: an
        // opaque refusal's own `reason` (UnauthorizedError), whose message says only `Unauthorized`.
        const reason = typeof (err as { reason?: unknown })?.reason === 'string' ? (err as { reason: string }).reason : err instanceof Error ? err.message : String(err);
        logger.info({ peer, code: r.code, reason }, 'stream auth refused');
        throw new FrameError(r.code, r.msg);
      } finally {
        authenticating = false;
      }
    }

    function target(msg: Record<string, unknown>): { channel: string; subject: string; symbol?: string; key: string; isPrivate: boolean } {
      const channel = msg.channel;
      if (typeof channel !== 'string') throw new FrameError(codes.invalid, 'channel: required');
      const spec = catalog.get(channel);
      if (spec === undefined) throw new FrameError(codes.invalid, `channel: unknown (one of ${catalog.list().map((c) => c.name).join(', ')})`);
      if (spec.scope === 'private') {
        if (msg.symbol !== undefined) throw new FrameError(codes.invalid, 'symbol: private channels take none');
        if (account === undefined) throw new FrameError(codes.authRequired, 'auth first: private channels need an authenticated connection');
        return { channel, subject: account, key: `${channel} ${account}`, isPrivate: true };
      }
      const symbol = msg.symbol;
      if (typeof symbol !== 'string' || symbol.length === 0) throw new FrameError(codes.invalid, 'symbol: required for this channel');
      if (symbol.length > 32 || !conn.route.isSymbol(symbol)) throw new FrameError(codes.unknownSymbol, 'symbol: unknown');
      return { channel, subject: symbol, symbol, key: `${channel} ${symbol}`, isPrivate: false };
    }

    async function subscribe(id: string | undefined, msg: Record<string, unknown>): Promise<void> {
      const t = target(msg);
      const since = msg.since;
      if (since !== undefined) {
        if (!t.isPrivate) throw new FrameError(codes.invalid, 'since: private channels only');
        if (typeof since !== 'number' || !Number.isSafeInteger(since) || since < 0) throw new FrameError(codes.invalid, 'since: a non-negative integer seq');
      }
      if (subs.has(t.key)) throw new FrameError(codes.invalid, 'already subscribed to this stream');
      if (subs.size >= limits.subscriptions) {
        error(id, codes.rateLimited, `more than ${limits.subscriptions} subscriptions`);
        shut('subscription limit exceeded');
        return;
      }
      // From the first subscribe on, the connection stays on its route (an `auth` after it cannot move it).
      conn.fixed = true;
      const on = conn.route.hub;
      subs.set(t.key, { channel: t.channel, subject: t.subject, hub: on });
      try {
        await on.subscribe({ id, channel: t.channel, subject: t.subject, symbol: t.symbol, since: since as number | undefined }, sink);
      } catch (err) {
        subs.delete(t.key);
        throw err;
      }
      // The connection went while the snapshot was read.
      if (closed) on.unsubscribe(t.channel, t.subject, sink);
    }

    async function unsubscribe(id: string | undefined, msg: Record<string, unknown>): Promise<void> {
      const t = target(msg);
      const s = subs.get(t.key);
      if (s === undefined) throw new FrameError(codes.invalid, 'not subscribed to this stream');
      subs.delete(t.key);
      s.hub.unsubscribe(t.channel, t.subject, sink);
      send(JSON.stringify({ type: 'unsubscribed', ...(id !== undefined ? { id } : {}), channel: t.channel, ...(t.symbol !== undefined ? { symbol: t.symbol } : {}) }));
    }
  }

  return {
    connections: () => wss.clients.size,
    drop,
    async close() {
      untrack();
      detachFaults();
      app.server.off('upgrade', onUpgrade);
      for (const ws of wss.clients) ws.close(1001, 'server shutting down');
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}
