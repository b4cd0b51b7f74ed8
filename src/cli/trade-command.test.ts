import { describe, expect, it } from 'vitest';
import type { StockOrderView } from '@tokex/sdk';
import { perpOrderInput, stockOrderFailure } from './trade-command.ts';

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

describe('perpOrderInput: the order `tokex perp order` sends', () => {
  const id = { clientId: 'c-1' };

  it('LIMIT with --price, MARKET without; the side in any case', () => {
    expect(perpOrderInput('buy', 'BTC-USD', '0.5', { ...id, price: '95000', tif: 'POST_ONLY' })).toEqual({
      symbol: 'BTC-USD', side: 'BUY', type: 'LIMIT', size: '0.5', price: '95000', timeInForce: 'POST_ONLY', clientOrderId: 'c-1',
    });
    expect(perpOrderInput('Sell', 'BTC-USD', '0.5', { ...id, reduceOnly: true })).toEqual({ symbol: 'BTC-USD', side: 'SELL', type: 'MARKET', size: '0.5', reduceOnly: true, clientOrderId: 'c-1' });
    expect(perpOrderInput('buy', 'BTC-USD', '1', {}).clientOrderId).toMatch(/^cli-[0-9a-f]{8}$/);
  });

  it('--stop and --take-profit make the trigger type of the kind --price chooses, watching what --trigger-by says', () => {
    expect(perpOrderInput('sell', 'BTC-USD', '0.5', { ...id, stop: '90000' })).toEqual({ symbol: 'BTC-USD', side: 'SELL', type: 'STOP_MARKET', size: '0.5', triggerPrice: '90000', clientOrderId: 'c-1' });
    expect(perpOrderInput('sell', 'BTC-USD', '0.5', { ...id, stop: '90000', price: '89900', triggerBy: 'LAST' })).toMatchObject({ type: 'STOP_LIMIT', price: '89900', triggerPrice: '90000', triggerBy: 'LAST' });
    expect(perpOrderInput('sell', 'BTC-USD', '0.5', { ...id, takeProfit: '99000' })).toMatchObject({ type: 'TAKE_PROFIT_MARKET', triggerPrice: '99000' });
    expect(perpOrderInput('sell', 'BTC-USD', '0.5', { ...id, takeProfit: '99000', price: '98900' })).toMatchObject({ type: 'TAKE_PROFIT_LIMIT', price: '98900' });
  });

  it('--close-position: a trigger without size', () => {
    expect(perpOrderInput('sell', 'BTC-USD', undefined, { ...id, stop: '90000', closePosition: true })).toEqual({
      symbol: 'BTC-USD', side: 'SELL', type: 'STOP_MARKET', triggerPrice: '90000', closePosition: true, clientOrderId: 'c-1',
    });
  });

  it('refuses what cannot be meant, naming the option', () => {
    const refusal = (f: () => unknown) => {
      try {
        f();
      } catch (err) {
        return (err as Error).message;
      }
      return 'no refusal';
    };
    expect(refusal(() => perpOrderInput('hold', 'BTC-USD', '1', {}))).toBe('side: must be BUY or SELL, not "hold"');
    expect(refusal(() => perpOrderInput('buy', 'BTC-USD', '1', { stop: '1', takeProfit: '2' }))).toBe('--stop: give --stop or --take-profit, not both');
    expect(refusal(() => perpOrderInput('buy', 'BTC-USD', '1', { triggerBy: 'MARK' }))).toBe('--trigger-by: only with --stop or --take-profit');
    expect(refusal(() => perpOrderInput('buy', 'BTC-USD', undefined, { closePosition: true }))).toMatch(/^--close-position: only with --stop or --take-profit/);
    expect(refusal(() => perpOrderInput('sell', 'BTC-USD', '1', { stop: '1', closePosition: true }))).toBe('size: omit it with --close-position: the whole position is closed');
    expect(refusal(() => perpOrderInput('sell', 'BTC-USD', undefined, { stop: '1' }))).toBe('size: required (or --close-position with --stop or --take-profit)');
  });
});

