/**
 * Cash and stock operations as the API shows them, for the REST routes and the `operations` stream
 * alike (one rendering, so a streamed operation is the row `GET cash/deposits/{id}` answers); their
 * shapes are the contract's StockCashOperation and StockTransferOperation.
 */
import type { StockCashOperation, StockTransferOperation } from '@tokex/contract';
import type { Address } from 'viem';
import { formatDecimal } from '../lib/decimal.ts';
import { exactNumber } from './exact-number.ts';
import type { StockListing } from './stock-deps.ts';
import { MUSD_DECIMALS } from './stock-units.ts';
import type { CashOperationRecord, StockOperationRecord } from './store/stock-operation-store.ts';

/**
 * Besides tokex's flat fields, Anchored's detail shape (anchored-reference.md §4.4): `mapping` (the
 * transaction linked to the operation, which the indexer did once the operation exists, so
 * `mappingStatus` is `Indexed`), and the operation nested as `depositOperation` or
 * `withdrawalOperation` (the other null), its amounts exact numbers. The Cashier charges no fee.
 */
export function cashOperationView(r: CashOperationRecord, token: { decimals: number; symbol: string } | undefined): StockCashOperation {
  // An unknown token (delisted since) is shown in its raw units rather than guessed.
  const tokenAmount = formatDecimal(BigInt(r.tokenAmount), token?.decimals ?? 0);
  const mUsdAmount = formatDecimal(BigInt(r.musdAmount), MUSD_DECIMALS);
  const move = {
    operationId: r.operationId,
    userAddress: r.userAddress as Address,
    tokenAddress: r.tokenAddress as Address,
    status: r.status,
    isInstant: r.instant,
    amount: exactNumber(tokenAmount),
    feeAmount: exactNumber('0'),
    createTxHash: r.txHash,
    settleTxHash: r.settleTxHash,
  };
  return {
    ...operationHead(r),
    tokenAddress: r.tokenAddress,
    tokenSymbol: token?.symbol ?? null,
    tokenAmount,
    mUsdAmount,
    instant: r.instant,
    queueId: r.queueId,
    settleTxHash: r.settleTxHash,
    steps: r.steps,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    completedAt: r.completedAt,
    ...indexedMapping(r),
    depositOperation: r.kind === 'deposit' ? { ...move, creditAmount: exactNumber(mUsdAmount) } : null,
    withdrawalOperation: r.kind === 'withdrawal' ? { ...move, debitAmount: exactNumber(mUsdAmount) } : null,
  };
}

/** A stock transfer: tokex's flat fields and, as for cash (above), Anchored's nested detail shape. */
export function stockOperationView(r: StockOperationRecord, stock: StockListing | undefined): StockTransferOperation {
  const tokenAmount = formatDecimal(BigInt(r.amount), stock?.decimals ?? 18);
  const move = {
    operationId: r.operationId,
    userAddress: r.userAddress as Address,
    tokenAddress: r.stockAddress as Address,
    status: r.status,
    isInstant: true,
    amount: exactNumber(tokenAmount),
    feeAmount: exactNumber('0'),
    createTxHash: r.txHash,
  };
  return {
    ...operationHead(r),
    tokenAddress: r.stockAddress,
    symbol: stock?.symbol ?? null,
    tokenAmount,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    ...indexedMapping(r),
    depositOperation: r.kind === 'deposit' ? move : null,
    withdrawalOperation: r.kind === 'withdrawal' ? move : null,
  };
}

/** The fields that name an operation of either kind, first in its answer. */
function operationHead<R extends CashOperationRecord | StockOperationRecord>(r: R) {
  return { operationId: r.operationId, operationStatus: r.status, kind: r.kind, txHash: r.txHash, userAddress: r.userAddress };
}

/** Anchored's link of an operation to its transaction, which the indexer made when it recorded the operation. */
function indexedMapping(r: CashOperationRecord | StockOperationRecord) {
  return {
    mappingStatus: 'Indexed' as const,
    mapping: { txHash: r.txHash, operationType: r.kind === 'deposit' ? ('deposit' as const) : ('withdraw' as const), operationId: r.operationId, status: 'Indexed' as const },
  };
}
