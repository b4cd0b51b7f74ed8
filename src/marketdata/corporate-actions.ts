/**
 * Splits and dividends of the listed stocks, configured in a JSON file (default
 * `config/corporate-actions.json`, overridable with CORPORATE_ACTIONS_FILE) and added at run time
 * (`tokex corporate-actions add`, stored in the database: src/stock/corporate-actions/). The file is
 * read and validated once at start-up: a mistake stops the process with the entry and field named,
 * rather than serving a wrong list. An action added at run time is checked against the listing,
 * today's date in New York and the actions already known ({@link validateNewCorporateAction}).
 * {@link mergeCorporateActions} makes the venue's list of both, each with its state
 * (docs/corporate-actions.md).
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { ValidationError } from '../errors/app-error.ts';
import { isoDate, newYorkInstant, newYorkTime } from './us-equity-sessions.ts';

export type CorporateActionType = 'SPLIT' | 'DIVIDEND';

export interface CorporateAction {
  symbol: string;
  type: CorporateActionType;
  /** Ex-date, `YYYY-MM-DD`. */
  exDate: string;
  /**
   * Record date, `YYYY-MM-DD`, not before the ex-date; absent: the ex-date (the US rule since T+1
   * settlement). On chain a trade settles in its block, so the holders of record are those at the
   * start of the ex-date whatever this says; it is kept for the books.
   */
  recordDate?: string;
  /** SPLIT only: new shares to old shares, `"10:1"`. */
  ratio?: string;
  /**
   * SPLIT applied by this venue (stored): when the prices and balances move to the new shares (ms,
   * price-splits.ts `splitEffectiveAt`); the price history adjusts the bars before it. Absent: the
   * ex-date's start, as for the file's past splits.
   */
  effectiveAt?: number;
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

const KEYS = new Set(['symbol', 'type', 'exDate', 'recordDate', 'ratio', 'amount', 'currency']);
const SYMBOL_RE = /^[A-Z0-9][A-Z0-9._-]{0,31}$/;
const DATE_RE = /^\d{4}-\d{2}-\d{2}$/;
export const SPLIT_RATIO_RE = /^([1-9]\d{0,5}):([1-9]\d{0,5})$/;
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
  const seen = new Set<string>();
  return list.map((raw, i) => {
    const action = parseCorporateAction(raw, (field) => `corporateActions[${i}].${field}`, `corporateActions[${i}]`);
    // One action per symbol and ex-date, as for the actions added at run time.
    const key = `${action.symbol} ${action.exDate}`;
    if (seen.has(key)) throw new ValidationError(`corporateActions[${i}].exDate`, `${action.symbol} already has a corporate action on ${action.exDate}`);
    seen.add(key);
    return action;
  });
}

/**
 * One action's shape and values; `at` names a field in errors (`corporateActions[3].exDate` for the
 * file, `exDate` for a single action).
 */
export function parseCorporateAction(raw: unknown, at: (field: string) => string = (f) => f, whole = 'corporateAction'): CorporateAction {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new ValidationError(whole, 'must be an object');
  }
  const entry = raw as Record<string, unknown>;
  for (const key of Object.keys(entry)) if (!KEYS.has(key)) throw new ValidationError(at(key), 'unknown field');
  const { symbol, type, exDate, recordDate, ratio, amount, currency } = entry;
  if (typeof symbol !== 'string' || !SYMBOL_RE.test(symbol)) throw new ValidationError(at('symbol'), 'must be an upper-case ticker');
  if (type !== 'SPLIT' && type !== 'DIVIDEND') throw new ValidationError(at('type'), 'must be SPLIT or DIVIDEND');
  if (typeof exDate !== 'string' || !validDate(exDate)) throw new ValidationError(at('exDate'), 'must be a date YYYY-MM-DD');
  if (recordDate !== undefined) {
    if (typeof recordDate !== 'string' || !validDate(recordDate)) throw new ValidationError(at('recordDate'), 'must be a date YYYY-MM-DD');
    if (recordDate < exDate) throw new ValidationError(at('recordDate'), `must not be before the ex-date ${exDate}`);
  }
  const dates = recordDate === undefined ? { exDate } : { exDate, recordDate: recordDate as string };
  if (type === 'SPLIT') {
    if (typeof ratio !== 'string' || !SPLIT_RATIO_RE.test(ratio)) throw new ValidationError(at('ratio'), 'required for a SPLIT, like "10:1"');
    const [, to, from] = SPLIT_RATIO_RE.exec(ratio) as RegExpExecArray;
    if (to === from) throw new ValidationError(at('ratio'), 'must change the share count');
    if (amount !== undefined) throw new ValidationError(at('amount'), 'only for a DIVIDEND');
    if (currency !== undefined) throw new ValidationError(at('currency'), 'only for a DIVIDEND');
    return { symbol, type, ...dates, ratio };
  }
  if (typeof amount !== 'string' || !AMOUNT_RE.test(amount) || /^0(\.0+)?$/.test(amount)) {
    throw new ValidationError(at('amount'), 'required for a DIVIDEND, a positive decimal string like "0.25"');
  }
  if (ratio !== undefined) throw new ValidationError(at('ratio'), 'only for a SPLIT');
  if (currency !== undefined && (typeof currency !== 'string' || !CURRENCY_RE.test(currency))) {
    throw new ValidationError(at('currency'), 'must be a three-letter currency code like "USD"');
  }
  return { symbol, type, ...dates, amount, currency: (currency as string | undefined) ?? 'USD' };
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

