/**
 * What every streaming quote source does around its protocol: the state machine and its
 * listeners, health(), counters, the redacted last error, the first start() settling once, and
 * reconnecting with exponential backoff and jitter. A source (alpaca-stream-source.ts,
 * pyth-hermes-source.ts) keeps its connection, handshake and message parsing; it hands this its
 * `connect` (opened at start() and when a retry is due) and `drop` (forget and close the current
 * connection), and calls `lose` or `fail` when a connection ends.
 */
import { ValidationError } from '../../errors/app-error.ts';
import type { MarketDataLogger } from '../history-seeder.ts';
import { emptyCounters, type SourceCounters, type SourceError, type SourceHealth, type SourceState, type SourceTick } from './quote-source.ts';

/** What every streaming source's options share: reconnecting, its clock and its log (each source applies the defaults). */
export interface ReconnectingSourceOptions {
  /** First reconnect delay. Default 1000 ms; doubles per attempt up to maxBackoffMs. */
  initialBackoffMs?: number;
  /** Default 60 000 ms. */
  maxBackoffMs?: number;
  /** Each delay is scaled by a random factor in [1 − jitter, 1 + jitter]. Default 0.2. */
  backoffJitter?: number;
  /** Clock for receivedAt and health times. Default Date.now. */
  now?: () => number;
  /** Default Math.random (backoff jitter). */
  random?: () => number;
  logger?: MarketDataLogger;
}

export interface SourceLifecycleOptions {
  name: string;
  /** Provider text may echo the credential: applied to every error kept and every sample logged. */
  redact: (text: string) => string;
  /** Validated by the source (its option names and messages). */
  initialBackoffMs: number;
  maxBackoffMs: number;
  backoffJitter: number;
  now: () => number;
  random: () => number;
  logger?: MarketDataLogger;
  /** Opens a new connection: on start() and when a scheduled retry is due. */
  connect: () => void;
  /** Forgets the current connection (its late events are ignored) and closes it at once. */
  drop: () => void;
  /** The error log line when a retry cannot help: what the operator has to fix. */
  failedMessage: string;
  /** Symbols the provider did not confirm (a copy); none by default. */
  unconfirmedSymbols?: () => string[];
}

/**
 * What a source hands its lifecycle from its options: backoff from 1 s to 60 s with 20 % jitter
 * unless they say otherwise, checked by the source's own integer reader (its messages), and the
 * clock, randomness and logger it was given.
 */
export function lifecycleSettings(
  opts: ReconnectingSourceOptions,
  int: (field: string, value: number | undefined, fallback: number, min: number) => number,
): Pick<SourceLifecycleOptions, 'initialBackoffMs' | 'maxBackoffMs' | 'backoffJitter' | 'now' | 'random' | 'logger'> {
  const initialBackoffMs = int('initialBackoffMs', opts.initialBackoffMs, 1000, 1);
  const maxBackoffMs = int('maxBackoffMs', opts.maxBackoffMs, 60_000, initialBackoffMs);
  const backoffJitter = opts.backoffJitter ?? 0.2;
  if (!(backoffJitter >= 0 && backoffJitter < 1)) throw new ValidationError('backoffJitter', 'must be in [0, 1)');
  return { initialBackoffMs, maxBackoffMs, backoffJitter, now: opts.now ?? Date.now, random: opts.random ?? Math.random, logger: opts.logger };
}

export interface SourceLifecycle {
  /** Mutable: the source counts what it does with each message. */
  readonly counters: SourceCounters;
  readonly lastError: SourceError | undefined;
  health(): SourceHealth;
  /** Moves to `next` and tells the state listeners (a listener that throws is logged, not rethrown). */
  setState(next: SourceState): void;
  /** Records the error, redacted, without changing state. */
  setError(code: number | string, message: string): void;
  /** Something (data, control, keep-alive) was read from the provider at `at`. */
  heard(at: number): void;
  /** Counts a malformed message; logs a sample once per connection. */
  malformed(sample: string): void;
  /** Hands a tick to every tick listener. */
  emit(tick: SourceTick): void;
  /** A new connection is being opened; `fields` go into the log line before `attempt`. */
  connecting(fields: Record<string, unknown>): void;
  /** The connection delivers: backoff reset, `live`, the first start() settled; `fields` go into the log line before `connects`. */
  live(fields: Record<string, unknown>): void;
  /** The connection is lost or must be dropped: retry with backoff, not sooner than `atLeastMs`. */
  lose(code: number | string, message: string, atLeastMs?: number): void;
  /** A retry cannot help: stop for good (`failed`); start() tries again. */
  fail(code: number | string, message: string): void;
  start(): Promise<void>;
  /** Cancels a scheduled retry and moves to `stopped`; the source drops its connection first. */
  stop(): void;
  onTick(listener: (tick: SourceTick) => void): () => void;
  onStateChange(listener: (health: SourceHealth) => void): () => void;
}

