import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { encodeFunctionData, toFunctionSignature, type Abi } from 'viem';
import {
  accountLensAbi,
  cashierAbi,
  oneClickRouterAbi,
  stockAbi,
  stockRouterAbi,
} from '../../src/chain/abi/generated/index.ts';
import { ANVIL_CHAIN_ID, DEMO_WALLETS, OPERATOR_ACCOUNT } from '../../src/chain/anvil-accounts.ts';
import { startAnvil } from '../../src/chain/anvil-process.ts';
import { chainErrorAbi, createChainClients, toChainError } from '../../src/chain/chain-client.ts';
import { deployStack, isDeploymentLive, type Deployment } from '../../src/chain/deploy-contracts.ts';
import { readDeployment, writeDeployment } from '../../src/chain/deployment-file.ts';
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
    for (const address of [...Object.values(core), stocks.AAPL]) {
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
    expect(run.stdout).toMatch(/up to date \(6 contracts/);
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
    await writeDeployment(file, f.deployment);
    expect(await readDeployment(file)).toEqual(f.deployment);
    const bad = path.join(tmp, 'bad.json');
    writeFileSync(bad, JSON.stringify({ ...f.deployment, contracts: { ...f.deployment.contracts, cashier: 'nope' } }));
    await expect(readDeployment(bad)).rejects.toThrow(/contracts.cashier is not an address/);
  });
});

describe('anvil process', () => {
  test('state survives a stop and restart from the state file', async () => {
    const stateFile = path.join(tmp, 'state', 'anvil.json');
    const first = await startAnvil({ stateFile });
    let deployment: Deployment;
    try {
      const { publicClient, walletClient } = createChainClients({ rpcUrl: first.rpcUrl, chainId: ANVIL_CHAIN_ID, operatorPrivateKey: OPERATOR_ACCOUNT.privateKey });
      deployment = await deployStack({ publicClient, walletClient: walletClient!, symbols: DEMO_SYMBOLS.slice(0, 1), demoWallets: [DEMO_WALLETS[0].address] });
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
      expect(await waitUntil(() => !isAlive(pid), 5000)).toBe(true);
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
