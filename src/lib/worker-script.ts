/**
 * Where a worker thread's script is, and how a worker reports an error by message: shared by every
 * worker the app starts (the projection's, the journal's writer, the signature recovery pool's).
 */

/** `true` in the bundle (scripts/build-app.mjs defines it); undeclared when run from the sources. */
declare const __TOKEX_BUNDLED__: boolean | undefined;

/**
 * The worker's script: in the bundle `bundledFile` in dist/app (every chunk is written there, so
 * beside this one; scripts/build-app.mjs lists the workers' entries), else `source` booted through
 * tsx (ts-worker-boot.mjs), as a worker does not take the parent's loader.
 */
export function workerScript(bundledFile: string, source: URL): { url: URL; argv: string[] } {
  // Not `import.meta.url`: the build rewrites that to the source file's location.
  const meta = import.meta;
  if (typeof __TOKEX_BUNDLED__ !== 'undefined' && __TOKEX_BUNDLED__) return { url: new URL(`./${bundledFile}`, meta.url), argv: [] };
  return { url: new URL('./ts-worker-boot.mjs', meta.url), argv: [source.href] };
}

/** An error as a worker posts it: name, message and a string code (a database error of these paths holds no secret). */
export function workerErrorFields(err: unknown): { name: string; message: string; code?: string } {
  const e = err as { name?: unknown; message?: unknown; code?: unknown };
  return { name: String(e?.name ?? 'Error'), message: String(e?.message ?? err), ...(typeof e?.code === 'string' ? { code: e.code } : {}) };
}
