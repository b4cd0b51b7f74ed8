/**
 * Plumbing of the reorg scenarios (reorg-scenarios.test.ts): a seeded PRNG, random user and
 * operator actions against the fixture's stock and perp venues (each a real transaction, simulated
 * first so that an action the current branch refuses is skipped rather than mined as a revert),
 * the same actions as raw requests for `anvil_reorg`'s replacement blocks, and the indexed state
 * read back from the database in a form two databases can be compared by.
 */
import { encodeFunctionData, maxUint256, parseUnits, toHex, type Abi, type Address, type Hex } from 'viem';
import { cashierAbi, cashTokenAbi, marginVaultAbi, stockAbi, stockRouterAbi } from '../../src/chain/abi/generated/index.ts';
import type { PerpDeployment } from '../../src/chain/deploy-perp-venue.ts';
import type { ChainWalletClient } from '../../src/chain/chain-client.ts';
import type { Db } from '../../src/storage/database.ts';
import type { ChainFixture } from '../support/chain-fixture.ts';
import { perpOperatorWallet } from '../support/perp-venue.ts';

// ------------------------------------------------------------------- PRNG

/** xoshiro128** on 32-bit lanes: small, fast, reproducible from a seed. */
export class Rng {
  private s: Uint32Array;
  constructor(seed: number) {
    // splitmix32 expands the seed into the four lanes.
    let x = seed >>> 0;
    const next = () => {
      x = (x + 0x9e3779b9) >>> 0;
      let z = x;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.s = new Uint32Array([next(), next(), next(), next()]);
  }
  /** Uniform 32-bit unsigned integer. */
  u32(): number {
    const s = this.s;
    const result = Math.imul(rotl(Math.imul(s[1], 5) >>> 0, 7), 9) >>> 0;
    const t = (s[1] << 9) >>> 0;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 11);
    return result;
  }
  /** Integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + (this.u32() % (hi - lo + 1));
  }
  chance(p: number): boolean {
    return this.u32() / 2 ** 32 < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(0, items.length - 1)];
  }
  /** Picks a key by weight. */
  weighted<K extends string>(weights: Record<K, number>): K {
    const entries = Object.entries(weights) as Array<[K, number]>;
    const total = entries.reduce((s, [, w]) => s + w, 0);
    let r = this.u32() % total;
    for (const [k, w] of entries) {
      if (r < w) return k;
      r -= w;
    }
    return entries[entries.length - 1][0];
  }
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}

// ---------------------------------------------------------------- actions

export interface Venue {
  f: ChainFixture;
  perp: PerpDeployment;
  stocks: Address[];
  perpOperator: ChainWalletClient;
}

export function venueOf(f: ChainFixture, perp: PerpDeployment): Venue {
  return { f, perp, stocks: Object.values(f.deployment.contracts.stocks), perpOperator: perpOperatorWallet(f) };
}

const usdc = (n: number) => parseUnits(String(n), 6);
const shares = (hundredths: number) => parseUnits(String(hundredths), 16);
const price = (cents: number) => parseUnits(String(cents), 16);

/** What the scenario remembers of its branch (stale entries are fine: every action is simulated first). */
export interface ScenarioMemory {
  orderIds: bigint[];
  depositQueueIds: bigint[];
  withdrawalQueueIds: bigint[];
}

export type ActionKind =
  | 'cashDeposit'
  | 'cashWithdraw'
  | 'placeLimit'
  | 'settle'
  | 'cancel'
  | 'stockDeposit'
  | 'stockWithdraw'
  | 'creditBuffer'
  | 'settleQueued'
  | 'vaultDeposit'
  | 'vaultWithdraw'
  | 'mine';

export const ACTION_WEIGHTS: Record<ActionKind, number> = {
  cashDeposit: 14,
  cashWithdraw: 6,
  placeLimit: 24,
  settle: 20,
  cancel: 5,
  stockDeposit: 5,
  stockWithdraw: 4,
  creditBuffer: 4,
  settleQueued: 8,
  vaultDeposit: 10,
  vaultWithdraw: 4,
  mine: 6,
};

interface Call {
  wallet: ChainWalletClient;
  address: Address;
  abi: Abi;
  functionName: string;
  args: readonly unknown[];
}

/**
 * Simulates `call` on the current head and, when it would succeed, sends it and waits for the
 * receipt (automine: one block). Undefined when the branch refuses it (no block mined).
 */
