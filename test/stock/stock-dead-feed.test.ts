/**
 * What a newcomer sees on a dead price feed (issue 27, part 6), on the real stack with every role but
 * the market-data simulator: the quotes are only what this test writes into the quotes table, as a
 * simulator in another process would, so a quote minutes old is a feed that died. Then:
 * - `GET prices/{symbol}`, `GET underlying/{symbol}/price` and the `quotes` stream say `stale: true`
 *   (and `false` again once a fresh quote arrives); the perp `GET tickers` and its `mark` stream say
 *   `stale` with the index's own time;
 * - `tokex stock buy AAPL --notional 100` on the stale quote: a wait that runs out exits 124 naming
 *   the order and its state; the order is then rejected, and the CLI prints the reason and exits 1;
 *   the order detail, the `orders` stream and the log carry the same reason.
 */
import { spawn } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { upsertQuotes } from '../../src/storage/quote-store.ts';
import { until } from '../support/poll.ts';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';
import { openSocket, type TestSocket } from '../support/ws-client.ts';

let t: TestStack;
const sockets: TestSocket[] = [];
const NO_QUOTE_TIMEOUT_MS = 4_000;

function tokex(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const { DATABASE_URL: _d, DATABASE_SCHEMA: _s, REDIS_URL: _r, ...env } = process.env;
  const child = spawn(process.execPath, ['bin/tokex.mjs', ...args], { env: { ...env, DATA_DIR: t.dataDir }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += String(d)));
  child.stderr.on('data', (d) => (stderr += String(d)));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
}

/** A quote as the simulator writes it, `ageMs` old. */
const quote = (symbol: string, price: string, ageMs: number) => ({ symbol, bid: price, ask: price, last: price, timestamp: Date.now() - ageMs });
const MINUTES = 60_000;
const btcQuote = quote('BTC', '60000.00', 5 * MINUTES);

beforeAll(async () => {
  t = await startTestStack(
    { EXECUTOR_TICK_MS: '200', EXECUTOR_NO_QUOTE_TIMEOUT_MS: String(NO_QUOTE_TIMEOUT_MS), INDEXER_POLL_MS: '100', CASH_SETTLE_DELAY_MS: '300' },
    { role: ['stock-api', 'indexer', 'executor', 'relayer', 'perp-engine', 'perp-api'] },
  );
  // A feed that died five minutes ago, but for MSFT.
  await upsertQuotes(t.stack.db, [quote('AAPL', '190.00', 5 * MINUTES), quote('MSFT', '410.00', 0), btcQuote]);
}, 120_000);
afterAll(async () => {
  for (const s of sockets) s.close();
  await t?.stop();
});

