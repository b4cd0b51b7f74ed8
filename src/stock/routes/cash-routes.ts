/** Cash (seed §4A, calldata/tx/list/detail of deposits and withdrawals of the cash token into mUSD). */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { STOCK_OPERATION_KINDS, StockCashOperationSchema } from '@tokex/contract';
import { ValidationError } from '../../errors/app-error.ts';
import { formatDecimal, parseDecimal, rescale } from '../../lib/decimal.ts';
import {
  getCashOperation,
  listCashOperationsByTx,
  listCashOperationsForApiKey,
  type CashOperationRecord,
} from '../store/stock-operation-store.ts';
import { lowerAddress, parseStockAmount } from '../order-request.ts';
import { MUSD_DECIMALS } from '../stock-units.ts';
import { cashOperationView } from '../operation-views.ts';
import { cashCalldata } from '../router-calldata.ts';
import type { CashTokenConfigView, StockApiDeps } from '../stock-deps.ts';
import { registerOperationRoutes, userFor, type MoveBody } from './operation-routes.ts';
import type { OneClickService } from '../one-click/one-click-service.ts';

export const cashRoutes: FastifyPluginAsyncTypebox<{ deps: StockApiDeps; oneClick: OneClickService }> = async (app, { deps, oneClick }) => {
  async function tokenOf(tokenAddress: string): Promise<CashTokenConfigView> {
    const cfg = await deps.chain.marketConfig();
    const token = cfg.cashierTokenConfig.find((t) => t.tokenAddress.toLowerCase() === tokenAddress.toLowerCase());
    if (!token || !token.enabled) throw new ValidationError('tokenAddress', 'not a supported cash token');
    return token;
  }

  async function amountOf(body: MoveBody): Promise<{ token: CashTokenConfigView; amount: bigint }> {
    const token = await tokenOf(body.tokenAddress);
    const amount = parseStockAmount(body.tokenAmount, 'tokenAmount', token.decimals);
    const min = parseDecimal(token.minAmount, { field: 'minAmount', decimals: token.decimals, positive: false });
    if (amount < min) throw new ValidationError('tokenAmount', `below the minimum of ${token.minAmount} ${token.symbol}`);
    return { token, amount };
  }

  // Views need each token's decimals and symbol; they come from the cached chain config, read
  // before every handler of this module (a memory lookup while the cache is warm).
  const tokens = new Map<string, { decimals: number; symbol: string }>();
  app.addHook('preHandler', async () => {
    const cfg = await deps.chain.marketConfig().catch(() => undefined);
    for (const t of cfg?.cashierTokenConfig ?? []) tokens.set(t.tokenAddress.toLowerCase(), { decimals: t.decimals, symbol: t.symbol });
  });

  // The record's kind is the route's (each route lists only its own kind).
  const view = (_kind: 'deposit' | 'withdrawal') => (r: CashOperationRecord) => cashOperationView(r, tokens.get(r.tokenAddress.toLowerCase()));

  for (const kind of STOCK_OPERATION_KINDS) {
    registerOperationRoutes(app, deps, oneClick, {
      group: 'cash',
      kind,
      txKind: kind === 'deposit' ? 'cash-deposit' : 'cash-withdrawal',
      tag: 'cash',
      calldataSummary:
        kind === 'deposit'
          ? 'Deposit calldata (StockRouter.deposit): credited instantly while the cashier buffer allows, queued otherwise'
          : 'Withdrawal calldata (StockRouter.withdraw); refused beyond the available mUsdBalance',
      async buildCalldata(body, key) {
        const { token, amount } = await amountOf(body);
        if (kind === 'withdrawal') {
          const user = userFor(body, key);
          const account = await deps.chain.account(user);
          const musd = rescale(amount, token.decimals, MUSD_DECIMALS);
          if (musd > account.mUsd.available) {
            throw new ValidationError('tokenAmount', `exceeds the available mUsdBalance ${formatDecimal(account.mUsd.available, MUSD_DECIMALS)}`);
          }
        }
        return cashCalldata(kind, lowerAddress(token.tokenAddress), amount);
      },
      checkSend:
        kind === 'deposit'
          ? async (body, user) => {
              const { token, amount } = await amountOf(body);
              const account = await deps.chain.account(user, deps.contracts.stockRouter);
              const wallet = account.cashTokens.find((t) => t.address.toLowerCase() === token.tokenAddress.toLowerCase());
              if ((wallet?.walletAllowance ?? 0n) < amount) {
                throw new ValidationError('tokenAmount', `exceeds the bound wallet's ${token.symbol} allowance to the spender ${deps.contracts.stockRouter}: approve it first`);
              }
              if ((wallet?.walletBalance ?? 0n) < amount) {
                throw new ValidationError('tokenAmount', `exceeds the bound wallet's ${token.symbol} balance ${formatDecimal(wallet?.walletBalance ?? 0n, token.decimals)}`);
              }
            }
          : undefined,
      get: async (id) => {
        const op = await getCashOperation(deps.db, id);
        return op && op.kind === kind ? op : undefined;
      },
      listByTx: async (txHash) => (await listCashOperationsByTx(deps.db, txHash)).filter((o) => o.kind === kind),
      list: (apiKey, q) => listCashOperationsForApiKey(deps.db, { apiKey, kind, ...q }),
      view: view(kind),
      viewSchema: StockCashOperationSchema,
    });
  }
};
