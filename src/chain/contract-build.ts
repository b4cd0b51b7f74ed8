/**
 * Compiles every Solidity source under contracts/ with the npm `solc` compiler and writes
 *   artifacts/<Name>.json                            {abi, bytecode, deployedBytecode, codeHash}
 *   artifacts/storage-layouts.json                   upgrades-core's layout and verdict per contract
 *   src/chain/abi/generated/<kebab-name>-abi.ts      `as const` ABI + bytecode for viem
 *   src/chain/abi/generated/index.ts                 re-exports, and `contractCodeHashes`
 * for every deployable contract (one with bytecode) defined in contracts/*.sol.
 *
 * The storage layouts and the upgrade-safety verdicts come from `@openzeppelin/upgrades-core`, run
 * the way OpenZeppelin's upgrade plugins run it: the compiler's storage layout and AST of every
 * source, a second compilation of the sources rewritten by `makeNamespacedInput` (for the slots of
 * ERC-7201 namespaces), then `validate`, `getStorageLayout` and `getErrors` (UUPS kind).
 * `src/chain/storage-layout.ts` reads them; docs/upgrades.md ("Storage layouts") explains the check.
 *
 * `scripts/build-contracts.ts` (npm's `prepare` and `build:contracts`) and `tokex start` call it.
 * The build is skipped when a hash of the sources, the settings and the compiler, OpenZeppelin and
 * upgrades-core versions matches the last build and its outputs are all present.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SolcInput, SolcOutput as CoreSolcOutput, StorageLayout } from '@openzeppelin/upgrades-core';
import { AppError } from '../errors/app-error.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const CONTRACTS_DIR = path.join(ROOT, 'contracts');
const ARTIFACTS_DIR = path.join(ROOT, 'artifacts');
const GENERATED_DIR = path.join(ROOT, 'src', 'chain', 'abi', 'generated');
const BUILD_INFO = path.join(ARTIFACTS_DIR, 'build-info.json');
/** Read by `loadBuildLayouts` (src/chain/storage-layout.ts). */
export const STORAGE_LAYOUTS_FILE = path.join(ARTIFACTS_DIR, 'storage-layouts.json');
const MAX_CODE_SIZE = 24_576;
/** Bumped when this file writes different outputs from the same sources, so old builds are redone. */
const OUTPUT_FORMAT = 2;

const require = createRequire(import.meta.url);

const SETTINGS = {
  optimizer: { enabled: true, runs: 200 },
  evmVersion: 'cancun',
  viaIR: false,
  // The CBOR trailer keeps the compiler version but no hash of the metadata, so an edit to a comment
  // leaves the bytecode, and the codeHash a deployment record is compared with, as it was.
  metadata: { bytecodeHash: 'none' },
} as const;

// Every contract of every source, OpenZeppelin's included: upgrades-core's `validate` walks the AST of
// each source and the inheritance of each contract, keys a contract by its bytecode (with link
// references), and unfolds a layout from the compiler's storage layout of every base contract.
const OUTPUT_SELECTION = {
  '*': {
    '*': [
      'abi',
      'evm.bytecode.object',
      'evm.bytecode.linkReferences',
      'evm.deployedBytecode.object',
      'evm.deployedBytecode.linkReferences',
      'evm.deployedBytecode.immutableReferences',
      'evm.methodIdentifiers',
      'storageLayout',
    ],
    '': ['ast'],
  },
};

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
  sources?: Record<string, { id: number; ast: unknown }>;
}

interface Solc {
  compile(input: string, callbacks?: { import: (p: string) => { contents: string } | { error: string } }): string;
}

interface BuildInfo {
  hash: string;
  solcVersion: string;
  contracts: string[];
}

/** What upgrades-core says about one contract of a build (an entry of artifacts/storage-layouts.json). */
export interface ContractUpgradeInfo {
  /** Source unit (repo-relative path) that defines it. */
  source: string;
  /** Inherits OpenZeppelin's `Initializable`: meant to sit behind a proxy. */
  upgradeable: boolean;
  /** upgrades-core's `getErrors` (UUPS kind) found nothing: what `assertUpgradeSafe` accepts. */
  upgradeSafe: boolean;
  /** upgrades-core's explanation of each error, e.g. "contracts/X.sol:12: Variable `cap` is immutable ...". */
  errors: string[];
  /** Findings upgrades-core reports as warnings only (e.g. parent initializers called out of order). */
  warnings: string[];
  /** keccak256 of the runtime bytecode as compiled (immutables are zero there). */
  codeHash: `0x${string}`;
  /** upgrades-core's `StorageLayout` (own and inherited variables, ERC-7201 namespaces, types). */
  layout: StorageLayout;
}

