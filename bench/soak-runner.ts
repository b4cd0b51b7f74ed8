/**
 * The soak (docs/reliability.md, "Soak"): the embedded stack under an hour (or any duration) of
 * mixed load on both APIs and their streams, measured in windows: requests and their p99, answers
 * that were not meant to happen, stream frames and seq gaps, and the process's heap. Used by
 * `npm run soak` (bench/soak.ts) and, for a short run, by test/reliability/soak.test.ts.
 *
 * The load, spread evenly over each second at `rate` operations a second:
 * - perp: a signed resting order far below the book, then its cancel; the account; the book;
 * - stock: a quote, the bound wallet's balance, an order's calldata (no transaction);
 * - streams: `subscribers` sockets on the perp book and trades and the stock quotes, each checking
 *   that every stream's seq rises by exactly one.
 * The stack and the load run in this process, so the heap figure covers both.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import WebSocket from 'ws';
import { createPublicClient, createWalletClient, erc20Abi, http, maxUint256, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { PerpClient, StockClient } from '@tokex/sdk';
import { loadConfig } from '../src/config/app-config.ts';
import { createLogger } from '../src/lib/logger.ts';
import { startStack } from '../src/app/stack.ts';
import { fractionOnTick } from '../test/support/perp-prices.ts';

export interface SoakOptions {
  durationMs: number;
  windowMs: number;
  /** Operations a second (each one or two requests). */
  rate: number;
  subscribers: number;
  /** Settings of the stack beyond the soak's own (the soak script shrinks the engine's buffers). */
  env?: Record<string, string>;
  /** Which operations of the mix to run (default all): perp-order, perp-account, perp-book, stock-quote, stock-balance, stock-calldata. */
  only?: readonly string[];
  onWindow?: (w: SoakWindow) => void;
}

export interface SoakWindow {
  index: number;
  /** Seconds since the load began, at the window's end. */
  at: number;
  requests: number;
  p50Ms: number;
  p99Ms: number;
  /** Answers that the load did not intend (anything but the expected success). */
  unexpected: number;
  frames: number;
  seqGaps: number;
  heapMb: number;
  rssMb: number;
}

export interface SoakResult {
  windows: SoakWindow[];
  requests: number;
  unexpected: number;
  /** The first few unexpected answers, for the report. */
  samples: string[];
  frames: number;
  seqGaps: number;
  /** Least-squares slope of the heap over the second half of the windows, MB a minute. */
  heapSlopeMbPerMin: number;
  heapFirstMb: number;
  heapLastMb: number;
}

function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
}

/** MB a minute, by least squares over (seconds, MB). */
export function slopePerMinute(points: Array<[number, number]>): number {
  const n = points.length;
  if (n < 2) return 0;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  const num = points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0);
  const den = points.reduce((s, [x]) => s + (x - mx) ** 2, 0);
  return den === 0 ? 0 : (num / den) * 60;
}

