import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { encodeFunctionData, toFunctionSignature, type Abi } from 'viem';
import {
  accountLensAbi,
  cashierAbi,
  cashTokenAbi,
  cashTokenBytecode,
  oneClickRouterAbi,
  stockAbi,
  stockRouterAbi,
} from '../../src/chain/abi/generated/index.ts';
import { ANVIL_ACCOUNTS, ANVIL_CHAIN_ID, DEMO_WALLETS, OPERATOR_ACCOUNT } from '../../src/chain/anvil-accounts.ts';
import { listensOn, startAnvil } from '../../src/chain/anvil-process.ts';
import { chainErrorAbi, createChainClients, toChainError } from '../../src/chain/chain-client.ts';
import {
  deployStack,
  ensureVenues,
  grantStockOperators,
  isDeploymentLive,
  stockDeploymentOf,
  stockVenueDeployer,
  type Deployment,
  type VenueDeployer,
} from '../../src/chain/deploy-contracts.ts';
import {
  readDeployment,
  readDeploymentRecord,
  writeDeployment,
  writeDeploymentRecord,
  type DeploymentRecord,
  type VenueDeployment,
} from '../../src/chain/deployment-file.ts';
import { AppError, ChainRevertError, ChainUnavailableError } from '../../src/errors/app-error.ts';
import { DEMO_SYMBOLS } from '../../src/marketdata/symbol-catalog.ts';
import { startChainFixture, type ChainFixture } from '../support/chain-fixture.ts';
import { usdc } from './chain-test-helpers.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

let f: ChainFixture;
let tmp: string;

