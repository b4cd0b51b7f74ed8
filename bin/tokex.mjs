#!/usr/bin/env node
// Runs the compiled CLI in dist/app/ (scripts/build-app.mjs; `npm install` builds it), rebuilding it
// first when a source is newer than the build, so `npx tokex ...` after an edit runs the edit.
// Compiled JavaScript rather than the TypeScript through tsx: no transform of every module at start.
import { ensureAppBuild } from '../scripts/build-app.mjs';

// Stack traces name the TypeScript sources (src/…/x.ts:line) rather than the bundle's chunks; it
// costs about 3 % of a stack's start-up (the maps are read as the chunks load).
process.setSourceMapsEnabled(true);

try {
  await import(await ensureAppBuild());
} catch (err) {
  // A failed build (esbuild has printed where) or a missing dependency: a message, not a stack.
  if (!err?.errors) process.stderr.write(`tokex: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
}