describe('stale data is marked stale', () => {
  it('prices and the underlying quote: stale past the executor quote age, fresh otherwise', async () => {
    const aapl = await until(() => t.readOnly.get<any>('/api/v1/prices/AAPL').catch(() => undefined), (q) => q !== undefined);
    expect(aapl).toMatchObject({ symbol: 'AAPL', last: '190.00', stale: true });
    expect(Date.now() - aapl.timestamp).toBeGreaterThanOrEqual(5 * MINUTES);
    expect(await t.readOnly.get<any>('/api/v1/underlying/AAPL/price')).toMatchObject({ symbol: 'AAPL', price: '190.00', stale: true });
    expect(await t.readOnly.get<any>('/api/v1/prices/MSFT')).toMatchObject({ symbol: 'MSFT', last: '410.00', stale: false });
    expect(await t.readOnly.get<any>('/api/v1/underlying/MSFT/price')).toMatchObject({ symbol: 'MSFT', stale: false });
    // The CLI's quote table says so beside the market's status.
    const cli = await tokex(['stock', 'quote', 'AAPL', 'MSFT']);
    expect(cli.code).toBe(0);
    expect(cli.stdout).toMatch(/^AAPL\s+190\.00\s+190\.00\s+190\.00\s+open \(stale\)\s+\d{4}-/m);
    expect(cli.stdout).toMatch(/^MSFT\s+410\.00\s+410\.00\s+410\.00\s+open\s+\d{4}-/m);
    // Positions are valued at the last price, with its time and whether it is stale (NVDA: no quote at all).
    const positions = await t.readOnly.get<any[]>(`/api/v1/users/${t.demo.wallets[0].address}/positions`);
    const bySymbol = new Map(positions.map((p) => [p.symbol, p]));
    expect(bySymbol.get('AAPL')).toMatchObject({ lastPrice: '190.00', lastPriceTime: aapl.timestamp, lastPriceStale: true });
    expect(bySymbol.get('MSFT')).toMatchObject({ lastPrice: '410.00', lastPriceStale: false });
    expect(bySymbol.get('NVDA')).toMatchObject({ lastPrice: '0', lastPriceTime: null, lastPriceStale: true });
  });

  it('the quotes stream: stale in the snapshot, fresh in the update a new quote brings', async () => {
    const s = await openSocket(t.demo.stock.wsUrl);
    sockets.push(s);
    s.send({ op: 'subscribe', id: 'q', channel: 'quotes', symbol: 'AAPL' });
    const snap = await s.next((f) => f.type === 'subscribed');
    expect(snap.data).toMatchObject({ symbol: 'AAPL', last: '190.00', stale: true });
    await upsertQuotes(t.stack.db, [quote('AAPL', '191.00', 0)]);
    const update = await s.next((f) => f.type === 'update' && f.data.last === '191.00', { timeoutMs: 10_000 });
    expect(update.data).toMatchObject({ symbol: 'AAPL', stale: false });
    expect((await t.readOnly.get<any>('/api/v1/prices/AAPL')).stale).toBe(false);
    // The feed dies again: no new quote, yet the stream says so once the quote is too old.
    await upsertQuotes(t.stack.db, [quote('AAPL', '191.00', 5 * MINUTES)]);
    const stale = await s.next((f) => f.type === 'update' && f.data.stale === true, { timeoutMs: 10_000 });
    expect(stale.data).toMatchObject({ symbol: 'AAPL', last: '191.00', stale: true });
  });

  it('perp tickers and the mark stream: stale with the index quote\'s own time', async () => {
    const btc = await until(
      () => t.perpTrader!.get<Array<Record<string, any>>>('tickers', { symbol: 'BTC-USD' }).then((r) => r[0]),
      (x) => x.indexTime !== null,
    );
    // The index's time is its quote's (five minutes old), not when the mark task passed it on.
    expect(btc).toMatchObject({ symbol: 'BTC-USD', indexPrice: '60000', indexTime: btcQuote.timestamp, stale: true });
    expect(btc.markTime).toBeGreaterThan(btcQuote.timestamp);

    const s = await openSocket(t.demo.perp!.wsUrl);
    sockets.push(s);
    s.send({ op: 'subscribe', id: 'm', channel: 'mark', symbol: 'BTC-USD' });
    const snap = await s.next((f) => f.type === 'subscribed' && f.id === 'm');
    expect(snap.data).toMatchObject({ symbol: 'BTC-USD', stale: true, indexTime: btc.indexTime });
    s.send({ op: 'subscribe', id: 't', channel: 'tickers', symbol: 'BTC-USD' });
    const tickerSnap = await s.next((f) => f.type === 'subscribed' && f.id === 't');
    expect(tickerSnap.data).toMatchObject({ symbol: 'BTC-USD', stale: true, indexTime: btc.indexTime });
    await upsertQuotes(t.stack.db, [quote('BTC', '60010.00', 0)]);
    const fresh = await s.next((f) => f.type === 'update' && f.channel === 'mark' && f.data.stale === false, { timeoutMs: 15_000 });
    expect(fresh.data).toMatchObject({ symbol: 'BTC-USD', indexPrice: '60010' });
    const freshTicker = await s.next((f) => f.type === 'update' && f.channel === 'tickers' && f.data.stale === false, { timeoutMs: 15_000 });
    expect(freshTicker.data).toMatchObject({ symbol: 'BTC-USD', indexPrice: '60010', indexTime: fresh.data.indexTime });
    const ticker = await until(() => t.perpTrader!.get<Array<Record<string, any>>>('tickers', { symbol: 'BTC-USD' }).then((r) => r[0]), (x) => x.stale === false);
    expect(ticker.indexTime).toBe(fresh.data.indexTime);
  });
});

