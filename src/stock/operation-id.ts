/**
 * Operation ids of cash and stock operations: `${txHash}-${ordinal}`, where `ordinal` is the
 * position of the operation's log among the transaction's logs emitted by the indexed contracts
 * (StockRouter, Cashier, Stocks, OneClickRouter), counted from 0 in log order. Logs of other
 * contracts in the same transaction (the cash token's Transfer, a smart wallet's own events) are
 * not counted, so the id depends only on what the transaction did to our contracts: it is the same
 * when the transaction is re-mined in another block after a reorg, and the API can compute it from
 * a receipt before the indexer has seen the block.
 */
import type { Address } from 'viem';
import type { Deployment } from '../chain/deploy-contracts.ts';

export function operationIdOf(txHash: string, ordinal: number): string {
  return `${txHash.toLowerCase()}-${ordinal}`;
}

/** The addresses whose logs the indexer reads (and whose logs count for ordinals), lower case. */
export function indexedAddresses(deployment: Deployment): Address[] {
  const c = deployment.contracts;
  const all = [c.stockRouter, c.cashier, c.oneClickRouter, ...Object.values(c.stocks)];
  return [...new Set(all.map((a) => a.toLowerCase() as Address))];
}

export interface ReceiptLogLike {
  address: string;
  logIndex: number | bigint | string | null;
}

/**
 * The ordinal of every log of a receipt that comes from an indexed contract, by log index — what
 * the indexer assigns. `logs` are the receipt's logs (any order; viem's numbers or raw hex).
 */
export function ordinalsFromReceipt(logs: readonly ReceiptLogLike[], deployment: Deployment): Map<number, number> {
  const indexed = new Set<string>(indexedAddresses(deployment));
  const ours = logs
    .filter((l) => l.logIndex !== null && indexed.has(l.address.toLowerCase()))
    .map((l) => Number(l.logIndex))
    .sort((a, b) => a - b);
  return new Map(ours.map((logIndex, ordinal) => [logIndex, ordinal]));
}

/** Operation id of the log at `logIndex` in a receipt, or undefined if it is not one of ours. */
export function operationIdFromReceipt(
  receipt: { transactionHash: string; logs: readonly ReceiptLogLike[] },
  logIndex: number,
  deployment: Deployment,
): string | undefined {
  const ordinal = ordinalsFromReceipt(receipt.logs, deployment).get(logIndex);
  return ordinal === undefined ? undefined : operationIdOf(receipt.transactionHash, ordinal);
}
