/**
 * Helpers for the executor's integration tests: a quote source holding fixed quotes (the chain is
 * real, the market data is whatever the test says), a logger whose lines the test can read, a
 * fresh SQLite database, and order placement through the real StockRouter.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { parseEventLogs, type Address, type TransactionReceipt } from 'viem';
import { stockRouterAbi } from '../../src/chain/abi/generated/index.ts';
import type { Quote, QuoteReader } from '../../src/marketdata/market-types.ts';
import { createLogger, type Logger } from '../../src/lib/logger.ts';
import type { Db } from '../../src/storage/database.ts';
import { openTestSqlite } from '../support/test-databases.ts';
import type { ChainFixture, ChainUser } from '../support/chain-fixture.ts';
import { createStockExecutor, type StockExecutor, type StockExecutorOptions } from '../../src/stock/executor/stock-executor.ts';
import { createMarketCalendar } from '../../src/marketdata/market-calendar.ts';
import type { ChainOrder } from '../../src/stock/executor/fill-policy.ts';
import { accountLensAbi } from '../../src/chain/abi/generated/index.ts';
import { startAnvil, type AnvilHandle } from '../../src/chain/anvil-process.ts';
import { ANVIL_CHAIN_ID, DEMO_WALLETS } from '../../src/chain/anvil-accounts.ts';
import { deployDemoStack, testWallet } from '../support/chain-fixture.ts';
import { ANY_BUY_PRICE, ANY_SELL_PRICE } from '../chain/chain-test-helpers.ts';

export interface FixedQuotes extends QuoteReader {
  set(symbol: string, bid: string, ask: string): void;
  remove(symbol: string): void;
}

/** Quotes that stay what the test set; each read is stamped with the clock, so they never go stale. */
export function fixedQuotes(now: () => number = Date.now): FixedQuotes {
  const quotes = new Map<string, { bid: string; ask: string }>();
  return {
    set: (symbol, bid, ask) => void quotes.set(symbol, { bid, ask }),
    remove: (symbol) => void quotes.delete(symbol),
    getQuote(symbol): Quote | undefined {
      const q = quotes.get(symbol);
      return q && { symbol, bid: q.bid, ask: q.ask, last: q.bid, timestamp: now() };
    },
  };
}

export interface CapturedLogger {
  logger: Logger;
  lines: () => Array<Record<string, unknown>>;
  messages: (msg: string) => Array<Record<string, unknown>>;
}

export function captureLogger(): CapturedLogger {
  const raw: string[] = [];
  const destination = new Writable({
    write(chunk, _enc, cb) {
      raw.push(...String(chunk).split('\n').filter(Boolean));
      cb();
    },
  });
  const logger = createLogger({ level: 'debug', destination });
  const lines = () => raw.map((l) => JSON.parse(l) as Record<string, unknown>);
  return { logger, lines, messages: (msg) => lines().filter((l) => l.msg === msg) };
}

export async function openDb(): Promise<Db> {
  return openTestSqlite();
}

export interface ExecutorHarness {
  executor: StockExecutor;
  quotes: FixedQuotes;
  log: CapturedLogger;
  clock: { now: number };
}

/** An executor on the fixture's chain with fixed quotes and a settable clock (real time by default). */
export function makeExecutor(
  f: Pick<ChainFixture, 'publicClient' | 'operator' | 'deployment'>,
  db: Db,
  over: Partial<StockExecutorOptions> & { clock?: { now: number } } = {},
): ExecutorHarness {
  const clock = over.clock ?? { now: 0 };
  const now = () => (clock.now === 0 ? Date.now() : clock.now);
  const quotes = (over.quotes as FixedQuotes | undefined) ?? fixedQuotes(now);
  const log = captureLogger();
  const executor = createStockExecutor({
    db,
    publicClient: f.publicClient,
    walletClient: f.operator,
    deployment: f.deployment,
    quotes,
    calendar: createMarketCalendar('always-open'),
    logger: log.logger,
    tickMs: 50,
    now,
    ...over,
  });
  return { executor, quotes, log, clock };
}

// ------------------------------------------------------------------ orders

export async function sendAndConfirm(f: Pick<ChainFixture, 'publicClient'>, hash: Promise<`0x${string}`>): Promise<TransactionReceipt> {
  const receipt = await f.publicClient.waitForTransactionReceipt({ hash: await hash });
  if (receipt.status !== 'success') throw new Error('transaction reverted');
  return receipt;
}

export function orderIdOf(receipt: TransactionReceipt): bigint {
  const [placed] = parseEventLogs({ abi: stockRouterAbi, eventName: 'OrderPlaced', logs: receipt.logs });
  return placed.args.orderId;
}

