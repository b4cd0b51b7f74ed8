/**
 * The stream client itself (stream-client.ts has the picture): the connection, its backoff and
 * keep-alive, authentication, subscriptions and their seqs, and order entry over the socket.
 */
import { StreamClosedError, StreamError, StreamOrderError, type StreamOrderAction } from '../stream-error.ts';
import type { HmacSigner } from '../stream-sign.ts';
import type {
  ConnectionState, PrivateSubscribeOptions, PublicSubscribeOptions, ReconnectOptions, SnapshotInfo, SnapshotReason, StreamApi, StreamClientEvents,
  StreamClientOptions, StreamHandlers, StreamLogger, StreamOrderOptions, StreamSubscription, WebSocketConstructorLike, WebSocketLike,
} from './stream-types.ts';
import { SendQueue } from './send-queue.ts';
import { StreamEvents } from './stream-events.ts';
import { authFrame, checkedStreamOptions, decodeFrame, reconnectPolicy } from './stream-frames.ts';
import { abandon, ANY_CODES, closeSocket, CLOSED, CODES, deferred, defaultWebSocket, droppedOrderError, errorText, keyOf, OPEN, settleOrder, timedOutOrderError, type ApiCodes, type Deferred, type PendingOrder, type Timer } from './stream-internals.ts';
import { Subscription, type Request } from './stream-subscription.ts';

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
  readonly #events: StreamEvents;
  /** `#log` called on the client, for the parts that log on its behalf. */
  readonly #logThis: StreamLogger;
  readonly #queue: SendQueue;
  #reconnectTimer: Timer | undefined;
  #pingTimer: ReturnType<typeof setInterval> | undefined;
  #idleTimer: Timer | undefined;
  #closing: Promise<void> | undefined;

  constructor(options: StreamClientOptions) {
    const o = checkedStreamOptions(options);
    this.url = o.url;
    this.api = o.api;
    this.#apiKey = o.apiKey;
    this.#signer = o.signer;
    this.chainId = o.chainId;
    this.product = o.product;
    this.#socketUrl = o.socketUrl;
    this.#WebSocket = options.WebSocket;
    const offset = options.clockOffsetMs ?? 0;
    this.#clockOffset = typeof offset === 'function' ? offset : () => offset;
    this.#backoff = reconnectPolicy(options.reconnect);
    this.#pingMs = options.pingIntervalMs ?? 15_000;
    this.#idleMs = options.idleTimeoutMs ?? 45_000;
    this.#log = options.logger ?? (() => {});
    // Through the client, as before: a logger function is called with the client as `this`.
    const log: StreamLogger = (level, message, fields) => this.#log(level, message, fields);
    this.#logThis = log;
    this.#events = new StreamEvents(log);
    this.#queue = new SendQueue(() => this.#socket, options.maxMessagesPerSecond ?? 15, options.maxBurst ?? 30, log);
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
    this.#events.on(event, listener);
    return () => this.off(event, listener);
  }

  off<E extends keyof StreamClientEvents>(event: E, listener: StreamClientEvents[E]): void {
    this.#events.off(event, listener);
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
      this.#log('warn', 'order timed out', { id, action, sent: order.sent });
      order.done.reject(timedOutOrderError(order, timeoutMs));
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
    this.#events.emit('state', state);
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
      this.#events.emit('error', e);
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
      this.#events.emit('error', e);
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
    this.#queue.open();
    this.#setState('open');
    this.#log('info', 'connected', { url: this.url });
    this.#touch();
    this.#pingTimer = setInterval(() => this.#send({ op: 'ping', id: this.#id('p') }), this.#pingMs);
    this.#events.emit('open');
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
    return authFrame(id, { api: this.api, apiKey: this.#apiKey!, signer: this.#signer!, nowMs: Date.now() + this.#clockOffset(), chainId: this.chainId, product: this.product });
  }

  #authFailed(err: StreamError): void {
    this.#auth = 'failed';
    this.#authError = err;
    this.#log('warn', 'auth refused', { code: err.code, msg: err.msg });
    this.#events.emit('error', err);
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
      this.#events.emit('error', err);
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
    if (!wasOpen) this.#events.emit('error', new StreamError('CONNECTION', `cannot connect to ${this.url} (close ${code}${reason ? `: ${reason}` : ''})`));
    if (this.#state === 'reconnecting') this.#events.emit('reconnecting', { attempt: this.#attempt, delayMs, code, reason });
  }

  /** Forgets the current socket and everything in flight on it; subscriptions wait for the next one. */
  #dropConnection(): void {
    this.#socket = undefined;
    this.#openedAt = undefined;
    clearInterval(this.#pingTimer);
    clearTimeout(this.#idleTimer);
    this.#pingTimer = this.#idleTimer = undefined;
    this.#queue.clear();
    for (const req of this.#requests.values()) {
      // The server forgets a closed connection's subscriptions: that unsubscribe is done.
      if (req.kind === 'unsubscribe') req.done?.resolve();
      // An order the server may have received is carried out even so: only a lookup can tell.
      if (req.kind === 'order') req.order.done.reject(droppedOrderError(req.order));
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
    if (ws !== undefined && ws.readyState !== CLOSED) await closeSocket(ws);
    this.#events.emit('closed');
  }

  // ---------------------------------------------------------------- sending

  #id(prefix: string): string {
    return `${prefix}${this.#nextId++}`;
  }

  #send(msg: Record<string, unknown>, onSent?: () => void): void {
    if (this.#socket === undefined) return;
    this.#queue.push({ text: JSON.stringify(msg), onSent });
    if (msg.op !== 'ping') this.#log('debug', 'send', msg.op === 'auth' ? { op: 'auth', id: msg.id } : msg);
    this.#queue.drain();
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
    const f = decodeFrame(raw, this.#logThis);
    if (f === undefined) return;
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
    this.#events.emit('error', err);
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
    if (this.#account !== undefined) this.#events.emit('authenticated', this.#account);
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
    settleOrder(req.order, f);
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
    this.#events.emit('error', err);
  }
}
