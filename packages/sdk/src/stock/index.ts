/**
 * The tokenized-stock venue without the class: its transport and every action, flat (one import
 * per action, so a bundler keeps only those used). Meant for a subpath export `@tokex/sdk/stock`.
 */
export { createStockTransport, type SendOptions, type SignedRequest, type StockCallOptions, type StockExchange, type StockRequestErrorType, type StockTransport } from './stock-transport.ts';
export * from './actions/index.ts';
