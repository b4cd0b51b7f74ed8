import { describe, expect, it } from 'vitest';
import { overheadFactor } from '../../bench/overhead-factor.ts';

describe('overhead factor (issue 40): server CPU per order ÷ (recovery alone + bare route CPU ÷ orders a request)', () => {
  it('single orders pay a whole bare request, batches a twentieth of one', () => {
    // 60 µs a recovery (16,666.7/s), a bare route at 40 µs a request.
    const single = overheadFactor({ cpuUsPerOrder: 700, nativeRecoverPerSec: 1e6 / 60, floorCpuUsPerRequest: 40, ordersPerRequest: 1 });
    expect(single.recoveryUs).toBeCloseTo(60, 9);
    expect(single.floorUsPerOrder).toBe(40);
    expect(single.factor).toBeCloseTo(7, 9);
    const batch = overheadFactor({ cpuUsPerOrder: 248, nativeRecoverPerSec: 1e6 / 60, floorCpuUsPerRequest: 40, ordersPerRequest: 20 });
    expect(batch.floorUsPerOrder).toBe(2);
    expect(batch.factor).toBeCloseTo(4, 9);
  });

  it('refuses inputs that would give a meaningless factor', () => {
    expect(() => overheadFactor({ cpuUsPerOrder: 700, nativeRecoverPerSec: 0, floorCpuUsPerRequest: 40, ordersPerRequest: 1 })).toThrow(RangeError);
    expect(() => overheadFactor({ cpuUsPerOrder: 700, nativeRecoverPerSec: 16_000, floorCpuUsPerRequest: 40, ordersPerRequest: 0 })).toThrow(RangeError);
    expect(() => overheadFactor({ cpuUsPerOrder: Number.NaN, nativeRecoverPerSec: 16_000, floorCpuUsPerRequest: 40, ordersPerRequest: 1 })).toThrow(RangeError);
  });
});
