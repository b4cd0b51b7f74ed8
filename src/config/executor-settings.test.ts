import { describe, expect, it } from 'vitest';
import { loadExecutorSettings, parseMaxFill } from './executor-settings.ts';

describe('executor settings', () => {
  it('has the documented defaults', () => {
    expect(loadExecutorSettings({})).toEqual({
      tickMs: 1_000,
      batchSize: 200,
      maxBatchGas: 25_000_000n,
      maxInFlightBatches: 4,
      simulateFirst: false,
      cashSettleDelayMs: 5_000,
      maxFill: {},
      quoteMaxAgeMs: 30_000,
      noQuoteTimeoutMs: 60_000,
    });
  });

  it('reads the variables', () => {
    const s = loadExecutorSettings({
      EXECUTOR_TICK_MS: '250',
      EXECUTOR_BATCH_SIZE: '50',
      EXECUTOR_MAX_BATCH_GAS: '12000000',
      EXECUTOR_SIMULATE_FIRST: 'true',
      CASH_SETTLE_DELAY_MS: '0',
      EXECUTOR_MAX_FILL: 'aapl=10, *=0.5',
    });
    expect(s).toMatchObject({ tickMs: 250, batchSize: 50, maxBatchGas: 12_000_000n, simulateFirst: true, cashSettleDelayMs: 0 });
    expect(s.maxFill).toEqual({ AAPL: 10n * 10n ** 18n, '*': 5n * 10n ** 17n });
  });

  it('rejects malformed values, naming the variable', () => {
    expect(() => loadExecutorSettings({ EXECUTOR_BATCH_SIZE: '0' })).toThrow(/EXECUTOR_BATCH_SIZE/);
    expect(() => loadExecutorSettings({ EXECUTOR_TICK_MS: '1.5' })).toThrow(/EXECUTOR_TICK_MS/);
    expect(() => loadExecutorSettings({ EXECUTOR_MAX_BATCH_GAS: '-1' })).toThrow(/EXECUTOR_MAX_BATCH_GAS/);
    expect(() => parseMaxFill('AAPL')).toThrow(/EXECUTOR_MAX_FILL/);
    expect(() => parseMaxFill('AAPL=0')).toThrow(/greater than zero/);
    expect(() => parseMaxFill('AAPL=1e3')).toThrow(/EXECUTOR_MAX_FILL/);
  });
});
