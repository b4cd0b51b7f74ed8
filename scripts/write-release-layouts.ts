/**
 * Records the storage layouts a release ships: `npx tsx scripts/write-release-layouts.ts <version> [--force]`
 * writes contracts/layouts/<version>.json (contract name → upgrades-core StorageLayout) for the
 * upgradeable contracts of the current build. test/chain/storage-layout.test.ts then holds every later
 * build to the latest such file (docs/upgrades.md, "Storage layouts").
 *
 * Refuses when the file exists (a shipped release's layouts are what deployed proxies hold; `--force`
 * is for re-recording a release that has not shipped yet), when an upgradeable contract is not
 * upgrade-safe, and when the layouts are incompatible with the previous release.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { buildContracts } from '../src/chain/contract-build.ts';
import {
  checkRelease,
  compareVersions,
  formatReleaseCheck,
  isSemver,
  listReleaseLayouts,
  loadBuildLayouts,
  readReleaseLayouts,
  RELEASE_LAYOUTS_DIR,
  releaseLayoutsOf,
} from '../src/chain/storage-layout.ts';

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

const args = process.argv.slice(2);
const force = args.includes('--force');
const positional = args.filter((a) => !a.startsWith('--'));
const unknown = args.filter((a) => a.startsWith('--') && a !== '--force');
if (positional.length !== 1 || unknown.length > 0) {
  fail('usage: npx tsx scripts/write-release-layouts.ts <version> [--force]   (version like 0.2.0)');
}
const version = positional[0];
if (!isSemver(version)) fail(`${version}: not a semantic version (like 0.2.0)`);

const file = path.join(RELEASE_LAYOUTS_DIR, `${version}.json`);
const relative = path.relative(process.cwd(), file);
if (existsSync(file) && !force) {
  fail(`${relative} exists: a release's layouts are what its proxies hold. Pass --force only if ${version} has not shipped.`);
}

const build = buildContracts();
if (build.compiled) process.stdout.write(`${build.summary}\n`);
const contracts = loadBuildLayouts();
const unsafe = Object.entries(contracts).filter(([, c]) => c.upgradeable && !c.upgradeSafe);
if (unsafe.length > 0) {
  fail(unsafe.map(([name, c]) => `${name} is not upgrade-safe (upgrades-core):\n${c.errors.join('\n')}`).join('\n\n'));
}
const layouts = releaseLayoutsOf(contracts);
if (Object.keys(layouts).length === 0) fail('no upgradeable contract in the build (none inherits Initializable)');

// The release this one follows: the newest recorded before it.
const previous = listReleaseLayouts()
  .filter((r) => compareVersions(r.version, version) < 0)
  .at(-1);
if (previous) {
  const results = checkRelease(readReleaseLayouts(previous.file), layouts);
  if (results.some((r) => !r.ok)) {
    const message = `storage layouts incompatible with release ${previous.version}:\n\n${formatReleaseCheck(results)}`;
    if (!force) fail(`${message}\n\nNothing written.`);
    process.stderr.write(`${message}\n\nWritten anyway (--force).\n`);
  }
}

mkdirSync(RELEASE_LAYOUTS_DIR, { recursive: true });
writeFileSync(file, `${JSON.stringify(layouts, null, 2)}\n`);
process.stdout.write(
  `${relative}: storage layouts of ${Object.keys(layouts).join(', ')}${previous ? ` (compatible with ${previous.version})` : ''}\n`,
);
