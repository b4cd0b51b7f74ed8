/**
 * Executor throughput: on a fresh anvil with the stack deployed, several funded users place
 * `orders` orders (locally signed transactions with locally managed nonces, sent back to back),
 * then the executor settles all of them and the settlement alone is timed.
 *
 *   npx tsx bench/executor-bench.ts [orders] [batchSize]     (or BENCH_ORDERS / EXECUTOR_BATCH_SIZE;
 *                                                            EXECUTOR_SIMULATE_FIRST=1 to simulate every batch)
 *
 * `runExecutorBench()` is exported for the main bench; `prepareExecutorVenue()` (a funded venue with
 * its executor, orders placed and settled in rounds) for bench/upgrade-bench.ts, which settles two
 * deployments side by side on one chain.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { encodeFunctionData, parseAbi, parseUnits, type Address, type Hex } from 'viem';
import { accountLensAbi, cashTokenAbi, stockAbi, stockRouterAbi } from '../src/chain/abi/generated/index.ts';
import { ANVIL_ACCOUNTS, ANVIL_CHAIN_ID, OPERATOR_ACCOUNT } from '../src/chain/anvil-accounts.ts';
import { startAnvil } from '../src/chain/anvil-process.ts';
import { createChainClients, type ChainPublicClient, type ChainWalletClient } from '../src/chain/chain-client.ts';
import { deployStack, type Deployment, type StockListing } from '../src/chain/deploy-contracts.ts';
import { createStockExecutor } from '../src/stock/executor/stock-executor.ts';
import { OrderStatus, type ChainOrder } from '../src/stock/executor/fill-policy.ts';
import { createLogger } from '../src/lib/logger.ts';
import { createMarketCalendar } from '../src/marketdata/market-calendar.ts';
import type { Quote, QuoteReader } from '../src/marketdata/market-types.ts';
import { DEMO_SYMBOLS } from '../src/marketdata/symbol-catalog.ts';
import { openDatabase } from '../src/storage/database.ts';
import { sendAll, Signer } from './bench-chain.ts';

export interface ExecutorBenchOptions {
  /** Orders to place and settle. Default 5000. */
  orders?: number;
  /** Funded users placing them (anvil accounts 0..8). Default 8. */
  users?: number;
  /** Orders per settleOrders transaction. Default 200 (the executor's default). */
  batchSize?: number;
  /** Simulate every batch before sending it (the executor's `simulateFirst`). Default false. */
  simulateFirst?: boolean;
  /** Progress lines. Default console.log. */
  print?: (line: string) => void;
  /**
   * Deploys the venue the orders go to. Default: this release's deployStack (behind proxies); an
   * earlier release's deployment (test/support/legacy-venue.ts) fits too. Each demo wallet must
   * get cash and every stock in its wallet, as deployStack's defaults give it.
   */
  deploy?: (params: { publicClient: ChainPublicClient; walletClient: ChainWalletClient; symbols: readonly StockListing[]; demoWallets: Address[] }) => Promise<Deployment>;
  /** Names the deployment in the progress lines. */
  label?: string;
}

export interface ExecutorBenchResult {
  orders: number;
  users: number;
  placeMs: number;
  settleMs: number;
  ordersPerSecond: number;
  batchSize: number;
  transactions: number;
  ticks: number;
  gasPerOrder: number;
  /** Final statuses after the run (all Filled when everything went right). */
  statuses: Record<string, number>;
}

/** A market order's worst price that never binds: the bench fills at prices of its choosing. */
const ANY_BUY_PRICE = 10n ** 27n;
/** The market order of releases before 0.2.0 (no worst price). */
const LEGACY_MARKET_ORDER = parseAbi(['function placeMarketOrder(address stock, uint8 side, uint256 quantity, uint256 notional, uint32 deadline) returns (uint256)']);
const ANY_SELL_PRICE = 1n;
const BASE: Record<string, { bid: string; ask: string }> = {
  AAPL: { bid: '189.99', ask: '190.01' },
  TSLA: { bid: '244.95', ask: '245.05' },
  NVDA: { bid: '129.98', ask: '130.02' },
  MSFT: { bid: '419.90', ask: '420.10' },
  SPY: { bid: '549.97', ask: '550.03' },
};

