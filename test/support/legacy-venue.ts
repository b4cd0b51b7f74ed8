/**
 * A venue as a release before 0.2.0 deployed it, for the migration tests: the contracts of an
 * earlier commit, compiled from this repository's history (`git show <commit>:contracts/...`) with
 * the same compiler and settings that commit used, and deployed and wired as that commit's
 * deployStack did (no proxies, constructors). Compiled once per commit and cached under .cache/.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { getAddress, parseUnits, type Abi, type Address, type Hex } from 'viem';
import type { ChainPublicClient, ChainWalletClient } from '../../src/chain/chain-client.ts';
import { TxBatch } from '../../src/chain/deploy-contracts.ts';
import type { DeploymentRecord } from '../../src/chain/deployment-file.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const require = createRequire(import.meta.url);

export interface LegacyArtifact {
  abi: Abi;
  bytecode: Hex;
}

export type LegacyArtifacts = Record<string, LegacyArtifact>;

/** The contracts of `commit`, compiled (cached in .cache/legacy-contracts/<commit>.json). */
export function compileLegacyContracts(commit: string): LegacyArtifacts {
  const cacheDir = path.join(ROOT, '.cache', 'legacy-contracts');
  const cache = path.join(cacheDir, `${commit}.json`);
  if (existsSync(cache)) return JSON.parse(readFileSync(cache, 'utf8')) as LegacyArtifacts;
  ensureCommit(commit);
  const files = execFileSync('git', ['ls-tree', '-r', '--name-only', commit, 'contracts'], { cwd: ROOT, encoding: 'utf8' })
    .split('\n')
    .filter((f) => f.endsWith('.sol') && !f.startsWith('contracts/bench/'));
  const sources: Record<string, { content: string }> = {};
  for (const file of files) sources[file] = { content: execFileSync('git', ['show', `${commit}:${file}`], { cwd: ROOT, encoding: 'utf8' }) };
  const solc = require('solc') as { compile(input: string, cb: { import(p: string): { contents: string } | { error: string } }): string };
  const input = {
    language: 'Solidity',
    sources,
    settings: {
      optimizer: { enabled: true, runs: 200 },
      evmVersion: 'cancun',
      outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
    },
  };
  const output = JSON.parse(
    solc.compile(JSON.stringify(input), {
      import: (p) => {
        try {
          return { contents: readFileSync(require.resolve(p), 'utf8') };
        } catch {
          return { error: `not found: ${p}` };
        }
      },
    }),
  ) as { errors?: Array<{ severity: string; formattedMessage: string }>; contracts: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>> };
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) throw new Error(`legacy ${commit}: ${errors.map((e) => e.formattedMessage).join('\n')}`);
  const out: LegacyArtifacts = {};
  for (const [unit, contracts] of Object.entries(output.contracts)) {
    if (!/^contracts\/[^/]+\.sol$/.test(unit)) continue;
    for (const [name, c] of Object.entries(contracts)) if (c.evm.bytecode.object) out[name] = { abi: c.abi, bytecode: `0x${c.evm.bytecode.object}` };
  }
  mkdirSync(cacheDir, { recursive: true });
  writeFileSync(cache, JSON.stringify(out));
  return out;
}

