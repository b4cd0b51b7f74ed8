import { describe, expect, it } from 'vitest';
import { exactNumber, exactNumberOrNull, exactText, renderExactJson } from './exact-number.ts';

describe('exact numbers', () => {
  it('print their own digits in a rendered answer, where JSON.stringify prints the nearest double', () => {
    const data = { price: exactNumber('229.80'), tiny: exactNumber('0.000000000000000001'), big: exactNumber('9007199254740993.5'), none: exactNumberOrNull(null), s: 'x', n: 3 };
    expect(renderExactJson(data)).toBe('{"price":229.80,"tiny":0.000000000000000001,"big":9007199254740993.5,"none":null,"s":"x","n":3}');
    expect(JSON.stringify(data)).toBe('{"price":229.8,"tiny":1e-18,"big":9007199254740994,"none":null,"s":"x","n":3}');
  });

  it('render like JSON.stringify otherwise: undefined fields left out, arrays, nested objects, dates', () => {
    const v = { a: undefined, b: [1, undefined, { c: exactNumber('-1.5') }], d: new Date(0), e: null, f: 'quote"' };
    expect(renderExactJson(v)).toBe('{"b":[1,null,{"c":-1.5}],"d":"1970-01-01T00:00:00.000Z","e":null,"f":"quote\\""}');
    expect(JSON.parse(renderExactJson(v))).toEqual(JSON.parse(JSON.stringify(v)));
  });

  it('compute as their double and say their text', () => {
    const p = exactNumber('1.25');
    expect(p + 1).toBe(2.25);
    expect(exactText(p)).toBe('1.25');
    expect(exactText(1.25)).toBeUndefined();
  });

  it('refuse text that is not a plain JSON decimal', () => {
    for (const bad of ['1e3', '+1', '01', '1.', '.5', 'NaN', '', ' 1']) expect(() => exactNumber(bad), bad).toThrow(/not a decimal/);
  });
});
