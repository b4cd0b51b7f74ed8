/**
 * Quotes and candles as the API shows them, for the REST routes and the streams alike: a quote
 * (`GET prices/{symbol}`, the `quotes` stream) with its token's on-chain context, and a candle; their
 * shapes are the contract's StockQuote and StockCandle.
 */
import type { StockCandle, StockMarketSession, StockQuote } from '@tokex/contract';
import { INTERVAL_MS, type Quote } from '../marketdata/market-types.ts';
import type { CandleRecord } from '../storage/candle-store.ts';
import type { HistoryBar } from '../marketdata/price-history.ts';
import { exactNumber } from './exact-number.ts';
import { DEFAULT_QUOTE_MAX_AGE_MS } from './executor/fill-policy.ts';
import type { MarketConfigView, StockListing } from './stock-deps.ts';

/**
 * A quote is stale when it is older than the executor would fill against (`EXECUTOR_QUOTE_MAX_AGE_MS`,
 * default 30 s): what the API marks stale is exactly what cannot trade. The simulator quotes round
 * the clock (a closed market's quote stands still but stays fresh), so a stale quote means the
 * market data stopped.
 */
export const STALE_QUOTE_MS = DEFAULT_QUOTE_MAX_AGE_MS;

export function quoteStale(quote: Pick<Quote, 'timestamp'>, now: number, maxAgeMs: number = STALE_QUOTE_MS): boolean {
  return !(now - quote.timestamp <= maxAgeMs);
}

/** The token's row of the chain snapshot, if the snapshot has it. */
export function chainToken(cfg: MarketConfigView | undefined, listing: StockListing): MarketConfigView['stocks'][number] | undefined {
  if (cfg === undefined) return undefined;
  const address = listing.address.toLowerCase();
  for (const s of cfg.stocks) if (s.address.toLowerCase() === address) return s;
  return undefined;
}

/**
 * The token as Anchored names its parts: its ERC-20 `symbol()` and `decimals()` as the chain
 * snapshot read them (the listing's ticker and 18 until there is one), and its `name()`, which the
 * deploy sets to the listing's name (src/chain/deploy-contracts.ts) and the snapshot does not read.
 */
export function tokenNames(listing: StockListing, cfg: MarketConfigView | undefined) {
  const onChain = chainToken(cfg, listing);
  return {
    contractAddress: listing.address,
    contractSymbol: onChain?.symbol ?? listing.symbol,
    contractName: listing.name,
    onChainDecimals: onChain?.decimals ?? listing.decimals,
  };
}

function onChainView(listing: StockListing, cfg: MarketConfigView, totalSupply: string): StockQuote['onChain'] {
  const t = tokenNames(listing, cfg);
  return {
    contractAddress: t.contractAddress,
    contractSymbol: t.contractSymbol,
    contractName: t.contractName,
    decimals: listing.decimals,
    onChainDecimals: t.onChainDecimals,
    totalSupply,
    tradable: true,
  };
}

/**
 * The market's state when a quote is answered: the `session` on (`calendar.session(now)`: one of
 * the four under us-sessions, else `regular` or `closed`) and `marketStatus`, `open` in every
 * session but `closed` (every calendar is open exactly when its session is not `closed`).
 */
export interface MarketState {
  open: boolean;
  session: StockMarketSession;
}

export function marketStateAt(calendar: { session(ms: number): StockMarketSession }, ms: number): MarketState {
  const session = calendar.session(ms);
  return { open: session !== 'closed', session };
}

export function quoteView(listing: StockListing, quote: Quote, cfg: MarketConfigView, market: MarketState, stale: boolean): StockQuote {
  const totalSupply = chainToken(cfg, listing)?.totalSupply ?? '0';
  // The prices and the market's state, at the top and again in basicInfo.
  const prices = {
    bid: quote.bid,
    ask: quote.ask,
    last: quote.last,
    timestamp: quote.timestamp,
    marketStatus: market.open ? ('open' as const) : ('closed' as const),
    session: market.session,
  };
  return {
    symbol: listing.symbol,
    ...prices,
    token: { address: listing.address, decimals: listing.decimals, totalSupply },
    stale,
    basicInfo: {
      symbol: listing.symbol,
      name: listing.name,
      underlying: listing.underlying,
      exchange: listing.exchange,
      ...prices,
      stale,
    },
    onChain: onChainView(listing, cfg, totalSupply),
  };
}

/**
 * A bar as `GET prices/{symbol}/history` and the `klines:<interval>` stream show it: Anchored's numbers (exact digits on REST, the
 * nearest double in the streams, which print through JSON.stringify) and the exact strings in `exact`.
 */
export function barView(b: Pick<HistoryBar, 'openTime' | 'closeTime' | 'open' | 'high' | 'low' | 'close' | 'volume'>): StockCandle {
  return {
    openTime: b.openTime,
    closeTime: b.closeTime,
    open: exactNumber(b.open),
    high: exactNumber(b.high),
    low: exactNumber(b.low),
    close: exactNumber(b.close),
    volume: exactNumber(b.volume),
    exact: { open: b.open, high: b.high, low: b.low, close: b.close, volume: b.volume },
  };
}