const fixedQuotes: QuoteReader = {
  getQuote(symbol): Quote | undefined {
    const q = BASE[symbol];
    return q && { symbol, bid: q.bid, ask: q.ask, last: q.bid, timestamp: Date.now() };
  },
};

type DeployVenue = NonNullable<ExecutorBenchOptions['deploy']>;

/** The users' signers, shared by every venue on the chain (one nonce counter per account); `chainId` is the anvil's. */
export async function openSigners(publicClient: ChainPublicClient, users: number, chainId = ANVIL_CHAIN_ID): Promise<Signer[]> {
  const fees = await publicClient.estimateFeesPerGas();
  return Promise.all(
    ANVIL_ACCOUNTS.slice(0, Math.min(users, 9)).map((a) =>
      // A generous fee cap: thousands of placements in full blocks push the base fee up fast.
      new Signer(publicClient, a, { maxFeePerGas: fees.maxFeePerGas! * 500n, maxPriorityFeePerGas: fees.maxPriorityFeePerGas! }, chainId).init(),
    ),
  );
}

export interface SettleRound {
  /** Orders closed by this settlement. */
  orders: number;
  settleMs: number;
  transactions: number;
  ticks: number;
  /** Gas of every block mined while settling (only settlements are mined then). */
  gasUsed: bigint;
}

/**
 * A venue on a chain with its users funded and an executor of its own: orders are placed in as many
 * rounds as the caller wants and each round settled and timed alone. runExecutorBench uses one
 * venue and one round; bench/upgrade-bench.ts two venues on one chain, rounds alternating.
 */
export interface ExecutorVenue {
  deployment: Deployment;
  /** Orders placed so far. */
  readonly placed: number;
  /** Signs and sends `count` more orders (the same mix, continued), mined before it answers. */
  place(count: number): Promise<{ placeMs: number }>;
  /** Runs the executor until every order placed so far is closed. */
  settle(): Promise<SettleRound>;
  /** Every placed order's status on chain, counted by name. */
  statuses(): Promise<Record<string, number>>;
  close(): Promise<void>;
}