beforeAll(async () => {
  f = await startChainFixture();
  tmp = mkdtempSync(path.join(tmpdir(), 'chain-infra-'));
});
afterAll(async () => {
  await f?.stop();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

function errorSignatures(abi: Abi): Set<string> {
  return new Set(abi.filter((x) => x.type === 'error').map((x) => toFunctionSignature(x as never)));
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitUntil(cond: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (cond()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return cond();
}

describe('contracts and build', () => {
  test('the StockRouter ABI holds every error a router call can surface', () => {
    const router = errorSignatures(stockRouterAbi);
    const missing = [...errorSignatures(cashierAbi), ...errorSignatures(stockAbi)].filter((s) => !router.has(s));
    expect(missing).toEqual([]);
    for (const s of [
      'ERC20InsufficientAllowance(address,uint256,uint256)',
      'ERC20InsufficientBalance(address,uint256,uint256)',
      'SafeERC20FailedOperation(address)',
      'InsufficientBalance(uint256,uint256)',
      'InsufficientStockBalance(uint256,uint256)',
      'OrderNotOpen(uint256)',
      'DeadlineExpired(uint32)',
      'InvalidTimeInForce(uint8)',
    ]) {
      expect(router.has(s), s).toBe(true);
    }
    // Each error appears once.
    const names = stockRouterAbi.filter((x) => x.type === 'error').map((x) => toFunctionSignature(x as never));
    expect(names.length).toBe(new Set(names).size);
    // The merged decoder also knows the One Click errors.
    expect(errorSignatures(chainErrorAbi as Abi).has('InvalidSigner(address,address)')).toBe(true);
    expect(errorSignatures(oneClickRouterAbi).has('NotDelegatee(address,address)')).toBe(true);
  });

  test('every deployed contract is under the 24 KiB code-size limit', async () => {
    const { stocks, ...core } = f.deployment.contracts;
    // A proxy's own code is the small ERC-1967 forwarder: the size that counts is its implementation's.
    const implementations = Object.values(f.deployment.code!).flatMap((c) => (c.implementation ? [c.implementation] : []));
    const proxies = new Set(Object.entries(f.deployment.code!).filter(([, c]) => c.implementation).map(([p]) => p));
    const plain = Object.entries(core).filter(([name]) => !proxies.has(name)).map(([, a]) => a as `0x${string}`);
    for (const address of [...plain, ...implementations]) {
      const code = (await f.publicClient.getCode({ address })) ?? '0x';
      const size = (code.length - 2) / 2;
      expect(size).toBeGreaterThan(1000);
      expect(size).toBeLessThanOrEqual(24_576);
    }
  });

  test('a second build with unchanged sources is skipped', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', path.join(ROOT, 'scripts', 'build-contracts.ts')], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(run.status).toBe(0);
    // Every deployable contract of contracts/*.sol, as the build recorded them.
    const built = JSON.parse(readFileSync(path.join(ROOT, 'artifacts', 'build-info.json'), 'utf8')) as { contracts: string[] };
    expect(built.contracts).toEqual(expect.arrayContaining(['StockRouter', 'PriceFeedHub', 'PriceFeed']));
    expect(run.stdout).toMatch(new RegExp(`up to date \\(${built.contracts.length} contracts`));
  });
});

describe('deployment', () => {
  test('deploys, wires and funds the stack', async () => {
    const d = f.deployment;
    expect(d.chainId).toBe(ANVIL_CHAIN_ID);
    expect(d.operator).toBe(OPERATOR_ACCOUNT.address);
    expect(Object.keys(d.contracts.stocks)).toEqual(DEMO_SYMBOLS.map((s) => s.symbol));
    expect(BigInt(d.blockNumber)).toBeGreaterThan(0n);
    const trusted = await f.publicClient.readContract({ address: d.contracts.stockRouter, abi: stockRouterAbi, functionName: 'trustedForwarder' });
    expect(trusted).toBe(d.contracts.oneClickRouter);
    const target = await f.publicClient.readContract({ address: d.contracts.oneClickRouter, abi: oneClickRouterAbi, functionName: 'stockRouter' });
    expect(target).toBe(d.contracts.stockRouter);
    for (const w of DEMO_WALLETS) {
      const account = await f.publicClient.readContract({
        address: d.contracts.accountLens,
        abi: accountLensAbi,
        functionName: 'getAccount',
        args: [w.address, Object.values(d.contracts.stocks), [d.contracts.cashToken], d.contracts.stockRouter],
      });
      expect(account.cashTokens[0].wallet).toBe(usdc('100000'));
      expect(account.stocks.map((s) => s.wallet)).toEqual(DEMO_SYMBOLS.map(() => 100n * 10n ** 18n));
      expect(account.stocks.every((s) => s.allowance === 0n)).toBe(true);
    }
    const treasury = await f.publicClient.readContract({ address: d.contracts.cashier, abi: cashierAbi, functionName: 'balanceOf', args: [d.operator] });
    expect(treasury).toBe(5_000_000n * 10n ** 18n);
  });

  test('isDeploymentLive checks the chain id and code at every address', async () => {
    expect(await isDeploymentLive(f.publicClient, f.deployment)).toBe(true);
    const wrongChain: Deployment = { ...f.deployment, chainId: 1 };
    expect(await isDeploymentLive(f.publicClient, wrongChain)).toBe(false);
    const missing: Deployment = {
      ...f.deployment,
      contracts: { ...f.deployment.contracts, stocks: { ...f.deployment.contracts.stocks, XYZ: '0x000000000000000000000000000000000000dEaD' } },
    };
    expect(await isDeploymentLive(f.publicClient, missing)).toBe(false);
  });

  test('deployment files round-trip; a missing file reads as undefined; a malformed one throws', async () => {
    const file = path.join(tmp, 'deployments', '31337.json');
    expect(await readDeployment(file)).toBeUndefined();
    expect(await readDeploymentRecord(file)).toBeUndefined();
    await writeDeployment(file, f.deployment);
    expect(await readDeployment(file)).toEqual(f.deployment);
    const { chainId, ...stock } = f.deployment;
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ chainId, venues: { stock } });
    expect(await readDeploymentRecord(file)).toEqual({ record: { chainId, venues: { stock } }, format: 'venues' });
    const bad = path.join(tmp, 'bad.json');
    writeFileSync(bad, JSON.stringify({ chainId, venues: { stock: { ...stock, contracts: { ...stock.contracts, cashier: 'nope' } } } }));
    await expect(readDeploymentRecord(bad)).rejects.toThrow(/venues.stock.contracts.cashier is not an address/);
    writeFileSync(bad, JSON.stringify({ chainId, venues: { other: { ...stock, contracts: { vault: { a: '0x12' } } } } }));
    await expect(readDeploymentRecord(bad)).rejects.toThrow(/venues.other.contracts.vault.a is not an address/);
    writeFileSync(bad, JSON.stringify({ chainId, venues: { perp: { ...stock, contracts: { marginVault: stock.contracts.cashier } } } }));
    await expect(readDeploymentRecord(bad)).rejects.toThrow(/venues.perp.contracts.collateralToken is not an address/);
    writeFileSync(bad, JSON.stringify({ chainId, venues: { stock: { ...stock, contracts: { ...stock.contracts, stocks: undefined } } } }));
    await expect(readDeploymentRecord(bad)).rejects.toThrow(/venues.stock.contracts.stocks missing/);
  });

  test('a record of the pre-venue (flat) shape reads as the stock venue; writing keeps the other venues', async () => {
    const file = path.join(tmp, 'flat', '31337.json');
    // The flat shape is what was written before venues existed: the stock section beside the chain id.
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, JSON.stringify(f.deployment));
    const { chainId, ...stock } = f.deployment;
    expect(await readDeploymentRecord(file)).toEqual({ record: { chainId, venues: { stock } }, format: 'flat' });
    expect(await readDeployment(file)).toEqual(f.deployment);
    writeFileSync(path.join(tmp, 'flat-bad.json'), JSON.stringify({ ...f.deployment, contracts: { ...f.deployment.contracts, cashier: 'nope' } }));
    await expect(readDeploymentRecord(path.join(tmp, 'flat-bad.json'))).rejects.toThrow(/contracts.cashier is not an address/);

    const perp: VenueDeployment = { blockNumber: '7', deployedAt: 1, operator: OPERATOR_ACCOUNT.address, contracts: { marginVault: DEMO_WALLETS[1].address, collateralToken: DEMO_WALLETS[2].address } };
    await writeDeploymentRecord(file, { chainId, venues: { stock, perp } });
    const moved = { ...f.deployment, blockNumber: '99' };
    await writeDeployment(file, moved);
    const { chainId: _c, ...movedStock } = moved;
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ chainId, venues: { stock: movedStock, perp } });
  });

  test('ensureVenues deploys only the venues missing from the record or gone from the chain', async () => {
    const deploys: string[] = [];
    // A stand-in for the perp venue of a later issue: one contract of its own.
    const fakeVenue: VenueDeployer = {
      venue: 'fake',
      async deploy({ publicClient, walletClient }) {
        deploys.push('fake');
        const hash = await walletClient.deployContract({ abi: cashTokenAbi, bytecode: cashTokenBytecode, args: [walletClient.account.address] });
        const receipt = await publicClient.waitForTransactionReceipt({ hash });
        return { blockNumber: receipt.blockNumber.toString(), deployedAt: Date.now(), operator: walletClient.account.address, contracts: { token: receipt.contractAddress! } };
      },
    };
    const stockVenue = stockVenueDeployer({ symbols: [{ symbol: 'AAPL', name: 'Apple Inc.' }], demoWallets: [], options: { deployerOperator: true } });
    const counted: VenueDeployer = { venue: 'stock', deploy: (c) => (deploys.push('stock'), stockVenue.deploy(c)) };
    const { chainId, ...stock } = f.deployment;
    const onlyStock: DeploymentRecord = { chainId, venues: { stock } };

    // The record has the stock venue: only the missing one is deployed, the stock section is kept as is.
    const first = await ensureVenues({ publicClient: f.publicClient, walletClient: f.operator, record: onlyStock, venues: [counted, fakeVenue] });
    expect(first.deployed).toEqual(['fake']);
    expect(deploys).toEqual(['fake']);
    expect(first.record.venues.stock).toEqual(stock);
    expect(stockDeploymentOf(first.record)).toEqual(f.deployment);
    const fake = first.record.venues.fake;
    expect(await f.publicClient.getCode({ address: fake.contracts.token as `0x${string}` })).toMatch(/^0x[0-9a-f]{100,}$/);

    // Everything recorded and live: nothing is deployed.
    const second = await ensureVenues({ publicClient: f.publicClient, record: first.record, venues: [counted, fakeVenue] });
    expect(second.deployed).toEqual([]);
    expect(second.record).toEqual(first.record);
    expect(deploys).toEqual(['fake']);

    // A venue whose code is gone (a fresh chain behind an old record) is deployed again, alone.
    const gone: DeploymentRecord = { chainId, venues: { stock, fake: { ...fake, contracts: { token: '0x000000000000000000000000000000000000dEaD' } } } };
    const reasons: string[] = [];
    const third = await ensureVenues({ publicClient: f.publicClient, walletClient: f.operator, record: gone, venues: [counted, fakeVenue], onDeploy: (v, r) => reasons.push(`${v}: ${r}`) });
    expect(third.deployed).toEqual(['fake']);
    expect(reasons).toEqual(['fake: code gone']);
    expect(third.record.venues.fake.contracts.token).not.toBe('0x000000000000000000000000000000000000dEaD');

    // Venues not asked for stay in the record untouched; a record of another chain counts as empty.
    const kept = await ensureVenues({ publicClient: f.publicClient, record: third.record, venues: [fakeVenue] });
    expect(kept.record).toEqual(third.record);
    const otherChain = await ensureVenues({ publicClient: f.publicClient, walletClient: f.operator, record: { chainId: 1, venues: { fake } }, venues: [fakeVenue] });
    expect(otherChain.deployed).toEqual(['fake']);
    expect(otherChain.record.chainId).toBe(ANVIL_CHAIN_ID);
    expect(deploys).toEqual(['fake', 'fake', 'fake']);

    // Without a key, a missing venue is an error naming it.
    await expect(ensureVenues({ publicClient: f.publicClient, record: onlyStock, venues: [counted, fakeVenue] })).rejects.toThrow(
      /the fake venue is not deployed on chain 31337 and there is no OPERATOR_PRIVATE_KEY/,
    );
  });

  test('a fresh chain gets the stock venue with extra operators; grantStockOperators adds a missing one once', async () => {
    const anvil = await startAnvil();
    try {
      const { publicClient, walletClient } = createChainClients({ rpcUrl: anvil.rpcUrl, chainId: ANVIL_CHAIN_ID, operatorPrivateKey: OPERATOR_ACCOUNT.privateKey });
      const executor = ANVIL_ACCOUNTS[8].address;
      const other = ANVIL_ACCOUNTS[7].address;
      const { record, deployed } = await ensureVenues({
        publicClient,
        walletClient,
        venues: [stockVenueDeployer({ symbols: [{ symbol: 'AAPL', name: 'Apple Inc.' }], demoWallets: [], options: { operators: [executor] } })],
      });
      expect(deployed).toEqual(['stock']);
      const d = stockDeploymentOf(record)!;
      expect(d.operator).toBe(OPERATOR_ACCOUNT.address);
      const isOperator = (account: `0x${string}`) =>
        Promise.all([
          publicClient.readContract({ address: d.contracts.stockRouter, abi: stockRouterAbi, functionName: 'isOperator', args: [account] }),
          publicClient.readContract({ address: d.contracts.cashier, abi: cashierAbi, functionName: 'isOperator', args: [account] }),
        ]);
      expect(await isOperator(executor)).toEqual([true, true]);
      expect(await isOperator(other)).toEqual([false, false]);
      // The deployer (the admin key) is made an operator of nothing (issue 60).
      expect(await isOperator(OPERATOR_ACCOUNT.address)).toEqual([false, false]);
      expect(await grantStockOperators({ publicClient, walletClient: walletClient!, deployment: d, accounts: [executor, other] })).toEqual([other]);
      expect(await isOperator(other)).toEqual([true, true]);
      expect(await grantStockOperators({ publicClient, walletClient: walletClient!, deployment: d, accounts: [executor, other] })).toEqual([]);
    } finally {
      await anvil.stop();
    }
  });
});

