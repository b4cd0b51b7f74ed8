/**
 * Compiles every Solidity source under contracts/ with the npm `solc` compiler and writes
 *   artifacts/<Name>.json                            {abi, bytecode, deployedBytecode}
 *   src/chain/abi/generated/<kebab-name>-abi.ts      `as const` ABI + bytecode for viem
 *   src/chain/abi/generated/index.ts                 re-exports
 * for every deployable contract (one with bytecode) defined in contracts/*.sol.
 *
 * `scripts/build-contracts.ts` (npm's `prepare` and `build:contracts`) and `tokex start` call it.
 * The build is skipped when a hash of the sources, the settings and the compiler and
 * OpenZeppelin versions matches the last build and its outputs are all present.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { AppError } from '../errors/app-error.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const CONTRACTS_DIR = path.join(ROOT, 'contracts');
const ARTIFACTS_DIR = path.join(ROOT, 'artifacts');
const GENERATED_DIR = path.join(ROOT, 'src', 'chain', 'abi', 'generated');
const BUILD_INFO = path.join(ARTIFACTS_DIR, 'build-info.json');
const MAX_CODE_SIZE = 24_576;

const require = createRequire(import.meta.url);

const SETTINGS = {
  optimizer: { enabled: true, runs: 200 },
  evmVersion: 'cancun',
  viaIR: false,
} as const;

interface SolcError {
  severity: 'error' | 'warning' | 'info';
  formattedMessage?: string;
  message: string;
}

interface SolcContractOutput {
  abi: unknown[];
  evm: { bytecode: { object: string }; deployedBytecode: { object: string } };
}

interface SolcOutput {
  errors?: SolcError[];
  contracts?: Record<string, Record<string, SolcContractOutput>>;
}

interface BuildInfo {
  hash: string;
  solcVersion: string;
  contracts: string[];
}

function listSolidity(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir).sort()) {
    const full = path.join(dir, entry);
    if (statSync(full).isDirectory()) out.push(...listSolidity(full));
    else if (entry.endsWith('.sol')) out.push(full);
  }
  return out;
}

function packageVersion(name: string): string {
  const pkg = JSON.parse(readFileSync(require.resolve(`${name}/package.json`), 'utf8')) as { version: string };
  return pkg.version;
}

function kebab(name: string): string {
  return name.replace(/([a-z0-9])([A-Z])/g, '$1-$2').replace(/([A-Z])([A-Z][a-z])/g, '$1-$2').toLowerCase();
}

function camel(name: string): string {
  return name.charAt(0).toLowerCase() + name.slice(1);
}

/** Source unit name (as solc sees it) → file contents; contracts/ paths are relative to the repo root. */
function readSources(): Record<string, { content: string }> {
  const sources: Record<string, { content: string }> = {};
  for (const file of listSolidity(CONTRACTS_DIR)) {
    const unit = path.relative(ROOT, file).split(path.sep).join('/');
    sources[unit] = { content: readFileSync(file, 'utf8') };
  }
  return sources;
}

function findImport(importPath: string): { contents: string } | { error: string } {
  try {
    if (importPath.startsWith('@')) return { contents: readFileSync(require.resolve(importPath), 'utf8') };
    const local = path.join(ROOT, importPath);
    if (local.startsWith(ROOT + path.sep) && existsSync(local)) return { contents: readFileSync(local, 'utf8') };
  } catch {
    // fall through to the error below
  }
  return { error: `import not found: ${importPath}` };
}

function outputsPresent(info: BuildInfo): boolean {
  if (!existsSync(path.join(GENERATED_DIR, 'index.ts'))) return false;
  return info.contracts.every(
    (name) =>
      existsSync(path.join(ARTIFACTS_DIR, `${name}.json`)) &&
      existsSync(path.join(GENERATED_DIR, `${kebab(name)}-abi.ts`)),
  );
}

export interface ContractBuildResult {
  /** False when the previous build matched and nothing was written. */
  compiled: boolean;
  contracts: string[];
  /** One line for the console. */
  summary: string;
  warnings: string[];
}

/**
 * Compiles when the sources, settings or compiler changed (or an output is missing), otherwise
 * answers at once: `npm start` calls it on every start so a fresh clone or an edited contract never
 * meets stale or missing ABIs. Throws an AppError naming the problem when compilation fails.
 */
