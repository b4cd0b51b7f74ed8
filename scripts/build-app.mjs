/**
 * The compiled application: src/cli/main.ts bundled by esbuild into dist/app/ (gitignored), which
 * bin/tokex.mjs, `npm start` and every role process run. Loading TypeScript through tsx cost about
 * a second at every start (it transforms and resolves each of the ~300 modules at run time); plain
 * JavaScript loads in a fraction of that.
 *
 * `npm run build:app` (part of `npm install`'s prepare and of `npm test`) builds; bin/tokex.mjs calls
 * ensureAppBuild(), which rebuilds first when any source the last build read (or a contract) is
 * newer than that build, so an edited checkout never runs stale code. Plain JavaScript, not
 * TypeScript, so that it runs before anything is compiled and without tsx.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OUT_DIR = path.join(ROOT, 'dist', 'app');
const ENTRY = path.join(OUT_DIR, 'main.js');
const INFO = path.join(OUT_DIR, 'build-info.json');
const CONTRACTS_DIR = path.join(ROOT, 'contracts');
/** An output file the current build no longer lists is removed only once this old (see writeOutputs). */
const PRUNE_AFTER_MS = 10 * 60_000;

/**
 * Each `import.meta.url` (and `.dirname`, `.filename`) in src/ becomes the source file's own
 * location, so that paths the code builds from it (contract artifacts, the console's HTML, CSS and
 * browser sources, corporate-actions.json, createRequire) resolve exactly as they do from the
 * sources, whichever chunk the code lands in. (A worker thread's script has an entry point of its
 * own below: pointed at its .ts source, it would not run without tsx.)
 */
const sourceLocations = {
  name: 'source-locations',
  setup(build) {
    build.onLoad({ filter: /\.ts$/ }, async (args) => {
      const text = await fs.promises.readFile(args.path, 'utf8');
      if (!text.includes('import.meta')) return { contents: text, loader: 'ts' };
      const values = {
        url: pathToFileURL(args.path).href,
        dirname: path.dirname(args.path),
        filename: args.path,
      };
      return { contents: text.replace(/\bimport\.meta\.(url|dirname|filename)\b/g, (_, k) => JSON.stringify(values[k])), loader: 'ts' };
    });
  },
};

function listSolidity(dir, out = { files: [], dirs: [] }) {
  if (!fs.existsSync(dir)) return out;
  out.dirs.push(dir);
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) listSolidity(full, out);
    else if (entry.name.endsWith('.sol')) out.files.push(full);
  }
  return out;
}

/**
 * Whether dist/app holds a build of the current sources: every file it was built from (recorded
 * from esbuild's metafile), every contract and contract directory (a new .sol file changes its
 * directory) no newer than the build, and the checkout not moved (the bundle holds absolute paths).
 */
export function appBuildIsFresh() {
  let info;
  try {
    info = JSON.parse(fs.readFileSync(INFO, 'utf8'));
  } catch {
    return false;
  }
  if (info.root !== ROOT || !fs.existsSync(ENTRY)) return false;
  for (const rel of info.watched) {
    const stat = fs.statSync(path.join(ROOT, rel), { throwIfNoEntry: false });
    if (!stat || stat.mtimeMs > info.startedAt) return false;
  }
  return true;
}

/**
 * Writes each output through a temporary file and a rename, chunks before the entry and the entry
 * before build-info.json: a process starting (or lazily loading a chunk) while another rebuilds
 * never reads a half-written file, and two rebuilding at once write the same bytes. Chunk names
 * carry a content hash, so a chunk of an older build stays where the older entry expects it until
 * it is pruned, well after any process could still be loading it.
 */
function writeOutputs(files, info) {
  fs.mkdirSync(OUT_DIR, { recursive: true });
  const write = (file, contents) => {
    const tmp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, contents);
    fs.renameSync(tmp, file);
  };
  const entries = files.filter((f) => f.path === ENTRY || f.path === `${ENTRY}.map`);
  for (const f of files.filter((f) => !entries.includes(f))) write(f.path, f.contents);
  for (const f of entries) write(f.path, f.contents);
  write(INFO, `${JSON.stringify(info, null, 2)}\n`);
  const current = new Set([...files.map((f) => f.path), INFO]);
  for (const name of fs.readdirSync(OUT_DIR)) {
    const file = path.join(OUT_DIR, name);
    if (current.has(file)) continue;
    const stat = fs.statSync(file, { throwIfNoEntry: false });
    if (stat && Date.now() - stat.mtimeMs > PRUNE_AFTER_MS) fs.rmSync(file, { force: true });
  }
}

