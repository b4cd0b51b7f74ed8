/**
 * The Pyth Hermes source against a local server that speaks Hermes' documented price stream
 * (test/support/pyth-hermes-fake-server.ts): bearer-key authentication, `ids[]` validation, a
 * `text/event-stream` of update events in the documented shape, keep-alive comments and error
 * events, replayed with gaps, duplicates, out-of-order, malformed, zero, negative and
 * too-uncertain prices. Waits on events; the idle-timeout cases run on short real timers.
 */
import { describe, expect, it } from 'vitest';
import { createPythHermesSource, type PythHermesSourceOptions } from '../../src/marketdata/sources/pyth-hermes-source.ts';
import { createQuoteGuard } from '../../src/marketdata/sources/quote-guard.ts';
import type { SourceHealth } from '../../src/marketdata/sources/quote-source.ts';
import { FAST_RETRIES, leaks, sourceTestKit, started, untilHealth } from '../support/quote-source-harness.ts';
import { FAKE_PYTH_KEY as KEY, FEED, startFakeHermes, updateJson, type FakeHermesOptions, type FeedPrice } from '../support/pyth-hermes-fake-server.ts';

const T0 = Date.UTC(2026, 8, 15, 14, 30, 0);
const S = T0 / 1000;

const { logLines, logger, defer, adopt } = sourceTestKit();

let clock = T0;
async function setup(fakeOpts: FakeHermesOptions = {}, over: Partial<PythHermesSourceOptions> = {}) {
  clock = T0;
  const server = await startFakeHermes(fakeOpts);
  defer(server.close);
  const source = createPythHermesSource({
    apiKey: KEY,
    url: server.url,
    symbols: ['AAPL', 'MSFT'],
    feedIds: { AAPL: FEED.AAPL, MSFT: `0x${FEED.MSFT.toUpperCase()}` },
    ...FAST_RETRIES,
    rateLimitDelayMs: 150,
    now: () => clock,
    logger,
    ...over,
  });
  return adopt(server, source);
}

const aapl = (price: string, publishTime: number, over: Partial<FeedPrice> = {}): FeedPrice => ({ id: FEED.AAPL, price, conf: '1150', expo: -5, publishTime, ...over });
const msft = (price: string, publishTime: number, over: Partial<FeedPrice> = {}): FeedPrice => ({ id: FEED.MSFT, price, conf: '21000', expo: -5, publishTime, ...over });

const keyLeaks = (...things: unknown[]): boolean => leaks(KEY, ...things);

