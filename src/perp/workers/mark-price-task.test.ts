import { describe, expect, it } from 'vitest';
import { PerpEngine } from '../engine/perp-engine.ts';
import type { FeedAnswer } from '../../marketdata/oracle-publisher.ts';
import { createMarkPriceTask, indexOracleVerdict, type IndexOracle } from './mark-price-task.ts';

const T = 1_717_999_200_000;
/** AAPL's feed: 200.00000000, observed and written at T, read at T + 10 s. */
const aapl: FeedAnswer = { answer: 20_000_000_000n, decimals: 8, updatedAt: T / 1000, observedAt: T / 1000, chainTime: T / 1000 + 10 };

function oracle(answers: Record<string, FeedAnswer>): IndexOracle {
  return { answer: (s) => answers[s], toleranceBps: 100, maxAgeS: 180 };
}

describe('indexOracleVerdict', () => {
  it('checks the index of a stock perpetual against its feed with the router rule', () => {
    const o = oracle({ AAPL: aapl });
    // 0.01 ticks: 202.00 is 1% above the answer, at the edge.
    expect(indexOracleVerdict(o, 'AAPL-USD', 20_200n, '0.01', T)).toBe('ok');
    expect(indexOracleVerdict(o, 'AAPL-USD', 20_201n, '0.01', T)).toBe('deviation');
    expect(indexOracleVerdict(o, 'AAPL-USD', 19_799n, '0.01', T)).toBe('deviation');
    // No feed for the base: nothing to check.
    expect(indexOracleVerdict(o, 'TSLA-USD', 1n, '0.01', T)).toBe('ok');
    expect(indexOracleVerdict(oracle({ AAPL: { ...aapl, answer: 0n } }), 'AAPL-USD', 20_000n, '0.01', T)).toBe('invalid');
    // A feed set up but never published (no round: zero answer, zero time) checks nothing either.
    expect(indexOracleVerdict(oracle({ AAPL: { ...aapl, answer: 0n, updatedAt: 0, observedAt: 0 } }), 'AAPL-USD', 1n, '0.01', T)).toBe('ok');
  });

  it('counts age from the index quote: a quote the feed has not followed for the maximum age is stale, a closed market is not', () => {
    const o = oracle({ AAPL: aapl });
    expect(indexOracleVerdict(o, 'AAPL-USD', 20_000n, '0.01', T + 180_999)).toBe('ok');
    expect(indexOracleVerdict(o, 'AAPL-USD', 20_000n, '0.01', T + 181_000)).toBe('stale');
    // Overnight: the last quote and the feed are both hours old, and agree.
    expect(indexOracleVerdict(oracle({ AAPL: { ...aapl, chainTime: aapl.chainTime + 8 * 3600 } }), 'AAPL-USD', 20_000n, '0.01', T)).toBe('ok');
  });
});

describe('the mark task with an oracle', () => {
  it('withholds the index of an instrument that disagrees with the chain, and sends it again once they agree', async () => {
    const engine = new PerpEngine();
    const sent: string[] = [];
    const gateway = {
      submit: async (cmd: Parameters<PerpEngine['apply']>[0]) => {
        if (cmd.kind === 'setMarkPrice') sent.push(cmd.symbol);
        return { seq: sent.length, result: engine.apply(cmd) } as never;
      },
    };
    const ticks = new Map<string, bigint>([['AAPL-USD', 21_000n], ['BTC-USD', 970_000n]]);
    const answers: Record<string, FeedAnswer> = { AAPL: aapl };
    const warnings: unknown[] = [];
    let now = T;
    const task = createMarkPriceTask({
      gateway,
      engine: () => engine,
      index: (symbol) => ticks.get(symbol),
      now: () => now,
      oracle: oracle(answers),
      logger: { warn: (obj: unknown) => void warnings.push(obj) },
    });
    await task.runOnce();
    // AAPL 210.00 is 5% off its feed: withheld. BTC has no feed: sent.
    expect(sent).toEqual(['BTC-USD']);
    expect(engine.prices('AAPL-USD')).toMatchObject({ indexPriceTicks: 0 });
    expect(warnings).toEqual([{ symbol: 'AAPL-USD', verdict: 'deviation' }]);
    now += 1_000;
    await task.runOnce();
    expect(warnings).toHaveLength(1);
    answers.AAPL = { ...aapl, answer: 21_000_000_000n };
    now += 1_000;
    await task.runOnce();
    expect(sent).toEqual(['BTC-USD', 'AAPL-USD']);
    expect(engine.prices('AAPL-USD')).toMatchObject({ indexPriceTicks: 21_000 });
    expect(warnings).toEqual([{ symbol: 'AAPL-USD', verdict: 'deviation' }, { symbol: 'AAPL-USD' }]);
  });
});
