/**
 * US-equity quotes from Alpaca's market-data WebSocket stream v2 (docs.alpaca.markets, "WebSocket
 * Stream" and "Real-time Stock Data"), over `ws`, JSON encoding:
 *
 *   wss://stream.data.alpaca.markets/v2/{iex|sip|delayed_sip|test}
 *   < [{"T":"success","msg":"connected"}]
 *   > {"action":"auth","key":"…","secret":"…"}          (within 10 s of connecting)
 *   < [{"T":"success","msg":"authenticated"}]            or [{"T":"error","code":402,"msg":"auth failed"}]
 *   > {"action":"subscribe","quotes":["AAPL"],"trades":["AAPL"]}
 *   < [{"T":"subscription","trades":["AAPL"],"quotes":["AAPL"],"bars":[]}]   (the whole current set)
 *   < [{"T":"q","S":"AAPL","bx":"V","bp":229.8,"bs":1,"ax":"V","ap":229.85,"as":2,"t":"2026-…Z","c":["R"],"z":"C"}, …]
 *   < [{"T":"t","S":"AAPL","i":52983525033527,"x":"V","p":229.82,"s":100,"t":"2026-…Z","c":["@"],"z":"C"}]
 *
 * Every frame is a JSON array; control messages come alone, data may be batched. Error frames
 * (400 invalid syntax … 500 internal error) do not close the socket: this client decides. Codes a
 * retry cannot cure (402 auth failed, 408 v2 not enabled, 409 insufficient subscription) stop it
 * for good (`failed`, nothing retried, no spinning on bad credentials); 406 connection limit
 * exceeded, 407 slow client, 404 auth timeout, 500 and lost sockets reconnect with exponential
 * backoff and jitter, then authenticate and subscribe again.
 *
 * Prices are read from the frame's text without a double (lossless-json.ts). Each data message is
 * checked on its own: a malformed one is counted and skipped, the rest of its batch still counts.
 * Per symbol, a quote older than the last one taken is out of order and a repeat of it is a
 * duplicate; both are dropped, as are zero or crossed quotes, absurd spreads and prices.
 * The secret is sent only in the auth message: never logged, never in an error or health().
 */
import { WebSocket, type RawData } from 'ws';
import { ValidationError } from '../../errors/app-error.ts';
import { JsonNumber, jsonNumberToScaled, parseJsonLossless, type JsonObject, type JsonValue } from './lossless-json.ts';
import {
  PRICE_DECIMALS,
  formatPrice,
  midOf,
  parsePrice,
  parseRfc3339Nanos,
  type QuoteSource,
  type SourceTrade,
} from './quote-source.ts';
import { createSourceLifecycle, lifecycleSettings, type ReconnectingSourceOptions } from './source-lifecycle.ts';

export type AlpacaFeed = 'iex' | 'sip' | 'delayed_sip' | 'test';
export const ALPACA_FEEDS: readonly AlpacaFeed[] = ['iex', 'sip', 'delayed_sip', 'test'];
export const ALPACA_STREAM_HOST = 'wss://stream.data.alpaca.markets';

/** The documented stream URL of a feed (`wss://stream.data.alpaca.markets/v2/iex`). */
export function alpacaStreamUrl(feed: AlpacaFeed, host: string = ALPACA_STREAM_HOST): string {
  return `${host}/v2/${feed}`;
}

/** Alpaca's error codes (docs: "Errors"); the text is the documented `msg`. */
export const ALPACA_ERRORS: Readonly<Record<number, string>> = {
  400: 'invalid syntax',
  401: 'not authenticated',
  402: 'auth failed',
  403: 'already authenticated',
  404: 'auth timeout',
  405: 'symbol limit exceeded',
  406: 'connection limit exceeded',
  407: 'slow client',
  408: 'v2 not enabled',
  409: 'insufficient subscription',
  500: 'internal error',
};

/** Credentials or plan refused: the same request would be refused again. */
const TERMINAL_CODES = new Set([402, 408, 409]);
/** About a request of ours, not the connection: recorded, the socket kept. */
const REQUEST_CODES = new Set([400, 403, 405]);

