/**
 * Executor throughput: on a fresh anvil with the stack deployed, several funded users place
 * `orders` orders (locally signed transactions with locally managed nonces, sent back to back),
 * then the executor settles all of them and the settlement alone is timed.
 *
 *   npx tsx bench/executor-bench.ts [orders] [batchSize]     (or BENCH_ORDERS / EXECUTOR_BATCH_SIZE;
 *                                                            EXECUTOR_SIMULATE_FIRST=1 to simulate every batch)
 *
 * `runExecutorBench()` is exported for the main bench.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { encodeFunctionData, keccak256, parseUnits, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { accountLensAbi, cashTokenAbi, stockAbi, stockRouterAbi } from '../src/chain/abi/generated/index.ts';
import { ANVIL_ACCOUNTS, ANVIL_CHAIN_ID, OPERATOR_ACCOUNT, type DevAccount } from '../src/chain/anvil-accounts.ts';
import { startAnvil } from '../src/chain/anvil-process.ts';
import { createChainClients, type ChainPublicClient } from '../src/chain/chain-client.ts';
import { deployStack } from '../src/chain/deploy-contracts.ts';
import { createStockExecutor } from '../src/stock/executor/stock-executor.ts';
import { OrderStatus, type ChainOrder } from '../src/stock/executor/fill-policy.ts';
import { createLogger } from '../src/lib/logger.ts';
import { createMarketCalendar } from '../src/marketdata/market-calendar.ts';
import type { Quote, QuoteReader } from '../src/marketdata/market-types.ts';
import { DEMO_SYMBOLS } from '../src/marketdata/symbol-catalog.ts';
import { openDatabase } from '../src/storage/database.ts';

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

/** Signs transactions for one account locally, with its own nonce counter. */
class Signer {
  private nonce = 0;
  private readonly account;
  constructor(
    private readonly publicClient: ChainPublicClient,
    private readonly dev: DevAccount,
    private readonly fees: { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint },
  ) {
    this.account = privateKeyToAccount(dev.privateKey);
  }

  async init(): Promise<this> {
    this.nonce = await this.publicClient.getTransactionCount({ address: this.dev.address, blockTag: 'pending' });
    return this;
  }

  sign(to: Address, data: Hex, gas = 350_000n): Promise<Hex> {
    return this.account.signTransaction({
      chainId: ANVIL_CHAIN_ID,
      type: 'eip1559',
      nonce: this.nonce++,
      to,
      data,
      gas,
      maxFeePerGas: this.fees.maxFeePerGas,
      maxPriorityFeePerGas: this.fees.maxPriorityFeePerGas,
    });
  }
}

/**
 * Sends signed transactions as JSON-RPC batches (one HTTP request per `size`) with automine off,
 * then mines full blocks until the pool is empty and turns automine back on: one transaction per
 * block would make anvil mine thousands of blocks. Throws if any was refused or reverted.
 */
