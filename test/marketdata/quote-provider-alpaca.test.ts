/**
 * The Alpaca stream source against a local server that speaks the documented protocol
 * (docs.alpaca.markets "WebSocket Stream" / "Real-time Stock Data"): greeting, auth message,
 * documented error frames (which leave the socket open, as the real stream does), subscription
 * confirmations with the whole current set, and data frames of the documented shape, replayed
 * with gaps, duplicates, out-of-order and malformed ones. Waits on events, never on sleeps.
 */
import { describe, expect, it } from 'vitest';
import { createAlpacaStreamSource, type AlpacaStreamSourceOptions } from '../../src/marketdata/sources/alpaca-stream-source.ts';
import { createQuoteGuard } from '../../src/marketdata/sources/quote-guard.ts';
import type { SourceHealth } from '../../src/marketdata/sources/quote-source.ts';
import { FAST_RETRIES, leaks, sourceTestKit, started, untilHealth } from '../support/quote-source-harness.ts';

import { FAKE_ALPACA_KEY as KEY, FAKE_ALPACA_SECRET as SECRET, frame, quote, startFakeAlpaca, trade, type FakeAlpacaOptions as FakeOptions } from '../support/alpaca-fake-server.ts';

const T0 = Date.UTC(2026, 8, 15, 14, 30, 0);


const { logLines, logger, defer, adopt } = sourceTestKit();

let clock = T0;
async function setup(fakeOpts: FakeOptions = {}, over: Partial<AlpacaStreamSourceOptions> = {}) {
  clock = T0;
  const server = await startFakeAlpaca(fakeOpts);
  defer(server.close);
  const source = createAlpacaStreamSource({
    keyId: KEY,
    secretKey: SECRET,
    url: server.url,
    symbols: ['AAPL', 'MSFT'],
    ...FAST_RETRIES,
    now: () => clock,
    logger,
    ...over,
  });
  return adopt(server, source);
}

const secretLeaks = (...things: unknown[]): boolean => leaks(SECRET, ...things);

