/**
 * Applies a scheduled split on chain (docs/corporate-actions.md, "Splits"): at the split's moment
 * (`splitEffectiveAt`: 00:00 New York on the ex-date, or shortly after it was added), the Stock
 * token's owner calls `Stock.split(numerator, denominator, ref)` once. Every balance, exchange
 * balance and open order of the stock is then in the new shares at once (the multiplier); the
 * stock indexer restates the stored orders and re-reads the holders from the `MultiplierChanged`
 * event. `ref` is the action's: a retried step finds the split applied and records its transaction
 * instead of splitting twice.
 */
import { encodeFunctionData, getAddress, keccak256, parseEventLogs, stringToHex, type Address, type Hex } from 'viem';
import { stockAbi, venueTimelockAbi } from '../../chain/abi/generated/index.ts';
import { isTimelock } from '../../chain/owner-actions.ts';
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

const ZERO32 = `0x${'0'.repeat(64)}` as Hex;

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
  /**
   * How long before a split's moment it must be handed to `apply` (ms): the delay of the timelock
   * that owns the Stock tokens (the split is scheduled that far ahead), 0 for an owner account.
   */
  leadMs(): Promise<number>;
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

  /**
   * The split through the venue's timelock when it owns the Stock (docs/security.md, "Owner and
   * upgrader"): scheduled `delay` before the split's moment (salt: the action's ref, so a retry finds
   * its own operation), executed once the chain says it is ready. With delay 0 (the embedded demo)
   * both happen at the moment, one after the other.
   */
  const viaTimelock = async (a: CorporateActionRecord, stock: Address, timelock: Address, args: readonly [bigint, bigint, Hex], ref: Hex, sender: TxSender, signal?: AbortSignal): Promise<'applied' | 'waiting'> => {
    const data = encodeFunctionData({ abi: stockAbi, functionName: 'split', args });
    const read = <T>(functionName: string, fnArgs: readonly unknown[]) =>
      publicClient.readContract({ address: timelock, abi: venueTimelockAbi, functionName: functionName as never, args: fnArgs as never }) as Promise<T>;
    const delay = await read<bigint>('getMinDelay', []);
    if (opts.now() < splitEffectiveAt(a.exDate, a.createdAt + offset) - Number(delay) * 1000) return 'waiting';
    const id = await read<Hex>('hashOperation', [stock, 0n, data, ZERO32, ref]);
    let state = await read<number>('getOperationState', [id]);
    if (state === 0) {
      const receipt = await sender.send({ to: timelock, data: encodeFunctionData({ abi: venueTimelockAbi, functionName: 'schedule', args: [stock, 0n, data, ZERO32, ref, delay] }), gas: 200_000n }, signal);
      if (receipt.status !== 'success') throw new ChainRevertError(undefined, { detail: { txHash: receipt.transactionHash } });
      opts.logger?.info({ actionId: a.actionId, ratio: a.ratio, readyAt: new Date(Number(await read<bigint>('getTimestamp', [id])) * 1000).toISOString() }, 'split: scheduled in the timelock');
      state = await read<number>('getOperationState', [id]);
    }
    if (state === 1) return 'waiting';
    if (state === 3) return recordFound(a, stock, ref);
    const receipt = await sender.send({ to: timelock, data: encodeFunctionData({ abi: venueTimelockAbi, functionName: 'execute', args: [stock, 0n, data, ZERO32, ref] }), gas: 300_000n }, signal);
    if (receipt.status !== 'success') throw new ChainRevertError(undefined, { detail: { txHash: receipt.transactionHash } });
    const [ev] = parseEventLogs({ abi: stockAbi, eventName: 'MultiplierChanged', logs: receipt.logs });
    await markSplitApplied(db, a.actionId, receipt.transactionHash, opts.now());
    opts.logger?.info({ actionId: a.actionId, ratio: a.ratio, multiplier: ev?.args.newMultiplier.toString(), txHash: receipt.transactionHash }, 'split: applied on chain through the timelock');
    return 'applied';
  };

  return {
    async leadMs() {
      const first = Object.values(opts.stocks)[0];
      if (!first) return 0;
      const owner = getAddress((await publicClient.readContract({ address: first, abi: stockAbi, functionName: 'owner' })) as Address);
      if (owner === opts.sender?.address || !(await isTimelock(publicClient, owner))) return 0;
      const delay = (await publicClient.readContract({ address: owner, abi: venueTimelockAbi, functionName: 'getMinDelay' })) as bigint;
      return Number(delay) * 1000;
    },

    async apply(a, signal) {
      // With a timelock the split is scheduled its delay ahead of the moment (viaTimelock checks).
      const early = opts.now() < splitEffectiveAt(a.exDate, a.createdAt + offset);
      const stock = opts.stocks[a.symbol];
      if (!stock) {
        if (early) return 'waiting';
        throw new ValidationError('symbol', `${a.symbol} has no token on this chain`);
      }
      const owner = getAddress((await publicClient.readContract({ address: stock, abi: stockAbi, functionName: 'owner' })) as Address);
      const timelock = owner !== opts.sender?.address && (await isTimelock(publicClient, owner)) ? owner : undefined;
      if (early && timelock === undefined) return 'waiting';
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
        await publicClient.simulateContract({ address: stock, abi: stockAbi, functionName: 'split', args, account: timelock ?? sender.address });
      } catch (err) {
        throw toChainError(err);
      }
      if (timelock !== undefined) return viaTimelock(a, stock, timelock, args, ref, sender, signal);
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
