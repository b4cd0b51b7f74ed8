/**
 * The deploy at start on a node that answers slowly (a first `npm start` on a busy machine; CI once
 * failed a two-chain start when anvil took more than 5 s to answer twice): the deploy's own clients
 * wait for it, where the request path's 5-second timeout with one retry gave up with
 * "chain: RPC unavailable". A JSON-RPC proxy holds the first two `eth_getCode` exchanges for 6 s each.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAnvil, type AnvilHandle } from '../../src/chain/anvil-process.ts';
import { ANVIL_CHAIN_ID, OPERATOR_ACCOUNT } from '../../src/chain/anvil-accounts.ts';
import { stockVenueDeployer } from '../../src/chain/deploy-contracts.ts';
import { readDeploymentRecord } from '../../src/chain/deployment-file.ts';
import { startChain } from '../../src/app/chain-wiring.ts';
import { SETUP_RPC_TIMEOUT_MS } from '../../src/chain/chain-client.ts';
import { createStopList } from '../../src/app/stop-list.ts';
import { loadConfig } from '../../src/config/app-config.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { startChainFaultProxy, type ChainFaultProxy } from '../support/chain-fault-proxy.ts';

const SLOW_MS = 6_000;
let anvil: AnvilHandle;
let proxy: ChainFaultProxy;
let dir: string;

beforeAll(async () => {
  anvil = await startAnvil();
  proxy = await startChainFaultProxy({ upstream: anvil.rpcUrl, slow: { methods: ['eth_getCode'], calls: 2, ms: SLOW_MS } });
  dir = mkdtempSync(path.join(os.tmpdir(), 'slow-node-'));
}, 60_000);
afterAll(async () => {
  await proxy?.close();
  await anvil?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the deploy at start on a slow node', () => {
  it('waits out answers slower than the request path would (6 s, twice) and deploys the venue', async () => {
    expect(SLOW_MS).toBeLessThan(SETUP_RPC_TIMEOUT_MS);
    const config = loadConfig({ DATA_DIR: dir, RPC_URL: proxy.url, CHAIN_ID: String(ANVIL_CHAIN_ID), OPERATOR_PRIVATE_KEY: OPERATOR_ACCOUNT.privateKey });
    const logger = createLogger({ name: 'slow-node-test', level: 'silent' });
    const stops = createStopList(logger);
    try {
      const wiring = await startChain({
        config,
        logger,
        stops,
        allInOneProcess: true,
        venues: () => [stockVenueDeployer({ symbols: [{ symbol: 'AAPL', name: 'Apple Inc.' }], demoWallets: [], options: { operators: [] } })],
      });
      expect(proxy.stats().slowed).toBe(2);
      const saved = (await readDeploymentRecord(path.join(dir, 'deployments', `${ANVIL_CHAIN_ID}.json`)))!.record;
      expect(saved.venues.stock.contracts.stockRouter).toBe(wiring.deployment.contracts.stockRouter);
      // Deployed for real: the router has code on the node itself.
      const code = await fetch(anvil.rpcUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_getCode', params: [wiring.deployment.contracts.stockRouter, 'latest'] }),
      }).then((r) => r.json() as Promise<{ result: string }>);
      expect(code.result.length).toBeGreaterThan(2);
    } finally {
      await stops.stopAll();
    }
  }, 120_000);
});
