/**
 * What the proxies and the migration cost (issue 38), each figure against a baseline of the same run:
 *
 * 1. Executor settlement with proxies ÷ without: bench/executor-bench.ts's venue (its users,
 *    order mix, executor and batch size) twice on one anvil, on this release's deployment (every
 *    stateful contract behind a VenueProxy) and on the deployment of commit 6a0f45b, the last
 *    release without proxies (the same contract logic minus the proxy plumbing and the migration
 *    functions; compiled from git history by test/support/legacy-venue.ts and deployed as that
 *    commit did). Rounds of orders placed on both, then each side's settlement timed alone, the
 *    sides' order alternating, so that a drift of the shared machine weighs on both alike.
 * 2. One Click sends ÷ anvil's ceiling on the proxied contracts: bench/one-click-bench.ts (its
 *    stack deploys through deployStack, so behind proxies; the run checks the StockRouter's
 *    ERC-1967 implementation slot). The oneclick section's result when it ran in the same process.
 * 3. `migrateLegacyVenues` (what `tokex upgrade --apply` runs for a venue from before the proxies)
 *    on a 6a0f45b venue: a base venue (8 funded users), the same with BENCH_UPGRADE_HOLDERS extra
 *    holders (cash deposited on the exchange and shares of one stock in the wallet), and the same
 *    with BENCH_UPGRADE_OPEN_ORDERS extra open limit orders; each on a fresh anvil, the time per
 *    1,000 being the difference to the base. The holders are impersonated addresses (anvil's
 *    auto-impersonation): no keys, their transactions sent unsigned in JSON-RPC batches.
 *
 *   BENCH_ONLY=upgrade npm run bench            (or npx tsx bench/upgrade-bench.ts)
 *
 * BENCH_UPGRADE_ORDERS (default 500 orders a side a round), BENCH_UPGRADE_ROUNDS (default 8,
 * after a warm-up round), BENCH_UPGRADE_HOLDERS and BENCH_UPGRADE_OPEN_ORDERS (default 1,000
 * each); BENCH_UPGRADE_STEPS=1 prints each migration step's time.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { encodeFunctionData, getAddress, keccak256, parseUnits, toHex, type Address, type Hex } from 'viem';
import { ANVIL_ACCOUNTS, ANVIL_CHAIN_ID, OPERATOR_ACCOUNT } from '../src/chain/anvil-accounts.ts';
import { startAnvil } from '../src/chain/anvil-process.ts';
import { createChainClients, type ChainPublicClient } from '../src/chain/chain-client.ts';
import { deployStack, stockDeploymentOf, type Deployment } from '../src/chain/deploy-contracts.ts';
import { migrateLegacyVenues } from '../src/chain/legacy-migration.ts';
import { DEMO_SYMBOLS } from '../src/marketdata/symbol-catalog.ts';
import { deployLegacyVenue } from '../test/support/legacy-venue.ts';
import { rpc, rpcBatched, sendAllCalls, type RpcCall } from './bench-chain.ts';
import { cpuMsOf } from './bench-children.ts';
import { openSigners, prepareExecutorVenue, type ExecutorBenchOptions, type ExecutorVenue, type SettleRound } from './executor-bench.ts';
import { IMPLEMENTATION_SLOT, runOneClickBench, type OneClickBenchResult } from './one-click-bench.ts';

/** The last release without proxies: the same contract logic as this one minus the proxy plumbing. */
export const NO_PROXY_COMMIT = '6a0f45b';

export interface UpgradeBenchOptions {
  /** Orders a settlement round on each side. Default 500. */
  orders?: number;
  /** Measured settlement rounds on each side (after a warm-up round of 200). Default 8. */
  rounds?: number;
  /** Extra holders of the migration's holder run. Default 1,000. */
  holders?: number;
  /** Extra open orders of the migration's order run. Default 1,000. */
  openOrders?: number;
  /** The oneclick section's result of this process; run here when absent. */
  oneClick?: OneClickBenchResult;
  print?: (line: string) => void;
}

export interface MigrationRun {
  name: string;
  holders: number;
  openOrders: number;
  /** Setting up the state (not timed in the figure). */
  setupMs: number;
  ms: number;
  /** Transactions the migration sent (the owner's nonce before and after). */
  transactions: number;
  /** Cash accounts and stock holdings in the migration's snapshot, orders it closed. */
  snapshotAccounts: number;
  snapshotHoldings: number;
  closedOrders: number;
}

