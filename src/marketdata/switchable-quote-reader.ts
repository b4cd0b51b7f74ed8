/**
 * The quotes a process's roles read when its marketdata role runs here: one reader that stays the
 * same for them while the feed behind it changes. The marketdata role holds a lease; when it loses
 * it (a stalled loop, a standby taking over) it stops its feed and, once it has the lease back,
 * starts a new one. Roles that do not restart with it (the stock API, its streams) took their
 * reader once at their start: handed the feed itself, they read a stopped feed for ever — prices
 * frozen, streams silent, everything else fresh. Handed this reader, they follow the new feed.
 *
 * Between a stop and the next feed the context points it at the quotes table, which the process
 * now holding the lease writes (stack-context.ts `withdrawQuotes`); it pushes nothing meanwhile.
 */
import type { QuoteListener } from './market-data-service.ts';
import type { Quote, QuoteReader } from './market-types.ts';

type Feed = QuoteReader & { onQuote?(listener: QuoteListener): () => void; listQuotes?(): Quote[] };

export interface SwitchableQuoteReader extends QuoteReader {
  /** Reads and pushes from `feed` from now on; listeners move over to it. */
  use(feed: Feed): void;
  /** The feed in use. */
  readonly current: QuoteReader | undefined;
  listQuotes(): Quote[];
  /** Every quote of whichever feed is in use; the unsubscribe function. */
  onQuote(listener: QuoteListener): () => void;
}

export function createSwitchableQuoteReader(): SwitchableQuoteReader {
  let current: Feed | undefined;
  // Each listener with its unsubscribe function on the current feed.
  const listeners = new Map<QuoteListener, (() => void) | undefined>();
  const attach = (l: QuoteListener) => current?.onQuote?.(l);
  return {
    get current() {
      return current;
    },
    use(feed) {
      if (feed === current) return;
      for (const [l, off] of listeners) {
        off?.();
        listeners.set(l, undefined);
      }
      current = feed;
      for (const l of listeners.keys()) listeners.set(l, attach(l));
    },
    getQuote(symbol) {
      return current?.getQuote(symbol);
    },
    listQuotes() {
      return current?.listQuotes?.() ?? [];
    },
    onQuote(listener) {
      listeners.set(listener, attach(listener));
      return () => {
        listeners.get(listener)?.();
        listeners.delete(listener);
      };
    },
  };
}
