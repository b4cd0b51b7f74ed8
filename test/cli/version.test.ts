/**
 * The release where an operator looks for it (docs/upgrades.md "Versions and the database"):
 * `tokex --version` from the compiled CLI (dist/app, what `npx tokex` and `npm start` run) and from
 * the sources through tsx, and the first line of the start banner.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { bannerTitle } from '../../src/app/start-banner.ts';
import { APP_VERSION } from '../../src/config/build-info.ts';

const run = promisify(execFile);
const PACKAGE_VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
const env = { ...process.env, LOG_LEVEL: 'silent' };

describe('the release', () => {
  it("is package.json's version", () => {
    expect(APP_VERSION).toBe(PACKAGE_VERSION);
  });

  it('`tokex --version` and `-V` print it, from the compiled CLI', async () => {
    for (const flag of ['--version', '-V']) {
      const { stdout, stderr } = await run(process.execPath, ['bin/tokex.mjs', flag], { env });
      expect(stdout).toBe(`${PACKAGE_VERSION}\n`);
      expect(stderr).toBe('');
    }
  }, 120_000);

  it('`tokex --version` prints it from the sources through tsx', async () => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', '--version'], { env });
    expect(stdout).toBe(`${PACKAGE_VERSION}\n`);
  }, 60_000);

  it("the start banner's first line names it, after the `tokex <roles> running` scripts wait for", () => {
    expect(bannerTitle('all')).toBe(`tokex all running: tokex ${PACKAGE_VERSION} on Node.js ${process.version}`);
    expect(bannerTitle('marketdata,indexer')).toMatch(new RegExp(`^tokex marketdata,indexer running: tokex ${PACKAGE_VERSION.replace(/\./g, '\\.')} `));
  });
});
