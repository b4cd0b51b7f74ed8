/**
 * The WebSocket stream client of both APIs (contract.md §C, docs/streams.md).
 *
 * One connection carries every subscription of the client. Each stream (a channel and a symbol, or a
 * private channel of the key's account) keeps the last `seq` it delivered, so that:
 * - after a reconnect the client re-authenticates, then subscribes again: private streams with
 *   `since` = that seq (the server replays what was missed: nothing lost, nothing repeated), public
 *   streams without (a fresh snapshot, flagged as such);
 * - an update that does not follow its stream's seq is never delivered: the stream is subscribed
 *   again (a resume for a private stream, a fresh snapshot for a public one); an update already seen
 *   is dropped;
 * - a `since` the server no longer retains (perp 10003, stock 410), or a stream the server restarted,
 *   gives a fresh snapshot flagged `continuityLost`.
 *
 * Browser-safe: WebCrypto for the `auth` signature, the global WebSocket when there is one, else the
 * `ws` package loaded on demand. No `node:` import.
 */
import { StreamClosedError, StreamError, StreamOrderError, type StreamOrderAction } from './stream-error.ts';
import type { StreamCancelBody } from '@tokex/contract';
import type { BatchOrdersResult, OrderView, PlacedOrder, SignedMessage } from './perp-types.ts';
import {
  createHmacSigner,
  nextStreamAuthTs,
  PERP_STREAM_PATH,
  randomNonce,
  signPerpStreamAuth,
  signStockStreamAuth,
  STOCK_STREAM_PATH,
  type HmacSigner,
} from './stream-sign.ts';

export { StreamClosedError, StreamError, StreamOrderError, type StreamClientErrorCode, type StreamOrderAction } from './stream-error.ts';
export { nextStreamAuthTs, PERP_STREAM_PATH, STOCK_STREAM_PATH, stockStreamPayload } from './stream-sign.ts';

// ------------------------------------------------------------------ public types

export type StreamApi = 'perp' | 'stock';

export type KlineInterval = '1m' | '5m' | '15m' | '1h' | '4h' | '1d';
export type PerpPublicChannel = 'depth' | 'trades' | 'tickers' | 'mark' | `klines:${KlineInterval}`;
export type PerpPrivateChannel = 'orders' | 'fills' | 'positions' | 'account';
export type StockPublicChannel = 'quotes' | `klines:${string}` | 'corporateActions';
export type StockPrivateChannel = 'orders' | 'operations' | 'balances';

/** The part of the WebSocket API the client uses: the browser's, Node 22's global, and `ws`'s all fit. */
export interface WebSocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: string, listener: (event: any) => void): void;
  /** `ws` only: drop the socket without the closing handshake (used for a dead connection). */
  terminate?(): void;
}
export type WebSocketConstructorLike = new (url: string) => WebSocketLike;

export type StreamLogLevel = 'debug' | 'info' | 'warn' | 'error';
/** Called for what the client does and meets; never given a secret or a signature. */
export type StreamLogger = (level: StreamLogLevel, message: string, fields?: Record<string, unknown>) => void;

export interface ReconnectOptions {
  /** First retry delay bound, ms (default 250). The delay is random in [0, min(cap, base × 2^attempt)]. */
  baseMs?: number;
  /** Delay bound, ms (default 10,000). */
  capMs?: number;
  /** Reconnect attempts in a row (no connection lasting stableAfterMs between them) before the client gives up and closes (default: never). */
  maxAttempts?: number;
  /** A connection open this long resets the backoff (default 5,000 ms). */
  stableAfterMs?: number;
}

export interface StreamClientOptions {
  /** `ws://host:port/v4/public/ws` (perp) or `ws://host:port[prefix]/api/v1/ws` (stock). */
  url: string;
  /** Which API's `auth` frame and codes; inferred from the URL's path when omitted. */
  api?: StreamApi;
  /** Credentials for the private channels (READ permission suffices). */
  apiKey?: string;
  apiSecret?: string;
  /**
   * Stock only: the chain whose streams the connection reads, as StockClient's `chainId` (the
   * `x-api-chain-id` of REST): sent as the URL's `?chainId=` (public channels) and in the `auth`
   * frame (the key needs a scope for it). Omitted: the deployment's first chain (docs/streams.md,
   * "Several chains").
   */
  chainId?: number | string;
  /** Stock only: the product (`x-api-p`, exact case) named in the `auth` frame. Omitted: the server's. */
  product?: string;
  /** A WebSocket constructor; default the global one, else the `ws` package. */
  WebSocket?: WebSocketConstructorLike;
  /** Added to Date.now() for the `auth` frame's `ts` (server time minus local time), ms; or a function giving it. */
  clockOffsetMs?: number | (() => number);
  reconnect?: ReconnectOptions;
  /** Application-level `{"op":"ping"}` period, ms (default 15,000). */
  pingIntervalMs?: number;
  /** A connection that sent no frame for this long is dead: closed and reopened (default 45,000 ms). */
  idleTimeoutMs?: number;
  /**
   * Outgoing messages a second and burst (default 15 and 30), under the server's 20 and 40 so that
   * re-subscribing many streams after a reconnect is never cut off.
   */
  maxMessagesPerSecond?: number;
  maxBurst?: number;
  logger?: StreamLogger;
  /** Source of randomness for the backoff jitter, in [0, 1) (default Math.random). */
  random?: () => number;
  /** How long an order request (`placeOrder`, …) waits for its result, connecting included (default 10,000 ms). */
  orderTimeoutMs?: number;
}

/** Options of one order request over the perpetual stream. */
export interface StreamOrderOptions {
  /** How long to wait for the result, connecting and `auth` included (default: the client's `orderTimeoutMs`). */
  timeoutMs?: number;
}

/** Why a snapshot is delivered. Every snapshot but the first replaces what the handler built so far. */
export type SnapshotReason =
  /** The first snapshot of the subscription. */
  | 'initial'
  /** After a reconnect (public streams; a private stream whose resume was not possible says `not-retained`). */
  | 'reconnect'
  /** The client saw a seq gap on a public stream and subscribed again. */
  | 'gap'
  /** The server no longer retains the updates after the last seq seen (perp 10003, stock 410 on `since`). */
  | 'not-retained'
  /** The server restarted the stream (perp 10003, stock 410 naming the channel). */
  | 'restarted';

export interface SnapshotInfo {
  reason: SnapshotReason;
  /**
   * True for every snapshot but the first: updates between the previous delivery and this snapshot
   * were not delivered one by one (the snapshot already contains them). Replace your state with it.
   */
  continuityLost: boolean;
  /** The last seq delivered before this snapshot, if any. */
  previousSeq: number | undefined;
}

