/**
 * The console's script: src/console/browser/ bundled by esbuild in memory at the first request and
 * kept, so a clean clone needs nothing but `npm install` (viem's signer is bundled from
 * node_modules; nothing is fetched at run time).
 */
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ENTRY = fileURLToPath(new URL('./browser/console-app.ts', import.meta.url));

let cached: Promise<string> | undefined;

export function consoleBundle(): Promise<string> {
  cached ??= build({
    entryPoints: [ENTRY],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    write: false,
    logLevel: 'silent',
    legalComments: 'none',
  }).then(
    (out) => out.outputFiles[0].text,
    (err: unknown) => {
      // A failed build is tried again on the next request rather than cached.
      cached = undefined;
      throw err;
    },
  );
  return cached;
}
