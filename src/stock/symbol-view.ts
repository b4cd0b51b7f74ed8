/**
 * A row of `GET symbols` (the contract's StockSymbol): tokex's listing fields and Anchored's
 * (anchored-reference.md §4.1), the 24-hour figures from src/stock/market-stats.ts as exact numbers.
 */
import type { StockSymbol } from '@tokex/contract';
import { exactNumber, exactNumberOrNull } from './exact-number.ts';
import type { DayStats } from './market-stats.ts';
import type { SymbolSessionFlags } from '../marketdata/symbol-catalog.ts';
import { tokenNames } from './quote-view.ts';
import type { MarketConfigView, StockListing } from './stock-deps.ts';

/**
 * `flags`: the symbol's session flags as the calendar gives them (`symbolFlagsOf`): per symbol
 * under us-sessions, else the calendar's meaning for every symbol (`calendarSessionFlags`:
 * overnight and fractions by night unless `nyse`).
 */
export function symbolView(listing: StockListing, cfg: MarketConfigView | undefined, day: DayStats, flags: SymbolSessionFlags): StockSymbol {
  return {
    symbol: listing.symbol,
    name: listing.name,
    underlying: listing.underlying,
    exchange: listing.exchange,
    address: listing.address,
    decimals: listing.decimals,
    tradable: true,
    ...tokenNames(listing, cfg),
    // Every token has 18 decimals: a symbol trades fractions unless its flags say not.
    fractionable: flags.fractionable && listing.decimals > 0,
    overnightTradable: flags.overnightTradable,
    fractionalEhEnabled: flags.fractionalEhEnabled && flags.fractionable && listing.decimals > 0,
    price: exactNumberOrNull(day.price),
    change24H: exactNumberOrNull(day.change24H),
    change24HPercent: exactNumberOrNull(day.change24HPercent),
    volume24H: exactNumber(day.volume24H),
    logoUrl: '',
    pdfUrl: '',
    lastUpdateTimestamp: day.lastUpdateTimestamp,
  };
}
