/**
 * The demo listing: one Stock token is deployed per entry and the simulator quotes each one.
 * Prices are decimal strings (USD, 2 decimals); volatility is annualised, as a decimal string.
 */
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
