import { describe, expect, it } from 'vitest';
import { feedDescription, oracleVerdict, publishTrigger, quoteAnswer, symbolOfDescription } from './oracle-publisher.ts';

describe('quoteAnswer', () => {
  it('is the mid of bid and ask at 8 decimals, rounded half up', () => {
    expect(quoteAnswer('229.86', '229.88')).toBe(22_987_000_000n);
    expect(quoteAnswer('100', '100.01')).toBe(10_000_500_000n);
    // A mid with a ninth decimal of exactly 5 rounds up; below it, down.
    expect(quoteAnswer('0.00000001', '0.00000002')).toBe(2n);
    expect(quoteAnswer('0.000000010', '0.000000019')).toBe(1n);
    expect(quoteAnswer('97000.1', '97000.2')).toBe(9_700_015_000_000n);
  });

  it('refuses zero, negative, malformed and crossed quotes', () => {
    expect(quoteAnswer('0', '1')).toBeUndefined();
    expect(quoteAnswer('1', '0')).toBeUndefined();
    expect(quoteAnswer('-1', '1')).toBeUndefined();
    expect(quoteAnswer('1e3', '1001')).toBeUndefined();
    expect(quoteAnswer('', '1')).toBeUndefined();
    expect(quoteAnswer('10.01', '10.00')).toBeUndefined();
    // Too small to show at 8 decimals.
    expect(quoteAnswer('0.000000001', '0.000000001')).toBeUndefined();
  });
});

describe('publishTrigger', () => {
  const last = { answer: 10_000_000_000n }; // 100.00
  it('publishes the first answer, a move of the deviation or more, and on the heartbeat', () => {
    expect(publishTrigger(undefined, 1n, 0, 60_000, 25)).toBe('first');
    expect(publishTrigger(last, 10_025_000_000n, 0, 60_000, 25)).toBe('deviation');
    expect(publishTrigger(last, 9_975_000_000n, 0, 60_000, 25)).toBe('deviation');
    expect(publishTrigger(last, 10_024_999_999n, 59_999, 60_000, 25)).toBeUndefined();
    expect(publishTrigger(last, 10_000_000_000n, 60_000, 60_000, 25)).toBe('heartbeat');
  });
});

describe('oracleVerdict', () => {
  // Answer 200.00000000 written at t=1000; the chain reads 1100.
  const reading = { answer: 20_000_000_000n, decimals: 8, updatedAt: 1_000, chainTime: 1_100 };
  const p = (v: bigint) => v * 10n ** 16n; // hundredths → 18 decimals
  it('applies the router rule exactly: |price − answer| × 10⁴ ≤ answer × tolerance', () => {
    expect(oracleVerdict(reading, p(20_200n), 18, 100, 180)).toBe('ok');
    expect(oracleVerdict(reading, p(20_200n) + 1n, 18, 100, 180)).toBe('deviation');
    expect(oracleVerdict(reading, p(19_800n), 18, 100, 180)).toBe('ok');
    expect(oracleVerdict(reading, p(19_800n) - 1n, 18, 100, 180)).toBe('deviation');
  });
  it('is stale past the maximum age, counted from the chain time plus the margin', () => {
    expect(oracleVerdict(reading, p(20_000n), 18, 100, 100)).toBe('ok');
    expect(oracleVerdict(reading, p(20_000n), 18, 100, 99)).toBe('stale');
    expect(oracleVerdict(reading, p(20_000n), 18, 100, 110, 10)).toBe('ok');
    expect(oracleVerdict(reading, p(20_000n), 18, 100, 110, 11)).toBe('stale');
    // An answer stamped after the chain's time is fresh.
    expect(oracleVerdict({ ...reading, updatedAt: 2_000 }, p(20_000n), 18, 100, 1)).toBe('ok');
  });
  it('calls a zero, negative or oversized answer invalid', () => {
    expect(oracleVerdict({ ...reading, answer: 0n }, p(1n), 18, 100, 180)).toBe('invalid');
    expect(oracleVerdict({ ...reading, answer: -1n }, p(1n), 18, 100, 180)).toBe('invalid');
    expect(oracleVerdict({ ...reading, answer: 1n << 128n }, p(1n), 18, 100, 180)).toBe('invalid');
  });
});

describe('feed descriptions', () => {
  it('name the symbol in Chainlink style and read back', () => {
    expect(feedDescription('AAPL')).toBe('AAPL / USD');
    expect(symbolOfDescription('BRK.B / USD')).toBe('BRK.B');
    expect(symbolOfDescription('AAPL/USD')).toBeUndefined();
  });
});

describe('the ORACLE_* settings', async () => {
  const { loadConfig } = await import('../config/app-config.ts');
  it('default to 100 bps, 25 bps, a minute and three heartbeats', () => {
    expect(loadConfig({}).oracle).toEqual({ toleranceBps: 100, deviationBps: 25, heartbeatMs: 60_000, maxAgeMs: 180_000 });
    expect(loadConfig({ ORACLE_HEARTBEAT_MS: '5000' }).oracle.maxAgeMs).toBe(15_000);
    expect(loadConfig({ ORACLE_TOLERANCE_BPS: '0' }).oracle.toleranceBps).toBe(0);
  });
  it('refuse what would halt or never check', () => {
    expect(() => loadConfig({ ORACLE_TOLERANCE_BPS: '5001' })).toThrow('ORACLE_TOLERANCE_BPS: must be at most 5000');
    expect(() => loadConfig({ ORACLE_DEVIATION_BPS: '100' })).toThrow(/ORACLE_DEVIATION_BPS: must be below ORACLE_TOLERANCE_BPS/);
    expect(() => loadConfig({ ORACLE_DEVIATION_BPS: '0' })).toThrow('ORACLE_DEVIATION_BPS: must be at least 1');
    expect(() => loadConfig({ ORACLE_MAX_AGE_MS: '60000' })).toThrow('ORACLE_MAX_AGE_MS: must be longer than ORACLE_HEARTBEAT_MS');
    expect(() => loadConfig({ ORACLE_MAX_AGE_MS: '604800001' })).toThrow(/at most 604800000/);
    expect(() => loadConfig({ ORACLE_PUBLISHER_PRIVATE_KEY: '0x12' })).toThrow('ORACLE_PUBLISHER_PRIVATE_KEY: must be 0x followed by 64 hex digits');
  });
});
