/**
 * Portfolio (seed §4A, 3 endpoints): user info, balances and positions, read from chain state.
 * Every shape is the contract's (packages/contract); this module only routes.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  StockBalanceQuerySchema,
  StockBalanceSchema,
  StockPositionSchema,
  stockResponses,
  StockUserInfoSchema,
  StockUserParams,
  Type,
  type StockPosition,
} from '@tokex/contract';
import type { Address } from 'viem';
import { formatDecimal, mulDiv, parseDecimal } from '../../lib/decimal.ts';
import type { StockApiDeps } from '../stock-deps.ts';
import { balanceView } from '../balance-view.ts';
import { oneClickStatusView } from '../one-click/one-click-view.ts';
import { quoteStale, STALE_QUOTE_MS } from '../quote-view.ts';
import { okExactReply, okReply } from './stock-reply.ts';
import { MUSD_DECIMALS } from '../stock-units.ts';
import { venueNow } from '../../lib/venue-clock.ts';

const STOCK_DECIMALS = 18;

export const portfolioRoutes: FastifyPluginAsyncTypebox<{ deps: StockApiDeps }> = async (app, { deps }) => {
  app.get(
    '/users/:userId',
    { schema: { tags: ['portfolio'], summary: 'User info', params: StockUserParams, response: stockResponses(StockUserInfoSchema) } },
    async (req) => {
      const user = req.params.userId.toLowerCase() as Address;
      const oneClick = await deps.chain.oneClick(user);
      return okReply(req.id, {
        userId: user,
        userAddress: user,
        address: user,
        oneClick: oneClickStatusView(oneClick),
        boundToKey: req.apiKey?.userAddress === user,
        timestamp: (deps.now ?? venueNow)(),
      });
    },
  );

  app.get(
    '/users/:userId/balance',
    {
      schema: {
        tags: ['portfolio'],
        summary: 'Cash (mUSD) and stock balances; spenderAddress adds walletAllowance',
        params: StockUserParams,
        querystring: StockBalanceQuerySchema,
        response: stockResponses(StockBalanceSchema),
      },
    },
    async (req, reply) => {
      const user = req.params.userId.toLowerCase() as Address;
      const spender = req.query.spenderAddress?.toLowerCase() as Address | undefined;
      const [account, cfg] = await Promise.all([deps.chain.account(user, spender), deps.chain.marketConfig()]);
      const venue = { chainId: deps.chainId, product: deps.product };
      return okExactReply(reply, req.id, balanceView(user, account, cfg, deps.stocks, venue, { spender, quotes: deps.quotes }));
    },
  );

  app.get(
    '/users/:userId/positions',
    {
      schema: {
        tags: ['portfolio'],
        summary: 'Stock positions from Stock contract state, valued at the last price',
        params: StockUserParams,
        response: stockResponses(Type.Array(StockPositionSchema)),
      },
    },
    async (req) => {
      const user = req.params.userId.toLowerCase() as Address;
      const account = await deps.chain.account(user);
      const rows: StockPosition[] = [];
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
          lastPriceStale: quote === undefined || quoteStale(quote, (deps.now ?? venueNow)(), deps.quoteMaxAgeMs ?? STALE_QUOTE_MS),
        });
      }
      return okReply(req.id, rows);
    },
  );
};
