import { beforeEach, expect } from 'vitest';
import {
  BaseError,
  ContractFunctionRevertedError,
  parseUnits,
  type Account,
  type Address,
  type ContractFunctionName,
  type Hash,
  type TransactionReceipt,
} from 'viem';
import {
  accountLensAbi,
  cashierAbi,
  cashTokenAbi,
  stockAbi,
  stockRouterAbi,
} from '../../src/chain/abi/generated/index.ts';
import { ORACLE_PUBLISHER_ACCOUNT } from '../../src/chain/anvil-accounts.ts';
import { toChainError } from '../../src/chain/chain-client.ts';
import { ensurePriceFeeds } from '../../src/chain/deploy-contracts.ts';
import { ChainRevertError } from '../../src/errors/app-error.ts';
import type { ChainFixture, ChainUser } from '../support/chain-fixture.ts';

export const usdc = (v: string): bigint => parseUnits(v, 6);
export const musd = (v: string): bigint => parseUnits(v, 18);
export const shares = (v: string): bigint => parseUnits(v, 18);
export const price = (v: string): bigint => parseUnits(v, 18);

export const Side = { Buy: 0, Sell: 1 } as const;
export const OrderType = { Market: 0, Limit: 1 } as const;
export const OrderStatus = { None: 0, Open: 1, Canceling: 2, Filled: 3, Canceled: 4, Expired: 5, Rejected: 6 } as const;
export const DAY = 0;
/**
 * A market order's worst price that never binds (the tests that fill at prices of their choosing):
 * a buy's far above any fill, a sell's one wei.
 */
export const ANY_BUY_PRICE = parseUnits('1000000000', 18);
export const ANY_SELL_PRICE = 1n;

/** `placeMarketOrder`'s arguments as before the worst price, with one that never binds added. */
export function withAnyWorstPrice(args: readonly unknown[]): readonly unknown[] {
  if (args.length !== 5) return args;
  const worst = Number(args[1]) === 0 ? ANY_BUY_PRICE : ANY_SELL_PRICE;
  return [...args.slice(0, 4), worst, args[4]];
}

export const ceilDiv = (a: bigint, b: bigint): bigint => (a + b - 1n) / b;

/** Waits for the transaction and asserts it succeeded. */
export async function confirm(f: ChainFixture, hash: Promise<Hash> | Hash): Promise<TransactionReceipt> {
  const receipt = await f.publicClient.waitForTransactionReceipt({ hash: await hash });
  if (receipt.status !== 'success') {
    // Say why: an out-of-gas (a limit estimated at one block's time, mined at another's) reads
    // like any other revert in the receipt.
    const tx = await f.publicClient.getTransaction({ hash: receipt.transactionHash });
    const trace = await f.publicClient
      .request({ method: 'debug_traceTransaction' as never, params: [receipt.transactionHash, { tracer: 'callTracer' }] as never })
      .catch(() => undefined);
    const errors = JSON.stringify(trace ?? {}).match(/"error":"[^"]*"/g) ?? [];
    expect.fail(`transaction ${receipt.transactionHash} reverted: gas limit ${tx.gas}, used ${receipt.gasUsed}; ${errors.join(', ')}`);
  }
  expect(receipt.status).toBe('success');
  return receipt;
}

/**
 * Asserts that `call` (a simulate/estimate/write against the StockRouter ABI) reverts with the
 * custom error `errorName`, decoded by viem with the ABI the call was made with, and optionally
 * with `args`. Also checks that `toChainError` maps it to a ChainRevertError of that name.
 */
export async function expectRevert(call: () => Promise<unknown>, errorName: string, args?: readonly unknown[]): Promise<void> {
  let caught: unknown;
  try {
    await call();
  } catch (err) {
    caught = err;
  }
  expect(caught, `expected a revert with ${errorName}`).toBeInstanceOf(BaseError);
  const reverted = (caught as BaseError).walk((e) => e instanceof ContractFunctionRevertedError) as ContractFunctionRevertedError | null;
  expect(reverted, `no ContractFunctionRevertedError in ${(caught as BaseError).shortMessage}`).toBeTruthy();
  expect(reverted?.data?.errorName).toBe(errorName);
  if (args) expect(reverted?.data?.args ?? []).toEqual(args);
  const mapped = toChainError(caught);
  expect(mapped).toBeInstanceOf(ChainRevertError);
  expect((mapped as ChainRevertError).errorName).toBe(errorName);
}

