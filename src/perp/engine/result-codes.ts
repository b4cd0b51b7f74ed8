/**
 * The engine's result codes, each with the number and HTTP status the perpetual API answers for it
 * and what it means. This is the one list: the engine's `ResultCode` type is its keys, the API's
 * error table (src/perp/perp-error-codes.ts) spreads it, and docs/perp-api.md prints it (a test keeps
 * the document in step). Numbers are a public contract: never renumber an entry, only add.
 *
 * Ranges as OKX numbers them: 10xxx parameters, 40xxx not found, 51xxx trading rejections.
 */

export type ResultCategory = 'parameter' | 'not found' | 'trading';

export interface ResultCodeEntry {
  /** `code` of the API's error envelope. */
  code: number;
  /** HTTP status of the API's answer. */
  http: number;
  category: ResultCategory;
  /** What it means, as the documentation prints it. */
  meaning: string;
}

export const RESULT_CODES = {
  INVALID: { code: 10000, http: 400, category: 'parameter', meaning: 'a parameter is missing or invalid; `msg` names the field and the reason' },

  UNKNOWN_SYMBOL: { code: 40002, http: 404, category: 'not found', meaning: 'no such instrument' },
  ORDER_NOT_FOUND: { code: 40003, http: 404, category: 'not found', meaning: 'no such order for this account' },

  INSUFFICIENT_MARGIN: { code: 51001, http: 400, category: 'trading', meaning: 'not enough free margin for the order or the margin change' },
  INSUFFICIENT_BALANCE: { code: 51002, http: 400, category: 'trading', meaning: 'not enough withdrawable collateral' },
  POST_ONLY_WOULD_CROSS: { code: 51003, http: 400, category: 'trading', meaning: 'a POST_ONLY order would take liquidity; it was not placed' },
  REDUCE_ONLY_WOULD_INCREASE: { code: 51004, http: 400, category: 'trading', meaning: 'a reduce-only order would open or increase a position' },
  FOK_NOT_FILLED: { code: 51005, http: 400, category: 'trading', meaning: 'a FOK order could not be filled in full; nothing was filled' },
  NO_LIQUIDITY: { code: 51006, http: 400, category: 'trading', meaning: 'no resting liquidity within the worst price and the price band' },
  ORDER_NOT_OPEN: { code: 51007, http: 400, category: 'trading', meaning: 'the order is already filled, cancelled or expired' },
  LEVERAGE_EXCEEDED: { code: 51009, http: 400, category: 'trading', meaning: 'the leverage is above the instrument\'s maximum' },
  SIZE_OUT_OF_RANGE: { code: 51010, http: 400, category: 'trading', meaning: 'the size is below the minimum, above the maximum or off the step' },
  PRICE_OUT_OF_RANGE: { code: 51011, http: 400, category: 'trading', meaning: 'the price is off the tick, outside the instrument\'s prices, or a limit price crosses beyond the band around the mark; `msg` says which, naming the tick or the band\'s bounds' },
  ORDER_EXPIRED: { code: 51012, http: 400, category: 'trading', meaning: 'the signed order\'s `expiry` has passed' },
  POSITION_NOT_OPEN: { code: 51016, http: 400, category: 'trading', meaning: 'there is no open position to close or adjust' },
  MARGIN_MODE_LOCKED: { code: 51017, http: 400, category: 'trading', meaning: 'the margin mode changes only while the position is flat and no order is open on the symbol' },
  UNKNOWN_ACCOUNT: { code: 51018, http: 400, category: 'trading', meaning: 'no collateral was ever deposited for this account' },
  MARK_STALE: { code: 51019, http: 400, category: 'trading', meaning: 'the instrument has no fresh mark price; market orders wait for the next one' },
  WITHDRAWALS_PAUSED: { code: 51020, http: 400, category: 'trading', meaning: 'withdrawals are paused while an account\'s bad debt is being resolved; retry later' },
  WITHDRAWAL_EXISTS: { code: 51021, http: 400, category: 'trading', meaning: 'this withdrawal id was already used with another amount' },
  WITHDRAWAL_NOT_PENDING: { code: 51022, http: 400, category: 'trading', meaning: 'the withdrawal is not pending (already paid or failed, or unknown)' },
  LIQUIDITY_LOCKED: { code: 51023, http: 400, category: 'trading', meaning: 'the liquidity is inside its lock-up; `msg` says when it ends' },
  INSUFFICIENT_SHARES: { code: 51024, http: 400, category: 'trading', meaning: 'more pool shares than the account holds' },
  POOL_MARGIN: { code: 51025, http: 400, category: 'trading', meaning: 'the removal would leave the pool below the initial margin of its positions and orders' },
  ACCOUNT_RESERVED: { code: 51026, http: 400, category: 'trading', meaning: 'the venue\'s own accounts (fees, insurance fund, pool) cannot do this' },
  INSTRUMENT_EXISTS: { code: 51027, http: 400, category: 'trading', meaning: 'the instrument is already listed' },
  INSTRUMENT_IMMUTABLE: { code: 51028, http: 400, category: 'trading', meaning: 'tick and lot size of a listed instrument cannot change' },
} as const satisfies Record<string, ResultCodeEntry>;

/** Every way a command can be refused. */
export type RejectCode = keyof typeof RESULT_CODES;
export type ResultCode = 'OK' | RejectCode;

export function isRejectCode(code: string): code is RejectCode {
  return Object.prototype.hasOwnProperty.call(RESULT_CODES, code);
}
