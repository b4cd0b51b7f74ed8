/**
 * Cash and stock operations as the API shows them, for the REST routes and the `operations` stream
 * alike (one rendering, so a streamed operation is the row `GET cash/deposits/{id}` answers); their
 * shapes are the contract's StockCashOperation and StockTransferOperation.
 */
import type { StockCashOperation, StockTransferOperation } from '@tokex/contract';
import { formatDecimal } from '../lib/decimal.ts';
import type { StockListing } from './stock-deps.ts';
import { MUSD_DECIMALS } from './stock-units.ts';
import type { CashOperationRecord, StockOperationRecord } from './store/stock-operation-store.ts';

export function cashOperationView(r: CashOperationRecord, token: { decimals: number; symbol: string } | undefined): StockCashOperation {
  return {
    operationId: r.operationId,
    operationStatus: r.status,
    kind: r.kind,
    txHash: r.txHash,
    userAddress: r.userAddress,
    tokenAddress: r.tokenAddress,
    tokenSymbol: token?.symbol ?? null,
    // An unknown token (delisted since) is shown in its raw units rather than guessed.
    tokenAmount: formatDecimal(BigInt(r.tokenAmount), token?.decimals ?? 0),
    mUsdAmount: formatDecimal(BigInt(r.musdAmount), MUSD_DECIMALS),
    instant: r.instant,
    queueId: r.queueId,
    settleTxHash: r.settleTxHash,
    steps: r.steps,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    completedAt: r.completedAt,
  };
}

export function stockOperationView(r: StockOperationRecord, stock: StockListing | undefined): StockTransferOperation {
  return {
    operationId: r.operationId,
    operationStatus: r.status,
    kind: r.kind,
    txHash: r.txHash,
    userAddress: r.userAddress,
    tokenAddress: r.stockAddress,
    symbol: stock?.symbol ?? null,
    tokenAmount: formatDecimal(BigInt(r.amount), stock?.decimals ?? 18),
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}
