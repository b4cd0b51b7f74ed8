/**
 * US-equity prices from Pyth's Hermes service, streamed as server-sent events, over Node's own
 * `fetch` (docs.pyth.network, "Hermes" and the API reference of `GET /v2/updates/price/stream`):
 *
 *   GET {base}/v2/updates/price/stream?ids[]=49f6…&ids[]=d0ca…&parsed=true
 *   Authorization: Bearer <PYTH_API_KEY>          (required since the Pyth Core upgrade of 26 Aug 2026)
 *   Accept: text/event-stream
 *   < 200 text/event-stream                       or 401 (no or bad key), 404 "Price ids not found: …", 429, 5xx
 *   < data:{"binary":{"encoding":"hex","data":["504e41…"]},"parsed":[{"id":"49f6…",
 *   <   "price":{"price":"22981500","conf":"11500","expo":-5,"publish_time":1789483810},
 *   <   "ema_price":{…},"metadata":{"slot":…,"prev_publish_time":…,"proof_available_time":…}}]}
 *   <
 *   < :                                           (keep-alive comment, every 15 s)
 *   < event:error
 *   < data:Error receiving update: …              (the server's trouble; the stream goes on)
 *
 * Each event carries the latest price of every feed asked for, changed or not: a feed that has not
 * moved comes again with the same publish time and values, and is counted as a duplicate. Hermes
 * closes a stream after 24 hours; this client reconnects with exponential backoff and jitter (and no
 * sooner than `rateLimitDelayMs` after a 429), and drops a connection that has sent nothing, not even
 * a keep-alive comment, for `idleTimeoutMs`. A refused key (401, 403), unknown feed ids (404) or a
 * refused request (400) stop it for good (`failed`): a retry would be refused again. A redirect is
 * not followed, so the key is never sent to another host.
 *
 * Pyth has no order book: a tick is the aggregate price as bid, ask and last alike, which is all
 * the quote guard compares (mids). Prices are exact (integer × 10^expo, rounded half up to 8 places
 * when the exponent is finer). A price of zero or below, or a confidence interval wider than
 * `maxConfBps` of the price, is refused (`rejectedValue`): Pyth's best practices say to use the
 * confidence interval, and a price that unsure cannot check another source to `QUOTE_MAX_DIVERGENCE_BPS`.
 * Per feed, an older publish time (or the same time at an older slot) is out of order.
 * The key is sent in the Authorization header only: never logged, never in an error or health().
 */
import { ValidationError } from '../../errors/app-error.ts';
import { JsonNumber, parseJsonLossless, type JsonObject, type JsonValue } from './lossless-json.ts';
import { PRICE_DECIMALS, formatPrice, parsePrice, type QuoteSource } from './quote-source.ts';
import { createSourceLifecycle, lifecycleSettings, type ReconnectingSourceOptions } from './source-lifecycle.ts';

/** The upgraded Hermes endpoint that Pyth's upgrade guide configures with an API key. */
export const PYTH_HERMES_URL = 'https://pyth.dourolabs.app/hermes';
export const PYTH_STREAM_PATH = '/v2/updates/price/stream';

/**
 * Regular-session feeds (`Equity.US.<T>/USD`) of the demo stocks, as listed on Pyth's price-feed
 * ids page; `PYTH_FEED_IDS` adds or overrides. Checked against several public integrations.
 */
export const PYTH_DEMO_FEED_IDS: Readonly<Record<string, string>> = {
  AAPL: '49f6b65cb1de6b10eaf75e7c03ca029c306d0357e91b5311b175084a5ad55688',
  TSLA: '16dad506d7db8da01c87581c87ca897a012a153557d4d578c3b9c9e1bc0632f1',
  NVDA: 'b1073854ed24cbc755dc527418f52b7d271f6cc967bbf8d8129112b18860a593',
  MSFT: 'd0ca23c1cc005e004ccf1db5bf76aeb6a49218f43dac3d4b275e92de12ded4d1',
  SPY: '19e09bb805456ada3979a7d1cbb4b6d63babc3a0f8e8a9509f68afa5c4c11cd5',
};

