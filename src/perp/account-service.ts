/**
 * What an account holds and did (docs/perp-api.md "Account" and "History"): balances, margin and
 * positions from the engine's live state; open orders from the engine's books; order history,
 * fills and money movements from the projected history; deposits and withdrawals from the perp
 * indexer's rows of the MarginVault's logs. Every list answers `{total, rows}` newest first.
 */
import type { AccountAsset, AccountDeposit, AccountSummary, Page, Position } from '@tokex/contract';
import { NotFoundError, notListed } from '../errors/app-error.ts';
import type { AuthKey } from '../auth/api-key-service.ts';
import type { Db } from '../storage/database.ts';
import type { InstrumentSpec } from './engine/instruments.ts';
import { walletOf } from './venue-calls.ts';
import type { PerpVenue } from './perp-venue.ts';
import { accountBody, fillBody, openOrderBody, orderBody, positionBody, transactionBody, usd } from './perp-views.ts';
import type { PerpEngine } from './engine/perp-engine.ts';
import type { AccountView } from './engine/engine-types.ts';
import { listCollateralEventsPage, type CollateralEventKind } from './store/collateral-event-store.ts';
import { getOrdersByIds, listOrders, listTrades, listTransactions, transactionBalancesAfter, type PerpOrderStatus, type PerpTransactionType } from './store/perp-history-store.ts';

export interface ListQuery {
  offset: number;
  limit: number;
  symbol?: string;
  startTime?: number;
  endTime?: number;
}

/** `GET account` of a wallet, as the engine holds it now (the stream's `account` too). */
export function accountOf(engine: PerpEngine, wallet: string): AccountSummary {
  const margin = engine.marginSummary(wallet);
  // Reserved for withdrawals not paid yet: already out of `balance` and `withdrawable`.
  return { ...accountBody(wallet, engine.getAccount(wallet), margin), pendingWithdrawals: usd(margin?.pendingWithdrawals ?? 0n) };
}

/** The wallet's open positions as `GET positions` lists them (the stream's `positions` too). */
export function positionsOf(engine: PerpEngine, wallet: string, account: AccountView | undefined = engine.getAccount(wallet)): Position[] {
  if (account === undefined) return [];
  return account.positions.filter((p) => p.sizeLots !== 0).map((p) => positionOf(engine, account, p.symbol)!);
}

/** One position of an account; size "0" when it is closed (the stream says so, the list leaves it out). */
export function positionOf(engine: PerpEngine, account: AccountView, symbol: string): Position | undefined {
  const spec = engine.instrument(symbol);
  if (spec === undefined) return undefined;
  const prices = engine.prices(symbol)!;
  const mark = prices.markPriceTicks || prices.lastTradePriceTicks;
  const p = account.positions.find((x) => x.symbol === symbol) ?? {
    symbol, sizeLots: 0, entryNotional: 0n, isolatedMargin: 0n, marginMode: 'cross' as const, leverage: 0, realisedPnl: 0n,
    funding: 0n, unrealisedPnl: 0n, initialMargin: 0n, maintenanceMargin: 0n,
  };
  return positionBody(spec, p, account, mark);
}

