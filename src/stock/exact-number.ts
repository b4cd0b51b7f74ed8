/**
 * Money that Anchored's documentation types as a JSON number (`price`, `change24H`, `amount`, ...),
 * kept exact on the wire (docs/stock-api.md, "Answers"): a view holds the exact decimal text in an
 * ExactNumber, and `renderExactJson` prints that text as the number's own digits (`229.80`,
 * `0.000000000000000001`), which no float could. Anywhere else (the streams, which go through
 * `JSON.stringify` and Redis) it becomes the nearest double through `toJSON`: exact up to 15
 * significant digits, every price to the cent.
 */

/** What `JSON.parse` reads as a number without an exponent: a JSON number's grammar, minus `e`. */
const JSON_DECIMAL = /^-?(0|[1-9]\d*)(\.\d+)?$/;

export class ExactNumber {
  readonly text: string;

  constructor(text: string) {
    if (!JSON_DECIMAL.test(text)) throw new Error(`not a decimal for a JSON number: ${JSON.stringify(text)}`);
    this.text = text;
  }

  toJSON(): number {
    return Number(this.text);
  }

  valueOf(): number {
    return Number(this.text);
  }
}

/**
 * The decimal `text` as the number a contract type says the field is. The value is an ExactNumber
 * (it compares and computes as its double, and `JSON.stringify` prints the double); only
 * `renderExactJson` prints its digits.
 */
export function exactNumber(text: string): number {
  return new ExactNumber(text) as unknown as number;
}

export function exactNumberOrNull(text: string | null | undefined): number | null {
  return text === null || text === undefined ? null : exactNumber(text);
}

/** The exact text of a field that holds an ExactNumber (tests and views reading a view back). */
export function exactText(v: unknown): string | undefined {
  return v instanceof ExactNumber ? v.text : undefined;
}

/** `JSON.stringify(value)`, but an ExactNumber prints its decimal's own digits. */
export function renderExactJson(value: unknown): string {
  return render(value) ?? 'null';
}

function render(v: unknown): string | undefined {
  if (v instanceof ExactNumber) return v.text;
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (typeof (v as { toJSON?: unknown }).toJSON === 'function') return render((v as { toJSON(): unknown }).toJSON());
  if (Array.isArray(v)) return '[' + v.map((x) => render(x) ?? 'null').join(',') + ']';
  let out = '';
  for (const key of Object.keys(v)) {
    const s = render((v as Record<string, unknown>)[key]);
    if (s === undefined) continue;
    out += (out === '' ? '' : ',') + JSON.stringify(key) + ':' + s;
  }
  return '{' + out + '}';
}
