/**
 * Splits and dividends of the listed stocks, configured in a JSON file (default
 * `config/corporate-actions.json`, overridable with CORPORATE_ACTIONS_FILE). The file is read and
 * validated once at start-up: a mistake stops the process with the entry and field named, rather
 * than serving a wrong list.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { ValidationError } from '../errors/app-error.ts';

export type CorporateActionType = 'SPLIT' | 'DIVIDEND';

export interface CorporateAction {
  symbol: string;
  type: CorporateActionType;
  /** Ex-date, `YYYY-MM-DD`. */
  exDate: string;
  /** SPLIT only: new shares to old shares, `"10:1"`. */
  ratio?: string;
  /** DIVIDEND only: cash per share, a decimal string. */
  amount?: string;
  /** DIVIDEND only: ISO 4217 code, default USD. */
  currency?: string;
}

export interface CorporateActionBook {
  /** Newest ex-date first (then by symbol); only `symbol`'s when given (case-insensitive). */
  list(symbol?: string): CorporateAction[];
}

export const DEFAULT_CORPORATE_ACTIONS_PATH = fileURLToPath(new URL('../../config/corporate-actions.json', import.meta.url));

const KEYS = new Set(['symbol', 'type', 'exDate', 'ratio', 'amount', 'currency']);
const SYMBOL_RE = /^[A-Z0-9][A-Z0-9._-]{0,31}$/;
const DATE_RE = /^\d{4}-\d{2}-\d{2}$/;
const RATIO_RE = /^([1-9]\d{0,5}):([1-9]\d{0,5})$/;
const AMOUNT_RE = /^(0|[1-9]\d*)(\.\d{1,8})?$/;
const CURRENCY_RE = /^[A-Z]{3}$/;

function validDate(value: string): boolean {
  if (!DATE_RE.test(value)) return false;
  const ms = Date.parse(`${value}T00:00:00Z`);
  return !Number.isNaN(ms) && new Date(ms).toISOString().slice(0, 10) === value;
}

/** Validates parsed JSON: an array of actions, or `{ "actions": [...] }`. */
export function parseCorporateActions(json: unknown): CorporateAction[] {
  const list = Array.isArray(json) ? json : (json as { actions?: unknown } | null)?.actions;
  if (!Array.isArray(list)) throw new ValidationError('corporateActions', 'must be an array of actions');
  return list.map((raw, i) => {
    const at = (field: string): string => `corporateActions[${i}].${field}`;
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
      throw new ValidationError(`corporateActions[${i}]`, 'must be an object');
    }
    const entry = raw as Record<string, unknown>;
    for (const key of Object.keys(entry)) if (!KEYS.has(key)) throw new ValidationError(at(key), 'unknown field');
    const { symbol, type, exDate, ratio, amount, currency } = entry;
    if (typeof symbol !== 'string' || !SYMBOL_RE.test(symbol)) throw new ValidationError(at('symbol'), 'must be an upper-case ticker');
    if (type !== 'SPLIT' && type !== 'DIVIDEND') throw new ValidationError(at('type'), 'must be SPLIT or DIVIDEND');
    if (typeof exDate !== 'string' || !validDate(exDate)) throw new ValidationError(at('exDate'), 'must be a date YYYY-MM-DD');
    if (type === 'SPLIT') {
      if (typeof ratio !== 'string' || !RATIO_RE.test(ratio)) throw new ValidationError(at('ratio'), 'required for a SPLIT, like "10:1"');
      const [, to, from] = RATIO_RE.exec(ratio) as RegExpExecArray;
      if (to === from) throw new ValidationError(at('ratio'), 'must change the share count');
      if (amount !== undefined) throw new ValidationError(at('amount'), 'only for a DIVIDEND');
      if (currency !== undefined) throw new ValidationError(at('currency'), 'only for a DIVIDEND');
      return { symbol, type, exDate, ratio };
    }
    if (typeof amount !== 'string' || !AMOUNT_RE.test(amount) || /^0(\.0+)?$/.test(amount)) {
      throw new ValidationError(at('amount'), 'required for a DIVIDEND, a positive decimal string like "0.25"');
    }
    if (ratio !== undefined) throw new ValidationError(at('ratio'), 'only for a SPLIT');
    if (currency !== undefined && (typeof currency !== 'string' || !CURRENCY_RE.test(currency))) {
      throw new ValidationError(at('currency'), 'must be a three-letter currency code like "USD"');
    }
    return { symbol, type, exDate, amount, currency: (currency as string | undefined) ?? 'USD' };
  });
}

export function createCorporateActionBook(actions: readonly CorporateAction[]): CorporateActionBook {
  const sorted = [...actions].sort((a, b) =>
    a.exDate !== b.exDate ? (a.exDate < b.exDate ? 1 : -1) : a.symbol < b.symbol ? -1 : a.symbol > b.symbol ? 1 : 0,
  );
  const frozen = sorted.map((a) => Object.freeze({ ...a }));
  return {
    list(symbol) {
      if (symbol === undefined) return frozen.map((a) => ({ ...a }));
      const wanted = symbol.toUpperCase();
      return frozen.filter((a) => a.symbol === wanted).map((a) => ({ ...a }));
    },
  };
}

/** Reads and validates the file; a missing or malformed file is an error naming the path. */
export async function loadCorporateActions(path: string = DEFAULT_CORPORATE_ACTIONS_PATH): Promise<CorporateActionBook> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new Error(`corporate actions: cannot read ${path}`, { cause: err });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new Error(`corporate actions: ${path} is not valid JSON`, { cause: err });
  }
  try {
    return createCorporateActionBook(parseCorporateActions(json));
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    const reason = err.message.slice(err.field.length + 2);
    throw new ValidationError(err.field, `${reason} (in ${path})`, { cause: err });
  }
}
