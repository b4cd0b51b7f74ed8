import { describe, expect, it } from 'vitest';
import { Freshness } from './freshness.ts';
import { describeFeeds, type Feed } from './live-feed.ts';

const feed = (name: string, state: Feed['state'], problem?: string): Feed => ({ name, state, problem, stop: async () => undefined });

describe('Freshness: stale from the data\'s own times', () => {
  it('is fresh while the time advances, stale once it stood still past the threshold', () => {
    const clock = { now: 1_000 };
    const f = new Freshness(30_000, () => clock.now);
    f.note('AAPL', 500_000, false);
    expect(f.isStale('AAPL')).toBe(false);
    clock.now += 30_000;
    expect(f.isStale('AAPL')).toBe(false);
    // The same quote again (a poll, a resent frame): its time did not advance.
    f.note('AAPL', 500_000, false);
    clock.now += 1;
    expect(f.isStale('AAPL')).toBe(true);
    expect(f.stale()).toEqual([{ name: 'AAPL' }]);
    // A newer quote: fresh again.
    f.note('AAPL', 500_250, false);
    expect(f.isStale('AAPL')).toBe(false);
  });

  it('is stale at once when the server says so, or when the price has no time; unknown names are not', () => {
    const f = new Freshness(30_000, () => 0);
    f.note('MSFT', 1_000, true);
    f.note('BTC-USD index', null, false);
    f.note('AAPL', 1_000, false);
    expect(f.stale()).toEqual([{ name: 'BTC-USD index' }, { name: 'MSFT' }]);
    expect(f.isStale('TSLA')).toBe(false);
    f.forget('MSFT');
    expect(f.stale()).toEqual([{ name: 'BTC-USD index' }]);
  });
});

describe('describeFeeds', () => {
  it('says streaming only when every feed is live and no price is stale', () => {
    const live = [feed('quotes AAPL', 'live'), feed('order book BTC-USD', 'live')];
    expect(describeFeeds(live)).toBe('Live data: streaming.');
    expect(describeFeeds(live, ['AAPL'], 30_000)).toBe('Live data: stale, no new price for AAPL in over 30 s.');
    expect(describeFeeds(live, ['AAPL', 'BTC-USD index', 'MSFT', 'NVDA', 'SPY'], 30_000)).toBe(
      'Live data: stale, no new price for AAPL, BTC-USD index, MSFT, NVDA and 1 more in over 30 s.',
    );
  });

  it('puts stale first, beside the feeds that poll', () => {
    const feeds = [feed('quotes AAPL', 'polling', 'quotes AAPL: socket closed'), feed('trades BTC-USD', 'live')];
    expect(describeFeeds(feeds, ['AAPL'], 3_000)).toBe(
      'Live data: stale, no new price for AAPL in over 3 s; streams unavailable, polling the REST APIs instead for quotes AAPL. Last problem: quotes AAPL: socket closed.',
    );
    expect(describeFeeds([feed('quotes AAPL', 'connecting')])).toBe('Live data: connecting…');
  });
});