export async function runSoak(opts: SoakOptions): Promise<SoakResult> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tokex-soak-'));
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, STOCK_API_PORT: '0', PERP_API_PORT: '0', HISTORY_DAYS: '1', LOG_LEVEL: 'warn', PERP_RATE_LIMIT_PER_MIN: '1000000', ...opts.env };
  delete env.DATABASE_URL;
  delete env.REDIS_URL;
  delete env.RPC_URL;
  const config = loadConfig(env);
  const stack = await startStack(config, { role: 'all', logger: createLogger({ level: 'warn' }) });
  const sockets: WebSocket[] = [];
  try {
    const demo = stack.demo!;
    const perpDemo = demo.perp!;
    const stock = new StockClient({ baseUrl: demo.stock.baseUrl, chainId: demo.chainId, ...demo.stock.keys.writable });
    const perp = PerpClient.forKey(perpDemo.baseUrl, perpDemo.keys.trader, demo.chainId);
    const wallet = privateKeyToAccount(demo.wallets[0].privateKey);
    const userId = demo.stock.keys.writable.userAddress;

    // The stock wallet deposits 1,000 to the exchange first, so its orders' calldata passes the balance check.
    const chain = { id: demo.chainId, name: 'anvil', nativeCurrency: { name: 'ETH', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [demo.rpcUrl] } } };
    const pub = createPublicClient({ chain, transport: http(demo.rpcUrl) });
    const signer = createWalletClient({ account: wallet, chain, transport: http(demo.rpcUrl) });
    const c = demo.stock.contracts;
    await pub.waitForTransactionReceipt({ hash: await signer.writeContract({ address: c.cashToken, abi: erc20Abi, functionName: 'approve', args: [c.stockRouter, maxUint256] }) });
    const dep = await stock.post<{ toAddress: Address; callData: Hex }>('/api/v1/cash/deposits/calldata', { tokenAddress: c.cashToken, tokenAmount: '1000' });
    const depHash = await signer.sendTransaction({ to: dep.toAddress, data: dep.callData });
    await pub.waitForTransactionReceipt({ hash: depHash });
    await stock.post('/api/v1/cash/deposits/tx', { txHash: depHash });

    // A resting price far below the book: a tenth under its lowest bid, on the tick.
    const [inst] = await perp.get<any[]>('instruments', { symbol: 'AAPL-USD' });
    let book = await perp.get<any>('depth', { symbol: 'AAPL-USD' });
    for (let i = 0; i < 200 && book.bids.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      book = await perp.get<any>('depth', { symbol: 'AAPL-USD' });
    }
    const price = fractionOnTick(book.bids.at(-1)[0], inst.tickSize, 9n, 10n);

    // Streams: each socket follows three streams and checks their seqs.
    let frames = 0;
    let seqGaps = 0;
    const subscribe = async (url: string, subs: object[]) => {
      const ws = new WebSocket(url, { perMessageDeflate: false });
      sockets.push(ws);
      const last = new Map<string, number>();
      await new Promise<void>((resolve, reject) => {
        let acked = 0;
        ws.once('error', reject);
        ws.once('open', () => subs.forEach((s) => ws.send(JSON.stringify(s))));
        ws.on('message', (data) => {
          const f = JSON.parse(data.toString());
          const key = `${f.channel}:${f.symbol ?? ''}`;
          if (f.type === 'subscribed') {
            last.set(key, f.seq);
            if (++acked === subs.length) resolve();
          } else if (f.type === 'update') {
            frames++;
            const prev = last.get(key);
            if (prev !== undefined && f.seq !== prev + 1) seqGaps++;
            last.set(key, f.seq);
          }
        });
      });
    };
    const perpWs = perpDemo.wsUrl;
    for (let i = 0; i < opts.subscribers; i++) {
      await subscribe(perpWs, [
        { op: 'subscribe', id: 'd', channel: 'depth', symbol: 'AAPL-USD' },
        { op: 'subscribe', id: 't', channel: 'trades', symbol: 'AAPL-USD' },
      ]);
      await subscribe(demo.stock.wsUrl, [{ op: 'subscribe', id: 'q', channel: 'quotes', symbol: 'AAPL' }]);
    }

    const windows: SoakWindow[] = [];
    const samples: string[] = [];
    let latencies: number[] = [];
    let unexpected = 0;
    let windowUnexpected = 0;
    let totalRequests = 0;
    let windowFrames = 0;
    let windowGaps = 0;
    const timed = async <T>(call: () => Promise<T>): Promise<T | undefined> => {
      const t0 = performance.now();
      try {
        return await call();
      } catch (err) {
        unexpected++;
        windowUnexpected++;
        if (samples.length < 10) samples.push((err as Error).message.slice(0, 200));
        return undefined;
      } finally {
        latencies.push(performance.now() - t0);
        totalRequests++;
      }
    };
    const mix: Array<[string, () => Promise<unknown>]> = [
      ['perp-order', async () => {
        const placed = await timed(() => perp.placeOrder<any>(wallet, { symbol: 'AAPL-USD', side: 'BUY', type: 'LIMIT', size: '1', price, timeInForce: 'GTC' }));
        if (placed) await timed(() => perp.delete(`orders/${placed.orderId}`));
      }],
      ['perp-account', () => timed(() => perp.get('account'))],
      ['perp-book', () => timed(() => perp.get('depth', { symbol: 'AAPL-USD', limit: 10 }))],
      ['stock-quote', () => timed(() => stock.get('/api/v1/prices/AAPL'))],
      ['stock-balance', () => timed(() => stock.getBalance(userId))],
      ['stock-calldata', () => timed(() => stock.post('/api/v1/orders/calldata', { symbol: 'AAPL', side: 'Buy', type: 'Market', notional: '10', deadline: Math.floor(Date.now() / 1000) + 600 }))],
    ];
    const ops = mix.filter(([name]) => !opts.only || opts.only.includes(name)).map(([, op]) => op);

    const begin = performance.now();
    let nextWindow = begin + opts.windowMs;
    let n = 0;
    const inFlight = new Set<Promise<unknown>>();
    while (performance.now() - begin < opts.durationMs) {
      // Open loop: operations start on schedule whether or not earlier ones have answered.
      const due = begin + (n * 1000) / opts.rate;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const p = ops[n % ops.length]();
      inFlight.add(p);
      void p.finally(() => inFlight.delete(p));
      n++;
      if (performance.now() >= nextWindow) {
        latencies.sort((a, b) => a - b);
        // With --expose-gc (npm run soak) the heap is read after a collection: its trend, not GC timing.
        (globalThis as { gc?: () => void }).gc?.();
        const mem = process.memoryUsage();
        const w: SoakWindow = {
          index: windows.length,
          at: Math.round((performance.now() - begin) / 1000),
          requests: latencies.length,
          p50Ms: Math.round(percentile(latencies, 0.5) * 10) / 10,
          p99Ms: Math.round(percentile(latencies, 0.99) * 10) / 10,
          unexpected: windowUnexpected,
          frames: frames - windowFrames,
          seqGaps: seqGaps - windowGaps,
          heapMb: Math.round(mem.heapUsed / 1e5) / 10,
          rssMb: Math.round(mem.rss / 1e5) / 10,
        };
        windows.push(w);
        opts.onWindow?.(w);
        latencies = [];
        windowUnexpected = 0;
        windowFrames = frames;
        windowGaps = seqGaps;
        nextWindow += opts.windowMs;
      }
    }
    await Promise.all([...inFlight]);
    const half = windows.slice(Math.floor(windows.length / 2));
    return {
      windows,
      requests: totalRequests,
      unexpected,
      samples,
      frames,
      seqGaps,
      heapSlopeMbPerMin: Math.round(slopePerMinute(half.map((w) => [w.at, w.heapMb])) * 100) / 100,
      heapFirstMb: windows[0]?.heapMb ?? 0,
      heapLastMb: windows.at(-1)?.heapMb ?? 0,
    };
  } finally {
    for (const ws of sockets) ws.terminate();
    await stack.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
