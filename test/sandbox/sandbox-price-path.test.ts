/**
 * Price paths of the sandbox's `POST /prices` (docs/sandbox.md) on the real stack: the answer is the
 * schedule, given at once; the `quotes` stream then shows each step in turn from its moment on; a
 * later pin, or another path, cancels the steps still to come; bad steps are 400 naming the field.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSocket, type TestSocket } from '../support/ws-client.ts';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';
import { sandboxClient } from './sandbox-client.ts';

describe('sandbox price paths', () => {
  let t: TestStack;
  let sb: ReturnType<typeof sandboxClient>;
  let quotes: TestSocket;

  beforeAll(async () => {
    t = await startTestStack();
    sb = sandboxClient(t);
    quotes = await openSocket(t.demo.stock.wsUrl);
    quotes.send({ op: 'subscribe', id: 'q', channel: 'quotes', symbol: 'TSLA' });
    await quotes.next((f) => f.type === 'subscribed' && f.id === 'q');
  }, 180_000);

  afterAll(async () => {
    quotes?.close();
    await t?.stop();
  });

  /** The quote updates from frame `from` on, as (last, timestamp). */
  const updates = (from: number) => quotes.frames.slice(from).filter((f) => f.type === 'update').map((f) => ({ last: f.data.last as string, timestamp: f.data.timestamp as number }));
  /** Consecutive equal prices once. */
  const steps = (xs: { last: string }[]) => xs.map((x) => x.last).filter((p, i, all) => i === 0 || all[i - 1] !== p);

  it('answers the schedule at once, then the quotes show each step in turn from its moment on', async () => {
    const from = quotes.frames.length;
    const before = Date.now();
    const path = await sb.ok('POST', '/prices', { symbol: 'TSLA', path: [{ price: '200', afterMs: 0 }, { price: '210.5', afterMs: 1000 }, { price: '190', afterMs: 2000 }] });
    expect(Date.now() - before).toBeLessThan(1000);
    expect(path).toEqual({
      symbol: 'TSLA',
      startedAt: path.startedAt,
      path: [
        { price: '200.00', afterMs: 0, at: path.startedAt },
        { price: '210.50', afterMs: 1000, at: path.startedAt + 1000 },
        { price: '190.00', afterMs: 2000, at: path.startedAt + 2000 },
      ],
      endsAt: path.startedAt + 2000,
      replaced: false,
    });
    await quotes.next((f) => f.type === 'update' && f.data.last === '190.00', { from });
    const seen = updates(from);
    const first = seen.findIndex((u) => u.last === '200.00');
    expect(steps(seen.slice(first))).toEqual(['200.00', '210.50', '190.00']);
    expect(seen.find((u) => u.last === '210.50')!.timestamp).toBeGreaterThanOrEqual(path.startedAt + 1000);
    expect(seen.find((u) => u.last === '190.00')!.timestamp).toBeGreaterThanOrEqual(path.startedAt + 2000);
    // After the last step its price stays pinned.
    const later = await quotes.next((f) => f.type === 'update' && f.data.timestamp > path.endsAt + 1000, { from });
    expect(later.data.last).toBe('190.00');
  });

  it('a pin cancels the steps still to come, and so does another path (replaced: true)', async () => {
    const start = quotes.frames.length;
    const path = await sb.ok('POST', '/prices', { symbol: 'TSLA', path: [{ price: '300', afterMs: 0 }, { price: '333', afterMs: 1500 }] });
    const pinned = await sb.ok('POST', '/prices', { symbol: 'TSLA', price: '250' });
    expect(pinned).toMatchObject({ symbol: 'TSLA', pinned: true, price: '250.00', quote: { last: '250.00' } });
    // From the pin's first quote on the stream (an earlier quote of the path's may still be on its way).
    const from = quotes.frames.indexOf(await quotes.next((f) => f.type === 'update' && f.data.last === '250.00', { from: start }));
    // Well past the cancelled step's moment: the pin stands.
    await quotes.next((f) => f.type === 'update' && f.data.timestamp > path.startedAt + 2500, { from });
    expect([...new Set(updates(from).map((u) => u.last))]).toEqual(['250.00']);

    const one = await sb.ok('POST', '/prices', { symbol: 'TSLA', path: [{ price: '100', afterMs: 0 }, { price: '111', afterMs: 1500 }] });
    expect(one.replaced).toBe(false);
    const two = await sb.ok('POST', '/prices', { symbol: 'tsla', path: [{ price: '120', afterMs: 0 }, { price: '125', afterMs: 2000 }] });
    expect(two).toMatchObject({ symbol: 'TSLA', replaced: true });
    const mark = quotes.frames.length;
    await quotes.next((f) => f.type === 'update' && f.data.last === '125.00', { from: mark });
    expect(steps(updates(mark).slice(updates(mark).findIndex((u) => u.last === '120.00')))).toEqual(['120.00', '125.00']);
    expect(updates(mark).some((u) => u.last === '111.00')).toBe(false);
    // A release cancels too, and hands the price back.
    const three = await sb.ok('POST', '/prices', { symbol: 'TSLA', path: [{ price: '140', afterMs: 0 }, { price: '150', afterMs: 1500 }] });
    expect(three.replaced).toBe(false);
    expect(await sb.ok('POST', '/prices', { symbol: 'TSLA', release: true })).toMatchObject({ symbol: 'TSLA', pinned: false, released: true, price: '140.00' });
    const after = quotes.frames.length;
    await quotes.next((f) => f.type === 'update' && f.data.timestamp > three.startedAt + 2500, { from: after });
    expect(updates(after).some((u) => u.last === '150.00')).toBe(false);
  });

  it('answers 400 naming the field for a bad path, and starts nothing', async () => {
    const path = (p: unknown) => sb.refusal('POST', '/prices', { symbol: 'TSLA', path: p });
    expect(await sb.refusal('POST', '/prices', { symbol: 'TSLA', price: '1', path: [{ price: '1', afterMs: 0 }] })).toBe('price: give either price or path, not both');
    expect(await sb.refusal('POST', '/prices', { symbol: 'TSLA', release: true, path: [{ price: '1', afterMs: 0 }] })).toBe('release: give either release or path, not both');
    expect(await path([])).toBe('path: must NOT have fewer than 1 items');
    expect(await path([{ price: '1', afterMs: 500 }, { price: '2', afterMs: 100 }])).toBe('path.1.afterMs: must not be before the step before it (500)');
    expect(await path([{ price: '1.234', afterMs: 0 }])).toBe('path.0.price: at most two decimal places, the simulator quotes whole cents (got 1.234)');
    expect(await path([{ price: '1', afterMs: 3_600_001 }])).toBe('path.0.afterMs: must be <= 3600000');
    expect(await path([{ price: '1', afterMs: -1 }])).toBe('path.0.afterMs: must be >= 0');
    expect(await path([{ price: '1' }])).toBe('path.0.afterMs: required');
    expect(await path([{ price: '1', afterMs: 0, extra: 1 }])).toBe('path.0.extra: unknown field');
    expect(await sb.refusal('POST', '/prices', { symbol: 'DOGE', path: [{ price: '1', afterMs: 0 }] })).toBe('symbol: unknown symbol "DOGE"; simulated: AAPL, TSLA, NVDA, MSFT, SPY, BTC, ETH');
  });
});