describe('symbol hints (issue 41)', () => {
  it("points CCXT's BTC/USD to the venue's BTC-USD before sending", async () => {
    const { perpOrderInput, perpSymbolHint } = await import('./trade-command.ts');
    expect(perpSymbolHint('BTC/USD')).toBe("BTC/USD is CCXT's spelling: this venue's symbol is BTC-USD");
    expect(perpSymbolHint('btc/usd:USD')).toBe("btc/usd:USD is CCXT's spelling: this venue's symbol is BTC-USD");
    expect(perpSymbolHint('BTC-USD')).toBeUndefined();
    expect(() => perpOrderInput('buy', 'ETH/USD', '1', {})).toThrow(/ETH-USD/);
  });

  it('completes a not-listed refusal with the listed symbols, and leaves other errors alone', async () => {
    const { withListedSymbols } = await import('./trade-command.ts');
    const e = (await withListedSymbols(new Error('stock API 404: symbol: "APPL" is not listed'), async () => ['AAPL', 'MSFT'])) as Error;
    expect(e.message).toBe('stock API 404: symbol: "APPL" is not listed; listed: AAPL, MSFT');
    const other = new Error('timeout');
    expect(await withListedSymbols(other, async () => ['AAPL'])).toBe(other);
    const unreachable = new Error('symbol: "X" is not listed');
    expect(await withListedSymbols(unreachable, async () => Promise.reject(new Error('down')))).toBe(unreachable);
  });
});

describe('demoChain: the chain --chain names among demo.json\'s', () => {
  const contracts = (n: string) => ({ stockRouter: `0x${n}1`, cashToken: `0x${n}2` });
  const demo = {
    chainId: 31337, rpcUrl: 'http://a', stock: { contracts: contracts('a'), chains: [
      { chainId: 31337, rpcUrl: 'http://a', contracts: contracts('a') },
      { chainId: 31338, rpcUrl: 'http://b', contracts: contracts('b') },
    ] },
  };

  it('is the first chain by default, the one named otherwise, with its node and contracts', async () => {
    const { demoChain } = await import('./trade-command.ts');
    expect(demoChain(demo, undefined)).toEqual(demo.stock.chains[0]);
    expect(demoChain(demo, 31338)).toEqual({ chainId: 31338, rpcUrl: 'http://b', contracts: contracts('b') });
  });

  it('refuses a chain demo.json does not name, listing those it does; a demo.json without chains has its one', async () => {
    const { demoChain } = await import('./trade-command.ts');
    expect(() => demoChain(demo, 5)).toThrow('--chain: chain 5 is not served by this stack; demo.json names 31337, 31338');
    const single = { chainId: 31337, rpcUrl: 'http://a', stock: { contracts: contracts('a') } };
    expect(demoChain(single, undefined)).toEqual({ chainId: 31337, rpcUrl: 'http://a', contracts: contracts('a') });
    expect(() => demoChain(single, 31338)).toThrow('--chain: chain 31338 is not served by this stack; demo.json names 31337');
  });
});

describe('perpDisplay (issue 41: amounts at display precision, nested fills too)', () => {
  it("shows an order's fills and a withdrawal's amount at cents, sizes as answered", async () => {
    const { perpDisplay } = await import('./trade-command.ts');
    const { fields } = await import('./cli-output.ts');
    const order = perpDisplay({
      orderId: '12', price: '95000.5', size: '0.001',
      fills: [{ tradeId: '9', price: '95000.123456', size: '0.001', notional: '95.000123456', fee: '0.047500061728', realisedPnl: '0', ts: 1795653014616 }],
    });
    expect(order.price).toBe('95000.50');
    expect(order.size).toBe('0.001');
    expect(fields(order).split('\n').at(-1)).toBe(
      'fills    [{"tradeId":"9","price":"95000.12","size":"0.001","notional":"95.00","fee":"0.04","realisedPnl":"0.00","ts":"2026-11-26T00:30:14.616Z"}]',
    );
    const w = perpDisplay({ clientWithdrawalId: 'w-1', amount: '25', status: 'COMPLETED', createdAt: 1795653014616 });
    expect(fields(w).split('\n')).toEqual(['clientWithdrawalId  w-1', 'amount              25.00', 'status              COMPLETED', 'createdAt           2026-11-26T00:30:14.616Z']);
  });
});
