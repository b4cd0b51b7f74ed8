/**
 * The venue's corporate actions as the API and the CLI see them: the configuration file's (read
 * once) and those stored in the database (added at run time, or the file's taken up by the
 * scheduler), each with its state, and for a dividend its totals and the asked holder's DIVIDEND
 * operations (docs/corporate-actions.md).
 */
import { splitEffectiveAt } from '../../marketdata/price-splits.ts';
import type { StockCorporateAction, StockDividendOperation, StockDividendTotals } from '@tokex/contract';
import type { Address, Hex } from 'viem';
import { formatDecimal } from '../../lib/decimal.ts';
import {
  mergeCorporateActions,
  newYorkDate,
  validateNewCorporateAction,
  type CorporateAction,
  type CorporateActionState,
} from '../../marketdata/corporate-actions.ts';
import type { DbExecutor } from '../../storage/database.ts';
import {
  insertCorporateAction,
  listCorporateActions,
  listPayoutsOfUser,
  listRunTimeActions,
  type CorporateActionRecord,
  type DividendPayoutRecord,
} from './corporate-action-store.ts';
import { venueNow } from '../../lib/venue-clock.ts';

export const STOCK_DECIMALS = 18;

export interface CorporateActionRegistryOptions {
  db: DbExecutor;
  /** The configuration file's actions. */
  fileActions: readonly CorporateAction[];
  /** Listed symbols (upper case). */
  symbols: readonly string[];
  /** Token address per symbol, when known (the deployment). */
  stocks?: Record<string, Address>;
  cashToken?: Address;
  /** Decimals of the cash token. Default 6. */
  cashDecimals?: number;
  /**
   * New York date of the venue's deployment: a file action before it predates the venue (shown
   * `applied` without a transaction). Default: the earliest date, so every file action counts.
   */
  venueStartDate?: string;
  now?: () => number;
  /**
   * On a chain after the first: the first chain's store, which holds the deployment's run-time
   * actions (docs/corporate-actions.md, "Several chains"). `add` stores there; `list` shows one this
   * chain's scheduler has not taken up yet as `scheduled` (when the chain lists its symbol).
   */
  runTimeSource?: DbExecutor;
}

export interface AddCorporateActionInput {
  symbol: string;
  type: 'SPLIT' | 'DIVIDEND';
  exDate: string;
  recordDate?: string;
  ratio?: string;
  amount?: string;
  currency?: string;
}

export interface CorporateActionRegistry {
  /** Newest ex-date first; with `userAddress`, each dividend carries that wallet's DIVIDEND operations. */
  list(symbol?: string, opts?: { userAddress?: string }): Promise<StockCorporateAction[]>;
  /** Schedules an action after {@link validateNewCorporateAction}'s checks. */
  add(input: AddCorporateActionInput): Promise<CorporateActionRecord>;
}

function stateOf(r: CorporateActionRecord): CorporateActionState {
  const base: CorporateActionState = { symbol: r.symbol, type: r.type, exDate: r.exDate, status: r.status, txHash: r.txHash };
  if (r.recordDate !== null) base.recordDate = r.recordDate;
  if (r.ratio !== null) base.ratio = r.ratio;
  if (r.amount !== null) base.amount = r.amount;
  if (r.currency !== null) base.currency = r.currency;
  return base;
}

export function dividendOperationView(p: DividendPayoutRecord, a: CorporateActionRecord, cashToken: string, cashDecimals: number): StockDividendOperation {
  return {
    operationId: p.operationId,
    operationType: 'DIVIDEND',
    operationStatus: p.status === 'paid' ? 'completed' : 'processing',
    userAddress: p.userAddress as Address,
    symbol: a.symbol,
    stockAddress: p.stockAddress as Address,
    shares: formatDecimal(BigInt(p.shares), STOCK_DECIMALS),
    amount: formatDecimal(BigInt(p.amount), cashDecimals),
    tokenAddress: cashToken.toLowerCase() as Address,
    txHash: p.txHash,
    distributor: (a.distributor ?? '') as Address,
    distributionId: a.distributionId,
    proof: p.proof as Hex[],
    createdAt: p.createdAt,
    updatedAt: p.updatedAt,
    paidAt: p.paidAt,
  };
}