export interface AlpacaStreamSourceOptions extends ReconnectingSourceOptions {
  /** API key id (`ALPACA_KEY_ID`). */
  keyId: string;
  /** API secret (`ALPACA_SECRET_KEY`): sent in the auth message only. */
  secretKey: string;
  /** Default `iex` (the free plan's feed). */
  feed?: AlpacaFeed;
  /** Default `alpacaStreamUrl(feed)`; tests point it at a local server. */
  url?: string;
  /** Default `alpaca-<feed>`. */
  name?: string;
  /** Venue symbols to quote. */
  symbols: readonly string[];
  /** Venue symbol → Alpaca ticker where they differ (`{ "BRKB": "BRK.B" }`). */
  providerSymbols?: Readonly<Record<string, string>>;
  /** Also subscribe to trades, for `last`. Default true. */
  trades?: boolean;
  /** Quotes wider than this (ask − bid over mid, bps) are refused as absurd. Default 1000 (10 %). */
  maxSpreadBps?: number;
  /** Prices above this (decimal string) are refused as absurd. Default "1000000". */
  maxPrice?: string;
  /** Connect + authenticate + subscription confirmation must finish within this. Default 15 000 ms. */
  handshakeTimeoutMs?: number;
  /** WebSocket ping period; 0 disables. Default 10 000 ms. */
  pingIntervalMs?: number;
  /** A ping unanswered this long drops the connection. Default 5 000 ms. */
  pongTimeoutMs?: number;
  /** permessage-deflate (RFC 7692, which the stream supports). Default true. */
  compression?: boolean;
}

interface StreamPosition {
  ns: bigint | undefined;
  key: string;
}

interface SymbolState {
  venue: string;
  /** The last quote and the last trade taken: their time (ns) and what identifies them. */
  quote: StreamPosition;
  trade: StreamPosition;
  last: bigint | undefined;
}

const SYMBOL_RE = /^[A-Z][A-Z0-9./-]{0,20}$/;

const isObject = (v: JsonValue): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof JsonNumber);
const numText = (v: JsonValue | undefined): string => (v instanceof JsonNumber ? v.text : typeof v === 'string' ? v : '');

function positiveInt(field: string, value: number | undefined, fallback: number, min = 0): number {
  const v = value ?? fallback;
  if (!Number.isInteger(v) || v < min) throw new ValidationError(field, `must be an integer of at least ${min}`);
  return v;
}

