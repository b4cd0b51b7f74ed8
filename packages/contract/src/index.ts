/**
 * @tokex/contract: what crosses the wire of the tokex stock (`/api/v1`) and perpetual
 * (`/v4/public/trader`) APIs, written once. Servers validate with these schemas and print them as
 * OpenAPI; the SDK, the CCXT class, the console and the CLI type and check their requests with them.
 * No Node-only import: a browser loads it as it is.
 */
export * from './common/patterns.ts';
export * from './common/schema-kit.ts';
export * from './common/canonical-query.ts';
export * from './common/typed-data-fields.ts';
export * from './common/paging.ts';
export * from './common/idempotency.ts';
export * from './common/display-precision.ts';
export * from './perp/index.ts';
export * from './stock/index.ts';
export * from './sandbox/index.ts';
