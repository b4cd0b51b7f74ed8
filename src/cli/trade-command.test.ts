import { describe, expect, it } from 'vitest';
import type { StockOrderView } from '@tokex/sdk';
import { stockOrderFailure } from './trade-command.ts';

const order = (history?: { status: 'FILLED' | 'CANCELED' | 'EXPIRED' | 'REJECTED'; reason?: string | null }): StockOrderView =>
  ({ orderId: '12', state: history ? 'history' : 'open', ...(history ? { history: { filledQuantity: '0', ...history } } : { openOrder: { status: 'OPEN' } }) }) as unknown as StockOrderView;

describe('stockOrderFailure: when what a command waited for failed', () => {
  it('names a rejection or an expiry with the venue\'s reason', () => {
    expect(stockOrderFailure(order({ status: 'REJECTED', reason: 'no fresh quote for AAPL within 60 s (a quote older than 30 s is not used)' }), 'done')).toBe(
      'order 12 REJECTED: no fresh quote for AAPL within 60 s (a quote older than 30 s is not used)',
    );
    expect(stockOrderFailure(order({ status: 'EXPIRED', reason: null }), 'canceled')).toBe('order 12 EXPIRED: no reason given');
  });

  it('a fill is success for an order and failure for a cancel; a cancel the reverse', () => {
    expect(stockOrderFailure(order({ status: 'FILLED' }), 'done')).toBeUndefined();
    expect(stockOrderFailure(order({ status: 'FILLED' }), 'canceled')).toBe('order 12 ended FILLED, not canceled');
    expect(stockOrderFailure(order({ status: 'CANCELED' }), 'canceled')).toBeUndefined();
    expect(stockOrderFailure(order({ status: 'CANCELED' }), 'done')).toBe('order 12 CANCELED before it filled');
    expect(stockOrderFailure(order(), 'done')).toBeUndefined();
  });
});