async function send<T>(v: Venue, call: Call): Promise<{ result: T; blockNumber: bigint } | undefined> {
  let sim: { request: unknown; result: unknown };
  try {
    sim = (await v.f.publicClient.simulateContract({
      account: call.wallet.account,
      address: call.address,
      abi: call.abi,
      functionName: call.functionName,
      args: call.args,
    } as never)) as never;
  } catch {
    return undefined;
  }
  // Half again the estimate: an exact one can run out of gas when the mined block's time writes a
  // slot the estimate's did not (the operator's hourly activity stamp), as in chain-test-helpers.
  const estimate = await v.f.publicClient.estimateContractGas(sim.request as never);
  const hash = await call.wallet.writeContract({ ...(sim.request as object), gas: (estimate * 3n) / 2n } as never);
  const receipt = await v.f.publicClient.waitForTransactionReceipt({ hash, pollingInterval: 10 });
  if (receipt.status !== 'success') throw new Error(`${call.functionName} reverted after a successful simulation`);
  return { result: sim.result as T, blockNumber: receipt.blockNumber };
}

/** A limit order's deadline: an hour after the head's time (the router refuses deadlines a day or more ahead). */
export async function orderDeadline(v: Venue): Promise<number> {
  const block = await v.f.publicClient.getBlock({ blockTag: 'latest' });
  return Number(block.timestamp) + 3_600;
}

/**
 * Performs one random action of `kind`; returns the blocks it mined (0 when the branch refused
 * it). User actions come from the demo wallets, settlements from the operator.
 */
export async function act(v: Venue, rng: Rng, mem: ScenarioMemory, kind: ActionKind): Promise<number> {
  const { f } = v;
  const c = f.deployment.contracts;
  const user = rng.pick(f.users);
  const mined = (r: { blockNumber: bigint } | undefined) => (r ? 1 : 0);
  switch (kind) {
    case 'cashDeposit': {
      const r = await send<readonly [boolean, bigint]>(v, { wallet: user.wallet, address: c.stockRouter, abi: stockRouterAbi, functionName: 'deposit', args: [c.cashToken, usdc(rng.int(100, 50_000) / 100)] });
      if (r && !r.result[0]) mem.depositQueueIds.push(r.result[1]);
      return mined(r);
    }
    case 'cashWithdraw': {
      const r = await send<readonly [boolean, bigint]>(v, { wallet: user.wallet, address: c.stockRouter, abi: stockRouterAbi, functionName: 'withdraw', args: [c.cashToken, usdc(rng.int(100, 20_000) / 100)] });
      if (r && !r.result[0]) mem.withdrawalQueueIds.push(r.result[1]);
      return mined(r);
    }
    case 'placeLimit': {
      const side = rng.int(0, 1);
      const r = await send<bigint>(v, {
        wallet: user.wallet,
        address: c.stockRouter,
        abi: stockRouterAbi,
        functionName: 'placeLimitOrder',
        args: [rng.pick(v.stocks), side, shares(rng.int(10, 300)), price(rng.int(5_000, 15_000)), 0, await orderDeadline(v)],
      });
      if (r) mem.orderIds.push(r.result);
      return mined(r);
    }
    case 'settle': {
      const fills: Array<{ orderId: bigint; quantity: bigint; price: bigint }> = [];
      const closes: Array<{ orderId: bigint; status: number }> = [];
      for (const id of new Set([rng.pick(mem.orderIds.length > 0 ? mem.orderIds : [1n]), rng.pick(mem.orderIds.length > 0 ? mem.orderIds : [1n])])) {
        const o = await f.publicClient.readContract({ address: c.stockRouter, abi: stockRouterAbi, functionName: 'getOrder', args: [id] });
        if (o.status !== 1) continue;
        const left = o.quantity - o.filledQuantity;
        const full = rng.chance(0.4);
        const quantity = full ? left : (left * BigInt(rng.int(1, 9))) / 10n;
        if (quantity > 0n) fills.push({ orderId: id, quantity, price: o.price });
        if (full || rng.chance(0.2)) closes.push({ orderId: id, status: full ? 3 : 4 });
      }
      if (fills.length === 0 && closes.length === 0) return 0;
      return mined(await send(v, { wallet: f.operator, address: c.stockRouter, abi: stockRouterAbi, functionName: 'settleOrders', args: [fills, closes] }));
    }
    case 'cancel': {
      if (mem.orderIds.length === 0) return 0;
      const id = rng.pick(mem.orderIds);
      const o = await f.publicClient.readContract({ address: c.stockRouter, abi: stockRouterAbi, functionName: 'getOrder', args: [id] });
      const owner = f.users.find((u) => u.address.toLowerCase() === o.user.toLowerCase());
      if (!owner) return 0;
      return mined(await send(v, { wallet: owner.wallet, address: c.stockRouter, abi: stockRouterAbi, functionName: 'cancelLimitOrder', args: [id] }));
    }
    case 'stockDeposit':
    case 'stockWithdraw':
      return mined(
        await send(v, {
          wallet: user.wallet,
          address: c.stockRouter,
          abi: stockRouterAbi,
          functionName: kind === 'stockDeposit' ? 'depositStock' : 'withdrawStock',
          args: [rng.pick(v.stocks), shares(rng.int(10, 500))],
        }),
      );
    case 'creditBuffer':
      // Zero queues every deposit until the buffer is raised again.
      return mined(await send(v, { wallet: f.operator, address: c.cashier, abi: cashierAbi, functionName: 'setCreditBuffer', args: [rng.chance(0.5) ? 0n : parseUnits('1000000', 18)] }));
    case 'settleQueued': {
      const deposit = rng.chance(0.6);
      const ids = deposit ? mem.depositQueueIds : mem.withdrawalQueueIds;
      if (ids.length === 0) return 0;
      return mined(await send(v, { wallet: f.operator, address: c.cashier, abi: cashierAbi, functionName: deposit ? 'settleDeposit' : 'settleWithdrawal', args: [rng.pick(ids)] }));
    }
    case 'vaultDeposit':
      return mined(await send(v, { wallet: user.wallet, address: v.perp.contracts.marginVault, abi: marginVaultAbi, functionName: 'deposit', args: [usdc(rng.int(100, 30_000) / 100)] }));
    case 'vaultWithdraw':
      return mined(
        await send(v, {
          wallet: v.perpOperator,
          address: v.perp.contracts.marginVault,
          abi: marginVaultAbi,
          functionName: 'withdraw',
          args: [user.address, usdc(rng.int(100, 2_000) / 100), toHex(rng.u32(), { size: 32 })],
        }),
      );
    case 'mine': {
      const n = rng.int(1, 3);
      await f.testClient.mine({ blocks: n });
      return n;
    }
  }
}

