/**
 * The CCXT class's market data (tokex-perp.ts): the venue's instruments as CCXT markets and
 * currencies, and its public reads parsed into CCXT's unified structures.
 */
import { Precise, ArgumentsRequired, BadRequest } from 'ccxt';
import type {
  Currencies,
  Dict,
  FundingRate,
  FundingRateHistory,
  FundingRates,
  Int,
  Market,
  OHLCV,
  OrderBook,
  Str,
  Strings,
  Ticker,
  Tickers,
  Trade,
} from 'ccxt';
import { TokexPerpBase, type Json } from './tokex-perp-base.ts';

/** Markets, tickers, the order book, candles, public trades and funding rates: public reads. */
export class TokexPerpMarkets extends TokexPerpBase {
  // ---------------------------------------------------------------- market data

  override async fetchTime(params: Dict = {}): Promise<Int> {
    const data = await this.call('GET', 'time', params, 'public');
    return this.safeInteger(data, 'serverTime');
  }

  override async fetchMarkets(params: Dict = {}): Promise<Market[]> {
    // Inside loadMarkets, fetchCurrencies has just read the instruments: no second request.
    const cached = this.options['cachedCurrencies'] !== undefined ? this.instrumentsRead : undefined;
    this.instrumentsRead = undefined;
    const data = cached ?? (await this.call('GET', 'instruments', params));
    return (data as Json[]).map((m) => this.parseMarket(m));
  }

  /** The instruments fetchCurrencies read, for the fetchMarkets of the same loadMarkets. */
  private instrumentsRead: Json[] | undefined = undefined;

  /** The CCXT network code of a chain id (`options.networksById`, else the id itself). */
  protected networkCode(chainId: string): string {
    return this.safeString(this.safeDict(this.options, 'networksById', {}), chainId, chainId) as string;
  }

  /**
   * The venue's currencies: USDC, the one collateral (deposited into and withdrawn from the
   * MarginVault on the venue's chain, 6 decimals, no fee); USD, the unit of prices, PnL and fees
   * (the venue's dollar, paid 1:1 in USDC: neither deposited nor withdrawn); and each market's base
   * (the underlying of a perpetual: never held, so neither deposited nor withdrawn), its precision
   * the lot size.
   */
  override async fetchCurrencies(params: Dict = {}): Promise<Currencies> {
    const instruments = (await this.call('GET', 'instruments', params)) as Json[];
    this.instrumentsRead = instruments;
    const chainId = this.chainId();
    const network = this.networkCode(chainId);
    const micro = this.parseNumber('0.000001');
    const collateral = this.collateralCode();
    const limits = { deposit: { min: micro, max: undefined }, withdraw: { min: micro, max: undefined } };
    const result: Dict = {};
    result[collateral] = this.safeCurrencyStructure({
      id: collateral,
      code: collateral,
      name: 'USD Coin',
      type: 'crypto',
      active: true,
      deposit: true,
      withdraw: true,
      fee: this.parseNumber('0'),
      precision: micro,
      limits,
      networks: {
        [network]: { id: chainId, network, active: true, deposit: true, withdraw: true, fee: this.parseNumber('0'), precision: micro, limits, info: { chainId } },
      },
      info: { asset: collateral, chainId },
    });
    const quotes = new Set<string>();
    const bases = new Map<string, Json[]>();
    for (const m of instruments) {
      const base = this.safeString(m, 'base') as string;
      quotes.add(this.safeString(m, 'quote') as string);
      bases.set(base, [...(bases.get(base) ?? []), m]);
    }
    for (const quote of quotes) {
      const code = this.safeCurrencyCode(quote) as string;
      if (code in result) continue;
      result[code] = this.safeCurrencyStructure({
        id: quote, code, name: code === 'USD' ? 'US dollar' : code, type: code === 'USD' ? 'fiat' : 'other',
        active: true, deposit: false, withdraw: false, precision: micro, info: { asset: quote, settledIn: collateral },
      });
    }
    for (const [base, markets] of bases) {
      const code = this.safeCurrencyCode(base) as string;
      if (code in result) continue;
      const lots = markets.map((m) => this.safeString(m, 'lotSize') as string).filter((x) => x !== undefined);
      const lot = lots.reduce((a, b) => (Precise.stringLt(b, a) ? b : a), lots[0]);
      result[code] = this.safeCurrencyStructure({
        id: base, code, name: code, type: 'other', active: true, deposit: false, withdraw: false,
        precision: this.parseNumber(lot), info: { asset: base, markets: markets.map((m) => this.safeString(m, 'symbol')) },
      });
    }
    return result as Currencies;
  }

