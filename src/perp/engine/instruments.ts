/**
 * Instrument configuration of the perpetual engine. Prices are integer ticks and sizes integer lots;
 * money is bigint micro-USD (the collateral token's 6 decimals). `tickSize × lotSize` must be a whole
 * number of micro-USD so that a fill's notional, `priceTicks × sizeLots × unitMicros`, is exact.
 */
import { parseScaled } from './fixed-point.ts';

/** Collateral (USDC) decimals: every money amount in the engine is an integer count of 1e-6 USD. */
export const COLLATERAL_DECIMALS = 6;

export interface InstrumentConfig {
  symbol: string;
  /** USD per price tick, a decimal string (`"0.1"`). */
  tickSize: string;
  /** Base units per size lot, a decimal string (`"0.0001"` BTC). */
  lotSize: string;
  /** Smallest order size, in lots. */
  minSizeLots: number;
  /** Largest order size, in lots. */
  maxSizeLots: number;
  /** Largest limit price, in ticks (prices must also be > 0). */
  maxPriceTicks: number;
  /** Highest leverage an account may choose (integer). */
  maxLeverage: number;
  /** Floor of the initial margin rate in ppm of notional, whatever the leverage (1/maxLeverage or more). */
  initialMarginRatioPpm: number;
  /** Maintenance margin rate in ppm of notional (reported for the liquidation worker). */
  maintenanceMarginRatioPpm: number;
  /** Fee rates in ppm of notional; 0 or positive (no rebates). */
  makerFeeRatePpm: number;
  takerFeeRatePpm: number;
  /** How often the funding worker should call `applyFunding` (the engine does not schedule). */
  fundingIntervalMs: number;
  /**
   * The price band around the mark, in ppm of the mark (0 turns it off): a limit price crossing
   * beyond it is refused, a market order fills only inside it (docs/perp-risk.md).
   */
  priceBandPpm: number;
  /** A market order on a mark older than this waits for a fresh one (MARK_STALE). Default 60 000; 0 = off. */
  markStaleMs?: number;
  /** Liquidation on the instrument pauses while its index is older than this. Default 30 000. */
  indexStaleMs?: number;
  /** Liquidation fee in ppm of the closed notional, capped by the surplus above bankruptcy. Default 5 000. */
  liquidationFeePpm?: number;
}

/** Defaults of the optional settings. */
export const DEFAULT_MARK_STALE_MS = 60_000;
export const DEFAULT_INDEX_STALE_MS = 30_000;
export const DEFAULT_LIQUIDATION_FEE_PPM = 5_000;
/** ±5 %: Binance's and Hyperliquid's order of magnitude for a market order's reach. */
export const DEFAULT_PRICE_BAND_PPM = 50_000;

/** A validated instrument with every setting given and its derived exact unit. */
export interface InstrumentSpec extends Readonly<Required<InstrumentConfig>> {
  /** Micro-USD per (tick × lot): a fill's notional is `priceTicks × sizeLots × unitMicros`. */
  readonly unitMicros: bigint;
}

/** Funding settles hourly by default, as on Hyperliquid and dYdX (configurable per instrument). */
const ONE_HOUR = 3_600_000;

/** The venue's default instruments: two crypto perpetuals and three stock perpetuals. */
export const DEFAULT_INSTRUMENTS: readonly InstrumentConfig[] = Object.freeze([
  {
    symbol: 'BTC-USD', tickSize: '0.1', lotSize: '0.0001', minSizeLots: 10, maxSizeLots: 100_000_000, maxPriceTicks: 100_000_000,
    maxLeverage: 50, initialMarginRatioPpm: 20_000, maintenanceMarginRatioPpm: 10_000, makerFeeRatePpm: 200, takerFeeRatePpm: 500,
    fundingIntervalMs: ONE_HOUR, priceBandPpm: DEFAULT_PRICE_BAND_PPM, liquidationFeePpm: 5_000,
  },
  {
    symbol: 'ETH-USD', tickSize: '0.01', lotSize: '0.001', minSizeLots: 10, maxSizeLots: 100_000_000, maxPriceTicks: 100_000_000,
    maxLeverage: 50, initialMarginRatioPpm: 20_000, maintenanceMarginRatioPpm: 10_000, makerFeeRatePpm: 200, takerFeeRatePpm: 500,
    fundingIntervalMs: ONE_HOUR, priceBandPpm: DEFAULT_PRICE_BAND_PPM, liquidationFeePpm: 5_000,
  },
  ...['AAPL-USD', 'TSLA-USD', 'NVDA-USD'].map((symbol) => ({
    symbol, tickSize: '0.01', lotSize: '0.01', minSizeLots: 1, maxSizeLots: 100_000_000, maxPriceTicks: 100_000_000,
    maxLeverage: 20, initialMarginRatioPpm: 50_000, maintenanceMarginRatioPpm: 25_000, makerFeeRatePpm: 200, takerFeeRatePpm: 500,
    fundingIntervalMs: ONE_HOUR, priceBandPpm: DEFAULT_PRICE_BAND_PPM, liquidationFeePpm: 10_000,
  })),
].map((c) => Object.freeze(c)));

function positiveSafeInt(v: unknown): boolean {
  return typeof v === 'number' && Number.isSafeInteger(v) && v > 0;
}

function ppm(v: unknown, max: number): boolean {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 && v <= max;
}

