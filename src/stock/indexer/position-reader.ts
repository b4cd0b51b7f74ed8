/**
 * Stock positions come from contract state, not from a fold: the balances of every touched
 * (user, stock) pair are read with `AccountLens.getAccount` at the hash of the block being
 * checkpointed (EIP-1898), and written in the same transaction.
 */
import { decodeFunctionResult, encodeFunctionData, type Address } from 'viem';
import { accountLensAbi } from '../../chain/abi/generated/index.ts';
import { toChainError } from '../../chain/chain-client.ts';
import { isAppError } from '../../errors/app-error.ts';
import type { ChainSource } from '../../indexer/chain-source.ts';
import type { Logger } from '../../lib/logger.ts';
import type { PositionRecord } from '../store/stock-position-store.ts';
import type { PositionTouches } from './stock-handler.ts';

const ZERO = '0x0000000000000000000000000000000000000000';
const LENS_CONCURRENCY = 8;

interface StockBalances {
  stock: string;
  wallet: string;
  exchange: string;
  locked: string;
}

/** Stock balances of `user` in `stocks` at the block `blockHash`; none when the lens did not exist then. */
async function stockBalances(chain: ChainSource, accountLens: string, user: string, stocks: readonly string[], blockHash: string): Promise<StockBalances[]> {
  const data = encodeFunctionData({
    abi: accountLensAbi,
    functionName: 'getAccount',
    args: [user as Address, stocks as Address[], [], ZERO as Address],
  });
  const result = await chain.callAt(accountLens, data, blockHash);
  // No AccountLens at that block (deployed later): no state to read, nothing to record.
  if (result === '0x') return [];
  let account;
  try {
    account = decodeFunctionResult({ abi: accountLensAbi, functionName: 'getAccount', data: result });
  } catch (err) {
    throw toChainError(err);
  }
  return account.stocks.map((s) => ({
    stock: s.stock.toLowerCase(),
    wallet: s.wallet.toString(),
    exchange: s.exchange.toString(),
    locked: s.locked.toString(),
  }));
}

export interface PositionReadContext {
  chain: ChainSource;
  accountLens: string;
  confirmations: number;
  log?: Logger;
}

/**
 * Stock balances of the touched pairs at block `at`. A node without that block's state (pruned: far
 * behind the head during a catch-up) answers for the newest confirmed block instead; the row
 * records which block it is, and a later touch re-reads.
 */
export async function readPositions(
  ctx: PositionReadContext,
  touches: PositionTouches,
  at: { number: number; hash: string },
  timestamp: number,
): Promise<PositionRecord[]> {
  const { chain } = ctx;
  const users = [...touches.keys()];
  if (users.length === 0) return [];
  let block = { number: at.number, hash: at.hash, timestamp };
  const read = async (user: string) => {
    const stocks = [...(touches.get(user) as Set<string>)];
    try {
      return await stockBalances(chain, ctx.accountLens, user, stocks, block.hash);
    } catch (err) {
      if (isAppError(err) && err.code === 'CHAIN_UNAVAILABLE') throw err;
      if (block.hash === at.hash) {
        const newest = await chain.headerByNumber(Math.max(0, (await chain.blockNumber()) - ctx.confirmations));
        if (!newest) throw err;
        block = { number: newest.number, hash: newest.hash, timestamp: newest.timestamp };
        ctx.log?.debug({ at: at.number, instead: block.number }, 'indexer: no state at the checkpoint block, reading positions at the newest');
      }
      return stockBalances(chain, ctx.accountLens, user, stocks, block.hash);
    }
  };
  const out: PositionRecord[] = [];
  for (let i = 0; i < users.length; i += LENS_CONCURRENCY) {
    const batch = users.slice(i, i + LENS_CONCURRENCY);
    const results = await Promise.all(batch.map(read));
    batch.forEach((user, k) => {
      for (const b of results[k]) {
        out.push({
          userAddress: user,
          stockAddress: b.stock,
          walletBalance: b.wallet,
          exchangeBalance: b.exchange,
          lockedBalance: b.locked,
          blockNumber: block.number,
          updatedAt: block.timestamp,
        });
      }
    });
  }
  return out;
}

/** Before the contracts existed every balance was zero. */
export function zeroPositions(touches: PositionTouches, blockNumber: number): PositionRecord[] {
  const out: PositionRecord[] = [];
  for (const [user, stocks] of touches) {
    for (const stock of stocks) {
      out.push({ userAddress: user, stockAddress: stock, walletBalance: '0', exchangeBalance: '0', lockedBalance: '0', blockNumber, updatedAt: 0 });
    }
  }
  return out;
}