  override parseMarket(m: Dict): Market {
    const id = this.safeString(m, 'symbol') as string;
    const baseId = this.safeString(m, 'base') as string;
    const quoteId = this.safeString(m, 'quote') as string;
    const base = this.safeCurrencyCode(baseId);
    const quote = this.safeCurrencyCode(quoteId);
    const settle = quote;
    return this.safeMarketStructure({
      id,
      symbol: `${base}/${quote}:${settle}`,
      base,
      quote,
      settle,
      baseId,
      quoteId,
      settleId: quoteId,
      type: 'swap',
      spot: false,
      margin: false,
      swap: true,
      future: false,
      option: false,
      active: true,
      contract: true,
      linear: true,
      inverse: false,
      taker: this.safeNumber(m, 'takerFeeRate'),
      maker: this.safeNumber(m, 'makerFeeRate'),
      contractSize: this.parseNumber('1'),
      expiry: undefined,
      expiryDatetime: undefined,
      strike: undefined,
      optionType: undefined,
      precision: {
        amount: this.safeNumber(m, 'lotSize'),
        price: this.safeNumber(m, 'tickSize'),
      },
      limits: {
        leverage: { min: this.parseNumber('1'), max: this.safeNumber(m, 'maxLeverage') },
        amount: { min: this.safeNumber(m, 'minSize'), max: this.safeNumber(m, 'maxSize') },
        price: { min: undefined, max: undefined },
        cost: { min: undefined, max: undefined },
      },
      marginModes: { cross: true, isolated: true },
      created: undefined,
      info: m,
    });
  }

  override async fetchTickers(symbols: Strings = undefined, params: Dict = {}): Promise<Tickers> {
    await this.loadMarkets();
    const request: Dict = {};
    if (symbols !== undefined && symbols.length === 1) request['symbol'] = this.marketId(symbols[0]);
    const data = await this.call('GET', 'tickers', this.extend(request, params));
    return this.parseTickers(data, symbols);
  }

  override async fetchTicker(symbol: string, params: Dict = {}): Promise<Ticker> {
    await this.loadMarkets();
    const market = this.market(symbol);
    const data = await this.call('GET', 'tickers', this.extend({ symbol: market.id }, params));
    return this.parseTicker(data[0], market);
  }

  override parseTicker(t: Dict, market: Market = undefined): Ticker {
    const marketId = this.safeString(t, 'symbol');
    market = this.safeMarket(marketId, market);
    const ts = this.safeInteger(t, 'ts');
    return this.safeTicker(
      {
        symbol: market.symbol,
        timestamp: ts,
        datetime: this.iso8601(ts),
        high: this.safeString(t, 'high24h'),
        low: this.safeString(t, 'low24h'),
        bid: this.safeString(t, 'bestBid'),
        bidVolume: undefined,
        ask: this.safeString(t, 'bestAsk'),
        askVolume: undefined,
        vwap: undefined,
        open: this.safeString(t, 'open24h'),
        close: this.safeString(t, 'lastPrice'),
        last: this.safeString(t, 'lastPrice'),
        previousClose: undefined,
        change: undefined,
        percentage: undefined,
        average: undefined,
        baseVolume: this.safeString(t, 'volume24h'),
        quoteVolume: this.safeString(t, 'turnover24h'),
        markPrice: this.safeString(t, 'markPrice'),
        indexPrice: this.safeString(t, 'indexPrice'),
        info: t,
      },
      market,
    );
  }

  override async fetchOrderBook(symbol: string, limit: Int = undefined, params: Dict = {}): Promise<OrderBook> {
    await this.loadMarkets();
    const market = this.market(symbol);
    const request: Dict = { symbol: market.id };
    if (limit !== undefined) request['limit'] = limit;
    const data = await this.call('GET', 'depth', this.extend(request, params));
    const ts = this.safeInteger(data, 'ts');
    const book = this.parseOrderBook(data, market.symbol, ts);
    book.nonce = this.safeInteger(data, 'seq');
    return book;
  }

  override async fetchOHLCV(symbol: string, timeframe = '1m', since: Int = undefined, limit: Int = undefined, params: Dict = {}): Promise<OHLCV[]> {
    await this.loadMarkets();
    const market = this.market(symbol);
    const interval = this.safeString(this.timeframes, timeframe);
    if (interval === undefined) throw new BadRequest(`${this.id} fetchOHLCV() does not support the timeframe ${timeframe}`);
    const request: Dict = { symbol: market.id, interval };
    if (since !== undefined) request['startTime'] = since;
    if (limit !== undefined) request['limit'] = Math.min(limit, 1000);
    const until = this.safeInteger(params, 'until');
    if (until !== undefined) request['endTime'] = until;
    const data = await this.call('GET', 'klines', this.extend(request, this.omit(params, 'until')));
    return this.parseOHLCVs(data, market, timeframe, since, limit);
  }

  override parseOHLCV(k: any, market: Market = undefined): OHLCV {
    return [
      this.safeInteger(k, 'openTime') as number,
      this.safeNumber(k, 'open') as number,
      this.safeNumber(k, 'high') as number,
      this.safeNumber(k, 'low') as number,
      this.safeNumber(k, 'close') as number,
      this.safeNumber(k, 'volume') as number,
    ];
  }

