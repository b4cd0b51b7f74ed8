/**
 * What a start again in the process keeps of the chains' set-up (docs/sandbox.md "Snapshots, revert
 * and reset"): a snapshot or a revert puts each chain back to a state this process set up, so the
 * set-up steps are not run again; a reset puts back the seed, which an earlier process may have made
 * under other settings, so they all run again. Here the seed was made with the oracle's checks on,
 * and this process runs with ORACLE_TOLERANCE_BPS=0: after a reset the StockRouter's checks must be
 * off again, as this process's settings say, not as the seed left them.
 */
import { createPublicClient, http, type Address } from 'viem';
import { afterAll, expect, it } from 'vitest';
import { stockRouterAbi } from '../../src/chain/abi/generated/index.ts';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';
import { sandboxClient } from './sandbox-client.ts';

const ZERO = '0x0000000000000000000000000000000000000000';
let t: TestStack | undefined;
afterAll(async () => {
  await t?.stop();
});

async function aaplFeed(stack: TestStack): Promise<Address> {
  const pub = createPublicClient({ transport: http(stack.demo.rpcUrl) });
  const { stockRouter, stocks } = stack.stack.deployment.contracts;
  return (await pub.readContract({ address: stockRouter, abi: stockRouterAbi, functionName: 'priceFeedOf', args: [stocks.AAPL] })).feed;
}

it("a reset runs the chains' set-up again under this process's settings; a revert keeps this process's", async () => {
  // The seed: the data directory's first start, the oracle's checks on.
  t = await startTestStack();
  expect(await aaplFeed(t)).not.toBe(ZERO);
  const dataDir = t.dataDir;
  await t.stop();
  t = undefined;

  // Another process, the checks off: its first start removes them.
  t = await startTestStack({ ORACLE_TOLERANCE_BPS: '0' }, { dataDir });
  const sb = sandboxClient(t);
  expect(await aaplFeed(t)).toBe(ZERO);

  // A snapshot and a revert start the venue again on states this process set up: still off.
  const snap = await sb.ok('POST', '/snapshots');
  await sb.ok('POST', `/snapshots/${snap.id}/revert`);
  expect(await aaplFeed(t)).toBe(ZERO);

  // The reset puts back the seed's chain, with the checks on: the set-up runs again and removes them.
  await sb.ok('POST', '/reset');
  expect(await aaplFeed(t)).toBe(ZERO);
}, 240_000);