export function createAlpacaStreamSource(opts: AlpacaStreamSourceOptions): QuoteSource {
  if (typeof opts.keyId !== 'string' || opts.keyId.trim() === '') throw new ValidationError('ALPACA_KEY_ID', 'required');
  if (typeof opts.secretKey !== 'string' || opts.secretKey.trim() === '') throw new ValidationError('ALPACA_SECRET_KEY', 'required');
  const feed = opts.feed ?? 'iex';
  if (!ALPACA_FEEDS.includes(feed)) throw new ValidationError('ALPACA_FEED', `must be one of ${ALPACA_FEEDS.join(', ')}`);
  const url = opts.url ?? alpacaStreamUrl(feed);
  if (!/^wss?:\/\//.test(url)) throw new ValidationError('ALPACA_STREAM_URL', 'must be a ws:// or wss:// URL');
  const name = opts.name ?? `alpaca-${feed}`;
  const withTrades = opts.trades ?? true;
  const maxSpreadBps = BigInt(positiveInt('maxSpreadBps', opts.maxSpreadBps, 1000));
  const maxPrice = parsePrice(opts.maxPrice ?? '1000000');
  if (maxPrice === undefined || maxPrice === 0n) throw new ValidationError('maxPrice', 'must be a positive decimal string');
  const settings = lifecycleSettings(opts, positiveInt);
  const handshakeTimeoutMs = positiveInt('handshakeTimeoutMs', opts.handshakeTimeoutMs, 15_000, 1);
  const pingIntervalMs = positiveInt('pingIntervalMs', opts.pingIntervalMs, 10_000);
  const pongTimeoutMs = positiveInt('pongTimeoutMs', opts.pongTimeoutMs, 5_000, 1);
  const { now } = settings;
  const log = opts.logger;
  const secret = opts.secretKey;
  const keyId = opts.keyId;

  const bySymbol = new Map<string, SymbolState>();
  for (const venue of opts.symbols) {
    const provider = opts.providerSymbols?.[venue] ?? venue;
    if (!SYMBOL_RE.test(provider)) throw new ValidationError('symbols', `${JSON.stringify(provider)} is not a ticker`);
    if (bySymbol.has(provider)) throw new ValidationError('symbols', `${provider} is listed twice`);
    bySymbol.set(provider, { venue, quote: { ns: undefined, key: '' }, trade: { ns: undefined, key: '' }, last: undefined });
  }
  if (bySymbol.size === 0) throw new ValidationError('symbols', 'at least one symbol is required');
  const providerSymbols = [...bySymbol.keys()];

  /** Server text may echo what it was sent; never let the secret through to a log or health(). */
  const redact = (text: string): string => text.split(secret).join('[redacted]').slice(0, 300);

  /** Where the current connection is in the handshake. */
  let phase: 'greeting' | 'auth' | 'subscribe' | 'live' = 'greeting';
  let ws: WebSocket | undefined;
  let generation = 0;
  let handshakeTimer: NodeJS.Timeout | undefined;
  let pingTimer: NodeJS.Timeout | undefined;
  let pongTimer: NodeJS.Timeout | undefined;
  let unconfirmed: string[] = [];
  const tradeListeners = new Set<(trade: SourceTrade) => void>();

  const clearConnectionTimers = (): void => {
    for (const t of [handshakeTimer, pingTimer, pongTimer]) if (t !== undefined) clearTimeout(t);
    if (pingTimer !== undefined) clearInterval(pingTimer);
    handshakeTimer = pingTimer = pongTimer = undefined;
  };

  /** Forgets the current socket (its late events are ignored) and returns it. */
  const detach = (): WebSocket | undefined => {
    clearConnectionTimers();
    const sock = ws;
    ws = undefined;
    generation++;
    return sock;
  };

  const lifecycle = createSourceLifecycle({
    name,
    redact,
    ...settings,
    connect: () => connect(),
    drop: () => detach()?.terminate(),
    failedMessage: 'quote source: stopped for good; fix the credentials or the plan, then restart',
    unconfirmedSymbols: () => [...unconfirmed],
  });
  const { counters, setState, setError, malformed, lose } = lifecycle;

  const send = (sock: WebSocket, payload: Record<string, unknown>): void => {
    const gen = generation;
    sock.send(JSON.stringify(payload), (err) => {
      if (err && gen === generation) lose('socket', `send failed: ${err.message}`);
    });
  };

  /** A positive price within bounds, or the counter it belongs to. */
  const price = (v: JsonValue | undefined): bigint | 'malformed' | 'rejected' => {
    if (!(v instanceof JsonNumber)) return 'malformed';
    const scaled = jsonNumberToScaled(v, PRICE_DECIMALS);
    if (scaled === undefined || scaled <= 0n || scaled > maxPrice) return 'rejected';
    return scaled;
  };

  const handleQuote = (el: JsonObject, receivedAt: number, raw: () => string): void => {
    const symbol = el.S;
    const ns = parseRfc3339Nanos(el.t);
    if (typeof symbol !== 'string' || ns === undefined) return malformed(raw());
    const bid = price(el.bp);
    const ask = price(el.ap);
    if (bid === 'malformed' || ask === 'malformed') return malformed(raw());
    const st = bySymbol.get(symbol);
    if (st === undefined) {
      // Docs: data for a symbol just unsubscribed may still arrive for a while.
      counters.ignored++;
      return;
    }
    // An empty side is sent as 0 (a one-sided book): no usable quote.
    if (bid === 'rejected' || ask === 'rejected' || bid > ask || (ask - bid) * 20_000n > maxSpreadBps * (ask + bid)) {
      counters.rejectedValue++;
      return;
    }
    const key = `${bid}|${ask}|${numText(el.bs)}|${numText(el.as)}|${numText(el.bx)}|${numText(el.ax)}`;
    if (!takeInOrder(st.quote, ns, key)) return;
    counters.accepted++;
    lifecycle.emit({
      source: name,
      symbol: st.venue,
      bid: formatPrice(bid),
      ask: formatPrice(ask),
      last: formatPrice(st.last ?? midOf(bid, ask)),
      lastIsTrade: st.last !== undefined,
      sourceTime: Number(ns / 1_000_000n),
      receivedAt,
    });
  };

  /** An older message than the last taken, or that one again: counted and dropped; else taken as the new position. */
  const takeInOrder = (pos: StreamPosition, ns: bigint, key: string): boolean => {
    if (pos.ns !== undefined) {
      if (ns < pos.ns) {
        counters.outOfOrder++;
        return false;
      }
      if (ns === pos.ns && key === pos.key) {
        counters.duplicate++;
        return false;
      }
    }
    pos.ns = ns;
    pos.key = key;
    return true;
  };

  const handleTrade = (el: JsonObject, receivedAt: number, raw: () => string): void => {
    const symbol = el.S;
    const ns = parseRfc3339Nanos(el.t);
    if (typeof symbol !== 'string' || ns === undefined) return malformed(raw());
    const p = price(el.p);
    if (p === 'malformed') return malformed(raw());
    const st = bySymbol.get(symbol);
    if (st === undefined) {
      counters.ignored++;
      return;
    }
    if (p === 'rejected') {
      counters.rejectedValue++;
      return;
    }
    const key = `${numText(el.i)}|${numText(el.x)}|${p}|${numText(el.s)}`;
    if (!takeInOrder(st.trade, ns, key)) return;
    st.last = p;
    counters.accepted++;
    if (tradeListeners.size === 0) return;
    const size = numText(el.s);
    const trade: SourceTrade = {
      source: name,
      symbol: st.venue,
      price: formatPrice(p),
      size: /^(0|[1-9]\d{0,17})$/.test(size) ? size : '0',
      sourceTime: Number(ns / 1_000_000n),
      receivedAt,
    };
    for (const listener of tradeListeners) {
      try {
        listener(trade);
      } catch (err) {
        log?.error({ err, source: name }, 'quote source: trade listener threw');
      }
    }
  };

  const handleSubscription = (el: JsonObject, raw: () => string): void => {
    // The whole current set; a channel with nothing in it may be left out altogether.
    const quotes = el.quotes ?? [];
    if (!Array.isArray(quotes) || !quotes.every((q) => typeof q === 'string')) return malformed(raw());
    const held = new Set(quotes as string[]);
    unconfirmed = providerSymbols.filter((p) => !held.has(p)).map((p) => bySymbol.get(p)!.venue);
    if (unconfirmed.length > 0) {
      setError('unconfirmed', `subscription confirmation lacks quotes of ${unconfirmed.join(', ')}`);
      log?.warn({ source: name, symbols: unconfirmed }, 'quote source: subscription not confirmed for some symbols');
    }
    if (phase === 'subscribe') {
      phase = 'live';
      if (handshakeTimer !== undefined) clearTimeout(handshakeTimer);
      handshakeTimer = undefined;
      lifecycle.live({ symbols: providerSymbols.length });
    }
  };

  const handleError = (el: JsonObject): void => {
    const code = el.code instanceof JsonNumber ? el.code.toNumber() : 'unknown';
    const text = typeof el.msg === 'string' ? el.msg : typeof code === 'number' ? (ALPACA_ERRORS[code] ?? 'error') : 'error';
    const message = `${code} ${text}`;
    if (typeof code === 'number' && TERMINAL_CODES.has(code)) return lifecycle.fail(code, message);
    if (typeof code === 'number' && REQUEST_CODES.has(code)) {
      // The socket stays usable; a refused subscription (405) leaves the symbols without data,
      // which the guard turns into no-data / stale.
      setError(code, message);
      log?.error({ source: name, error: lifecycle.lastError }, 'quote source: request refused by the provider');
      return;
    }
    lose(code, message);
  };

  const handleElement = (el: JsonValue, sock: WebSocket, receivedAt: number, raw: () => string): void => {
    if (!isObject(el) || typeof el.T !== 'string') return malformed(raw());
    switch (el.T) {
      case 'q':
        return handleQuote(el, receivedAt, raw);
      case 't':
        return handleTrade(el, receivedAt, raw);
      case 'success':
        if (el.msg === 'connected') {
          if (phase === 'greeting') {
            phase = 'auth';
            send(sock, { action: 'auth', key: keyId, secret });
          }
        } else if (el.msg === 'authenticated') {
          if (phase === 'greeting' || phase === 'auth') {
            phase = 'subscribe';
            setState('subscribing');
            // Never an empty list: the stream answers one with 400.
            send(sock, withTrades ? { action: 'subscribe', quotes: providerSymbols, trades: providerSymbols } : { action: 'subscribe', quotes: providerSymbols });
          }
        } else {
          log?.info({ source: name, msg: typeof el.msg === 'string' ? redact(el.msg) : undefined }, 'quote source: provider message');
        }
        return;
      case 'error':
        return handleError(el);
      case 'subscription':
        return handleSubscription(el, raw);
      default:
        // Bars, statuses, LULD bands, corrections, cancels: not used for quotes.
        counters.ignored++;
    }
  };

  const handleFrame = (data: RawData, isBinary: boolean, sock: WebSocket, gen: number): void => {
    const receivedAt = now();
    lifecycle.heard(receivedAt);
    const buf = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
    const text = buf.toString('utf8');
    // Clear text JSON is what was asked for (no msgpack header); anything else is not ours to read.
    if (isBinary) return malformed(text);
    let parsed: JsonValue;
    try {
      parsed = parseJsonLossless(text);
    } catch {
      return malformed(text);
    }
    if (!Array.isArray(parsed)) return malformed(text);
    const raw = (): string => text;
    for (const el of parsed) {
      handleElement(el, sock, receivedAt, raw);
      // A frame that ended the connection ends its own processing too.
      if (gen !== generation) return;
    }
  };

  const connect = (): void => {
    const gen = ++generation;
    phase = 'greeting';
    lifecycle.connecting({ url });
    const sock = new WebSocket(url, { perMessageDeflate: opts.compression ?? true, handshakeTimeout: handshakeTimeoutMs, maxPayload: 64 * 1024 * 1024 });
    ws = sock;
    handshakeTimer = setTimeout(() => {
      if (gen === generation) lose('handshake-timeout', `not subscribed within ${handshakeTimeoutMs} ms of connecting`);
    }, handshakeTimeoutMs);
    sock.on('open', () => {
      if (gen !== generation || pingIntervalMs === 0) return;
      pingTimer = setInterval(() => {
        if (gen !== generation || sock.readyState !== WebSocket.OPEN || pongTimer !== undefined) return;
        sock.ping();
        pongTimer = setTimeout(() => {
          pongTimer = undefined;
          if (gen === generation) lose('ping-timeout', `no pong within ${pongTimeoutMs} ms`);
        }, pongTimeoutMs);
      }, pingIntervalMs);
    });
    sock.on('pong', () => {
      if (gen !== generation || pongTimer === undefined) return;
      clearTimeout(pongTimer);
      pongTimer = undefined;
    });
    sock.on('message', (data, isBinary) => {
      if (gen === generation) handleFrame(data, isBinary, sock, gen);
    });
    // Always listened to (an unhandled 'error' would throw); 'close' follows it.
    sock.on('error', (err) => {
      if (gen === generation) setError('socket', err.message);
    });
    sock.on('close', (code) => {
      if (gen !== generation) return;
      const last = lifecycle.lastError;
      const error = last?.code === 'socket' && last.at >= now() - 1000 ? last.message : undefined;
      lose('closed', error === undefined ? `connection closed (${code})` : `connection closed (${code}): ${error}`);
    });
  };

  return {
    name,
    start: lifecycle.start,
    async stop() {
      const sock = detach();
      lifecycle.stop();
      if (sock === undefined || sock.readyState === WebSocket.CLOSED) return;
      await new Promise<void>((resolve) => {
        // The stream does not answer a close frame (observed: 1006): do not wait ws's 30 s for it.
        const force = setTimeout(() => sock.terminate(), 1000);
        sock.once('close', () => {
          clearTimeout(force);
          resolve();
        });
        sock.close(1000);
      });
    },
    onTick: lifecycle.onTick,
    onTrade(listener) {
      tradeListeners.add(listener);
      return () => {
        tradeListeners.delete(listener);
      };
    },
    onStateChange: lifecycle.onStateChange,
    health: lifecycle.health,
  };
}
