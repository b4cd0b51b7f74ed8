/**
 * A JSON parser that keeps every number as the text it was sent as. `JSON.parse` turns a price
 * such as `126.5512` into a double; formatting it back is exact only while the value has few
 * enough digits, and the repo's rule is that money never passes through `number`. Providers send
 * prices as JSON numbers, so their frames are read with this parser and the price text is turned
 * into a scaled bigint directly (`jsonNumberToDecimal`).
 *
 * Strict RFC 8259 grammar (no comments, no trailing commas, no NaN), a depth limit, objects with
 * a null prototype (a `"__proto__"` key is an ordinary key), last duplicate key wins.
 */

/** A JSON number, kept as its source text (`"126.55"`, `"1e-7"`, `"-0"`). */
export class JsonNumber {
  constructor(readonly text: string) {}
  /** The value as a double, for fields where that is harmless (sizes, ids below 2^53). */
  toNumber(): number {
    return Number(this.text);
  }
}

export type JsonValue = null | boolean | string | JsonNumber | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

export class JsonSyntaxError extends Error {
  constructor(
    readonly position: number,
    reason: string,
  ) {
    super(`invalid JSON at ${position}: ${reason}`);
    this.name = 'JsonSyntaxError';
  }
}

export interface ParseJsonOptions {
  /** Nesting limit of arrays and objects. Default 64. */
  maxDepth?: number;
}

const NUMBER_RE = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/** Parses `text` as one JSON value; throws `JsonSyntaxError` on anything else. */
export function parseJsonLossless(text: string, opts: ParseJsonOptions = {}): JsonValue {
  const maxDepth = opts.maxDepth ?? 64;
  let i = 0;
  const n = text.length;

  const fail = (reason: string): never => {
    throw new JsonSyntaxError(i, reason);
  };
  const skipWs = (): void => {
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i++;
      else break;
    }
  };
  const literal = (word: string, value: JsonValue): JsonValue => {
    if (text.startsWith(word, i)) {
      i += word.length;
      return value;
    }
    return fail('unexpected token');
  };
  const parseString = (): string => {
    // i is at the opening quote.
    const start = i;
    i++;
    let escaped = false;
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 0x22 /* " */) {
        i++;
        const raw = text.slice(start, i);
        if (!escaped) return raw.slice(1, -1);
        try {
          // The token was scanned as a well-formed string literal; JSON.parse checks its escapes.
          return JSON.parse(raw) as string;
        } catch {
          return fail('bad escape in string');
        }
      }
      if (c === 0x5c /* \ */) {
        escaped = true;
        i += 2;
        continue;
      }
      if (c < 0x20) fail('control character in string');
      i++;
    }
    return fail('unterminated string');
  };
  const parseValue = (depth: number): JsonValue => {
    skipWs();
    if (i >= n) fail('unexpected end');
    const c = text.charCodeAt(i);
    if (c === 0x22) return parseString();
    if (c === 0x7b /* { */) {
      if (depth >= maxDepth) fail('nested too deeply');
      i++;
      const obj = Object.create(null) as JsonObject;
      skipWs();
      if (text.charCodeAt(i) === 0x7d /* } */) {
        i++;
        return obj;
      }
      for (;;) {
        skipWs();
        if (text.charCodeAt(i) !== 0x22) fail('expected a string key');
        const key = parseString();
        skipWs();
        if (text.charCodeAt(i) !== 0x3a /* : */) fail('expected ":"');
        i++;
        obj[key] = parseValue(depth + 1);
        skipWs();
        const d = text.charCodeAt(i);
        if (d === 0x2c /* , */) {
          i++;
          continue;
        }
        if (d === 0x7d) {
          i++;
          return obj;
        }
        fail('expected "," or "}"');
      }
    }
    if (c === 0x5b /* [ */) {
      if (depth >= maxDepth) fail('nested too deeply');
      i++;
      const arr: JsonValue[] = [];
      skipWs();
      if (text.charCodeAt(i) === 0x5d /* ] */) {
        i++;
        return arr;
      }
      for (;;) {
        arr.push(parseValue(depth + 1));
        skipWs();
        const d = text.charCodeAt(i);
        if (d === 0x2c) {
          i++;
          continue;
        }
        if (d === 0x5d) {
          i++;
          return arr;
        }
        fail('expected "," or "]"');
      }
    }
    if (c === 0x74 /* t */) return literal('true', true);
    if (c === 0x66 /* f */) return literal('false', false);
    if (c === 0x6e /* n */) return literal('null', null);
    NUMBER_RE.lastIndex = i;
    const m = NUMBER_RE.exec(text);
    if (m === null) return fail('unexpected token');
    i += m[0].length;
    return new JsonNumber(m[0]);
  };

  const value = parseValue(0);
  skipWs();
  if (i !== n) fail('trailing characters');
  return value;
}

/** Exponents beyond this are no price: refusing them bounds the digit strings built below. */
const MAX_EXPONENT = 40;

/**
 * The exact value of a JSON number scaled by 10^decimals (`"126.55"`, 8 → 12655000000n), or
 * undefined when it has more significant fraction digits than `decimals` (it cannot be held
 * exactly) or an exponent beyond ±40. Exponent forms (`"1.5e2"`, `"1E-7"`) are exact too.
 */
export function jsonNumberToScaled(num: JsonNumber, decimals: number): bigint | undefined {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(num.text);
  if (m === null) return undefined;
  const exp = m[4] === undefined ? 0 : Number(m[4]);
  if (!Number.isSafeInteger(exp) || Math.abs(exp) > MAX_EXPONENT) return undefined;
  const digits = m[2] + (m[3] ?? '');
  // value = digits × 10^(exp - fractionLength); scaled = digits × 10^(exp - fractionLength + decimals)
  const shift = exp - (m[3]?.length ?? 0) + decimals;
  let scaled: bigint;
  if (shift >= 0) {
    scaled = BigInt(digits) * 10n ** BigInt(shift);
  } else {
    const cut = digits.length + shift;
    const dropped = cut > 0 ? digits.slice(cut) : digits;
    if (/[1-9]/.test(dropped)) return undefined;
    scaled = cut > 0 ? BigInt(digits.slice(0, cut)) : 0n;
  }
  return m[1] === '-' ? -scaled : scaled;
}
