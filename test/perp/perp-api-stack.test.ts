/**
 * The perp API in the real embedded stack (role `all`): served on its own port, demo.json carries
 * `perp.baseUrl` and the trader key of wallets[0] (kept across a restart), and a key a wallet
 * creates works beside it.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { privateKeyToAccount } from 'viem/accounts';
import type { Hex } from 'viem';
import { PerpClient } from '@tokex/sdk';
import { parseDecimal } from '../../src/lib/decimal.ts';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';
import { stackEngines } from '../support/stack-engines.ts';

async function waitFor<T>(read: () => Promise<T>, done: (v: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (done(v)) return v;
    if (Date.now() > until) throw new Error(`timed out; last: ${JSON.stringify(v).slice(0, 500)}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

describe.each(stackEngines('perpstack'))('perp API in the stack ($name)', (engine) => {
  let t: TestStack;
  let env: Record<string, string>;
  beforeAll(async () => {
    // Polling the books below takes more than the default 120 requests a minute of one key.
    env = { ...engine.env(), PERP_RATE_LIMIT_PER_MIN: '6000', PERP_DEMO_TAKER_MS: '300' };
    t = await startTestStack(env);
  });
  afterAll(async () => {
    await t?.stop();
    await engine.cleanup?.(env);
  });

  it('serves the perp API on its own port with the demo trader key of wallets[0]', async () => {
    expect(t.perpBaseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(t.perpBaseUrl).not.toBe(t.stack.stockBaseUrl);
    const demo = JSON.parse(fs.readFileSync(t.stack.demoFile!, 'utf8'));
    // Every earlier field is still there.
    expect(Object.keys(demo.stock).sort()).toEqual(['baseUrl', 'chains', 'contracts', 'keys', 'product', 'wsUrl']);
    expect(demo.perp.baseUrl).toBe(t.perpBaseUrl);
    expect(demo.perp.wsUrl).toBe(`${t.perpBaseUrl!.replace('http', 'ws')}/v4/public/ws`);
    expect(demo.stock.wsUrl).toBe(`${t.stack.stockBaseUrl!.replace('http', 'ws')}/api/v1/ws`);
    expect(demo.perp.keys.trader).toEqual({ apiKey: expect.stringMatching(/^[0-9a-f]{32}$/), apiSecret: expect.any(String), address: demo.wallets[0].address.toLowerCase() });
    const keys = await t.perpTrader!.get<Array<{ apiKey: string; permissions: string[] }>>('api-keys');
    expect(keys).toEqual([expect.objectContaining({ apiKey: demo.perp.keys.trader.apiKey, permissions: ['READ', 'TRADE', 'TRANSFER'] })]);
    expect(Math.abs((await PerpClient.serverTime(t.perpBaseUrl!)) - Date.now())).toBeLessThan(5_000);
    const spec = (await (await fetch(`${t.perpBaseUrl}/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(spec.paths)).toContain('/v4/public/trader/instruments');
  });

  it('lets wallets[0] create another key with its signature, listed beside the demo key', async () => {
    const account = privateKeyToAccount(t.demo.wallets[0].privateKey as Hex);
    const created = await PerpClient.createApiKey(t.perpBaseUrl!, account, { label: 'second', permissions: ['READ'], chainId: t.demo.chainId });
    const listed = await PerpClient.forKey(t.perpBaseUrl!, created, t.demo.chainId).get<Array<{ apiKey: string }>>('api-keys');
    expect(listed.map((k) => k.apiKey)).toEqual([t.demo.perp!.keys.trader.apiKey, created.apiKey]);
  });

  it("credits wallets[0]'s demo deposit, made through the vault at deployment, with its chain record", async () => {
    const trader = t.perpTrader!;
    const deposits = await waitFor(() => trader.request<{ total: number; rows: any[] }>('GET', 'account/deposits'), (r) => r.data?.rows[0]?.status === 'CREDITED');
    expect(deposits.data!.total).toBe(1);
    expect(deposits.data!.rows[0]).toMatchObject({ asset: 'USDC', amount: '10000', status: 'CREDITED', txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    expect(deposits.blockInfo).toEqual({ number: expect.stringMatching(/^\d+$/), hash: expect.stringMatching(/^0x[0-9a-f]{64}$/), timestamp: expect.any(Number) });
    const account = await trader.get<any>('account');
    expect(account).toMatchObject({ balance: '10000', deposited: '10000', equity: '10000' });
  });

  it('the demo market maker keeps every book two-sided, five levels a side around the index', async () => {
    const trader = t.perpTrader!;
    for (const symbol of ['BTC-USD', 'ETH-USD', 'AAPL-USD', 'TSLA-USD', 'NVDA-USD']) {
      const depth = await waitFor(
        () => trader.request<{ bids: string[][]; asks: string[][] }>('GET', 'depth', { query: { symbol } }),
        (r) => (r.data?.bids.length ?? 0) >= 5 && (r.data?.asks.length ?? 0) >= 5,
      );
      // Prices compared exactly, as integers of 1e-8 USD.
      const px = (v: string) => parseDecimal(v, { field: 'price', decimals: 8 });
      const bids = depth.data!.bids.map(([p]) => px(p));
      const asks = depth.data!.asks.map(([p]) => px(p));
      expect(bids).toEqual([...bids].sort((a, b) => (a > b ? -1 : a < b ? 1 : 0)));
      expect(asks).toEqual([...asks].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
      expect(bids[0] < asks[0]).toBe(true);
      const [ticker] = await trader.get<any[]>('tickers', { symbol });
      expect(ticker.indexPrice).not.toBeNull();
      // Within 1 % of the index on both sides (the first level is 5 bps away, the fifth 25 bps).
      const index = px(ticker.indexPrice);
      expect(bids[0] * 100n > index * 99n && bids[0] < index).toBe(true);
      expect(asks[0] * 100n < index * 101n && asks[0] > index).toBe(true);
    }
  });

  it('a new install shows trades: the demo taker trades against the market maker, and tickers and candles show it', async () => {
    const trader = t.perpTrader!;
    const traded = await waitFor(() => trader.get<any[]>('tickers'), (list) => list.some((x) => x.lastPrice !== null && x.trades24h > 0));
    const ticker = traded.find((x) => x.lastPrice !== null)!;
    expect(ticker.volume24h).not.toBe('0');
    const candles = await waitFor(() => trader.get<any[]>('klines', { symbol: ticker.symbol, interval: '1m' }), (c) => c.length > 0);
    expect(candles.reduce((n, c) => n + c.trades, 0)).toBeGreaterThan(0);
  });

  it('runs examples/perp-trade.ts: a key for wallets[1], approve and deposit through the API, a limit and a market order against the market maker, the position closed', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'examples/perp-trade.ts'], { env: { ...process.env, DATA_DIR: t.dataDir } });
    const lines = stdout.trim().split('\n');
    expect(lines[0]).toMatch(new RegExp(`^api key [0-9a-f]{32} for ${t.demo.wallets[1].address}$`));
    expect(lines[1]).toMatch(/^deposited 1000 USDC in 0x[0-9a-f]{64}: balance 1000\.00, free 1000\.00$/);
    expect(lines).toContainEqual(expect.stringMatching(/^limit order \d+: FILLED, filled 1 at \d+(\.\d+)?, fee 0\.\d+$/));
    expect(lines).toContainEqual(expect.stringMatching(/^market order \d+: FILLED, filled 2 at \d+(\.\d+)?, fee 0\.\d+$/));
    expect(lines).toContainEqual(expect.stringMatching(/^position: LONG 3 AAPL-USD entry \d+(\.\d+)?, mark \d+(\.\d+)?, uPnL -?\d+(\.\d+)?, liquidation (null|\d+(\.\d+)?)$/));
    expect(lines).toContainEqual(expect.stringMatching(/^closed: FILLED, sold 3 at \d+(\.\d+)?$/));
    expect(lines.at(-1)).toMatch(/^open positions: 0; balance \d+(\.\d+)?, realised PnL -?\d+(\.\d+)?, fees \d+(\.\d+)?$/);
    // Money adds up exactly: balance = 1 000 + realised PnL − fees.
    const [, balance, pnl, fees] = /balance (\S+), realised PnL (\S+), fees (\S+)$/.exec(lines.at(-1)!)!;
    const micros = (v: string) => parseDecimal(v.replace('-', ''), { field: 'v', decimals: 6, positive: false }) * (v.startsWith('-') ? -1n : 1n);
    expect(micros(balance)).toBe(1_000_000_000n + micros(pnl) - micros(fees));
    // The wallet's deposit is on chain and credited; its three orders are in the history.
    const key = /^api key ([0-9a-f]{32})/.exec(lines[0])![1];
    // The history is projected a write behind the engine: wait for its three rows.
    const rows = await waitFor(
      async () => (await t.stack.perpHistoryDb()).kysely.selectFrom('perp_orders').selectAll().where('account', '=', t.demo.wallets[1].address.toLowerCase()).execute(),
      (r) => r.length >= 3,
    );
    expect(rows.map((r) => r.status)).toEqual(['FILLED', 'FILLED', 'FILLED']);
    expect(key).toHaveLength(32);
  }, 90_000);

  it('runs examples/perp-risk.ts: a crash played with set-price liquidates a 19x long through the book, the fund takes the fee, a second wallet adds liquidity and withdraws to its wallet', async () => {
    // The pool was seeded by the demo market maker ($200,000), so it quotes and backstops.
    const pool = await waitFor(() => t.perpTrader!.get<{ totalShares: string; equity: string }>('liquidity/positions'), (p) => p.totalShares !== '0');
    expect(pool.totalShares).toBe('200000');
    // set-price writes to the stack's own database: the SQLite stack's must not be the outer DATABASE_URL.
    const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env, DATA_DIR: t.dataDir };
    if (env.DATABASE_URL === undefined) delete childEnv.DATABASE_URL;
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'examples/perp-risk.ts'], { env: childEnv });
    const lines = stdout.trim().split('\n');
    const micros = (v: string) => parseDecimal(v.replace('-', ''), { field: 'v', decimals: 6, positive: false }) * (v.startsWith('-') ? -1n : 1n);
    expect(lines[0]).toBe(`trader ${t.demo.wallets[2].address} and liquidity provider ${t.demo.wallets[3].address} deposited 1000 and 5000 USDC`);
    expect(lines).toContainEqual(expect.stringMatching(/^liquidation order \d+: (FILLED|EXPIRED), sold \d+(\.\d+)? at \d+(\.\d+)?$/));
    const feeLine = lines.find((l) => l.startsWith('liquidation fee '))!;
    const [, fee, before, after] = /^liquidation fee (\S+) to the insurance fund: (\S+) -> (\S+)$/.exec(feeLine)!;
    // The fee is 1 % of the closed notional (capped by the surplus), and the fund holds exactly it more.
    expect(micros(fee) > 0n).toBe(true);
    expect(micros(after)).toBe(micros(before) + micros(fee));
    const added = /^added 1000 USDC to the pool: (\S+) shares worth (\S+), locked until /.exec(lines.find((l) => l.startsWith('added '))!)!;
    // Minted at equity ÷ shares, rounded for the pool: worth at most what was added, within a micro-USD a share.
    expect(micros(added[2]) <= 1_000_000_000n).toBe(true);
    expect(micros(added[2]) >= 1_000_000_000n - micros(added[1]) / 1_000_000n - 1n).toBe(true);
    expect(lines.at(-1)).toMatch(/^withdrawal COMPLETED in 0x[0-9a-f]{64}: wallet \+1500 USDC$/);
  }, 180_000);

  it('keeps the demo trader key across a restart on the same data', async () => {
    const before = t.demo.perp!.keys.trader;
    await t.stop();
    t = await startTestStack(env, { dataDir: t.dataDir });
    expect(t.demo.perp!.keys.trader).toEqual(before);
    expect((await t.perpTrader!.request('GET', 'instruments')).code).toBe(0);
  });
});
