/**
 * Provider frames read with every number kept as the text it was sent as. `JSON.parse` turns a
 * price such as `126.5512` into a double; formatting it back is exact only while the value has few
 * enough digits, and the repo's rule is that money never passes through `number`. The parsing is
 * the `lossless-json` package's (strict JSON; it refuses duplicate keys with different values); each
 * number becomes a `JsonNumber`, turned into a scaled bigint directly (`jsonNumberToScaled`).
 */
import { parse } from 'lossless-json';

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

/** Parses `text` as one JSON value, numbers as JsonNumber; throws a SyntaxError on anything else. */
export function parseJsonLossless(text: string): JsonValue {
  return parse(text, null, (digits) => new JsonNumber(digits)) as JsonValue;
}

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
