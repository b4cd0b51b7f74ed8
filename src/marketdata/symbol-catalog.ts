/**
 * The demo listing: one Stock token is deployed per entry and the simulator quotes each one.
 * Prices are decimal strings (USD, 2 decimals); volatility is annualised, as a decimal string.
 *
 * Also the listing's trading sessions joined to the market calendar ({@link createVenueCalendar}):
 * under `MARKET_CALENDAR=us-sessions` each stock has Anchored's session flags (`overnightTradable`,
 * `fractionable`, `fractionalEhEnabled`), all `true` unless its spec or `STOCK_SESSION_FLAGS`
 * says otherwise; the other calendars keep the meaning they always had (one set for every symbol).
 */
import type { MarketCalendar } from './market-calendar.ts';
import {
  dayOrderExpiry,
  nextSessionStart,
  sessionAt,
  sessionBounds,
  type SessionBounds,
  type SymbolSessionFlags,
  type UsEquitySession,
} from './us-equity-sessions.ts';

export type { SymbolSessionFlags } from './us-equity-sessions.ts';

export interface SymbolSpec {
  symbol: string;
  name: string;
  /** Ticker of the underlying instrument on its home exchange. */
  underlying: string;
  exchange: string;
  startPrice: string;
  annualVolatility: string;
  /** Quoted spread between bid and ask, in basis points of the mid price. */
  spreadBps: number;
  /** Quoted round the clock, whatever the market calendar says (crypto). */
  alwaysOpen?: boolean;
  /** Under `us-sessions`: flags that differ from {@link DEFAULT_SESSION_FLAGS}. */
  sessionFlags?: Partial<SymbolSessionFlags>;
}

export const DEMO_SYMBOLS: readonly SymbolSpec[] = [
  { symbol: 'AAPL', name: 'Apple Inc.', underlying: 'AAPL', exchange: 'NASDAQ', startPrice: '229.87', annualVolatility: '0.25', spreadBps: 4 },
  { symbol: 'TSLA', name: 'Tesla, Inc.', underlying: 'TSLA', exchange: 'NASDAQ', startPrice: '251.44', annualVolatility: '0.55', spreadBps: 6 },
  { symbol: 'NVDA', name: 'NVIDIA Corporation', underlying: 'NVDA', exchange: 'NASDAQ', startPrice: '131.26', annualVolatility: '0.50', spreadBps: 5 },
  { symbol: 'MSFT', name: 'Microsoft Corporation', underlying: 'MSFT', exchange: 'NASDAQ', startPrice: '418.16', annualVolatility: '0.22', spreadBps: 4 },
  { symbol: 'SPY', name: 'SPDR S&P 500 ETF Trust', underlying: 'SPY', exchange: 'NYSE Arca', startPrice: '562.34', annualVolatility: '0.15', spreadBps: 2 },
];

/**
 * Index prices the perpetual venue needs beyond the stocks: simulated only (no Stock token is
 * deployed for them, so the stock API neither lists nor quotes them), and trading 24/7.
 */
export const PERP_INDEX_SYMBOLS: readonly SymbolSpec[] = [
  { symbol: 'BTC', name: 'Bitcoin', underlying: 'BTC', exchange: 'CRYPTO', startPrice: '97000.00', annualVolatility: '0.60', spreadBps: 2, alwaysOpen: true },
  { symbol: 'ETH', name: 'Ether', underlying: 'ETH', exchange: 'CRYPTO', startPrice: '3400.00', annualVolatility: '0.75', spreadBps: 3, alwaysOpen: true },
];

/**
 * Every symbol whose quotes the simulator makes (the `marketdata` role simulates the stocks and the
 * crypto indices): the ones `tokex marketdata set-price` may pin. A symbol outside it has no
 * simulated quote (at most imported candles).
 */
export const SIMULATED_SYMBOLS: readonly SymbolSpec[] = [
  ...DEMO_SYMBOLS,
  ...PERP_INDEX_SYMBOLS.filter((p) => !DEMO_SYMBOLS.some((s) => s.symbol === p.symbol)),
];

/** Whether `spec` trades at `ms`: always for an always-open symbol, else as the calendar says. */
export function openFor(spec: Pick<SymbolSpec, 'alwaysOpen'>, calendarOpen: (ms: number) => boolean): (ms: number) => boolean {
  return spec.alwaysOpen ? () => true : calendarOpen;
}

// ------------------------------------------------------------------ trading sessions per symbol

/** Under `us-sessions`, a listed stock trades in every session and in fractions unless told otherwise. */
export const DEFAULT_SESSION_FLAGS: Readonly<SymbolSessionFlags> = Object.freeze({
  overnightTradable: true,
  fractionable: true,
  fractionalEhEnabled: true,
});

/**
 * The flags of every symbol under a calendar without per-symbol sessions, as `GET symbols` always
 * answered them: the executor fills whenever the calendar is open, which is round the clock for
 * `always-open` and `24x5` and regular hours only for `nyse`, in fractions as by day.
 */
export function calendarSessionFlags(kind: string): SymbolSessionFlags {
  const overnight = kind !== 'nyse';
  return { overnightTradable: overnight, fractionable: true, fractionalEhEnabled: overnight };
}

/**
 * A spec's flags under `us-sessions`: the defaults, then its own. Fractions cannot trade in the
 * extended sessions of a symbol that does not trade fractions at all, so `fractionalEhEnabled`
 * is reported `false` whenever `fractionable` is.
 */
