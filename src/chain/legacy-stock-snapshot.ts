/**
 * The old stock venue's state read at one block (step 3 of legacy-migration.ts): cash accounts,
 * fees, queued operations, every holder's base units, split multipliers and refs, One Click
 * delegations and the router's configuration, for the new venue to import.
 */
import { encodeAbiParameters, getAddress, hexToBigInt, keccak256, type Address, type Hex } from 'viem';
import { AppError } from '../errors/app-error.ts';
import { cashierAbi, cashTokenAbi, oneClickRouterAbi, stockAbi, stockRouterAbi } from './abi/generated/index.ts';
import type { ChainPublicClient } from './chain-client.ts';
import type { DeploymentContracts } from './deployment-file.ts';
import { accountsSeen, mapChunked } from './legacy-migration-context.ts';
import type { StockHolder, StockVenueSnapshot } from './legacy-migration-journal.ts';

/** A split multiplier of 1 (36 decimals): a stock that never split. */
export const ONE = 10n ** 36n;
/** Old Stock (split-aware, before 0.2.0) storage: `_baseBalances`, `_freeBase`, `_lockedBase` (OZ ERC20 5 + Ownable2Step first). */
const LEGACY_STOCK_SLOTS = { baseBalances: 10n, freeBase: 12n, lockedBase: 13n } as const;

const s = (v: bigint) => v.toString();

function mappingSlot(key: Address, slot: bigint): Hex {
  return keccak256(encodeAbiParameters([{ type: 'address' }, { type: 'uint256' }], [key, slot]));
}

