/**
 * The publisher's staged rounds (a sandbox's advance at a step it does not move the chain to):
 * made by the same rules as a publication, kept in the process instead of sent, answered by
 * `latest` for the perpetual index's check, and forgotten by the next publication on the chain.
 */
import { describe, expect, it } from 'vitest';
import type { Address, Hex } from 'viem';
import { createOraclePublisher } from './oracle-publisher.ts';
import type { Quote } from './market-types.ts';

const HUB = '0x00000000000000000000000000000000000000aa' as Address;
const FEED = '0x00000000000000000000000000000000000000f1' as Address;
const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 10, 2, 15, 0, 0);

function harness() {
  const clock = { t: T0 };
  const chain = { time: T0 / 1000, round: { roundId: 1n, answer: 10_000_000_000n, startedAt: BigInt(T0 / 1000 - 30), updatedAt: BigInt(T0 / 1000 - 30), writtenAt: BigInt(T0 / 1000 - 29) } };
  const quotes = new Map<string, Quote>();
  const sent: Array<{ to: Address; data: Hex }> = [];
  const publicClient = {
    readContract: async () => [chain.round],
    getBlock: async () => ({ timestamp: BigInt(chain.time) }),
    estimateContractGas: async () => 100_000n,
  };
  const sender = {
    address: '0x00000000000000000000000000000000000000b0' as Address,
    send: async (req: { to: Address; data: Hex }) => {
      sent.push(req);
      return { status: 'success', logs: [], transactionHash: `0x${'1'.repeat(64)}` };
    },
  };
  const publisher = createOraclePublisher({
    publicClient: publicClient as never,
    sender: sender as never,
    hub: HUB,
    feeds: [{ symbol: 'AAPL', feed: FEED }],
    quotes: { getQuote: (s: string) => quotes.get(s), listQuotes: () => [...quotes.values()] } as never,
    now: () => clock.t,
  });
  const quote = (mid: string, at: number) => quotes.set('AAPL', { symbol: 'AAPL', bid: mid, ask: mid, last: mid, timestamp: at } as Quote);
  return { clock, chain, sent, publisher, quote };
}

describe('oracle publisher: rounds staged at an advance\'s steps', () => {
  it('stages the step\'s round without sending, and answers it as the latest', async () => {
    const h = harness();
    // Before anything: the chain's round as read.
    await h.publisher.stage();
    h.clock.t = T0 + HOUR;
    h.quote('101.50', T0 + HOUR);
    const out = await h.publisher.stage();
    expect(out).toEqual({ published: ['AAPL'], triggers: { AAPL: 'deviation' }, skipped: {} });
    expect(h.sent).toEqual([]);
    const s = (T0 + HOUR) / 1000;
    expect(h.publisher.latest('AAPL')).toEqual({ answer: 10_150_000_000n, decimals: 8, updatedAt: s, observedAt: s, chainTime: s });
    expect(h.publisher.latest('MSFT')).toBeUndefined();

    // The next step's round, the same price: due on the heartbeat (an hour since the staged one).
    h.clock.t = T0 + 2 * HOUR;
    h.quote('101.50', T0 + 2 * HOUR);
    expect((await h.publisher.stage()).triggers).toEqual({ AAPL: 'heartbeat' });
    expect(h.publisher.latest('AAPL')?.observedAt).toBe((T0 + 2 * HOUR) / 1000);
  });

  it('publishes on the chain against the chain\'s own round, forgetting what was staged', async () => {
    const h = harness();
    h.clock.t = T0 + HOUR;
    h.quote('100.00', T0 + HOUR);
    await h.publisher.stage();
    // The chain moved to the step: the same price as its own (hour-old) round, due on the heartbeat
    // though a round of that price was staged a moment ago.
    h.chain.time = (T0 + HOUR) / 1000;
    h.clock.t = T0 + HOUR + 500;
    const out = await h.publisher.runOnce();
    expect(out.triggers).toEqual({ AAPL: 'heartbeat' });
    expect(h.sent.map((r) => r.to)).toEqual([HUB]);
    const s = (T0 + HOUR) / 1000;
    expect(h.publisher.latest('AAPL')).toEqual({ answer: 10_000_000_000n, decimals: 8, updatedAt: s, observedAt: s, chainTime: s });
  });

  it('stages nothing for a quote it would not publish, and says why', async () => {
    const h = harness();
    h.clock.t = T0 + HOUR;
    h.quote('100.20', T0 + HOUR - 31_000);
    expect(await h.publisher.stage()).toEqual({ published: [], triggers: {}, skipped: { AAPL: 'stale-quote' } });
    // The chain's round stands as the latest.
    expect(h.publisher.latest('AAPL')?.observedAt).toBe(T0 / 1000 - 30);
  });
});