export function createAccountService(opts: { db: Db; /** The projection's history (storage-wiring.ts openHistoryDatabase); default `db`. */ history?: Db; venue: PerpVenue }) {
  const { db, venue } = opts;
  const historyDb = opts.history ?? db;

  const spec = (symbol: string): InstrumentSpec => {
    const s = venue.engine().instrument(symbol);
    if (s === undefined) throw new NotFoundError('symbol', { reason: notListed(String(symbol)) });
    return s;
  };
  const checkSymbol = (symbol?: string) => {
    if (symbol !== undefined) spec(symbol);
  };
  const page = <T>(all: T[], q: ListQuery): Page<T> => ({ total: all.length, rows: all.slice(q.offset, q.offset + q.limit) });

  return {
    account(caller: AuthKey): AccountSummary {
      return accountOf(venue.engine(), walletOf(caller));
    },

    assets(caller: AuthKey): AccountAsset[] {
      const a = this.account(caller);
      return [
        {
          asset: a.asset,
          balance: a.balance,
          equity: a.equity,
          available: a.freeCollateral,
          withdrawable: a.withdrawable,
          pendingWithdrawals: a.pendingWithdrawals,
          orderMargin: a.orderMargin,
          positionMargin: a.positionMargin,
        },
      ];
    },

    positions(caller: AuthKey, q: ListQuery) {
      const wallet = walletOf(caller);
      checkSymbol(q.symbol);
      const rows = positionsOf(venue.engine(), wallet).filter((p) => q.symbol === undefined || p.symbol === q.symbol);
      return page(rows, q);
    },

    async openOrders(caller: AuthKey, q: ListQuery) {
      const wallet = walletOf(caller);
      checkSymbol(q.symbol);
      const all = venue
        .engine()
        .openOrders(wallet, q.symbol)
        .filter((o) => (q.startTime === undefined || o.createdTs >= q.startTime) && (q.endTime === undefined || o.createdTs <= q.endTime))
        .reverse();
      const rows = all.slice(q.offset, q.offset + q.limit);
      const history = new Map((await getOrdersByIds(historyDb, rows.map((o) => o.orderId))).map((o) => [o.orderId, o]));
      return { total: all.length, rows: rows.map((o) => openOrderBody(spec(o.symbol), o, history.get(o.orderId))) };
    },

    async orderHistory(caller: AuthKey, q: ListQuery & { status?: PerpOrderStatus }) {
      const wallet = walletOf(caller);
      checkSymbol(q.symbol);
      await venue.historyCaughtUp?.();
      const r = await listOrders(historyDb, { ...q, account: wallet, statuses: q.status ? [q.status] : undefined });
      return { total: r.total, rows: r.rows.map((o) => orderBody(spec(o.symbol), o)) };
    },

    async trades(caller: AuthKey, q: ListQuery & { orderId?: number }) {
      const wallet = walletOf(caller);
      checkSymbol(q.symbol);
      await venue.historyCaughtUp?.();
      const r = await listTrades(historyDb, { ...q, account: wallet });
      return { total: r.total, rows: r.rows.map((t) => fillBody(spec(t.symbol), t)) };
    },

    async transactions(caller: AuthKey, q: ListQuery & { type?: PerpTransactionType }) {
      const wallet = walletOf(caller);
      checkSymbol(q.symbol);
      await venue.historyCaughtUp?.();
      const r = await listTransactions(historyDb, { ...q, account: wallet, types: q.type ? [q.type] : undefined });
      const after = await transactionBalancesAfter(historyDb, wallet, r.rows);
      return { total: r.total, rows: r.rows.map((t) => transactionBody(t, after.get(t.txId) ?? 0n)) };
    },

    async movements(caller: AuthKey, kind: CollateralEventKind, q: ListQuery): Promise<Page<AccountDeposit>> {
      const wallet = walletOf(caller);
      const r = await listCollateralEventsPage(db, { ...q, account: wallet, kind });
      return {
        total: r.total,
        rows: r.rows.map((e) => ({
          id: e.eventId,
          asset: 'USDC',
          amount: usd(BigInt(e.amount)),
          txHash: e.txHash,
          blockNumber: String(e.blockNumber),
          ...(kind === 'withdrawal' ? { withdrawalId: e.withdrawalId } : {}),
          // A deposit is CREDITED once the engine has taken it into the account (after
          // PERP_CONFIRMATIONS blocks), REFUSED (with the reason) when the engine will never take
          // it; a withdrawal's log says the vault PAID it.
          status: e.status === 'refused' ? 'REFUSED' : e.applied ? (kind === 'deposit' ? 'CREDITED' : 'PAID') : 'PENDING',
          ...(kind === 'deposit' ? { reason: e.refusal ?? null } : {}),
          ts: e.blockTimestamp,
        })),
      };
    },
  };
}

export type AccountService = ReturnType<typeof createAccountService>;
