/**
 * `Idempotency-Key` on the sandbox's `POST /fund` (docs/sandbox.md, "Fund"): a retry under the same
 * key and the same request is answered with the first attempt's answer, and nothing is minted again;
 * the same key with another request is refused 409, as the stock API's sends refuse it
 * (docs/one-click.md, "Retries"). The key and fingerprint are the stock API's helpers
 * (src/http/idempotency-key.ts).
 *
 * Held in the process, for a day and at most MAX_KEYS keys (a restart forgets them: the sandbox is
 * for tests and demos, and its one token is the only caller). Only a success is kept: an attempt
 * that failed (a 400, a 409, the chain away) leaves the key free, so its retry runs again. Two
 * attempts at once under one key run once: the second waits for the first's answer.
 */
import { ConflictError } from '../errors/app-error.ts';
import { IDEMPOTENCY_HEADER } from '../http/idempotency-key.ts';

/** Keys kept at most; the oldest go first. */
export const MAX_KEYS = 10_000;
/** How long a key is kept. */
export const KEY_TTL_MS = 24 * 60 * 60 * 1000;

interface Entry {
  fingerprint: string;
  answer: Promise<unknown>;
  at: number;
}

export function createIdempotentCalls(opts: { now?: () => number } = {}) {
  const now = opts.now ?? Date.now;
  const entries = new Map<string, Entry>();

  const prune = (t: number) => {
    for (const [key, e] of entries) {
      // Insertion order is age order: stop at the first one still kept.
      if (t - e.at < KEY_TTL_MS && entries.size <= MAX_KEYS) break;
      entries.delete(key);
    }
  };

  return {
    /**
     * Runs `fn` once per key: `replayed` when the answer is an earlier attempt's. Without a key,
     * every call runs.
     */
    async run<T>(key: string | undefined, fingerprint: string, fn: () => Promise<T>): Promise<{ value: T; replayed: boolean }> {
      if (key === undefined) return { value: await fn(), replayed: false };
      const t = now();
      prune(t);
      const earlier = entries.get(key);
      if (earlier !== undefined) {
        if (earlier.fingerprint !== fingerprint) throw new ConflictError(`${IDEMPOTENCY_HEADER}: already used by another request; use a new key for a new request`);
        return { value: (await earlier.answer) as T, replayed: true };
      }
      const answer = fn();
      const entry: Entry = { fingerprint, answer, at: t };
      entries.set(key, entry);
      try {
        return { value: await answer, replayed: false };
      } catch (err) {
        // A failure is not kept: the retry runs again (unless another attempt took the key since).
        if (entries.get(key) === entry) entries.delete(key);
        throw err;
      }
    },
  };
}

export type IdempotentCalls = ReturnType<typeof createIdempotentCalls>;
