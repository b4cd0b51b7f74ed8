/**
 * The storage-layout check before an upgrade (docs/upgrades.md), as OpenZeppelin's upgrade plugins
 * do it: the layout of the implementation a proxy runs now is kept beside the deployment record
 * (`<chainId>.layouts.json`, by code hash, written when that code was deployed or first seen by a
 * build that compiled it), and a new implementation whose layout is incompatible is refused before
 * anything is sent, naming the variable.
 */
import { readFileSync, writeFileSync, renameSync, existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Hex } from 'viem';
import { compareVersions } from '../config/build-info.ts';
import { AppError } from '../errors/app-error.ts';
import type { DeploymentRecord } from './deployment-file.ts';
import { compareLayouts, loadBuildLayouts } from './storage-layout.ts';
import type { UpgradeStep } from './venue-upgrade.ts';

type Layout = ReturnType<typeof loadBuildLayouts>[string]['layout'];

interface LayoutManifest {
  [codeHash: string]: { contract: string; layout: Layout };
}

const RELEASE_LAYOUTS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'contracts', 'layouts');

export function layoutManifestPath(recordFile: string): string {
  return recordFile.replace(/\.json$/, '') + '.layouts.json';
}

function readManifest(file: string): LayoutManifest {
  if (!existsSync(file)) return {};
  return JSON.parse(readFileSync(file, 'utf8')) as LayoutManifest;
}

function writeManifest(file: string, manifest: LayoutManifest): void {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(manifest)}\n`);
  renameSync(tmp, file);
}

/**
 * Notes the layout of every deployed contract whose code is this build's (a deployment just made, or
 * one this build already runs), so that the next release can check its upgrade against it.
 */
export function recordDeployedLayouts(record: DeploymentRecord, recordFile: string): void {
  const build = loadBuildLayouts();
  const file = layoutManifestPath(recordFile);
  const manifest = readManifest(file);
  let changed = false;
  for (const section of Object.values(record.venues)) {
    for (const entry of Object.values(section.code ?? {})) {
      if (manifest[entry.codeHash]) continue;
      const built = build[entry.contract];
      if (!built || built.codeHash !== entry.codeHash) continue;
      manifest[entry.codeHash] = { contract: entry.contract, layout: built.layout };
      changed = true;
    }
  }
  if (changed) writeManifest(file, manifest);
}

/** The layout a released version shipped for `contract` (contracts/layouts/<release>.json). */
function releasedLayout(contract: string, codeHash: Hex): Layout | undefined {
  if (!existsSync(RELEASE_LAYOUTS)) return undefined;
  const releases = readdirSync(RELEASE_LAYOUTS)
    .filter((f) => /^\d+\.\d+\.\d+.*\.json$/.test(f))
    .map((f) => f.replace(/\.json$/, ''))
    .sort(compareVersions)
    .reverse();
  for (const release of releases) {
    const file = JSON.parse(readFileSync(path.join(RELEASE_LAYOUTS, `${release}.json`), 'utf8')) as Record<string, Layout & { codeHash?: Hex }>;
    const entry = file[contract];
    if (entry && (entry.codeHash === undefined || entry.codeHash === codeHash)) return entry;
  }
  return undefined;
}

/** Throws naming the incompatible variable; notes the new layout when compatible. */
export function checkUpgradeLayout(step: UpgradeStep, recordFile: string): void {
  if (step.kind !== 'implementation') return;
  const build = loadBuildLayouts()[step.contract];
  if (!build) throw new AppError('INTERNAL', `upgrade: this build has no storage layout for ${step.contract}`);
  if (!build.upgradeSafe) {
    throw new AppError('INTERNAL', `upgrade: ${step.contract} of this build is not upgrade-safe: ${build.errors.join('; ')}`);
  }
  const file = layoutManifestPath(recordFile);
  const manifest = readManifest(file);
  const previous = manifest[step.fromCodeHash]?.layout ?? releasedLayout(step.contract, step.fromCodeHash);
  if (!previous) {
    throw new AppError('INTERNAL', `upgrade: the storage layout of the ${step.contract} deployed at ${step.address} (code ${step.fromCodeHash.slice(0, 10)}) is unknown, so the upgrade cannot be checked; it is refused`);
  }
  const { ok, report } = compareLayouts(previous, build.layout);
  if (!ok) {
    throw new AppError('INTERNAL', `upgrade: ${step.contract}'s storage layout is incompatible with the deployed one at ${step.address}:\n${report}`);
  }
  if (!manifest[step.toCodeHash]) {
    manifest[step.toCodeHash] = { contract: step.contract, layout: build.layout };
    writeManifest(file, manifest);
  }
}