export interface StreamHandlers<S = unknown, U = S> {
  /** The stream's state holding every update up to `seq`. */
  onSnapshot?(data: S, seq: number, info: SnapshotInfo): void;
  /** The next update, `seq` = the previous one + 1, never repeated. */
  onUpdate?(data: U, seq: number): void;
  /**
   * A private stream resumed after a reconnect (or a gap) from `seq`, the last seq delivered: the
   * missed updates follow through onUpdate, no snapshot.
   */
  onResume?(seq: number): void;
  /** The subscription ended on a refusal (unknown symbol, auth refused, ...). Not called after unsubscribe() or close(). */
  onError?(error: StreamError): void;
}

export interface PrivateSubscribeOptions {
  symbol?: undefined;
}
export interface PublicSubscribeOptions {
  symbol: string;
}

export type SubscriptionState = 'pending' | 'subscribing' | 'active' | 'ended';

export interface StreamSubscription {
  readonly channel: string;
  readonly symbol: string | undefined;
  /** Private streams have no symbol and need credentials. */
  readonly isPrivate: boolean;
  /** The last seq delivered (snapshot, resume or update). */
  readonly lastSeq: number | undefined;
  readonly state: SubscriptionState;
  /**
   * Resolves at the first snapshot (or resume); rejects with StreamError if the server refuses the
   * subscription, with `UNSUBSCRIBED` on an early unsubscribe(), with StreamClosedError on close().
   */
  readonly ready: Promise<void>;
  /** Stops the handlers at once; resolves when the server confirmed (or the connection is gone). */
  unsubscribe(): Promise<void>;
}

export type ConnectionState = 'idle' | 'connecting' | 'open' | 'reconnecting' | 'closed';

export interface StreamClientEvents {
  state: (state: ConnectionState) => void;
  /** The socket opened (before `auth`). */
  open: () => void;
  /** The server accepted `auth`: `account` is the address whose private streams this key reads. */
  authenticated: (account: string) => void;
  /** The connection was lost; the next attempt starts after `delayMs`. */
  reconnecting: (info: { attempt: number; delayMs: number; code: number; reason: string }) => void;
  /** A connection-level error: `auth` refused, a server error frame not tied to a subscription, a failed connection. */
  error: (error: StreamError) => void;
  /** The client stopped for good (close(), or maxAttempts reached). */
  closed: () => void;
}

// ------------------------------------------------------------------ internals

interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(err: unknown): void;
  settled: boolean;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // Nobody has to await these: a rejection nobody reads must not crash the process.
  promise.catch(() => {});
  const d: Deferred<T> = {
    promise,
    settled: false,
    resolve(v) {
      if (d.settled) return;
      d.settled = true;
      resolve(v);
    },
    reject(e) {
      if (d.settled) return;
      d.settled = true;
      reject(e);
    },
  };
  return d;
}

type Timer = ReturnType<typeof setTimeout>;

const OPEN = 1;
const CLOSED = 3;

interface ApiCodes {
  gone: readonly number[];
  unavailable: readonly number[];
  rateLimited: readonly number[];
}
const CODES: Record<StreamApi, ApiCodes> = {
  perp: { gone: [10003], unavailable: [50002], rateLimited: [42900] },
  stock: { gone: [410], unavailable: [500], rateLimited: [429] },
};
const ANY_CODES: ApiCodes = {
  gone: [...CODES.perp.gone, ...CODES.stock.gone],
  unavailable: [...CODES.perp.unavailable, ...CODES.stock.unavailable],
  rateLimited: [...CODES.perp.rateLimited, ...CODES.stock.rateLimited],
};

/** An order request in flight: its result settles `done`. */
interface PendingOrder {
  id: string;
  action: StreamOrderAction;
  done: Deferred<unknown>;
  /** Handed to the socket (the server may have it), as opposed to waiting in the outbox. */
  sent: boolean;
  timer: Timer | undefined;
}

type Request =
  | { kind: 'auth' }
  | { kind: 'subscribe'; sub: Subscription; since: number | undefined }
  | { kind: 'unsubscribe'; done?: Deferred<void> }
  | { kind: 'order'; order: PendingOrder };

/** A frame waiting for the rate limit, and what to do once it is handed to the socket. */
interface Outgoing {
  text: string;
  onSent?: () => void;
}

const keyOf = (channel: string, symbol: string | undefined) => (symbol === undefined ? channel : `${channel} ${symbol}`);

/** The API a URL's path names, if it does. */
export function streamApiOf(url: string): StreamApi | undefined {
  let path: string;
  try {
    path = new URL(url).pathname.replace(/\/+$/, '');
  } catch {
    return undefined;
  }
  if (path.endsWith(PERP_STREAM_PATH)) return 'perp';
  if (path.endsWith(STOCK_STREAM_PATH)) return 'stock';
  return undefined;
}

async function defaultWebSocket(): Promise<WebSocketConstructorLike> {
  const g = (globalThis as { WebSocket?: unknown }).WebSocket;
  if (typeof g === 'function') return g as WebSocketConstructorLike;
  try {
    // Only reached outside browsers (they all have a global WebSocket): Node 20 has none.
    const mod = (await import(/* webpackIgnore: true */ 'ws')) as unknown as { WebSocket?: unknown; default?: unknown };
    const ctor = mod.WebSocket ?? mod.default;
    if (typeof ctor === 'function') return ctor as WebSocketConstructorLike;
  } catch {
    // reported below
  }
  throw new StreamError('NO_WEBSOCKET', 'no WebSocket implementation: no global WebSocket and the ws package could not be loaded; pass the WebSocket option');
}

class Subscription implements StreamSubscription {
  state: SubscriptionState = 'pending';
  lastSeq: number | undefined;
  /** Id of the subscribe in flight on the current connection. */
  reqId: string | undefined;
  /** The reason the next snapshot will carry. */
  nextReason: SnapshotReason = 'initial';
  /** The next subscribe goes without `since` even for a private stream (since not retained, stream restarted). */
  fresh = false;
  retries = 0;
  retryTimer: Timer | undefined;
  readonly readyD = deferred<void>();

  constructor(
    private readonly client: { unsubscribe(sub: Subscription): Promise<void> },
    readonly channel: string,
    readonly symbol: string | undefined,
    readonly handlers: StreamHandlers<any, any>,
  ) {}

  get isPrivate(): boolean {
    return this.symbol === undefined;
  }
  get key(): string {
    return keyOf(this.channel, this.symbol);
  }
  get ready(): Promise<void> {
    return this.readyD.promise;
  }
  unsubscribe(): Promise<void> {
    return this.client.unsubscribe(this);
  }
}

// ------------------------------------------------------------------ the client