export async function prepareExecutorVenue(params: {
  rpcUrl: string;
  publicClient: ChainPublicClient;
  walletClient: ChainWalletClient;
  signers: Signer[];
  deploy?: DeployVenue;
  batchSize: number;
  simulateFirst?: boolean;
  sqlitePath: string;
  /** Market orders carry a worst price (default true; false for a venue of a release before 0.2.0). */
  marketWorstPrice?: boolean;
}): Promise<ExecutorVenue> {
  const { rpcUrl, publicClient, signers } = params;
  const withWorst = params.marketWorstPrice ?? true;
  const deployment = await (params.deploy ?? deployStack)({
    publicClient,
    walletClient: params.walletClient,
    symbols: DEMO_SYMBOLS,
    demoWallets: signers.map((s) => s.address),
    // Fixed quotes without price feeds (an earlier release's deploy ignores the option).
    options: { requireOracle: false, deployerOperator: true },
  });
  const c = deployment.contracts;
  const symbols = Object.keys(c.stocks);

  // Funding: 50,000 USDC into the exchange (instant, inside the credit buffer) and 50 shares of every stock.
  const cash = parseUnits('50000', 6);
  const funding: Hex[] = [];
  for (const s of signers) {
    funding.push(await s.sign(c.cashToken, encodeFunctionData({ abi: cashTokenAbi, functionName: 'approve', args: [c.stockRouter, cash] })));
    funding.push(await s.sign(c.stockRouter, encodeFunctionData({ abi: stockRouterAbi, functionName: 'deposit', args: [c.cashToken, cash] })));
    for (const sym of symbols) {
      const stock = c.stocks[sym];
      const amount = parseUnits('50', 18);
      funding.push(await s.sign(stock, encodeFunctionData({ abi: stockAbi, functionName: 'approve', args: [c.stockRouter, amount] })));
      funding.push(await s.sign(c.stockRouter, encodeFunctionData({ abi: stockRouterAbi, functionName: 'depositStock', args: [stock, amount] })));
    }
  }
  await sendAll(rpcUrl, publicClient, funding, 500, 'executor bench');

  const db = await openDatabase({ sqlitePath: params.sqlitePath });
  const executor = createStockExecutor({
    db,
    publicClient,
    walletClient: params.walletClient,
    deployment,
    quotes: fixedQuotes,
    calendar: createMarketCalendar('always-open'),
    logger: createLogger({ level: process.env.LOG_LEVEL ?? 'warn' }),
    batchSize: params.batchSize,
    simulateFirst: params.simulateFirst,
  });
  let placed = 0;
  let closed = 0;
  return {
    deployment,
    get placed() {
      return placed;
    },
    async place(count) {
      // Orders, round robin over the users: market buys, market sells, and limit buys and sells
      // whose limits the quotes cross.
      const block = await publicClient.getBlock();
      const deadline = Number(block.timestamp) + 3_600;
      const started = performance.now();
      const orders: Hex[] = [];
      for (let n = placed; n < placed + count; n++) {
        const sym = symbols[n % symbols.length];
        const stock = c.stocks[sym];
        const kind = Math.floor(n / signers.length) % 10;
        let data: Hex;
        if (kind < 4) {
          data = withWorst
            ? encodeFunctionData({ abi: stockRouterAbi, functionName: 'placeMarketOrder', args: [stock, 0, 0n, parseUnits('20', 18), ANY_BUY_PRICE, deadline] })
            : encodeFunctionData({ abi: LEGACY_MARKET_ORDER, functionName: 'placeMarketOrder', args: [stock, 0, 0n, parseUnits('20', 18), deadline] });
        } else if (kind < 7) {
          data = withWorst
            ? encodeFunctionData({ abi: stockRouterAbi, functionName: 'placeMarketOrder', args: [stock, 1, parseUnits('0.05', 18), 0n, ANY_SELL_PRICE, deadline] })
            : encodeFunctionData({ abi: LEGACY_MARKET_ORDER, functionName: 'placeMarketOrder', args: [stock, 1, parseUnits('0.05', 18), 0n, deadline] });
        } else if (kind < 9) {
          const limit = parseUnits(BASE[sym].ask, 18) + parseUnits('1', 18);
          data = encodeFunctionData({ abi: stockRouterAbi, functionName: 'placeLimitOrder', args: [stock, 0, parseUnits('0.1', 18), limit, 0, deadline] });
        } else {
          const limit = parseUnits(BASE[sym].bid, 18) - parseUnits('1', 18);
          data = encodeFunctionData({ abi: stockRouterAbi, functionName: 'placeLimitOrder', args: [stock, 1, parseUnits('0.05', 18), limit, 0, deadline] });
        }
        orders.push(await signers[n % signers.length].sign(c.stockRouter, data));
      }
      await sendAll(rpcUrl, publicClient, orders, 500, 'executor bench');
      placed += count;
      const next = await publicClient.readContract({ address: c.stockRouter, abi: stockRouterAbi, functionName: 'nextOrderId' });
      if (next - 1n !== BigInt(placed)) throw new Error(`executor bench: ${placed} placed but nextOrderId is ${next}`);
      return { placeMs: performance.now() - started };
    },
    async settle() {
      const before = await publicClient.getBlockNumber();
      const started = performance.now();
      const closedBefore = closed;
      let transactions = 0;
      let ticks = 0;
      while (closed < placed) {
        const r = await executor.runOnce();
        ticks++;
        closed += r.closed;
        transactions += r.transactions;
        if (r.settled === 0 && r.open === 0) break;
        if (ticks > 1_000) throw new Error('executor bench: not settled after 1000 ticks');
      }
      const settleMs = performance.now() - started;
      let gasUsed = 0n;
      const latest = await publicClient.getBlockNumber();
      for (let b = before + 1n; b <= latest; b++) gasUsed += (await publicClient.getBlock({ blockNumber: b })).gasUsed;
      return { orders: closed - closedBefore, settleMs, transactions, ticks, gasUsed };
    },
    async statuses() {
      const statuses: Record<string, number> = {};
      const ids = Array.from({ length: placed }, (_, i) => BigInt(i + 1));
      // 500 ids a call, as the executor reads them: an eth_call's memory grows with the square of the
      // orders it returns (1,000 cost 17 M gas once getOrder also reads the stock's split multiplier).
      for (let i = 0; i < ids.length; i += 500) {
        const orders = (await publicClient.readContract({ address: c.accountLens, abi: accountLensAbi, functionName: 'getOrders', args: [ids.slice(i, i + 500)] })) as readonly ChainOrder[];
        for (const o of orders) {
          const name = Object.entries(OrderStatus).find(([, v]) => v === o.status)![0];
          statuses[name] = (statuses[name] ?? 0) + 1;
        }
      }
      return statuses;
    },
    async close() {
      await executor.stop();
      await db.close();
    },
  };
}

