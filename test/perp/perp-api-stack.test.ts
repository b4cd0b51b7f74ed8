/**
 * The perp API in the real embedded stack (role `all`): served on its own port, demo.json carries
 * `perp.baseUrl` and the trader key of wallets[0] (kept across a restart), and a key a wallet
 * creates works beside it.
 */
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { privateKeyToAccount } from 'viem/accounts';
import type { Hex } from 'viem';
import { PerpClient } from '../../src/sdk/perp-client.ts';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';
import { stackEngines } from '../support/stack-engines.ts';

describe.each(stackEngines('perpstack'))('perp API in the stack ($name)', (engine) => {
  let t: TestStack;
  let env: Record<string, string>;
  beforeAll(async () => {
    env = engine.env();
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
    expect(Object.keys(demo.stock).sort()).toEqual(['baseUrl', 'contracts', 'keys', 'product']);
    expect(demo.perp.baseUrl).toBe(t.perpBaseUrl);
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

  it('keeps the demo trader key across a restart on the same data', async () => {
    const before = t.demo.perp!.keys.trader;
    await t.stop();
    t = await startTestStack(env, { dataDir: t.dataDir });
    expect(t.demo.perp!.keys.trader).toEqual(before);
    expect((await t.perpTrader!.request('GET', 'instruments')).code).toBe(0);
  });
});
