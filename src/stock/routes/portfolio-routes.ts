/** Portfolio (seed §4A, 3 endpoints): user info, balances and positions, read from chain state. */
import type { FastifyPluginAsync } from 'fastify';
import type { Address } from 'viem';
import { formatDecimal, mulDiv, parseDecimal } from '../../lib/decimal.ts';
import type { AccountView, StockApiDeps } from '../stock-deps.ts';
import { quoteStale, STALE_QUOTE_MS } from '../quote-view.ts';
import { stockOk } from '../stock-envelope.ts';
import { address, decimalOut, millis, responses, userParam } from '../stock-schemas.ts';
import { MUSD_DECIMALS } from '../stock-units.ts';

const STOCK_DECIMALS = 18;

const tokenBalanceRow = {
  type: 'object',
  required: ['symbol', 'tokenAddress', 'decimals', 'walletBalance', 'exchangeBalance', 'lockedExchangeBalance'],
  properties: {
    symbol: { type: 'string' },
    tokenAddress: address,
    decimals: { type: 'integer' },
    walletBalance: decimalOut,
    exchangeBalance: { ...decimalOut, description: 'free stock held at the exchange (Stock.stockBalance)' },
    lockedExchangeBalance: { ...decimalOut, description: 'stock locked by open sell orders' },
    walletAllowance: { ...decimalOut, description: 'allowance to spenderAddress; present only when it was given' },
  },
} as const;

const cashRow = {
  type: 'object',
  required: ['symbol', 'tokenAddress', 'decimals', 'walletBalance'],
  properties: { symbol: { type: 'string' }, tokenAddress: address, decimals: { type: 'integer' }, walletBalance: decimalOut, walletAllowance: decimalOut },
} as const;

const positionRow = {
  type: 'object',
  required: ['symbol', 'tokenAddress', 'quantity', 'exchangeQuantity', 'lockedQuantity', 'walletQuantity', 'lastPrice', 'marketValue'],
  properties: {
    symbol: { type: 'string' },
    tokenAddress: address,
    quantity: { ...decimalOut, description: 'exchange (free + locked) plus wallet' },
    exchangeQuantity: decimalOut,
    lockedQuantity: decimalOut,
    walletQuantity: decimalOut,
    lastPrice: decimalOut,
    marketValue: { ...decimalOut, description: 'quantity × lastPrice, USD' },
    lastPriceTime: { type: ['integer', 'null'], description: 'the time of the quote lastPrice comes from (ms); null without a quote' },
    lastPriceStale: { type: 'boolean', description: 'true when there is no quote or it is stale (as `GET prices/{symbol}` says)' },
  },
} as const;

/** A balance the chain did not report (a token the lens was not asked about) is zero. */
function amountOr0(v: bigint | undefined, decimals: number): string {
  return formatDecimal(v ?? 0n, decimals);
}

import { balanceView } from '../balance-view.ts';

export const portfolioRoutes: FastifyPluginAsync<{ deps: StockApiDeps }> = async (app, { deps }) => {
  app.get<{ Params: { userId: string } }>(
    '/users/:userId',
    {
      schema: {
        tags: ['portfolio'],
        summary: 'User info',
        params: userParam,
        response: responses({
          type: 'object',
          required: ['userId', 'address', 'oneClick', 'boundToKey', 'timestamp'],
          properties: {
            userId: address,
            address,
            oneClick: {
              type: 'object',
              required: ['status', 'delegatee'],
              properties: { status: { type: 'string', enum: ['enabled', 'disabled'] }, delegatee: address },
            },
            boundToKey: { type: 'boolean', description: 'whether this wallet is the calling key\'s bound userAddress' },
            timestamp: millis,
          },
        }),
      },
    },
    async (req) => {
      const user = req.params.userId.toLowerCase() as Address;
      const oneClick = await deps.chain.oneClick(user);
      return stockOk(req.id, {
        userId: user,
        address: user,
        oneClick,
        boundToKey: req.apiKey?.userAddress === user,
        timestamp: (deps.now ?? Date.now)(),
      });
    },
  );

  app.get<{ Params: { userId: string }; Querystring: { spenderAddress?: string } }>(
    '/users/:userId/balance',
    {
      schema: {
        tags: ['portfolio'],
        summary: 'Cash (mUSD) and stock balances; spenderAddress adds walletAllowance',
        params: userParam,
        querystring: { type: 'object', properties: { spenderAddress: address } },
        response: responses({
          type: 'object',
          required: ['userId', 'mUsdBalance', 'tokenBalances', 'cashTokenBalances'],
          properties: {
            userId: address,
            mUsdBalance: {
              type: 'object',
              required: ['available', 'locked', 'total'],
              properties: { available: decimalOut, locked: decimalOut, total: decimalOut },
            },
            tokenBalances: { type: 'array', items: tokenBalanceRow },
            cashTokenBalances: { type: 'array', items: cashRow },
            spenderAddress: address,
          },
        }),
      },
    },
    async (req) => {
      const user = req.params.userId.toLowerCase() as Address;
      const spender = req.query.spenderAddress?.toLowerCase() as Address | undefined;
      const [account, cfg] = await Promise.all([deps.chain.account(user, spender), deps.chain.marketConfig()]);
      return stockOk(req.id, balanceView(user, account, cfg, deps.stocks, spender));
    },
  );

  app.get<{ Params: { userId: string } }>(
    '/users/:userId/positions',
    {
      schema: {
        tags: ['portfolio'],
        summary: 'Stock positions from Stock contract state, valued at the last price',
        params: userParam,
        response: responses({ type: 'array', items: positionRow }),
      },
    },
    async (req) => {
      const user = req.params.userId.toLowerCase() as Address;
      const account = await deps.chain.account(user);
      const rows = [];
      for (const s of deps.stocks.list()) {
        const b = account.stocks.find((x) => x.address.toLowerCase() === s.address.toLowerCase());
        if (!b) continue;
        const wallet = b.walletBalance;
        const exchange = b.exchangeBalance;
        const locked = b.lockedExchangeBalance;
        const qty = wallet + exchange + locked;
        if (qty === 0n) continue;
        const quote = deps.quotes.getQuote(s.symbol);
        const last = quote?.last ?? '0';
        const lastScaled = parseDecimal(last, { field: 'last', decimals: MUSD_DECIMALS, positive: false });
        rows.push({
          symbol: s.symbol,
          tokenAddress: s.address,
          quantity: formatDecimal(qty, STOCK_DECIMALS),
          exchangeQuantity: formatDecimal(exchange + locked, STOCK_DECIMALS),
          lockedQuantity: formatDecimal(locked, STOCK_DECIMALS),
          walletQuantity: formatDecimal(wallet, STOCK_DECIMALS),
          lastPrice: last,
          marketValue: formatDecimal(mulDiv(qty, lastScaled, 10n ** BigInt(STOCK_DECIMALS)), MUSD_DECIMALS),
          lastPriceTime: quote?.timestamp ?? null,
          lastPriceStale: quote === undefined || quoteStale(quote, (deps.now ?? Date.now)(), deps.quoteMaxAgeMs ?? STALE_QUOTE_MS),
        });
      }
      return stockOk(req.id, rows);
    },
  );
};
