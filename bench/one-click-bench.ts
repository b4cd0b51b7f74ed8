/**
 * One Click throughput: order sends per second end to end — a signed `POST orders/send` → the API's
 * pre-checks → the relay journal → the relayer signs and sends through the One Click router → mined
 * on anvil → recorded for the key — with `users` users sending in parallel, each waiting for its
 * answer before the next. Beside it, anvil's own ceiling for the same orders: pre-signed by one
 * wallet and sent straight to the StockRouter, as many in flight as there are users, each followed
 * to its receipt, on the same chain in the same run. Orders are limit buys far below the market, so
 * the executor only watches them and the figure is the relay path's.
 *
 * The stack runs in a child process (bench-server.ts, mode `oneclick`), which also prepares the
 * users: funded, approved, One Click enabled, cash deposited through One Click.
 */
import { createPublicClient, createWalletClient, encodeFunctionData, erc20Abi, http, keccak256, maxUint256, parseUnits, toHex, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { cashTokenAbi, stockRouterAbi } from '../src/chain/abi/generated/index.ts';
import { OPERATOR_ACCOUNT } from '../src/chain/anvil-accounts.ts';
import type { DemoFile } from '../src/app/demo-file.ts';
import type { StackHandle } from '../src/app/stack.ts';
import { StockClient } from '@tokex/sdk';
import { startBenchServer, stopServers } from './bench-children.ts';

export interface BenchUser {
  apiKey: string;
  apiSecret: string;
  address: string;
}

/** In the stack's process: `n` funded users with One Click enabled and 1,000 mUSD deposited through it. */
export async function prepareOneClickUsers(stack: StackHandle, n: number): Promise<BenchUser[]> {
  const demo = stack.demo!;
  const chain = { id: demo.chainId, name: 'anvil', nativeCurrency: { name: 'ETH', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [demo.rpcUrl] } } };
  const pub = createPublicClient({ chain, transport: http(demo.rpcUrl) });
  const operator = createWalletClient({ account: privateKeyToAccount(OPERATOR_ACCOUNT.privateKey), chain, transport: http(demo.rpcUrl) });
  const c = demo.stock.contracts;
  const users: BenchUser[] = [];
  for (let i = 0; i < n; i++) {
    const account = privateKeyToAccount(keccak256(toHex(`bench-one-click/${i}`)));
    await pub.request({ method: 'anvil_setBalance' as never, params: [account.address, toHex(10n ** 18n)] as never });
    await pub.waitForTransactionReceipt({ hash: await operator.writeContract({ address: c.cashToken, abi: cashTokenAbi, functionName: 'mint', args: [account.address, parseUnits('1000', 6)] }) });
    const wallet = createWalletClient({ account, chain, transport: http(demo.rpcUrl) });
    await pub.waitForTransactionReceipt({ hash: await wallet.writeContract({ address: c.cashToken, abi: erc20Abi, functionName: 'approve', args: [c.stockRouter, maxUint256] }) });
    const { key, apiSecret } = await stack.keys.create({
      permission: 'WRITABLE',
      ipWhitelist: ['127.0.0.1', '::1'],
      chainId: demo.chainId,
      product: demo.stock.product,
      userAddress: account.address,
      label: `bench one click ${i}`,
    });
    const client = new StockClient({ baseUrl: demo.stock.baseUrl, apiKey: key.apiKey, apiSecret, chainId: demo.chainId, product: demo.stock.product });
    await client.enableOneClick(account);
    await client.post('/api/v1/cash/deposits/send', { tokenAddress: c.cashToken, tokenAmount: '1000' });
    users.push({ apiKey: key.apiKey, apiSecret, address: account.address });
  }
  return users;
}

export interface OneClickBenchResult {
  sends: number;
  users: number;
  sendsPerSecond: number;
  ceilingPerSecond: number;
  ratio: number;
  failures: number;
  /** Whether the stack's StockRouter is an ERC-1967 proxy (it has an implementation). */
  proxied: boolean;
  /** The lines the run printed, in order. */
  lines: string[];
}

/** ERC-1967's implementation slot: keccak256('eip1967.proxy.implementation') - 1. */
export const IMPLEMENTATION_SLOT = '0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc';

/**
 * The whole One Click figure (`BENCH_ONLY=oneclick`): the stack in a child process (bench-server.ts
 * `oneclick`), a warm-up, then anvil's ceiling in two halves around the measured sends. Prints its
 * lines as it goes and answers them with the figures.
 */