const FEED_ID_RE = /^(?:0x)?([0-9a-fA-F]{64})$/;

/** A feed id as Hermes writes it in answers: 64 lower-case hex digits, no `0x`; undefined if not one. */
export function normalizeFeedId(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const m = FEED_ID_RE.exec(value);
  return m === null ? undefined : m[1].toLowerCase();
}

/** The stream URL of a set of feeds (`{base}/v2/updates/price/stream?ids[]=…&parsed=true`). */
export function pythStreamUrl(base: string, feedIds: readonly string[]): string {
  const query = feedIds.map((id) => `ids%5B%5D=${id}`).join('&');
  return `${base.replace(/\/+$/, '')}${PYTH_STREAM_PATH}?${query}&parsed=true`;
}

/** HTTP statuses a retry cannot cure: the same request would be refused again. */
const TERMINAL_STATUSES = new Set([400, 401, 403, 404]);

export interface PythHermesSourceOptions extends ReconnectingSourceOptions {
  /** `PYTH_API_KEY`: sent as `Authorization: Bearer …` only. */
  apiKey: string;
  /** Hermes base URL (`PYTH_HERMES_URL`). Default `PYTH_HERMES_URL`; tests point it at a local server. */
  url?: string;
  /** Default `pyth-hermes`. */
  name?: string;
  /** Venue symbols to price. */
  symbols: readonly string[];
  /** Venue symbol → feed id (64 hex digits, `0x` optional), one for every symbol. */
  feedIds: Readonly<Record<string, string>>;
  /** An update whose confidence interval exceeds this share of its price (bps) is refused. Default 100 (1 %). */
  maxConfBps?: number;
  /** Prices above this (decimal string) are refused as absurd. Default "1000000". */
  maxPrice?: string;
  /** After a 429, wait at least this (Hermes' public limit holds for 60 s). Default 60 000 ms. */
  rateLimitDelayMs?: number;
  /** The response headers must arrive within this. Default 15 000 ms. */
  connectTimeoutMs?: number;
  /** Nothing read (not even Hermes' 15 s keep-alive) for this long drops the connection. Default 45 000 ms. */
  idleTimeoutMs?: number;
}

interface FeedState {
  venue: string;
  /** The last update taken: publish time (s), slot when given, and its values. */
  publishTime: number | undefined;
  slot: bigint | undefined;
  key: string;
}

/** An SSE event can be this long at most; a server that never ends one is not followed further. */
const MAX_EVENT_CHARS = 4 * 1024 * 1024;
const INT_RE = /^-?(0|[1-9]\d{0,29})$/;

const isObject = (v: JsonValue | undefined): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof JsonNumber);

/** A JSON number that is a safe integer, else undefined. */
const intOf = (v: JsonValue | undefined): number | undefined => {
  if (!(v instanceof JsonNumber) || !/^-?(0|[1-9]\d*)$/.test(v.text)) return undefined;
  const n = Number(v.text);
  return Number.isSafeInteger(n) ? n : undefined;
};

function intOption(field: string, value: number | undefined, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const v = value ?? fallback;
  if (!Number.isInteger(v) || v < min || v > max) throw new ValidationError(field, `must be an integer from ${min} to ${max}`);
  return v;
}

/** integer × 10^expo as a price scaled by 10^8, rounded half up where expo is finer than 8 places. */
export function scalePythPrice(mantissa: bigint, expo: number): bigint {
  const shift = expo + PRICE_DECIMALS;
  if (shift >= 0) return mantissa * 10n ** BigInt(shift);
  const div = 10n ** BigInt(-shift);
  return (mantissa + div / 2n) / div;
}