export function createSourceLifecycle(opts: SourceLifecycleOptions): SourceLifecycle {
  const { name, redact, initialBackoffMs, maxBackoffMs, backoffJitter: jitter, now, random, logger: log } = opts;
  let state: SourceState = 'idle';
  let connects = 0;
  let retryAttempt = 0;
  let nextRetryAt: number | undefined;
  let retryTimer: NodeJS.Timeout | undefined;
  let lastMessageAt: number | undefined;
  let lastError: SourceError | undefined;
  let malformedLogged = false;
  const counters = emptyCounters();
  const tickListeners = new Set<(tick: SourceTick) => void>();
  const stateListeners = new Set<(health: SourceHealth) => void>();
  let settleStart: (() => void) | undefined;
  let startPromise: Promise<void> | undefined;

  const health = (): SourceHealth => ({
    name,
    state,
    ready: state === 'live',
    connects,
    retryAttempt,
    nextRetryAt,
    lastMessageAt,
    lastError: lastError === undefined ? undefined : { ...lastError },
    unconfirmedSymbols: opts.unconfirmedSymbols?.() ?? [],
    counters: { ...counters },
  });

  const setState = (next: SourceState): void => {
    if (state === next) return;
    state = next;
    const snapshot = health();
    for (const listener of stateListeners) {
      try {
        listener(snapshot);
      } catch (err) {
        log?.error({ err, source: name }, 'quote source: state listener threw');
      }
    }
  };

  const setError = (code: number | string, message: string): void => {
    lastError = { code, message: redact(message), at: now() };
  };

  const settleFirst = (): void => {
    const settle = settleStart;
    settleStart = undefined;
    settle?.();
  };

  const backoffDelay = (attempt: number): number => {
    const base = Math.min(maxBackoffMs, initialBackoffMs * 2 ** Math.min(attempt, 30));
    const jittered = base * (1 - jitter + 2 * jitter * random());
    return Math.max(1, Math.round(Math.min(jittered, maxBackoffMs)));
  };

  const scheduleRetry = (atLeastMs: number): void => {
    const delay = Math.max(backoffDelay(retryAttempt), atLeastMs);
    retryAttempt++;
    nextRetryAt = now() + delay;
    setState('reconnecting');
    log?.warn({ source: name, delayMs: delay, attempt: retryAttempt, error: lastError }, 'quote source: reconnecting');
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      nextRetryAt = undefined;
      if (state === 'reconnecting') opts.connect();
    }, delay);
  };

  const listen = <T>(set: Set<T>, listener: T): (() => void) => {
    set.add(listener);
    return () => {
      set.delete(listener);
    };
  };

  return {
    counters,
    get lastError() {
      return lastError;
    },
    health,
    setState,
    setError,
    heard(at) {
      lastMessageAt = at;
    },
    malformed(sample) {
      counters.malformed++;
      if (!malformedLogged) {
        // Once per connection: a provider sending garbage would otherwise flood the log.
        malformedLogged = true;
        log?.warn({ source: name, sample: redact(sample).slice(0, 200) }, 'quote source: malformed message skipped');
      }
    },
    emit(tick) {
      for (const listener of tickListeners) {
        try {
          listener(tick);
        } catch (err) {
          log?.error({ err, source: name }, 'quote source: tick listener threw');
        }
      }
    },
    connecting(fields) {
      malformedLogged = false;
      connects++;
      setState('connecting');
      log?.info({ source: name, ...fields, attempt: retryAttempt }, 'quote source: connecting');
    },
    live(fields) {
      retryAttempt = 0;
      log?.info({ source: name, ...fields, connects }, 'quote source: live');
      setState('live');
      settleFirst();
    },
    lose(code, message, atLeastMs = 0) {
      if (state === 'stopped' || state === 'failed') return;
      setError(code, message);
      opts.drop();
      scheduleRetry(atLeastMs);
      settleFirst();
    },
    fail(code, message) {
      if (state === 'stopped' || state === 'failed') return;
      setError(code, message);
      opts.drop();
      log?.error({ source: name, error: lastError }, opts.failedMessage);
      setState('failed');
      settleFirst();
    },
    start() {
      // Again after stop() or a terminal failure (fixed credentials): a fresh first attempt.
      if (state !== 'idle' && state !== 'stopped' && state !== 'failed') return startPromise ?? Promise.resolve();
      lastError = undefined;
      retryAttempt = 0;
      startPromise = new Promise<void>((resolve) => {
        settleStart = resolve;
      });
      opts.connect();
      return startPromise;
    },
    stop() {
      if (retryTimer !== undefined) clearTimeout(retryTimer);
      retryTimer = undefined;
      nextRetryAt = undefined;
      if (state !== 'idle') setState('stopped');
      settleFirst();
    },
    onTick: (listener) => listen(tickListeners, listener),
    onStateChange: (listener) => listen(stateListeners, listener),
  };
}
