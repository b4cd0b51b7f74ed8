import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../errors/app-error.ts';
import { APP_VERSION, compareVersions, isVersion } from './build-info.ts';

describe('APP_VERSION', () => {
  it("is package.json's version", () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(APP_VERSION).toBe(pkg.version);
    expect(isVersion(APP_VERSION)).toBe(true);
    // The first release with upgradeable contracts; everything before it counts as 0.1.0.
    expect(compareVersions(APP_VERSION, '0.2.0')).toBeGreaterThanOrEqual(0);
  });
});

describe('compareVersions', () => {
  it('orders by major, minor and patch, numerically', () => {
    expect(compareVersions('0.2.0', '0.2.0')).toBe(0);
    expect(compareVersions('0.1.0', '0.2.0')).toBe(-1);
    expect(compareVersions('0.3.0', '0.2.0')).toBe(1);
    expect(compareVersions('0.10.0', '0.9.0')).toBe(1);
    expect(compareVersions('1.0.0', '0.99.99')).toBe(1);
    expect(compareVersions('0.2.10', '0.2.9')).toBe(1);
    expect(compareVersions('2.0.0', '10.0.0')).toBe(-1);
  });

  it('puts a prerelease below its release and orders prereleases by their identifiers', () => {
    // The chain of SemVer 2.0.0 §11's example, each lower than the next.
    const chain = ['1.0.0-alpha', '1.0.0-alpha.1', '1.0.0-alpha.beta', '1.0.0-beta', '1.0.0-beta.2', '1.0.0-beta.11', '1.0.0-rc.1', '1.0.0'];
    for (let i = 0; i < chain.length; i++) {
      for (let j = 0; j < chain.length; j++) expect(compareVersions(chain[i], chain[j]), `${chain[i]} vs ${chain[j]}`).toBe(Math.sign(i - j));
    }
    expect(compareVersions('0.3.0-rc.1', '0.2.0')).toBe(1);
    expect(compareVersions('0.2.0-rc.1', '0.2.0')).toBe(-1);
  });

  it('ignores build metadata', () => {
    expect(compareVersions('0.2.0+abc.1', '0.2.0')).toBe(0);
    expect(compareVersions('0.2.0-rc.1+x', '0.2.0-rc.1+y')).toBe(0);
  });

  it('refuses what is not a semantic version, naming it', () => {
    for (const bad of ['', '1', '1.2', 'v1.2.3', '1.2.3.4', '01.2.3', '1.2.3-', '1.2.3-01', 'latest', ' 1.2.3']) {
      expect(isVersion(bad), bad).toBe(false);
      expect(() => compareVersions(bad, '1.0.0')).toThrow(ValidationError);
      expect(() => compareVersions('1.0.0', bad)).toThrow(`version: ${JSON.stringify(bad)} is not a semantic version`);
    }
  });
});
