import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { compareVersions, latestReleaseLayouts, listReleaseLayouts } from './storage-layout.ts';

describe('release layout files', () => {
  it('orders versions semantically, prereleases before their release', () => {
    const versions = ['0.10.0', '1.0.0', '0.2.0', '1.0.0-rc.2', '0.9.1', '1.0.0-rc.10', '1.0.0-beta'];
    expect([...versions].sort(compareVersions)).toEqual(['0.2.0', '0.9.1', '0.10.0', '1.0.0-beta', '1.0.0-rc.2', '1.0.0-rc.10', '1.0.0']);
    expect(() => compareVersions('1.0', '1.0.0')).toThrow('"1.0" is not a semantic version');
  });

  it('takes the latest by version, not by name, and ignores other files', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'layouts-'));
    try {
      for (const [file, body] of [
        ['0.9.0.json', { A: 9 }],
        ['0.10.0.json', { A: 10 }],
        ['0.10.0-rc.1.json', { A: 100 }],
        ['notes.json', {}],
        ['README.md', ''],
      ] as const) {
        writeFileSync(path.join(dir, file), JSON.stringify(body));
      }
      expect(listReleaseLayouts(dir).map((r) => r.version)).toEqual(['0.9.0', '0.10.0-rc.1', '0.10.0']);
      const latest = latestReleaseLayouts(dir);
      expect(latest?.version).toBe('0.10.0');
      expect(latest?.layouts).toEqual({ A: 10 });
      expect(latestReleaseLayouts(path.join(dir, 'none'))).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