describe('Alpaca stream source against a local stream', { timeout: 10_000 }, () => {
  it('authenticates, subscribes and turns quotes and trades into exact ticks', async () => {
    const { server, source, log } = await started(setup());
    expect(source.health()).toMatchObject({ name: 'alpaca-iex', state: 'live', ready: true, connects: 1, lastError: undefined, unconfirmedSymbols: [] });
    const conn = server.connections[0];
    expect(conn.received).toEqual([
      { action: 'auth', key: KEY, secret: SECRET },
      { action: 'subscribe', quotes: ['AAPL', 'MSFT'], trades: ['AAPL', 'MSFT'] },
    ]);

    clock = T0 + 7;
    // A batch, as the stream sends them: a quote, a trade, a quote after it, a sub-penny quote.
    conn.send(
      frame(
        quote('AAPL', '229.8', '229.85', T0 + 1, 689_322),
        trade('AAPL', '229.83', T0 + 2),
        quote('AAPL', '229.81', '229.85', T0 + 3),
        quote('MSFT', '418.1', '418.12345678', T0 + 4, 999_999),
      ),
    );
    await log.count(3);
    expect(log.ticks).toEqual([
      { source: 'alpaca-iex', symbol: 'AAPL', bid: '229.80', ask: '229.85', last: '229.825', lastIsTrade: false, sourceTime: T0 + 1, receivedAt: T0 + 7 },
      { source: 'alpaca-iex', symbol: 'AAPL', bid: '229.81', ask: '229.85', last: '229.83', lastIsTrade: true, sourceTime: T0 + 3, receivedAt: T0 + 7 },
      { source: 'alpaca-iex', symbol: 'MSFT', bid: '418.10', ask: '418.12345678', last: '418.11172839', lastIsTrade: false, sourceTime: T0 + 4, receivedAt: T0 + 7 },
    ]);
    expect(source.health().counters).toEqual({ accepted: 4, duplicate: 0, outOfOrder: 0, malformed: 0, rejectedValue: 0, ignored: 0 });
    expect(secretLeaks(logLines, source.health())).toBe(false);
  });

  it('counts and skips duplicates, out-of-order, malformed and absurd messages without dropping the connection', async () => {
    const { server, source, log, conn } = await started(setup());
    conn.send('[{"T":"q","S":"AAPL",'); // cut short
    conn.send(quote('AAPL', '229.80', '229.84', T0)); // not an array
    conn.send(
      frame(
        quote('AAPL', '229.80', '229.84', T0 + 10),
        quote('AAPL', '229.80', '229.84', T0 + 10), // duplicate
        quote('AAPL', '229.79', '229.84', T0 + 9), // older than the last taken
        quote('AAPL', '"229.80"', '229.84', T0 + 11), // price as a string
        '42', // not a message
        '{"S":"AAPL","bp":1}', // no type
        quote('AAPL', '229.80', '229.84', T0 + 11).replace(/"t":"[^"]*"/, '"t":"yesterday"'), // bad time
        quote('AAPL', '0', '229.84', T0 + 12), // empty bid side
        quote('AAPL', '229.90', '229.84', T0 + 12), // crossed
        quote('AAPL', '100', '229.84', T0 + 12), // absurd spread
        quote('AAPL', '229.80', '229.800000001', T0 + 12), // more places than a price holds
        trade('AAPL', '0', T0 + 12), // zero print
        quote('TSLA', '251.40', '251.44', T0 + 12), // not asked for
        '{"T":"b","S":"AAPL","o":229.8,"h":229.9,"l":229.7,"c":229.85,"v":49378,"t":"2026-09-15T14:30:00Z"}',
        quote('AAPL', '229.81', '229.84', T0 + 12),
      ),
    );
    conn.send(Buffer.from([0x91, 0x80])); // a binary (msgpack) frame: not what was asked for
    conn.send(frame(quote('MSFT', '418.10', '418.16', T0 + 13)));
    await log.count(3);
    expect(log.ticks.map((t) => `${t.symbol} ${t.bid}/${t.ask} @${t.sourceTime - T0}`)).toEqual(['AAPL 229.80/229.84 @10', 'AAPL 229.81/229.84 @12', 'MSFT 418.10/418.16 @13']);
    expect(source.health()).toMatchObject({
      state: 'live',
      connects: 1,
      counters: { accepted: 3, duplicate: 1, outOfOrder: 1, malformed: 7, rejectedValue: 5, ignored: 2 },
    });
    // One sample logged per connection, not one line per bad message.
    expect(logLines.filter((l) => (l as unknown[])[2] === 'quote source: malformed message skipped')).toHaveLength(1);
  });

  it('marks a symbol stale after a gap and live again on the next quote', async () => {
    const { server, source, log } = await setup();
    const guard = createQuoteGuard({ symbols: ['AAPL', 'MSFT'], sources: [source.name], staleAfterMs: 3000, maxDivergenceBps: 50 });
    source.onTick((t) => guard.ingest(t));
    await source.start();
    const conn = server.connections[0];
    expect(guard.status('AAPL', clock).status).toBe('no-data');
    conn.send(frame(quote('AAPL', '229.80', '229.84', T0)));
    await log.count(1);
    expect(guard.status('AAPL', clock)).toMatchObject({ status: 'live', tradable: true, lastTickAt: T0 });
    clock = T0 + 3001; // silence
    expect(guard.status('AAPL', clock)).toMatchObject({
      status: 'stale',
      tradable: false,
      reasons: [{ code: 'stale', source: 'alpaca-iex', detail: 'no accepted tick for 3001 ms (limit 3000)' }],
    });
    conn.send(frame(quote('AAPL', '229.90', '229.94', T0 + 3000)));
    await log.count(2);
    expect(guard.status('AAPL', clock)).toMatchObject({ status: 'live', quote: { bid: '229.90', ask: '229.94', last: '229.92' } });
    expect(guard.counters()).toEqual({ 'alpaca-iex': { accepted: 2, duplicate: 0, outOfOrder: 0, malformed: 0, rejectedValue: 0, ignored: 0 } });
  });

  it('reconnects after a drop with backoff, authenticates and subscribes again, and drops replayed quotes', async () => {
    const { server, source, log } = await started(setup());
    server.connections[0].send(frame(quote('AAPL', '229.80', '229.84', T0 + 5)));
    await log.count(1);

    const reconnecting = untilHealth(source, (h) => h.state === 'reconnecting');
    const second = server.nextConnection();
    server.connections[0].socket.terminate();
    expect(await reconnecting).toMatchObject({ retryAttempt: 1, nextRetryAt: T0 + 20, lastError: { code: 'closed', message: 'connection closed (1006)' } });
    const conn = await second;
    await conn.subscribed;
    const live = await untilHealth(source, (h) => h.state === 'live');
    expect(live).toMatchObject({ connects: 2, retryAttempt: 0, nextRetryAt: undefined });
    expect(conn.received).toEqual([
      { action: 'auth', key: KEY, secret: SECRET },
      { action: 'subscribe', quotes: ['AAPL', 'MSFT'], trades: ['AAPL', 'MSFT'] },
    ]);
    // A fresh connection may resend what was already seen: the ordering survives the reconnect.
    conn.send(frame(quote('AAPL', '229.80', '229.84', T0 + 5), quote('AAPL', '229.70', '229.84', T0 + 4), quote('AAPL', '229.85', '229.89', T0 + 6)));
    await log.count(2);
    expect(log.ticks[1]).toMatchObject({ bid: '229.85', sourceTime: T0 + 6 });
    expect(source.health().counters).toMatchObject({ accepted: 2, duplicate: 1, outOfOrder: 1 });
  });

  it('retries a refused connection slot (406) with doubling backoff until it frees', async () => {
    const { server, source } = await setup({ authAnswer: (i) => (i < 2 ? { code: 406, msg: 'connection limit exceeded' } : 'ok') });
    const retries: SourceHealth[] = [];
    source.onStateChange((h) => void (h.state === 'reconnecting' && retries.push(h)));
    await source.start(); // settles on the first refusal; retries go on
    await untilHealth(source, (h) => h.state === 'live');
    expect(retries.map((h) => [h.retryAttempt, h.nextRetryAt! - T0, h.lastError])).toEqual([
      [1, 20, { code: 406, message: '406 connection limit exceeded', at: T0 }],
      [2, 40, { code: 406, message: '406 connection limit exceeded', at: T0 }],
    ]);
    expect(server.connections).toHaveLength(3);
    // The refused connections were closed by the client, not left open.
    await Promise.all([server.connections[0].closed, server.connections[1].closed]);
    expect(source.health()).toMatchObject({ state: 'live', connects: 3, retryAttempt: 0 });
  });

  it.each([
    ['a wrong secret', { secretKey: 'wrong-secret' }, {}, { code: 402, message: '402 auth failed' }],
    ['a plan without the feed', {}, { authAnswer: () => ({ code: 409, msg: 'insufficient subscription' }) }, { code: 409, message: '409 insufficient subscription' }],
  ] as const)('stops for good on %s, closes the socket and does not retry', async (_what, over, fakeOpts, error) => {
    const { server, source } = await started(setup(fakeOpts, over));
    expect(source.health()).toMatchObject({ state: 'failed', ready: false, connects: 1, nextRetryAt: undefined, retryAttempt: 0, lastError: { ...error, at: T0 } });
    // The server left its socket open after the error frame (as Alpaca does): the client closed it.
    await server.connections[0].closed;
    expect(server.connections).toHaveLength(1);
    expect(logLines.some((l) => (l as unknown[])[2] === 'quote source: stopped for good; fix the credentials or the plan, then restart')).toBe(true);
    expect(secretLeaks(logLines, source.health())).toBe(false);
    // An operator's start() is one more attempt, not a loop.
    await source.start();
    expect(source.health()).toMatchObject({ state: 'failed', connects: 2, nextRetryAt: undefined });
    expect(server.connections).toHaveLength(2);
  });

  it('gives up on a server that never greets and connects again', async () => {
    const { server, source } = await started(setup({ greet: (i) => i > 0 }, { handshakeTimeoutMs: 300 }));
    expect(source.health()).toMatchObject({ state: 'reconnecting', lastError: { code: 'handshake-timeout', message: 'not subscribed within 300 ms of connecting' } });
    await untilHealth(source, (h) => h.state === 'live');
    expect(server.connections[0].received).toEqual([]); // no auth before the greeting
    expect(source.health().connects).toBe(2);
  });

  it('drops a connection whose pings go unanswered', async () => {
    const { server, source } = await started(setup({ pong: (i) => i > 0 }, { pingIntervalMs: 30, pongTimeoutMs: 60 }));
    const reconnecting = untilHealth(source, (h) => h.state === 'reconnecting');
    expect((await reconnecting).lastError).toMatchObject({ code: 'ping-timeout', message: 'no pong within 60 ms' });
    await untilHealth(source, (h) => h.state === 'live' && h.connects === 2);
    await server.connections[0].closed;
  });

  it('halts a symbol whose two sources disagree beyond the limit, and resumes when they agree', async () => {
    const a = await setup({}, { name: 'alpaca-sip', feed: 'sip' });
    const b = await setup({}, { name: 'alpaca-iex' });
    const guard = createQuoteGuard({ symbols: ['AAPL', 'MSFT'], sources: ['alpaca-sip', 'alpaca-iex'], staleAfterMs: 3000, maxDivergenceBps: 20 });
    a.source.onTick((t) => guard.ingest(t));
    b.source.onTick((t) => guard.ingest(t));
    await Promise.all([a.source.start(), b.source.start()]);
    a.server.connections[0].send(frame(quote('AAPL', '229.80', '229.84', T0)));
    b.server.connections[0].send(frame(quote('AAPL', '230.30', '230.34', T0)));
    await Promise.all([a.log.count(1), b.log.count(1)]);
    // Mids 229.82 and 230.32: 0.50 / 229.82 = 21.75 bps > 20; then 229.87: 2.17 bps.
    expect(guard.status('AAPL', clock)).toMatchObject({
      status: 'diverged',
      tradable: false,
      divergenceBps: '21.75',
      reasons: [{ code: 'diverged', source: 'alpaca-iex', detail: 'mid 229.82 vs 230.32: 21.75 bps (limit 20)' }],
    });
    b.server.connections[0].send(frame(quote('AAPL', '229.85', '229.89', T0 + 1)));
    await b.log.count(2);
    expect(guard.status('AAPL', clock)).toMatchObject({ status: 'live', tradable: true, divergenceBps: '2.17' });
  });

  it('stops cleanly: closes the socket and schedules nothing', async () => {
    const { server, source } = await started(setup());
    await source.stop();
    await server.connections[0].closed;
    expect(source.health()).toMatchObject({ state: 'stopped', ready: false, nextRetryAt: undefined });
    expect(server.connections).toHaveLength(1);
  });

  it('refuses bad configuration without echoing the secret', () => {
    const base = { keyId: KEY, secretKey: SECRET, symbols: ['AAPL'] };
    expect(() => createAlpacaStreamSource({ ...base, secretKey: '' })).toThrow('ALPACA_SECRET_KEY: required');
    expect(() => createAlpacaStreamSource({ ...base, keyId: ' ' })).toThrow('ALPACA_KEY_ID: required');
    expect(() => createAlpacaStreamSource({ ...base, feed: 'nasdaq' as never })).toThrow('ALPACA_FEED: must be one of iex, sip, delayed_sip, test');
    expect(() => createAlpacaStreamSource({ ...base, url: 'http://x' })).toThrow('ALPACA_STREAM_URL: must be a ws:// or wss:// URL');
    expect(() => createAlpacaStreamSource({ ...base, symbols: [] })).toThrow('symbols: at least one symbol is required');
    expect(() => createAlpacaStreamSource({ ...base, symbols: ['aapl'] })).toThrow('symbols: "aapl" is not a ticker');
    expect(createAlpacaStreamSource({ ...base, feed: 'sip' }).name).toBe('alpaca-sip');
  });
});
