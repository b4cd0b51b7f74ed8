import { describe, expect, it } from 'vitest';
import { PYTH_DEMO_FEED_IDS, PYTH_HERMES_URL, createPythHermesSource, normalizeFeedId, pythStreamUrl, scalePythPrice } from './pyth-hermes-source.ts';

const AAPL = PYTH_DEMO_FEED_IDS.AAPL;
const MSFT = PYTH_DEMO_FEED_IDS.MSFT;

describe('Pyth Hermes source: pure parts', () => {
  it('scales integer × 10^expo to 8 places exactly, rounding half up only where the exponent is finer', () => {
    expect(scalePythPrice(12276250n, -5)).toBe(12276250000n); // the docs' AAPL example: 122.7625
    expect(scalePythPrice(184136023127n, -8)).toBe(184136023127n);
    expect(scalePythPrice(7n, 2)).toBe(70000000000n); // 700
    expect(scalePythPrice(2298150000049n, -10)).toBe(22981500000n);
    expect(scalePythPrice(2298150000050n, -10)).toBe(22981500001n);
    expect(scalePythPrice(4n, -9)).toBe(0n);
    expect(scalePythPrice(5n, -9)).toBe(1n);
  });

  it('normalises feed ids to Hermes\' form and refuses anything else', () => {
    expect(normalizeFeedId(`0x${AAPL.toUpperCase()}`)).toBe(AAPL);
    expect(normalizeFeedId(AAPL)).toBe(AAPL);
    expect(normalizeFeedId(AAPL.slice(1))).toBeUndefined();
    expect(normalizeFeedId(`${AAPL}0`)).toBeUndefined();
    expect(normalizeFeedId('Equity.US.AAPL/USD')).toBeUndefined();
    expect(normalizeFeedId(42)).toBeUndefined();
  });

  it('builds the documented stream URL', () => {
    expect(pythStreamUrl('https://pyth.dourolabs.app/hermes/', [AAPL, MSFT])).toBe(
      `https://pyth.dourolabs.app/hermes/v2/updates/price/stream?ids%5B%5D=${AAPL}&ids%5B%5D=${MSFT}&parsed=true`,
    );
    expect(PYTH_HERMES_URL).toBe('https://pyth.dourolabs.app/hermes');
  });

  it('refuses options it cannot work with, naming the variable and never the key', () => {
    const key = 'k-0123456789-secret';
    const ok = { apiKey: key, symbols: ['AAPL', 'MSFT'], feedIds: { AAPL, MSFT } };
    expect(createPythHermesSource(ok).health()).toMatchObject({ name: 'pyth-hermes', state: 'idle', ready: false, connects: 0 });
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ apiKey: ' ' }, 'PYTH_API_KEY'],
      [{ url: 'wss://x' }, 'PYTH_HERMES_URL'],
      [{ feedIds: { AAPL } }, 'no Pyth feed id for MSFT'],
      [{ feedIds: { AAPL, MSFT: 'xyz' } }, 'the feed id of MSFT must be 64 hex digits'],
      [{ feedIds: { AAPL, MSFT: `0x${AAPL}` } }, 'MSFT and AAPL have the same feed id'],
      [{ maxConfBps: 10_000 }, 'PYTH_MAX_CONF_BPS'],
      [{ maxConfBps: 1.5 }, 'PYTH_MAX_CONF_BPS'],
      [{ symbols: [] }, 'at least one symbol'],
      [{ backoffJitter: 1 }, 'backoffJitter'],
    ];
    for (const [over, message] of cases) {
      let thrown: Error | undefined;
      try {
        createPythHermesSource({ ...ok, ...over } as Parameters<typeof createPythHermesSource>[0]);
      } catch (err) {
        thrown = err as Error;
      }
      expect(thrown?.message, JSON.stringify(over)).toContain(message);
      expect(thrown?.message).not.toContain(key);
    }
  });
});