  override async fetchTrades(symbol: string, since: Int = undefined, limit: Int = undefined, params: Dict = {}): Promise<Trade[]> {
    await this.loadMarkets();
    const market = this.market(symbol);
    const data = await this.call('GET', 'market-trades', this.pageParams({ symbol: market.id }, since, limit, params));
    return this.parseTrades(this.safeList(data, 'rows', []) as Json[], market, since, limit);
  }

  override parseTrade(t: Dict, market: Market = undefined): Trade {
    const marketId = this.safeString(t, 'symbol');
    market = this.safeMarket(marketId, market);
    const ts = this.safeInteger(t, 'ts');
    const feeCost = this.safeString(t, 'fee');
    const role = this.safeStringLower(t, 'role');
    return this.safeTrade(
      {
        id: this.safeString2(t, 'tradeId', 'id'),
        order: this.safeString(t, 'orderId'),
        timestamp: ts,
        datetime: this.iso8601(ts),
        symbol: market.symbol,
        type: undefined,
        // market-trades: the taker's side; trades: the account's own side.
        side: this.safeStringLower(t, 'side'),
        takerOrMaker: role,
        price: this.safeString(t, 'price'),
        amount: this.safeString(t, 'size'),
        cost: this.safeString(t, 'notional'),
        fee: feeCost === undefined ? undefined : { cost: feeCost, currency: this.collateralCode() },
        info: t,
      },
      market,
    );
  }

  override async fetchFundingRates(symbols: Strings = undefined, params: Dict = {}): Promise<FundingRates> {
    await this.loadMarkets();
    const data = await this.call('GET', 'tickers', params);
    const rates = (data as Json[]).map((t) => this.parseFundingRate(t));
    return this.filterByArray(rates, 'symbol', symbols) as FundingRates;
  }

  override async fetchFundingRate(symbol: string, params: Dict = {}): Promise<FundingRate> {
    await this.loadMarkets();
    const market = this.market(symbol);
    const data = await this.call('GET', 'tickers', this.extend({ symbol: market.id }, params));
    return this.parseFundingRate(data[0], market);
  }

  override parseFundingRate(t: any, market: Market = undefined): FundingRate {
    const marketId = this.safeString(t, 'symbol');
    market = this.safeMarket(marketId, market);
    const ts = this.safeInteger(t, 'ts');
    const next = this.safeInteger(t, 'nextFundingTime');
    const intervalMs = this.safeInteger(market.info, 'fundingInterval');
    return {
      info: t,
      symbol: market.symbol,
      markPrice: this.safeNumber(t, 'markPrice'),
      indexPrice: this.safeNumber(t, 'indexPrice'),
      interestRate: undefined,
      estimatedSettlePrice: undefined,
      timestamp: ts,
      datetime: this.iso8601(ts),
      // The last rate applied, per funding interval.
      fundingRate: this.safeNumber(t, 'fundingRate'),
      fundingTimestamp: next,
      fundingDatetime: this.iso8601(next),
      nextFundingRate: undefined,
      nextFundingTimestamp: undefined,
      nextFundingDatetime: undefined,
      previousFundingRate: undefined,
      previousFundingTimestamp: undefined,
      previousFundingDatetime: undefined,
      interval: intervalMs === undefined ? undefined : intervalLabel(intervalMs),
    } as FundingRate;
  }

  override async fetchFundingRateHistory(symbol: Str = undefined, since: Int = undefined, limit: Int = undefined, params: Dict = {}): Promise<FundingRateHistory[]> {
    if (symbol === undefined) throw new ArgumentsRequired(`${this.id} fetchFundingRateHistory() requires a symbol argument`);
    await this.loadMarkets();
    const market = this.market(symbol);
    const request: Dict = { symbol: market.id };
    if (since !== undefined) request['startTime'] = since;
    if (limit !== undefined) request['limit'] = limit;
    const until = this.safeInteger(params, 'until');
    if (until !== undefined) request['endTime'] = until;
    const data = (await this.call('GET', 'funding-rates', this.extend(request, this.omit(params, 'until')))) as Json[];
    const rows = data.map((r) => {
      const ts = this.safeInteger(r, 'fundingTime');
      return { info: r, symbol: market.symbol, fundingRate: this.safeNumber(r, 'fundingRate'), timestamp: ts, datetime: this.iso8601(ts) };
    });
    const sorted = this.sortBy(rows, 'timestamp');
    return this.filterBySymbolSinceLimit(sorted, market.symbol, since, limit) as FundingRateHistory[];
  }
}

function intervalLabel(ms: number): string {
  if (ms % 86_400_000 === 0) return `${ms / 86_400_000}d`;
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  return `${ms}ms`;
}