/** A replacement transaction for `anvil_reorg`: [request, block offset within the new blocks]. */
export type ReorgTx = [{ from: Address; to: Address; data: Hex; gas: Hex }, number];

/**
 * Random user transactions for the replacement blocks of an `anvil_reorg` of `depth` blocks (sent
 * unsimulated: anvil signs them with its dev keys; one that reverts on the new branch is mined as a
 * revert and logs nothing, which the indexer must cope with too).
 */
export function reorgTxs(v: Venue, rng: Rng, depth: number, count: number, deadline: number): ReorgTx[] {
  const c = v.f.deployment.contracts;
  const out: ReorgTx[] = [];
  for (let i = 0; i < count; i++) {
    const user = rng.pick(v.f.users);
    const gas = toHex(800_000);
    const offset = rng.int(0, depth - 1);
    const k = rng.int(0, 2);
    if (k === 0) {
      out.push([{ from: user.address, to: c.stockRouter, data: encodeFunctionData({ abi: stockRouterAbi, functionName: 'deposit', args: [c.cashToken, usdc(rng.int(100, 9_999) / 100)] }), gas }, offset]);
    } else if (k === 1) {
      out.push([{ from: user.address, to: v.perp.contracts.marginVault, data: encodeFunctionData({ abi: marginVaultAbi, functionName: 'deposit', args: [usdc(rng.int(100, 9_999) / 100)] }), gas }, offset]);
    } else {
      const args = [rng.pick(v.stocks), rng.int(0, 1), shares(rng.int(10, 200)), price(rng.int(5_000, 15_000)), 0, deadline] as const;
      out.push([{ from: user.address, to: c.stockRouter, data: encodeFunctionData({ abi: stockRouterAbi, functionName: 'placeLimitOrder', args }), gas }, offset]);
    }
  }
  // anvil takes the pairs in order; keep each sender's nonces ascending with the blocks.
  return out.sort((a, b) => a[1] - b[1]);
}