describe('anvil process', () => {
  test("readiness counts only an answer from the child's own socket: another process on the port is told apart", async () => {
    // Another anvil on a port this start chose free could answer the readiness probe with the same
    // chain id while the new child exits with "address in use" (seen as tests deploying on each
    // other's chains); startAnvil takes an answer only where listensOn says the child holds the port.
    const anvil = await startAnvil();
    const other = createServer();
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const otherPort = (other.address() as { port: number }).port;
    try {
      expect(listensOn(anvil.pid, anvil.port)).toBe(true);
      expect(listensOn(anvil.pid, otherPort)).toBe(false);
      expect(listensOn(process.pid, otherPort)).toBe(true);
      expect(listensOn(process.pid, anvil.port)).toBe(false);
    } finally {
      await new Promise((r) => other.close(r));
      await anvil.stop();
    }
    // Once the child is gone its /proc entries are too: it holds nothing (CI met a start that took
    // a dead child's unreadable /proc for "cannot tell" and deployed on another test's anvil).
    expect(listensOn(anvil.pid, anvil.port)).toBe(false);
    const exited = spawnSync('true');
    expect(listensOn(exited.pid as number, anvil.port)).toBe(false);
  });

  test('state survives a stop and restart from the state file', async () => {
    const stateFile = path.join(tmp, 'state', 'anvil.json');
    const first = await startAnvil({ stateFile });
    let deployment: Deployment;
    try {
      const { publicClient, walletClient } = createChainClients({ rpcUrl: first.rpcUrl, chainId: ANVIL_CHAIN_ID, operatorPrivateKey: OPERATOR_ACCOUNT.privateKey });
      deployment = await deployStack({ publicClient, walletClient: walletClient!, symbols: DEMO_SYMBOLS.slice(0, 1), demoWallets: [DEMO_WALLETS[0].address], options: { deployerOperator: true } });
    } finally {
      await first.stop();
    }
    expect(isAlive(first.pid)).toBe(false);

    const second = await startAnvil({ stateFile });
    try {
      expect(second.port).not.toBe(0);
      const { publicClient } = createChainClients({ rpcUrl: second.rpcUrl, chainId: ANVIL_CHAIN_ID });
      expect(await isDeploymentLive(publicClient, deployment)).toBe(true);
      const balance = await publicClient.readContract({
        address: deployment.contracts.cashier,
        abi: cashierAbi,
        functionName: 'balanceOf',
        args: [deployment.operator],
      });
      expect(balance).toBe(5_000_000n * 10n ** 18n);
    } finally {
      await second.stop();
    }
    // stop() is idempotent.
    await second.stop();
  });

  test('a second anvil on a state file waits for the first to exit and starts from what it wrote last', async () => {
    const stateFile = path.join(tmp, 'owned', 'anvil.json');
    // No periodic dump: the file changes only when the first anvil exits.
    const first = await startAnvil({ stateFile, stateIntervalSeconds: 3600 });
    const rpc = async (url: string, method: string) => {
      const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: [] }) });
      return ((await res.json()) as { result: string }).result;
    };
    for (let i = 0; i < 5; i++) await rpc(first.rpcUrl, 'evm_mine');
    expect(Number(await rpc(first.rpcUrl, 'eth_blockNumber'))).toBe(5);
    // As after a SIGKILL of its process: the first is still running (and will write the file as it
    // exits) when the next start comes. Started on the file now, the second would load none of the 5
    // blocks, and the first's exit would then overwrite whatever the second wrote.
    const second = startAnvil({ stateFile });
    expect(readFileSync(`${stateFile}.pid`, 'utf8')).toBe(String(first.pid));
    await first.stop();
    const handle = await second;
    try {
      expect(Number(await rpc(handle.rpcUrl, 'eth_blockNumber'))).toBe(5);
      expect(readFileSync(`${stateFile}.pid`, 'utf8')).toBe(String(handle.pid));
    } finally {
      await handle.stop();
    }
  });

  test('a fixed port that is already taken is refused instead of probing the wrong node', async () => {
    await expect(startAnvil({ port: f.anvil.port })).rejects.toThrow(/port \d+ is already in use/);
  });

  test('anvil dies with its parent even when the parent is killed with SIGKILL', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'test', 'chain', 'fixtures', 'anvil-parent.ts')], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const line = await new Promise<string>((resolve, reject) => {
      let buf = '';
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (chunk: string) => {
        buf += chunk;
        if (buf.includes('\n')) resolve(buf.split('\n')[0]);
      });
      child.once('exit', (code) => reject(new Error(`parent exited early (${code})`)));
    });
    const { pid } = JSON.parse(line) as { pid: number };
    try {
      expect(isAlive(pid)).toBe(true);
      child.kill('SIGKILL');
      expect(await waitUntil(() => !isAlive(pid), 20_000)).toBe(true);
    } finally {
      if (isAlive(pid)) process.kill(pid, 'SIGKILL');
    }
  });
});

