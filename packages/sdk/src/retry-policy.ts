/**
 * Retries of idempotent calls: exponential backoff with full jitter (a random wait between 0 and
 * base·2^attempt, capped), or the server's `Retry-After` when it sends one. Only calls that are safe
 * to repeat are retried: GETs, and writes the server applies at most once (Idempotency-Key,
 * clientOrderId, clientWithdrawalId).
 */

export interface RetryOptions {
  /** Retries after the first attempt. Default 2; 0 turns retrying off. */
  retries?: number;
  /** Cap of the first backoff window, doubled each attempt. Default 250 ms. */
  baseDelayMs?: number;
  /** Largest backoff window. Default 5 000 ms. */
  maxDelayMs?: number;
  /** A Retry-After longer than this is not waited for: the error is thrown with `retryAfter`. Default 10 000 ms. */
  maxRetryAfterMs?: number;
  /** Source of randomness in [0, 1) (tests pin it). Default Math.random. */
  random?: () => number;
}

export type ResolvedRetry = Required<RetryOptions>;

export function resolveRetry(opts: RetryOptions | false | undefined): ResolvedRetry {
  const o = opts === false ? { retries: 0 } : (opts ?? {});
  return {
    retries: o.retries ?? 2,
    baseDelayMs: o.baseDelayMs ?? 250,
    maxDelayMs: o.maxDelayMs ?? 5_000,
    maxRetryAfterMs: o.maxRetryAfterMs ?? 10_000,
    random: o.random ?? Math.random,
  };
}

/** HTTP statuses worth another attempt: rate limited, or the service briefly unavailable. */
export function isRetryableStatus(httpStatus: number): boolean {
  return httpStatus === 429 || httpStatus === 503;
}

/**
 * The wait before retry number `attempt` (0 for the first retry), or undefined when the server
 * asked for a longer pause than the policy accepts.
 */
export function retryDelayMs(policy: ResolvedRetry, attempt: number, retryAfterSeconds?: number): number | undefined {
  if (retryAfterSeconds !== undefined && Number.isFinite(retryAfterSeconds) && retryAfterSeconds >= 0) {
    const ms = retryAfterSeconds * 1000;
    return ms > policy.maxRetryAfterMs ? undefined : ms;
  }
  const window = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
  return Math.floor(policy.random() * window);
}

/** `Retry-After` as seconds: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

/**
 * Whether a failed fetch certainly never reached the server (connection refused, name not found):
 * such a request is safe to send again whatever it does.
 */
export function neverSent(err: unknown): boolean {
  const cause = (err as { cause?: { code?: string } })?.cause;
  const code = cause?.code ?? (err as { code?: string })?.code;
  return code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN';
}

export function isAbort(err: unknown): boolean {
  return err instanceof Error && (err.name === 'AbortError' || err.name === 'TimeoutError');
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
