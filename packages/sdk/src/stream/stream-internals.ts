/**
 * What the stream client's parts share and do not export from the package: settle-once promises,
 * the APIs' refusal codes, the shapes of requests in flight, and small helpers.
 */
import { StreamError, StreamOrderError, type StreamOrderAction } from '../stream-error.ts';
import { PERP_STREAM_PATH, STOCK_STREAM_PATH } from '../stream-sign.ts';
import type { StreamApi, WebSocketLike, WebSocketConstructorLike } from './stream-types.ts';

export interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(err: unknown): void;
  settled: boolean;
}

export function deferred<T>(): Deferred<T> {
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

export type Timer = ReturnType<typeof setTimeout>;

export const OPEN = 1;
export const CLOSED = 3;

export interface ApiCodes {
  gone: readonly number[];
  unavailable: readonly number[];
  rateLimited: readonly number[];
}
export const CODES: Record<StreamApi, ApiCodes> = {
  perp: { gone: [10003], unavailable: [50002], rateLimited: [42900] },
  stock: { gone: [410], unavailable: [500], rateLimited: [429] },
};
export const ANY_CODES: ApiCodes = {
  gone: [...CODES.perp.gone, ...CODES.stock.gone],
  unavailable: [...CODES.perp.unavailable, ...CODES.stock.unavailable],
  rateLimited: [...CODES.perp.rateLimited, ...CODES.stock.rateLimited],
};

/** An order request in flight: its result settles `done`. */
export interface PendingOrder {
  id: string;
  action: StreamOrderAction;
  done: Deferred<unknown>;
  /** Handed to the socket (the server may have it), as opposed to waiting in the outbox. */
  sent: boolean;
  timer: Timer | undefined;
}

/** A frame waiting for the rate limit, and what to do once it is handed to the socket. */
export interface Outgoing {
  text: string;
  onSent?: () => void;
}

export const keyOf = (channel: string, symbol: string | undefined) => (symbol === undefined ? channel : `${channel} ${symbol}`);

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

export async function defaultWebSocket(): Promise<WebSocketConstructorLike> {
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

/** A chain id as `x-api-chain-id` takes it: a positive safe integer, or its decimal text. */
export function chainIdOf(v: number | string): number {
  const n = typeof v === 'string' && /^[1-9][0-9]{0,15}$/.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n <= 0) throw new TypeError(`StreamClient: chainId must be a positive integer, got ${JSON.stringify(v)}`);
  return n;
}

/** `url` with `name=value` added to its query (kept as text: any URL the WebSocket takes). */
export function withQuery(url: string, name: string, value: string): string {
  const hash = url.indexOf('#');
  const base = hash === -1 ? url : url.slice(0, hash);
  const sep = base.includes('?') ? (base.endsWith('?') || base.endsWith('&') ? '' : '&') : '?';
  return `${base}${sep}${encodeURIComponent(name)}=${encodeURIComponent(value)}`;
}

export function abandon(ws: WebSocketLike, code: number, reason: string): void {
  try {
    if (ws.terminate !== undefined) ws.terminate();
    else ws.close(code, reason);
  } catch {
    // already closed
  }
}

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** An order in flight when its connection dropped: never sent, or sent and perhaps applied (only a lookup can tell). */
export function droppedOrderError(order: PendingOrder): StreamOrderError {
  const msg = order.sent
    ? `${order.action} ${order.id}: the connection dropped before the result; it may have been applied`
    : `${order.action} ${order.id}: the connection dropped before it was sent`;
  return new StreamOrderError('CONNECTION', msg, order.id, order.action, {}, order.sent ? 'unknown' : false);
}

/** Settles an order with its `result` frame: the data of code 0, else the refusal (the server had the request). */
export function settleOrder(order: PendingOrder, f: Record<string, unknown>): void {
  const code = typeof f.code === 'number' ? f.code : Number(f.code);
  if (code === 0) return order.done.resolve(f.data);
  const data = f.data !== null && typeof f.data === 'object' && !Array.isArray(f.data) ? (f.data as Record<string, unknown>) : {};
  order.done.reject(new StreamOrderError(code, typeof f.msg === 'string' ? f.msg : 'refused', order.id, order.action, data, true));
}

/** An order with no result within `timeoutMs`: not sent (no authenticated connection in time), or sent and perhaps applied. */
export function timedOutOrderError(order: PendingOrder, timeoutMs: number): StreamOrderError {
  const { action, id } = order;
  const msg = order.sent
    ? `${action} ${id}: no result within ${timeoutMs} ms; it was sent and may have been applied`
    : `${action} ${id}: not sent, no authenticated connection within ${timeoutMs} ms`;
  return new StreamOrderError('TIMEOUT', msg, id, action, {}, order.sent ? 'unknown' : false);
}

/** Closes `ws` with 1000 and waits for its close, or lets go of it after a second without the peer's handshake. */
export function closeSocket(ws: WebSocketLike): Promise<void> {
  return new Promise<void>((resolve) => {
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