// ------------------------------------------------------------------ run-time actions and states

const DAY_MS = 86_400_000;

/** "YYYY-MM-DD" of the New York calendar day the instant `ms` falls in. */
export function newYorkDate(ms: number): string {
  return isoDate(newYorkTime(ms).dayNumber);
}

/** The instant (ms) a New York date begins: 00:00 America/New_York. */
export function newYorkDayStart(date: string): number {
  if (!validDate(date)) throw new RangeError(`not a YYYY-MM-DD date: ${JSON.stringify(date)}`);
  return newYorkInstant(Date.parse(`${date}T00:00:00Z`) / DAY_MS, 0);
}

/** State of an action on this venue (docs/corporate-actions.md, "States"). */
export type CorporateActionStatus = 'scheduled' | 'applied' | 'failed';

/** An action with its state, as `GET corporate-action` shows it. */
export interface CorporateActionState extends CorporateAction {
  status: CorporateActionStatus;
  /** The transaction that applied it; null before, and for an action that predates the venue. */
  txHash: string | null;
}

/**
 * Checks an action the operator adds at run time: the shape (as the file's), then that the symbol
 * is listed, the ex-date is not in the past (today in New York is allowed: it takes effect at once)
 * and no other action of the symbol has that ex-date. Errors name the field.
 */
export function validateNewCorporateAction(
  raw: unknown,
  ctx: { isListed(symbol: string): boolean; now: number; existing: readonly Pick<CorporateAction, 'symbol' | 'exDate'>[] },
): CorporateAction {
  const action = parseCorporateAction(raw);
  if (!ctx.isListed(action.symbol)) throw new ValidationError('symbol', `"${action.symbol}" is not listed`);
  const today = newYorkDate(ctx.now);
  if (action.exDate < today) throw new ValidationError('exDate', `${action.exDate} is in the past (today in New York is ${today})`);
  if (ctx.existing.some((a) => a.symbol === action.symbol && a.exDate === action.exDate)) {
    throw new ValidationError('exDate', `${action.symbol} already has a corporate action on ${action.exDate}`);
  }
  return action;
}

/**
 * The venue's list: the stored actions (added at run time, or the file's taken up by the
 * scheduler), and the file's others. A file action not stored is `applied` without a transaction
 * when its ex-date is before `venueStartDate` (it predates the venue: its tokens were issued after
 * it), else `scheduled`. Newest ex-date first, then by symbol.
 */
export function mergeCorporateActions(
  file: readonly CorporateAction[],
  stored: readonly CorporateActionState[],
  venueStartDate: string,
): CorporateActionState[] {
  const key = (a: Pick<CorporateAction, 'symbol' | 'exDate'>) => `${a.symbol} ${a.exDate}`;
  const byKey = new Map<string, CorporateActionState>();
  for (const a of file) byKey.set(key(a), { ...a, status: a.exDate < venueStartDate ? 'applied' : 'scheduled', txHash: null });
  for (const a of stored) byKey.set(key(a), { ...a });
  return [...byKey.values()].sort((a, b) =>
    a.exDate !== b.exDate ? (a.exDate < b.exDate ? 1 : -1) : a.symbol < b.symbol ? -1 : a.symbol > b.symbol ? 1 : 0,
  );
}
