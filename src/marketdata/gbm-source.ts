/**
 * Where prices come from. The built-in source is a seeded geometric Brownian motion: every minute
 * is an intra-minute path of one point per `stepMs` (60 at the default 1 s), reseeded from
 * (seed, symbol, minute since `origin`) and started at the previous minute's close. So the 1m
 * candle of a minute depends only on (seed, symbol, minute, previous close); a live tick at time t
 * is the same path cut at t, and the candle the live ticks build is exactly the candle history
 * would hold.
 *
 * The walk runs in floating point; every price that leaves this module is quantised to the cent
 * as an exact decimal string, and volumes are whole shares.
 */
import type { Candle, Quote } from './market-types.ts';
import type { SymbolSpec } from './symbol-catalog.ts';
import { Sfc32, seedFrom } from '../lib/seeded-random.ts';

export interface SourceTick {
  /** Quote at the tick time: last is the mid, bid and ask a half spread either side. */
  quote: Quote;
  /** The 1m candle of the tick's minute so far (open up to the tick time). */
  candle: Candle;
}

/**
 * A change of a price pin inside a minute (src/marketdata/price-pins.ts): from `time` on the path
 * stands at `price` (a cent price), or, with `price` null, walks on from the price it stood at.
 */
export interface PathEvent {
  time: number;
  price: string | null;
}

/**
 * A pluggable price source. Implementations must be deterministic in their arguments so the
 * service can rebuild history after a restart: the same call returns the same candle.
 */
export interface MarketDataSource {
  readonly name: string;
  /** Price the history of a symbol starts from on a fresh database. */
  startPrice(spec: SymbolSpec): string;
  /**
   * The complete 1m candle of the minute opening at `openTime`, continuing from `prevClose`.
   * `events` (ascending by time, inside the minute) pin and release the price along the path.
   */
  minuteCandle(spec: SymbolSpec, openTime: number, prevClose: string, events?: readonly PathEvent[]): Candle;
  /** The state at `time` inside its minute, continuing from `prevClose` (the previous minute's close), with `events` as above. */
  tick(spec: SymbolSpec, time: number, prevClose: string, events?: readonly PathEvent[]): SourceTick;
  /** A quote around a mid price, for times the price does not move (market closed). */
  quote(spec: SymbolSpec, mid: string, time: number): Quote;
}

export interface GbmSourceOptions {
  seed: string | number;
  /**
   * Where the walk's minutes are counted from (ms, a whole minute): each minute is reseeded from
   * (seed, symbol, openTime - origin). Default 0, the epoch: the prices of a minute are those of its
   * date. A seeded sandbox (docs/sandbox.md "Determinism") counts from its history's first minute,
   * so the same seed gives the same prices whatever day the venue starts.
   */
  origin?: number;
  /** Spacing of the intra-minute path points; must divide 60 000. Default 1000. */
  stepMs?: number;
  /** Typical traded value per minute in USD, sets the volume scale. Default 5 000 000. */
  notionalPerMinute?: number;
}

const MINUTE_MS = 60_000;
const NO_EVENTS: readonly PathEvent[] = [];
const YEAR_MS = 365.25 * 86_400_000;

/**
 * Parses a decimal price into whole cents: "229.87" → 22987. More places (an imported real price
 * such as "229.8751") round half up to the cent.
 */
export function toCents(price: string): number {
  const m = /^(\d+)(?:\.(\d+))?$/.exec(price);
  if (!m) throw new Error(`price ${JSON.stringify(price)}: expected a non-negative decimal string`);
  const frac = m[2] ?? '';
  const roundUp = frac.length > 2 && frac.charCodeAt(2) >= 53 /* '5' */ ? 1 : 0;
  return Number(m[1]) * 100 + Number(frac.slice(0, 2).padEnd(2, '0')) + roundUp;
}

/** 22987 → "229.87"; always two decimals, as prices are quoted. */
export function centsToString(cents: number): string {
  const whole = Math.floor(cents / 100);
  const frac = cents - whole * 100;
  return `${whole}.${frac < 10 ? '0' : ''}${frac}`;
}

/**
 * Bid and ask around a mid price in cents: mid ∓ half the spread, the bid rounded down and the
 * ask rounded up to the cent, so the quoted spread is never narrower than configured; bid < ask
 * and both > 0 always. Exact integer arithmetic.
 */
export function spreadQuote(symbol: string, midCents: number, spreadBps: number, time: number): Quote {
  const mid = BigInt(midCents);
  const bps = BigInt(Math.max(0, Math.round(spreadBps)));
  const denom = 20_000n;
  let bid = (mid * (denom - bps)) / denom;
  const askNum = mid * (denom + bps);
  let ask = askNum / denom + (askNum % denom === 0n ? 0n : 1n);
  if (bid < 1n) bid = 1n;
  if (ask <= bid) ask = bid + 1n;
  return {
    symbol,
    bid: centsToString(Number(bid)),
    ask: centsToString(Number(ask)),
    last: centsToString(midCents),
    timestamp: time,
  };
}

interface SpecParams {
  stepSd: number;
  shareBase: number;
}

