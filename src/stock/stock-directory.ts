/** The listed stocks: the demo catalog's descriptive fields joined with the deployed token addresses. */
import type { Address } from 'viem';
import type { SymbolSpec } from '../marketdata/symbol-catalog.ts';
import type { StockDirectory, StockListing } from './stock-deps.ts';

export function createStockDirectory(specs: readonly SymbolSpec[], addresses: Record<string, Address>): StockDirectory {
  const listings: StockListing[] = specs
    .filter((s) => addresses[s.symbol] !== undefined)
    .map((s) => ({ symbol: s.symbol, name: s.name, underlying: s.underlying, exchange: s.exchange, address: addresses[s.symbol], decimals: 18 }));
  const bySymbol = new Map(listings.map((l) => [l.symbol, l]));
  const byAddress = new Map(listings.map((l) => [l.address.toLowerCase(), l]));
  return {
    list: () => listings,
    bySymbol: (symbol) => bySymbol.get(symbol),
    byAddress: (address) => byAddress.get(address.toLowerCase()),
  };
}
