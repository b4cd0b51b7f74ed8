/**
 * Live quote sources: where the venue's prices come from when they are not simulated. A source
 * connects to a provider, turns its messages into `SourceTick`s and reports its health; what a
 * tick means for trading (stale, diverged from a second source) is `quote-guard.ts`'s to decide.
 *
 * Prices are exact: decimal strings with at least two and at most `PRICE_DECIMALS` places, made
 * from the provider's own digits (never through a double), and scaled bigints inside.
 */

/** One top-of-book update of a symbol from one source. */
export interface SourceTick {
  /** The source's name (`alpaca-iex`): the guard keeps its state and counters per source. */
  source: string;
  /** The venue's symbol (a source maps provider tickers to it). */
  symbol: string;
  /** Best bid and ask: decimal strings, 2 to 8 places (`"229.80"`, `"0.1234"`). */
  bid: string;
  ask: string;
  /**
   * Last trade price when the source has seen a trade of the symbol since it started, else the
   * mid of bid and ask rounded half up to 8 places (`lastIsTrade` tells which). Not clamped to
   * [bid, ask]: a real print can sit outside the current quote.
   */
  last: string;
  lastIsTrade: boolean;
  /** The provider's timestamp of the quote, ms since the epoch (nanoseconds cut, not rounded). */
  sourceTime: number;
  /** When this process read it, ms since the epoch, from the source's clock. */
  receivedAt: number;
}

/**
 * One trade print of a symbol from one source (sources that subscribe to trades). It is not a
 * quote: the guard never sees it. The live service takes its size into the candle volume, and its
 * price is what the symbol's next tick carries as `last`.
 */
export interface SourceTrade {
  source: string;
  /** The venue's symbol. */
  symbol: string;
  /** Decimal string, 2 to 8 places, like a tick's prices. */
  price: string;
  /** Shares, a non-negative integer string ("100"); "0" when the provider's size was not one. */
  size: string;
  /** The provider's timestamp of the trade, ms since the epoch (nanoseconds cut). */
  sourceTime: number;
  receivedAt: number;
}

/** What happened to the messages a source or the guard was handed. Monotonic counts. */
export interface SourceCounters {
  /** Data messages (quotes and trades) taken. */
  accepted: number;
  /** The same message as the last one taken for that symbol (same time, same values). */
  duplicate: number;
  /** A timestamp older than the last one taken for that symbol. */
  outOfOrder: number;
  /** Not parseable, not of the documented shape, or a field of the wrong type. */
  malformed: number;
  /** Well formed but not a usable price: zero or negative, crossed, absurd spread or size. */
  rejectedValue: number;
  /** Understood and deliberately unused (bars, statuses, symbols not asked for). */
  ignored: number;
}

export const emptyCounters = (): SourceCounters => ({
  accepted: 0,
  duplicate: 0,
  outOfOrder: 0,
  malformed: 0,
  rejectedValue: 0,
  ignored: 0,
});

export type SourceState =
  /** Created, not started. */
  | 'idle'
  /** Opening the connection and authenticating. */
  | 'connecting'
  /** Authenticated; the subscription is not confirmed yet (or was refused: see lastError). */
  | 'subscribing'
  /** Subscribed: ticks flow. */
  | 'live'
  /** Lost the connection; a retry is scheduled (`nextRetryAt`). */
  | 'reconnecting'
  /** Gave up: a retry cannot help (credentials refused, plan lacks the feed). start() tries again. */
  | 'failed'
  /** Stopped by `stop()`. */
  | 'stopped';

export interface SourceError {
  /** The provider's error code (Alpaca: 402 ...) or a local one (`handshake-timeout`, `socket`). */
  code: number | string;
  /** Safe to log and show: never carries credentials. */
  message: string;
  at: number;
}

export interface SourceHealth {
  name: string;
  state: SourceState;
  /** `state === 'live'`. */
  ready: boolean;
  /** Connections opened since start (the first one included). */
  connects: number;
  /** Reconnects scheduled since the last successful subscription (the backoff exponent). */
  retryAttempt: number;
  nextRetryAt: number | undefined;
  /** Last message of any kind read from the provider. */
  lastMessageAt: number | undefined;
  lastError: SourceError | undefined;
  /** Symbols asked for that the provider's subscription confirmation left out. */
  unconfirmedSymbols: string[];
  counters: SourceCounters;
}

