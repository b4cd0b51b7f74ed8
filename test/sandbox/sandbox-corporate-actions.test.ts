/**
 * The sandbox's `POST /corporate-actions` (docs/sandbox.md) on the real stack: a split or a dividend
 * effective now is answered once the chain has it, and the holder's balances say exactly what was
 * done; a split's minute is reached by moving the venue's clock there, so it is answered within
 * seconds, after an advance or on a frozen clock too; one dated later is answered scheduled at
 * once; bad input is a 400 naming the field.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { erc20Abi, parseUnits } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { newYorkDate } from '../../src/marketdata/corporate-actions.ts';
import { chainClients } from '../support/one-click-users.ts';
import { startTestStack, type TestStack } from '../support/stock-stack.ts';
import { sandboxClient } from './sandbox-client.ts';

describe('sandbox corporate actions', () => {
  let t: TestStack;
  let sb: ReturnType<typeof sandboxClient>;

  beforeAll(async () => {
    // The scheduler looks every half second, so an action due now is applied soon after its moment.
    t = await startTestStack({ CORPORATE_ACTIONS_TICK_MS: '500' });
    sb = sandboxClient(t);
  }, 180_000);

  afterAll(async () => {
    await t?.stop();
  });

  const balanceOf = (token: `0x${string}`, holder: `0x${string}`) => chainClients(t).pub.readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [holder] });
  /** The venue's time (a split moves it) and its date in New York, the ex-date `now` gives. */
  const venueNowMs = async (): Promise<number> => (await sb.ok('GET', '/clock')).now;
  const today = async () => newYorkDate(await venueNowMs());

  it('a 2:1 split effective now doubles a holder\'s balance on chain, answered once applied', async () => {
    const holder = privateKeyToAccount(generatePrivateKey()).address;
    const aapl = t.demo.stock.contracts.stocks.AAPL;
    await sb.ok('POST', '/fund', { address: holder, asset: 'AAPL', amount: '3' });
    expect(await balanceOf(aapl, holder)).toBe(parseUnits('3', 18));

    const day = await today();
    const before = await venueNowMs();
    const split = await sb.ok('POST', '/corporate-actions', { symbol: 'aapl', kind: 'split', ratio: '2:1', effective: 'now' });
    expect(split).toMatchObject({ actionId: `AAPL-${day}`, applied: true, action: { symbol: 'AAPL', type: 'SPLIT', exDate: day, ratio: '2:1', status: 'applied', reason: null } });
    expect(split.action.txHash).toMatch(/^0x[0-9a-f]{64}$/);
    // Applied at its moment: the first minute at least 5 s after it was added, which the venue's
    // clock was moved to.
    expect(split.action.effectiveAt % 60_000).toBe(0);
    expect(split.action.effectiveAt).toBeGreaterThanOrEqual(before + 5_000);
    expect(split.action.effectiveAt).toBeLessThanOrEqual(await venueNowMs());
    // Right after the answer: the holder's balance is doubled, exactly.
    expect(await balanceOf(aapl, holder)).toBe(parseUnits('6', 18));
    const receipt = await chainClients(t).pub.getTransactionReceipt({ hash: split.action.txHash });
    expect(receipt.status).toBe('success');
  }, 120_000);

  it('a dividend effective now pays the holder exactly its share, net of withholding', async () => {
    const holder = privateKeyToAccount(generatePrivateKey()).address;
    await sb.ok('POST', '/fund', { address: holder, asset: 'MSFT', amount: '10' });
    const cash = t.demo.stock.contracts.cashToken;
    expect(await balanceOf(cash, holder)).toBe(0n);

    const day = await today();
    const dividend = await sb.ok('POST', '/corporate-actions', { symbol: 'MSFT', kind: 'dividend', amount: '0.25' });
    expect(dividend).toMatchObject({ actionId: `MSFT-${day}`, applied: true, action: { symbol: 'MSFT', type: 'DIVIDEND', exDate: day, amount: '0.25', currency: 'USD', status: 'applied' } });
    // 10 shares × 0.25 USD, less the default 30 % withholding: 1.75 USDC, to the unit.
    expect(await balanceOf(cash, holder)).toBe(1_750_000n);
    const totals = dividend.action.dividend;
    expect(totals.withholdingBps).toBe(3000);
    // The whole action: gross = shares of record × 0.25, net = 70 % of it (rounded down once).
    const shares = parseUnits(totals.sharesOfRecord, 18);
    const gross = (shares * 25n) / 10n ** 14n;
    expect(parseUnits(totals.grossAmount, 6)).toBe(gross);
    expect(parseUnits(totals.netAmount, 6)).toBe((shares * 25n * 7000n) / 10n ** 18n);
    expect(totals.holders).toBeGreaterThanOrEqual(2);
  }, 120_000);

  it('one dated later is answered scheduled at once, and stays so', async () => {
    const later = newYorkDate((await venueNowMs()) + 3 * 86_400_000);
    const before = Date.now();
    const scheduled = await sb.ok('POST', '/corporate-actions', { symbol: 'NVDA', kind: 'dividend', amount: '0.01', effective: later, recordDate: later });
    expect(scheduled).toEqual({
      actionId: `NVDA-${later}`,
      applied: false,
      action: { symbol: 'NVDA', type: 'DIVIDEND', exDate: later, recordDate: later, amount: '0.01', currency: 'USD', status: 'scheduled', txHash: null, reason: null, dividend: null },
    });
    expect(Date.now() - before).toBeLessThan(5_000);
  });

  it('answers 400 naming the field for bad input', async () => {
    const day = await today();
    expect(await sb.refusal('POST', '/corporate-actions', { symbol: 'TSLA', kind: 'split' })).toBe('ratio: required for kind split: new:old shares, like "2:1"');
    expect(await sb.refusal('POST', '/corporate-actions', { symbol: 'TSLA', kind: 'dividend' })).toBe('amount: required for kind dividend: the cash per share, like "0.25"');
    expect(await sb.refusal('POST', '/corporate-actions', { symbol: 'TSLA', kind: 'split', ratio: '2:1', amount: '1' })).toBe('amount: not a field of kind split (it takes ratio, recordDate)');
    expect(await sb.refusal('POST', '/corporate-actions', { symbol: 'TSLA', kind: 'merger' })).toBe('kind: must be one of split, dividend');
    expect(await sb.refusal('POST', '/corporate-actions', { symbol: 'TSLA', kind: 'split', ratio: '2:2' })).toBe('ratio: must change the share count');
    expect(await sb.refusal('POST', '/corporate-actions', { symbol: 'TSLA', kind: 'split', ratio: '2', effective: 'soon' })).toBe('effective: "now" or an ex-date YYYY-MM-DD (New York)');
    expect(await sb.refusal('POST', '/corporate-actions', { symbol: 'TSLA', kind: 'dividend', amount: '-1' })).toBe('amount: required for a DIVIDEND, a positive decimal string like "0.25"');
    expect(await sb.refusal('POST', '/corporate-actions', { symbol: 'ZZZZ', kind: 'dividend', amount: '1' })).toBe('symbol: "ZZZZ" is not listed');
    expect(await sb.refusal('POST', '/corporate-actions', { symbol: 'TSLA', kind: 'dividend', amount: '1', effective: '2020-01-02' })).toBe(`effective: 2020-01-02 is in the past (today in New York is ${day})`);
    // One action per symbol and ex-date: AAPL split today already.
    expect(await sb.refusal('POST', '/corporate-actions', { symbol: 'AAPL', kind: 'dividend', amount: '1' })).toBe(`effective: AAPL already has a corporate action on ${day}`);
  });

  it('is refused 409 while chain-stall stands, before anything is stored: after the fault is cleared the same request is applied', async () => {
    await sb.ok('POST', '/faults', { kind: 'chain-stall' });
    const refused = await sb.call('POST', '/corporate-actions', { symbol: 'SPY', kind: 'dividend', amount: '0.01' });
    expect([refused.status, refused.json.code, refused.json.errMsg]).toEqual([
      409, 409, 'corporate-actions: the chain is stalled by the chain-stall fault, and an action due now would not be applied; DELETE /sandbox/v1/faults first',
    ]);
    await sb.ok('DELETE', '/faults');
    const applied = await sb.ok('POST', '/corporate-actions', { symbol: 'SPY', kind: 'dividend', amount: '0.01' });
    expect(applied).toMatchObject({ actionId: `SPY-${await today()}`, applied: true, action: { status: 'applied' } });
  }, 120_000);

  it('after an advance, a split effective now is answered applied within seconds, not at the wall clock\'s next minute', async () => {
    const holder = privateKeyToAccount(generatePrivateKey()).address;
    const nvda = t.demo.stock.contracts.stocks.NVDA;
    await sb.ok('POST', '/fund', { address: holder, asset: 'NVDA', amount: '3' });
    // An advance that leaves the venue's clock about a second past a minute: the split's minute is
    // then the next one, some 55 s of the venue's time ahead, which its clock reaches as slowly as
    // the wall clock does unless the sandbox moves it.
    const clock = await venueNowMs();
    const target = Math.ceil((clock + 75_000) / 60_000) * 60_000 + 1_000;
    const advance = await sb.ok('POST', '/clock/advance', { seconds: Math.ceil((target - clock) / 1000) });
    const day = newYorkDate(advance.now);

    const started = Date.now();
    const split = await sb.ok('POST', '/corporate-actions', { symbol: 'NVDA', kind: 'split', ratio: '2:1' });
    const tookMs = Date.now() - started;
    expect(split).toMatchObject({ actionId: `NVDA-${day}`, applied: true, action: { symbol: 'NVDA', type: 'SPLIT', exDate: day, ratio: '2:1', status: 'applied', reason: null } });
    // Its minute is after the advance and the venue stands past it now.
    expect(split.action.effectiveAt % 60_000).toBe(0);
    expect(split.action.effectiveAt).toBeGreaterThan(advance.now);
    expect(split.action.effectiveAt).toBeLessThanOrEqual(await venueNowMs());
    // Waited for on the wall clock it came 50 s or more after the request (the bug, issue 61);
    // moved to, within seconds (a generous bound for a loaded machine).
    expect(tookMs).toBeLessThan(20_000);
    expect(await balanceOf(nvda, holder)).toBe(parseUnits('6', 18));
  }, 120_000);

  it('on a frozen clock, a split effective now is applied at its minute, the clock frozen there', async () => {
    const holder = privateKeyToAccount(generatePrivateKey()).address;
    const tsla = t.demo.stock.contracts.stocks.TSLA;
    await sb.ok('POST', '/fund', { address: holder, asset: 'TSLA', amount: '1.5' });
    const frozen = await sb.ok('POST', '/clock/freeze', { frozen: true });
    try {
      const split = await sb.ok('POST', '/corporate-actions', { symbol: 'TSLA', kind: 'split', ratio: '3:1' });
      expect(split).toMatchObject({ actionId: `TSLA-${newYorkDate(frozen.now)}`, applied: true, action: { status: 'applied' } });
      // Moved exactly to the whole second at or after the split's minute, and still frozen there.
      const clock = await sb.ok('GET', '/clock');
      expect(clock.frozen).toBe(true);
      expect(clock.now).toBe(frozen.now + Math.ceil((split.action.effectiveAt - frozen.now) / 1000) * 1000);
      expect(await balanceOf(tsla, holder)).toBe(parseUnits('4.5', 18));
    } finally {
      await sb.ok('POST', '/clock/freeze', { frozen: false });
    }
  }, 120_000);
});
