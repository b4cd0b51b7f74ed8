/**
 * The stock venue at the same addresses on every chain (docs/contracts.md, "Same addresses on every
 * chain"): three real anvils with different chain ids, one whose deployer sent transactions before
 * (another nonce), one without the CREATE2 factory (deployed from its presigned transaction). Then
 * what the bootstrap guards (nobody but the deployer upgrades a bootstrapped proxy; a deployment
 * takes over a proxy someone else created for it), a second venue on the same chain (its addresses
 * taken: nonce-derived ones, noted), and a One Click delegation signed for one chain refused on
 * another with the same OneClickRouter address.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { concat, encodeDeployData, encodeFunctionData, getContractAddress, parseEther, type Address, type Chain, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { ANVIL_ACCOUNTS, DEMO_WALLETS, OPERATOR_ACCOUNT } from '../../src/chain/anvil-accounts.ts';
import { startAnvil, type AnvilHandle } from '../../src/chain/anvil-process.ts';
import { createChainClients, createChainWallet, type ChainPublicClient, type ChainWalletClient } from '../../src/chain/chain-client.ts';
import {
  CREATE2_FACTORY,
  CREATE2_FACTORY_SIGNER,
  deployStack,
  deterministicAddress,
  deterministicProxyAddress,
  deterministicSalt,
  TxBatch,
  venueBootstrapAddress,
  type Deployment,
  type DeployNote,
} from '../../src/chain/deploy-contracts.ts';
import { cashierAbi, oneClickRouterAbi, stockAbi, stockRouterAbi, venueBootstrapAbi, venueProxyAbi, venueProxyBytecode, venueTimelockAbi } from '../../src/chain/abi/generated/index.ts';
import { delegateTypedData, oneClickDomain } from '../../src/chain/one-click-typed-data.ts';
import { expectRevert } from './chain-test-helpers.ts';

const SYMBOLS = [
  { symbol: 'AAPL', name: 'Apple Inc.' },
  { symbol: 'MSFT', name: 'Microsoft Corp.' },
];
const IMPLEMENTATION_SLOT = '0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc';
const OPERATOR = OPERATOR_ACCOUNT.address;
/** The StockRouter's deterministic address for anvil's account 9: a change to VenueProxy.sol, VenueBootstrap.sol or the compiler moves it. */
const PINNED_STOCK_ROUTER = '0x8bE467c888349e71a36792eA37fEdEe9E687ea2F';

interface TestChain {
  anvil: AnvilHandle;
  chainId: number;
  chain: Chain;
  publicClient: ChainPublicClient;
  operator: ChainWalletClient;
  deployment: Deployment;
  notes: Array<{ level: string; message: string }>;
  nonceBefore: number;
}

async function chainWith(chainId: number, opts: { dummyTxs?: number; create2Deployer?: boolean }): Promise<TestChain> {
  const anvil = await startAnvil({ chainId, create2Deployer: opts.create2Deployer });
  const { chain, publicClient, walletClient } = createChainClients({ rpcUrl: anvil.rpcUrl, chainId, operatorPrivateKey: OPERATOR_ACCOUNT.privateKey, pollingIntervalMs: 20 });
  const operator = walletClient as ChainWalletClient;
  // Another nonce history: the deployer's own transactions before the deployment.
  if (opts.dummyTxs) {
    const batch = await TxBatch.open(publicClient, operator);
    for (let i = 0; i < opts.dummyTxs; i++) await batch.transfer(`dummy ${i}`, ANVIL_ACCOUNTS[7].address, 1n);
    await batch.finish();
  }
  const nonceBefore = await publicClient.getTransactionCount({ address: OPERATOR });
  const notes: TestChain['notes'] = [];
  const note: DeployNote = (level, message) => notes.push({ level, message });
  const deployment = await deployStack({ publicClient, walletClient: operator, symbols: SYMBOLS, demoWallets: DEMO_WALLETS.map((w) => w.address), options: { requireOracle: false, deployerOperator: true }, note });
  return { anvil, chainId, chain, publicClient, operator, deployment, notes, nonceBefore };
}

