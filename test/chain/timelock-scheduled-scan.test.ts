/**
 * GET config's `scheduled` on a long chain (docs/security.md, "Owner and upgrader"): the reader scans
 * the timelock's events in ranges a JSON-RPC provider accepts (many refuse `eth_getLogs` over more than
 * 10,000 blocks; the reader asks 5,000) and, between refreshes, only the blocks since the last one, on a
 * real anvil behind a client that refuses wider ranges as such a provider does. Scaled down so anvil
 * mines the chain in a second: a provider limit of 50 blocks, the reader's ranges of 40, operations
 * scheduled 120 blocks apart. Both are listed, an executed one leaves the list, and a later refresh
 * reads only the new blocks.
 */
import { encodeFunctionData, getAddress, type Address } from 'viem';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { cashierAbi, venueTimelockAbi } from '../../src/chain/abi/generated/index.ts';
import type { ChainPublicClient } from '../../src/chain/chain-client.ts';
import { TxBatch } from '../../src/chain/deploy-contracts.ts';
import { readScheduledCalls, timelockCalls, timelockDeployArgs, type TimelockScanState } from '../../src/chain/owner-actions.ts';
import type { DeploymentRecord } from '../../src/chain/deployment-file.ts';
import { startChainFixture, type ChainFixture } from '../support/chain-fixture.ts';

let f: ChainFixture;
let timelock: Address;
const ranges: Array<[bigint, bigint]> = [];

/** The fixture's client, refusing `eth_getLogs` over more than 50 blocks as providers do (at 10,000). */
function limitedClient(): ChainPublicClient {
  return new Proxy(f.publicClient, {
    get(target, prop, receiver) {
      if (prop !== 'getLogs') return Reflect.get(target, prop, receiver);
      return async (args: { fromBlock: bigint; toBlock: bigint | 'latest' }) => {
        const to = args.toBlock === 'latest' ? await target.getBlockNumber() : args.toBlock;
        if (to - args.fromBlock + 1n > 50n) throw new Error('query exceeds max block range 50');
        ranges.push([args.fromBlock, to]);
        return target.getLogs(args as never);
      };
    },
  }) as ChainPublicClient;
}

beforeAll(async () => {
  f = await startChainFixture();
  const tx = await TxBatch.open(f.publicClient, f.operator);
  const code = timelockDeployArgs(f.operator.account.address);
  // A delay of an hour: what is scheduled stays waiting until executed after it.
  timelock = await tx.deploy('VenueTimelock', code.abi, code.bytecode, [3_600n, ...code.args.slice(1)]);
  await tx.finish();
});
afterAll(async () => {
  await f?.stop();
});

const mine = (blocks: number) => f.publicClient.request({ method: 'anvil_mine' as never, params: [`0x${blocks.toString(16)}`] as never });
/** A change of the timelock's own delay: an operation it can execute on itself. */
const schedule = (delay: bigint) =>
  timelockCalls({
    publicClient: f.publicClient,
    wallet: f.operator,
    timelock,
    calls: [{ target: timelock, data: encodeFunctionData({ abi: venueTimelockAbi, functionName: 'updateDelay', args: [delay] }) }],
  });

describe("the timelock's scheduled calls", () => {
  test('are read in ranges a provider accepts, incrementally, and leave the list once executed', async () => {
    const record: DeploymentRecord = {
      chainId: f.chainId,
      venues: { stock: { ...f.deployment, blockNumber: '1', firstBlockNumber: '1', timelock: { address: timelock, minDelay: 3_600 } } as never },
    };
    const first = await schedule(3_601n);
    // A second later, so the two are listed by their ready times, not by their ids (which depend on
    // the timelock's address, and so on the fixture's deployment).
    await f.publicClient.request({ method: 'evm_increaseTime' as never, params: ['0x1'] as never });
    await mine(120);
    const second = await schedule(3_602n);
    expect(first).toMatchObject({ done: false, scheduled: true });
    expect(second).toMatchObject({ done: false, scheduled: true });

    const scans = new Map<string, TimelockScanState>();
    const client = limitedClient();
    const read = () => readScheduledCalls({ publicClient: client, record, abis: [cashierAbi], scans, logChunk: 40n });
    const listed = await read();
    expect(listed.map((c) => [c.functionName, c.args, c.contract])).toEqual([
      ['updateDelay', ['3601'], 'stock.timelock'],
      ['updateDelay', ['3602'], 'stock.timelock'],
    ]);
    expect(listed.every((c) => getAddress(c.timelock) === getAddress(timelock))).toBe(true);
    // Every range within the provider's limit, and the whole chain covered once.
    expect(ranges.every(([from, to]) => to - from + 1n <= 40n)).toBe(true);
    expect(ranges.length).toBeGreaterThanOrEqual(9);
    const head = await f.publicClient.getBlockNumber();
    expect(scans.get(timelock.toLowerCase())!.scannedTo).toBe(head);

    // Past the delay the first is executed: it leaves the list; the next read scans only new blocks.
    await f.publicClient.request({ method: 'evm_increaseTime' as never, params: ['0xe11'] as never });
    await mine(1);
    expect(await schedule(3_601n)).toMatchObject({ done: true, via: 'timelock' });
    ranges.length = 0;
    const after = await read();
    expect(after.map((c) => c.args)).toEqual([['3602']]);
    expect(ranges.length).toBe(3);
    expect(ranges.every(([from]) => from >= head - 32n)).toBe(true);
  });
});