export class StreamClient<PublicChannel extends string = string, PrivateChannel extends string = string> {
  readonly url: string;
  readonly api: StreamApi | undefined;
  /** Stock: the chain the client reads (undefined: the server's first chain). */
  readonly chainId: number | undefined;
  /** Stock: the product its `auth` names (undefined: the server's). */
  readonly product: string | undefined;

  /** `url` with the chain's `?chainId=` when one is set. */
  readonly #socketUrl: string;
  readonly #apiKey: string | undefined;
  readonly #signer: HmacSigner | undefined;
  readonly #WebSocket: WebSocketConstructorLike | undefined;
  readonly #clockOffset: () => number;
  readonly #backoff: Required<ReconnectOptions>;
  readonly #pingMs: number;
  readonly #idleMs: number;
  readonly #rate: number;
  readonly #burst: number;
  readonly #log: StreamLogger;
  readonly #random: () => number;
  readonly #codes: ApiCodes;
  readonly #orderTimeoutMs: number;

  #state: ConnectionState = 'idle';
  #socket: WebSocketLike | undefined;
  #openedAt: number | undefined;
  #attempt = 0;
  #nextId = 1;
  #subs = new Map<string, Subscription>();
  #requests = new Map<string, Request>();
  #auth: 'none' | 'pending' | 'ok' | 'failed' = 'none';
  #authError: StreamError | undefined;
  #account: string | undefined;
  #connectWaiters: Deferred<void>[] = [];
  #listeners = new Map<keyof StreamClientEvents, Set<(...args: any[]) => void>>();
  #outbox: Outgoing[] = [];
  #tokens = 0;
  #refilled = 0;
  #reconnectTimer: Timer | undefined;
  #pingTimer: ReturnType<typeof setInterval> | undefined;
  #idleTimer: Timer | undefined;
  #drainTimer: Timer | undefined;
  #closing: Promise<void> | undefined;

