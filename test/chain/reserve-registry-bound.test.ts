/**
 * Issue 43: the ReserveRegistry's epoch bound on a real anvil. Epochs are funding-interval start
 * times in ms; one far ahead of the chain's clock (2^64 − 1 before the bound) would refuse every
 * real epoch after it and stop proof of reserves for good. The registry takes an epoch up to
 * MAX_EPOCH_LEAD_MS (one hour) past the block's time in ms, and no further.
 */
import { describe, expect, it } from 'vitest';
import { type Address, type Hex } from 'viem';
import { reserveRegistryAbi } from '../../src/chain/abi/generated/index.ts';
import type { PerpDeployment } from '../../src/chain/deploy-perp-venue.ts';
import { useChainFixture } from '../support/chain-fixture.ts';
import { deployPerpVenue, perpOperatorWallet } from '../support/perp-venue.ts';
import { confirm, expectRevert } from './chain-test-helpers.ts';

const HOUR_MS = 3_600_000n;
/** One leaf: the registry builds the root from it. */
const LEAVES = [{ salt: `0x${'ab'.repeat(32)}` as Hex, account: '0x00000000000000000000000000000000000000aa' as Address, equity: 10n, pendingWithdrawals: 0n, deposited: 10n, withdrawn: 0n }];

describe('ReserveRegistry epoch bound', () => {
  let perp: PerpDeployment;
  const f = useChainFixture(async () => {
    perp = await deployPerpVenue(f);
  }, {}, 60_000);

  const registry = () => perp.contracts.reserveRegistry as Address;
  const post = (epoch: bigint) => {
    const op = perpOperatorWallet(f);
    return () => f.publicClient.simulateContract({ account: op.account, address: registry(), abi: reserveRegistryAbi, functionName: 'postReservesWithLeaves', args: [epoch, 1n, LEAVES] });
  };
  /** Mines the next block at `seconds` and answers its time in ms. */
  async function blockAt(seconds: bigint): Promise<bigint> {
    await f.testClient.setNextBlockTimestamp({ timestamp: seconds });
    await f.testClient.mine({ blocks: 1 });
    return seconds * 1000n;
  }

  it('refuses 2^64 − 1 and anything past block time + 1 h; the hour itself is taken; the venue keeps posting after', async () => {
    expect(await f.publicClient.readContract({ address: registry(), abi: reserveRegistryAbi, functionName: 'MAX_EPOCH_LEAD_MS' })).toBe(HOUR_MS);
    const T = (await f.publicClient.getBlock()).timestamp + 10n;
    // eth_call runs on a block after the latest, at least as late: pin both by mining at T.
    const nowMs = await blockAt(T);
    const max = 2n ** 64n - 1n;
    await expectRevert(post(max), 'EpochTooFarAhead');
    await expectRevert(post(nowMs + HOUR_MS + 1_000n), 'EpochTooFarAhead');
    // Written on chain, at a block whose time is fixed: the bound is block time (ms) + one hour exactly.
    const op = perpOperatorWallet(f);
    await f.testClient.setNextBlockTimestamp({ timestamp: T + 1n });
    const tooFar = await op.writeContract({ address: registry(), abi: reserveRegistryAbi, functionName: 'postReservesWithLeaves', args: [(T + 1n) * 1000n + HOUR_MS + 1n, 1n, LEAVES], gas: 300_000n });
    expect((await f.publicClient.waitForTransactionReceipt({ hash: tooFar })).status).toBe('reverted');
    await f.testClient.setNextBlockTimestamp({ timestamp: T + 2n });
    const edge = (T + 2n) * 1000n + HOUR_MS;
    await confirm(f, op.writeContract({ address: registry(), abi: reserveRegistryAbi, functionName: 'postReservesWithLeaves', args: [edge, 1n, LEAVES] }));
    expect((await f.publicClient.readContract({ address: registry(), abi: reserveRegistryAbi, functionName: 'latest' })).epoch).toBe(edge);
    // The worst a leaked operator key does with it: the next real epoch waits at most one hour.
    await expectRevert(post(edge), 'EpochNotIncreasing', [edge, edge]);
    await blockAt(T + 3n + 3600n);
    await post(edge + 1n)();
  });

  it('names the epoch and the largest one it would take', async () => {
    const T = (await f.publicClient.getBlock()).timestamp + 10n;
    await blockAt(T);
    // The simulated call runs in the block after: its time is at least T.
    let caught: unknown;
    try {
      await post(2n ** 64n - 1n)();
    } catch (err) {
      caught = err;
    }
    const args = ((caught as { walk: (fn: (e: unknown) => boolean) => { data?: { args?: readonly bigint[] } } }).walk((e) => (e as { data?: unknown }).data !== undefined)).data!.args!;
    expect(args[0]).toBe(2n ** 64n - 1n);
    expect(args[1] >= T * 1000n + HOUR_MS && args[1] <= (T + 2n) * 1000n + HOUR_MS).toBe(true);
    expect(args[1] % 1000n).toBe(0n);
  });
});
