export const SDK_VERSION = '0.1.0';

export * from './signing.ts';
export * from './signer-types.ts';
export * from './errors.ts';
export * from './retry-policy.ts';
export * from './pagination.ts';
export * from './decimal-step.ts';
export * from './perp-types.ts';
export * from './stock-types.ts';
export * from './perp-client.ts';
export * from './stock-client.ts';
export * from './stock-flows.ts';
export * from './perp-routes.ts';
export * from './stock-routes.ts';
export * from './stream-client.ts';