/** Shape of artifacts/storage-layouts.json. */
export interface StorageLayoutsFile {
  solcVersion: string;
  upgradesCoreVersion: string;
  contracts: Record<string, ContractUpgradeInfo>;
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

function unitName(file: string): string {
  return path.relative(ROOT, file).split(path.sep).join('/');
}

/** Source unit name (as solc sees it) → file contents; contracts/ paths are relative to the repo root. */
function readSources(): Record<string, { content: string }> {
  const sources: Record<string, { content: string }> = {};
  for (const file of listSolidity(CONTRACTS_DIR)) sources[unitName(file)] = { content: readFileSync(file, 'utf8') };
  return sources;
}

function readImport(importPath: string): string | undefined {
  try {
    if (importPath.startsWith('@')) return readFileSync(require.resolve(importPath), 'utf8');
    const local = path.join(ROOT, importPath);
    if (local.startsWith(ROOT + path.sep) && existsSync(local)) return readFileSync(local, 'utf8');
  } catch {
    // reported by the caller
  }
  return undefined;
}

function outputsPresent(info: BuildInfo): boolean {
  if (!existsSync(path.join(GENERATED_DIR, 'index.ts')) || !existsSync(STORAGE_LAYOUTS_FILE)) return false;
  return info.contracts.every(
    (name) =>
      existsSync(path.join(ARTIFACTS_DIR, `${name}.json`)) &&
      existsSync(path.join(GENERATED_DIR, `${kebab(name)}-abi.ts`)),
  );
}

function loadSolc(): Solc {
  // Loading the compiler costs about a second, so only when there is something to compile.
  return require('solc') as Solc;
}

function errorText(diagnostics: SolcError[]): string {
  return diagnostics.map((e) => e.formattedMessage ?? e.message).join('\n');
}

interface Compilation {
  /** The standard-JSON input with every source the compiler read, imports included. */
  input: SolcInput & { language: string; settings: Record<string, unknown> };
  output: SolcOutput;
  warnings: string[];
}

/** Compiles with the build's settings; imports come from node_modules or the repo. */
function compile(solc: Solc, sources: Record<string, { content: string }>): Compilation {
  const imported: Record<string, { content: string }> = {};
  const findImport = (importPath: string): { contents: string } | { error: string } => {
    const contents = readImport(importPath);
    if (contents === undefined) return { error: `import not found: ${importPath}` };
    imported[importPath] = { content: contents };
    return { contents };
  };
  const input = { language: 'Solidity', sources, settings: { ...SETTINGS, outputSelection: OUTPUT_SELECTION } };
  const output = JSON.parse(solc.compile(JSON.stringify(input), { import: findImport })) as SolcOutput;
  const diagnostics = output.errors ?? [];
  const errors = diagnostics.filter((e) => e.severity === 'error');
  if (errors.length > 0) {
    throw new AppError('INTERNAL', `build:contracts: compilation failed with ${errors.length} error(s)\n${errorText(errors)}`);
  }
  return {
    // upgrades-core decodes source locations of OpenZeppelin's files too, and rewrites them for the
    // namespaced compilation: it needs them all in the input, as a Hardhat build-info has them.
    input: { ...input, sources: { ...sources, ...imported } },
    output,
    warnings: diagnostics.filter((e) => e.severity === 'warning').map((d) => d.formattedMessage ?? d.message),
  };
}

const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');

/**
 * upgrades-core prints its warnings with console.error; collect them instead, so the build lists
 * them with the compiler's and a test's output stays clean.
 */
function collectingWarnings<T>(sink: string[], fn: () => T): T {
  const original = console.error;
  console.error = (...args: unknown[]) => {
    sink.push(args.map(String).join(' ').replace(ANSI, '').trim());
  };
  try {
    return fn();
  } finally {
    console.error = original;
  }
}

/**
 * upgrades-core's verdict and layout for the named contracts (`unit:Name`) of a compilation, as the
 * OpenZeppelin upgrade plugins compute them.
 */
function analyze(
  solc: Solc,
  compilation: Compilation,
  wanted: Array<{ unit: string; name: string }>,
): { contracts: Record<string, ContractUpgradeInfo>; warnings: string[] } {
  const core = require('@openzeppelin/upgrades-core') as typeof import('@openzeppelin/upgrades-core');
  const solcVersion = packageVersion('solc');
  const { input } = compilation;
  const output = compilation.output as unknown as CoreSolcOutput;

  // Structs annotated `@custom:storage-location erc7201:...` (OpenZeppelin's upgradeable contracts keep
  // all their state in them) only get slots and sizes when the compiler lays out a variable of their
  // type: makeNamespacedInput adds one per struct and strips everything else. (The plugins then strip
  // NatSpec with `trySanitizeNatSpec`, whose Slang parser stops at solc 0.8.28 and returns 0.8.30
  // sources unchanged; skipping it is what they do here, and keeps this synchronous.)
  let namespacedOutput: CoreSolcOutput | undefined;
  if (core.isNamespaceSupported(solcVersion)) {
    const namespacedInput = core.makeNamespacedInput(input, output, solcVersion);
    const result = JSON.parse(solc.compile(JSON.stringify(namespacedInput))) as SolcOutput;
    const errors = (result.errors ?? []).filter((e) => e.severity === 'error');
    if (errors.length > 0) {
      throw new AppError(
        'INTERNAL',
        `build:contracts: the namespaced compilation for the storage-layout check (upgrades-core makeNamespacedInput) failed\n${errorText(errors)}`,
      );
    }
    namespacedOutput = result as unknown as CoreSolcOutput;
  }

  const result: Record<string, ContractUpgradeInfo> = {};
  // About the compilation as a whole (e.g. a namespace struct declared in a library).
  const sharedWarnings: string[] = [];
  const decodeSrc = core.solcInputOutputDecoder(input, output);
  const runData = collectingWarnings(sharedWarnings, () =>
    core.validate(output, decodeSrc, solcVersion, input, namespacedOutput),
  );
  const data = core.concatRunData(runData);
  for (const { unit, name } of wanted) {
    const key = `${unit}:${name}`;
    const validation = runData[key];
    if (validation?.version === undefined) throw new AppError('INTERNAL', `build:contracts: upgrades-core did not validate ${key}`);
    const version = validation.version;
    // upgrades-core finds a contract by the hash of its creation code: two contracts compiling to the
    // same code would be answered for the first one.
    const [found] = core.getContractNameAndRunValidation(data, version);
    if (found !== key) throw new AppError('INTERNAL', `build:contracts: ${key} compiles to the same bytecode as ${found}`);
    const warnings: string[] = [];
    const errors = collectingWarnings(warnings, () => core.getErrors(data, version, { kind: 'uups' }));
    const layout = collectingWarnings(warnings, () => core.getStorageLayout(data, version));
    const deployed = compilation.output.contracts?.[unit]?.[name]?.evm.deployedBytecode.object ?? '';
    result[key] = {
      source: unit,
      upgradeable: core.inferInitializable(validation),
      upgradeSafe: errors.length === 0,
      errors: errors.map((e) => new core.UpgradeableContractErrorReport([e]).explain(false)),
      warnings,
      // hashBytecode is keccak256 of the bytes (ethereumjs-util), without loading viem for one call.
      codeHash: `0x${core.hashBytecode(deployed)}`,
      layout,
    };
  }
  return { contracts: result, warnings: sharedWarnings };
}

/**
 * Compiles the given Solidity sources (source unit name, as a path relative to the repo root, e.g.
 * of a test fixture → its text; the unit need not exist as a file, so a test can compile variants it
 * makes of one fixture) with the build's settings and returns upgrades-core's verdict and layout for
 * every deployable contract they define, keyed `unit:Name`. Writes nothing; the storage-layout tests
 * use it.
 */
export function analyzeSoliditySources(texts: Record<string, string>): Record<string, ContractUpgradeInfo> {
  const sources: Record<string, { content: string }> = {};
  for (const [unit, content] of Object.entries(texts)) sources[unitName(path.resolve(ROOT, unit))] = { content };
  const solc = loadSolc();
  const compilation = compile(solc, sources);
  const wanted: Array<{ unit: string; name: string }> = [];
  for (const unit of Object.keys(sources)) {
    for (const [name, c] of Object.entries(compilation.output.contracts?.[unit] ?? {})) {
      if (c.evm.bytecode.object) wanted.push({ unit, name });
    }
  }
  return analyze(solc, compilation, wanted).contracts;
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
  const upgradesCoreVersion = packageVersion('@openzeppelin/upgrades-core');
  const hash = createHash('sha256')
    .update(
      JSON.stringify({
        sources,
        SETTINGS,
        OUTPUT_SELECTION,
        OUTPUT_FORMAT,
        solcVersion,
        oz: packageVersion('@openzeppelin/contracts'),
        ozUpgradeable: packageVersion('@openzeppelin/contracts-upgradeable'),
        upgradesCore: upgradesCoreVersion,
      }),
    )
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

  const solc = loadSolc();
  const ownUnits = Object.keys(sources);
  const compilation = compile(solc, sources);
  const { output } = compilation;
  const warnings = [...compilation.warnings];

  // Deployable = has bytecode and is defined in a top-level contracts/*.sol file.
  const deployable: Array<{ unit: string; name: string; abi: unknown[]; bytecode: string; deployedBytecode: string }> = [];
  for (const [unit, contracts] of Object.entries(output.contracts ?? {})) {
    if (!/^contracts\/[^/]+\.sol$/.test(unit)) continue;
    for (const [name, c] of Object.entries(contracts)) {
      if (!c.evm.bytecode.object) continue;
      deployable.push({
        unit,
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

  const analysis = analyze(solc, compilation, deployable);
  const analyzed = analysis.contracts;
  for (const w of analysis.warnings) warnings.push(`upgrades-core: ${w}`);
  const layouts: StorageLayoutsFile = { solcVersion, upgradesCoreVersion, contracts: {} };
  for (const c of deployable) {
    const info = analyzed[`${c.unit}:${c.name}`];
    layouts.contracts[c.name] = info;
    if (!info.upgradeable) continue;
    for (const w of info.warnings) warnings.push(`${c.name}: upgrades-core: ${w}`);
    if (!info.upgradeSafe) warnings.push(`${c.name} is not upgrade-safe (upgrades-core):\n${info.errors.join('\n')}`);
  }

  mkdirSync(ARTIFACTS_DIR, { recursive: true });
  rmSync(GENERATED_DIR, { recursive: true, force: true });
  mkdirSync(GENERATED_DIR, { recursive: true });
  const indexLines = ['// Generated by scripts/build-contracts.ts. Do not edit.'];
  for (const c of deployable) {
    const codeHash = layouts.contracts[c.name].codeHash;
    writeFileSync(
      path.join(ARTIFACTS_DIR, `${c.name}.json`),
      `${JSON.stringify({ abi: c.abi, bytecode: c.bytecode, deployedBytecode: c.deployedBytecode, codeHash }, null, 2)}\n`,
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
  indexLines.push(
    '',
    '/**',
    ' * keccak256 of each contract\'s runtime bytecode as compiled (immutables are zero there), by contract',
    ' * name: what a deployment record\'s implementation hash is compared with.',
    ' */',
    `export const contractCodeHashes: Readonly<Record<string, \`0x\${string}\`>> = ${JSON.stringify(
      Object.fromEntries(deployable.map((c) => [c.name, layouts.contracts[c.name].codeHash])),
      null,
      2,
    )};`,
  );
  writeFileSync(path.join(GENERATED_DIR, 'index.ts'), `${indexLines.join('\n')}\n`);
  writeFileSync(STORAGE_LAYOUTS_FILE, `${JSON.stringify(layouts, null, 2)}\n`);

  const info: BuildInfo = { hash, solcVersion, contracts: deployable.map((c) => c.name) };
  writeFileSync(BUILD_INFO, `${JSON.stringify(info, null, 2)}\n`);

  const ms = Math.round(performance.now() - started);
  const sizes = deployable.map((c) => `${c.name} ${(c.deployedBytecode.length - 2) / 2} B`).join(', ');
  const upgradeable = deployable.filter((c) => layouts.contracts[c.name].upgradeable);
  const unsafe = upgradeable.filter((c) => !layouts.contracts[c.name].upgradeSafe).map((c) => c.name);
  const verdict =
    upgradeable.length === 0
      ? 'no upgradeable contracts'
      : `${upgradeable.length} upgradeable, ${unsafe.length === 0 ? 'all upgrade-safe' : `NOT upgrade-safe: ${unsafe.join(', ')}`}`;
  return {
    compiled: true,
    contracts: info.contracts,
    summary: `build:contracts: compiled ${ownUnits.length} sources with solc ${solcVersion} in ${ms} ms (${verdict}): ${sizes}`,
    warnings,
  };
}