export function createPythHermesSource(opts: PythHermesSourceOptions): QuoteSource {
  if (typeof opts.apiKey !== 'string' || opts.apiKey.trim() === '') throw new ValidationError('PYTH_API_KEY', 'required');
  const base = opts.url ?? PYTH_HERMES_URL;
  if (!/^https?:\/\/[^\s/]+/.test(base)) throw new ValidationError('PYTH_HERMES_URL', 'must be an http:// or https:// URL');
  const name = opts.name ?? 'pyth-hermes';
  const maxConfBps = BigInt(intOption('PYTH_MAX_CONF_BPS', opts.maxConfBps, 100, 0, 9_999));
  const maxPrice = parsePrice(opts.maxPrice ?? '1000000');
  if (maxPrice === undefined || maxPrice === 0n) throw new ValidationError('maxPrice', 'must be a positive decimal string');
  const settings = lifecycleSettings(opts, intOption);
  const rateLimitDelayMs = intOption('rateLimitDelayMs', opts.rateLimitDelayMs, 60_000, 0);
  const connectTimeoutMs = intOption('connectTimeoutMs', opts.connectTimeoutMs, 15_000, 1);
  const idleTimeoutMs = intOption('idleTimeoutMs', opts.idleTimeoutMs, 45_000, 1);
  const { now } = settings;
  const log = opts.logger;
  const apiKey = opts.apiKey;

  const byFeed = new Map<string, FeedState>();
  for (const venue of opts.symbols) {
    const raw = opts.feedIds[venue];
    if (raw === undefined) throw new ValidationError('PYTH_FEED_IDS', `no Pyth feed id for ${venue}`);
    const id = normalizeFeedId(raw);
    if (id === undefined) throw new ValidationError('PYTH_FEED_IDS', `the feed id of ${venue} must be 64 hex digits`);
    const other = byFeed.get(id);
    if (other !== undefined) throw new ValidationError('PYTH_FEED_IDS', `${venue} and ${other.venue} have the same feed id`);
    byFeed.set(id, { venue, publishTime: undefined, slot: undefined, key: '' });
  }
  if (byFeed.size === 0) throw new ValidationError('symbols', 'at least one symbol is required');
  const url = pythStreamUrl(base, [...byFeed.keys()]);

  /** Server text may echo a header; never let the key through to a log or health(). */
  const redact = (text: string): string => text.split(apiKey).join('[redacted]').replace(/\s+/g, ' ').trim().slice(0, 300);

  let abort: AbortController | undefined;
  let generation = 0;
  let connectTimer: NodeJS.Timeout | undefined;
  let idleTimer: NodeJS.Timeout | undefined;
  let reading: Promise<void> | undefined;

  /** Forgets the current connection (its late events are ignored) and cancels it. */
  const detach = (): void => {
    for (const t of [connectTimer, idleTimer]) if (t !== undefined) clearTimeout(t);
    connectTimer = idleTimer = undefined;
    generation++;
    const a = abort;
    abort = undefined;
    a?.abort();
  };

  const lifecycle = createSourceLifecycle({
    name,
    redact,
    ...settings,
    connect: () => connect(),
    drop: detach,
    failedMessage: 'quote source: stopped for good; fix the key, the feed ids or the URL, then restart',
  });
  const { counters, malformed, lose } = lifecycle;

  /** One element of `parsed`: a feed's price, checked and, when usable and new, emitted. */
  const handleFeed = (el: JsonValue, receivedAt: number, raw: () => string): void => {
    if (!isObject(el)) return malformed(raw());
    const id = normalizeFeedId(el.id);
    const p = el.price;
    if (id === undefined || !isObject(p)) return malformed(raw());
    // Hermes writes price and conf as strings (they are 64-bit), expo and publish_time as numbers.
    const mantissaText = p.price;
    const confText = p.conf;
    const expo = intOf(p.expo);
    const publishTime = intOf(p.publish_time);
    if (typeof mantissaText !== 'string' || !INT_RE.test(mantissaText) || typeof confText !== 'string' || !INT_RE.test(confText) || confText.startsWith('-')) {
      return malformed(raw());
    }
    if (expo === undefined || expo < -18 || expo > 18 || publishTime === undefined || publishTime <= 0) return malformed(raw());
    const meta = el.metadata;
    let slot: bigint | undefined;
    if (isObject(meta) && meta.slot !== undefined && meta.slot !== null) {
      if (!(meta.slot instanceof JsonNumber) || !/^(0|[1-9]\d{0,19})$/.test(meta.slot.text)) return malformed(raw());
      slot = BigInt(meta.slot.text);
    }
    const st = byFeed.get(id);
    if (st === undefined) {
      // Not asked for (Hermes answers only what was asked; a proxy might not).
      counters.ignored++;
      return;
    }
    const mantissa = BigInt(mantissaText);
    const conf = BigInt(confText);
    // Confidence and price share the exponent: compare the integers.
    if (mantissa <= 0n || conf * 10_000n > maxConfBps * mantissa) {
      counters.rejectedValue++;
      return;
    }
    const price = scalePythPrice(mantissa, expo);
    if (price <= 0n || price > maxPrice) {
      counters.rejectedValue++;
      return;
    }
    if (st.publishTime !== undefined) {
      if (publishTime < st.publishTime || (publishTime === st.publishTime && slot !== undefined && st.slot !== undefined && slot < st.slot)) {
        counters.outOfOrder++;
        return;
      }
    }
    const key = `${mantissaText}|${confText}|${expo}`;
    if (st.publishTime === publishTime && st.key === key) {
      // The same price again: every event repeats every feed asked for, moved or not.
      counters.duplicate++;
      if (slot !== undefined) st.slot = slot;
      return;
    }
    st.publishTime = publishTime;
    st.slot = slot;
    st.key = key;
    counters.accepted++;
    const text = formatPrice(price);
    lifecycle.emit({ source: name, symbol: st.venue, bid: text, ask: text, last: text, lastIsTrade: false, sourceTime: publishTime * 1000, receivedAt });
  };

  const handleEvent = (type: string, data: string, receivedAt: number): void => {
    if (type === 'error') {
      // Hermes' own trouble (a lagging broadcast): recorded, the stream goes on.
      lifecycle.setError('hermes-error', data);
      log?.warn({ source: name, error: lifecycle.lastError }, 'quote source: the provider reported an error');
      return;
    }
    if (type !== 'message') {
      counters.ignored++;
      return;
    }
    let parsed: JsonValue;
    try {
      parsed = parseJsonLossless(data);
    } catch {
      return malformed(data);
    }
    if (!isObject(parsed) || !Array.isArray(parsed.parsed)) return malformed(data);
    const raw = (): string => data;
    for (const el of parsed.parsed) handleFeed(el, receivedAt, raw);
  };

  /** Reads the event stream of one connection until it ends, fails or is detached. */
  const readStream = async (body: ReadableStream<Uint8Array>, gen: number): Promise<void> => {
    const decoder = new TextDecoder('utf-8');
    let buffer = '';
    let eventType = '';
    let data: string[] = [];
    let dataChars = 0;
    const armIdle = (): void => {
      if (idleTimer !== undefined) clearTimeout(idleTimer);
      idleTimer = setTimeout(() => {
        if (gen === generation) lose('idle-timeout', `nothing read for ${idleTimeoutMs} ms (not even a keep-alive)`);
      }, idleTimeoutMs);
    };
    /** One line of the stream (WHATWG "server-sent events", "interpreting an event stream"). */
    const line = (text: string, receivedAt: number): void => {
      if (text === '') {
        if (data.length > 0) handleEvent(eventType === '' ? 'message' : eventType, data.join('\n'), receivedAt);
        eventType = '';
        data = [];
        dataChars = 0;
        return;
      }
      if (text.startsWith(':')) return; // a comment: Hermes' keep-alive, or "No update available"
      const colon = text.indexOf(':');
      const field = colon === -1 ? text : text.slice(0, colon);
      let value = colon === -1 ? '' : text.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'data') {
        data.push(value);
        dataChars += value.length;
      } else if (field === 'event') eventType = value;
      // `id` and `retry` are not used: a reconnect asks for the latest prices anyway.
    };
    armIdle();
    try {
      for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
        if (gen !== generation) return;
        const receivedAt = now();
        lifecycle.heard(receivedAt);
        armIdle();
        buffer += decoder.decode(chunk, { stream: true });
        let start = 0;
        for (;;) {
          const m = /\r\n|\r|\n/g;
          m.lastIndex = start;
          const hit = m.exec(buffer);
          // A lone CR at the end may be the first half of a CRLF still on its way.
          if (hit === null || (hit[0] === '\r' && hit.index === buffer.length - 1)) break;
          line(buffer.slice(start, hit.index), receivedAt);
          if (gen !== generation) return;
          start = hit.index + hit[0].length;
        }
        buffer = buffer.slice(start);
        if (buffer.length + dataChars > MAX_EVENT_CHARS) {
          malformed(buffer.slice(0, 200));
          return lose('oversized', `an event longer than ${MAX_EVENT_CHARS} characters`);
        }
      }
      if (gen === generation) lose('closed', 'the server ended the stream');
    } catch (err) {
      if (gen === generation) lose('socket', `stream read failed: ${(err as Error).message}`);
    }
  };

  const connect = (): void => {
    const gen = ++generation;
    lifecycle.connecting({ url: base, feeds: byFeed.size });
    const controller = new AbortController();
    abort = controller;
    connectTimer = setTimeout(() => {
      if (gen === generation) lose('connect-timeout', `no answer within ${connectTimeoutMs} ms`);
    }, connectTimeoutMs);
    const run = async (): Promise<void> => {
      let res: Response;
      try {
        res = await fetch(url, {
          headers: { authorization: `Bearer ${apiKey}`, accept: 'text/event-stream', 'cache-control': 'no-cache' },
          redirect: 'manual',
          signal: controller.signal,
        });
      } catch (err) {
        const cause = (err as { cause?: { code?: string; message?: string } }).cause;
        if (gen === generation) lose('socket', `request failed: ${cause?.code ?? cause?.message ?? (err as Error).message}`);
        return;
      }
      if (gen !== generation) {
        await res.body?.cancel().catch(() => undefined);
        return;
      }
      if (connectTimer !== undefined) clearTimeout(connectTimer);
      connectTimer = undefined;
      if (res.status !== 200) {
        const text = await res.text().catch(() => '');
        if (gen !== generation) return;
        const message = `${res.status} ${text.trim() === '' ? res.statusText : text}`;
        if (res.status >= 300 && res.status < 400) {
          return lifecycle.fail(res.status, `redirected to ${res.headers.get('location') ?? '?'} (not followed: set PYTH_HERMES_URL to the new address)`);
        }
        if (TERMINAL_STATUSES.has(res.status)) return lifecycle.fail(res.status, message);
        return lose(res.status, message, res.status === 429 ? rateLimitDelayMs : 0);
      }
      const type = res.headers.get('content-type') ?? '';
      if (!type.toLowerCase().startsWith('text/event-stream') || res.body === null) {
        await res.body?.cancel().catch(() => undefined);
        if (gen === generation) lose('not-sse', `expected text/event-stream, got ${type === '' ? 'no content type' : type}`);
        return;
      }
      lifecycle.live({ feeds: byFeed.size });
      await readStream(res.body, gen);
    };
    reading = run().catch((err: unknown) => {
      // Not expected (every provider fault is handled above): drop the connection rather than hang.
      if (gen === generation) lose('internal', (err as Error)?.message ?? String(err));
    });
  };

  return {
    name,
    start: lifecycle.start,
    async stop() {
      detach();
      lifecycle.stop();
      // The aborted request settles at once; waiting for it leaves no socket behind.
      await reading?.catch(() => undefined);
    },
    onTick: lifecycle.onTick,
    onStateChange: lifecycle.onStateChange,
    health: lifecycle.health,
  };
}
