import { describe, expect, it } from 'vitest';
import { projectThroughput } from '../../bench/perp-scaleout-bench.ts';

describe('the scale-out projection (bench/perp-scaleout-bench.ts)', () => {
  it('is the cores over the CPU per order, services included, while no single loop is full', () => {
    // 800 µs of own CPU and 200 of services an order: 1,000 µs; 2 cores give 2,000/s.
    expect(projectThroughput({ cpuUsPerOrder: 800, servicesUsPerOrder: 200, bottleneckLoopUsPerOrder: 100 }, 2)).toBe(2_000);
    expect(projectThroughput({ cpuUsPerOrder: 800, servicesUsPerOrder: 200, bottleneckLoopUsPerOrder: 100 }, 8)).toBe(8_000);
  });

  it('stops at the busiest event loop: one writer cannot use a second core', () => {
    // 250 µs of the engine's loop an order caps it at 4,000/s however many cores there are.
    expect(projectThroughput({ cpuUsPerOrder: 800, servicesUsPerOrder: 200, bottleneckLoopUsPerOrder: 250 }, 32)).toBe(4_000);
    // One process: its loop does nearly all of the work, so a second core adds nothing.
    expect(projectThroughput({ cpuUsPerOrder: 700, servicesUsPerOrder: 100, bottleneckLoopUsPerOrder: 650 }, 8)).toBeCloseTo(1e6 / 650, 6);
  });

  it('refuses inputs that would give a meaningless figure', () => {
    expect(() => projectThroughput({ cpuUsPerOrder: 0, servicesUsPerOrder: 0, bottleneckLoopUsPerOrder: 1 }, 2)).toThrow(RangeError);
    expect(() => projectThroughput({ cpuUsPerOrder: 1, servicesUsPerOrder: 0, bottleneckLoopUsPerOrder: 1 }, 0)).toThrow(RangeError);
    expect(() => projectThroughput({ cpuUsPerOrder: 1, servicesUsPerOrder: -1, bottleneckLoopUsPerOrder: 1 }, 2)).toThrow(RangeError);
  });
});
