/**
 * Installs an earlier commit of this repository in its cached worktree (.cache/releases/<commit>),
 * as the upgrade test does (test/support/earlier-release.ts): `.ci/run` starts it in the background
 * right after `npm install`, so that the install overlaps the smoke test and the typecheck instead
 * of the test suite. Usage: npx tsx scripts/install-earlier-release.ts <commit>
 */
import { installEarlierRelease } from '../test/support/earlier-release.ts';

const commit = process.argv[2];
if (!commit) {
  process.stderr.write('usage: tsx scripts/install-earlier-release.ts <commit>\n');
  process.exit(2);
}
const started = Date.now();
const release = await installEarlierRelease(commit, { log: (line) => process.stdout.write(`earlier release: ${line}\n`) });
process.stdout.write(`earlier release ${commit}: ready in ${release.dir} (${Math.round((Date.now() - started) / 1000)} s)\n`);