/** Validates a configuration (throws: a bad instrument is a programmer error) and derives its unit. */
export function instrumentSpec(config: InstrumentConfig): InstrumentSpec {
  const c = config;
  const fail = (what: string): never => {
    throw new Error(`instrument ${JSON.stringify(c.symbol)}: ${what}`);
  };
  if (typeof c.symbol !== 'string' || !/^[A-Z0-9]{1,16}-[A-Z0-9]{1,16}$/.test(c.symbol)) fail('symbol must look like BTC-USD');
  const tick = parseScaled(c.tickSize, 'tickSize');
  const lot = parseScaled(c.lotSize, 'lotSize');
  if (tick.value === 0n || lot.value === 0n) fail('tickSize and lotSize must be > 0');
  // tick × lot × 10^6 = tick.value × lot.value × 10^(6 − scales), which must be an integer.
  const exp = COLLATERAL_DECIMALS - tick.scale - lot.scale;
  const product = tick.value * lot.value;
  let unitMicros: bigint;
  if (exp >= 0) unitMicros = product * 10n ** BigInt(exp);
  else {
    const div = 10n ** BigInt(-exp);
    if (product % div !== 0n) fail(`tickSize × lotSize must be a whole number of 1e-${COLLATERAL_DECIMALS} USD`);
    unitMicros = product / div;
  }
  if (!positiveSafeInt(c.minSizeLots) || !positiveSafeInt(c.maxSizeLots) || c.minSizeLots > c.maxSizeLots) fail('minSizeLots/maxSizeLots');
  if (!positiveSafeInt(c.maxPriceTicks)) fail('maxPriceTicks');
  // Keeps every lot and tick product of the book (level totals, position sizes) a safe integer.
  if (c.maxSizeLots > 2 ** 40 || c.maxPriceTicks > 2 ** 48) fail('maxSizeLots ≤ 2^40 and maxPriceTicks ≤ 2^48');
  if (!positiveSafeInt(c.maxLeverage) || c.maxLeverage > 1000) fail('maxLeverage must be an integer 1..1000');
  if (!ppm(c.initialMarginRatioPpm, 1_000_000) || c.initialMarginRatioPpm === 0) fail('initialMarginRatioPpm must be 1..1e6');
  if (!ppm(c.maintenanceMarginRatioPpm, c.initialMarginRatioPpm)) fail('maintenanceMarginRatioPpm must be 0..initialMarginRatioPpm');
  if (!ppm(c.makerFeeRatePpm, 100_000) || !ppm(c.takerFeeRatePpm, 100_000)) fail('fee rates must be 0..100000 ppm');
  if (!positiveSafeInt(c.fundingIntervalMs)) fail('fundingIntervalMs');
  if (!ppm(c.priceBandPpm, 1_000_000)) fail('priceBandPpm must be 0..1e6');
  const markStaleMs = c.markStaleMs ?? DEFAULT_MARK_STALE_MS;
  const indexStaleMs = c.indexStaleMs ?? DEFAULT_INDEX_STALE_MS;
  const liquidationFeePpm = c.liquidationFeePpm ?? DEFAULT_LIQUIDATION_FEE_PPM;
  if (!Number.isSafeInteger(markStaleMs) || markStaleMs < 0) fail('markStaleMs');
  if (!positiveSafeInt(indexStaleMs)) fail('indexStaleMs');
  if (!ppm(liquidationFeePpm, 100_000)) fail('liquidationFeePpm must be 0..100000');
  return Object.freeze({ ...c, markStaleMs, indexStaleMs, liquidationFeePpm, unitMicros });
}

const DECIMAL_RE = /^(0|[1-9]\d*)(\.\d+)?$/;

/**
 * A decimal string as a whole number of `step`s (`"50000.1"` with step `"0.1"` → 500001), or null when
 * it is not a plain non-negative decimal, is off the step, or is beyond a safe integer. The API uses
 * it to turn prices into ticks and sizes into lots (off-tick and off-lot are its to refuse).
 */
export function decimalToSteps(value: string, step: string): number | null {
  if (typeof value !== 'string' || !DECIMAL_RE.test(value)) return null;
  const v = parseScaled(value, 'value');
  const s = parseScaled(step, 'step');
  // value / step = (v.value / 10^v.scale) / (s.value / 10^s.scale)
  const scale = Math.max(v.scale, s.scale);
  const num = v.value * 10n ** BigInt(scale - v.scale);
  const den = s.value * 10n ** BigInt(scale - s.scale);
  if (den === 0n || num % den !== 0n) return null;
  const steps = num / den;
  return steps > BigInt(Number.MAX_SAFE_INTEGER) ? null : Number(steps);
}

/** Whole steps back to the shortest exact decimal string (`500001`, `"0.1"` → `"50000.1"`). */
export function stepsToDecimal(steps: number, step: string): string {
  const s = parseScaled(step, 'step');
  const raw = BigInt(steps) * s.value;
  if (s.scale === 0) return raw.toString();
  const negative = raw < 0n;
  const digits = (negative ? -raw : raw).toString().padStart(s.scale + 1, '0');
  const whole = digits.slice(0, digits.length - s.scale);
  const frac = digits.slice(digits.length - s.scale).replace(/0+$/, '');
  return (negative ? '-' : '') + (frac === '' ? whole : `${whole}.${frac}`);
}

/** priceTicks × sizeLots × unitMicros: a fill's notional in micro-USD. */
export function notionalMicros(spec: InstrumentSpec, priceTicks: number, sizeLots: number): bigint {
  return BigInt(priceTicks) * BigInt(sizeLots) * spec.unitMicros;
}

/** The instruments with every funding interval set to `intervalMs` (PERP_FUNDING_INTERVAL_MS), or as they are. */
export function withFundingInterval(instruments: readonly InstrumentConfig[], intervalMs: number | undefined): InstrumentConfig[] {
  return instruments.map((c) => (intervalMs === undefined ? c : { ...c, fundingIntervalMs: intervalMs }));
}
