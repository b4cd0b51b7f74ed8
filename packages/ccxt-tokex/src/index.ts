export const CCXT_TOKEX_VERSION = '0.1.0';
export { TokexPerp } from './tokex-perp.ts';
export { TokexPerp as default } from './tokex-perp.ts';
