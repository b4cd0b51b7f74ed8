/**
 * The embedded stack on a live price source: `QUOTE_SOURCE=alpaca` pointed at a local server that
 * speaks Alpaca's stream protocol (test/support/alpaca-fake-server.ts). The stock quotes come from
 * it through the quote guard, the crypto indices stay simulated, a silent symbol halts (its quote
 * ages, `/readyz` and the metrics say why) and resumes. Waits poll the APIs; no fixed sleeps.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAKE_ALPACA_KEY, FAKE_ALPACA_SECRET, frame, quote, startFakeAlpaca, trade, type FakeAlpaca, type FakeConnection } from '../support/alpaca-fake-server.ts';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';
import { until } from '../support/poll.ts';
import { getQuote } from '../../src/storage/quote-store.ts';
import { listCandles } from '../../src/storage/candle-store.ts';

let server: FakeAlpaca;
let t: TestStack;
let conn: FakeConnection;

beforeAll(async () => {
  server = await startFakeAlpaca();
  t = await startTestStack({
    QUOTE_SOURCE: 'alpaca',
    ALPACA_KEY_ID: FAKE_ALPACA_KEY,
    ALPACA_SECRET_KEY: FAKE_ALPACA_SECRET,
    ALPACA_STREAM_URL: server.url,
    // QUOTE_STALE_AFTER_MS follows it by default: the guard's halt and the API's `stale` agree.
    EXECUTOR_QUOTE_MAX_AGE_MS: '3000',
    STATUS_PUBLISH_MS: '200',
  });
  conn = await server.subscribedConnection();
}, 180_000);

afterAll(async () => {
  await t?.stop();
  await server?.close();
});

interface MarketdataDetail {
  quoteSource: string;
  quoteSourceState: string;
  quotesHalted: string;
  haltReasons: string;
}

const readyz = async (): Promise<MarketdataDetail | undefined> => {
  const body = (await (await fetch(`${new URL(t.stack.stockBaseUrl!).origin}/readyz`)).json()) as { data: { roles: Array<{ role: string; detail?: MarketdataDetail }> } };
  return body.data.roles.find((r) => r.role === 'marketdata')?.detail;
};

interface PriceView {
  bid: string;
  ask: string;
  last: string;
  timestamp: number;
  stale: boolean;
}
/** `GET prices/{symbol}`; undefined while it has no quote yet (404). */
const price = (symbol: string) => t.readOnly.get<PriceView>(`/api/v1/prices/${symbol}`).catch(() => undefined);

const metrics = async (): Promise<string> => (await fetch(t.stack.metricsUrl!)).text();
const metricStatus = (text: string, symbol: string) =>
  text.split('\n').find((l) => l.startsWith(`tokex_quote_symbol_status{symbol="${symbol}"`) && l.endsWith(' 1'))?.match(/status="([^"]+)"/)?.[1];

