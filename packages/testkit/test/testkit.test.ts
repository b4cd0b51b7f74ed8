/**
 * @tokex/testkit on the real embedded venue: a template prepared once (a cold start) and a venue
 * started from it (a restart of the seeded venue: the same contracts and keys, fresh ports); a
 * snapshot, changes (a mint, a pin, an hour of clock, a fault), and reverts to it, each on the same
 * ports with every URL and client still valid and the changes gone; the id usable again; the fault in
 * force at the snapshot in force again after each revert. Snapshots and reverts are the server's (the venue starts again in its process).
 * The wall times are logged (docs/testkit.md quotes them): `TESTKIT_REVERTS=10` measures more reverts.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createPublicClient, erc20Abi, http, parseUnits } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, describe, expect, it } from 'vitest';
import TokexPerp from 'ccxt-tokex';
import { prepareTemplate, startVenue, TESTKIT_HISTORY_DAYS, type Venue } from '../src/index.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

const REVERTS = Number(process.env.TESTKIT_REVERTS ?? 3);
const templateDir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'tokex-testkit-template-')), 'venue');
let venue: Venue | undefined;
const figures: Record<string, number | number[]> = {};

afterAll(async () => {
  await venue?.stop();
  fs.rmSync(path.dirname(templateDir), { recursive: true, force: true });
  console.log(`testkit figures (wall ms, ${os.cpus().length} cores, load ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}): ${JSON.stringify(figures)}`);
}, 60_000);

const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];

describe('@tokex/testkit', () => {
  let templateDemo: any;

  it('prepares a template (a cold start, stopped) and starts a venue from it: no deployment, fresh ports', async () => {
    const prepared = await prepareTemplate(templateDir);
    figures.coldStartMs = prepared.coldStartMs;
    templateDemo = JSON.parse(fs.readFileSync(path.join(templateDir, 'demo.json'), 'utf8'));
    // Stopped cleanly: the chain's state was written for the next start.
    expect(fs.existsSync(path.join(templateDir, 'anvil-state.json'))).toBe(true);

    const t0 = Date.now();
    venue = await startVenue({ template: templateDir, env: { LOG_LEVEL: 'info' } });
    figures.templateStartMs = Date.now() - t0;
    // The template's venue, restarted: its contracts, keys and sandbox token, on ports of its own.
    expect(venue.demo.stock.contracts).toEqual(templateDemo.stock.contracts);
    expect(venue.demo.perp!.contracts).toEqual(templateDemo.perp.contracts);
    expect(venue.demo.stock.keys).toEqual(templateDemo.stock.keys);
    expect(venue.demo.sandbox!.token).toBe(templateDemo.sandbox.token);
    expect(venue.dataDir).not.toBe(templateDir);
    expect(venue.output()).toContain('reusing deployed contracts');
    expect(venue.output()).not.toContain('deploying venue');
    expect(await venue.clock.get()).toMatchObject({ frozen: false, advancedMs: 0 });
    expect((await venue.perp.getAccount()).balance).toBe('10000');
    // A test venue seeds a week of history (TESTKIT_HISTORY_DAYS), not npm start's 30 days: the
    // oldest hour of AAPL is within the week (its first session in it, a weekend aside).
    const now = await venue.clock.now();
    const [oldest] = (await venue.stock.getPriceHistory('AAPL', { interval: '1h', startTime: 0, endTime: Math.floor(now / 1000), limit: 1 })).candles;
    expect(oldest.openTime).toBeGreaterThanOrEqual(now - TESTKIT_HISTORY_DAYS * DAY - HOUR);
    expect(oldest.openTime).toBeLessThan(now - (TESTKIT_HISTORY_DAYS - 4) * DAY);

    // The helpers: a raw call keeps the envelope; a refusal is a SandboxError with the status and errMsg.
    const raw = await venue.sandbox<{ frozen: boolean }>('GET', '/clock');
    expect([raw.status, raw.body.code, raw.body.data?.frozen]).toEqual([200, 200, false]);
    await expect(venue.clock.advance(0)).rejects.toMatchObject({ name: 'SandboxError', status: 400, errMsg: expect.stringMatching(/^seconds/) });
    const frozen = await venue.clock.freeze();
    expect(frozen.frozen).toBe(true);
    expect(await venue.clock.now()).toBe(frozen.now);
    expect((await venue.clock.freeze(false)).frozen).toBe(false);
    const pricePath = await venue.prices.path('ETH', [{ price: '3000', afterMs: 0 }, { price: 2900, afterMs: 60_000 }]);
    expect(pricePath.path.map((s) => [s.price, s.at - pricePath.startedAt])).toEqual([['3000.00', 0], ['2900.00', 60_000]]);
    expect((await venue.prices.release('ETH')).released).toBe(true);
    // A fund with an Idempotency-Key, retried: the first answer again, minted once.
    const holder = privateKeyToAccount(generatePrivateKey()).address;
    const once = await venue.fund(holder, 'AAPL', '2.5', { idempotencyKey: 'testkit-fund-1' });
    expect(once.balance).toBe('2.5');
    expect(await venue.fund(holder, 'AAPL', '2.5', { idempotencyKey: 'testkit-fund-1' })).toEqual(once);
  }, 420_000);

  it('snapshots, and reverts to it on the same ports: a mint, a pin, the clock and a fault are gone; the id serves again', async () => {
    const v = venue!;
    const chain = createPublicClient({ transport: http(v.baseUrls.rpc) });
    const usdc = v.demo.stock.contracts.cashToken;
    const usdcOf = (a: `0x${string}`) => chain.readContract({ address: usdc, abi: erc20Abi, functionName: 'balanceOf', args: [a] });
    const urls = { ...v.baseUrls };

    // A fault in force at the snapshot: in force again after each revert, with the count it had left.
    const kept = { kind: 'http-503', path: '/api/v1/kept-across', remaining: 7 };
    await v.faults.add({ kind: 'http-503', path: '/api/v1/kept-across', count: 7 });
    let t0 = Date.now();
    const id = await v.snapshot();
    figures.snapshotMs = Date.now() - t0;
    expect(v.baseUrls).toEqual(urls);
    expect(await v.faults.list()).toEqual([expect.objectContaining(kept)]);
    const reverts: number[] = [];

    // The CCXT class, ready for the venue: an order through it is gone with the revert, and the same
    // instance reads the reverted venue on the same URL.
    const ex = v.ccxt(TokexPerp, { rateLimit: 20 });
    expect((await ex.fetchBalance()).total as unknown as Record<string, number>).toMatchObject({ USDC: 10_000 });
    const book = await ex.fetchOrderBook('BTC/USD:USD', 5);
    const restingBid = Math.floor((book.bids[0]?.[0] ?? 60_000) * 0.5);
    const placed = await ex.createOrder('BTC/USD:USD', 'limit', 'buy', 0.001, restingBid);
    expect((await ex.fetchOpenOrders('BTC/USD:USD')).map((o) => o.id)).toEqual([placed.id]);
    t0 = Date.now();
    await v.revert(id);
    reverts.push(Date.now() - t0);
    expect(await ex.fetchOpenOrders('BTC/USD:USD')).toEqual([]);

    for (let round = 0; round < REVERTS; round++) {
      // Changes after the snapshot, each read back before the revert.
      const holder = privateKeyToAccount(generatePrivateKey()).address;
      const funded = await v.fund(holder, 'USDC', '1000');
      expect(funded.balance).toBe('1000');
      expect(await usdcOf(holder)).toBe(parseUnits('1000', 6));
      const pinned = await v.prices.set('AAPL', '123.45');
      expect(pinned.quote.last).toBe('123.45');
      const advance = await v.clock.advance(3600);
      expect(advance.to - advance.from).toBe(3_600_000);
      await v.faults.add({ kind: 'http-503', path: '/api/v1/nothing-here', count: 5 });
      expect(await v.faults.list()).toHaveLength(2);

      t0 = Date.now();
      await v.revert(id);
      reverts.push(Date.now() - t0);

      // The same URLs, and the SDK clients, the chain client and the sandbox all answer on them.
      expect(v.baseUrls).toEqual(urls);
      expect(JSON.parse(fs.readFileSync(path.join(v.dataDir, 'demo.json'), 'utf8')).rpcUrl).toBe(urls.rpc);
      // The mint is gone (the chain is the snapshot's), so are the advance, the pin and the fault.
      expect(await usdcOf(holder)).toBe(0n);
      expect((await v.clock.get()).advancedMs).toBe(0);
      expect(await v.faults.list()).toEqual([expect.objectContaining(kept)]);
      expect((await v.stock.getPrice('AAPL')).last).not.toBe('123.45');
      expect((await v.perp.getAccount()).balance).toBe('10000');
    }
    figures.revertMs = reverts;
    figures.revertP50Ms = p50(reverts);
  }, 600_000);

  it('stops the venue and removes the data directory and the snapshots it made; the template stays', async () => {
    const dir = venue!.dataDir;
    await venue!.stop();
    venue = undefined;
    expect(fs.existsSync(dir)).toBe(false);
    expect(fs.existsSync(path.join(templateDir, 'demo.json'))).toBe(true);
  }, 60_000);
});
