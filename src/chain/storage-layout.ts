/**
 * The storage-layout check of the upgradeable contracts (docs/upgrades.md, "Storage layouts").
 *
 * A proxy keeps its contract's state in its own storage, laid out by the implementation that wrote
 * it; a new implementation must find every variable where the previous one left it. The build
 * (src/chain/contract-build.ts) records upgrades-core's layout of each contract in
 * artifacts/storage-layouts.json; each release records the layouts it shipped in
 * contracts/layouts/<version>.json (scripts/write-release-layouts.ts); test/chain/storage-layout.test.ts
 * compares the build with the latest release through upgrades-core's `getStorageUpgradeReport`, the
 * comparison OpenZeppelin's upgrade plugins run before they deploy an upgrade.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import type { StorageLayout } from '@openzeppelin/upgrades-core';
import { AppError } from '../errors/app-error.ts';
import { STORAGE_LAYOUTS_FILE, type ContractUpgradeInfo, type StorageLayoutsFile } from './contract-build.ts';

export type { StorageLayout } from '@openzeppelin/upgrades-core';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
/** One `<version>.json` per release: contract name → StorageLayout. */
export const RELEASE_LAYOUTS_DIR = path.join(ROOT, 'contracts', 'layouts');

/** The contracts of the venue that live behind proxies (issue 38); each release records their layouts. */
export const UPGRADEABLE_CONTRACTS = [
  'Cashier',
  'DividendDistributor',
  'MarginVault',
  'OneClickRouter',
  'PriceFeedHub',
  'ReserveRegistry',
  'Stock',
  'StockRouter',
] as const;

/** One contract of the build: `layout`, `upgradeable`, `upgradeSafe`, `errors`, `warnings`, `codeHash` (Hex). */
export type BuildLayout = ContractUpgradeInfo;

/**
 * The current build's layouts and upgrade-safety verdicts, by contract name (every deployable
 * contract of contracts/*.sol). Throws when the build has not written them (`npm run build:contracts`).
 */
export function loadBuildLayouts(file: string = STORAGE_LAYOUTS_FILE): Record<string, BuildLayout> {
  if (!existsSync(file)) {
    throw new AppError('INTERNAL', `storage layouts: ${path.relative(ROOT, file)} is missing; run npm run build:contracts`);
  }
  return (JSON.parse(readFileSync(file, 'utf8')) as StorageLayoutsFile).contracts;
}

/**
 * Whether a proxy whose state `previous` wrote can run `next`, with upgrades-core's report: each
 * finding names the variable ("Inserted `fee`", "Deleted `owner`", "Upgraded `price` to an
 * incompatible type"). Renames and retypes count only when annotated (`@custom:oz-renamed-from`,
 * `@custom:oz-retyped-from`), as in the upgrade plugins.
 */
export function compareLayouts(previous: StorageLayout, next: StorageLayout): { ok: boolean; report: string } {
  // Loaded at the first comparison (an upgrade, a release check): with ethereumjs-util and its
  // native secp256k1 it was a tenth of a start's module loading, and a start compares nothing.
  const { getStorageUpgradeReport, UpgradesError, withValidationDefaults } = createRequire(import.meta.url)('@openzeppelin/upgrades-core') as typeof import('@openzeppelin/upgrades-core');
  try {
    const report = getStorageUpgradeReport(previous, next, withValidationDefaults({}));
    return { ok: report.ok, report: report.ok ? 'compatible' : report.explain(false) };
  } catch (err) {
    // e.g. a custom layout (`layout at`) whose base slot moved: upgrades-core refuses outright.
    if (err instanceof UpgradesError) return { ok: false, report: err.message.trim() };
    throw err;
  }
}

/**
 * Compares a release's layouts with the next ones, contract by contract (sorted by name). A contract
 * only in `next` is new and passes; one only in `previous` fails: its proxy would be left behind.
 */
export function checkRelease(
  previous: Record<string, StorageLayout>,
  next: Record<string, StorageLayout>,
): Array<{ contract: string; ok: boolean; report: string }> {
  const names = [...new Set([...Object.keys(previous), ...Object.keys(next)])].sort();
  return names.map((contract) => {
    const before = previous[contract];
    const after = next[contract];
    if (before === undefined) return { contract, ok: true, report: 'new: no earlier layout to keep' };
    if (after === undefined) {
      return { contract, ok: false, report: `${contract} is in the previous release but not in this one: its proxy and state would be orphaned` };
    }
    return { contract, ...compareLayouts(before, after) };
  });
}

/** The layouts to record for a release: those of the build's upgradeable contracts. */
export function releaseLayoutsOf(build: Record<string, BuildLayout>): Record<string, StorageLayout> {
  const out: Record<string, StorageLayout> = {};
  for (const name of Object.keys(build).sort()) if (build[name].upgradeable) out[name] = build[name].layout;
  return out;
}

import { compareVersions, isVersion as isSemver } from '../config/build-info.ts';
// One version order for the whole project: the release's own (src/config/build-info.ts).
export { compareVersions, isVersion as isSemver } from '../config/build-info.ts';

/** The recorded releases, oldest first. */
export function listReleaseLayouts(dir: string = RELEASE_LAYOUTS_DIR): Array<{ version: string; file: string }> {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json') && isSemver(f.slice(0, -'.json'.length)))
    .map((f) => ({ version: f.slice(0, -'.json'.length), file: path.join(dir, f) }))
    .sort((a, b) => compareVersions(a.version, b.version));
}

export function readReleaseLayouts(file: string): Record<string, StorageLayout> {
  return JSON.parse(readFileSync(file, 'utf8')) as Record<string, StorageLayout>;
}

/** The newest recorded release (by semantic version), or undefined when none is. */
export function latestReleaseLayouts(
  dir: string = RELEASE_LAYOUTS_DIR,
): { version: string; file: string; layouts: Record<string, StorageLayout> } | undefined {
  const latest = listReleaseLayouts(dir).at(-1);
  return latest && { ...latest, layouts: readReleaseLayouts(latest.file) };
}

/** The failures of a `checkRelease`, one paragraph each, for a test message or the console. */
export function formatReleaseCheck(results: Array<{ contract: string; ok: boolean; report: string }>): string {
  return results
    .filter((r) => !r.ok)
    .map((r) => `${r.contract}: incompatible storage layout\n${r.report.replace(/^/gm, '  ')}`)
    .join('\n\n');
}
