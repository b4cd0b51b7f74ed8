/**
 * The console's script: src/console/browser/ bundled by esbuild in memory at the first request and
 * kept, so a clean clone needs nothing but `npm install` (viem's signer is bundled from
 * node_modules; nothing is fetched at run time).
 */
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

/** The trading page's script and the operator page's. */
const ENTRIES = {
  console: fileURLToPath(new URL('./browser/console-app.ts', import.meta.url)),
  ops: fileURLToPath(new URL('./browser/ops-app.ts', import.meta.url)),
} as const;
export type ConsoleEntry = keyof typeof ENTRIES;

const cache = new Map<ConsoleEntry, Promise<string>>();

/**
 * One page's script, lightweight-charts included for the trading page (from node_modules, like viem):
 * nothing is fetched from a CDN, at build time or at run time.
 */
export function consoleBundle(entry: ConsoleEntry = 'console'): Promise<string> {
  let cached = cache.get(entry);
  cached ??= build({
    entryPoints: [ENTRIES[entry]],
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
      cache.delete(entry);
      throw err;
    },
  );
  cache.set(entry, cached);
  return cached;
}
