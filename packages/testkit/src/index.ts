/**
 * @tokex/testkit: an embedded tokex venue for integrators' tests (docs/testkit.md). `startVenue()`
 * starts one as a child process; the Vitest fixture is `useVenue()` from `@tokex/testkit/vitest`.
 */
export const TESTKIT_VERSION = '0.1.0';

export { startVenue, prepareTemplate, TESTKIT_HISTORY_DAYS, type StartVenueOptions, type Venue, type VenueBaseUrls, type PriceStep, type PreparedTemplate, type CcxtConfig } from './venue.ts';
export { resolveTokexBin, type VenuePorts } from './venue-process.ts';
export { SandboxError, type SandboxAnswer } from './sandbox-http.ts';
export type { DemoFile, DemoCredentials, DemoStockContracts } from './demo-file.ts';
