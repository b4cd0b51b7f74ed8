/** The wire's value patterns and their sentences live in the contract package; re-exported for the HTTP layer's formatter. */
export {
  ADDRESS_PATTERN,
  DECIMAL_PATTERN,
  PATTERN_REASONS,
  SIGNATURE_PATTERN,
  SIGNED_DECIMAL_PATTERN,
  TX_HASH_PATTERN,
  UINT_PATTERN,
  VISIBLE_ASCII_PATTERN,
} from '@tokex/contract';
