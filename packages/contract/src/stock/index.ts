/** The stock API's part of the contract (contract.md §A). */
export * from './stock-enums.ts';
export * from './stock-key-scopes.ts';
export * from './stock-signing.ts';
export * from './stock-typed-data.ts';
export * from './stock-error-codes.ts';
export * from './stock-schemas.ts';
export * from './stock-market-schemas.ts';
export * from './stock-portfolio-schemas.ts';
export * from './stock-order-schemas.ts';
export * from './stock-one-click-schemas.ts';
export * from './stock-operation-schemas.ts';
export * from './stock-cash-schemas.ts';
export * from './stock-transfer-schemas.ts';
