/**
 * A real anvil with the whole stock stack deployed, for integration tests.
 *
 *   const chain = await startChainFixture();   // in beforeAll
 *   ...
 *   await chain.stop();                        // in afterAll
 *
 * `users` are anvil accounts 0..3 (the demo wallets, each funded with 100,000 USDC and 100 of every
 * stock in its wallet); `operator` is account 9 (deployer, owner, operator, treasury).
 * `snapshot()` / `revert(id)` wrap anvil's evm_snapshot / evm_revert for per-test isolation
 * (a snapshot id can be reverted to once).
 */
import { createTestClient, createWalletClient, http, toHex, type Address, type Hex, type TestClient } from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { DEMO_SYMBOLS, type SymbolSpec } from '../../src/marketdata/symbol-catalog.ts';
import { ANVIL_CHAIN_ID, DEMO_WALLETS, OPERATOR_ACCOUNT } from '../../src/chain/anvil-accounts.ts';
import { startAnvil, type AnvilHandle } from '../../src/chain/anvil-process.ts';
import {
  chainTransport,
  createChainClients,
  SETUP_RPC_TIMEOUT_MS,
  type ChainPublicClient,
  type ChainWalletClient,
} from '../../src/chain/chain-client.ts';
import { deployStack, type Deployment, type DeployStackOptions } from '../../src/chain/deploy-contracts.ts';
import type { Chain } from 'viem';

export interface ChainUser {
  address: Address;
  privateKey: Hex;
  wallet: ChainWalletClient;
}

export interface ChainFixture {
  anvil: AnvilHandle;
  rpcUrl: string;
  chainId: number;
  chain: Chain;
  publicClient: ChainPublicClient;
  /** Deployer / owner / operator / treasury wallet (anvil account 9). */
  operator: ChainWalletClient;
  testClient: TestClient<'anvil'>;
  deployment: Deployment;
  users: ChainUser[];
  /** Milliseconds the deployment took. */
  deployMs: number;
  snapshot(): Promise<Hex>;
  revert(id: Hex): Promise<void>;
  stop(): Promise<void>;
}

export interface ChainFixtureOptions {
  symbols?: readonly SymbolSpec[];
  deployOptions?: DeployStackOptions;
}

export async function startChainFixture(opts: ChainFixtureOptions = {}): Promise<ChainFixture> {
  const anvil = await startAnvil({ chainId: ANVIL_CHAIN_ID });
  try {
    const { chain, publicClient } = createChainClients({
      rpcUrl: anvil.rpcUrl,
      chainId: ANVIL_CHAIN_ID,
      pollingIntervalMs: 20,
      // Tests revert this chain to snapshots: a block number read before a revert (a receipt wait
      // polls it) was answered after it, and a test's `fromBlock` lay beyond the new head (CI).
      cacheTimeMs: 0,
    });
    const operator = testWallet(OPERATOR_ACCOUNT.privateKey, chain, anvil.rpcUrl);
    // The deploy waits on its node as the app's start does (SETUP_RPC_TIMEOUT_MS), not the 5 s of
    // the request path: at the busy end of a CI run a request past 5 s, twice, failed a fixture.
    const setup = createChainClients({ rpcUrl: anvil.rpcUrl, chainId: ANVIL_CHAIN_ID, pollingIntervalMs: 20, cacheTimeMs: 0, timeoutMs: SETUP_RPC_TIMEOUT_MS });
    const started = performance.now();
    const deployment = await deployStack({
      publicClient: setup.publicClient,
      walletClient: testWallet(OPERATOR_ACCOUNT.privateKey, chain, anvil.rpcUrl, SETUP_RPC_TIMEOUT_MS),
      symbols: opts.symbols ?? DEMO_SYMBOLS,
      demoWallets: DEMO_WALLETS.map((w) => w.address),
      // The fixture's tests fill at prices of their own choosing without price feeds: an explicit
      // opt-out of the router's requireOracle, which a test of the oracle rules turns back on.
      // The fixture's tests settle with the deployer's key: an explicit opt-in (the app's deployer is no operator).
      options: { requireOracle: false, deployerOperator: true, ...opts.deployOptions },
    });
    const deployMs = performance.now() - started;
    const users = DEMO_WALLETS.map((w) => ({
      address: w.address,
      privateKey: w.privateKey,
      wallet: testWallet(w.privateKey, chain, anvil.rpcUrl),
    }));
    const testClient = createTestClient({ mode: 'anvil', chain, transport: chainTransport(anvil.rpcUrl) });
    return {
      anvil,
      rpcUrl: anvil.rpcUrl,
      chainId: ANVIL_CHAIN_ID,
      chain,
      publicClient,
      operator,
      testClient,
      deployment,
      users,
      deployMs,
      snapshot: () => testClient.snapshot(),
      revert: (id) => testClient.revert({ id }),
      stop: () => anvil.stop(),
    };
  } catch (err) {
    await anvil.stop();
    throw err;
  }
}

