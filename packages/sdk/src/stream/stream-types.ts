/**
 * The stream client's public types (stream-client.ts re-exports them): channels, options, handlers,
 * subscriptions and the connection's events.
 */
import { StreamError } from '../stream-error.ts';

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
