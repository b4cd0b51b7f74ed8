import { describe, expect, it } from 'vitest';
import { contractFill, Side } from './executor/fill-policy.ts';
import { averagePrice } from './order-view.ts';

const E18 = 10n ** 18n;

describe('averagePrice', () => {
  it('is the fill price of a market buy by notional, not the charge rounded up by the router', () => {
    // issue 41: 100 mUSD at 227.08 bought floor(100 / 227.08) shares at 18 decimals; the router
    // charged ceil(quantity × price), and the average was shown as 227.080000000000000001.
    const price = 22708n * 10n ** 16n;
    const quantity = (100n * E18 * E18) / price;
    const { totals } = contractFill({ filledValue: 0n, filledNotional: 0n, fees: 0n }, Side.Buy, quantity, price, 0n);
    const charged = totals.filledNotional;
    // What stays available of the 100 mUSD is below one share-wei's worth of the price: not a loss.
    expect(100n * E18 - charged).toBeGreaterThan(0n);
    expect(100n * E18 - charged).toBeLessThan(price / E18 + 1n);
    expect(averagePrice(charged, quantity)).toBe('227.080000000000000001');
    expect(averagePrice(charged, quantity, [{ quantity: quantity.toString(), price: price.toString() }])).toBe('227.08');
  });

  it('weights several fills by quantity', () => {
    const fills = [
      { quantity: (1n * E18).toString(), price: (100n * E18).toString() },
      { quantity: (3n * E18).toString(), price: (200n * E18).toString() },
    ];
    expect(averagePrice(700n * E18, 4n * E18, fills)).toBe('175');
    expect(averagePrice(0n, 0n, [])).toBeNull();
  });
});
