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
import { createTestClient, type Address, type Hex, type TestClient } from 'viem';
import { afterEach, beforeEach } from 'vitest';
import { DEMO_SYMBOLS, type SymbolSpec } from '../../src/marketdata/symbol-catalog.ts';
import { ANVIL_CHAIN_ID, DEMO_WALLETS, OPERATOR_ACCOUNT } from '../../src/chain/anvil-accounts.ts';
import { startAnvil, type AnvilHandle } from '../../src/chain/anvil-process.ts';
import {
  chainTransport,
  createChainClients,
  createChainWallet,
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
    const { chain, publicClient, walletClient } = createChainClients({
      rpcUrl: anvil.rpcUrl,
      chainId: ANVIL_CHAIN_ID,
      operatorPrivateKey: OPERATOR_ACCOUNT.privateKey,
      pollingIntervalMs: 20,
      // Tests revert this chain to snapshots: a block number read before a revert (a receipt wait
      // polls it) was answered after it, and a test's `fromBlock` lay beyond the new head (CI).
      cacheTimeMs: 0,
    });
    const operator = walletClient as ChainWalletClient;
    const started = performance.now();
    const deployment = await deployStack({
      publicClient,
      walletClient: operator,
      symbols: opts.symbols ?? DEMO_SYMBOLS,
      demoWallets: DEMO_WALLETS.map((w) => w.address),
      // The fixture's tests fill at prices of their own choosing without price feeds: an explicit
      // opt-out of the router's requireOracle, which a test of the oracle rules turns back on.
      options: { requireOracle: false, ...opts.deployOptions },
    });
    const deployMs = performance.now() - started;
    const users = DEMO_WALLETS.map((w) => ({
      address: w.address,
      privateKey: w.privateKey,
      wallet: createChainWallet(w.privateKey, { chain, rpcUrl: anvil.rpcUrl, pollingIntervalMs: 20 }),
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