/** The addresses that are to be the same everywhere. */
const deterministicOf = (d: Deployment) => ({
  stockRouter: d.contracts.stockRouter,
  cashier: d.contracts.cashier,
  oneClickRouter: d.contracts.oneClickRouter,
  stocks: d.contracts.stocks,
  dividendDistributor: d.contracts.dividendDistributor,
  timelock: d.timelock?.address,
});

describe('the stock venue at the same addresses on every chain', () => {
  let a: TestChain;
  let b: TestChain;
  let c: TestChain;

  beforeAll(async () => {
    [a, b, c] = await Promise.all([
      chainWith(31337, {}),
      chainWith(31338, { dummyTxs: 3 }),
      chainWith(31339, { create2Deployer: false }),
    ]);
  }, 180_000);

  afterAll(async () => {
    await Promise.all([a, b, c].map((t) => t?.anvil.stop()));
  });

  it('gives every proxy and the timelock the same address on chains with different nonce histories, chain ids and factory presence', async () => {
    expect([a.nonceBefore, b.nonceBefore, c.nonceBefore]).toEqual([0, 3, 0]);
    expect(deterministicOf(b.deployment)).toEqual(deterministicOf(a.deployment));
    expect(deterministicOf(c.deployment)).toEqual(deterministicOf(a.deployment));
    // What the deployer and the name alone give, and not what its nonces would have.
    expect(a.deployment.contracts.stockRouter).toBe(deterministicProxyAddress(OPERATOR, 'StockRouter'));
    expect(a.deployment.contracts.cashier).toBe(deterministicProxyAddress(OPERATOR, 'Cashier'));
    expect(a.deployment.contracts.oneClickRouter).toBe(deterministicProxyAddress(OPERATOR, 'OneClickRouter'));
    expect(a.deployment.contracts.stocks.AAPL).toBe(deterministicProxyAddress(OPERATOR, 'Stock AAPL'));
    const nonceDerived = Array.from({ length: 80 }, (_, n) => getContractAddress({ from: OPERATOR, nonce: BigInt(n) }));
    for (const address of [...Object.values(deterministicOf(a.deployment)).filter((v): v is Address => typeof v === 'string'), ...Object.values(a.deployment.contracts.stocks)]) {
      expect(nonceDerived).not.toContain(address);
    }
    // The cash token and AccountLens stay nonce-derived: the chain with the dummy transactions has others.
    expect(b.deployment.contracts.cashToken).not.toBe(a.deployment.contracts.cashToken);
    expect(a.notes).toEqual([]);
    expect(b.notes).toEqual([]);
  });

  it('pins the StockRouter\'s address of anvil\'s account 9 (VenueProxy.sol and VenueBootstrap.sol are frozen)', () => {
    expect(a.deployment.contracts.stockRouter).toBe(PINNED_STOCK_ROUTER);
  });

  it('deploys the factory from its presigned transaction on the chain without it, and says so', async () => {
    expect(await c.publicClient.getCode({ address: CREATE2_FACTORY })).toBe(await a.publicClient.getCode({ address: CREATE2_FACTORY }));
    expect(await c.publicClient.getTransactionCount({ address: CREATE2_FACTORY_SIGNER })).toBe(1);
    expect(c.notes).toEqual([{ level: 'info', message: 'the chain had no CREATE2 factory: deployed it with its presigned transaction' }]);
  });

  it('leaves each proxy on its real implementation, initialized and wired, with the bootstrap\'s slot cleared', async () => {
    for (const t of [a, b, c]) {
      const d = t.deployment;
      const pc = t.publicClient;
      for (const [path, proxy] of [['stockRouter', d.contracts.stockRouter], ['cashier', d.contracts.cashier], ['oneClickRouter', d.contracts.oneClickRouter], ['stocks.AAPL', d.contracts.stocks.AAPL]] as const) {
        const slot = await pc.getStorageAt({ address: proxy, slot: IMPLEMENTATION_SLOT });
        expect(BigInt(slot!), `${path} on ${t.chainId}`).toBe(BigInt(d.code![path].implementation!));
        expect(await pc.readContract({ address: proxy, abi: stockRouterAbi, functionName: 'owner' })).toBe(OPERATOR);
        expect(await pc.readContract({ address: proxy, abi: stockRouterAbi, functionName: 'upgrader' })).toBe(OPERATOR);
      }
      expect(await pc.readContract({ address: d.contracts.stockRouter, abi: stockRouterAbi, functionName: 'cashier' })).toBe(d.contracts.cashier);
      expect(await pc.readContract({ address: d.contracts.stockRouter, abi: stockRouterAbi, functionName: 'trustedForwarder' })).toBe(d.contracts.oneClickRouter);
      expect(await pc.readContract({ address: d.contracts.cashier, abi: cashierAbi, functionName: 'router' })).toBe(d.contracts.stockRouter);
      expect(await pc.readContract({ address: d.contracts.stocks.MSFT, abi: stockAbi, functionName: 'symbol' })).toBe('MSFT');
      expect(await pc.readContract({ address: d.contracts.stocks.AAPL, abi: stockAbi, functionName: 'balanceOf', args: [DEMO_WALLETS[0].address] })).toBe(parseEther('100'));
      // The bootstrap's namespace is empty again: nobody is its deployer any more.
      const bootstrapSlot = '0x29c9567fc49df1a9221fc2e9a9a48d5f5e0a12861b38bead34fed2836cb10000';
      expect(BigInt((await pc.getStorageAt({ address: d.contracts.stockRouter, slot: bootstrapSlot }))!)).toBe(0n);
      const proposer = await pc.readContract({ address: d.timelock!.address, abi: venueTimelockAbi, functionName: 'hasRole', args: [await pc.readContract({ address: d.timelock!.address, abi: venueTimelockAbi, functionName: 'PROPOSER_ROLE' }), OPERATOR] });
      expect(proposer).toBe(true);
    }
    // A second initialize is refused, as on a plain deployment.
    await expectRevert(
      () => a.publicClient.simulateContract({ account: ANVIL_ACCOUNTS[7].address, address: a.deployment.contracts.cashier, abi: cashierAbi, functionName: 'initialize', args: [ANVIL_ACCOUNTS[7].address, ANVIL_ACCOUNTS[7].address, false] }),
      'InvalidInitialization',
    );
  });

  it('lets nobody but the deployer upgrade a proxy someone else created for it, and the deployment takes it over', async () => {
    const stranger = createChainWallet(ANVIL_ACCOUNTS[7].privateKey, { chain: a.chain, rpcUrl: a.anvil.rpcUrl, pollingIntervalMs: 20 });
    const label = 'Stock NVDA';
    const proxy = deterministicProxyAddress(OPERATOR, label);
    // The stranger sends the factory call the deployment would send (it is public on other chains).
    const bootstrap = encodeFunctionData({ abi: venueBootstrapAbi, functionName: 'bootstrap', args: [OPERATOR] });
    const initcode = encodeDeployData({ abi: venueProxyAbi, bytecode: venueProxyBytecode, args: [venueBootstrapAddress(), bootstrap] });
    expect(deterministicAddress(initcode, deterministicSalt(label))).toBe(proxy);
    const created = await stranger.sendTransaction({ to: CREATE2_FACTORY, data: concat([deterministicSalt(label), initcode]) });
    expect((await a.publicClient.waitForTransactionReceipt({ hash: created })).status).toBe('success');
    expect(await a.publicClient.readContract({ address: proxy, abi: venueBootstrapAbi, functionName: 'deployer' })).toBe(OPERATOR);
    // It cannot make the proxy its own: the upgrade is the deployer's, and bootstrap runs once.
    const aapl = a.deployment.code!['stocks.AAPL'].implementation!;
    const hostileInit = encodeFunctionData({ abi: stockAbi, functionName: 'initialize', args: ['Mine', 'MINE', ANVIL_ACCOUNTS[7].address, ANVIL_ACCOUNTS[7].address, false] });
    await expectRevert(() => a.publicClient.simulateContract({ account: ANVIL_ACCOUNTS[7].address, address: proxy, abi: venueBootstrapAbi, functionName: 'upgradeToAndCall', args: [aapl, hostileInit] }), 'NotDeployer', [ANVIL_ACCOUNTS[7].address]);
    await expectRevert(() => a.publicClient.simulateContract({ account: ANVIL_ACCOUNTS[7].address, address: proxy, abi: venueBootstrapAbi, functionName: 'bootstrap', args: [ANVIL_ACCOUNTS[7].address] }), 'AlreadyBootstrapped');

    // The deployer's batch finds it still on the bootstrap, with itself as deployer: it upgrades it.
    const notes: string[] = [];
    const tx = await TxBatch.open(a.publicClient, a.operator);
    tx.deterministic((_level, message) => notes.push(message));
    const taken = await tx.deployProxy(label, 'Stock', [], ['NVIDIA Corp.', 'NVDA', OPERATOR, OPERATOR, false]);
    await tx.finish();
    expect(taken).toBe(proxy);
    expect(notes).toEqual([]);
    expect(await a.publicClient.readContract({ address: proxy, abi: stockAbi, functionName: 'symbol' })).toBe('NVDA');
    expect(await a.publicClient.readContract({ address: proxy, abi: stockAbi, functionName: 'owner' })).toBe(OPERATOR);
  });

  it('deploys a second venue of the same deployer on the same chain at nonce-derived addresses, each noted', async () => {
    const notes: Array<{ level: string; message: string }> = [];
    const again = await deployStack({ publicClient: a.publicClient, walletClient: a.operator, symbols: SYMBOLS.slice(0, 1), demoWallets: [], options: { requireOracle: false, treasuryFunding: 0n, deployerOperator: true }, note: (level, message) => notes.push({ level, message }) });
    expect(again.contracts.stockRouter).not.toBe(a.deployment.contracts.stockRouter);
    expect(again.timelock!.address).not.toBe(a.deployment.timelock!.address);
    const nonceNow = await a.publicClient.getTransactionCount({ address: OPERATOR });
    const nonceDerived = Array.from({ length: nonceNow }, (_, n) => getContractAddress({ from: OPERATOR, nonce: BigInt(n) }));
    for (const address of [again.contracts.stockRouter, again.contracts.cashier, again.contracts.oneClickRouter, again.contracts.stocks.AAPL, again.contracts.dividendDistributor, again.timelock!.address]) {
      expect(nonceDerived).toContain(address);
    }
    expect(notes.map((n) => n.message.split(':')[0])).toEqual(['OneClickRouter', 'Cashier', 'StockRouter', 'Stock AAPL', 'DividendDistributor', 'VenueTimelock']);
    expect(notes.every((n) => n.level === 'warn' && n.message.includes('is taken on this chain'))).toBe(true);
    expect(await a.publicClient.readContract({ address: again.contracts.stockRouter, abi: stockRouterAbi, functionName: 'cashier' })).toBe(again.contracts.cashier);
    expect(await a.publicClient.readContract({ address: again.contracts.stockRouter, abi: stockRouterAbi, functionName: 'owner' })).toBe(OPERATOR);
  });

  it('refuses on chain B a One Click delegation signed for chain A, at the same OneClickRouter address', async () => {
    const user = privateKeyToAccount(DEMO_WALLETS[1].privateKey);
    const delegatee = ANVIL_ACCOUNTS[6].address;
    const router = a.deployment.contracts.oneClickRouter;
    expect(b.deployment.contracts.oneClickRouter).toBe(router);
    const nonce = await a.publicClient.readContract({ address: router, abi: oneClickRouterAbi, functionName: 'delegationNonce', args: [user.address, delegatee] });
    expect(await b.publicClient.readContract({ address: router, abi: oneClickRouterAbi, functionName: 'delegationNonce', args: [user.address, delegatee] })).toBe(nonce);
    const block = await a.publicClient.getBlock();
    const deadline = Number(block.timestamp) + 600;
    const signature: Hex = await user.signTypedData(delegateTypedData(oneClickDomain(a.chainId, router), { user: user.address, delegatee, nonce, deadline }) as never);
    await expectRevert(
      () => b.publicClient.simulateContract({ account: delegatee, address: router, abi: oneClickRouterAbi, functionName: 'delegateBySig', args: [user.address, delegatee, deadline, signature] }),
      'InvalidSigner',
    );
    const { request } = await a.publicClient.simulateContract({ account: delegatee, address: router, abi: oneClickRouterAbi, functionName: 'delegateBySig', args: [user.address, delegatee, deadline, signature] });
    expect(request.functionName).toBe('delegateBySig');
  });
});
