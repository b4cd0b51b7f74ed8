/** The start banner's first line (src/app/run-stack.ts): what runs and which release. */
import { APP_VERSION } from '../config/build-info.ts';

/**
 * `tokex all running: tokex 0.2.0 on Node.js v20.19.5`. Scripts and tests wait for
 * `tokex <roles> running`, so the release follows it (docs/upgrades.md "Versions and the database").
 */
export function bannerTitle(role: string): string {
  return `tokex ${role} running: tokex ${APP_VERSION} on Node.js ${process.version}`;
}
