/**
 * Patterns of the values that cross the wire, each with the sentence a client sees when a value does
 * not match, so `userId: must be a 0x-prefixed 20-byte hex address` reads better than a raw regular
 * expression. The servers' schema error formatter and the clients' checks before sending read the
 * same table.
 */
export const ADDRESS_PATTERN = '^0x[0-9a-fA-F]{40}$';
export const DECIMAL_PATTERN = '^(0|[1-9][0-9]*)(\\.[0-9]+)?$';
export const SIGNED_DECIMAL_PATTERN = '^-?(0|[1-9][0-9]*)(\\.[0-9]+)?$';
export const TX_HASH_PATTERN = '^0x[0-9a-fA-F]{64}$';
export const UINT_PATTERN = '^(0|[1-9][0-9]{0,76})$';
/** A 65-byte signature (r, s, v), or 64 bytes in the compact form of EIP-2098. */
export const SIGNATURE_PATTERN = '^0x([0-9a-fA-F]{130}|[0-9a-fA-F]{128})$';
/** Identifiers that reach a database: PostgreSQL refuses a NUL byte in text (a 500 otherwise). */
export const VISIBLE_ASCII_PATTERN = '^[!-~]+$';
/** The same for an optional filter, which may be sent empty (`symbol=`: no filter). */
export const VISIBLE_ASCII_OR_EMPTY_PATTERN = '^[!-~]*$';

export const PATTERN_REASONS: Readonly<Record<string, string>> = {
  [ADDRESS_PATTERN]: 'must be a 0x-prefixed 20-byte hex address',
  [DECIMAL_PATTERN]: 'must be a decimal string like "12.5" (no sign, exponent or spaces)',
  [SIGNED_DECIMAL_PATTERN]: 'must be a signed decimal string like "-12.5" (no exponent or spaces)',
  [TX_HASH_PATTERN]: 'must be a 0x-prefixed 32-byte hex transaction hash',
  [UINT_PATTERN]: 'must be a non-negative integer string',
  [VISIBLE_ASCII_PATTERN]: 'must be visible ASCII characters only',
  [VISIBLE_ASCII_OR_EMPTY_PATTERN]: 'must be visible ASCII characters only',
  [SIGNATURE_PATTERN]: 'must be a 0x-prefixed 65-byte hex signature (or a 64-byte EIP-2098 compact one)',
};