  constructor(options: StreamClientOptions) {
    if (typeof options.url !== 'string' || options.url === '') throw new TypeError('StreamClient: url is required');
    this.url = options.url;
    this.api = options.api ?? streamApiOf(options.url);
    if ((options.apiKey === undefined) !== (options.apiSecret === undefined)) {
      throw new TypeError('StreamClient: apiKey and apiSecret go together');
    }
    if (options.apiKey !== undefined && options.apiSecret !== undefined) {
      if (this.api === undefined) throw new TypeError('StreamClient: api ("perp" or "stock") is required to authenticate when the URL does not name the API');
      this.#apiKey = options.apiKey;
      this.#signer = createHmacSigner(options.apiSecret);
    }
    if ((options.chainId !== undefined || options.product !== undefined) && this.api !== 'stock') {
      throw new TypeError('StreamClient: chainId and product are options of the stock streams');
    }
    this.chainId = options.chainId === undefined ? undefined : chainIdOf(options.chainId);
    if (options.product !== undefined && (typeof options.product !== 'string' || options.product === '')) throw new TypeError('StreamClient: product must be a non-empty string');
    this.product = options.product;
    this.#socketUrl = this.chainId === undefined ? this.url : withQuery(this.url, 'chainId', String(this.chainId));
    this.#WebSocket = options.WebSocket;
    const offset = options.clockOffsetMs ?? 0;
    this.#clockOffset = typeof offset === 'function' ? offset : () => offset;
    this.#backoff = {
      baseMs: options.reconnect?.baseMs ?? 250,
      capMs: options.reconnect?.capMs ?? 10_000,
      maxAttempts: options.reconnect?.maxAttempts ?? Number.POSITIVE_INFINITY,
      stableAfterMs: options.reconnect?.stableAfterMs ?? 5_000,
    };
    this.#pingMs = options.pingIntervalMs ?? 15_000;
    this.#idleMs = options.idleTimeoutMs ?? 45_000;
    this.#rate = options.maxMessagesPerSecond ?? 15;
    this.#burst = options.maxBurst ?? 30;
    this.#log = options.logger ?? (() => {});
    this.#random = options.random ?? Math.random;
    this.#codes = this.api === undefined ? ANY_CODES : CODES[this.api];
    this.#orderTimeoutMs = options.orderTimeoutMs ?? 10_000;
  }

  /** The connection's state. */
  get state(): ConnectionState {
    return this.#state;
  }

  /** The account the current connection authenticated as, if it did. */
  get account(): string | undefined {
    return this.#account;
  }

  /** Live subscriptions (not ended). */
  get subscriptions(): StreamSubscription[] {
    return [...this.#subs.values()];
  }

  on<E extends keyof StreamClientEvents>(event: E, listener: StreamClientEvents[E]): () => void {
    let set = this.#listeners.get(event);
    if (set === undefined) this.#listeners.set(event, (set = new Set()));
    set.add(listener);
    return () => this.off(event, listener);
  }

  off<E extends keyof StreamClientEvents>(event: E, listener: StreamClientEvents[E]): void {
    this.#listeners.get(event)?.delete(listener);
  }

  /**
   * Opens the connection (subscribe() does it by itself). Resolves once the socket is open and, with
   * credentials, `auth` is accepted; rejects with the refusal if `auth` is refused, with
   * StreamClosedError on close(). A connection that cannot be opened is retried with backoff meanwhile.
   */
  connect(): Promise<void> {
    if (this.#state === 'closed') return Promise.reject(new StreamClosedError());
    if (this.#state === 'open' && (this.#signer === undefined || this.#auth === 'ok')) return Promise.resolve();
    if (this.#state === 'open' && this.#auth === 'failed') return Promise.reject(this.#authError);
    const d = deferred<void>();
    this.#connectWaiters.push(d);
    this.#start();
    return d.promise;
  }

  /**
   * Subscribes to a stream: a public channel with `{ symbol }`, a private channel (needs credentials)
   * with `{}`. Throws StreamError `DUPLICATE_SUBSCRIPTION` if this client already has that stream,
   * `NO_CREDENTIALS` for a private channel without apiKey/apiSecret, StreamClosedError after close().
   */
  subscribe<S = unknown, U = S>(channel: PublicChannel, options: PublicSubscribeOptions, handlers?: StreamHandlers<S, U>): StreamSubscription;
  subscribe<S = unknown, U = S>(channel: PrivateChannel, options?: PrivateSubscribeOptions, handlers?: StreamHandlers<S, U>): StreamSubscription;
  subscribe(channel: string, options: { symbol?: string } | undefined, handlers: StreamHandlers<any, any> = {}): StreamSubscription {
    if (this.#state === 'closed') throw new StreamClosedError();
    if (typeof channel !== 'string' || channel === '') throw new TypeError('subscribe: channel is required');
    const symbol = options?.symbol;
    if (symbol !== undefined && (typeof symbol !== 'string' || symbol === '')) throw new TypeError('subscribe: symbol must be a non-empty string');
    if (symbol === undefined && this.#signer === undefined) {
      throw new StreamError('NO_CREDENTIALS', `${channel}: a private channel (no symbol) needs apiKey and apiSecret`, undefined, channel);
    }
    const key = keyOf(channel, symbol);
    if (this.#subs.has(key)) {
      throw new StreamError('DUPLICATE_SUBSCRIPTION', `already subscribed to ${key} on this client`, undefined, channel, symbol);
    }
    const sub = new Subscription({ unsubscribe: (s) => this.#unsubscribe(s) }, channel, symbol, handlers);
    this.#subs.set(key, sub);
    this.#start();
    if (this.#socket !== undefined && this.#socket.readyState === OPEN) {
      if (!sub.isPrivate || this.#auth === 'ok') this.#sendSubscribe(sub);
      else if (this.#auth === 'failed') {
        const err = this.#authError!;
        // The caller gets the subscription object before its onError runs.
        queueMicrotask(() => this.#failSub(sub, err));
      }
    }
    return sub;
  }

  /**
   * Order entry over the perpetual stream (docs/streams.md "Order entry"): sends
   * `{"op":"order","id","action","body"}` once the connection is open and `auth` accepted (opening
   * it if need be), and resolves with the `result` frame's `data` (what the REST call answers), matched
   * by the request's id. Rejects with StreamOrderError: the API's code, message and data for a
   * refusal; `TIMEOUT` when no result came within `timeoutMs` (connecting included); `CONNECTION`
   * when the connection dropped before the result; the `auth` refusal's code when `auth` is refused.
   * Its `sent` says whether the server may have the request. A request is never sent twice. Rejects
   * with StreamClosedError after close(). The typed methods are PerpStreamClient's `placeOrder`,
   * `placeBatch`, `cancelOrder` and `amendOrder`.
   */
  sendOrder<T = unknown>(action: StreamOrderAction, body: unknown, options: StreamOrderOptions = {}): Promise<T> {
    if (this.api !== 'perp') return Promise.reject(new TypeError('sendOrder: order entry is a perpetual stream op'));
    if (this.#state === 'closed') return Promise.reject(new StreamClosedError());
    const id = this.#id('o');
    if (this.#signer === undefined) {
      return Promise.reject(new StreamOrderError('NO_CREDENTIALS', `${action}: orders need apiKey and apiSecret (TRADE permission)`, id, action, {}, false));
    }
    const timeoutMs = options.timeoutMs ?? this.#orderTimeoutMs;
    const order: PendingOrder = { id, action, done: deferred<unknown>(), sent: false, timer: undefined };
    order.timer = setTimeout(() => {
      if (this.#requests.get(id)?.kind === 'order') this.#requests.delete(id);
      const msg = order.sent
        ? `${action} ${id}: no result within ${timeoutMs} ms; it was sent and may have been applied`
        : `${action} ${id}: not sent, no authenticated connection within ${timeoutMs} ms`;
      this.#log('warn', 'order timed out', { id, action, sent: order.sent });
      order.done.reject(new StreamOrderError('TIMEOUT', msg, id, action, {}, order.sent ? 'unknown' : false));
    }, timeoutMs);
    const settled = (): void => clearTimeout(order.timer);
    order.done.promise.then(settled, settled);
    void this.#dispatchOrder(order, body);
    return order.done.promise as Promise<T>;
  }

  /** Waits for an authenticated connection, then sends the order on it (once). */
  async #dispatchOrder(order: PendingOrder, body: unknown): Promise<void> {
    while (!order.done.settled) {
      try {
        await this.connect();
      } catch (err) {
        if (err instanceof StreamClosedError) order.done.reject(err);
        else {
          const e = err instanceof StreamError ? err : new StreamError('CONNECTION', errorText(err));
          order.done.reject(new StreamOrderError(e.code, e.msg, order.id, order.action, {}, false));
        }
        return;
      }
      if (order.done.settled) return;
      // connect() resolved a moment ago: the connection may have gone since (then the next connect()
      // waits for a new one). A socket already closing takes the frame into its outbox, and its close
      // fails the order as never sent.
      if (this.#socket === undefined || this.#auth !== 'ok') continue;
      this.#requests.set(order.id, { kind: 'order', order });
      this.#send({ op: 'order', id: order.id, action: order.action, body }, () => {
        order.sent = true;
      });
      return;
    }
  }

  /** Stops everything: no reconnect afterwards; pending promises reject with StreamClosedError. */
  close(): Promise<void> {
    if (this.#closing !== undefined) return this.#closing;
    this.#closing = this.#shutdown(new StreamClosedError());
    return this.#closing;
  }

  // ---------------------------------------------------------------- connection

  #setState(state: ConnectionState): void {
    if (this.#state === state) return;
    this.#state = state;
    this.#emit('state', state);
  }

  #emit<E extends keyof StreamClientEvents>(event: E, ...args: Parameters<StreamClientEvents[E]>): void {
    for (const fn of [...(this.#listeners.get(event) ?? [])]) {
      try {
        fn(...args);
      } catch (err) {
        this.#log('error', `a "${event}" listener threw`, { error: errorText(err) });
      }
    }
  }

  #isClosed(): boolean {
    return this.#state === 'closed';
  }

  #start(): void {
    if (this.#state !== 'idle') return;
    this.#setState('connecting');
    void this.#open();
  }

  async #open(): Promise<void> {
    this.#reconnectTimer = undefined;
    if (this.#state === 'closed') return;
    let Ctor: WebSocketConstructorLike;
    try {
      Ctor = this.#WebSocket ?? (await defaultWebSocket());
    } catch (err) {
      const e = err instanceof StreamError ? err : new StreamError('NO_WEBSOCKET', errorText(err));
      this.#emit('error', e);
      if (this.#closing === undefined) this.#closing = this.#shutdown(e);
      return;
    }
    // close() may have run while the constructor was loading.
    if (this.#isClosed()) return;
    let ws: WebSocketLike;
    try {
      ws = new Ctor(this.#socketUrl);
    } catch (err) {
      // A URL the WebSocket refuses outright: retrying will not help.
      const e = new StreamError('CONNECTION', `cannot open ${this.url}: ${errorText(err)}`);
      this.#emit('error', e);
      if (this.#closing === undefined) this.#closing = this.#shutdown(e);
      return;
    }
    this.#socket = ws;
    this.#log('debug', 'connecting', { url: this.url });
    ws.addEventListener('open', () => {
      if (ws === this.#socket) this.#onOpen(ws);
    });
    ws.addEventListener('message', (ev: { data: unknown }) => {
      if (ws === this.#socket) this.#onMessage(ev.data);
    });
    ws.addEventListener('error', (ev: { message?: unknown; error?: unknown }) => {
      if (ws !== this.#socket) return;
      // The close event follows and drives the reconnect.
      const detail = typeof ev?.message === 'string' ? ev.message : ev?.error instanceof Error ? ev.error.message : 'WebSocket error';
      this.#log('warn', 'connection error', { error: detail });
    });
    ws.addEventListener('close', (ev: { code?: number; reason?: unknown }) => {
      if (ws === this.#socket) this.#onDisconnect(ev?.code ?? 1006, typeof ev?.reason === 'string' ? ev.reason : '');
    });
  }

  #onOpen(ws: WebSocketLike): void {
    this.#openedAt = Date.now();
    this.#tokens = this.#burst;
    this.#refilled = Date.now();
    this.#setState('open');
    this.#log('info', 'connected', { url: this.url });
    this.#touch();
    this.#pingTimer = setInterval(() => this.#send({ op: 'ping', id: this.#id('p') }), this.#pingMs);
    this.#emit('open');
    if (this.#signer === undefined) {
      this.#auth = 'none';
      this.#settleConnect();
      this.#flushSubs();
      return;
    }
    this.#auth = 'pending';
    void this.#authenticate(ws);
  }

  /** `auth` first, then the public subscribes; private ones once `authenticated` arrives. */
  async #authenticate(ws: WebSocketLike): Promise<void> {
    const id = this.#id('a');
    let frame: Record<string, unknown>;
    try {
      frame = await this.#authFrame(id);
    } catch (err) {
      if (ws !== this.#socket) return;
      this.#authFailed(new StreamError('PROTOCOL', `cannot sign the auth frame: ${errorText(err)}`, id));
      this.#flushSubs();
      return;
    }
    if (ws !== this.#socket) return;
    this.#requests.set(id, { kind: 'auth' });
    this.#send(frame);
    this.#flushSubs();
  }

  async #authFrame(id: string): Promise<Record<string, unknown>> {
    // Never the same ts twice for this key in this process (streams opened together would sign alike).
    const ts = nextStreamAuthTs(this.#apiKey!, Date.now() + this.#clockOffset());
    if (this.api === 'perp') {
      return { op: 'auth', id, apiKey: this.#apiKey, ts, sign: await signPerpStreamAuth(this.#signer!, ts) };
    }
    const nonce = randomNonce();
    // The chain and product as REST's headers carry them: not signed, as those headers are not.
    const venue = { ...(this.chainId !== undefined ? { chainId: this.chainId } : {}), ...(this.product !== undefined ? { product: this.product } : {}) };
    return { op: 'auth', id, apiKey: this.#apiKey, ts, nonce, sign: await signStockStreamAuth(this.#signer!, ts, nonce), ...venue };
  }

  #authFailed(err: StreamError): void {
    this.#auth = 'failed';
    this.#authError = err;
    this.#log('warn', 'auth refused', { code: err.code, msg: err.msg });
    this.#emit('error', err);
    for (const d of this.#connectWaiters.splice(0)) d.reject(err);
    for (const sub of [...this.#subs.values()]) {
      if (sub.isPrivate && sub.state === 'pending') this.#failSub(sub, err);
    }
  }

  #settleConnect(): void {
    for (const d of this.#connectWaiters.splice(0)) d.resolve();
  }

  #onDisconnect(code: number, reason: string): void {
    const wasOpen = this.#openedAt !== undefined;
    const lived = wasOpen ? Date.now() - this.#openedAt! : 0;
    this.#dropConnection();
    if (this.#state === 'closed') return;
    if (lived >= this.#backoff.stableAfterMs) this.#attempt = 0;
    if (this.#attempt >= this.#backoff.maxAttempts) {
      const err = new StreamError('RECONNECT_EXHAUSTED', `gave up after ${this.#attempt} failed connections (last close ${code}${reason ? `: ${reason}` : ''})`);
      this.#emit('error', err);
      if (this.#closing === undefined) this.#closing = this.#shutdown(err);
      return;
    }
    const bound = Math.min(this.#backoff.capMs, this.#backoff.baseMs * 2 ** this.#attempt);
    const delayMs = Math.floor(this.#random() * bound);
    this.#attempt += 1;
    this.#log(wasOpen ? 'warn' : 'info', wasOpen ? 'connection lost, reconnecting' : 'connection failed, retrying', { code, reason, attempt: this.#attempt, delayMs });
    this.#reconnectTimer = setTimeout(() => void this.#open(), delayMs);
    this.#setState('reconnecting');
    // Listeners may call close(): it clears the timer, and #open checks the state anyway.
    if (!wasOpen) this.#emit('error', new StreamError('CONNECTION', `cannot connect to ${this.url} (close ${code}${reason ? `: ${reason}` : ''})`));
    if (this.#state === 'reconnecting') this.#emit('reconnecting', { attempt: this.#attempt, delayMs, code, reason });
  }

  /** Forgets the current socket and everything in flight on it; subscriptions wait for the next one. */
  #dropConnection(): void {
    this.#socket = undefined;
    this.#openedAt = undefined;
    clearInterval(this.#pingTimer);
    clearTimeout(this.#idleTimer);
    clearTimeout(this.#drainTimer);
    this.#pingTimer = this.#idleTimer = this.#drainTimer = undefined;
    this.#outbox = [];
    for (const req of this.#requests.values()) {
      // The server forgets a closed connection's subscriptions: that unsubscribe is done.
      if (req.kind === 'unsubscribe') req.done?.resolve();
      // An order the server may have received is carried out even so: only a lookup can tell.
      if (req.kind === 'order') {
        const { order } = req;
        const msg = order.sent
          ? `${order.action} ${order.id}: the connection dropped before the result; it may have been applied`
          : `${order.action} ${order.id}: the connection dropped before it was sent`;
        order.done.reject(new StreamOrderError('CONNECTION', msg, order.id, order.action, {}, order.sent ? 'unknown' : false));
      }
    }
    this.#requests.clear();
    this.#auth = 'none';
    this.#authError = undefined;
    this.#account = undefined;
    for (const sub of this.#subs.values()) {
      clearTimeout(sub.retryTimer);
      sub.retryTimer = undefined;
      sub.reqId = undefined;
      if (sub.state === 'active') sub.nextReason = 'reconnect';
      if (sub.state !== 'ended') sub.state = 'pending';
    }
  }

  /** A connection silent past the idle timeout is dead: drop it without waiting for a closing handshake. */
  #touch(): void {
    clearTimeout(this.#idleTimer);
    this.#idleTimer = setTimeout(() => {
      const ws = this.#socket;
      if (ws === undefined) return;
      const reason = `no frame for ${this.#idleMs} ms`;
      this.#log('warn', 'connection silent: reconnecting', { idleMs: this.#idleMs });
      this.#onDisconnect(4000, reason);
      abandon(ws, 4000, reason);
    }, this.#idleMs);
  }

  async #shutdown(err: StreamError): Promise<void> {
    const ws = this.#socket;
    clearTimeout(this.#reconnectTimer);
    this.#reconnectTimer = undefined;
    // Rejected before the connection is dropped, which would resolve them (or fail the orders as lost).
    for (const req of this.#requests.values()) {
      if (req.kind === 'unsubscribe') req.done?.reject(err);
      if (req.kind === 'order') req.order.done.reject(err);
    }
    this.#dropConnection();
    this.#setState('closed');
    for (const d of this.#connectWaiters.splice(0)) d.reject(err);
    for (const sub of this.#subs.values()) {
      sub.state = 'ended';
      sub.readyD.reject(err);
    }
    this.#subs.clear();
    this.#log('info', 'closed', { reason: err.msg });
    if (ws !== undefined && ws.readyState !== CLOSED) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          // No closing handshake from the peer in time: let go of the socket.
          ws.terminate?.();
          resolve();
        }, 1_000);
        ws.addEventListener('close', () => {
          clearTimeout(timer);
          resolve();
        });
        try {
          ws.close(1000, 'client closed');
        } catch {
          clearTimeout(timer);
          resolve();
        }
      });
    }
    this.#emit('closed');
  }

  // ---------------------------------------------------------------- sending

  #id(prefix: string): string {
    return `${prefix}${this.#nextId++}`;
  }

  #send(msg: Record<string, unknown>, onSent?: () => void): void {
    if (this.#socket === undefined) return;
    this.#outbox.push({ text: JSON.stringify(msg), onSent });
    if (msg.op !== 'ping') this.#log('debug', 'send', msg.op === 'auth' ? { op: 'auth', id: msg.id } : msg);
    this.#drain();
  }

  /** Sends what the token bucket allows now, the rest when it has refilled. */
  #drain(): void {
    this.#drainTimer = undefined;
    const ws = this.#socket;
    if (ws === undefined || ws.readyState !== OPEN) return;
    const now = Date.now();
    this.#tokens = Math.min(this.#burst, this.#tokens + ((now - this.#refilled) / 1000) * this.#rate);
    this.#refilled = now;
    while (this.#outbox.length > 0 && this.#tokens >= 1) {
      this.#tokens -= 1;
      const next = this.#outbox.shift()!;
      try {
        // Marked first: a send that throws may still have written part of the frame.
        next.onSent?.();
        ws.send(next.text);
      } catch (err) {
        this.#log('warn', 'send failed', { error: errorText(err) });
        return;
      }
    }
    if (this.#outbox.length > 0 && this.#drainTimer === undefined) {
      this.#drainTimer = setTimeout(() => this.#drain(), Math.ceil(((1 - this.#tokens) / this.#rate) * 1000));
    }
  }

  #flushSubs(): void {
    for (const sub of this.#subs.values()) {
      if (sub.state !== 'pending' || sub.retryTimer !== undefined) continue;
      if (sub.isPrivate && this.#auth !== 'ok') {
        if (this.#auth === 'failed') this.#failSub(sub, this.#authError!);
        continue;
      }
      this.#sendSubscribe(sub);
    }
  }

  #sendSubscribe(sub: Subscription): void {
    const id = this.#id('s');
    const since = sub.isPrivate && !sub.fresh && sub.lastSeq !== undefined ? sub.lastSeq : undefined;
    sub.state = 'subscribing';
    sub.reqId = id;
    this.#requests.set(id, { kind: 'subscribe', sub, since });
    this.#send({ op: 'subscribe', id, channel: sub.channel, ...(sub.symbol !== undefined ? { symbol: sub.symbol } : {}), ...(since !== undefined ? { since } : {}) });
  }

  #sendUnsubscribe(sub: Subscription, done?: Deferred<void>): void {
    const id = this.#id('u');
    this.#requests.set(id, { kind: 'unsubscribe', done });
    this.#send({ op: 'unsubscribe', id, channel: sub.channel, ...(sub.symbol !== undefined ? { symbol: sub.symbol } : {}) });
  }

  #unsubscribe(sub: Subscription): Promise<void> {
    if (sub.state === 'ended') return Promise.resolve();
    const wasOnServer = sub.state === 'subscribing' || sub.state === 'active';
    sub.state = 'ended';
    clearTimeout(sub.retryTimer);
    if (this.#subs.get(sub.key) === sub) this.#subs.delete(sub.key);
    sub.readyD.reject(new StreamError('UNSUBSCRIBED', `${sub.key}: unsubscribed before the first snapshot`, undefined, sub.channel, sub.symbol));
    if (!wasOnServer || this.#socket === undefined) return Promise.resolve();
    const done = deferred<void>();
    this.#sendUnsubscribe(sub, done);
    return done.promise;
  }

  /**
   * The stream must start again on this connection: a private one resumes from its last seq (unless
   * `fresh`), a public one takes a fresh snapshot. Updates until the answer are dropped.
   */
  #resubscribe(sub: Subscription, reason: SnapshotReason, opts: { unsubscribeFirst: boolean; fresh: boolean }): void {
    sub.nextReason = reason;
    sub.fresh = opts.fresh;
    if (this.#socket === undefined) {
      sub.state = 'pending';
      return;
    }
    // The server handles a connection's messages in order: the subscribe finds the stream released.
    if (opts.unsubscribeFirst) this.#sendUnsubscribe(sub);
    this.#sendSubscribe(sub);
  }

  /** A refusal that may pass (streams unavailable, rate limit): the subscribe is sent again after a backoff. */
  #retrySub(sub: Subscription): void {
    sub.state = 'pending';
    sub.reqId = undefined;
    const delayMs = Math.floor(this.#random() * Math.min(this.#backoff.capMs, this.#backoff.baseMs * 2 ** sub.retries));
    sub.retries += 1;
    sub.retryTimer = setTimeout(() => {
      sub.retryTimer = undefined;
      if (sub.state === 'pending' && this.#socket?.readyState === OPEN) this.#flushSubs();
    }, delayMs);
  }

  #failSub(sub: Subscription, err: StreamError): void {
    if (sub.state === 'ended') return;
    sub.state = 'ended';
    clearTimeout(sub.retryTimer);
    if (this.#subs.get(sub.key) === sub) this.#subs.delete(sub.key);
    this.#log('warn', 'subscription refused', { channel: sub.channel, symbol: sub.symbol, code: err.code, msg: err.msg });
    sub.readyD.reject(err);
    this.#call(sub, 'onError', err);
  }

  #call(sub: Subscription, handler: keyof StreamHandlers, ...args: unknown[]): void {
    const fn = sub.handlers[handler] as ((...a: unknown[]) => void) | undefined;
    if (fn === undefined) return;
    try {
      fn.apply(sub.handlers, args);
    } catch (err) {
      this.#log('error', `${handler} threw`, { channel: sub.channel, symbol: sub.symbol, error: errorText(err) });
    }
  }

  // ---------------------------------------------------------------- receiving

  #onMessage(raw: unknown): void {
    this.#touch();
    let text: string;
    if (typeof raw === 'string') text = raw;
    else if (raw instanceof ArrayBuffer) text = new TextDecoder().decode(raw);
    else if (ArrayBuffer.isView(raw)) text = new TextDecoder().decode(new Uint8Array(raw.buffer, raw.byteOffset, raw.byteLength));
    else {
      this.#log('warn', 'unreadable frame ignored');
      return;
    }
    let f: Record<string, unknown>;
    try {
      const parsed: unknown = JSON.parse(text);
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
      f = parsed as Record<string, unknown>;
    } catch {
      this.#log('warn', 'frame is not a JSON object: ignored', { frame: text.slice(0, 200) });
      return;
    }
    switch (f.type) {
      case 'update':
        return this.#onUpdate(f);
      case 'subscribed':
        return this.#onSubscribed(f);
      case 'unsubscribed':
        return this.#onUnsubscribed(f);
      case 'error':
        return this.#onError(f);
      case 'authenticated':
        return this.#onAuthenticated(f);
      case 'result':
        return this.#onResult(f);
      case 'pong':
        return;
      default:
        this.#log('debug', 'frame of an unknown type ignored', { type: f.type });
    }
  }

  #takeRequest(f: Record<string, unknown>): Request | undefined {
    if (typeof f.id !== 'string') return undefined;
    const req = this.#requests.get(f.id);
    if (req !== undefined) this.#requests.delete(f.id);
    return req;
  }

  /** A frame breaking the protocol: this connection cannot be trusted, so it is reopened. */
  #protocolError(msg: string, f: Record<string, unknown>): void {
    const err = new StreamError('PROTOCOL', msg, typeof f.id === 'string' ? f.id : undefined);
    this.#log('error', 'protocol error: reconnecting', { msg, frame: JSON.stringify(f).slice(0, 200) });
    this.#emit('error', err);
    const ws = this.#socket;
    if (ws === undefined) return;
    this.#onDisconnect(4002, 'protocol error');
    abandon(ws, 4002, 'protocol error');
  }

  #onAuthenticated(f: Record<string, unknown>): void {
    const req = this.#takeRequest(f);
    if (req?.kind !== 'auth') {
      this.#log('debug', 'authenticated frame without its auth: ignored');
      return;
    }
    this.#auth = 'ok';
    this.#account = typeof f.account === 'string' ? f.account : undefined;
    this.#log('info', 'authenticated', { account: this.#account });
    if (this.#account !== undefined) this.#emit('authenticated', this.#account);
    this.#settleConnect();
    this.#flushSubs();
  }

  #onSubscribed(f: Record<string, unknown>): void {
    const req = this.#takeRequest(f);
    if (req?.kind !== 'subscribe') {
      this.#log('debug', 'subscribed frame of no pending subscribe: ignored', { id: f.id });
      return;
    }
    const sub = req.sub;
    if (sub.state === 'ended' || sub.reqId !== f.id) return;
    const seq = f.seq;
    if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 0) return this.#protocolError('subscribed: seq is not a non-negative integer', f);
    sub.reqId = undefined;
    sub.retries = 0;
    sub.state = 'active';
    if (f.resumed === true) {
      if (req.since === undefined) return this.#protocolError('subscribed: resumed without since', f);
      // The updates after `since` follow; lastSeq stays what was delivered.
      sub.lastSeq = seq;
      sub.nextReason = 'reconnect';
      sub.readyD.resolve();
      this.#call(sub, 'onResume', seq);
      return;
    }
    const info: SnapshotInfo = { reason: sub.nextReason, continuityLost: sub.nextReason !== 'initial', previousSeq: sub.lastSeq };
    if (info.continuityLost) this.#log('info', 'fresh snapshot', { channel: sub.channel, symbol: sub.symbol, reason: info.reason, previousSeq: info.previousSeq, seq });
    sub.lastSeq = seq;
    sub.nextReason = 'reconnect';
    sub.fresh = false;
    sub.readyD.resolve();
    this.#call(sub, 'onSnapshot', f.data, seq, info);
  }

  #onUpdate(f: Record<string, unknown>): void {
    if (typeof f.channel !== 'string') return this.#protocolError('update: no channel', f);
    const sub = this.#subs.get(keyOf(f.channel, typeof f.symbol === 'string' ? f.symbol : undefined));
    // Not subscribed any more, or subscribing again: its snapshot or resume decides what follows.
    if (sub === undefined || sub.state !== 'active') return;
    const seq = f.seq;
    if (typeof seq !== 'number' || !Number.isSafeInteger(seq)) return this.#protocolError('update: seq is not an integer', f);
    const last = sub.lastSeq!;
    if (seq <= last) {
      this.#log('debug', 'duplicate update dropped', { channel: sub.channel, symbol: sub.symbol, seq, lastSeq: last });
      return;
    }
    if (seq !== last + 1) {
      this.#log('warn', 'seq gap: subscribing again', { channel: sub.channel, symbol: sub.symbol, lastSeq: last, seq });
      this.#resubscribe(sub, 'gap', { unsubscribeFirst: true, fresh: false });
      return;
    }
    sub.lastSeq = seq;
    this.#call(sub, 'onUpdate', f.data, seq);
  }

  #onResult(f: Record<string, unknown>): void {
    const req = this.#takeRequest(f);
    if (req?.kind !== 'order') {
      // Most likely the answer to an order that timed out here.
      this.#log('debug', 'result frame of no pending order: ignored', { id: f.id, code: f.code });
      return;
    }
    const { order } = req;
    const code = typeof f.code === 'number' ? f.code : Number(f.code);
    if (code === 0) return order.done.resolve(f.data);
    const data = f.data !== null && typeof f.data === 'object' && !Array.isArray(f.data) ? (f.data as Record<string, unknown>) : {};
    order.done.reject(new StreamOrderError(code, typeof f.msg === 'string' ? f.msg : 'refused', order.id, order.action, data, true));
  }

  #onUnsubscribed(f: Record<string, unknown>): void {
    const req = this.#takeRequest(f);
    if (req?.kind === 'unsubscribe') req.done?.resolve();
  }

  #onError(f: Record<string, unknown>): void {
    const code = typeof f.code === 'number' ? f.code : Number(f.code);
    const msg = typeof f.msg === 'string' ? f.msg : 'error';
    const channel = typeof f.channel === 'string' ? f.channel : undefined;
    const symbol = typeof f.symbol === 'string' ? f.symbol : undefined;
    const req = this.#takeRequest(f);
    const id = typeof f.id === 'string' ? f.id : undefined;
    if (req !== undefined) {
      if (req.kind === 'auth') return this.#authFailed(new StreamError(code, msg, id));
      // Refused by the endpoint itself (a bad frame, the connection's message rate): nothing was done.
      if (req.kind === 'order') return req.order.done.reject(new StreamOrderError(code, msg, id, req.order.action, {}, true));
      if (req.kind === 'unsubscribe') {
        // "not subscribed": the server had already let the stream go; nothing is left to undo.
        this.#log('debug', 'unsubscribe refused', { code, msg });
        req.done?.resolve();
        return;
      }
      const sub = req.sub;
      if (sub.state === 'ended' || sub.reqId !== id) return;
      const err = new StreamError(code, msg, id, sub.channel, sub.symbol);
      if (this.#codes.gone.includes(code)) {
        if (req.since !== undefined) {
          this.#log('info', 'since no longer retained: taking a fresh snapshot', { channel: sub.channel, since: req.since });
          this.#resubscribe(sub, 'not-retained', { unsubscribeFirst: false, fresh: true });
        } else {
          // The stream restarted while its snapshot was being read.
          sub.nextReason = sub.nextReason === 'initial' ? 'initial' : 'restarted';
          this.#retrySub(sub);
        }
        return;
      }
      if (this.#codes.unavailable.includes(code) || this.#codes.rateLimited.includes(code)) {
        this.#log('warn', 'subscribe refused for now: retrying', { channel: sub.channel, symbol: sub.symbol, code, msg });
        this.#retrySub(sub);
        return;
      }
      this.#failSub(sub, err);
      return;
    }
    if (channel !== undefined && this.#codes.gone.includes(code)) {
      // The server restarted this stream (a new epoch) and dropped the subscription.
      const sub = this.#subs.get(keyOf(channel, symbol));
      if (sub !== undefined && sub.state === 'active') {
        this.#log('info', 'stream restarted by the server: taking a fresh snapshot', { channel, symbol });
        this.#resubscribe(sub, 'restarted', { unsubscribeFirst: false, fresh: true });
      }
      return;
    }
    const err = new StreamError(code, msg, id, channel, symbol);
    this.#log('warn', 'server error', { code, msg, id });
    this.#emit('error', err);
  }
}

/** The two fields a signed body has on the wire (a SignedOrder's `orderHash` would make it invalid). */
const signedBody = ({ message, signature }: SignedMessage): SignedMessage => ({ message, signature });

/**
 * The perpetual API's streams: `ws://host:port/v4/public/ws`. With a key of TRADE permission, also
 * order entry on the same connection (docs/streams.md "Order entry"): each call is the REST call of
 * the same name, answered over the socket (see `sendOrder` for the errors and `sent`).
 */
export class PerpStreamClient extends StreamClient<PerpPublicChannel, PerpPrivateChannel> {
  constructor(options: Omit<StreamClientOptions, 'api' | 'chainId' | 'product'>) {
    super({ ...options, api: 'perp' });
  }

  /** `place` (`POST orders`): a signed order (`PerpClient.signOrder`'s answer); the order with its status and fills. */
  placeOrder<T = PlacedOrder>(order: SignedMessage, options?: StreamOrderOptions): Promise<T> {
    return this.sendOrder<T>('place', signedBody(order), options);
  }

  /** `batch` (`POST orders/batch`): 1 to 20 signed orders; one result per order, in input order. */
  placeBatch<T = BatchOrdersResult>(orders: ReadonlyArray<SignedMessage>, options?: StreamOrderOptions): Promise<T> {
    return this.sendOrder<T>('batch', { orders: orders.map(signedBody) }, options);
  }

  /**
   * `cancel` (`DELETE orders/{orderId}`): the order, CANCELED. `idempotencyKey` is REST's
   * `Idempotency-Key`: the same key again (over either transport) answers the first cancel.
   */
  cancelOrder<T = OrderView>(orderId: string, options: StreamOrderOptions & Pick<StreamCancelBody, 'idempotencyKey'> = {}): Promise<T> {
    const { idempotencyKey, ...rest } = options;
    const body: StreamCancelBody = { orderId, ...(idempotencyKey !== undefined ? { idempotencyKey } : {}) };
    return this.sendOrder<T>('cancel', body, rest);
  }

  /** `amend` (`POST orders/amend`): a signed amendment (`PerpClient.signAmend`'s answer); the order as it stands after it. */
  amendOrder<T = PlacedOrder>(amend: SignedMessage, options?: StreamOrderOptions): Promise<T> {
    return this.sendOrder<T>('amend', signedBody(amend), options);
  }
}

/**
 * The tokenized-stock API's streams: `ws://host:port[prefix]/api/v1/ws`, of the chain `chainId`
 * names (as StockClient's; omitted, the server's first chain), public channels included.
 */
export class StockStreamClient extends StreamClient<StockPublicChannel, StockPrivateChannel> {
  constructor(options: Omit<StreamClientOptions, 'api'>) {
    super({ ...options, api: 'stock' });
  }
}

/** A chain id as `x-api-chain-id` takes it: a positive safe integer, or its decimal text. */
function chainIdOf(v: number | string): number {
  const n = typeof v === 'string' && /^[1-9][0-9]{0,15}$/.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n <= 0) throw new TypeError(`StreamClient: chainId must be a positive integer, got ${JSON.stringify(v)}`);
  return n;
}

/** `url` with `name=value` added to its query (kept as text: any URL the WebSocket takes). */
function withQuery(url: string, name: string, value: string): string {
  const hash = url.indexOf('#');
  const base = hash === -1 ? url : url.slice(0, hash);
  const sep = base.includes('?') ? (base.endsWith('?') || base.endsWith('&') ? '' : '&') : '?';
  return `${base}${sep}${encodeURIComponent(name)}=${encodeURIComponent(value)}`;
}

function abandon(ws: WebSocketLike, code: number, reason: string): void {
  try {
    if (ws.terminate !== undefined) ws.terminate();
    else ws.close(code, reason);
  } catch {
    // already closed
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
