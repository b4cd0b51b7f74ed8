/**
 * The perpetual API's error table (contract.md §B, docs/perp-api.md prints it row for row): every
 * `code` the envelope can carry, its name, HTTP status, category and meaning. Five-digit codes in
 * ranges per category, as OKX numbers them: 10xxx parameters, 20xxx authentication, 30xxx
 * permission, 40xxx not found, 42900 rate limit, 50xxx server, 51xxx and 52xxx trading rejections.
 * The engine's refusals are the entries it names by the same name (src/perp/engine/result-codes.ts;
 * the server checks at compile time that each has a row here). Integrators program against the
 * numbers: never renumber an entry, only add.
 */
export type PerpCategory = 'parameter' | 'authentication' | 'permission' | 'not found' | 'rate limit' | 'trading' | 'server';

export interface PerpErrorEntry {
  /** `code` of the envelope. */
  code: number;
  /** HTTP status of the answer. */
  http: number;
  category: PerpCategory;
  /** What it means, as the documentation prints it. */
  meaning: string;
}

/** `code` of every successful answer. */
export const PERP_OK_CODE = 0;

const TABLE = {
  // ---------------------------------------------------------------- the engine's refusals
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
  TRIGGER_WOULD_FIRE: { code: 51029, http: 400, category: 'trading', meaning: 'the trigger price is already reached by the price it watches; the order was not placed (send a MARKET or LIMIT order instead)' },
  NO_TRIGGER_PRICE: { code: 51030, http: 400, category: 'trading', meaning: 'the price a trigger watches has not been set yet on this instrument (no mark, or no trade for LAST)' },
  ORDER_NOT_AMENDABLE: { code: 51031, http: 400, category: 'trading', meaning: 'the order cannot be amended that way: `msg` says why (a trigger order not yet fired, a size not above what has filled, nothing changed)' },

  // ---------------------------------------------------------------- what only the API answers
  BODY_TOO_LARGE: { code: 10001, http: 400, category: 'parameter', meaning: 'the request body is larger than the limit' },
  STATE_CONFLICT: { code: 10002, http: 400, category: 'parameter', meaning: 'the request conflicts with the current state of the resource' },
  SNAPSHOT_REQUIRED: { code: 10003, http: 400, category: 'parameter', meaning: 'streams: `since` is no longer retained, or the stream restarted; subscribe without `since` for a fresh snapshot' },

  MISSING_CREDENTIALS: { code: 20001, http: 401, category: 'authentication', meaning: 'an authentication header is missing, repeated or malformed' },
  INVALID_API_KEY: { code: 20002, http: 401, category: 'authentication', meaning: 'the API key does not exist, was deleted, or belongs to another API' },
  API_KEY_EXPIRED: { code: 20003, http: 401, category: 'authentication', meaning: 'the API key has expired' },
  IP_NOT_ALLOWED: { code: 20004, http: 401, category: 'authentication', meaning: 'the request comes from an IP address the key does not whitelist' },
  TIMESTAMP_OUT_OF_WINDOW: { code: 20005, http: 401, category: 'authentication', meaning: '`X-Api-Ts` is more than 45 s from the server clock' },
  INVALID_SIGNATURE: { code: 20006, http: 401, category: 'authentication', meaning: '`X-Api-Sign` does not match the request' },
  REPLAYED_REQUEST: { code: 20007, http: 401, category: 'authentication', meaning: 'the same signature was already used inside the window' },
  CHAIN_MISMATCH: { code: 20008, http: 401, category: 'authentication', meaning: '`X-Chain-Id` is missing or not the chain of the service or the key' },

  PERMISSION_DENIED: { code: 30001, http: 403, category: 'permission', meaning: 'the key lacks the permission the endpoint needs (READ, TRADE or TRANSFER)' },

  NOT_FOUND: { code: 40000, http: 404, category: 'not found', meaning: 'the resource does not exist or is not the account\'s' },
  ROUTE_NOT_FOUND: { code: 40001, http: 404, category: 'not found', meaning: 'no such endpoint' },
  POSITION_NOT_FOUND: { code: 40004, http: 404, category: 'not found', meaning: 'no such position for this account' },
  API_KEY_NOT_FOUND: { code: 40005, http: 404, category: 'not found', meaning: 'no such API key for this wallet' },

  RATE_LIMITED: { code: 42900, http: 429, category: 'rate limit', meaning: 'too many requests for this key; retry after `Retry-After` seconds' },

  INTERNAL: { code: 50000, http: 500, category: 'server', meaning: 'internal error; report the `requestId`' },
  CHAIN_UNAVAILABLE: { code: 50001, http: 503, category: 'server', meaning: 'the chain RPC does not answer; retry with backoff' },
  STORAGE_UNAVAILABLE: { code: 50002, http: 503, category: 'server', meaning: 'the database or shared store does not answer; retry with backoff' },
  NOT_READY: { code: 50003, http: 503, category: 'server', meaning: '`GET /readyz` only: a role the API depends on has made no progress within its threshold (docs/operations.md)' },

  DUPLICATE_CLIENT_ORDER_ID: { code: 51008, http: 400, category: 'trading', meaning: '`clientOrderId` was already used by this account' },
  NONCE_USED: { code: 51013, http: 400, category: 'trading', meaning: 'the signed order\'s `nonce` was already used' },
  BAD_ORDER_SIGNATURE: { code: 51014, http: 400, category: 'trading', meaning: 'the order\'s EIP-712 signature is not from the wallet or its enabled session signer' },
  ONE_CLICK_NOT_ENABLED: { code: 51015, http: 400, category: 'trading', meaning: 'One-Click Trade is not enabled (or expired) for the session signer' },
  CHAIN_REVERTED: { code: 52001, http: 400, category: 'trading', meaning: 'the chain reverted the transaction' },
} as const satisfies Record<string, PerpErrorEntry>;

export type PerpErrorName = keyof typeof TABLE;

/** Every entry, in code order (the order the documentation prints). */
export const PERP_ERROR_CODES: Readonly<Record<PerpErrorName, PerpErrorEntry>> = Object.fromEntries(
  Object.entries(TABLE as Record<string, PerpErrorEntry>).sort((a, b) => a[1].code - b[1].code),
) as Record<PerpErrorName, PerpErrorEntry>;

/** A business refusal: a trading entry of the table. */
export type PerpRejection = { [K in PerpErrorName]: (typeof TABLE)[K]['category'] extends 'trading' ? K : never }[PerpErrorName];

/** The entry of an envelope's `code`, for a client deciding what to do with an answer. */
export function perpErrorByCode(code: number): ({ name: PerpErrorName } & PerpErrorEntry) | undefined {
  for (const [name, e] of Object.entries(PERP_ERROR_CODES)) if (e.code === code) return { name: name as PerpErrorName, ...e };
  return undefined;
}

/**
 * Codes whose request a client may send again as it is, with backoff: the chain or the database did
 * not answer, so the outcome may be unknown (an idempotent request makes the retry safe). A 429 is
 * retried after its `Retry-After` by its HTTP status.
 */
export const PERP_RETRYABLE_CODES: readonly number[] = [TABLE.CHAIN_UNAVAILABLE.code, TABLE.STORAGE_UNAVAILABLE.code];