export function buildContracts(): ContractBuildResult {
  const started = performance.now();
  const sources = readSources();
  const solcVersion = packageVersion('solc');
  const hash = createHash('sha256')
    .update(JSON.stringify({ sources, SETTINGS, solcVersion, oz: packageVersion('@openzeppelin/contracts') }))
    .digest('hex');

  if (existsSync(BUILD_INFO)) {
    const previous = JSON.parse(readFileSync(BUILD_INFO, 'utf8')) as BuildInfo;
    if (previous.hash === hash && outputsPresent(previous)) {
      const ms = Math.round(performance.now() - started);
      return {
        compiled: false,
        contracts: previous.contracts,
        summary: `build:contracts: up to date (${previous.contracts.length} contracts, solc ${solcVersion}, ${ms} ms)`,
        warnings: [],
      };
    }
  }

  // Loading the compiler costs about a second, so only when there is something to compile.
  const solc = require('solc') as { compile(input: string, callbacks: { import: typeof findImport }): string };
  const ownUnits = Object.keys(sources);
  const input = {
    language: 'Solidity',
    sources,
    settings: {
      ...SETTINGS,
      outputSelection: Object.fromEntries(
        ownUnits.map((unit) => [unit, { '*': ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object'] }]),
      ),
    },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input), { import: findImport })) as SolcOutput;

  const diagnostics = output.errors ?? [];
  const warnings = diagnostics.filter((e) => e.severity === 'warning').map((d) => d.formattedMessage ?? d.message);
  const errors = diagnostics.filter((e) => e.severity === 'error');
  if (errors.length > 0) {
    const text = errors.map((e) => e.formattedMessage ?? e.message).join('\n');
    throw new AppError('INTERNAL', `build:contracts: compilation failed with ${errors.length} error(s)\n${text}`);
  }

  // Deployable = has bytecode and is defined in a top-level contracts/*.sol file.
  const deployable: Array<{ name: string; abi: unknown[]; bytecode: string; deployedBytecode: string }> = [];
  for (const [unit, contracts] of Object.entries(output.contracts ?? {})) {
    if (!/^contracts\/[^/]+\.sol$/.test(unit)) continue;
    for (const [name, c] of Object.entries(contracts)) {
      if (!c.evm.bytecode.object) continue;
      deployable.push({
        name,
        abi: c.abi,
        bytecode: `0x${c.evm.bytecode.object}`,
        deployedBytecode: `0x${c.evm.deployedBytecode.object}`,
      });
    }
  }
  deployable.sort((a, b) => a.name.localeCompare(b.name));

  const tooLarge = deployable.filter((c) => (c.deployedBytecode.length - 2) / 2 > MAX_CODE_SIZE);
  if (tooLarge.length > 0) {
    const text = tooLarge.map((c) => `${c.name}: runtime code is ${(c.deployedBytecode.length - 2) / 2} bytes, over ${MAX_CODE_SIZE}`);
    throw new AppError('INTERNAL', `build:contracts: ${text.join('; ')}`);
  }

  mkdirSync(ARTIFACTS_DIR, { recursive: true });
  rmSync(GENERATED_DIR, { recursive: true, force: true });
  mkdirSync(GENERATED_DIR, { recursive: true });
  const indexLines = ['// Generated by scripts/build-contracts.ts. Do not edit.'];
  for (const c of deployable) {
    writeFileSync(
      path.join(ARTIFACTS_DIR, `${c.name}.json`),
      `${JSON.stringify({ abi: c.abi, bytecode: c.bytecode, deployedBytecode: c.deployedBytecode }, null, 2)}\n`,
    );
    const id = camel(c.name);
    const file = `${kebab(c.name)}-abi.ts`;
    writeFileSync(
      path.join(GENERATED_DIR, file),
      [
        `// Generated by scripts/build-contracts.ts from contracts/${c.name}.sol. Do not edit.`,
        `export const ${id}Abi = ${JSON.stringify(c.abi, null, 2)} as const;`,
        '',
        `export const ${id}Bytecode = '${c.bytecode}' as const;`,
        '',
      ].join('\n'),
    );
    indexLines.push(`export * from './${file}';`);
  }
  writeFileSync(path.join(GENERATED_DIR, 'index.ts'), `${indexLines.join('\n')}\n`);

  const info: BuildInfo = { hash, solcVersion, contracts: deployable.map((c) => c.name) };
  writeFileSync(BUILD_INFO, `${JSON.stringify(info, null, 2)}\n`);

  const ms = Math.round(performance.now() - started);
  const sizes = deployable.map((c) => `${c.name} ${(c.deployedBytecode.length - 2) / 2} B`).join(', ');
  return {
    compiled: true,
    contracts: info.contracts,
    summary: `build:contracts: compiled ${ownUnits.length} sources with solc ${solcVersion} in ${ms} ms: ${sizes}`,
    warnings,
  };
}