export function sessionFlagsOf(spec: Pick<SymbolSpec, 'sessionFlags'>): SymbolSessionFlags {
  const f = { ...DEFAULT_SESSION_FLAGS, ...spec.sessionFlags };
  return { overnightTradable: f.overnightTradable, fractionable: f.fractionable, fractionalEhEnabled: f.fractionable && f.fractionalEhEnabled };
}

/**
 * The specs with the operator's flags (`STOCK_SESSION_FLAGS`, by symbol) laid over their own. A
 * symbol the listing does not have is an error naming the setting, so a typo does not go unseen.
 */
export function withSessionFlags(specs: readonly SymbolSpec[], overrides: Readonly<Record<string, Partial<SymbolSessionFlags>>>): SymbolSpec[] {
  for (const symbol of Object.keys(overrides)) {
    if (!specs.some((s) => s.symbol === symbol)) {
      throw new RangeError(`STOCK_SESSION_FLAGS: ${symbol} is not listed (listed: ${specs.map((s) => s.symbol).join(', ')})`);
    }
  }
  return specs.map((s) => (overrides[s.symbol] === undefined ? s : { ...s, sessionFlags: { ...s.sessionFlags, ...overrides[s.symbol] } }));
}

/** The four-session rules (us-equity-sessions.ts) read on a calendar's clock. */
export interface UsSessionRules {
  /** The session running at `ms`. */
  session(ms: number): UsEquitySession;
  /** The session containing `ms`, or the closed gap, as [start, end). */
  bounds(ms: number): SessionBounds;
  /** The earliest start at or after `ms` of a session in `allowed`. */
  nextStart(ms: number, allowed: ReadonlySet<UsEquitySession>): number;
  /** When a DAY order placed at `ms` expires (`regularOnly`: at its trading day's regular close). */
  dayOrderExpiry(ms: number, opts?: { regularOnly?: boolean }): number;
}

/**
 * The market calendar as the venue's roles share it: the calendar of `MARKET_CALENDAR`, each
 * symbol's session flags, and under `us-sessions` the session rules. All of it reads one clock:
 * wall time plus `clockOffsetMs` (0 unless `MARKET_CLOCK_START` set the calendar's clock to
 * another instant, for demos and tests of the sessions; docs/stock-api.md, "Trading sessions").
 */
export interface VenueCalendar extends MarketCalendar {
  /** Calendar time minus wall time, ms. */
  readonly clockOffsetMs: number;
  /** A listed symbol's flags (`GET symbols`); an unknown one gets the defaults of the kind. */
  symbolFlags(symbol: string): SymbolSessionFlags;
  /** Only under `us-sessions`. */
  readonly usSessions?: UsSessionRules;
}

/** The four-session rules on the wall clock shifted by `offset` ms. */
function usSessionRules(offset: number): UsSessionRules {
  if (offset === 0) return { session: sessionAt, bounds: sessionBounds, nextStart: nextSessionStart, dayOrderExpiry };
  return {
    session: (ms) => sessionAt(ms + offset),
    bounds(ms) {
      const b = sessionBounds(ms + offset);
      return { session: b.session, start: b.start - offset, end: b.end - offset };
    },
    nextStart: (ms, allowed) => nextSessionStart(ms + offset, allowed) - offset,
    dayOrderExpiry: (ms, opts) => dayOrderExpiry(ms + offset, opts) - offset,
  };
}

export function createVenueCalendar(calendar: MarketCalendar, opts: { symbols: readonly SymbolSpec[]; clockOffsetMs?: number }): VenueCalendar {
  const offset = opts.clockOffsetMs ?? 0;
  if (!Number.isSafeInteger(offset)) throw new RangeError('clockOffsetMs: must be an integer');
  const perSymbol = calendar.kind === 'us-sessions';
  const kindFlags = Object.freeze(perSymbol ? { ...DEFAULT_SESSION_FLAGS } : calendarSessionFlags(calendar.kind));
  const flags = new Map(opts.symbols.map((s) => [s.symbol, perSymbol ? Object.freeze(sessionFlagsOf(s)) : kindFlags]));
  return {
    kind: calendar.kind,
    clockOffsetMs: offset,
    isOpen: offset === 0 ? (ms) => calendar.isOpen(ms) : (ms) => calendar.isOpen(ms + offset),
    sessionClose(ms) {
      const close = calendar.sessionClose(ms + offset);
      return close === null ? null : close - offset;
    },
    session: offset === 0 ? (ms) => calendar.session(ms) : (ms) => calendar.session(ms + offset),
    symbolFlags: (symbol) => flags.get(symbol) ?? kindFlags,
    ...(perSymbol ? { usSessions: usSessionRules(offset) } : {}),
  };
}

/**
 * What a reader of a calendar asks about sessions, from any calendar: a venue calendar's own
 * answers, or for a bare `MarketCalendar` (unit tests, tools) the answers on the wall clock.
 */
export type SessionAware = Partial<Pick<VenueCalendar, 'kind' | 'symbolFlags' | 'usSessions'>>;

/** The four-session rules of a `us-sessions` calendar; undefined for the other kinds. */
export function usSessionRulesOf(calendar: SessionAware): UsSessionRules | undefined {
  if (calendar.kind !== 'us-sessions') return undefined;
  return calendar.usSessions ?? WALL_CLOCK_RULES;
}

const WALL_CLOCK_RULES = usSessionRules(0);

/** The flags of `symbol` under `calendar`. */
export function symbolFlagsOf(calendar: SessionAware, symbol: string): SymbolSessionFlags {
  if (calendar.symbolFlags !== undefined) return calendar.symbolFlags(symbol);
  return calendar.kind === 'us-sessions' ? DEFAULT_SESSION_FLAGS : calendarSessionFlags(calendar.kind ?? 'always-open');
}