/**
 * The demo stack deployed by the operator's key on the anvil at `rpcUrl`, for the tests and benches
 * that fill at prices of their own choosing, as the fixture does: no price feed required (the
 * router's requireOracle off) and the deployer's key an operator (the app's deployer is none).
 */
export async function deployDemoStack(rpcUrl: string, chainId: number, timeoutMs: number) {
  const { chain, publicClient, walletClient } = createChainClients({
    rpcUrl,
    chainId,
    operatorPrivateKey: OPERATOR_ACCOUNT.privateKey,
    pollingIntervalMs: 20,
    timeoutMs,
  });
  const operator = walletClient as ChainWalletClient;
  const deployment = await deployStack({
    publicClient,
    walletClient: operator,
    symbols: DEMO_SYMBOLS,
    demoWallets: DEMO_WALLETS.map((w) => w.address),
    options: { requireOracle: false, deployerOperator: true },
  });
  return { chain, publicClient, operator, deployment };
}

/**
 * A wallet whose gas estimates are padded as the venue's own senders pad theirs (`gasWithMargin`).
 * A bare estimate is the least gas that succeeded in the pending block, to within anvil's search
 * tolerance; mined in the next block, a settle at that edge ran out of gas once in CI (its feed call
 * gets only 63/64 of what is left). Tests that need an exact limit pass `gas` themselves.
 */
export function testWallet(key: Hex | PrivateKeyAccount, chain: Chain, rpcUrl: string, timeoutMs = 5_000): ChainWalletClient {
  const transport = http(rpcUrl, {
    timeout: timeoutMs,
    retryCount: 1,
    retryDelay: 100,
    fetchFn: async (input, init) => {
      const res = await fetch(input, init);
      const sent = typeof init?.body === 'string' ? (JSON.parse(init.body) as { method?: string }) : undefined;
      if (sent?.method !== 'eth_estimateGas' || !res.ok) return res;
      const answer = (await res.json()) as { result?: Hex };
      if (answer.result !== undefined) answer.result = toHex((BigInt(answer.result) * 13n) / 10n + 20_000n);
      return new Response(JSON.stringify(answer), { status: res.status, headers: res.headers });
    },
  });
  const account = typeof key === 'string' ? privateKeyToAccount(key) : key;
  return createWalletClient({ account, chain, transport, pollingInterval: 20 });
}

/**
 * Isolates each test of the enclosing suite: a chain snapshot before it, reverted after it. Register
 * it before hooks that open resources on that chain, so they are closed before the revert.
 */
export function revertEachTest(fixture: () => ChainFixture): void {
  let snap: Hex | undefined;
  beforeEach(async () => {
    snap = await fixture().snapshot();
  });
  afterEach(async () => {
    if (snap !== undefined) await fixture().revert(snap);
    snap = undefined;
  });
}

/**
 * The life most suites give a fixture: started before their tests and handed to `ready` (for what the
 * suite takes of it: users, contracts, deposits every test starts from), stopped after them, and each
 * test reverted to the chain `ready` left (revertEachTest). Call it where those hooks would stand:
 * hooks registered after it run after its own. The fixture it returns is usable in the suite's hooks
 * and tests (each read goes to the one its beforeAll started), not while the file loads.
 */
export function useChainFixture(
  ready: (fixture: ChainFixture) => void | Promise<void> = () => {},
  opts: ChainFixtureOptions = {},
  timeoutMs?: number,
): ChainFixture {
  let started: ChainFixture | undefined;
  const current = (): ChainFixture => {
    if (started === undefined) throw new Error('the chain fixture is read outside its suite, or did not start');
    return started;
  };
  beforeAll(async () => {
    started = await startChainFixture(opts);
    await ready(started);
  }, timeoutMs);
  afterAll(async () => {
    await started?.stop();
  });
  revertEachTest(current);
  // Spreading it (`{ ...f, operator }`) copies the started fixture's fields, as it did before.
  return new Proxy({} as ChainFixture, {
    get: (_target, key) => Reflect.get(current(), key),
    has: (_target, key) => Reflect.has(current(), key),
    ownKeys: () => Reflect.ownKeys(current()),
    getOwnPropertyDescriptor: (_target, key) => Reflect.getOwnPropertyDescriptor(current(), key),
  });
}