describe('the stack on a live quote source (QUOTE_SOURCE=alpaca)', () => {
  it('subscribes the listed stocks, authenticated with the configured key', () => {
    expect(conn.received).toEqual([
      { action: 'auth', key: FAKE_ALPACA_KEY, secret: FAKE_ALPACA_SECRET },
      { action: 'subscribe', quotes: ['AAPL', 'TSLA', 'NVDA', 'MSFT', 'SPY'], trades: ['AAPL', 'TSLA', 'NVDA', 'MSFT', 'SPY'] },
    ]);
  });

  it('serves the source\'s price on GET prices/AAPL, writes it and its candle, and keeps the crypto indices simulated', async () => {
    const at = Date.now();
    conn.send(frame(trade('AAPL', '187.14', at - 2, 7, 300), quote('AAPL', '187.12', '187.16', at - 1)));
    const q = await until(() => price('AAPL'), (v) => v?.bid === '187.12');
    expect(q).toMatchObject({ bid: '187.12', ask: '187.16', last: '187.14', timestamp: at - 1, stale: false });
    expect(await getQuote(t.stack.db, 'AAPL')).toEqual({ symbol: 'AAPL', bid: '187.12', ask: '187.16', last: '187.14', timestamp: at - 1 });
    const minute = Math.floor((at - 2) / 60_000) * 60_000;
    const candles = await listCandles(t.stack.db, { symbol: 'AAPL', interval: '1m', startTime: minute, limit: 5 });
    expect(candles[0]).toMatchObject({ openTime: minute, open: '187.14', close: '187.14', volume: '300' });
    // BTC is still the simulator's, fresh every tick.
    const btc = await until(() => getQuote(t.stack.db, 'BTC'), (v) => v !== undefined && v.timestamp > at);
    expect(btc!.bid).toMatch(/^\d+\.\d{2}$/);

    const detail = await until(readyz, (d) => d?.quotesHalted !== undefined && !d.quotesHalted.includes('AAPL'));
    expect(detail).toMatchObject({ quoteSource: 'alpaca-iex', quoteSourceState: 'live', quotesHalted: 'TSLA=no-data,NVDA=no-data,MSFT=no-data,SPY=no-data' });
    const text = await until(metrics, (m) => metricStatus(m, 'AAPL') === 'live');
    expect(metricStatus(text, 'TSLA')).toBe('no-data');
    expect(text).toContain('tokex_quote_source_state{source="alpaca-iex",state="live"} 1');
  });

  it('halts AAPL when its quotes stop (its quote no longer refreshes; /readyz and the metrics say stale), and resumes on the next quote', async () => {
    const before = await getQuote(t.stack.db, 'AAPL');
    const detail = await until(readyz, (d) => d?.quotesHalted.includes('AAPL=stale') === true);
    expect(detail!.haltReasons).toMatch(/AAPL: no accepted tick for \d+ ms \(limit 3000\)/);
    await until(metrics, (m) => metricStatus(m, 'AAPL') === 'stale');
    expect(await getQuote(t.stack.db, 'AAPL')).toEqual(before);
    // What every reader sees: the same quote, now stale (the executor's refusal rule, one setting).
    expect(await until(() => price('AAPL'), (v) => v?.stale === true)).toMatchObject({ bid: before!.bid, timestamp: before!.timestamp });

    const at = Date.now();
    conn.send(frame(quote('AAPL', '188.01', '188.05', at)));
    const q = await until(() => price('AAPL'), (v) => v?.bid === '188.01');
    expect(q).toMatchObject({ timestamp: at, stale: false });
    await until(readyz, (d) => d?.quotesHalted.includes('AAPL') === false);
    // The secret went only into the auth message: never into a log line, /readyz or the metrics.
    expect(t.logs.some((l) => l.includes(FAKE_ALPACA_SECRET))).toBe(false);
    expect(JSON.stringify(await readyz())).not.toContain(FAKE_ALPACA_SECRET);
    expect(await metrics()).not.toContain(FAKE_ALPACA_SECRET);
  });
});

describe('a stack whose live source refuses its credentials', () => {
  it('does not start, naming the variables to check and never the secret', async () => {
    const refusing = await startFakeAlpaca();
    try {
      const wrong = 'wrong-secret-value-0001';
      const started = startTestStack({ QUOTE_SOURCE: 'alpaca', ALPACA_KEY_ID: FAKE_ALPACA_KEY, ALPACA_SECRET_KEY: wrong, ALPACA_STREAM_URL: refusing.url });
      const err = await started.then(
        async (s) => {
          await s.stop();
          throw new Error('the stack started');
        },
        (e: Error) => e,
      );
      expect(err.message).toBe('QUOTE_SOURCE=alpaca: the stream refused us (402 auth failed); check ALPACA_KEY_ID, ALPACA_SECRET_KEY and ALPACA_FEED');
      expect(refusing.connections).toHaveLength(1);
      expect(err.message).not.toContain(wrong);
    } finally {
      await refusing.close();
    }
  }, 120_000);
});