/**
 * One-off set-up on the base chain: every demo wallet approves the router (cash and each stock) and
 * the MarginVault for good, has cash and stock on the exchange, and collateral in the vault.
 */
export async function prepareWallets(v: Venue): Promise<void> {
  const { f } = v;
  const c = f.deployment.contracts;
  for (const u of f.users) {
    const calls: Call[] = [
      { wallet: u.wallet, address: c.cashToken, abi: cashTokenAbi, functionName: 'approve', args: [c.stockRouter, maxUint256] },
      { wallet: u.wallet, address: c.cashToken, abi: cashTokenAbi, functionName: 'approve', args: [v.perp.contracts.marginVault, maxUint256] },
      ...v.stocks.map((s) => ({ wallet: u.wallet, address: s, abi: stockAbi as Abi, functionName: 'approve', args: [c.stockRouter, maxUint256] })),
      { wallet: u.wallet, address: c.stockRouter, abi: stockRouterAbi, functionName: 'deposit', args: [c.cashToken, usdc(20_000)] },
      ...v.stocks.map((s) => ({ wallet: u.wallet, address: c.stockRouter, abi: stockRouterAbi as Abi, functionName: 'depositStock', args: [s, shares(3_000)] })),
      { wallet: u.wallet, address: v.perp.contracts.marginVault, abi: marginVaultAbi, functionName: 'deposit', args: [usdc(1_000)] },
    ];
    for (const call of calls) {
      if (!(await send(v, call))) throw new Error(`set-up call ${call.functionName} refused`);
    }
  }
}

// --------------------------------------------------------- indexed state

export const INDEXERS = ['stock', 'perp'] as const;

/** Every address the two indexers follow (lower case). */
export function followedAddresses(v: Venue): Address[] {
  const c = v.f.deployment.contracts;
  return [c.stockRouter, c.cashier, c.oneClickRouter, ...Object.values(c.stocks), v.perp.contracts.marginVault].map((a) => a.toLowerCase() as Address);
}

type Row = Record<string, unknown>;

function canon(rows: Row[], drop: readonly string[] = []): string[] {
  return rows
    .map((r) => {
      const o: Row = {};
      for (const k of Object.keys(r).sort()) if (!drop.includes(k)) o[k] = typeof r[k] === 'bigint' ? String(r[k]) : r[k];
      return JSON.stringify(o);
    })
    .sort();
}

/**
 * What the indexers wrote, table by table, as sorted canonical rows. Left out: `chain_blocks` (which
 * blocks a follower keeps depends on its batch boundaries; checked against the chain instead) and
 * a position's `block_number` / `updated_at` (the block its balances were read at: the end of the
 * batch that last touched it, so it depends on the batches; the balances themselves must agree).
 */
export async function indexedState(db: Db): Promise<Record<string, string[]>> {
  const k = db.kysely;
  return {
    checkpoints: canon(await k.selectFrom('indexer_checkpoints').select(['name', 'block_number', 'block_hash']).execute()),
    chain_events: canon(await k.selectFrom('chain_events').selectAll().execute()),
    stock_orders: canon(await k.selectFrom('stock_orders').selectAll().execute()),
    stock_order_fills: canon(await k.selectFrom('stock_order_fills').selectAll().execute()),
    stock_cash_operations: canon(await k.selectFrom('stock_cash_operations').selectAll().execute()),
    stock_operations: canon(await k.selectFrom('stock_operations').selectAll().execute()),
    stock_positions: canon(await k.selectFrom('stock_positions').selectAll().execute(), ['block_number', 'updated_at']),
    perp_collateral_events: canon(await k.selectFrom('perp_collateral_events').selectAll().execute()),
  };
}

/** The highest block any indexed event, stored block or checkpoint of `db` names. */
export async function highestIndexedBlock(db: Db): Promise<number> {
  const k = db.kysely;
  const [ev, cp] = await Promise.all([
    k.selectFrom('chain_events').select((eb) => eb.fn.max('block_number').as('n')).executeTakeFirst(),
    k.selectFrom('indexer_checkpoints').select((eb) => eb.fn.max('block_number').as('n')).executeTakeFirst(),
  ]);
  return Math.max(Number(ev?.n ?? -1), Number(cp?.n ?? -1));
}
