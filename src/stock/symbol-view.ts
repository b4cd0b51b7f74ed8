/**
 * A row of `GET symbols` (the contract's StockSymbol): tokex's listing fields and Anchored's
 * (anchored-reference.md §4.1), the 24-hour figures from src/stock/market-stats.ts as exact numbers.
 */
import type { StockSymbol } from '@tokex/contract';
import { exactNumber, exactNumberOrNull } from './exact-number.ts';
import type { DayStats } from './market-stats.ts';
import { tokenNames } from './quote-view.ts';
import type { MarketConfigView, StockListing } from './stock-deps.ts';

/**
 * Whether orders fill outside regular US hours: the executor fills whenever the calendar says the
 * market is open, which for `always-open` and `24x5` includes the night; `nyse` is regular hours only.
 */
export function tradesOvernight(calendarKind: string): boolean {
  return calendarKind !== 'nyse';
}

export function symbolView(listing: StockListing, cfg: MarketConfigView | undefined, day: DayStats, overnight: boolean): StockSymbol {
  const t = tokenNames(listing, cfg);
  return {
    symbol: listing.symbol,
    name: listing.name,
    underlying: listing.underlying,
    exchange: listing.exchange,
    address: listing.address,
    decimals: listing.decimals,
    tradable: true,
    contractAddress: t.contractAddress,
    contractSymbol: t.contractSymbol,
    contractName: t.contractName,
    onChainDecimals: t.onChainDecimals,
    // Every token has 18 decimals and orders take any quantity the decimals allow, day or night.
    fractionable: listing.decimals > 0,
    overnightTradable: overnight,
    fractionalEhEnabled: overnight && listing.decimals > 0,
    price: exactNumberOrNull(day.price),
    change24H: exactNumberOrNull(day.change24H),
    change24HPercent: exactNumberOrNull(day.change24HPercent),
    volume24H: exactNumber(day.volume24H),
    logoUrl: '',
    pdfUrl: '',
    lastUpdateTimestamp: day.lastUpdateTimestamp,
  };
}