function totalsOf(r: CorporateActionRecord, cashToken: string, cashDecimals: number): StockDividendTotals | null {
  if (r.netAmount === null || r.recordBlock === null) return null;
  return {
    recordBlock: r.recordBlock,
    withholdingBps: r.withholdingBps ?? 0,
    sharesOfRecord: formatDecimal(BigInt(r.sharesOfRecord ?? '0'), STOCK_DECIMALS),
    grossAmount: formatDecimal(BigInt(r.grossAmount ?? '0'), cashDecimals),
    withholdingAmount: formatDecimal(BigInt(r.withholdingAmount ?? '0'), cashDecimals),
    netAmount: formatDecimal(BigInt(r.netAmount), cashDecimals),
    holders: r.holders ?? 0,
    cashToken: cashToken.toLowerCase() as Address,
    distributor: (r.distributor ?? '') as Address,
    distributionId: r.distributionId,
    merkleRoot: r.merkleRoot ?? '',
  };
}

export function createCorporateActionRegistry(opts: CorporateActionRegistryOptions): CorporateActionRegistry {
  const { db } = opts;
  const now = opts.now ?? venueNow;
  const cashDecimals = opts.cashDecimals ?? 6;
  const cashToken = opts.cashToken ?? '0x0000000000000000000000000000000000000000';
  const listed = new Set(opts.symbols.map((s) => s.toUpperCase()));
  const venueStartDate = opts.venueStartDate ?? '0000-01-01';

  return {
    async list(symbol, o = {}) {
      const wanted = symbol?.toUpperCase();
      const stored = await listCorporateActions(db, wanted);
      if (opts.runTimeSource !== undefined) {
        // Added on the first chain, not taken up here yet: scheduled on this chain too.
        const here = new Set(stored.map((r) => r.actionId));
        for (const r of await listRunTimeActions(opts.runTimeSource)) {
          if (here.has(r.actionId) || (wanted !== undefined && r.symbol !== wanted)) continue;
          if (opts.stocks !== undefined && opts.stocks[r.symbol] === undefined) continue;
          if (r.exDate < venueStartDate) continue;
          stored.push(pendingCopyOf(r));
        }
      }
      const file = wanted === undefined ? opts.fileActions : opts.fileActions.filter((a) => a.symbol === wanted);
      const merged = mergeCorporateActions(file, stored.map(stateOf), venueStartDate);
      const byKey = new Map(stored.map((r) => [`${r.symbol} ${r.exDate}`, r]));
      const user = o.userAddress?.toLowerCase();
      const payouts = user === undefined ? [] : await listPayoutsOfUser(db, user, stored.filter((r) => r.type === 'DIVIDEND').map((r) => r.actionId));
      return merged.map((m): StockCorporateAction => {
        const r = byKey.get(`${m.symbol} ${m.exDate}`);
        const { status, txHash, ...action } = m;
        const row: StockCorporateAction = { ...action, status, txHash };
        if (r) {
          row.reason = r.reason;
          if (r.type === 'SPLIT') row.effectiveAt = splitEffectiveAt(r.exDate, r.createdAt);
          if (r.type === 'DIVIDEND') row.dividend = totalsOf(r, cashToken, cashDecimals);
        }
        if (user !== undefined && m.type === 'DIVIDEND') {
          row.operations = r ? payouts.filter((p) => p.actionId === r.actionId).map((p) => dividendOperationView(p, r, cashToken, cashDecimals)) : [];
        }
        return row;
      });
    },

    async add(input) {
      const raw: Record<string, unknown> = { ...input };
      for (const k of Object.keys(raw)) if (raw[k] === undefined) delete raw[k];
      const store = opts.runTimeSource ?? db;
      const existing = [...opts.fileActions, ...(await listCorporateActions(store, typeof input.symbol === 'string' ? input.symbol : undefined))];
      const action = validateNewCorporateAction(raw, { isListed: (s) => listed.has(s), now: now(), existing });
      return insertCorporateAction(
        store,
        { ...action, source: 'cli', stockAddress: opts.stocks?.[action.symbol] },
        now(),
      );
    },
  };
}

/** A run-time action of the first chain as another chain shows it before its scheduler stored it. */
function pendingCopyOf(r: CorporateActionRecord): CorporateActionRecord {
  return {
    ...r,
    status: 'scheduled',
    reason: null,
    stockAddress: null,
    recordBlock: null,
    withholdingBps: null,
    sharesOfRecord: null,
    grossAmount: null,
    withholdingAmount: null,
    netAmount: null,
    remainderUnits: null,
    holders: null,
    merkleRoot: null,
    distributor: null,
    distributionId: null,
    txHash: null,
    appliedAt: null,
  };
}

/** The New York date of the venue's deployment (`deployedAt`, ms). */
export function venueStartDateOf(deployedAt: number): string {
  return newYorkDate(deployedAt);
}
