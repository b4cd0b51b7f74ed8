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

// The clients' cores and their actions, for use without the classes (as viem's actions): an
// action takes a transport and its parameters, and a bundler keeps only the actions imported.
// The two venues share action names (getPositions, enableOneClick, …), hence one namespace each.
export { createPerpTransport, type PerpPublicTransport, type PerpRequestErrorType, type PerpSendOptions, type PerpTransport } from './perp/perp-transport.ts';
export { createStockTransport, type StockCallOptions, type StockExchange, type StockRequestErrorType, type StockTransport } from './stock/stock-transport.ts';
export * as perpActions from './perp/actions/index.ts';
export * as stockActions from './stock/actions/index.ts';