describe('Pyth Hermes source against a local Hermes', { timeout: 10_000 }, () => {
  it('authenticates with the bearer key, asks for the mapped feeds and turns updates into exact ticks', async () => {
    const { server, source, log } = await started(setup());
    expect(source.health()).toMatchObject({ name: 'pyth-hermes', state: 'live', ready: true, connects: 1, lastError: undefined, unconfirmedSymbols: [] });
    const conn = server.connections[0];
    expect(conn.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(conn.headers.accept).toBe('text/event-stream');
    expect(conn.ids).toEqual([FEED.AAPL, FEED.MSFT]);
    expect(new URL(conn.url, 'http://x').searchParams.get('parsed')).toBe('true');

    clock = T0 + 400;
    conn.update(aapl('22981500', S), msft('41810000000', S, { expo: -8 }));
    // An exponent finer than 8 places: rounded half up (229.815000005 → 229.81500001).
    conn.update(aapl('2298150000050', S + 1, { expo: -10, conf: '11500000' }));
    await log.count(3);
    expect(log.ticks).toEqual([
      { source: 'pyth-hermes', symbol: 'AAPL', bid: '229.815', ask: '229.815', last: '229.815', lastIsTrade: false, sourceTime: T0, receivedAt: T0 + 400 },
      { source: 'pyth-hermes', symbol: 'MSFT', bid: '418.10', ask: '418.10', last: '418.10', lastIsTrade: false, sourceTime: T0, receivedAt: T0 + 400 },
      { source: 'pyth-hermes', symbol: 'AAPL', bid: '229.81500001', ask: '229.81500001', last: '229.81500001', lastIsTrade: false, sourceTime: T0 + 1000, receivedAt: T0 + 400 },
    ]);
    expect(source.health().counters).toEqual({ accepted: 3, duplicate: 0, outOfOrder: 0, malformed: 0, rejectedValue: 0, ignored: 0 });
    expect(keyLeaks(logLines, source.health())).toBe(false);
  });

  it('counts and skips duplicates, out-of-order, malformed, zero, negative and too-uncertain prices without dropping the stream', async () => {
    const { server, source, log, conn } = await started(setup());
    conn.raw('data:{"parsed":[\n\n'); // cut short
    conn.raw('data:[1,2]\n\n'); // not an update
    conn.raw('data:{"binary":{"encoding":"hex","data":[]}}\n\n'); // no parsed array
    conn.update(aapl('22980000', S + 10, { slot: 100 }));
    conn.update(aapl('22980000', S + 10, { slot: 101 })); // the same price again (every event repeats every feed)
    conn.update(aapl('22970000', S + 10, { slot: 99 })); // same second, older slot
    conn.update(aapl('22970000', S + 9)); // older publish time
    conn.update(aapl('0', S + 11)); // zero
    conn.update(aapl('-22980000', S + 11)); // negative
    conn.update(aapl('22980000', S + 11, { conf: '229801' })); // confidence just over 1 % of the price
    conn.raw(`data:${updateJson(aapl('22980000', S + 11)).replace('"price":"22980000"', '"price":22980000')}\n\n`); // price as a number
    conn.raw(`data:${updateJson(aapl('22980000', S + 11)).replace('"expo":-5', '"expo":"-5"')}\n\n`); // expo as a string
    conn.raw(`data:${updateJson(aapl('22980000', S + 11)).replace('"publish_time":', '"publish_time":-')}\n\n`); // negative time
    conn.raw(`data:${updateJson({ ...aapl('22980000', S + 11), id: 'AAPL' })}\n\n`); // not a feed id
    conn.update({ id: FEED.TSLA, price: '25140000', conf: '2000', expo: -5, publishTime: S + 11 }); // not asked for
    conn.event('error', 'Error receiving update: Lagged(3)'); // Hermes' own trouble: recorded, the stream goes on
    conn.raw('event:heartbeat\ndata:{}\n\n'); // an event type Hermes does not send
    conn.raw(': No update available\n\n');
    conn.keepAlive();
    // Confidence at exactly 1 % is still taken; a batch's bad element does not spoil the good one.
    conn.raw(`data:${updateJson(aapl('22980000', S + 11, { conf: '229800' }), msft('41810000', S + 11)).replace(`"id":"${FEED.MSFT}"`, '"id":7')}\n\n`);
    conn.raw(`data:${updateJson(msft('41812000', S + 12))}\r\n\r\n`); // CRLF line ends
    const split = `data:${updateJson(aapl('22990000', S + 13))}\n\n`;
    conn.raw(split.slice(0, 40));
    conn.raw(split.slice(40));
    await log.count(4);
    expect(log.ticks.map((t) => `${t.symbol} ${t.last} @${(t.sourceTime - T0) / 1000}`)).toEqual(['AAPL 229.80 @10', 'AAPL 229.80 @11', 'MSFT 418.12 @12', 'AAPL 229.90 @13']);
    expect(source.health()).toMatchObject({
      state: 'live',
      connects: 1,
      lastError: { code: 'hermes-error', message: 'Error receiving update: Lagged(3)' },
      counters: { accepted: 4, duplicate: 1, outOfOrder: 2, malformed: 8, rejectedValue: 3, ignored: 2 },
    });
    // One sample logged per connection, not one line per bad message.
    expect(logLines.filter((l) => (l as unknown[])[2] === 'quote source: malformed message skipped')).toHaveLength(1);
  });

  it('refuses a price whose confidence interval is wider than the configured share of it', async () => {
    const { server, source, log, conn } = await started(setup({}, { maxConfBps: 25 }));
    conn.update(aapl('22980000', S, { conf: '57451' })); // 25.0004 bps
    conn.update(aapl('22980000', S + 1, { conf: '57450' })); // 25 bps exactly
    await log.count(1);
    expect(log.ticks).toMatchObject([{ last: '229.80', sourceTime: T0 + 1000 }]);
    expect(source.health().counters).toMatchObject({ accepted: 1, rejectedValue: 1 });
  });

  it('stops for good on a refused key (401): one request, no retry, the key nowhere', async () => {
    const { server, source } = await started(setup({ key: 'another-key' }));
    expect(source.health()).toMatchObject({ state: 'failed', ready: false, connects: 1, nextRetryAt: undefined, lastError: { code: 401, message: '401 Unauthorized' } });
    expect(server.connections).toHaveLength(1);
    expect(keyLeaks(logLines, source.health())).toBe(false);
    // start() tries again (a fixed key would be read at the next start of the role).
    await source.start();
    expect(server.connections).toHaveLength(2);
    expect(source.health().state).toBe('failed');
  });

  it('stops for good on feed ids Hermes does not know (404), naming them', async () => {
    const { server, source } = await started(setup({ known: [FEED.AAPL] }));
    // Asked for as configured (`0x` and upper case), in Hermes' own form: 64 lower-case hex digits.
    expect(source.health()).toMatchObject({ state: 'failed', lastError: { code: 404, message: `404 Price ids not found: ${FEED.MSFT}` } });
    expect(server.connections).toHaveLength(1);
  });

  it('scrubs the key from a refusal that echoes it', async () => {
    const { source } = await started(setup({ answer: () => ({ status: 403, body: `key ${KEY} is not entitled to these feeds` }) }));
    expect(source.health()).toMatchObject({ state: 'failed', lastError: { code: 403, message: '403 key [redacted] is not entitled to these feeds' } });
    expect(keyLeaks(logLines, source.health())).toBe(false);
  });

  it('reconnects when the stream ends, after 5xx and (no sooner than the limit) after 429, asking again with the key, and drops replayed prices', async () => {
    const { server, source, log } = await setup({ answer: (i) => (i === 1 ? { status: 503, body: 'Service Unavailable' } : i === 2 ? { status: 429, body: 'Too Many Requests' } : 'ok') });
    const retries: SourceHealth[] = [];
    source.onStateChange((h) => void (h.state === 'reconnecting' && retries.push(h)));
    await source.start();
    const first = server.connections[0];
    first.update(aapl('22980000', S + 5));
    await log.count(1);
    first.end(); // Hermes closes every stream after 24 hours
    const live = await untilHealth(source, (h) => h.state === 'live' && h.connects === 4);
    expect(retries.map((h) => [h.retryAttempt, h.nextRetryAt! - T0, h.lastError?.message])).toEqual([
      [1, 20, 'the server ended the stream'],
      [2, 40, '503 Service Unavailable'],
      [3, 150, '429 Too Many Requests'], // backoff 80 ms, but the rate limit's 150 ms first
    ]);
    expect(live).toMatchObject({ retryAttempt: 0, nextRetryAt: undefined });
    const conn = server.connections[3];
    expect(conn.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(conn.ids).toEqual([FEED.AAPL, FEED.MSFT]);
    // A fresh stream starts with the latest prices again: the ordering survives the reconnect.
    conn.update(aapl('22980000', S + 5), msft('41810000', S + 5));
    conn.update(aapl('22970000', S + 4));
    conn.update(aapl('22985000', S + 6));
    await log.count(3);
    expect(log.ticks.map((t) => `${t.symbol} ${t.last}`)).toEqual(['AAPL 229.80', 'MSFT 418.10', 'AAPL 229.85']);
    expect(source.health().counters).toMatchObject({ accepted: 3, duplicate: 1, outOfOrder: 1 });
    expect(keyLeaks(logLines, source.health())).toBe(false);
  });

  it('keeps a quiet stream that sends keep-alives, and drops one that sends nothing at all', async () => {
    // The idle limit is 15 times the keep-alive pace: a busy machine's stalled event loop does not
    // fake a silence.
    const { server, source, conn } = await started(setup({}, { idleTimeoutMs: 1_500 }));
    // 2 s of keep-alives every 100 ms: never 1.5 s of silence.
    for (let i = 0; i < 20; i++) {
      conn.keepAlive();
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(source.health()).toMatchObject({ state: 'live', connects: 1 });
    const next = server.nextConnection();
    const dropped = await untilHealth(source, (h) => h.state === 'reconnecting');
    expect(dropped.lastError).toMatchObject({ code: 'idle-timeout', message: 'nothing read for 1500 ms (not even a keep-alive)' });
    await next;
    await untilHealth(source, (h) => h.state === 'live' && h.connects === 2);
    await conn.closed; // the silent one was closed by the client
  });

  it('a gap in a feed makes its symbol stale in the guard, and the next price makes it live again', async () => {
    const { server, source, log } = await setup();
    const guard = createQuoteGuard({ symbols: ['AAPL'], sources: [source.name], staleAfterMs: 3000, maxDivergenceBps: 50 });
    source.onTick((t) => guard.ingest(t));
    await source.start();
    const conn = server.connections[0];
    expect(guard.status('AAPL', clock).status).toBe('no-data');
    conn.update(aapl('22980000', S));
    await log.count(1);
    expect(guard.status('AAPL', clock)).toMatchObject({ status: 'live', lastTickAt: T0 });
    clock = T0 + 3001; // Hermes repeats the feed with its old publish time: duplicates, no fresher price
    conn.update(aapl('22980000', S), msft('41810000', S + 3));
    await log.count(2);
    expect(guard.status('AAPL', clock)).toMatchObject({
      status: 'stale',
      reasons: [{ code: 'stale', source: 'pyth-hermes', detail: 'no accepted tick for 3001 ms (limit 3000)' }],
    });
    conn.update(aapl('22990000', S + 3));
    await log.count(3);
    expect(guard.status('AAPL', clock)).toMatchObject({ status: 'live', quote: { last: '229.90' } });
  });
});