export interface UpgradeBenchResult {
  executor: { without: TimedRound[]; with: TimedRound[]; ordersPerSecondRatio: number; gasRatio: number; cpuRatio: number };
  oneClick: OneClickBenchResult;
  migration: { runs: MigrationRun[]; msPer1000Holders: number; msPer1000Orders: number; txPer1000Holders: number; txPer1000Orders: number };
  table: string;
}

async function isProxy(publicClient: ChainPublicClient, address: Address): Promise<boolean> {
  const slot = await publicClient.getStorageAt({ address, slot: IMPLEMENTATION_SLOT });
  return slot !== undefined && BigInt(slot) !== 0n;
}

type Deploy = NonNullable<ExecutorBenchOptions['deploy']>;

/** This release's deployStack, checked to be behind proxies. */
const deployWithProxies: Deploy = async (p) => {
  const d = await deployStack(p);
  if (!(await isProxy(p.publicClient, d.contracts.stockRouter))) throw new Error('upgrade bench: the current StockRouter is not behind a proxy');
  return d;
};

/** 6a0f45b's deployment, checked to have no proxy. */
const deployWithoutProxies: Deploy = async (p) => {
  const { record } = await deployLegacyVenue({ commit: NO_PROXY_COMMIT, ...p });
  const d = stockDeploymentOf(record) as Deployment;
  if (await isProxy(p.publicClient, d.contracts.stockRouter)) throw new Error(`upgrade bench: ${NO_PROXY_COMMIT}'s StockRouter has an implementation slot`);
  return d;
};

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
/** Orders settled over seconds settling, over every round of a side. */
const rate = (rounds: SettleRound[]) => sum(rounds.map((r) => r.orders)) / (sum(rounds.map((r) => r.settleMs)) / 1000);
/** CPU µs an order (anvil and the executor). */
const cpu = (rounds: TimedRound[]) => (sum(rounds.map((r) => r.cpuMs)) * 1000) / sum(rounds.map((r) => r.orders));
const gas = (rounds: SettleRound[]) => Number(rounds.reduce((n, r) => n + r.gasUsed, 0n)) / sum(rounds.map((r) => r.orders));

type Side = 'without' | 'with';

/** A settlement round with the CPU it took: anvil's and this process's (the executor's). */
export interface TimedRound extends SettleRound {
  cpuMs: number;
}

/** CPU ms of anvil and of this process together. */
function cpuNow(anvilPid: number): number {
  const own = process.cpuUsage();
  return cpuMsOf(anvilPid) + (own.user + own.system) / 1000;
}

/**
 * Both deployments on one anvil, the same 8 users funded on each, an executor for each; a warm-up
 * round, then `rounds` rounds: `orders` orders placed on each venue, then each venue's settlement
 * timed alone, the sides' order alternating from round to round. One chain and fine-grained
 * alternation: a machine shared with others, whose load swings within a minute, weighs on both
 * sides alike (separate anvils a minute apart differed by 50 % on the same code).
 */