/** `commit` in this clone: a shallow clone fetches its history from its origin first. */
function ensureCommit(commit: string): void {
  const has = () => {
    try {
      execFileSync('git', ['rev-parse', '--verify', '--quiet', `${commit}^{commit}`], { cwd: ROOT, stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  };
  if (has()) return;
  try {
    const shallow = execFileSync('git', ['rev-parse', '--is-shallow-repository'], { cwd: ROOT, encoding: 'utf8' }).trim() === 'true';
    execFileSync('git', shallow ? ['fetch', '--quiet', '--unshallow'] : ['fetch', '--quiet', 'origin'], { cwd: ROOT, stdio: 'ignore' });
  } catch {
    // the message below says what is missing
  }
  if (!has()) throw new Error(`legacy contracts: commit ${commit} is not in the clone at ${ROOT}, and its origin could not give it (the migration tests need the repository's history)`);
}

export interface LegacyVenue {
  record: DeploymentRecord;
  artifacts: LegacyArtifacts;
}

/**
 * Deploys and wires the stock venue (and the perp vault) as `commit`'s deployStack did: the caller
 * is owner, operator and treasury; each demo wallet gets cash and every stock in its wallet.
 */
export async function deployLegacyVenue(params: {
  commit: string;
  publicClient: ChainPublicClient;
  walletClient: ChainWalletClient;
  symbols: ReadonlyArray<{ symbol: string; name: string }>;
  demoWallets: readonly Address[];
  operators?: readonly Address[];
}): Promise<LegacyVenue> {
  const a = compileLegacyContracts(params.commit);
  const tx = await TxBatch.open(params.publicClient, params.walletClient);
  const me = tx.from;
  const cashToken = await tx.deploy('CashToken', a.CashToken.abi, a.CashToken.bytecode, [me]);
  const oneClickRouter = await tx.deploy('OneClickRouter', a.OneClickRouter.abi, a.OneClickRouter.bytecode, [me]);
  const cashier = await tx.deploy('Cashier', a.Cashier.abi, a.Cashier.bytecode, [me]);
  const stockRouter = await tx.deploy('StockRouter', a.StockRouter.abi, a.StockRouter.bytecode, [cashier, oneClickRouter, me]);
  const accountLens = await tx.deploy('AccountLens', a.AccountLens.abi, a.AccountLens.bytecode, [cashier, stockRouter]);
  const stocks: Record<string, Address> = {};
  for (const s of params.symbols) stocks[s.symbol] = await tx.deploy(`Stock ${s.symbol}`, a.Stock.abi, a.Stock.bytecode, [s.name, s.symbol, me]);
  await tx.call('setStockRouter', oneClickRouter, a.OneClickRouter.abi, 'setStockRouter', [stockRouter]);
  await tx.call('cashier.setRouter', cashier, a.Cashier.abi, 'setRouter', [stockRouter]);
  for (const [symbol, stock] of Object.entries(stocks)) {
    await tx.call(`${symbol}.setRouter`, stock, a.Stock.abi, 'setRouter', [stockRouter]);
    await tx.call(`listStock ${symbol}`, stockRouter, a.StockRouter.abi, 'listStock', [stock]);
  }
  await tx.call('configureToken', cashier, a.Cashier.abi, 'configureToken', [cashToken, true, 6, parseUnits('1', 6), parseUnits('250000', 6)]);
  await tx.call('setCreditBuffer', cashier, a.Cashier.abi, 'setCreditBuffer', [parseUnits('1000000', 18)]);
  await tx.call('setFeeConfig', stockRouter, a.StockRouter.abi, 'setFeeConfig', [{ marketFeeBps: 10, limitFeeBps: 5 }]);
  for (const operator of [me, ...(params.operators ?? [])]) {
    await tx.call('router.setOperator', stockRouter, a.StockRouter.abi, 'setOperator', [operator, true]);
    await tx.call('cashier.setOperator', cashier, a.Cashier.abi, 'setOperator', [operator, true]);
  }
  const funding = parseUnits('5000000', 6);
  await tx.call('mint treasury funding', cashToken, a.CashToken.abi, 'mint', [me, funding]);
  await tx.call('approve treasury funding', cashToken, a.CashToken.abi, 'approve', [cashier, funding]);
  await tx.call('fundTreasury', cashier, a.Cashier.abi, 'fundTreasury', [cashToken, funding]);
  for (const wallet of params.demoWallets) {
    await tx.call('mint USDC', cashToken, a.CashToken.abi, 'mint', [wallet, parseUnits('100000', 6)]);
    for (const stock of Object.values(stocks)) await tx.call('mint stock', stock, a.Stock.abi, 'mint', [wallet, parseUnits('100', 18)]);
  }
  const marginVault = await tx.deploy('MarginVault', a.MarginVault.abi, a.MarginVault.bytecode, [cashToken, me]);
  const reserveRegistry = await tx.deploy('ReserveRegistry', a.ReserveRegistry.abi, a.ReserveRegistry.bytecode, [me]);
  await tx.call('vault.setOperator', marginVault, a.MarginVault.abi, 'setOperator', [me, true]);
  const last = await tx.finish();
  const block = last.blockNumber.toString();
  const first = tx.firstBlock!.toString();
  const record: DeploymentRecord = {
    chainId: tx.chain,
    venues: {
      stock: { blockNumber: block, firstBlockNumber: first, deployedAt: Date.now(), operator: me, contracts: { stockRouter, oneClickRouter, cashier, cashToken, accountLens, stocks } },
      perp: { blockNumber: block, firstBlockNumber: first, deployedAt: Date.now(), operator: me, contracts: { marginVault, collateralToken: cashToken, reserveRegistry } },
    },
  };
  return { record, artifacts: a };
}

export const lower = (a: Address): string => getAddress(a).toLowerCase();
