/**
 * A split through the whole stack: `examples/split.ts` on a running stack (the real CLI, the
 * executor's scheduler with the Stock owner's key, the simulator, the indexer and the stock API).
 * Balances and the total supply scale by the ratio, the resting order is restated, the quotes move
 * to the new shares, and `GET corporate-action` shows the split applied with its transaction.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, http, type Address } from 'viem';
import { stockAbi } from '../../src/chain/abi/generated/index.ts';
import { newYorkDate } from '../../src/marketdata/corporate-actions.ts';
import { until } from '../support/poll.ts';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';

const run = promisify(execFile);
let t: TestStack;

beforeAll(async () => {
  t = await startTestStack({ CORPORATE_ACTIONS_TICK_MS: '200' });
}, 120_000);
afterAll(async () => {
  await t?.stop();
});

describe('a split through the CLI, the scheduler, the quotes and the API', () => {
  it('runs examples/split.ts: a 2:1 split doubles the holding and the supply, restates the resting order, halves the price', async () => {
    const { DATABASE_URL: _d, DATABASE_SCHEMA: _s, REDIS_URL: _r, ...env } = process.env;
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'examples/split.ts', 'MSFT', '2:1'], { env: { ...env, DATA_DIR: t.dataDir }, timeout: 240_000 });
    const today = newYorkDate(Date.now());
    expect(stdout).toContain(`holder ${t.demo.wallets[0].address.toLowerCase()}: MSFT on ${today}, split 2:1\n`);
    const [, orderId, limit] = /^resting order (\d+): sell 1 at ([\d.]+)$/m.exec(stdout) ?? [];
    expect(orderId).toBeDefined();
    const [, sharesBefore, priceBefore, supplyBefore] = /^before: ([\d.]+) shares at ([\d.]+), value [\d.]+; supply ([\d.]+)$/m.exec(stdout) ?? [];
    const [, sharesAfter, priceAfter, supplyAfter] = /^after: ([\d.]+) shares at ([\d.]+), value [\d.]+; supply ([\d.]+)$/m.exec(stdout) ?? [];
    // Exact: every balance and the supply double.
    expect(BigInt(sharesAfter)).toBe(BigInt(sharesBefore) * 2n);
    expect(BigInt(supplyAfter)).toBe(BigInt(supplyBefore) * 2n);
    // The resting sell: twice the quantity at half the limit, exactly (18 decimals hold it).
    const mills = BigInt(Math.round(Number(limit) * 100)) * 5n;
    const half = `${mills / 1000n}.${(mills % 1000n).toString().padStart(3, '0')}`.replace(/\.?0+$/, '');
    expect(stdout).toContain(`resting order ${orderId}: sell 2 at ${half} (open)\n`);
    // The price halved (the simulator walks on from the split's price: within a few percent).
    expect(Number(priceAfter)).toBeGreaterThan((Number(priceBefore) / 2) * 0.95);
    expect(Number(priceAfter)).toBeLessThan((Number(priceBefore) / 2) * 1.05);

    const page = await t.readOnly.get<any>('/api/v1/corporate-action', { symbol: 'MSFT' });
    const row = page.rows.find((r: any) => r.exDate === today);
    expect(row).toMatchObject({ symbol: 'MSFT', type: 'SPLIT', ratio: '2:1', status: 'applied' });
    expect(row.txHash).toMatch(/^0x[0-9a-f]{64}$/);
    const chain = createPublicClient({ transport: http(t.demo.rpcUrl) });
    const msft = t.demo.stock.contracts.stocks.MSFT as Address;
    expect(await chain.readContract({ address: msft, abi: stockAbi, functionName: 'multiplier' })).toBe(2n * 10n ** 36n);
    expect(await chain.readContract({ address: msft, abi: stockAbi, functionName: 'totalSupply' })).toBe(BigInt(Math.round(Number(supplyAfter))) * 10n ** 18n);
    // The API's order view reads the restated order, and the quote is in the new shares.
    const order = await t.writable.get<any>(`/api/v1/orders/${orderId}`);
    expect(order).toMatchObject({ quantity: '2', state: 'open' });

    // The history back-adjusts the minutes before the split's moment (the row says when), and only those.
    expect(row.effectiveAt % 60_000).toBe(0);
    const history = async (adjustment: string) =>
      (await t.readOnly.get<any>('/api/v1/prices/MSFT/history', { interval: '1m', adjustment, limit: 10, endTime: Math.floor(Date.now() / 1000) })).candles as Array<{ openTime: number; exact: { close: string } }>;
    // The live minute's candle moves with every tick of the simulator, so the two views are compared
    // as of a moment no tick came between them: the raw history read again after the adjusted one,
    // every close unchanged (two sequential reads otherwise differ by a tick on a loaded machine).
    const { raw, adjusted } = await until(
      async () => ({ raw: await history('raw'), adjusted: await history('split'), again: await history('raw') }),
      (r) => r.raw.every((c) => r.again.find((x) => x.openTime === c.openTime)?.exact.close === c.exact.close),
      60_000,
    );
    const byTime = new Map(raw.map((c) => [c.openTime, c.exact.close]));
    const before = adjusted.filter((c) => c.openTime < row.effectiveAt && byTime.has(c.openTime));
    const after = adjusted.filter((c) => c.openTime >= row.effectiveAt && byTime.has(c.openTime));
    expect(before.length).toBeGreaterThan(0);
    expect(after.length).toBeGreaterThan(0);
    for (const c of before) expect(Number(c.exact.close)).toBeCloseTo(Number(byTime.get(c.openTime)) / 2, 6);
    for (const c of after) expect(c.exact.close).toBe(byTime.get(c.openTime));
  }, 300_000);
});
