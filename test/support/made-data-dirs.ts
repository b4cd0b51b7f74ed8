/**
 * Data directories a test helper made up for a stack (`startTestStack` without a `dataDir`). A
 * test may stop a stack and start another on the same directory, so the directory outlives its
 * stack; it is removed once the test file is done (test/support/remove-made-data-dirs.ts, a setup
 * file). A CI run left about 60 of them behind, 300 MB, before this.
 */
import fs from 'node:fs';

const made = new Set<string>();

export function noteMadeDataDir(dir: string): void {
  made.add(dir);
}

/** Removes every directory noted so far; one that cannot be removed is left (hygiene fails no test). */
export function removeMadeDataDirs(): void {
  for (const dir of made) {
    try {
      fs.rmSync(dir, { recursive: true, force: true });
    } catch {
      // Left behind: the next file's clean-up does not retry it.
    }
  }
  made.clear();
}
