import { describe, expect, it } from 'vitest';
import { JsonNumber, jsonNumberToScaled, parseJsonLossless, type JsonValue } from './lossless-json.ts';
import { formatPrice, midOf, parsePrice, parseRfc3339Nanos } from './quote-source.ts';

/** The parsed value with numbers as `#text`, comparable with toEqual. */
const plain = (v: JsonValue): unknown => {
  if (v instanceof JsonNumber) return `#${v.text}`;
  if (Array.isArray(v)) return v.map(plain);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
  return v;
};

describe('parseJsonLossless', () => {
  it('keeps number text and reads an Alpaca frame', () => {
    const frame =
      '[{"T":"q","S":"AMD","bx":"U","bp":87.66,"bs":1,"ax":"Q","ap":87.68,"as":4,"t":"2021-02-22T15:51:45.335689322Z","c":["R"],"z":"C"}]';
    expect(plain(parseJsonLossless(frame))).toEqual([
      { T: 'q', S: 'AMD', bx: 'U', bp: '#87.66', bs: '#1', ax: 'Q', ap: '#87.68', as: '#4', t: '2021-02-22T15:51:45.335689322Z', c: ['R'], z: 'C' },
    ]);
  });

  it('matches JSON.parse on everything but numbers', () => {
    const text = ' { "a" : [ true , false , null , "x\\"y\\\\z\\u00e9\\n" , { } , [ ] ] , "b" : "plain" } ';
    expect(plain(parseJsonLossless(text))).toEqual(JSON.parse(text));
    expect(plain(parseJsonLossless('[-0, 1e-7, 2.50E+3, 123456789012345678901234567890.123456789]'))).toEqual([
      '#-0',
      '#1e-7',
      '#2.50E+3',
      '#123456789012345678901234567890.123456789',
    ]);
  });

  it('refuses what is not one strict JSON value', () => {
    for (const text of ['', '[{"T":"q",', '[1,]', '{"a":1,}', '[NaN]', '"abc', '[1] [2]', "{'a':1}", '{"k":1,"k":2}']) {
      expect(() => parseJsonLossless(text), text).toThrow(SyntaxError);
    }
  });

  it('a "__proto__" key pollutes no prototype', () => {
    parseJsonLossless('{"__proto__":{"polluted":1}}');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('jsonNumberToScaled', () => {
  const s = (text: string, d = 8) => jsonNumberToScaled(new JsonNumber(text), d);
  it('is exact where a double is not', () => {
    expect(s('126.55')).toBe(12_655_000_000n);
    expect(s('0.1')).toBe(10_000_000n);
    expect(s('126.5512')).toBe(12_655_120_000n);
    expect(s('99999999.99999999')).toBe(9_999_999_999_999_999n);
    expect(s('1e-7')).toBe(10n);
    expect(s('2.50E+3')).toBe(250_000_000_000n);
    expect(s('-3.5')).toBe(-350_000_000n);
    expect(s('1.2300000000000')).toBe(123_000_000n);
    expect(s('0')).toBe(0n);
  });
  it('refuses what it cannot hold exactly', () => {
    expect(s('0.123456789')).toBeUndefined();
    expect(s('1e-9')).toBeUndefined();
    expect(s('1e41')).toBeUndefined();
  });
});

describe('prices and times', () => {
  it('parses and formats prices exactly', () => {
    expect(parsePrice('229.8')).toBe(22_980_000_000n);
    expect(parsePrice('0.00000001')).toBe(1n);
    for (const bad of ['', '-1', '1e3', '01', '1.', '1.123456789', ' 1', 1, null]) expect(parsePrice(bad)).toBeUndefined();
    expect(formatPrice(22_980_000_000n)).toBe('229.80');
    expect(formatPrice(12_655_120_000n)).toBe('126.5512');
    expect(formatPrice(1n)).toBe('0.00000001');
    expect(formatPrice(0n)).toBe('0.00');
    expect(midOf(22_980_000_000n, 22_985_000_000n)).toBe(22_982_500_000n);
    expect(midOf(1n, 2n)).toBe(2n); // half up
  });

  it('reads RFC 3339 to the nanosecond', () => {
    expect(parseRfc3339Nanos('2021-02-22T15:51:45.335689322Z')).toBe(1_614_009_105_335_689_322n);
    expect(parseRfc3339Nanos('2021-02-22T15:51:44.208Z')).toBe(1_614_009_104_208_000_000n);
    expect(parseRfc3339Nanos('2021-02-22T10:51:44-05:00')).toBe(1_614_009_104_000_000_000n);
    expect(parseRfc3339Nanos('2024-02-29T00:00:00Z')).toBe(BigInt(Date.UTC(2024, 1, 29)) * 1_000_000n);
    for (const bad of ['2023-02-29T00:00:00Z', '2021-02-22T24:00:00Z', '2021-02-22T15:51:60Z', '2021-02-22 15:51:44Z', '2021-02-22T15:51:44', '2021-02-22T15:51:44.1234567891Z', 1614009104208]) {
      expect(parseRfc3339Nanos(bad)).toBeUndefined();
    }
  });
});