export function createGbmSource(opts: GbmSourceOptions): MarketDataSource {
  const seed = String(opts.seed);
  const origin = opts.origin ?? 0;
  if (!Number.isSafeInteger(origin) || origin % MINUTE_MS !== 0) throw new Error('origin: must be a whole minute in ms');
  const stepMs = opts.stepMs ?? 1000;
  if (!Number.isInteger(stepMs) || stepMs <= 0 || MINUTE_MS % stepMs !== 0) {
    throw new Error('stepMs: must be a positive divisor of 60000');
  }
  const points = MINUTE_MS / stepMs;
  const notionalPerMinute = opts.notionalPerMinute ?? 5_000_000;
  const paramCache = new Map<SymbolSpec, SpecParams>();
  // One generator, reseeded per minute: calls never interleave (the walk is synchronous).
  const prng = new Sfc32(0);

  const params = (spec: SymbolSpec): SpecParams => {
    let p = paramCache.get(spec);
    if (p === undefined) {
      const sigma = Number(spec.annualVolatility);
      if (!Number.isFinite(sigma) || sigma < 0) throw new Error(`${spec.symbol}: annualVolatility must be a non-negative decimal`);
      // A minute has points - 1 increments (its first point is the previous close), which together
      // carry one minute's variance.
      const stepSd = points > 1 ? sigma * Math.sqrt(MINUTE_MS / YEAR_MS / (points - 1)) : 0;
      const shareBase = Math.max(1, notionalPerMinute / (toCents(spec.startPrice) / 100) / points);
      p = { stepSd, shareBase };
      paramCache.set(spec, p);
    }
    return p;
  };

  /** The path point an event at `time` takes effect at: the minute's points, clamped. */
  const pointOf = (openTime: number, time: number): number =>
    Math.min(points - 1, Math.max(0, Math.floor((time - openTime) / stepMs)));

  /**
   * Walks the minute's path up to point `lastPoint` and returns its candle and last price.
   *
   * A pin event makes the path stand at its price from the event's point on, jumping there at
   * once; the shocks of pinned points are still drawn (so the rest of the minute, and the volume,
   * stay those of the seeded path) but not applied. A release walks on from the pinned price with
   * the shocks of the following points. Without events this is the plain seeded path.
   */
  const walk = (
    spec: SymbolSpec,
    openTime: number,
    prevClose: string,
    lastPoint: number,
    events: readonly PathEvent[] = NO_EVENTS,
  ): { candle: Candle; midCents: number } => {
    const { stepSd, shareBase } = params(spec);
    const rng = prng.reseed(seedFrom(seed, spec.symbol, openTime - origin));
    const openCents = Math.max(1, toCents(prevClose));
    // Extremes are tracked in log space and quantised once: rounding is monotonic, so the cent
    // price of the highest point is the highest cent price, and the loop saves an exp per point.
    const openLog = Math.log(openCents);
    let logPrice = openLog;
    let highLog = openLog;
    let lowLog = openLog;
    // Pinned points are exact cents, kept apart from the walk's log space.
    let pinned: number | undefined;
    let pinHigh = 0;
    let pinLow = Number.POSITIVE_INFINITY;
    let next = 0;
    let volume = 0;
    for (let k = 0; k <= lastPoint; k++) {
      while (next < events.length && pointOf(openTime, events[next].time) <= k) {
        const price = events[next++].price;
        if (price === null) {
          if (pinned !== undefined) logPrice = Math.log(pinned);
          pinned = undefined;
        } else {
          pinned = Math.max(1, toCents(price));
          if (pinned > pinHigh) pinHigh = pinned;
          if (pinned < pinLow) pinLow = pinned;
        }
      }
      let shock = 0;
      if (k > 0) {
        shock = rng.normal();
        if (pinned === undefined) {
          logPrice += stepSd * shock;
          if (logPrice > highLog) highLog = logPrice;
          else if (logPrice < lowLog) lowLog = logPrice;
        }
      }
      // Larger moves trade more shares, as on a real tape; the mean stays near shareBase.
      volume += Math.floor(shareBase * (0.3 + 0.6 * Math.abs(shock) + 0.5 * rng.next()));
    }
    const toPriceCents = (lp: number): number => (lp === openLog ? openCents : Math.max(1, Math.round(Math.exp(lp))));
    const cents = pinned ?? toPriceCents(logPrice);
    const high = Math.max(toPriceCents(highLog), pinHigh);
    const low = Math.min(toPriceCents(lowLog), pinLow);
    return {
      midCents: cents,
      candle: {
        symbol: spec.symbol,
        interval: '1m',
        openTime,
        open: centsToString(openCents),
        high: centsToString(high),
        low: centsToString(low),
        close: centsToString(cents),
        volume: String(volume),
      },
    };
  };

  return {
    name: 'gbm',
    startPrice: (spec) => centsToString(toCents(spec.startPrice)),
    minuteCandle(spec, openTime, prevClose, events) {
      if (openTime % MINUTE_MS !== 0) throw new Error('openTime: must be a whole minute');
      return walk(spec, openTime, prevClose, points - 1, events).candle;
    },
    tick(spec, time, prevClose, events) {
      const openTime = Math.floor(time / MINUTE_MS) * MINUTE_MS;
      const point = Math.min(points - 1, Math.floor((time - openTime) / stepMs));
      const { candle, midCents } = walk(spec, openTime, prevClose, point, events);
      return { candle, quote: spreadQuote(spec.symbol, midCents, spec.spreadBps, time) };
    },
    quote: (spec, mid, time) => spreadQuote(spec.symbol, toCents(mid), spec.spreadBps, time),
  };
}
