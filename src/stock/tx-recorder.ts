/**
 * Recording a self-submitted transaction to the calling API key (seed §5A Ownership: "tx recording
 * must be done by the same API key that sent the transaction"). A key "sent" a transaction when its
 * bound wallet is the transaction's sender, or, for a key without a bound wallet, when the key
 * itself built the transaction's calldata. Recording is idempotent per key and transaction.
 */
import { hash } from 'node:crypto';
import { getAbiItem, toEventSelector, type Abi, type Hex } from 'viem';
import { cashierAbi, stockAbi, stockRouterAbi } from '../chain/abi/generated/index.ts';
import { ValidationError } from '../errors/app-error.ts';
import { sleep } from '../lib/async.ts';
import type { AuthKey } from '../auth/api-key-service.ts';
import { getCalldataRecord, getTxRecord, recordTx, type TxKind } from './store/tx-record-store.ts';
import type { MinedTransaction, StockApiDeps } from './stock-deps.ts';

const selector = (abi: Abi, name: string) => toEventSelector(getAbiItem({ abi, name }) as never);

/** Event topics that make a transaction one of each kind. */
const KIND_TOPICS: Record<TxKind, Hex[]> = {
  order: [selector(stockRouterAbi as Abi, 'OrderPlaced')],
  'cash-deposit': [selector(cashierAbi as Abi, 'Deposited'), selector(cashierAbi as Abi, 'DepositQueued')],
  'cash-withdrawal': [selector(cashierAbi as Abi, 'Withdrawn'), selector(cashierAbi as Abi, 'WithdrawalQueued')],
  'stock-deposit': [selector(stockAbi as Abi, 'StockDeposited')],
  'stock-withdrawal': [selector(stockAbi as Abi, 'StockWithdrawn')],
};

const KIND_NOUN: Record<TxKind, string> = {
  order: 'order placement',
  'cash-deposit': 'cash deposit',
  'cash-withdrawal': 'cash withdrawal',
  'stock-deposit': 'stock deposit',
  'stock-withdrawal': 'stock withdrawal',
};

/**
 * The journal's key for a calldata. SHA-256 (native) rather than keccak (pure JS here): it is our own
 * identifier, never compared with anything on chain, and is computed on every calldata request.
 */
function calldataHash(callData: Hex): string {
  return '0x' + hash('sha256', Buffer.from(callData.slice(2), 'hex'), 'hex');
}

/** Remembers that this key built this calldata, so the key can later record the transaction. */
export function rememberCalldata(deps: StockApiDeps, key: AuthKey, callData: Hex, kind: TxKind): void {
  deps.calldataJournal.remember({ calldataHash: calldataHash(callData), apiKey: key.apiKey, kind, createdAt: (deps.now ?? Date.now)() });
}

export async function recordOwnedTransaction(
  deps: StockApiDeps,
  key: AuthKey,
  hash: Hex,
  kind: TxKind,
): Promise<{ tx: MinedTransaction; created: boolean }> {
  const tx = await deps.chain.transaction(hash);
  if (!tx) throw new ValidationError('txHash', 'transaction not found on this chain');
  if (tx.status !== 'success') throw new ValidationError('txHash', 'transaction failed (reverted)');
  const to = tx.to?.toLowerCase();
  if (to !== deps.contracts.stockRouter.toLowerCase() && to !== deps.contracts.oneClickRouter.toLowerCase()) {
    throw new ValidationError('txHash', 'not a StockRouter transaction');
  }
  const topics = KIND_TOPICS[kind];
  if (!tx.logs.some((l) => l.topics[0] !== undefined && topics.includes(l.topics[0]))) {
    throw new ValidationError('txHash', `contains no ${KIND_NOUN[kind]}`);
  }

  const existing = await getTxRecord(deps.db, hash);
  if (existing) {
    if (existing.apiKey !== key.apiKey) throw new ValidationError('txHash', 'not sent by this API key');
    return { tx, created: false };
  }
  const fromBoundWallet = key.userAddress !== null && tx.from.toLowerCase() === key.userAddress;
  if (!fromBoundWallet) await deps.calldataJournal.flush();
  const builtByKey = fromBoundWallet || (await getCalldataRecord(deps.db, calldataHash(tx.input)))?.apiKey === key.apiKey;
  if (!builtByKey) throw new ValidationError('txHash', 'not sent by this API key');
  const { created, record } = await recordTx(deps.db, { txHash: hash, apiKey: key.apiKey, kind, recordedAt: (deps.now ?? Date.now)() });
  // A concurrent recording by another key won the race.
  if (record.apiKey !== key.apiKey) throw new ValidationError('txHash', 'not sent by this API key');
  return { tx, created };
}

/**
 * Waits (bounded) until the indexer has projected the transaction, so the answer can carry the
 * orderId or operationId; returns what it found, possibly nothing when the indexer lags.
 */
export async function waitForProjection<T>(deps: StockApiDeps, read: () => Promise<T[]>): Promise<T[]> {
  const deadline = Date.now() + (deps.indexWaitMs ?? 10_000);
  for (;;) {
    const rows = await read();
    if (rows.length > 0 || Date.now() >= deadline) return rows;
    await sleep(100);
  }
}
