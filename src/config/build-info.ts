/**
 * The release this code is (docs/upgrades.md "Versions and the database"): package.json's `version`,
 * which `tokex --version`, `/healthz`, the `tokex_build_info` metric, the start banner and the
 * database's `app_releases` table carry.
 *
 * Read from package.json at load rather than copied into the code, so that a release bump is one
 * edit. The path is this file's own: under tsx and vitest `import.meta.url` is this source, and in
 * the bundle of dist/app scripts/build-app.mjs replaces `import.meta.url` with this source's URL
 * too, so all three read the checkout's package.json (the bundle always runs beside its checkout:
 * bin/tokex.mjs rebuilds it when the checkout moved).
 */
import { readFileSync } from 'node:fs';
import { ValidationError } from '../errors/app-error.ts';

const PACKAGE_JSON = new URL('../../package.json', import.meta.url);

function readAppVersion(): string {
  const pkg = JSON.parse(readFileSync(PACKAGE_JSON, 'utf8')) as { name?: unknown; version?: unknown };
  if (typeof pkg.version !== 'string' || parseVersion(pkg.version) === undefined) {
    throw new Error(`package.json: version ${JSON.stringify(pkg.version)} is not a semantic version (x.y.z)`);
  }
  return pkg.version;
}

interface ParsedVersion {
  core: [number, number, number];
  /** Dot-separated prerelease identifiers; empty for a release. */
  pre: string[];
}

// x.y.z without leading zeros, an optional -prerelease, and optional +build metadata (ignored).
const SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*))?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$/;

function parseVersion(v: string): ParsedVersion | undefined {
  const m = SEMVER.exec(v);
  if (!m) return undefined;
  const core = [Number(m[1]), Number(m[2]), Number(m[3])] as [number, number, number];
  if (!core.every(Number.isSafeInteger)) return undefined;
  return { core, pre: m[4] === undefined ? [] : m[4].split('.') };
}

/** Whether `v` is a semantic version this module compares: `x.y.z`, `x.y.z-pre.1`, `x.y.z+build`. */
export function isVersion(v: string): boolean {
  return parseVersion(v) !== undefined;
}

const sign = (n: number): -1 | 0 | 1 => (n < 0 ? -1 : n > 0 ? 1 : 0);

/**
 * Semantic Versioning 2.0.0 precedence: -1 when `a` is older than `b`, 1 when newer, 0 when equal.
 * A prerelease is lower than its release (`0.3.0-rc.1` < `0.3.0`); prerelease identifiers compare
 * numerically when both are numbers, a number below a word, and a shorter list below a longer one
 * it starts. Build metadata (`+…`) is ignored. Throws a ValidationError for anything else.
 */
export function compareVersions(a: string, b: string): -1 | 0 | 1 {
  const pa = parseVersion(a);
  const pb = parseVersion(b);
  if (!pa) throw new ValidationError('version', `${JSON.stringify(a)} is not a semantic version (x.y.z)`);
  if (!pb) throw new ValidationError('version', `${JSON.stringify(b)} is not a semantic version (x.y.z)`);
  for (let i = 0; i < 3; i++) if (pa.core[i] !== pb.core[i]) return sign(pa.core[i] - pb.core[i]);
  if (pa.pre.length === 0 || pb.pre.length === 0) return sign(pb.pre.length - pa.pre.length);
  for (let i = 0; i < Math.min(pa.pre.length, pb.pre.length); i++) {
    const x = pa.pre[i];
    const y = pb.pre[i];
    if (x === y) continue;
    const xn = /^\d+$/.test(x);
    const yn = /^\d+$/.test(y);
    if (xn && yn) return sign(Number(x) - Number(y));
    if (xn !== yn) return xn ? -1 : 1;
    return x < y ? -1 : 1;
  }
  return sign(pa.pre.length - pb.pre.length);
}

/** This build's release: package.json's `version`. */
export const APP_VERSION: string = readAppVersion();
