/**
 * Applies a scheduled split on chain (docs/corporate-actions.md, "Splits"): at the split's moment
 * (`splitEffectiveAt`: 00:00 New York on the ex-date, or shortly after it was added), the Stock
 * token's owner calls `Stock.split(numerator, denominator, ref)` once. Every balance, exchange
 * balance and open order of the stock is then in the new shares at once (the multiplier); the
 * stock indexer restates the stored orders and re-reads the holders from the `MultiplierChanged`
 * event. `ref` is the action's: a retried step finds the split applied and records its transaction
 * instead of splitting twice.
 */
import { encodeFunctionData, keccak256, parseEventLogs, stringToHex, type Address, type Hex } from 'viem';
import { stockAbi } from '../../chain/abi/generated/index.ts';
import { toChainError, type ChainPublicClient } from '../../chain/chain-client.ts';
import type { TxSender } from '../../chain/tx-sender.ts';
import { AppError, ChainRevertError, ValidationError } from '../../errors/app-error.ts';
import type { Logger } from '../../lib/logger.ts';
import { SPLIT_RATIO_RE } from '../../marketdata/corporate-actions.ts';
import { splitEffectiveAt } from '../../marketdata/price-splits.ts';
import type { DbExecutor } from '../../storage/database.ts';
import { markSplitApplied, type CorporateActionRecord } from './corporate-action-store.ts';

/** The Stock contract's key for an action's split: one split per action, whoever retries it. */
export function splitRefOf(actionId: string): Hex {
  return keccak256(stringToHex(`tokex:split:${actionId}`));
}

export interface SplitApplierOptions {
  db: DbExecutor;
  publicClient: ChainPublicClient;
  /** The sender of the Stock tokens' owner (the only account allowed to split). Undefined: splits fail naming it. */
  sender: TxSender | undefined;
  stocks: Readonly<Record<string, Address>>;
  /** First block to look for a split's event in (the deployment's). */
  fromBlock: bigint;
  /** The market calendar's clock (ms). */
  now: () => number;
  /** The market calendar's clock minus the wall clock the rows' `createdAt` is on. Default 0. */
  clockOffsetMs?: number;
  logger?: Pick<Logger, 'info' | 'warn' | 'error'>;
}

export interface SplitApplier {
  /**
   * `waiting` before the split's moment; `applied` once the chain has it (recorded with its
   * transaction). `signal` gives up a send waiting out a chain outage (the scheduler's stop).
   */
  apply(a: CorporateActionRecord, signal?: AbortSignal): Promise<'applied' | 'waiting'>;
}

export function createSplitApplier(opts: SplitApplierOptions): SplitApplier {
  const { db, publicClient } = opts;
  const offset = opts.clockOffsetMs ?? 0;

  const recordFound = async (a: CorporateActionRecord, stock: Address, ref: Hex): Promise<'applied'> => {
    const [ev] = await publicClient.getContractEvents({ address: stock, abi: stockAbi, eventName: 'MultiplierChanged', args: { ref }, fromBlock: opts.fromBlock });
    if (!ev) throw new AppError('INTERNAL', 'split: applied on chain but its MultiplierChanged event was not found yet', { retryable: true });
    await markSplitApplied(db, a.actionId, ev.transactionHash, opts.now());
    opts.logger?.info({ actionId: a.actionId, txHash: ev.transactionHash }, 'split: found applied on chain; recorded');
    return 'applied';
  };

  return {
    async apply(a, signal) {
      if (opts.now() < splitEffectiveAt(a.exDate, a.createdAt + offset)) return 'waiting';
      const stock = opts.stocks[a.symbol];
      if (!stock) throw new ValidationError('symbol', `${a.symbol} has no token on this chain`);
      const m = SPLIT_RATIO_RE.exec(a.ratio ?? '');
      if (!m) throw new ValidationError('ratio', `"${a.ratio}" is not a split ratio like "10:1"`);
      const ref = splitRefOf(a.actionId);
      const applied = (await publicClient.readContract({ address: stock, abi: stockAbi, functionName: 'splitApplied', args: [ref] })) as boolean;
      if (applied) return recordFound(a, stock, ref);
      const sender = opts.sender;
      if (!sender) throw new ValidationError('owner', 'the Stock tokens’ owner key (OPERATOR_PRIVATE_KEY, the deployer) is not configured in this process; the split cannot be applied');
      const args = [BigInt(m[1]), BigInt(m[2]), ref] as const;
      try {
        // A refusal (not the owner, a multiplier out of range) is reported with its reason before anything is sent.
        await publicClient.simulateContract({ address: stock, abi: stockAbi, functionName: 'split', args, account: sender.address });
      } catch (err) {
        throw toChainError(err);
      }
      const receipt = await sender.send({ to: stock, data: encodeFunctionData({ abi: stockAbi, functionName: 'split', args }), gas: 150_000n }, signal);
      if (receipt.status !== 'success') throw new ChainRevertError(undefined, { detail: { txHash: receipt.transactionHash } });
      const [ev] = parseEventLogs({ abi: stockAbi, eventName: 'MultiplierChanged', logs: receipt.logs });
      await markSplitApplied(db, a.actionId, receipt.transactionHash, opts.now());
      opts.logger?.info(
        { actionId: a.actionId, ratio: a.ratio, multiplier: ev?.args.newMultiplier.toString(), txHash: receipt.transactionHash },
        'split: applied on chain',
      );
      return 'applied';
    },
  };
}
