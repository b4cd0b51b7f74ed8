/** Stock (seed §4A): moving stock tokens between the wallet and the exchange balance. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { STOCK_OPERATION_KINDS, StockTransferOperationSchema } from '@tokex/contract';
import { ValidationError } from '../../errors/app-error.ts';
import { formatDecimal } from '../../lib/decimal.ts';
import {
  getStockOperation,
  listStockOperationsByTx,
  listStockOperationsForApiKey,
  type StockOperationRecord,
} from '../store/stock-operation-store.ts';
import { stockMoveCalldata } from '../router-calldata.ts';
import { parseStockAmount } from '../order-request.ts';
import type { StockApiDeps } from '../stock-deps.ts';
import { registerOperationRoutes, userFor } from './operation-routes.ts';
import { stockOperationView } from '../operation-views.ts';
import type { OneClickService } from '../one-click/one-click-service.ts';

export const stockTransferRoutes: FastifyPluginAsyncTypebox<{ deps: StockApiDeps; oneClick: OneClickService }> = async (app, { deps, oneClick }) => {
  for (const kind of STOCK_OPERATION_KINDS) {
    registerOperationRoutes(app, deps, oneClick, {
      group: 'stock',
      kind,
      txKind: kind === 'deposit' ? 'stock-deposit' : 'stock-withdrawal',
      tag: 'stock',
      calldataSummary:
        kind === 'deposit'
          ? 'Stock deposit calldata (StockRouter.depositStock): wallet stock into the exchange balance'
          : 'Stock withdrawal calldata (StockRouter.withdrawStock); refused beyond the available exchangeBalance',
      async buildCalldata(body, key) {
        const stock = deps.stocks.byAddress(body.tokenAddress);
        if (!stock) throw new ValidationError('tokenAddress', 'not a listed stock token');
        const amount = parseStockAmount(body.tokenAmount, 'tokenAmount', stock.decimals);
        if (kind === 'withdrawal') {
          const account = await deps.chain.account(userFor(body, key));
          const available = account.stocks.find((s) => s.address.toLowerCase() === stock.address.toLowerCase())?.exchangeBalance ?? 0n;
          if (amount > available) {
            throw new ValidationError('tokenAmount', `exceeds the available exchangeBalance ${formatDecimal(available, stock.decimals)}`);
          }
        }
        return stockMoveCalldata(kind, stock.address, amount);
      },
      checkSend:
        kind === 'deposit'
          ? async (body, user) => {
              const stock = deps.stocks.byAddress(body.tokenAddress)!;
              const amount = parseStockAmount(body.tokenAmount, 'tokenAmount', stock.decimals);
              const account = await deps.chain.account(user, deps.contracts.stockRouter);
              const b = account.stocks.find((s) => s.address.toLowerCase() === stock.address.toLowerCase());
              if ((b?.walletAllowance ?? 0n) < amount) {
                throw new ValidationError('tokenAmount', `exceeds the bound wallet's ${stock.symbol} allowance to the spender ${deps.contracts.stockRouter}: approve it first`);
              }
              if ((b?.walletBalance ?? 0n) < amount) {
                throw new ValidationError('tokenAmount', `exceeds the bound wallet's ${stock.symbol} wallet balance ${formatDecimal(b?.walletBalance ?? 0n, stock.decimals)}`);
              }
            }
          : undefined,
      get: async (id) => {
        const op = await getStockOperation(deps.db, id);
        return op && op.kind === kind ? op : undefined;
      },
      listByTx: async (txHash) => (await listStockOperationsByTx(deps.db, txHash)).filter((o) => o.kind === kind),
      list: (apiKey, q) => listStockOperationsForApiKey(deps.db, { apiKey, kind, ...q }),
      view: (r: StockOperationRecord) => stockOperationView(r, deps.stocks.byAddress(r.stockAddress)),
      viewSchema: StockTransferOperationSchema,
    });
  }
};