export async function deadlineIn(f: ChainFixture, seconds: number): Promise<number> {
  const block = await f.publicClient.getBlock();
  return Number(block.timestamp) + seconds;
}

/** Before each test, `set` gets a deadline an hour past the chain's clock as that test finds it. */
export function deadlineEachTest(f: ChainFixture, set: (deadline: number) => void): void {
  beforeEach(async () => {
    set(await deadlineIn(f, 3600));
  });
}

export function contracts(f: ChainFixture) {
  return f.deployment.contracts;
}

export async function approveUsdc(f: ChainFixture, user: ChainUser, amount: bigint, spender?: Address): Promise<void> {
  const c = contracts(f);
  await confirm(
    f,
    user.wallet.writeContract({ address: c.cashToken, abi: cashTokenAbi, functionName: 'approve', args: [spender ?? c.stockRouter, amount] }),
  );
}

export async function approveStock(f: ChainFixture, user: ChainUser, stock: Address, amount: bigint): Promise<void> {
  await confirm(
    f,
    user.wallet.writeContract({ address: stock, abi: stockAbi, functionName: 'approve', args: [contracts(f).stockRouter, amount] }),
  );
}

/** Approves and deposits `amount` USDC for `user` through the router. */
export async function depositUsdc(f: ChainFixture, user: ChainUser, amount: bigint): Promise<TransactionReceipt> {
  await approveUsdc(f, user, amount);
  return confirm(
    f,
    user.wallet.writeContract({ address: contracts(f).stockRouter, abi: stockRouterAbi, functionName: 'deposit', args: [contracts(f).cashToken, amount] }),
  );
}

export async function depositStock(f: ChainFixture, user: ChainUser, stock: Address, amount: bigint): Promise<void> {
  await approveStock(f, user, stock, amount);
  await confirm(
    f,
    user.wallet.writeContract({ address: contracts(f).stockRouter, abi: stockRouterAbi, functionName: 'depositStock', args: [stock, amount] }),
  );
}

export async function mUsdOf(f: ChainFixture, user: Address): Promise<{ free: bigint; locked: bigint }> {
  const c = contracts(f);
  const [free, locked] = await Promise.all([
    f.publicClient.readContract({ address: c.cashier, abi: cashierAbi, functionName: 'balanceOf', args: [user] }),
    f.publicClient.readContract({ address: c.cashier, abi: cashierAbi, functionName: 'lockedOf', args: [user] }),
  ]);
  return { free, locked };
}

export async function stockOf(
  f: ChainFixture,
  stock: Address,
  user: Address,
): Promise<{ wallet: bigint; exchange: bigint; locked: bigint }> {
  const account = await f.publicClient.readContract({
    address: contracts(f).accountLens,
    abi: accountLensAbi,
    functionName: 'getAccount',
    args: [user, [stock], [], '0x0000000000000000000000000000000000000000'],
  });
  const s = account.stocks[0];
  return { wallet: s.wallet, exchange: s.exchange, locked: s.locked };
}

export async function usdcOf(f: ChainFixture, who: Address): Promise<bigint> {
  return f.publicClient.readContract({ address: contracts(f).cashToken, abi: cashTokenAbi, functionName: 'balanceOf', args: [who] });
}

/** Asserts the Cashier invariant: tokens held (in mUSD) = Σ free + Σ locked + fees + queued both ways. */
export async function expectCashInvariant(f: ChainFixture, accounts: readonly Address[]): Promise<void> {
  const c = contracts(f);
  const read = <T>(functionName: 'feeBalance' | 'totalQueuedDeposits' | 'totalQueuedWithdrawals' | 'treasury') =>
    f.publicClient.readContract({ address: c.cashier, abi: cashierAbi, functionName }) as Promise<T>;
  const treasury = await read<Address>('treasury');
  const everyone = [...new Set([...accounts, treasury])];
  const balances = await Promise.all(everyone.map((a) => mUsdOf(f, a)));
  const userSum = balances.reduce((s, b) => s + b.free + b.locked, 0n);
  const [fees, queuedDeposits, queuedWithdrawals, held] = await Promise.all([
    read<bigint>('feeBalance'),
    read<bigint>('totalQueuedDeposits'),
    read<bigint>('totalQueuedWithdrawals'),
    usdcOf(f, c.cashier),
  ]);
  expect(held * 10n ** 12n).toBe(userSum + fees + queuedDeposits + queuedWithdrawals);
}

