/**
 * The sandbox's clock (docs/sandbox.md "Clock") on the real embedded stack: freezing stops the
 * venue's time; an advance of eight hours with a perpetual position open pays funding once at each
 * hour it crosses (on the venue's API, at those exact times), moves the chain's block time with it,
 * and answers what ran; the advance outlives a restart, chain and all.
 */
import { privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { createPublicClient, http } from 'viem';
import type { TestStack } from '../support/stock-stack.ts';
import { until } from '../support/poll.ts';
import { useSandboxStack } from './sandbox-client.ts';
import { createSandboxClock } from '../../src/sandbox/sandbox-clock.ts';
import { venueClockState } from '../../src/lib/venue-clock.ts';

const HOUR = 3_600_000;
const s = useSandboxStack();

const chainTime = async (stack: TestStack) =>
  Number((await createPublicClient({ transport: http(stack.demo.rpcUrl) }).getBlock({ blockTag: 'latest' })).timestamp);

describe('sandbox clock', () => {
  it('reads the wall clock until moved, and stands still while frozen', async () => {
    const before = Date.now();
    const c = await s.sb.ok('GET', '/clock');
    expect(c).toMatchObject({ frozen: false, advancedMs: 0 });
    expect(c.now).toBeGreaterThanOrEqual(before);
    expect(c.now).toBeLessThanOrEqual(Date.now());

    const frozen = await s.sb.ok('POST', '/clock/freeze', { frozen: true });
    expect(frozen.frozen).toBe(true);
    // Time passes on the wall clock; the venue's does not.
    await until(async () => Date.now(), (now) => now > frozen.now + 20, 5_000);
    expect(await s.sb.ok('GET', '/clock')).toEqual(frozen);
    const running = await s.sb.ok('POST', '/clock/freeze', { frozen: false });
    expect(running.frozen).toBe(false);
    expect(running.now).toBeGreaterThanOrEqual(frozen.now);
  });

  it('refuses to move in a process that does not run every role (409), leaving the clock as it was', async () => {
    const before = venueClockState();
    const file = `${s.t.dataDir}/not-all-in-one-clock.json`;
    // No chain call is made before the refusal: the client is never used.
    const clock = await createSandboxClock({ publicClient: undefined as never, file, stepMs: HOUR, calendarMark: () => '', allInOne: false, nodeKeepsTime: false, logger: { info() {}, warn() {} } });
    const refusal = { code: 'CONFLICT', message: expect.stringContaining('use the all-in-one stack (npm start, or tokex start --role all)') };
    await expect(clock.advance(60)).rejects.toMatchObject(refusal);
    expect(() => clock.freeze(true)).toThrow(expect.objectContaining(refusal));
    expect(venueClockState()).toEqual(before);
  });

  it('refuses bad input with a 400 naming the field', async () => {
    expect(await s.sb.refusal('POST', '/clock/advance', { seconds: 0 })).toMatch(/seconds/);
    expect(await s.sb.refusal('POST', '/clock/advance', { seconds: 31 * 86_400 + 1 })).toMatch(/seconds/);
    expect(await s.sb.refusal('POST', '/clock/advance', { seconds: 1.5 })).toMatch(/seconds/);
    expect(await s.sb.refusal('POST', '/clock/advance', { seconds: 60, extra: 1 })).toMatch(/extra/);
    expect(await s.sb.refusal('POST', '/clock/freeze', { frozen: 'yes' })).toMatch(/frozen/);
    expect((await s.sb.ok('GET', '/clock')).advancedMs).toBe(0);
  });

  it('eight hours with a position open: funding at each hour crossed, the chain moved, what ran answered', async () => {
    const trader = s.t.perpTrader!;
    const wallet = privateKeyToAccount(s.t.demo.wallets[0].privateKey as `0x${string}`);
    await until(() => trader.getTickers({ symbol: 'BTC-USD' }), ([tk]) => Number(tk.markPrice) > 0, 30_000);
    await trader.placeOrder(wallet, { symbol: 'BTC-USD', side: 'BUY', type: 'MARKET', size: '0.01' });
    await until(() => trader.get<any>('positions'), (p) => p.rows.some((r: any) => r.symbol === 'BTC-USD' && r.size !== '0'), 30_000);
    const chainBefore = await chainTime(s.t);

    const logged = s.t.logs.length;
    const answer = await s.sb.ok('POST', '/clock/advance', { seconds: 8 * 3_600 });
    // Every role fresh right after, the chain's clock within the venue's checks: nothing to wait for.
    const ready = await fetch(`${new URL(s.t.demo.stock.baseUrl).origin}/readyz`);
    const readiness = (await ready.json()) as any;
    expect(readiness.data.roles.map((r: any) => [r.role, r.state, r.detail])).toEqual(readiness.data.roles.map((r: any) => [r.role, 'fresh', r.detail]));
    expect([ready.status, readiness.data.status]).toEqual([200, 'ready']);
    expect(answer.to - answer.from).toBe(8 * HOUR);
    expect(answer.stepMs).toBe(HOUR);
    // Eight hour boundaries crossed, and the end unless it falls on one.
    const crossed = Array.from({ length: 8 }, (_, i) => (Math.floor(answer.from / HOUR) + 1 + i) * HOUR);
    expect(answer.steps).toBe(answer.to % HOUR === 0 ? 8 : 9);
    const ran = Object.fromEntries(answer.ran.map((r: any) => [r.name, r]));
    for (const name of ['price simulator', 'oracle publisher (chain 31337)', 'perp marks', 'perp funding']) expect(ran[name]).toMatchObject({ runs: answer.steps, failed: 0 });
    // The calendar-bound tasks run where the New York date or the US session changed, and at the end:
    // the same steps for each, at least the last, never more than every step.
    const calendarBound = ['perp splits', 'stock corporate actions (chain 31337)', 'stock executor (chain 31337)'].map((n) => ran[n]);
    expect(new Set(calendarBound.map((r) => r.runs)).size).toBe(1);
    expect(calendarBound[0].runs).toBeGreaterThanOrEqual(1);
    expect(calendarBound[0].runs).toBeLessThanOrEqual(answer.steps);
    expect(calendarBound.map((r) => r.failed)).toEqual([0, 0, 0]);
    expect(answer.ran.map((r: any) => r.stage)).toEqual([...answer.ran.map((r: any) => r.stage)].sort((a: string, b: string) => STAGES.indexOf(a) - STAGES.indexOf(b)));

    // Funding was applied once at each hour crossed: the venue's own list says so, at those times.
    // (Read from the projection of the engine's events, which may trail the answer by a moment.)
    const rates = await until(() => trader.getFundingRates({ symbol: 'BTC-USD', startTime: answer.from, limit: 100 }), (r) => r.length >= crossed.length, 30_000);
    expect(rates.map((r) => r.fundingTime).sort((a, b) => a - b)).toEqual(crossed);

    // The chain's time went with it: its latest block is at least eight hours on.
    expect(answer.chainTime).toBeGreaterThanOrEqual(chainBefore + 8 * 3_600 - 1);
    // (The chain moves in whole seconds: at most the venue's fraction of a second behind.)
    expect(await chainTime(s.t)).toBeGreaterThanOrEqual(Math.floor(answer.to / 1000) - 1);
    const clock = await s.sb.ok('GET', '/clock');
    // Time ran on while the advance worked: the clock was moved by the jump less that time.
    expect(clock.advancedMs).toBeGreaterThan(8 * HOUR - 60_000);
    expect(clock.now).toBeGreaterThanOrEqual(answer.to);
    // The perpetual API's tickers stamp the venue's time.
    await until(() => trader.getTickers({ symbol: 'BTC-USD' }), ([tk]) => Number(tk.markPrice) > 0, 30_000);

    // The roles' own timers were held while the advance walked, and take up after it: the chain's
    // clock is read again after the jump (by its monitor), and nothing they logged on the way or
    // since says the chain, the oracle or the marks were caught half a step behind (the chain
    // monitor's "3601 s behind", a mark withheld as stale or off the oracle, a quote not published).
    await until(async () => (await (await fetch(`${new URL(s.t.demo.stock.baseUrl).origin}/readyz`)).json()) as any,
      (r) => r.data.roles.find((x: any) => x.role === 'executor')?.detail?.chainClock?.readAt >= answer.to, 30_000);
    const lines = s.t.logs.slice(logged).flatMap((l) => (l.startsWith('{') ? [JSON.parse(l) as { level: number; msg: string }] : []));
    const halfStep = /^(chain clock|perp mark price|oracle publisher|oracle reader|perp funding|dividend|executor|marketdata)/;
    expect(lines.filter((l) => l.level >= 40 && halfStep.test(l.msg)).map((l) => l.msg)).toEqual([]);
  }, 180_000);

  it('a retried advance under the same Idempotency-Key moves the clock once and answers the first advance again', async () => {
    const key = { 'idempotency-key': `advance-${Date.now()}` };
    const before = (await s.sb.ok('GET', '/clock')).advancedMs;
    const first = await s.sb.call('POST', '/clock/advance', { seconds: 600 }, key);
    const retry = await s.sb.call('POST', '/clock/advance', { seconds: 600 }, key);
    expect([first.status, retry.status]).toEqual([200, 200]);
    expect(retry.json.data).toEqual(first.json.data);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    const after = (await s.sb.ok('GET', '/clock')).advancedMs;
    // Moved by the one advance (less the time it ran), never by two.
    expect(after - before).toBeGreaterThan(600_000 - 60_000);
    expect(after - before).toBeLessThanOrEqual(600_000);
    // The same key with another body is refused and moves nothing.
    const other = await s.sb.call('POST', '/clock/advance', { seconds: 60 }, key);
    expect([other.status, other.json.code]).toEqual([409, 409]);
    expect((await s.sb.ok('GET', '/clock')).advancedMs).toBe(after);
  });

  it('keeps the advance across a restart: the venue clock and the chain resume ahead', async () => {
    const advancedMs = (await s.sb.ok('GET', '/clock')).advancedMs;
    expect(advancedMs).toBeGreaterThan(8 * HOUR - 60_000);
    const restartedAt = Date.now();
    await s.restart();
    const c = await s.sb.ok('GET', '/clock');
    expect(c.advancedMs).toBe(advancedMs);
    expect(c.now).toBeGreaterThanOrEqual(Date.now() + advancedMs - 1_000);
    // The embedded anvil restarted on the wall clock: the start moved it to the venue's time, with
    // a block stamped then (not later: on a busy machine no block may have been mined since).
    expect(await chainTime(s.t)).toBeGreaterThanOrEqual(Math.floor((restartedAt + advancedMs) / 1000) - 1);
    // Fresh again, with the chain's clock within the venue's bounds.
    await until(async () => (await fetch(`${new URL(s.t.demo.stock.baseUrl).origin}/readyz`)).status, (s) => s === 200, 60_000);
  }, 180_000);
});

const STAGES = ['prices', 'oracle', 'marks and expiries', 'funding', 'corporate actions', 'stock orders'];
