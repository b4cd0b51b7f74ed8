import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeFunctionData, type AbiFunction, type Address } from 'viem';
import { stockRouterAbi } from './abi/generated/index.ts';
import { CallEncodingError, staticCallEncoder, type StaticArg } from './static-call-encoder.ts';

const staticFns = (stockRouterAbi as readonly AbiFunction[]).filter(
  (f) => f.type === 'function' && f.inputs.length > 0 && f.inputs.every((i) => i.type === 'address' || /^uint\d+$/.test(i.type)),
);

function argOf(type: string): fc.Arbitrary<StaticArg> {
  if (type === 'address') return fc.uint8Array({ minLength: 20, maxLength: 20 }).map((b) => `0x${Buffer.from(b).toString('hex')}` as Address);
  const bits = Number(type.slice(4));
  return fc.bigInt({ min: 0n, max: (1n << BigInt(bits)) - 1n });
}

describe('static call encoder', () => {
  it('covers the router entry points the API builds', () => {
    const names = staticFns.map((f) => f.name);
    for (const n of ['placeMarketOrder', 'placeLimitOrder', 'depositAndMarketBuy', 'depositAndLimitBuy', 'depositStockAndMarketSell', 'depositStockAndLimitSell', 'cancelLimitOrder', 'deposit', 'withdraw', 'depositStock', 'withdrawStock']) {
      expect(names).toContain(n);
    }
  });

  it('encodes the same bytes as viem for every static StockRouter function, including extreme values', () => {
    for (const fn of staticFns) {
      const encode = staticCallEncoder(stockRouterAbi, fn.name);
      fc.assert(
        fc.property(fc.tuple(...fn.inputs.map((i) => argOf(i.type))), (args) => {
          const viem = encodeFunctionData({ abi: [fn], functionName: fn.name, args } as never);
          expect(encode(...args)).toBe(viem);
        }),
        { numRuns: 50 },
      );
    }
  });

  it('refuses values outside the parameter type, a bad address and a wrong argument count', () => {
    const limit = staticCallEncoder(stockRouterAbi, 'placeLimitOrder');
    const stock = '0x00000000000000000000000000000000000000aa' as Address;
    expect(() => limit(stock, 256, 1n, 1n, 0, 1)).toThrow(CallEncodingError); // side is uint8
    expect(() => limit(stock, 0, -1n, 1n, 0, 1)).toThrow(CallEncodingError);
    expect(() => limit(stock, 0, 1n, 1n, 0, 2 ** 32)).toThrow(CallEncodingError); // deadline is uint32
    expect(() => limit('0x1234' as Address, 0, 1n, 1n, 0, 1)).toThrow(CallEncodingError);
    expect(() => limit(stock, 0, 1n)).toThrow(CallEncodingError);
    expect(() => limit(stock, 0.5, 1n, 1n, 0, 1)).toThrow(CallEncodingError);
  });
});