export async function runOneClickBench(opts: { users?: number; perUser?: number; print?: (line: string) => void } = {}): Promise<OneClickBenchResult> {
  const users = opts.users ?? 16;
  const perUser = opts.perUser ?? 40;
  const lines: string[] = [];
  const print = (line: string) => {
    lines.push(line);
    (opts.print ?? console.log)(line);
  };
  const server = await startBenchServer('oneclick', { BENCH_ONE_CLICK_USERS: String(users) });
  let sends: Awaited<ReturnType<typeof measureOneClickSends>>;
  let ceiling: { sends: number; seconds: number };
  let proxied: boolean;
  try {
    const demo = server.demo!;
    const pub = createPublicClient({ transport: http(demo.rpcUrl) });
    const slot = await pub.getStorageAt({ address: demo.stock.contracts.stockRouter, slot: IMPLEMENTATION_SLOT });
    proxied = slot !== undefined && BigInt(slot) !== 0n;
    // One short round first: connections, JIT and caches warm, as for the HTTP targets.
    await measureOneClickSends({ baseUrl: server.url, chainId: demo.chainId, product: demo.stock.product, users: server.users!, perUser: 3 });
    // The ceiling in two halves, before and after: the book of open orders the stack watches grows
    // through the run, and both figures then see it at the same sizes on average.
    const before = await measureAnvilCeiling(demo, (users * perUser) / 2, users);
    sends = await measureOneClickSends({ baseUrl: server.url, chainId: demo.chainId, product: demo.stock.product, users: server.users!, perUser });
    const after = await measureAnvilCeiling(demo, (users * perUser) / 2, users);
    ceiling = { sends: before.sends + after.sends, seconds: before.seconds + after.seconds };
  } finally {
    await stopServers([server]);
  }
  const ours = sends.sends / sends.seconds;
  const max = ceiling.sends / ceiling.seconds;
  const ratio = ours / max;
  print(`one click: ${sends.sends} order sends by ${users} users in ${sends.seconds.toFixed(2)} s = ${ours.toFixed(1)}/s (${sends.failures} failed)${proxied ? '' : ' (the StockRouter is not behind a proxy)'}`);
  print(`anvil ceiling: ${ceiling.sends} pre-signed limit orders from one wallet, ${users} in flight, in ${ceiling.seconds.toFixed(2)} s = ${max.toFixed(1)}/s`);
  print(`target: One Click sends ÷ anvil pre-signed ceiling ≥ 0.5 → ${ratio.toFixed(3)} ${ratio >= 0.5 && sends.failures === 0 ? 'met' : 'NOT met'}`);
  return { sends: sends.sends, users, sendsPerSecond: ours, ceilingPerSecond: max, ratio, failures: sends.failures, proxied, lines };
}

/** Order sends from `users` clients in parallel, `perUser` each. */
export async function measureOneClickSends(opts: { baseUrl: string; chainId: number; product: string; users: BenchUser[]; perUser: number }): Promise<{ sends: number; seconds: number; failures: number }> {
  const clients = opts.users.map((u) => new StockClient({ baseUrl: opts.baseUrl, apiKey: u.apiKey, apiSecret: u.apiSecret, chainId: opts.chainId, product: opts.product }));
  let failures = 0;
  const deadline = Math.floor(Date.now() / 1000) + 3600;
  const body = { symbol: 'AAPL', side: 'Buy', type: 'Limit', quantity: '1', price: '1', timeInForce: 'DAY', deadline };
  const started = performance.now();
  await Promise.all(
    clients.map(async (client) => {
      for (let i = 0; i < opts.perUser; i++) {
        const r = await client.request<{ status: string }>('POST', '/api/v1/orders/send', { body });
        if (r.code !== 200 || r.data?.status !== 'mined') failures++;
      }
    }),
  );
  return { sends: clients.length * opts.perUser, seconds: (performance.now() - started) / 1000, failures };
}

/**
 * Anvil's ceiling for the same work: `count` limit orders like the sends' (placeLimitOrder on the
 * StockRouter, signed beforehand by one wallet with consecutive nonces), `inFlight` at a time, each
 * followed to its receipt, on the stack's own chain while the stack runs.
 */
export async function measureAnvilCeiling(demo: DemoFile, count: number, inFlight: number): Promise<{ sends: number; seconds: number }> {
  const chain = { id: demo.chainId, name: 'anvil', nativeCurrency: { name: 'ETH', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [demo.rpcUrl] } } };
  const pub = createPublicClient({ chain, transport: http(demo.rpcUrl) });
  const account = privateKeyToAccount(demo.wallets[1].privateKey as Hex);
  const wallet = createWalletClient({ account, chain, transport: http(demo.rpcUrl) });
  const c = demo.stock.contracts;
  await pub.waitForTransactionReceipt({ hash: await wallet.writeContract({ address: c.cashToken, abi: erc20Abi, functionName: 'approve', args: [c.stockRouter, maxUint256] }) });
  await pub.waitForTransactionReceipt({ hash: await wallet.writeContract({ address: c.stockRouter, abi: stockRouterAbi, functionName: 'deposit', args: [c.cashToken, parseUnits('5000', 6)] }) });
  const deadline = Math.floor(Date.now() / 1000) + 3600;
  const data = encodeFunctionData({ abi: stockRouterAbi, functionName: 'placeLimitOrder', args: [c.stocks.AAPL, 0, 10n ** 18n, 10n ** 18n, 0, deadline] });
  const gas = (await pub.estimateGas({ account: account.address, to: c.stockRouter, data })) * 2n;
  const fees = await pub.estimateFeesPerGas();
  const first = await pub.getTransactionCount({ address: account.address });
  const raws: Hex[] = [];
  for (let i = 0; i < count; i++) {
    raws.push(
      await account.signTransaction({
        chainId: demo.chainId,
        nonce: first + i,
        to: c.stockRouter,
        data,
        gas,
        maxFeePerGas: fees.maxFeePerGas * 3n,
        maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
        type: 'eip1559',
      }),
    );
  }
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < raws.length) {
        const raw = raws[next++];
        const hash = (await pub.request({ method: 'eth_sendRawTransaction', params: [raw] })) as Hex;
        // Like the relayer: the receipt is what says the transaction landed, and the same bytes go
        // out again while it does not (anvil may drop a transaction that reached it ahead of a
        // lower nonce still in flight on another connection).
        for (let polls = 1; ; polls++) {
          const r = await pub.getTransactionReceipt({ hash }).catch(() => undefined);
          if (r) break;
          if (polls % 40 === 0) await pub.request({ method: 'eth_sendRawTransaction', params: [raw] }).catch(() => undefined);
          if (polls > 12_000) throw new Error(`anvil ceiling: ${hash} not mined within a minute`);
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      }
    }),
  );
  return { sends: count, seconds: (performance.now() - started) / 1000 };
}
