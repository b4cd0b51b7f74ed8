/** Polls `fn` until `ok` holds (for state the indexer or executor reaches later); throws with the last value after `timeoutMs`. */
export async function until<T>(fn: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`condition not met in time: ${shown(v)}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

/** The last value for the failure message: bigints as text, cut short (a scrape or a page can be long). */
function shown(v: unknown): string {
  const text = JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? x.toString() : x)) ?? String(v);
  return text.length > 2_000 ? `${text.slice(0, 2_000)}…` : text;
}