/** Places an order of `user` with a fixed gas limit (no estimate to race the tests' blocks) and answers its id. */
async function placeOrder(
  f: Pick<ChainFixture, 'publicClient' | 'deployment'>,
  user: ChainUser,
  functionName: 'placeMarketOrder' | 'placeLimitOrder',
  args: readonly unknown[],
): Promise<bigint> {
  const receipt = await sendAndConfirm(
    f,
    user.wallet.writeContract({ address: f.deployment.contracts.stockRouter, abi: stockRouterAbi, functionName, args, gas: 400_000n } as never),
  );
  return orderIdOf(receipt);
}

export async function placeMarket(
  f: Pick<ChainFixture, 'publicClient' | 'deployment'>,
  user: ChainUser,
  stock: Address,
  side: 0 | 1,
  amount: bigint,
  deadline: number,
): Promise<bigint> {
  return placeOrder(f, user, 'placeMarketOrder', side === 0 ? [stock, 0, 0n, amount, ANY_BUY_PRICE, deadline] : [stock, 1, amount, 0n, ANY_SELL_PRICE, deadline]);
}

export async function placeLimit(
  f: Pick<ChainFixture, 'publicClient' | 'deployment'>,
  user: ChainUser,
  stock: Address,
  side: 0 | 1,
  quantity: bigint,
  price: bigint,
  deadline: number,
): Promise<bigint> {
  return placeOrder(f, user, 'placeLimitOrder', [stock, side, quantity, price, 0, deadline]);
}

export async function cancelLimit(f: Pick<ChainFixture, 'publicClient' | 'deployment'>, user: ChainUser, orderId: bigint): Promise<void> {
  await sendAndConfirm(
    f,
    user.wallet.writeContract({ address: f.deployment.contracts.stockRouter, abi: stockRouterAbi, functionName: 'cancelLimitOrder', args: [orderId] }),
  );
}

export async function readOrders(f: Pick<ChainFixture, 'publicClient' | 'deployment'>, ids: bigint[]): Promise<ChainOrder[]> {
  return [
    ...((await f.publicClient.readContract({
      address: f.deployment.contracts.accountLens,
      abi: accountLensAbi,
      functionName: 'getOrders',
      args: [ids],
    })) as readonly ChainOrder[]),
  ];
}

/** The StockRouter's `eventName` events from `fromBlock` on. */
function routerEvents<E extends 'OrderFilled' | 'OrderClosed'>(f: Pick<ChainFixture, 'publicClient' | 'deployment'>, eventName: E, fromBlock: bigint) {
  return f.publicClient.getContractEvents({ address: f.deployment.contracts.stockRouter, abi: stockRouterAbi, eventName, fromBlock });
}

export async function fillEvents(f: Pick<ChainFixture, 'publicClient' | 'deployment'>, fromBlock = 0n) {
  return routerEvents(f, 'OrderFilled', fromBlock);
}

export async function closeEvents(f: Pick<ChainFixture, 'publicClient' | 'deployment'>, fromBlock = 0n) {
  return routerEvents(f, 'OrderClosed', fromBlock);
}

/** Runs ticks until `done()` or the time is up. */
export async function tickUntil(executor: StockExecutor, done: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error('tickUntil: condition not reached in time');
    await executor.runOnce();
  }
}

export async function waitFor(cond: () => Promise<boolean>, timeoutMs = 20_000, pollMs = 50): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await cond()) return;
    } catch {
      // the chain may be down for a moment
    }
    if (Date.now() > deadline) throw new Error('waitFor: condition not reached in time');
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

// ------------------------------------------------------------------ a chain that can go away

export interface RestartableChain {
  publicClient: ChainFixture['publicClient'];
  operator: ChainFixture['operator'];
  deployment: ChainFixture['deployment'];
  users: ChainUser[];
  /** SIGTERM: anvil dumps its state and the RPC stops answering. */
  down(): Promise<void>;
  /** anvil again on the same port from the dumped state. */
  up(): Promise<void>;
  stop(): Promise<void>;
}

/** anvil with a state file on a fixed port and the stack deployed, so it can be stopped and brought back. */
export async function startRestartableChain(): Promise<RestartableChain> {
  const dir = mkdtempSync(join(tmpdir(), 'tokex-exec-outage-'));
  const stateFile = join(dir, 'anvil-state.json');
  let anvil: AnvilHandle = await startAnvil({ port: 0, stateFile });
  const port = anvil.port;
  // Fixed quotes without price feeds; the deployer's key settles here.
  const { chain, publicClient, operator, deployment } = await deployDemoStack(anvil.rpcUrl, ANVIL_CHAIN_ID, 1_000);
  const users = DEMO_WALLETS.map((w) => ({
    address: w.address,
    privateKey: w.privateKey,
    wallet: testWallet(w.privateKey, chain, anvil.rpcUrl),
  }));
  return {
    publicClient,
    operator,
    deployment,
    users,
    down: () => anvil.stop(),
    async up() {
      anvil = await startAnvil({ port, stateFile });
    },
    async stop() {
      await anvil.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