async function sendAll(rpcUrl: string, publicClient: ChainPublicClient, raws: Hex[], size = 500): Promise<void> {
  const rpc = async (body: unknown): Promise<unknown> => {
    const res = await fetch(rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return res.json();
  };
  await rpc({ jsonrpc: '2.0', id: 1, method: 'evm_setAutomine', params: [false] });
  try {
    for (let i = 0; i < raws.length; i += size) {
      const body = raws.slice(i, i + size).map((raw, j) => ({ jsonrpc: '2.0', id: j, method: 'eth_sendRawTransaction', params: [raw] }));
      const answers = (await rpc(body)) as Array<{ error?: { message: string } }>;
      const failed = answers.find((a) => a.error);
      if (failed) throw new Error(`executor bench: transaction refused: ${failed.error!.message}`);
    }
    for (let blocks = 0; ; blocks++) {
      const status = (await rpc({ jsonrpc: '2.0', id: 1, method: 'txpool_status', params: [] })) as { result: { pending: string; queued: string } };
      if (Number(status.result.pending) + Number(status.result.queued) === 0) break;
      if (blocks > raws.length) throw new Error('executor bench: transactions stay in the pool');
      await rpc({ jsonrpc: '2.0', id: 1, method: 'evm_mine', params: [] });
    }
  } finally {
    await rpc({ jsonrpc: '2.0', id: 1, method: 'evm_setAutomine', params: [true] });
  }
  const receipts = await Promise.all(raws.map((raw) => publicClient.getTransactionReceipt({ hash: keccak256(raw) })));
  if (receipts.some((r) => r.status !== 'success')) throw new Error('executor bench: a transaction reverted');
}

export async function runExecutorBench(opts: ExecutorBenchOptions = {}): Promise<ExecutorBenchResult> {
  const total = opts.orders ?? 5_000;
  const userCount = Math.min(opts.users ?? 8, 9);
  const batchSize = opts.batchSize ?? 200;
  const print = opts.print ?? ((line: string) => console.log(line));
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
    const accounts = ANVIL_ACCOUNTS.slice(0, userCount);
    const deployment = await deployStack({
      publicClient,
      walletClient: walletClient!,
      symbols: DEMO_SYMBOLS,
      demoWallets: accounts.map((a) => a.address),
    });
    const c = deployment.contracts;
    const symbols = Object.keys(c.stocks);
    const fees = await publicClient.estimateFeesPerGas();
    const signers = await Promise.all(
      accounts.map((a) =>
        // A generous fee cap: thousands of placements in full blocks push the base fee up fast.
        new Signer(publicClient, a, { maxFeePerGas: fees.maxFeePerGas! * 500n, maxPriorityFeePerGas: fees.maxPriorityFeePerGas! }).init(),
      ),
    );

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
    await sendAll(anvil.rpcUrl, publicClient, funding);

    // Orders, round robin over the users: market buys, market sells, and limit buys and sells
    // whose limits the quotes cross.
    const block = await publicClient.getBlock();
    const deadline = Number(block.timestamp) + 3_600;
    const placeStarted = performance.now();
    const orders: Hex[] = [];
    for (let n = 0; n < total; n++) {
      const sym = symbols[n % symbols.length];
      const stock = c.stocks[sym];
      const kind = Math.floor(n / signers.length) % 10;
      let data: Hex;
      if (kind < 4) {
        data = encodeFunctionData({ abi: stockRouterAbi, functionName: 'placeMarketOrder', args: [stock, 0, 0n, parseUnits('20', 18), deadline] });
      } else if (kind < 7) {
        data = encodeFunctionData({ abi: stockRouterAbi, functionName: 'placeMarketOrder', args: [stock, 1, parseUnits('0.05', 18), 0n, deadline] });
      } else if (kind < 9) {
        const limit = parseUnits(BASE[sym].ask, 18) + parseUnits('1', 18);
        data = encodeFunctionData({ abi: stockRouterAbi, functionName: 'placeLimitOrder', args: [stock, 0, parseUnits('0.1', 18), limit, 0, deadline] });
      } else {
        const limit = parseUnits(BASE[sym].bid, 18) - parseUnits('1', 18);
        data = encodeFunctionData({ abi: stockRouterAbi, functionName: 'placeLimitOrder', args: [stock, 1, parseUnits('0.05', 18), limit, 0, deadline] });
      }
      orders.push(await signers[n % signers.length].sign(c.stockRouter, data));
    }
    await sendAll(anvil.rpcUrl, publicClient, orders);
    const placed = total;
    const placeMs = performance.now() - placeStarted;
    const next = await publicClient.readContract({ address: c.stockRouter, abi: stockRouterAbi, functionName: 'nextOrderId' });
    if (next - 1n !== BigInt(placed)) throw new Error(`executor bench: ${placed} placed but nextOrderId is ${next}`);
    print(`executor bench: ${placed} orders placed by ${signers.length} users in ${(placeMs / 1000).toFixed(1)} s (${Math.round(placed / (placeMs / 1000))} tx/s, signing included)`);
    const lastPlacementBlock = await publicClient.getBlockNumber();

    // Settlement, timed.
    const db = await openDatabase({ sqlitePath: join(dir, 'bench.sqlite') });
    const executor = createStockExecutor({
      db,
      publicClient,
      walletClient: walletClient!,
      deployment,
      quotes: fixedQuotes,
      calendar: createMarketCalendar('always-open'),
      logger: createLogger({ level: process.env.LOG_LEVEL ?? 'warn' }),
      batchSize,
      simulateFirst: opts.simulateFirst,
    });
    const started = performance.now();
    let settled = 0;
    let transactions = 0;
    let ticks = 0;
    let closed = 0;
    while (closed < placed) {
      const r = await executor.runOnce();
      ticks++;
      settled += r.settled;
      closed += r.closed;
      transactions += r.transactions;
      if (r.settled === 0 && r.open === 0) break;
      if (ticks > 1_000) throw new Error('executor bench: not settled after 1000 ticks');
    }
    const settleMs = performance.now() - started;
    await executor.stop();

    // Check the outcome on chain.
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
    let gasUsed = 0n;
    const latest = await publicClient.getBlockNumber();
    for (let b = lastPlacementBlock + 1n; b <= latest; b++) gasUsed += (await publicClient.getBlock({ blockNumber: b })).gasUsed;
    await db.close();

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
      `executor bench: settled ${result.orders} orders in ${(settleMs / 1000).toFixed(2)} s = ${result.ordersPerSecond} orders/s ` +
        `(batch size ${batchSize}, ${transactions} settleOrders transactions, ${ticks} ticks, ~${result.gasPerOrder} gas/order` +
        `${opts.simulateFirst ? ', every batch simulated first' : ''})`,
    );
    print(`executor bench: final statuses ${JSON.stringify(statuses)}`);
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