export async function snapshotStockVenue(client: ChainPublicClient, old: DeploymentContracts, owner: Address, firstBlock: bigint): Promise<StockVenueSnapshot> {
  // The head now, not viem's block number of up to one polling interval ago (cacheTime): the steps
  // just before (open orders closed) are mined after it, and a snapshot taken at that older block
  // would miss them (the vault's snapshot, legacy-vault-migration.ts, did: CI, a withdrawal paid just before it).
  const block = await client.getBlockNumber({ cacheTime: 0 });
  const at = { blockNumber: block } as const;
  const stocks = Object.entries(old.stocks);
  const seen = await accountsSeen(client, [old.stockRouter, old.cashier, old.oneClickRouter, ...stocks.map(([, a]) => a)], firstBlock, block);
  const [treasury, creditBuffer, fees, supported, nextDeposit, nextWithdrawal, nextOrderId, fee] = await Promise.all([
    client.readContract({ address: old.cashier, abi: cashierAbi, functionName: 'treasury', ...at }),
    client.readContract({ address: old.cashier, abi: cashierAbi, functionName: 'creditBuffer', ...at }),
    client.readContract({ address: old.cashier, abi: cashierAbi, functionName: 'feeBalance', ...at }),
    client.readContract({ address: old.cashier, abi: cashierAbi, functionName: 'supportedTokens', ...at }),
    client.readContract({ address: old.cashier, abi: cashierAbi, functionName: 'nextDepositQueueId', ...at }),
    client.readContract({ address: old.cashier, abi: cashierAbi, functionName: 'nextWithdrawalQueueId', ...at }),
    client.readContract({ address: old.stockRouter, abi: stockRouterAbi, functionName: 'nextOrderId', ...at }),
    client.readContract({ address: old.stockRouter, abi: stockRouterAbi, functionName: 'feeConfig', ...at }),
  ]);
  const users = [...new Set([...seen, getAddress(treasury), getAddress(owner)])].filter((u) => ![old.cashier, old.stockRouter, old.oneClickRouter, ...stocks.map(([, a]) => a)].some((c) => c.toLowerCase() === u.toLowerCase()));
  const tokens = await Promise.all(
    supported.map(async (token) => {
      const [config, held] = await Promise.all([
        client.readContract({ address: old.cashier, abi: cashierAbi, functionName: 'tokenConfig', args: [token], ...at }),
        client.readContract({ address: token, abi: cashTokenAbi, functionName: 'balanceOf', args: [old.cashier], ...at }),
      ]);
      return { token: getAddress(token), held: s(held), enabled: config.enabled, decimals: config.decimals, minAmount: s(config.minAmount), withdrawBuffer: s(config.withdrawBuffer) };
    }),
  );
  const accounts = (
    await mapChunked(users, async (user) => {
      const [free, locked] = await Promise.all([
        client.readContract({ address: old.cashier, abi: cashierAbi, functionName: 'balanceOf', args: [user], ...at }),
        client.readContract({ address: old.cashier, abi: cashierAbi, functionName: 'lockedOf', args: [user], ...at }),
      ]);
      return { user, free: s(free), locked: s(locked) };
    })
  ).filter((a) => a.free !== '0' || a.locked !== '0');
  const queued: StockVenueSnapshot['queued'] = [];
  for (const [deposit, count] of [[true, nextDeposit], [false, nextWithdrawal]] as const) {
    for (let id = 1n; id < count; id++) {
      const op = await client.readContract({ address: old.cashier, abi: cashierAbi, functionName: deposit ? 'queuedDeposit' : 'queuedWithdrawal', args: [id], ...at });
      if (op.status === 1) queued.push({ deposit, queueId: s(id), user: op.user, token: op.token, tokenAmount: s(op.tokenAmount), musdAmount: s(op.musdAmount) });
    }
  }
  const operators = (await mapChunked(users, async (u) => ((await client.readContract({ address: old.stockRouter, abi: stockRouterAbi, functionName: 'isOperator', args: [u], ...at })) ? u : undefined))).filter((u): u is Address => u !== undefined);

  const stockSnaps = await Promise.all(
    stocks.map(async ([symbol, address]) => {
      const [name, totalSupply] = await Promise.all([
        client.readContract({ address, abi: stockAbi, functionName: 'name', ...at }),
        client.readContract({ address, abi: stockAbi, functionName: 'totalSupply', ...at }),
      ]);
      // Split-aware Stocks (late 0.1.0) have a multiplier; the first ones hold shares as base units.
      const multiplier = await client.readContract({ address, abi: stockAbi, functionName: 'multiplier', ...at }).catch(() => undefined);
      const refs: Hex[] = [];
      if (multiplier !== undefined) {
        const changes = await client.getLogs({ address, event: stockAbi.find((e) => e.type === 'event' && e.name === 'MultiplierChanged') as never, fromBlock: firstBlock, toBlock: block });
        for (const log of changes) refs.push((log as unknown as { args: { ref: Hex } }).args.ref);
      }
      const holders = (
        await mapChunked(users, async (user): Promise<StockHolder> => {
          const [wallet, free, locked] = await Promise.all([
            client.readContract({ address, abi: stockAbi, functionName: 'balanceOf', args: [user], ...at }),
            client.readContract({ address, abi: stockAbi, functionName: 'stockBalance', args: [user], ...at }),
            client.readContract({ address, abi: stockAbi, functionName: 'lockedStockBalance', args: [user], ...at }),
          ]);
          if (multiplier === undefined) return { user, walletBase: s(wallet), freeBase: s(free), lockedBase: s(locked) };
          // Exact base units from storage; each must show as the shares the contract answers.
          const read = async (slot: bigint) => hexToBigInt((await client.getStorageAt({ address, slot: mappingSlot(user, slot), ...at })) ?? '0x0');
          const [wb, fb, lb] = await Promise.all([read(LEGACY_STOCK_SLOTS.baseBalances), read(LEGACY_STOCK_SLOTS.freeBase), read(LEGACY_STOCK_SLOTS.lockedBase)]);
          const shown = (base: bigint) => (base * multiplier) / ONE;
          if (shown(wb) !== wallet || shown(fb) !== free || shown(lb) !== locked) {
            throw new AppError('INTERNAL', `migration: ${symbol}'s storage is not the layout this migration knows (base units of ${user} do not show as its shares); nothing was imported`);
          }
          return { user, walletBase: s(wb), freeBase: s(fb), lockedBase: s(lb) };
        })
      ).filter((h) => h.walletBase !== '0' || h.freeBase !== '0' || h.lockedBase !== '0');
      return { symbol, name, address, multiplier: s(multiplier ?? ONE), refs, totalSupply: s(totalSupply), holders };
    }),
  );
  const delegations = (
    await mapChunked(users, async (user) => {
      const [delegatee, nonce] = await Promise.all([
        client.readContract({ address: old.oneClickRouter, abi: oneClickRouterAbi, functionName: 'delegateOf', args: [user], ...at }),
        client.readContract({ address: old.oneClickRouter, abi: oneClickRouterAbi, functionName: 'nonces', args: [user], ...at }),
      ]);
      return { user, delegatee, nonce: s(nonce) };
    })
  ).filter((d) => d.nonce !== '0' || d.delegatee !== '0x0000000000000000000000000000000000000000');
  return {
    block: s(block),
    owner,
    treasury: getAddress(treasury),
    creditBuffer: s(creditBuffer),
    fees: s(fees),
    tokens,
    accounts,
    queued,
    nextOrderId: s(nextOrderId),
    fee: { marketFeeBps: fee.marketFeeBps, limitFeeBps: fee.limitFeeBps },
    operators,
    stocks: stockSnaps,
    delegations,
  };
}
