/**
 * The upgradeable contracts of the current build (contracts/*.sol) against upgrades-core: each is
 * upgrade-safe, and their storage layouts are compatible with the latest release recorded in
 * contracts/layouts/ (docs/upgrades.md, "Storage layouts").
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { keccak256, type Hex } from 'viem';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildContracts } from '../../src/chain/contract-build.ts';
import {
  checkRelease,
  formatReleaseCheck,
  latestReleaseLayouts,
  loadBuildLayouts,
  releaseLayoutsOf,
  UPGRADEABLE_CONTRACTS,
  type BuildLayout,
} from '../../src/chain/storage-layout.ts';

const ARTIFACTS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'artifacts');

let build: Record<string, BuildLayout>;

beforeAll(() => {
  // A no-op when `npm test` has just built; otherwise the layouts would be those of stale sources.
  buildContracts();
  build = loadBuildLayouts();
});

describe('storage layouts of the build', () => {
  it('has every upgradeable contract upgrade-safe per upgrades-core', () => {
    const problems: string[] = [];
    for (const name of UPGRADEABLE_CONTRACTS) {
      const c = build[name];
      if (c === undefined) problems.push(`${name}: not in the build`);
      else if (!c.upgradeable) problems.push(`${name}: does not inherit Initializable, so it cannot sit behind a proxy`);
      else if (!c.upgradeSafe) problems.push(`${name}: not upgrade-safe\n${c.errors.join('\n')}`);
    }
    for (const [name, c] of Object.entries(build)) {
      if (c.upgradeable && !c.upgradeSafe && !(UPGRADEABLE_CONTRACTS as readonly string[]).includes(name)) {
        problems.push(`${name}: not upgrade-safe\n${c.errors.join('\n')}`);
      }
    }
    expect(problems, problems.join('\n\n')).toEqual([]);
  });

  it('keeps the storage layouts of the latest release in contracts/layouts/', () => {
    const latest = latestReleaseLayouts();
    expect(latest, 'no release layouts in contracts/layouts/: npx tsx scripts/write-release-layouts.ts <version>').toBeDefined();
    if (!latest) return;
    const results = checkRelease(latest.layouts, releaseLayoutsOf(build));
    const failed = results.filter((r) => !r.ok).map((r) => r.contract);
    expect(failed, `incompatible with release ${latest.version} (${path.basename(latest.file)}):\n\n${formatReleaseCheck(results)}`).toEqual([]);
    // Every contract the release recorded is still checked: none silently stopped being upgradeable.
    expect(results.map((r) => r.contract)).toEqual(expect.arrayContaining(Object.keys(latest.layouts)));
  });

  it('records each contract\'s codeHash as keccak256 of its runtime code, the same in every output', async () => {
    const { contractCodeHashes } = (await import('../../src/chain/abi/generated/index.ts')) as {
      contractCodeHashes: Record<string, Hex>;
    };
    expect(Object.keys(contractCodeHashes).sort()).toEqual(Object.keys(build).sort());
    for (const [name, c] of Object.entries(build)) {
      const artifact = JSON.parse(readFileSync(path.join(ARTIFACTS, `${name}.json`), 'utf8')) as { deployedBytecode: Hex; codeHash: Hex };
      const expected = keccak256(artifact.deployedBytecode);
      expect({ name, codeHash: artifact.codeHash }).toEqual({ name, codeHash: expected });
      expect({ name, codeHash: c.codeHash }).toEqual({ name, codeHash: expected });
      expect({ name, codeHash: contractCodeHashes[name] }).toEqual({ name, codeHash: expected });
    }
  });
});
