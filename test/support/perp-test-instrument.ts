/**
 * The small instrument of the engine's tests, written once: tick and lot of 1, so that prices and
 * sizes read as plain integers in the tests' arithmetic.
 */
import type { InstrumentConfig } from '../../src/perp/engine/instruments.ts';

/**
 * `X-USD`: 20× at most, 5 % initial and 2.5 % maintenance margin, 2 and 5 bp maker and taker fees,
 * hourly funding, no price band; `changes` says what a test needs otherwise.
 */
export function xUsdInstrument(changes: Partial<InstrumentConfig> = {}): InstrumentConfig {
  return {
    symbol: 'X-USD',
    tickSize: '1',
    lotSize: '1',
    minSizeLots: 1,
    maxSizeLots: 1_000_000,
    maxPriceTicks: 1_000_000,
    maxLeverage: 20,
    initialMarginRatioPpm: 50_000,
    maintenanceMarginRatioPpm: 25_000,
    makerFeeRatePpm: 200,
    takerFeeRatePpm: 500,
    fundingIntervalMs: 3_600_000,
    priceBandPpm: 0,
    ...changes,
  };
}

/** A test account: forty times `c` (`addr('a')` is 0xaaaa…aaaa). */
export const addr = (c: string): string => '0x' + c.repeat(40);