export async function runExecutorBench(opts: ExecutorBenchOptions = {}): Promise<ExecutorBenchResult> {
  const total = opts.orders ?? 5_000;
  const batchSize = opts.batchSize ?? 200;
  const print = opts.print ?? ((line: string) => console.log(line));
  const name = opts.label ? `executor bench (${opts.label})` : 'executor bench';
  const anvil = await startAnvil({ chainId: ANVIL_CHAIN_ID });
  const dir = mkdtempSync(join(tmpdir(), 'tokex-exec-bench-'));
  try {
    const { publicClient, walletClient } = createChainClients({
      rpcUrl: anvil.rpcUrl,
      chainId: ANVIL_CHAIN_ID,
      operatorPrivateKey: OPERATOR_ACCOUNT.privateKey,
      pollingIntervalMs: 20,
      timeoutMs: 30_000,
    });
    const signers = await openSigners(publicClient, opts.users ?? 8);
    const venue = await prepareExecutorVenue({
      rpcUrl: anvil.rpcUrl,
      publicClient,
      walletClient: walletClient!,
      signers,
      deploy: opts.deploy,
      batchSize,
      simulateFirst: opts.simulateFirst,
      sqlitePath: join(dir, 'bench.sqlite'),
    });
    const { placeMs } = await venue.place(total);
    print(`${name}: ${total} orders placed by ${signers.length} users in ${(placeMs / 1000).toFixed(1)} s (${Math.round(total / (placeMs / 1000))} tx/s, signing included)`);

    // Settlement, timed.
    let round: SettleRound;
    let statuses: Record<string, number>;
    try {
      round = await venue.settle();
      // Check the outcome on chain.
      statuses = await venue.statuses();
    } finally {
      await venue.close();
    }
    const { orders: closed, settleMs, transactions, ticks, gasUsed } = round;

    const result: ExecutorBenchResult = {
      orders: closed,
      users: signers.length,
      placeMs: Math.round(placeMs),
      settleMs: Math.round(settleMs),
      ordersPerSecond: Math.round(closed / (settleMs / 1000)),
      batchSize,
      transactions,
      ticks,
      gasPerOrder: closed > 0 ? Number(gasUsed / BigInt(closed)) : 0,
      statuses,
    };
    print(
      `${name}: settled ${result.orders} orders in ${(settleMs / 1000).toFixed(2)} s = ${result.ordersPerSecond} orders/s ` +
        `(batch size ${batchSize}, ${transactions} settleOrders transactions, ${ticks} ticks, ~${result.gasPerOrder} gas/order` +
        `${opts.simulateFirst ? ', every batch simulated first' : ''})`,
    );
    print(`${name}: final statuses ${JSON.stringify(statuses)}`);
    return result;
  } finally {
    await anvil.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const orders = Number(process.argv[2] ?? process.env.BENCH_ORDERS ?? 5_000);
  const batchSize = Number(process.argv[3] ?? process.env.EXECUTOR_BATCH_SIZE ?? 200);
  const simulateFirst = ['1', 'true'].includes(process.env.EXECUTOR_SIMULATE_FIRST ?? '');
  runExecutorBench({ orders, batchSize, simulateFirst }).then(
    (r) => {
      if (r.statuses.Filled !== r.orders) process.exitCode = 1;
    },
    (err) => {
      console.error(err);
      process.exitCode = 1;
    },
  );
}
