/**
 * The stock venue's part of the legacy migration (steps 1 to 9 of legacy-migration.ts): close the
 * open orders, freeze, snapshot (legacy-stock-snapshot.ts), drain, deploy, import, fund, finish and
 * retire, each recorded in the journal before the next starts and each checked against the chain on
 * a rerun.
 */
import { getAddress, maxUint128, parseAbi, type Abi, type Address } from 'viem';
import { cashierAbi, cashTokenAbi, oneClickRouterAbi, stockAbi, stockRouterAbi } from './abi/generated/index.ts';
import type { ChainPublicClient } from './chain-client.ts';
import { deployStack } from './deploy-stock-venue.ts';
import type { Deployment } from './deployment-file.ts';
import { CHUNK, mapChunked, send, type StepContext } from './legacy-migration-context.ts';
import type { MigrationJournal } from './legacy-migration-journal.ts';
import { ONE, snapshotStockVenue } from './legacy-stock-snapshot.ts';

/** The old routers' `getOrder`: the fields every release before 0.2.0 shares (later ones append). */
const legacyRouterAbi = parseAbi([
  'function getOrder(uint256 orderId) view returns ((address user, address stock, uint8 side, uint8 orderType, uint8 status, uint8 timeInForce, uint32 deadline, uint64 createdAt, uint128 quantity, uint128 notional, uint128 price, uint128 filledQuantity, uint128 filledNotional, uint128 fees, uint128 locked))',
]);
const ORDER_OPEN = 1;
const ORDER_CANCELING = 2;
const ORDER_CANCELED = 4;

const s = (v: bigint) => v.toString();
const b = (v: string) => BigInt(v);

