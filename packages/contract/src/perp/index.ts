/** The perpetual API's part of the contract (contract.md §B). */
export * from './perp-enums.ts';
export * from './perp-signing.ts';
export * from './perp-typed-data.ts';
export * from './perp-error-codes.ts';
export * from './perp-validate.ts';
export * from './perp-schemas.ts';
export * from './perp-market-schemas.ts';
export * from './perp-account-schemas.ts';
export * from './perp-liquidity-schemas.ts';
export * from './perp-key-schemas.ts';
export * from './perp-vault-schemas.ts';
export * from './perp-escape.ts';
export * from './perp-monday-schemas.ts';