export async function measureSettlement(orders: number, rounds: number, print: (line: string) => void): Promise<Record<Side, TimedRound[]> & { batchSize: number }> {
  const batchSize = 200;
  const anvil = await startAnvil({ chainId: ANVIL_CHAIN_ID });
  const dir = mkdtempSync(join(tmpdir(), 'tokex-upgrade-settle-'));
  const venues: Partial<Record<Side, ExecutorVenue>> = {};
  try {
    const { publicClient, walletClient } = createChainClients({ rpcUrl: anvil.rpcUrl, chainId: ANVIL_CHAIN_ID, operatorPrivateKey: OPERATOR_ACCOUNT.privateKey, pollingIntervalMs: 20, timeoutMs: 30_000 });
    const signers = await openSigners(publicClient, 8);
    for (const side of ['without', 'with'] as const) {
      venues[side] = await prepareExecutorVenue({
        rpcUrl: anvil.rpcUrl,
        publicClient,
        walletClient: walletClient!,
        signers,
        deploy: side === 'with' ? deployWithProxies : deployWithoutProxies,
        // 6a0f45b's market orders take no worst price (0.2.0 added it).
        marketWorstPrice: side === 'with',
        batchSize,
        sqlitePath: join(dir, `${side}.sqlite`),
      });
    }
    const v = venues as Record<Side, ExecutorVenue>;
    // Warm-up: the executor learns each venue's gas per order (it simulates until then), the JIT warms.
    for (const side of ['without', 'with'] as const) {
      await v[side].place(200);
      await v[side].settle();
    }
    const out: Record<Side, TimedRound[]> = { without: [], with: [] };
    for (let round = 0; round < rounds; round++) {
      const sides: Side[] = round % 2 === 0 ? ['without', 'with'] : ['with', 'without'];
      for (const side of sides) await v[side].place(orders);
      const line: string[] = [];
      for (const side of sides) {
        const cpu0 = cpuNow(anvil.pid);
        const settled = await v[side].settle();
        const r: TimedRound = { ...settled, cpuMs: cpuNow(anvil.pid) - cpu0 };
        if (r.orders !== orders) throw new Error(`upgrade bench: ${orders} orders placed, ${r.orders} closed (${side} proxies)`);
        out[side].push(r);
        line.push(`${side} proxies ${Math.round(r.orders / (r.settleMs / 1000))} orders/s, ${Number(r.gasUsed / BigInt(r.orders))} gas and ${((r.cpuMs * 1000) / r.orders).toFixed(0)} µs CPU an order (${r.transactions} transactions)`);
      }
      print(`settlement round ${round + 1}/${rounds}, ${orders} orders a side: ${line.join('; ')}`);
    }
    for (const side of ['without', 'with'] as const) {
      const statuses = await v[side].statuses();
      if (statuses.Filled !== v[side].placed) throw new Error(`upgrade bench: not every order filled ${side} proxies (${JSON.stringify(statuses)})`);
    }
    return { ...out, batchSize };
  } finally {
    for (const venue of Object.values(venues)) await venue.close();
    await anvil.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A holder's address: deterministic, no key (anvil impersonates it). */
const holderAddress = (i: number): Address => getAddress(`0x${keccak256(toHex(`bench-upgrade/holder/${i}`)).slice(26)}`);

/**
 * A 6a0f45b venue (stock and perp, DEMO_SYMBOLS) on a fresh anvil with 8 funded users, `holders`
 * more accounts each with 500 USDC on the exchange and 10 shares of one stock in its wallet, and
 * `openOrders` limit buys far below the market from the 8 users; then `migrateLegacyVenues` timed.
 */
export async function measureMigration(name: string, holders: number, openOrders: number, dir: string): Promise<MigrationRun> {
  const anvil = await startAnvil({ chainId: ANVIL_CHAIN_ID });
  try {
    // As `tokex upgrade --apply` makes them (default polling on the local chain).
    const { publicClient, walletClient } = createChainClients({ rpcUrl: anvil.rpcUrl, chainId: ANVIL_CHAIN_ID, operatorPrivateKey: OPERATOR_ACCOUNT.privateKey });
    const setupStarted = performance.now();
    const users = ANVIL_ACCOUNTS.slice(0, 8).map((a) => a.address);
    const { record } = await deployLegacyVenue({ commit: NO_PROXY_COMMIT, publicClient, walletClient: walletClient!, symbols: DEMO_SYMBOLS, demoWallets: users });
    const c = record.venues.stock.contracts as { cashToken: Address; stockRouter: Address; stocks: Record<string, Address> };
    const stocks = Object.values(c.stocks);
    const owner = walletClient!.account.address;
    const block = await publicClient.getBlock();
    const fees = { maxFeePerGas: toHex(block.baseFeePerGas! * 200n), maxPriorityFeePerGas: toHex(1n) };
    const nonces = new Map<Address, number>();
    for (const a of [owner, ...users]) nonces.set(a, await publicClient.getTransactionCount({ address: a, blockTag: 'pending' }));
    /** An unsigned transaction of `from` (a dev account or an impersonated one), with its next nonce. */
    const tx = (from: Address, to: Address, data: Hex, gasLimit = 250_000n): RpcCall => {
      const nonce = nonces.get(from) ?? 0;
      nonces.set(from, nonce + 1);
      return { method: 'eth_sendTransaction', params: [{ from, to, data, gas: toHex(gasLimit), nonce: toHex(nonce), ...fees }] };
    };
    const erc20 = (fn: 'mint' | 'approve', to: Address, amount: bigint) =>
      encodeFunctionData({ abi: [{ type: 'function', name: fn, stateMutability: 'nonpayable', inputs: [{ name: 'a', type: 'address' }, { name: 'v', type: 'uint256' }], outputs: [] }], functionName: fn, args: [to, amount] });
    const router = {
      deposit: (amount: bigint) => encodeFunctionData({ abi: stockRouterAbiLite, functionName: 'deposit', args: [c.cashToken, amount] }),
      placeLimitOrder: (stock: Address, price: bigint, deadline: number) => encodeFunctionData({ abi: stockRouterAbiLite, functionName: 'placeLimitOrder', args: [stock, 0, 10n ** 18n, price, 0, deadline] }),
    };

    const holderList = Array.from({ length: holders }, (_, i) => holderAddress(i));
    if (holders > 0) {
      await rpc(anvil.rpcUrl, { jsonrpc: '2.0', id: 1, method: 'anvil_autoImpersonateAccount', params: [true] });
      await rpcBatched(anvil.rpcUrl, holderList.map((h) => ({ method: 'anvil_setBalance', params: [h, toHex(10n ** 18n)] })), 500, 'upgrade bench');
      // The owner mints first (mined before the holders use what it minted).
      const mints: RpcCall[] = [];
      holderList.forEach((h, i) => {
        mints.push(tx(owner, c.cashToken, erc20('mint', h, parseUnits('1000', 6))));
        mints.push(tx(owner, stocks[i % stocks.length], erc20('mint', h, parseUnits('10', 18))));
      });
      await sendAllCalls(anvil.rpcUrl, publicClient, mints, 500, 'upgrade bench');
    }
    const calls: RpcCall[] = [];
    for (const h of holderList) {
      calls.push(tx(h, c.cashToken, erc20('approve', c.stockRouter, parseUnits('500', 6))));
      calls.push(tx(h, c.stockRouter, router.deposit(parseUnits('500', 6))));
    }
    // Every user has something on the exchange; the orders' users have their locks too.
    const deadline = Number(block.timestamp) + 3_000;
    for (const u of users) {
      calls.push(tx(u, c.cashToken, erc20('approve', c.stockRouter, parseUnits('5000', 6))));
      calls.push(tx(u, c.stockRouter, router.deposit(parseUnits('5000', 6))));
    }
    for (let n = 0; n < openOrders; n++) calls.push(tx(users[n % users.length], c.stockRouter, router.placeLimitOrder(stocks[n % stocks.length], parseUnits('1', 18), deadline)));
    await sendAllCalls(anvil.rpcUrl, publicClient, calls, 500, 'upgrade bench');
    const setupMs = performance.now() - setupStarted;

    const nonceBefore = await publicClient.getTransactionCount({ address: owner });
    const started = performance.now();
    const steps: string[] = [];
    let last = started;
    const onStep = (line: string) => {
      const now = performance.now();
      steps.push(`${Math.round(now - last)} ms: ${line.split(':')[0]}: ${line.split(':').slice(1).join(':').trim().slice(0, 60)}`);
      last = now;
    };
    const { journal } = await migrateLegacyVenues({ publicClient, ownerWallet: walletClient!, record, journalFile: join(dir, `${name}.migration.json`), onStep });
    if (process.env.BENCH_UPGRADE_STEPS) for (const st of steps) console.log(`  ${name}: ${st}`);
    const ms = performance.now() - started;
    const transactions = (await publicClient.getTransactionCount({ address: owner })) - nonceBefore;
    if (!journal.reconciliation?.every((r) => r.ok)) throw new Error(`upgrade bench: the ${name} migration does not reconcile`);
    const snap = journal.stock!.snapshot!;
    const run: MigrationRun = {
      name,
      holders,
      openOrders,
      setupMs: Math.round(setupMs),
      ms: Math.round(ms),
      transactions,
      snapshotAccounts: snap.accounts.length,
      snapshotHoldings: snap.stocks.reduce((n, x) => n + x.holders.length, 0),
      closedOrders: journal.stock!.closedOrders!.length,
    };
    if (run.closedOrders !== openOrders) throw new Error(`upgrade bench: ${openOrders} open orders placed, the migration closed ${run.closedOrders}`);
    if (run.snapshotAccounts < holders + users.length) throw new Error(`upgrade bench: ${holders + users.length} cash accounts made, the snapshot has ${run.snapshotAccounts}`);
    return run;
  } finally {
    await anvil.stop();
  }
}

/** The two calls of 6a0f45b's StockRouter the set-up makes (the same signatures as today's). */
const stockRouterAbiLite = [
  { type: 'function', name: 'deposit', stateMutability: 'nonpayable', inputs: [{ name: 'token', type: 'address' }, { name: 'amount', type: 'uint256' }], outputs: [{ name: 'instant', type: 'bool' }, { name: 'queueId', type: 'uint256' }] },
  {
    type: 'function',
    name: 'placeLimitOrder',
    stateMutability: 'nonpayable',
    inputs: [
      { name: 'stock', type: 'address' },
      { name: 'side', type: 'uint8' },
      { name: 'quantity', type: 'uint256' },
      { name: 'price', type: 'uint256' },
      { name: 'timeInForce', type: 'uint8' },
      { name: 'deadline', type: 'uint32' },
    ],
    outputs: [{ name: 'orderId', type: 'uint256' }],
  },
] as const;

export async function runUpgradeBench(opts: UpgradeBenchOptions = {}): Promise<UpgradeBenchResult> {
  const print = opts.print ?? ((line: string) => console.log(line));
  const orders = opts.orders ?? 500;
  const rounds = Math.max(1, opts.rounds ?? 8);
  const holders = opts.holders ?? 1_000;
  const openOrders = opts.openOrders ?? 1_000;

  // 1. Settlement without and with proxies, on one chain, rounds alternating.
  const settlement = await measureSettlement(orders, rounds, print);
  const without = settlement.without;
  const withProxies = settlement.with;
  const ordersPerSecondRatio = rate(withProxies) / rate(without);
  const gasRatio = gas(withProxies) / gas(without);
  const cpuRatio = cpu(withProxies) / cpu(without);

  // 2. One Click on the proxied contracts.
  let oneClick = opts.oneClick;
  if (!oneClick) {
    print('one click (no oneclick section in this run, so measured here):');
    oneClick = await runOneClickBench({ users: Number(process.env.BENCH_ONE_CLICK_USERS ?? 16), perUser: Number(process.env.BENCH_ONE_CLICK_SENDS ?? 40), print });
  }

  // 3. The migration: a base venue, then one dimension at a time.
  const dir = mkdtempSync(join(tmpdir(), 'tokex-upgrade-bench-'));
  const runs: MigrationRun[] = [];
  try {
    for (const [name, h, o] of [
      ['base', 0, 0],
      ['holders', holders, 0],
      ['orders', 0, openOrders],
    ] as const) {
      const run = await measureMigration(name, h, o, dir);
      print(
        `migration (${name}): +${h} holders, +${o} open orders: set up in ${(run.setupMs / 1000).toFixed(1)} s; migrateLegacyVenues ${run.ms} ms, ` +
          `${run.transactions} transactions; snapshot ${run.snapshotAccounts} cash accounts, ${run.snapshotHoldings} holdings; ${run.closedOrders} orders closed`,
      );
      runs.push(run);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const [base, byHolders, byOrders] = runs;
  const per1000 = (run: MigrationRun, n: number, f: (r: MigrationRun) => number) => (n > 0 ? ((f(run) - f(base)) * 1000) / n : NaN);
  const migration = {
    runs,
    msPer1000Holders: per1000(byHolders, holders, (r) => r.ms),
    msPer1000Orders: per1000(byOrders, openOrders, (r) => r.ms),
    txPer1000Holders: per1000(byHolders, holders, (r) => r.transactions),
    txPer1000Orders: per1000(byOrders, openOrders, (r) => r.transactions),
  };

  const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
  const verdict = (ok: boolean) => (ok ? 'met' : 'NOT met');
  const oneClickOk = oneClick.ratio >= 0.5 && oneClick.failures === 0 && oneClick.proxied;
  const lines = [
    `upgrades and proxies (issue 38); load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`,
    '',
    `executor settlement: both deployments on one anvil, 8 users; after a warm-up round, ${rounds} rounds of ${fmt(orders)} orders placed on each, then each side's settlement timed alone (batch size ${settlement.batchSize}), the sides' order alternating; orders/s = a side's orders ÷ its settling time`,
    '',
    `| figure | without proxies (${NO_PROXY_COMMIT}) | with proxies | with ÷ without | target |`,
    '| --- | ---: | ---: | ---: | --- |',
    `| orders settled a second (per round ratios ${without.map((r, i) => (rate([withProxies[i]]) / rate([r])).toFixed(2)).join(', ')}) | ${fmt(rate(without))} | ${fmt(rate(withProxies))} | **${ordersPerSecondRatio.toFixed(3)}** | ≥ 0.9: ${verdict(ordersPerSecondRatio >= 0.9)} |`,
    `| gas an order | ${fmt(gas(without))} | ${fmt(gas(withProxies))} | **${gasRatio.toFixed(3)}** | ≤ 1.11 (1 ÷ 0.9): ${verdict(gasRatio <= 1 / 0.9)} |`,
    `| CPU an order while settling, anvil + executor (steadier than wall time on a shared machine) | ${fmt(cpu(without))} µs | ${fmt(cpu(withProxies))} µs | ${cpuRatio.toFixed(3)} | report |`,
    `| One Click sends ÷ anvil's ceiling${oneClick.proxied ? '' : ' (the StockRouter is NOT behind a proxy)'} | — | ${oneClick.sendsPerSecond.toFixed(1)}/s ÷ ${oneClick.ceilingPerSecond.toFixed(1)}/s = **${oneClick.ratio.toFixed(3)}** | — | ≥ 0.5: ${verdict(oneClickOk)} |`,
    '',
    `migrateLegacyVenues on a ${NO_PROXY_COMMIT} venue (${DEMO_SYMBOLS.length} stocks and the perp vault, 8 funded users), each run on a fresh anvil`,
    '',
    '| run | extra holders | extra open orders | migration | transactions sent | snapshot cash accounts / holdings | orders closed |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...runs.map((r) => `| ${r.name} | ${fmt(r.holders)} | ${fmt(r.openOrders)} | ${fmt(r.ms)} ms | ${r.transactions} | ${r.snapshotAccounts} / ${r.snapshotHoldings} | ${r.closedOrders} |`),
    '',
    `migration: ${fmt(migration.msPer1000Holders)} ms and ${migration.txPer1000Holders.toFixed(0)} transactions per 1,000 holders; ` +
      `${fmt(migration.msPer1000Orders)} ms and ${migration.txPer1000Orders.toFixed(0)} transactions per 1,000 open orders (over the base run's ${fmt(base.ms)} ms and ${base.transactions} transactions)`,
    `target: executor orders/s with proxies ÷ without ≥ 0.9 → ${ordersPerSecondRatio.toFixed(3)} ${verdict(ordersPerSecondRatio >= 0.9)}`,
    `target: executor gas an order with proxies ÷ without ≤ 1.11 → ${gasRatio.toFixed(3)} ${verdict(gasRatio <= 1 / 0.9)}`,
    `target: One Click sends ÷ anvil's ceiling (proxied contracts) ≥ 0.5 → ${oneClick.ratio.toFixed(3)} ${verdict(oneClickOk)}`,
  ];
  return { executor: { without, with: withProxies, ordersPerSecondRatio, gasRatio, cpuRatio }, oneClick, migration, table: lines.join('\n') };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runUpgradeBench({
    orders: process.env.BENCH_UPGRADE_ORDERS ? Number(process.env.BENCH_UPGRADE_ORDERS) : undefined,
    rounds: process.env.BENCH_UPGRADE_ROUNDS ? Number(process.env.BENCH_UPGRADE_ROUNDS) : undefined,
    holders: process.env.BENCH_UPGRADE_HOLDERS ? Number(process.env.BENCH_UPGRADE_HOLDERS) : undefined,
    openOrders: process.env.BENCH_UPGRADE_OPEN_ORDERS ? Number(process.env.BENCH_UPGRADE_OPEN_ORDERS) : undefined,
  }).then(
    (r) => console.log(r.table),
    (err) => {
      console.error(err);
      process.exitCode = 1;
    },
  );
}
