import { describe, expect, it } from 'vitest';
import { anchoredOrderStatus } from './order-view.ts';

describe("an order's status in Anchored's vocabulary", () => {
  it('maps each stored status, an open or canceling order by whether it has fills', () => {
    expect(anchoredOrderStatus('Open', 0n)).toBe('New');
    expect(anchoredOrderStatus('Open', 1n)).toBe('Partial filled');
    expect(anchoredOrderStatus('Canceling', 0n)).toBe('New');
    expect(anchoredOrderStatus('Canceling', 5n)).toBe('Partial filled');
    expect(anchoredOrderStatus('Filled', 5n)).toBe('Filled');
    expect(anchoredOrderStatus('Canceled', 0n)).toBe('Canceled');
    expect(anchoredOrderStatus('Canceled', 5n)).toBe('Canceled');
    expect(anchoredOrderStatus('Expired', 0n)).toBe('Expired');
    expect(anchoredOrderStatus('Rejected', 0n)).toBe('Rejected');
  });
});
