/**
 * Every way the engine refuses a command, by name. The engine knows nothing of HTTP or of the
 * numbers an API answers: the perpetual API maps each name onto its error table (the contract's
 * PERP_ERROR_CODES, where every name here has a row with its number, HTTP status and meaning;
 * src/perp/perp-error-codes.ts checks that at compile time), as exchange-core's gateways map its
 * result codes. Names are part of the journal: never rename one, only add.
 */
export const REJECT_CODES = [
  'INVALID',
  'UNKNOWN_SYMBOL',
  'ORDER_NOT_FOUND',
  'INSUFFICIENT_MARGIN',
  'INSUFFICIENT_BALANCE',
  'POST_ONLY_WOULD_CROSS',
  'REDUCE_ONLY_WOULD_INCREASE',
  'FOK_NOT_FILLED',
  'NO_LIQUIDITY',
  'ORDER_NOT_OPEN',
  'LEVERAGE_EXCEEDED',
  'SIZE_OUT_OF_RANGE',
  'PRICE_OUT_OF_RANGE',
  'ORDER_EXPIRED',
  'POSITION_NOT_OPEN',
  'MARGIN_MODE_LOCKED',
  'UNKNOWN_ACCOUNT',
  'MARK_STALE',
  'WITHDRAWALS_PAUSED',
  'WITHDRAWAL_EXISTS',
  'WITHDRAWAL_NOT_PENDING',
  'LIQUIDITY_LOCKED',
  'INSUFFICIENT_SHARES',
  'POOL_MARGIN',
  'ACCOUNT_RESERVED',
  'INSTRUMENT_EXISTS',
  'INSTRUMENT_IMMUTABLE',
  'TRIGGER_WOULD_FIRE',
  'NO_TRIGGER_PRICE',
  'ORDER_NOT_AMENDABLE',
  // Never the engine's own: the refusal of an order whose nonce the engine's transport found used
  // (redis-stream-transport.ts, protocol 2). Never journalled.
  'NONCE_USED',
] as const;

export type RejectCode = (typeof REJECT_CODES)[number];
export type ResultCode = 'OK' | RejectCode;

const KNOWN: ReadonlySet<string> = new Set(REJECT_CODES);

export function isRejectCode(code: string): code is RejectCode {
  return KNOWN.has(code);
}