/** Asserts a Stock's own ERC-20 balance equals the sum of the accounts' exchange balances. */
export async function expectStockBacking(f: ChainFixture, stock: Address, accounts: readonly Address[]): Promise<void> {
  const held = await f.publicClient.readContract({ address: stock, abi: stockAbi, functionName: 'balanceOf', args: [stock] });
  const balances = await Promise.all(accounts.map((a) => stockOf(f, stock, a)));
  expect(held).toBe(balances.reduce((s, b) => s + b.exchange + b.locked, 0n));
}

export type RouterFn = ContractFunctionName<typeof stockRouterAbi, 'nonpayable'>;

/** Calls a router function as `user`; returns the receipt and the function's return value (from a simulation). */
export async function routerCall<T = unknown>(
  f: ChainFixture,
  user: ChainUser,
  functionName: RouterFn,
  args: readonly unknown[],
): Promise<{ receipt: TransactionReceipt; result: T }> {
  const sim = await f.publicClient.simulateContract({
    account: user.wallet.account,
    address: contracts(f).stockRouter,
    abi: stockRouterAbi,
    functionName,
    args,
  } as never);
  const receipt = await confirm(f, user.wallet.writeContract((sim as { request: unknown }).request as never));
  return { receipt, result: (sim as { result: T }).result };
}

export interface Fill {
  orderId: bigint;
  quantity: bigint;
  price: bigint;
}

export interface Close {
  orderId: bigint;
  status: number;
}

/**
 * The gas limit the tests give a settlement: its estimate and half again. An exact estimate runs
 * out of gas when the block it is mined in writes more than the estimate's did: a new hour of
 * operator activity, or a loss-budget window's first fill (zero-to-nonzero writes, 20,000 gas
 * each). The executor adds 30 %; a single fill of a budgeted stock in a fresh window used 28 %
 * more than its estimate in a loaded CI run, so the tests,
 * whose subject is not the margin, give more.
 */
export async function settlementGas(f: ChainFixture, from: Account, fills: Fill[], closes: Close[]): Promise<bigint> {
  const gas = await f.publicClient.estimateContractGas({ address: contracts(f).stockRouter, abi: stockRouterAbi, functionName: 'settleOrders', args: [fills, closes], account: from });
  return (gas * 15n) / 10n;
}

export async function settle(f: ChainFixture, fills: Fill[], closes: Close[]): Promise<TransactionReceipt> {
  const gas = await settlementGas(f, f.operator.account!, fills, closes);
  return confirm(
    f,
    f.operator.writeContract({ address: contracts(f).stockRouter, abi: stockRouterAbi, functionName: 'settleOrders', args: [fills, closes], gas }),
  );
}

/** The price feeds of a stock suite: the hub and each symbol's feed. */
export interface StockFeeds {
  hub: Address;
  feeds: Record<string, Address>;
}

/**
 * Price feeds for AAPL and TSLA with the router checking their fills against them (ensurePriceFeeds):
 * the well-known publisher granted, 1 % tolerance, answers valid for `maxAgeSeconds`.
 */
export async function setUpStockFeeds(f: ChainFixture, maxAgeSeconds: number): Promise<StockFeeds> {
  const { AAPL, TSLA } = contracts(f).stocks;
  const r = await ensurePriceFeeds({
    publicClient: f.publicClient,
    walletClient: f.operator,
    stockRouter: contracts(f).stockRouter,
    setup: { symbols: ['AAPL', 'TSLA'], stocks: { AAPL, TSLA }, publishers: [ORACLE_PUBLISHER_ACCOUNT.address], toleranceBps: 100, maxAgeSeconds },
  });
  return { hub: r!.hub!, feeds: r!.feeds };
}