/** A pluggable live source of quotes. */
export interface QuoteSource {
  readonly name: string;
  /**
   * Connects. Resolves once the first attempt has settled: subscribed, failed for good, or lost
   * (then retries go on in the background). Never rejects for the provider's trouble; health()
   * and the guard's statuses tell it.
   */
  start(): Promise<void>;
  /** Closes the connection and cancels retries. Resolves when the socket is closed. */
  stop(): Promise<void>;
  /** Called with every accepted tick; returns the unsubscribe function. */
  onTick(listener: (tick: SourceTick) => void): () => void;
  /** Called with every trade taken (in order, not a duplicate), where the source has trades; returns the unsubscribe function. */
  onTrade?(listener: (trade: SourceTrade) => void): () => void;
  /** Called on every change of state (not on ticks); returns the unsubscribe function. */
  onStateChange(listener: (health: SourceHealth) => void): () => void;
  health(): SourceHealth;
}

/** Places prices are held to: Reg NMS sub-penny quotes go to 4, imported CSV prices to 8. */
export const PRICE_DECIMALS = 8;
const PRICE_SCALE = 10n ** BigInt(PRICE_DECIMALS);
const PRICE_RE = /^(0|[1-9]\d{0,15})(?:\.(\d{1,8}))?$/;

/** A decimal price string (up to 8 places, no sign or exponent) as a bigint scaled by 10^8; else undefined. */
export function parsePrice(value: unknown): bigint | undefined {
  if (typeof value !== 'string') return undefined;
  const m = PRICE_RE.exec(value);
  if (m === null) return undefined;
  return BigInt(m[1]) * PRICE_SCALE + BigInt((m[2] ?? '').padEnd(PRICE_DECIMALS, '0'));
}

/** 12655000000n → "126.55", 1234n → "0.00001234": at least two places, trailing zeros beyond them trimmed. */
export function formatPrice(scaled: bigint): string {
  if (scaled < 0n) throw new RangeError('formatPrice: negative price');
  const whole = scaled / PRICE_SCALE;
  let frac = (scaled % PRICE_SCALE).toString().padStart(PRICE_DECIMALS, '0');
  let end = frac.length;
  while (end > 2 && frac.charCodeAt(end - 1) === 48 /* 0 */) end--;
  frac = frac.slice(0, end);
  return `${whole}.${frac}`;
}

/** The mid of two scaled prices, rounded half up to the scale. */
export function midOf(bid: bigint, ask: bigint): bigint {
  return (bid + ask + 1n) / 2n;
}

const RFC3339_RE = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/**
 * An RFC 3339 timestamp (Alpaca's `"2021-02-22T15:51:45.335689322Z"`) as nanoseconds since the
 * epoch, exactly; undefined when it is not one or names an impossible date (Feb 30, hour 24).
 * Leap seconds (`:60`) are refused.
 */
export function parseRfc3339Nanos(value: unknown): bigint | undefined {
  if (typeof value !== 'string') return undefined;
  const m = RFC3339_RE.exec(value);
  if (m === null) return undefined;
  const [year, month, day, hour, minute, second] = [1, 2, 3, 4, 5, 6].map((k) => Number(m[k]));
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return undefined;
  const wholeMs = Date.UTC(year, month - 1, day, hour, minute, second);
  const check = new Date(wholeMs);
  // Date.UTC rolls Feb 30 over into March; a real date reads back unchanged.
  if (check.getUTCFullYear() !== year || check.getUTCMonth() !== month - 1 || check.getUTCDate() !== day) return undefined;
  let offsetMin = 0;
  if (m[8] === undefined) {
    const oh = Number(m[10]);
    const om = Number(m[11]);
    if (oh > 23 || om > 59) return undefined;
    offsetMin = (m[9] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const nanos = BigInt((m[7] ?? '').padEnd(9, '0'));
  return (BigInt(wholeMs) - BigInt(offsetMin) * 60_000n) * 1_000_000n + nanos;
}