describe('a rejected order says why', () => {
  it('tokex stock buy on a dead feed: 124 while it waits, then REJECTED with the reason in the CLI, the API, the stream and the log', async () => {
    const ok = async (args: string[]) => {
      const r = await tokex([...args, '--json']);
      expect(r.stderr, args.join(' ')).toBe('');
      expect(r.code, args.join(' ')).toBe(0);
      return JSON.parse(r.stdout);
    };
    await ok(['stock', 'oneclick']);
    expect(await ok(['stock', 'deposit', '300'])).toMatchObject({ operationStatus: 'completed' });

    // The wallet's private orders stream.
    const key = t.demo.stock.keys.writable;
    const s = await openSocket(t.demo.stock.wsUrl);
    sockets.push(s);
    const ts = Date.now();
    const nonce = randomUUID();
    s.send({ op: 'auth', id: 'auth', apiKey: key.apiKey, ts, nonce, sign: createHmac('sha256', key.apiSecret).update(['GET', '/api/v1/ws', String(ts), nonce, ''].join('\n')).digest('hex') });
    await s.next((f) => f.type === 'authenticated');
    s.send({ op: 'subscribe', id: 'o', channel: 'orders' });
    await s.next((f) => f.type === 'subscribed' && f.id === 'o');

    await upsertQuotes(t.stack.db, [quote('AAPL', '191.00', 5 * MINUTES)]);
    // A wait shorter than the executor's: the outcome is not known yet, and the CLI says so.
    const waiting = await tokex(['stock', 'buy', 'AAPL', '--notional', '100', '--timeout', '1']);
    expect(waiting.code).toBe(124);
    expect(waiting.stdout).toBe('');
    const [, orderId] = /^error: order (\d+) is still (?:OPEN|not indexed yet) after 1 s; it may still complete\n$/.exec(waiting.stderr) ?? [];
    expect(orderId).toMatch(/^\d+$/);

    // The same again, waited for: rejected once no fresh quote came within the timeout.
    const reason = `no fresh quote for AAPL within ${NO_QUOTE_TIMEOUT_MS / 1000} s (a quote older than 30 s is not used)`;
    const r = await tokex(['stock', 'buy', 'AAPL', '--notional', '100', '--json']);
    expect(r.code).toBe(1);
    const order = JSON.parse(r.stdout);
    expect(order).toMatchObject({ state: 'history', side: 'Buy', history: { status: 'REJECTED', filledQuantity: '0', reason } });
    expect(r.stderr).toBe(`error: order ${order.orderId} REJECTED: ${reason}\n`);

    expect((await t.writable.get<any>(`/api/v1/orders/${order.orderId}`)).history).toMatchObject({ status: 'REJECTED', reason });
    const first = await until(() => t.writable.get<any>(`/api/v1/orders/${orderId}`), (o) => o.state === 'history');
    expect(first.history).toMatchObject({ status: 'REJECTED', reason });
    const listed = await t.writable.get<{ rows: any[] }>('/api/v1/orders', { state: 'history' });
    expect(listed.rows.find((o) => o.orderId === order.orderId)?.history.reason).toBe(reason);
    const frame = await s.next((f) => f.type === 'update' && f.channel === 'orders' && f.data.orderId === order.orderId && f.data.state === 'history');
    expect(frame.data.history).toMatchObject({ status: 'REJECTED', reason });

    // The log line reaches the captured output on its own schedule (pino writes asynchronously).
    const logged = await until(
      async () => t.logs.map((l) => JSON.parse(l)).filter((l) => l.msg === 'executor: order rejected' && l.orderId === order.orderId),
      (lines) => lines.length > 0,
    );
    expect(logged).toEqual([expect.objectContaining({ level: 40, symbol: 'AAPL', status: 'REJECTED', reason })]);

    // Human output names the reason too.
    await upsertQuotes(t.stack.db, [quote('AAPL', '191.00', 5 * MINUTES)]);
    const human = await tokex(['stock', 'buy', 'AAPL', '--notional', '10']);
    expect(human.code).toBe(1);
    expect(human.stdout).toMatch(/^status\s+REJECTED$/m);
    expect(human.stdout).toMatch(new RegExp(`^reason\\s+${reason.replace(/[()]/g, '\\$&')}$`, 'm'));
  }, 120_000);
});
