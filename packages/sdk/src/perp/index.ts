/**
 * The perpetual venue without the class: its transport and every action, flat (one import per
 * action, so a bundler keeps only those used). Meant for a subpath export `@tokex/sdk/perp`.
 */
export { createPerpTransport, PERP_PATH_ROOT, type PerpPublicTransport, type PerpRequestErrorType, type PerpSendOptions, type PerpTransport } from './perp-transport.ts';
export * from './actions/index.ts';
