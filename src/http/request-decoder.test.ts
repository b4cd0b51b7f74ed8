import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as contract from '@tokex/contract';
import { StockMoveBodySchema, StockOrderBodySchema, StockOrderWithDepositSendBodySchema } from '@tokex/contract';
import { ValidationError } from '../errors/app-error.ts';
import { parseDecimal } from '../lib/decimal.ts';
import { decimalFieldsOf, decimalNumberTexts, decodeJsonRequest, peekJsonBody } from './request-decoder.ts';

const KEYS = new Set(['notional', 'tokenAmount', 'quantity', 'price']);

describe('decimalNumberTexts', () => {
  it('answers the digits of a top-level JSON number as written, past what a float keeps', () => {
    const text = '{"symbol":"AAPL","notional":9007199254740993,"deadline":1893456000,"price":0.1000000000000000055511151231257827}';
    expect(Object.fromEntries(decimalNumberTexts(text, KEYS))).toEqual({
      notional: '9007199254740993',
      price: '0.1000000000000000055511151231257827',
    });
    // What JSON.parse alone would have made of them.
    expect(String((JSON.parse(text) as { notional: number }).notional)).toBe('9007199254740992');
  });

  it('keeps exponents, signs and fractions as written, for the decimal rules to judge', () => {
    const text = ' {\n "quantity" : -1.50 , "notional":1e3,"price":1.5E+2,"tokenAmount":0 } ';
    expect(Object.fromEntries(decimalNumberTexts(text, KEYS))).toEqual({ quantity: '-1.50', notional: '1e3', price: '1.5E+2', tokenAmount: '0' });
  });

  it('skips nested values, strings that look like JSON and escaped keys, and takes the last of a repeated key', () => {
    const text =
      '{"a":{"notional":1,"b":[1,{"price":2}]},"s":"\\"price\\":3,{","quantity":"4","q\\u0075antity2":5,' +
      '"tok\\u0065nAmount":6,"price":7,"price":8,"notional":9,"notional":"10"}';
    expect(Object.fromEntries(decimalNumberTexts(text, KEYS))).toEqual({ tokenAmount: '6', price: '8' });
    expect(JSON.parse(text)).toMatchObject({ tokenAmount: 6, price: 8, notional: '10' });
  });

  it('answers nothing for a body that is not an object', () => {
    for (const text of ['[1,2]', '12', '"x"', 'null', '{}', ' { } ']) expect(decimalNumberTexts(text, KEYS).size).toBe(0);
  });

  it('agrees with JSON.parse on every generated object: each number member is found, with text that parses to the same value', () => {
    const number = fc.oneof(
      fc.integer(),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.bigInt({ min: 0n, max: 10n ** 40n }).map((b) => ({ raw: b.toString() })),
    );
    const value = fc.oneof(number, fc.string(), fc.boolean(), fc.constant(null), fc.array(fc.integer(), { maxLength: 3 }), fc.dictionary(fc.string(), fc.integer(), { maxKeys: 2 }));
    const key = fc.oneof(fc.constantFrom('notional', 'price', 'quantity', 'tokenAmount'), fc.string());
    fc.assert(
      fc.property(fc.array(fc.tuple(key, value), { maxLength: 8 }), fc.constantFrom('', ' ', '\n\t'), (members, ws) => {
        const write = (v: unknown): string => (v !== null && typeof v === 'object' && 'raw' in (v as object) ? (v as { raw: string }).raw : JSON.stringify(v));
        const text = `{${ws}${members.map(([k, v]) => `${JSON.stringify(k)}${ws}:${ws}${write(v)}`).join(`${ws},${ws}`)}${ws}}`;
        const parsed = JSON.parse(text) as Record<string, unknown>;
        const keys = new Set(members.map(([k]) => k));
        const found = decimalNumberTexts(text, keys);
        for (const k of keys) {
          if (k === '__proto__') continue;
          const last = [...members].reverse().find(([m]) => m === k)![1];
          if (typeof parsed[k] === 'number') {
            expect(found.get(k)).toBe(write(last));
            expect(JSON.parse(found.get(k)!)).toBe(parsed[k]);
          } else {
            expect(found.has(k)).toBe(false);
          }
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('decimalFieldsOf', () => {
  it("finds the stock bodies' amounts, and no field of a perpetual body", () => {
    expect([...decimalFieldsOf(StockOrderBodySchema as never)].sort()).toEqual(['notional', 'price', 'quantity', 'worstPrice']);
    expect([...decimalFieldsOf(StockOrderWithDepositSendBodySchema as never)].sort()).toEqual(['notional', 'price', 'quantity', 'tokenAmount', 'worstPrice']);
    expect([...decimalFieldsOf(StockMoveBodySchema as never)]).toEqual(['tokenAmount']);
    const perpBodies = Object.entries(contract).filter(([name, schema]) => name.endsWith('BodySchema') && !name.startsWith('Stock') && typeof schema === 'object');
    expect(perpBodies.map(([name]) => name)).toContain('SignedOrderBodySchema');
    for (const [name, schema] of perpBodies) expect([name, [...decimalFieldsOf(schema as never)]]).toEqual([name, []]);
  });
});

describe('a JSON number text read as an amount (parseDecimal, as a decimal string is)', () => {
  const read = (text: string, decimals: number) => parseDecimal(text, { field: 'notional', decimals, max: 1n << 256n });
  const reason = (text: string, decimals: number) => {
    try {
      read(text, decimals);
    } catch (err) {
      return err instanceof ValidationError ? err.message : String(err);
    }
    return 'accepted';
  };

  it('is exact: the digits, scaled, never a float', () => {
    expect(read('9007199254740993', 6)).toBe(9_007_199_254_740_993_000_000n);
    expect(read('0.1', 18)).toBe(10n ** 17n);
    expect(read('10', 18)).toBe(10n * 10n ** 18n);
    expect(read('1.50', 6)).toBe(1_500_000n);
  });

  it('refuses an exponent, a sign and more places than the token has, naming the field', () => {
    expect(reason('1e3', 18)).toBe('notional: must be a non-negative decimal string like "12.5"');
    expect(reason('-5', 18)).toBe('notional: must be a non-negative decimal string like "12.5"');
    expect(reason('1.1234567', 6)).toBe('notional: at most 6 decimal places');
  });
});

describe('peekJsonBody', () => {
  const request = (body: string) =>
    ({ method: 'POST', rawBody: Buffer.from(body), bodyContentType: 'application/json', routeOptions: { schema: {} }, query: {} }) as unknown as Parameters<typeof decodeJsonRequest>[0];
  const decode = (r: Parameters<typeof decodeJsonRequest>[0]) =>
    new Promise<Error | undefined>((resolve) => decodeJsonRequest(r, {} as never, (err) => resolve(err)));

  it('parses a body once: the decoder hands the route the value an earlier hook peeked at', async () => {
    const r = request('{"orders":[{"message":{},"signature":"0x"}]}');
    const peeked = peekJsonBody(r);
    expect(peeked).toEqual({ orders: [{ message: {}, signature: '0x' }] });
    expect(await decode(r)).toBeUndefined();
    expect((r as unknown as { body: unknown }).body).toBe(peeked);
  });

  it('answers undefined for what the decoder refuses, which it still refuses with its reason', async () => {
    for (const [body, reason] of [
      ['{"a":', 'body: is not valid JSON'],
      ['{"__proto__":{}}', 'body: must not contain a __proto__ key'],
    ]) {
      const r = request(body);
      expect(peekJsonBody(r)).toBeUndefined();
      expect((await decode(r))?.message).toBe(reason);
    }
    expect(peekJsonBody(request(''))).toBeUndefined();
  });
});
