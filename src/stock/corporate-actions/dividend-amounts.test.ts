import fc from 'fast-check';
import type { Address } from 'viem';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../errors/app-error.ts';
import { computeDividend, parseAmountPerShare } from './dividend-amounts.ts';

const addr = (n: number): Address => `0x${n.toString(16).padStart(40, '0')}` as Address;
const E18 = 10n ** 18n;

describe('computeDividend', () => {
  it('pays 0.26 USD per share less 30% to the unit on a worked example', () => {
    // 100 shares + 33.333333333333333333 shares + 1 wei of a share.
    const holdings = [
      { account: addr(1), shares: 100n * E18 },
      { account: addr(2), shares: 33_333_333_333_333_333_333n },
      { account: addr(3), shares: 1n },
    ];
    const r = computeDividend({ holdings, amountPerShare: parseAmountPerShare('0.26'), withholdingBps: 3000 });
    const S = 133_333_333_333_333_333_334n;
    expect(r.sharesOfRecord).toBe(S);
    // G = floor(S × 26 000 000 / 10^20) = floor(34.666…) USD in 10^-6 units.
    expect(r.gross).toBe((S * 26_000_000n) / 10n ** 20n);
    expect(r.gross).toBe(34_666_666n);
    expect(r.net).toBe((S * 26_000_000n * 7000n) / 10n ** 24n);
    expect(r.net).toBe(24_266_666n);
    expect(r.withholding).toBe(r.gross - r.net);
    // Exact entitlements: 18.2 USD, 6.066666666… USD, ~0: floors 18 200 000 + 6 066 666 = 24 266 666 = N.
    expect(r.payouts).toEqual([
      { account: addr(1), shares: 100n * E18, amount: 18_200_000n },
      { account: addr(2), shares: 33_333_333_333_333_333_333n, amount: 6_066_666n },
    ]);
    expect(r.remainderUnits).toBe(0n);
  });

  it('hands the units left by the floors to the largest remainders, ties to the lower address', () => {
    const even = computeDividend({
      holdings: [1, 2, 3].map((n) => ({ account: addr(n), shares: 50n * E18 })),
      amountPerShare: parseAmountPerShare('0.00000001'),
      withholdingBps: 0,
    });
    // each: 50 × 10^-8 USD = 0.5 units; N = floor(1.5) = 1: one extra unit, to the lowest address.
    expect(even.net).toBe(1n);
    expect(even.remainderUnits).toBe(1n);
    expect(even.payouts).toEqual([{ account: addr(1), shares: 50n * E18, amount: 1n }]);
    const uneven = computeDividend({
      holdings: [
        { account: addr(9), shares: 70n * E18 },
        { account: addr(1), shares: 60n * E18 },
      ],
      amountPerShare: parseAmountPerShare('0.00000001'),
      withholdingBps: 0,
    });
    // 0.7 and 0.6 units: N = 1, the larger remainder (0.7, addr 9) gets it.
    expect(uneven.payouts).toEqual([{ account: addr(9), shares: 70n * E18, amount: 1n }]);
  });

  it('refuses a repeated account, a negative share count and a withholding outside 0–10000', () => {
    const A = parseAmountPerShare('1');
    expect(() => computeDividend({ holdings: [{ account: addr(1), shares: 1n }, { account: addr(1), shares: 2n }], amountPerShare: A, withholdingBps: 0 })).toThrow(ValidationError);
    expect(() => computeDividend({ holdings: [{ account: addr(1), shares: -1n }], amountPerShare: A, withholdingBps: 0 })).toThrow(/shares/);
    expect(() => computeDividend({ holdings: [], amountPerShare: A, withholdingBps: 10_001 })).toThrow(/withholdingBps/);
    expect(() => parseAmountPerShare('0.123456789')).toThrow(/at most 8 decimal places/);
  });

  it('property: the leaves sum to gross − withholding exactly; each leaf is within one unit of its exact share', () => {
    const holding = fc.record({ id: fc.integer({ min: 1, max: 1_000_000 }), shares: fc.bigInt({ min: 0n, max: 10n ** 30n }) });
    fc.assert(
      fc.property(
        fc.uniqueArray(holding, { selector: (h) => h.id, maxLength: 40 }),
        fc.bigInt({ min: 1n, max: 10n ** 12n }),
        fc.integer({ min: 0, max: 10_000 }),
        (hs, A, w) => {
          const holdings = hs.map((h) => ({ account: addr(h.id), shares: h.shares }));
          const r = computeDividend({ holdings, amountPerShare: A, withholdingBps: w });
          const S = hs.reduce((s, h) => s + h.shares, 0n);
          const D = 10n ** 24n;
          expect(r.sharesOfRecord).toBe(S);
          expect(r.gross).toBe((S * A * 10_000n) / D);
          expect(r.net).toBe((S * A * BigInt(10_000 - w)) / D);
          const sum = r.payouts.reduce((s, p) => s + p.amount, 0n);
          // The invariant: what is paid is the declared amount × shares of record less withholding, to the unit.
          expect(sum).toBe(r.gross - r.withholding);
          expect(sum).toBe(r.net);
          // The floors plus the units handed out by remainder make N; fewer units than holders.
          const floors = holdings.reduce((s, h) => s + (h.shares * A * BigInt(10_000 - w)) / D, 0n);
          expect(floors + r.remainderUnits).toBe(r.net);
          expect(r.remainderUnits >= 0n && r.remainderUnits < BigInt(Math.max(1, holdings.length))).toBe(true);
          for (const p of r.payouts) {
            const exactTimesD = p.shares * A * BigInt(10_000 - w);
            // |amount − exact| < 1 unit: amount·D − exact·D in (−D, D).
            expect(p.amount * D - exactTimesD > -D && p.amount * D - exactTimesD < D).toBe(true);
            expect(p.amount > 0n).toBe(true);
          }
          expect(new Set(r.payouts.map((p) => p.account)).size).toBe(r.payouts.length);
        },
      ),
      { numRuns: 300 },
    );
  });
});
