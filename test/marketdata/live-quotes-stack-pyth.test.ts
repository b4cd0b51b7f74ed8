/**
 * The embedded stack on two live providers: `QUOTE_SOURCE=alpaca,pyth`, each pointed at a local
 * server speaking its provider's protocol (test/support/alpaca-fake-server.ts and
 * pyth-hermes-fake-server.ts). The role asks Hermes for the listed stocks' built-in feed ids with
 * the configured key; a Pyth price that disagrees with Alpaca's beyond QUOTE_MAX_DIVERGENCE_BPS
 * halts the symbol (`/readyz` and the metrics say `diverged`, its quote is not refreshed) until
 * they agree again; a refused Pyth key stops the start. Waits poll the APIs; no fixed sleeps.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAKE_ALPACA_KEY, FAKE_ALPACA_SECRET, frame, quote, startFakeAlpaca, type FakeAlpaca, type FakeConnection } from '../support/alpaca-fake-server.ts';
import { FAKE_PYTH_KEY, FEED, startFakeHermes, type FakeHermes, type HermesConnection } from '../support/pyth-hermes-fake-server.ts';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';
import { until } from '../support/poll.ts';
import { getQuote } from '../../src/storage/quote-store.ts';

let alpaca: FakeAlpaca;
let hermes: FakeHermes;
let t: TestStack;
let a: FakeConnection;
let p: HermesConnection;

beforeAll(async () => {
  alpaca = await startFakeAlpaca();
  hermes = await startFakeHermes();
  t = await startTestStack({
    QUOTE_SOURCE: 'alpaca,pyth',
    ALPACA_KEY_ID: FAKE_ALPACA_KEY,
    ALPACA_SECRET_KEY: FAKE_ALPACA_SECRET,
    ALPACA_STREAM_URL: alpaca.url,
    PYTH_API_KEY: FAKE_PYTH_KEY,
    PYTH_HERMES_URL: hermes.url,
    EXECUTOR_QUOTE_MAX_AGE_MS: '30000',
    STATUS_PUBLISH_MS: '200',
  });
  a = await alpaca.subscribedConnection();
  p = await hermes.streamingConnection();
}, 180_000);

afterAll(async () => {
  await t?.stop();
  await hermes?.close();
  await alpaca?.close();
});

interface MarketdataDetail {
  quoteSource: string;
  quoteCheckSources?: string;
  quotesHalted: string;
  haltReasons: string;
}

const readyz = async (): Promise<MarketdataDetail | undefined> => {
  const body = (await (await fetch(`${new URL(t.stack.stockBaseUrl!).origin}/readyz`)).json()) as { data: { roles: Array<{ role: string; detail?: MarketdataDetail }> } };
  return body.data.roles.find((r) => r.role === 'marketdata')?.detail;
};
const metrics = async (): Promise<string> => (await fetch(t.stack.metricsUrl!)).text();
const metricStatus = (text: string, symbol: string) =>
  text.split('\n').find((l) => l.startsWith(`tokex_quote_symbol_status{symbol="${symbol}"`) && l.endsWith(' 1'))?.match(/status="([^"]+)"/)?.[1];

const pyth = (id: string, price: string, ms: number) => ({ id, price, conf: '1500', expo: -5, publishTime: Math.floor(ms / 1000) });

describe('the stack on two live providers (QUOTE_SOURCE=alpaca,pyth)', () => {
  it('asks Hermes for every listed stock\'s feed with the configured key', () => {
    expect(p.headers.authorization).toBe(`Bearer ${FAKE_PYTH_KEY}`);
    expect(p.ids).toEqual([FEED.AAPL, FEED.TSLA, FEED.NVDA, FEED.MSFT, FEED.SPY]);
  });

  it('trades on Alpaca\'s quote while Pyth agrees, halts AAPL as diverged when it does not, and resumes when it agrees again', async () => {
    let at = Date.now();
    a.send(frame(quote('AAPL', '187.12', '187.16', at)));
    p.update(pyth(FEED.AAPL, '18714000', at));
    await until(() => getQuote(t.stack.db, 'AAPL'), (q) => q?.bid === '187.12');
    const live = await until(readyz, (d) => d !== undefined && !d.quotesHalted.includes('AAPL'));
    expect(live).toMatchObject({ quoteSource: 'alpaca-iex', quoteCheckSources: 'pyth-hermes=live' });
    expect(live!.quotesHalted).toContain('TSLA=no-data');

    // 1 % apart: Alpaca's next quote is not written while the two disagree.
    at = Date.now();
    p.update(pyth(FEED.AAPL, '18901000', at + 1000));
    a.send(frame(quote('AAPL', '187.13', '187.17', at)));
    const reason = 'AAPL: pyth-hermes: mid 187.15 vs 189.01: 99.38 bps (limit 50)';
    const halted = await until(readyz, (d) => d?.haltReasons.includes(reason) === true);
    expect(halted!.quotesHalted).toContain('AAPL=diverged');
    await until(metrics, (m) => metricStatus(m, 'AAPL') === 'diverged');
    expect((await getQuote(t.stack.db, 'AAPL'))!.bid).toBe('187.12');

    p.update(pyth(FEED.AAPL, '18716000', at + 2000));
    await until(() => getQuote(t.stack.db, 'AAPL'), (q) => q?.bid === '187.13');
    await until(readyz, (d) => d?.quotesHalted.includes('AAPL') === false);
    const text = await until(metrics, (m) => metricStatus(m, 'AAPL') === 'live');
    expect(text).toContain('tokex_quote_source_state{source="pyth-hermes",state="live"} 1');
    // The key went only into the Authorization header: never into a log line, /readyz or the metrics.
    expect(t.logs.some((l) => l.includes(FAKE_PYTH_KEY))).toBe(false);
    expect(JSON.stringify(await readyz())).not.toContain(FAKE_PYTH_KEY);
    expect(text).not.toContain(FAKE_PYTH_KEY);
  });
});

describe('a stack whose check source refuses its key', () => {
  it('does not start, naming the variables to check and never the key', async () => {
    const alpacaOk = await startFakeAlpaca();
    const refusing = await startFakeHermes({ key: 'the-right-key' });
    try {
      const started = startTestStack({
        QUOTE_SOURCE: 'alpaca,pyth',
        ALPACA_KEY_ID: FAKE_ALPACA_KEY,
        ALPACA_SECRET_KEY: FAKE_ALPACA_SECRET,
        ALPACA_STREAM_URL: alpacaOk.url,
        PYTH_API_KEY: FAKE_PYTH_KEY,
        PYTH_HERMES_URL: refusing.url,
      });
      const err = await started.then(
        async (s) => {
          await s.stop();
          throw new Error('the stack started');
        },
        (e: Error) => e,
      );
      expect(err.message).toBe("QUOTE_SOURCE=alpaca,pyth: Pyth's Hermes refused us (401 Unauthorized); check PYTH_API_KEY, PYTH_FEED_IDS and PYTH_HERMES_URL");
      expect(refusing.connections).toHaveLength(1);
    } finally {
      await refusing.close();
      await alpacaOk.close();
    }
  }, 120_000);
});
