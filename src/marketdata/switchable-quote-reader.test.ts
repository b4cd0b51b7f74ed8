import { describe, expect, it } from 'vitest';
import type { QuoteListener } from './market-data-service.ts';
import type { Quote } from './market-types.ts';
import { createSwitchableQuoteReader } from './switchable-quote-reader.ts';

function fakeFeed(name: string) {
  const listeners = new Set<QuoteListener>();
  const quotes = new Map<string, Quote>();
  return {
    name,
    getQuote: (s: string) => quotes.get(s),
    listQuotes: () => [...quotes.values()],
    onQuote(l: QuoteListener) {
      listeners.add(l);
      return () => void listeners.delete(l);
    },
    push(q: Quote) {
      quotes.set(q.symbol, q);
      for (const l of listeners) l(q);
    },
    listeners,
  };
}
const quote = (symbol: string, bid: string, timestamp: number) => ({ symbol, bid, ask: bid, timestamp }) as unknown as Quote;

describe('the switchable quote reader', () => {
  it('a reader taken before the marketdata role restarted reads and hears the new feed, not the stopped one', () => {
    const reader = createSwitchableQuoteReader();
    const first = fakeFeed('first');
    reader.use(first);
    // A role (the stock API's streams) takes the reader and listens once, at its start.
    const heard: string[] = [];
    const off = reader.onQuote((q) => heard.push(`${q.symbol} ${(q as unknown as { bid: string }).bid}`));
    first.push(quote('AAPL', '230.10', 1));
    expect(reader.getQuote('AAPL')).toMatchObject({ bid: '230.10' });

    // The lease is lost and retaken: the role starts a second feed.
    const second = fakeFeed('second');
    reader.use(second);
    expect(first.listeners.size).toBe(0);
    first.push(quote('AAPL', '1.00', 2)); // a stopped feed's late push is not heard
    second.push(quote('AAPL', '231.20', 3));
    expect(reader.getQuote('AAPL')).toMatchObject({ bid: '231.20', timestamp: 3 });
    expect(reader.listQuotes()).toHaveLength(1);
    expect(heard).toEqual(['AAPL 230.10', 'AAPL 231.20']);

    off();
    expect(second.listeners.size).toBe(0);
    second.push(quote('AAPL', '232.00', 4));
    expect(heard).toHaveLength(2);
  });

  it('falls back to a reader without pushes (the quotes table) and keeps its listeners for the next feed', () => {
    const reader = createSwitchableQuoteReader();
    const heard: number[] = [];
    reader.onQuote((q) => heard.push(q.timestamp));
    const table = new Map([['TSLA', quote('TSLA', '250.00', 10)]]);
    reader.use({ getQuote: (s) => table.get(s) });
    expect(reader.getQuote('TSLA')).toMatchObject({ bid: '250.00' });
    expect(reader.listQuotes()).toEqual([]);
    const next = fakeFeed('next');
    reader.use(next);
    next.push(quote('TSLA', '251.00', 11));
    expect(heard).toEqual([11]);
    expect(reader.current).toBe(next);
  });
});
