import { describe, expect, it } from 'vitest';
import type { Address } from 'viem';
import { createChainClockMonitor } from './chain-clock-monitor.ts';
import type { ChainPublicClient } from './chain-client.ts';

const ROUTER = '0x1111111111111111111111111111111111111111' as Address;
const HUB = '0x2222222222222222222222222222222222222222' as Address;
const AAPL = '0x3333333333333333333333333333333333333333' as Address;
const TSLA = '0x4444444444444444444444444444444444444444' as Address;

/** A node answering `block` as the latest, the router's oracle configs per stock and the hub's constant. */
function fakeNode(block: { number: bigint; timestamp: bigint }, maxAges: Record<string, number>) {
  const calls = { getBlock: 0, readContract: 0 };
  const client = {
    async getBlock() {
      calls.getBlock++;
      return block;
    },
    async readContract(a: { functionName: string; args?: readonly Address[] }) {
      calls.readContract++;
      if (a.functionName === 'MAX_CLOCK_SKEW') return 60n;
      const age = maxAges[a.args![0]];
      const feed = age === undefined ? '0x0000000000000000000000000000000000000000' : '0x5555555555555555555555555555555555555555';
      return [{ feed, decimals: 8, toleranceBps: 100, maxAge: age ?? 0 }, 0n, 0n, 0n, 0n];
    },
  } as unknown as ChainPublicClient;
  return { client, calls };
}

describe('the chain clock monitor', () => {
  it("reads the smallest maxAge of the stocks with a feed, the hub's bound, and the lead of the latest block", async () => {
    const clock = { now: 1_795_571_692_120 };
    const node = fakeNode({ number: 812n, timestamp: 1_795_571_915n }, { [AAPL]: 180, [TSLA]: 240 });
    const m = createChainClockMonitor({
      publicClient: node.client,
      venue: { stockRouter: ROUTER, stocks: [AAPL, TSLA], hub: () => HUB, oracleAgeMarginS: 15 },
      now: () => clock.now,
    });
    await m.refresh();
    expect(m.figures()).toEqual({ chainTime: 1_795_571_915_000, block: 812, readAt: 1_795_571_692_120, skewMs: 222_880, oracleMaxAgeS: 180, oracleAgeMarginS: 15, hubMaxClockSkewS: 60 });
    // The bounds are read once a minute, the block every poll.
    clock.now += 2_000;
    await m.refresh();
    expect(node.calls).toEqual({ getBlock: 2, readContract: 3 });
  });

  it('takes an idle chain for in step, and measures behind on a block seen appearing', async () => {
    const clock = { now: 1_795_571_692_120 };
    const block = { number: 90n, timestamp: 1_795_571_000n };
    const node = fakeNode(block, {});
    const m = createChainClockMonitor({ publicClient: node.client, now: () => clock.now });
    await m.refresh();
    // Eleven minutes since the last block, not seen appearing: idle.
    expect(m.figures()?.skewMs).toBe(0);
    // A new block stamped 75 s before this host's clock when first seen.
    block.number = 91n;
    block.timestamp = 1_795_571_617n;
    await m.refresh();
    expect(m.figures()).toEqual({ chainTime: 1_795_571_617_000, block: 91, readAt: 1_795_571_692_120, skewMs: -75_120 });
    // It stands while no newer block comes, however old the block grows.
    clock.now += 30_000;
    await m.refresh();
    expect(m.figures()?.skewMs).toBe(-75_120);
  });
});