describe('toChainError', () => {
  test('connection refused → ChainUnavailableError without the RPC URL', async () => {
    const probe = await startAnvil();
    const deadUrl = probe.rpcUrl;
    await probe.stop();
    const { publicClient } = createChainClients({ rpcUrl: `${deadUrl}/secret-key-123`, chainId: ANVIL_CHAIN_ID });
    const err = await publicClient.getBlockNumber().catch((e: unknown) => e);
    const mapped = toChainError(err);
    expect(mapped).toBeInstanceOf(ChainUnavailableError);
    expect(mapped.retryable).toBe(true);
    expect(mapped.message).not.toMatch(/secret-key-123|127\.0\.0\.1/);
    expect(JSON.stringify(mapped.detail)).not.toMatch(/secret-key-123/);
  });

  test('HTTP error status and timeouts → ChainUnavailableError', async () => {
    let hang = false;
    const server: Server = createServer((req, res) => {
      if (hang) return; // never answer
      res.statusCode = 502;
      res.end('bad gateway');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as { port: number }).port;
    try {
      const { publicClient } = createChainClients({ rpcUrl: `http://127.0.0.1:${port}`, chainId: ANVIL_CHAIN_ID, timeoutMs: 300 });
      const http = toChainError(await publicClient.getBlockNumber().catch((e: unknown) => e));
      expect(http).toBeInstanceOf(ChainUnavailableError);
      expect(http.detail).toMatchObject({ reason: 'HttpRequestError', status: 502 });
      hang = true;
      // The client's own 300 ms timeout ends the request (the test's 60 s limit would be a hang).
      const timeout = toChainError(await publicClient.getBlockNumber().catch((e: unknown) => e));
      expect(timeout).toBeInstanceOf(ChainUnavailableError);
      expect(timeout.detail).toMatchObject({ reason: expect.stringMatching(/Timeout/) });
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  test('anything else becomes an INTERNAL AppError; AppErrors pass through', () => {
    const internal = toChainError(new Error('boom 0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80'));
    expect(internal.code).toBe('INTERNAL');
    expect(internal.message).not.toMatch(/0xac09/);
    const own = new AppError('CONFLICT', 'x');
    expect(toChainError(own)).toBe(own);
  });

  test('a revert decodes to ChainRevertError even through a plain eth_call without an ABI', async () => {
    const err = await f.publicClient
      .call({
        account: f.users[0].address,
        to: f.deployment.contracts.stockRouter,
        data: encodeFunctionData({ abi: stockRouterAbi, functionName: 'cancelLimitOrder', args: [7n] }),
      })
      .catch((e: unknown) => e);
    const mapped = toChainError(err);
    expect(mapped).toBeInstanceOf(ChainRevertError);
    expect((mapped as ChainRevertError).errorName).toBe('OrderNotOpen');
    expect(mapped.detail).toMatchObject({ errorArgs: ['7'] });
  });
});