/** Moves the old stock venue to new contracts behind proxies; answers the new venue's section (without its chain id). */
export async function migrateStockVenue(ctx: StepContext): Promise<Omit<Deployment, 'chainId'>> {
  const { publicClient: client, journal, save, say } = ctx;
  const j = journal.stock!;
  const old = j.old;
  const owner = ctx.ownerWallet.account.address;
  const firstBlock = BigInt((ctx.record.venues.stock.firstBlockNumber ?? ctx.record.venues.stock.blockNumber));

  // 1. close every open order (its lock returns to the free balance). Looked at again on every run
  // until the old venue is frozen on chain: an embedded chain killed hard may have lost the closes.
  const frozenOnChain = (await client.readContract({ address: old.cashier, abi: cashierAbi, functionName: 'router' })).toLowerCase() === owner.toLowerCase();
  if (!frozenOnChain) {
    const next = await client.readContract({ address: old.stockRouter, abi: stockRouterAbi, functionName: 'nextOrderId' });
    const ids = Array.from({ length: Number(next - 1n) }, (_, i) => BigInt(i + 1));
    const orders = await mapChunked(ids, async (id) => ({ id, order: await client.readContract({ address: old.stockRouter, abi: legacyRouterAbi, functionName: 'getOrder', args: [id] }) }));
    const open = orders.filter(({ order }) => order.status === ORDER_OPEN || order.status === ORDER_CANCELING).map(({ id }) => id);
    if (open.length > 0) {
      const isOperator = await client.readContract({ address: old.stockRouter, abi: stockRouterAbi, functionName: 'isOperator', args: [owner] });
      if (!isOperator) await send(ctx, 'old router.setOperator(owner)', old.stockRouter, stockRouterAbi, 'setOperator', [owner, true]);
      for (let i = 0; i < open.length; i += CHUNK) {
        const closes = open.slice(i, i + CHUNK).map((orderId) => ({ orderId, status: ORDER_CANCELED }));
        await send(ctx, 'old router.settleOrders (closes)', old.stockRouter, stockRouterAbi, 'settleOrders', [[], closes]);
      }
    }
    j.closedOrders = [...new Set([...(j.closedOrders ?? []), ...open.map(s)])];
    await save();
    say(`stock: ${open.length} open order(s) closed Canceled on the old router, their locks returned`);
  }
  // The database follows the old contracts only until they are frozen: after that they emit the
  // migration's own moves (the owner's drain), which are not users' operations.
  if (!frozenOnChain) await ctx.afterOrdersClosed?.(j.closedOrders ?? []);

  // 2. freeze: nothing but the owner can move a balance of the old contracts any more (each router
  // read again: the chain is the truth, not the journal).
  {
    const targets: Array<[string, Address, Abi]> = [['old cashier', old.cashier, cashierAbi], ...Object.entries(old.stocks).map(([sym, a]): [string, Address, Abi] => [`old ${sym}`, a, stockAbi])];
    for (const [label, address, abi] of targets) {
      const router = (await client.readContract({ address, abi, functionName: 'router' })) as Address;
      if (router.toLowerCase() !== owner.toLowerCase()) await send(ctx, `${label}.setRouter(owner)`, address, abi, 'setRouter', [owner]);
    }
    if (!j.frozen) {
      j.frozen = true;
      await save();
      say('stock: the old Cashier and Stocks are frozen (their router is the owner)');
    }
  }

  // 3. snapshot at one block.
  if (!j.snapshot) {
    j.snapshot = await snapshotStockVenue(client, old, owner, firstBlock);
    await save();
    say(`stock: snapshot at block ${j.snapshot.block}: ${j.snapshot.accounts.length} cash account(s), ${j.snapshot.stocks.reduce((n, x) => n + x.holders.length, 0)} holding(s), ${j.snapshot.delegations.length} delegation(s), ${j.snapshot.queued.length} queued operation(s)`);
  }
  const snap = j.snapshot;

  // 4. drain the old Cashier's cash tokens to the owner (as its router).
  j.drained ??= {};
  for (const t of snap.tokens) {
    const held = await client.readContract({ address: t.token, abi: cashTokenAbi, functionName: 'balanceOf', args: [old.cashier] });
    if (held > 0n) {
      // A credit the buffer covers, then a withdrawal the token's buffer covers: the owner takes the tokens out.
      const config = await client.readContract({ address: old.cashier, abi: cashierAbi, functionName: 'tokenConfig', args: [t.token] });
      const musd = held * 10n ** BigInt(18 - config.decimals);
      if (!config.enabled) await send(ctx, 'old cashier.configureToken', old.cashier, cashierAbi, 'configureToken', [t.token, true, config.decimals, 0n, config.withdrawBuffer]);
      if (config.minAmount > held) await send(ctx, 'old cashier.configureToken (min)', old.cashier, cashierAbi, 'configureToken', [t.token, true, config.decimals, 0n, config.withdrawBuffer]);
      const buffer = await client.readContract({ address: old.cashier, abi: cashierAbi, functionName: 'creditBuffer' });
      if (buffer < musd) await send(ctx, 'old cashier.setCreditBuffer', old.cashier, cashierAbi, 'setCreditBuffer', [musd]);
      await send(ctx, 'old cashier.creditDeposit(owner)', old.cashier, cashierAbi, 'creditDeposit', [owner, t.token, held]);
      await send(ctx, 'old cashier.setWithdrawBuffer', old.cashier, cashierAbi, 'setWithdrawBuffer', [t.token, held > maxUint128 ? maxUint128 : held]);
      await send(ctx, 'old cashier.debitWithdrawal(owner)', old.cashier, cashierAbi, 'debitWithdrawal', [owner, t.token, held]);
    }
    // What was held at the snapshot (frozen since): a run that died after the withdrawal finds
    // nothing left to take, but the amount owed to the new Cashier is still all of it.
    if (j.drained[t.token] === undefined) {
      j.drained[t.token] = t.held;
      await save();
      say(`stock: ${t.held} units of ${t.token} taken out of the old Cashier`);
    }
  }

  // 5. the new venue, its migration window open (deployed again if the chain lost it).
  const deployedCode = j.deployed ? await client.getCode({ address: j.deployed.contracts.stockRouter }) : undefined;
  if (!j.deployed || deployedCode === undefined || deployedCode === '0x') {
    const symbols = snap.stocks.map((x) => ({ symbol: x.symbol, name: x.name }));
    const usdc = snap.tokens[0];
    const deployment = await deployStack({
      publicClient: client,
      walletClient: ctx.ownerWallet,
      symbols,
      demoWallets: [],
      options: {
        treasury: snap.treasury,
        operators: [...(ctx.roles?.stock ?? snap.operators.filter((o) => o.toLowerCase() !== owner.toLowerCase()))],
        guardian: ctx.roles?.guardian,
        creditBuffer: b(snap.creditBuffer),
        withdrawBuffer: usdc ? b(usdc.withdrawBuffer) : 0n,
        minAmount: usdc ? b(usdc.minAmount) : 0n,
        treasuryFunding: 0n,
        walletCash: 0n,
        walletStock: 0n,
        marketFeeBps: snap.fee.marketFeeBps,
        limitFeeBps: snap.fee.limitFeeBps,
        firstOrderId: b(snap.nextOrderId),
        migrating: true,
        cashToken: usdc?.token,
      },
    });
    const { chainId: _c, ...section } = deployment;
    j.deployed = section;
    j.imported = {};
    await save();
    say(`stock: the new venue is deployed behind proxies (StockRouter ${section.contracts.stockRouter}); order ids continue at ${snap.nextOrderId}`);
  }
  const next = j.deployed;
  // While a window is open on chain every run sends its imports again: the contracts skip what they
  // hold already, and a chain that lost blocks gets them back. A closed window imports nothing.
  const windowOpen = (address: Address, abi: Abi) => client.readContract({ address, abi, functionName: 'migrating' }) as Promise<boolean>;
  const cashierOpen = await windowOpen(next.contracts.cashier, cashierAbi);
  const oneClickOpen = await windowOpen(next.contracts.oneClickRouter, oneClickRouterAbi);
  const imported: NonNullable<NonNullable<MigrationJournal['stock']>['imported']> = {
    cash: !cashierOpen,
    fees: !cashierOpen,
    queued: !cashierOpen,
    delegations: !oneClickOpen,
    stocks: [],
  };
  for (const x of snap.stocks) if (!(await windowOpen(next.contracts.stocks[x.symbol], stockAbi))) imported.stocks!.push(x.symbol);
  j.imported = imported;

  // 6. import.
  if (!imported.cash) {
    const accounts = snap.accounts.filter((a) => b(a.free) + b(a.locked) > 0n);
    for (let i = 0; i < accounts.length; i += CHUNK) {
      const part = accounts.slice(i, i + CHUNK);
      // Every lock was released by step 1; a lock left (an order placed in between) is free now too.
      await send(ctx, 'cashier.migrateBalances', next.contracts.cashier, cashierAbi, 'migrateBalances', [part.map((a) => a.user), part.map((a) => b(a.free) + b(a.locked))]);
    }
    imported.cash = true;
    await save();
  }
  if (!imported.fees) {
    if (b(snap.fees) > 0n) await send(ctx, 'cashier.migrateFees', next.contracts.cashier, cashierAbi, 'migrateFees', [b(snap.fees)]);
    imported.fees = true;
    await save();
  }
  if (!imported.queued) {
    for (const q of snap.queued) {
      await send(ctx, 'cashier.migrateQueuedOp', next.contracts.cashier, cashierAbi, 'migrateQueuedOp', [q.deposit, b(q.queueId), q.user, q.token, b(q.tokenAmount), b(q.musdAmount)]);
    }
    imported.queued = true;
    await save();
  }
  for (const x of snap.stocks) {
    if (imported.stocks!.includes(x.symbol)) continue;
    const token = next.contracts.stocks[x.symbol];
    if (b(x.multiplier) !== ONE || x.refs.length > 0) {
      const current = await client.readContract({ address: token, abi: stockAbi, functionName: 'multiplier' });
      const supply = await client.readContract({ address: token, abi: stockAbi, functionName: 'totalSupply' });
      if (supply === 0n && (current !== b(x.multiplier) || x.refs.length > 0)) {
        await send(ctx, `${x.symbol}.migrateMultiplier`, token, stockAbi, 'migrateMultiplier', [b(x.multiplier), x.refs]);
      }
    }
    const holders = x.holders.filter((h) => b(h.walletBase) + b(h.freeBase) + b(h.lockedBase) > 0n);
    for (let i = 0; i < holders.length; i += CHUNK) {
      const part = holders.slice(i, i + CHUNK);
      await send(ctx, `${x.symbol}.migrateHolders`, token, stockAbi, 'migrateHolders', [part.map((h) => h.user), part.map((h) => b(h.walletBase)), part.map((h) => b(h.freeBase) + b(h.lockedBase))]);
    }
    imported.stocks!.push(x.symbol);
    await save();
  }
  if (!imported.delegations) {
    // 0.1.0 delegations never expired: the new router gives each one DELEGATION_LIFETIME (30 days)
    // from this call, as a new one, after which the wallet enables again (CHANGELOG 0.2.0, issue 43).
    for (let i = 0; i < snap.delegations.length; i += CHUNK) {
      const part = snap.delegations.slice(i, i + CHUNK);
      await send(ctx, 'oneClickRouter.migrateDelegations', next.contracts.oneClickRouter, oneClickRouterAbi, 'migrateDelegations', [part.map((d) => d.user), part.map((d) => d.delegatee), part.map((d) => b(d.nonce))]);
    }
    imported.delegations = true;
    await save();
    say('stock: balances, fees, queued operations, holdings and delegations imported');
  }

  // 7. fund the new Cashier with what was drained: what the owner sent it is read from the token's
  // Transfer events on every run (a run that died after its transfer sends nothing again), not from
  // the Cashier's balance, which anyone can raise (a donation to its predictable address is a
  // surplus the reconciliation reports, never a part of the funding).
  {
    for (const t of snap.tokens) {
      const amount = b(j.drained![t.token] ?? '0');
      if (amount === 0n) continue;
      const sent = await transferredTo(client, t.token, owner, next.contracts.cashier, BigInt(next.firstBlockNumber ?? next.blockNumber));
      if (sent < amount) await send(ctx, 'fund the new Cashier', t.token, cashTokenAbi, 'transfer', [next.contracts.cashier, amount - sent]);
    }
    if (!j.funded) {
      j.funded = true;
      await save();
      say('stock: the new Cashier holds the cash');
    }
  }

  // 8. close the migration windows for good.
  {
    const windows: Array<[string, Address, Abi]> = [['cashier', next.contracts.cashier, cashierAbi], ['oneClickRouter', next.contracts.oneClickRouter, oneClickRouterAbi], ...Object.entries(next.contracts.stocks).map(([sym, a]): [string, Address, Abi] => [sym, a, stockAbi])];
    for (const [label, address, abi] of windows) {
      const open = (await client.readContract({ address, abi, functionName: 'migrating' })) as boolean;
      if (open) {
        await send(ctx, `${label}.finishMigration`, address, abi, 'finishMigration', []);
      }
    }
    if (!j.finished) {
      j.finished = true;
      await save();
      say('stock: migration windows closed');
    }
  }

  // 9. the old router and Cashier keep no operator (the owner's own, made for the closes, included):
  // frozen already, they now have nobody who could act on them.
  if (!j.retired) {
    for (const [label, address, abi] of [['old router', old.stockRouter, stockRouterAbi], ['old cashier', old.cashier, cashierAbi]] as const) {
      const named = await client.getContractEvents({ address, abi: abi as Abi, eventName: 'OperatorSet', fromBlock: firstBlock }).catch(() => []);
      const candidates = new Set([...snap.operators, owner, ...named.map((l) => getAddress((l.args as { operator: Address }).operator))].map((a) => getAddress(a)));
      for (const op of candidates) {
        if (await client.readContract({ address, abi: abi as Abi, functionName: 'isOperator', args: [op] })) await send(ctx, `${label}.setOperator(false)`, address, abi as Abi, 'setOperator', [op, false]);
      }
    }
    j.retired = true;
    await save();
    say('stock: the old router and Cashier have no operator left');
  }
  return next;
}

/** What `from` sent `to` in `token` from `fromBlock` on (the token's Transfer events). */
async function transferredTo(client: ChainPublicClient, token: Address, from: Address, to: Address, fromBlock: bigint): Promise<bigint> {
  const logs = await client.getContractEvents({ address: token, abi: cashTokenAbi, eventName: 'Transfer', args: { from, to } as never, fromBlock });
  return logs.reduce((n, l) => n + ((l.args as { value: bigint }).value ?? 0n), 0n);
}