/**
 * Builds dist/app: the contracts first (their ABIs are generated TypeScript the bundle embeds; a
 * no-op when contracts/ is unchanged), then the bundle. Node modules stay external imports, and
 * code splitting keeps each subcommand's code (the stack, the trading client) out of what
 * `tokex --help` loads. Returns a one-line summary; `log` gets the contracts' when they compiled.
 */
export async function buildApp(log = (line) => process.stderr.write(`${line}\n`)) {
  const started = performance.now();
  const { build } = await import('esbuild');
  // The contract build is TypeScript too: bundled in memory and imported from a data: URL rather
  // than through tsx, whose loader would then stay in the way of every later import of this process.
  const tool = await build({
    absWorkingDir: ROOT,
    entryPoints: ['src/chain/contract-build.ts'],
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    write: false,
    logLevel: 'warning',
    plugins: [sourceLocations],
  });
  const { buildContracts } = await import(`data:text/javascript;base64,${Buffer.from(tool.outputFiles[0].contents).toString('base64')}`);
  // The build's time is taken before what it reads, so that a source saved meanwhile counts as newer;
  // and after any compilation, whose generated ABIs would count as newer themselves: so again until
  // the contracts are found up to date (a contract saved during a compilation is compiled again).
  let startedAt;
  for (let compiled = true; compiled; ) {
    startedAt = Date.now();
    const contracts = buildContracts();
    if (contracts.compiled) log(contracts.summary);
    compiled = contracts.compiled;
  }

  const result = await build({
    absWorkingDir: ROOT,
    // The worker threads (the perpetual projection's, the journal's writer, the signature recovery
    // pool's) have entries of their own: a worker runs a script file, and pointed at its .ts source it
    // would need tsx (projection-worker-client.ts, journal-writer.ts, signature-recovery-pool.ts).
    entryPoints: {
      main: 'src/cli/main.ts',
      'perp-projection-worker': 'src/perp/projection/projection-worker.ts',
      'perp-journal-worker': 'src/perp/sequencer/journal-writer-worker.ts',
      'signature-recovery-worker': 'src/chain/signature-recovery-worker.ts',
    },
    outdir: OUT_DIR,
    define: { __TOKEX_BUNDLED__: 'true' },
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    chunkNames: '[name]-[hash]',
    sourcemap: 'linked',
    // Error names come from constructors (AppError sets this.name = new.target.name), and the
    // bundle's renaming of clashing top-level names must not change them.
    keepNames: true,
    metafile: true,
    write: false,
    logLevel: 'warning',
    plugins: [sourceLocations],
  });
  const sol = listSolidity(CONTRACTS_DIR);
  const watched = [...Object.keys(result.metafile.inputs), ...sol.files, ...sol.dirs, fileURLToPath(import.meta.url)].map((p) =>
    path.relative(ROOT, path.resolve(ROOT, p)),
  );
  writeOutputs(result.outputFiles, { root: ROOT, startedAt, watched });
  const ms = Math.round(performance.now() - started);
  const bytes = result.outputFiles.filter((f) => f.path.endsWith('.js')).reduce((n, f) => n + f.contents.length, 0);
  return `build:app: ${Object.keys(result.metafile.inputs).length} sources into ${path.relative(ROOT, OUT_DIR)} (${Math.round(bytes / 1024)} KiB) in ${ms} ms`;
}

/**
 * The file URL of the current build's entry, rebuilding first when it is missing or stale. A tree
 * the process may not write (a read-only install) runs the build it has, with a warning.
 */
export async function ensureAppBuild() {
  if (!appBuildIsFresh()) {
    // Said on a terminal only: a script or a test reading stderr sees the command's own output.
    const say = (line) => process.stderr.isTTY && process.stderr.write(`${line}\n`);
    try {
      say(`tokex: ${fs.existsSync(ENTRY) ? 'sources changed since the last build' : 'no build yet'}, building dist/app`);
      say(await buildApp(say));
    } catch (err) {
      const readOnly = ['EACCES', 'EPERM', 'EROFS'].includes(err?.code);
      if (!readOnly || !fs.existsSync(ENTRY)) throw err;
      process.stderr.write(`tokex: warning: cannot rebuild dist/app (${err.code}); running the existing build\n`);
    }
  }
  return pathToFileURL(ENTRY).href;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    process.stdout.write(`${await buildApp()}\n`);
  } catch (err) {
    // esbuild has printed its errors with their locations already.
    if (!err?.errors) process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  }
}
