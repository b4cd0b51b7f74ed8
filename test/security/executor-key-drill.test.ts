/**
 * Key-compromise drill: the stock venue's executor (operator) key (issue 43, items 2 and 7;
 * docs/security.md, "Executor key").
 *
 * The attacker holds the executor key and an account of its own with capital. It runs the round
 * trip the review describes — its own market buys filled at the oracle −1 % and its sells at +1 %,
 * the edge of the router's oracle band — stock after stock until the router refuses. What must hold:
 * the treasury's loss against the oracle is at most the overall treasury loss budget of the window,
 * to the unit (and each stock's at most its own); the attacker's gain is that loss less the fees it
 * paid; the budget alerts were emitted; the key cannot lift the bounds (budgets, feeds, the feed
 * requirement, fees, the fee balance are the owner's); other users' balances and orders are
 * untouched, and they can still cancel and withdraw.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { parseEventLogs, zeroAddress, type Address, type TransactionReceipt } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { cashierAbi, cashTokenAbi, priceFeedHubAbi, stockRouterAbi } from '../../src/chain/abi/generated/index.ts';
import { EXECUTOR_ACCOUNT, ORACLE_PUBLISHER_ACCOUNT } from '../../src/chain/anvil-accounts.ts';
import { type ChainWalletClient } from '../../src/chain/chain-client.ts';
import { ensurePriceFeeds } from '../../src/chain/deploy-contracts.ts';
import { testWallet, startChainFixture, type ChainFixture, type ChainUser } from '../support/chain-fixture.ts';
import { confirm, contracts, DAY, depositStock, depositUsdc, expectCashInvariant, expectRevert, mUsdOf, musd, OrderStatus, price, routerCall, settlementGas, shares, Side, stockOf, usdc, usdcOf, ANY_BUY_PRICE, ANY_SELL_PRICE } from '../chain/chain-test-helpers.ts';

let f: ChainFixture;
let executor: ChainWalletClient;
let attacker: ChainUser;
let alice: ChainUser;
let bob: ChainUser;
let router: Address;
let cashier: Address;
let stocks: Record<string, Address>;
let symbols: string[];

/** Every feed answers 100 mUSD (8 decimals) for the whole drill. */
const ORACLE = price('100');
/** Shares per leg: a buy at 99 costs 495,000 mUSD plus 495 of fee, within the attacker's 600,000. */
const LEG = shares('5000');
/** The defaults the router documents (docs/security.md). */
const STOCK_BUDGET = musd('25000');
const OVERALL_BUDGET = musd('100000');

type FillArg = { orderId: bigint; quantity: bigint; price: bigint };
/** The executor key's settlement, as the attacker sends it, with the executor's gas margin. */
const settleAsExecutor = async (fills: FillArg[], closes: Array<{ orderId: bigint; status: number }>) =>
  confirm(f, executor.writeContract({ address: router, abi: stockRouterAbi, functionName: 'settleOrders', args: [fills, closes], gas: await settlementGas(f, executor.account!, fills, closes) }));
const simulateAsExecutor = (fills: FillArg[]) => () =>
  f.publicClient.simulateContract({ account: executor.account, address: router, abi: stockRouterAbi, functionName: 'settleOrders', args: [fills, []] });

beforeAll(async () => {
  f = await startChainFixture();
  [alice, bob, attacker] = f.users;
  ({ stockRouter: router, cashier, stocks } = contracts(f));
  symbols = Object.keys(stocks);
  // The venue as the app runs it: a feed per stock, feeds required; the executor key its own account.
  const oracle = await ensurePriceFeeds({
    publicClient: f.publicClient,
    walletClient: f.operator,
    stockRouter: router,
    setup: { symbols, stocks, publishers: [ORACLE_PUBLISHER_ACCOUNT.address], toleranceBps: 100, maxAgeSeconds: 7 * 86_400 },
  });
  const publisher = testWallet(ORACLE_PUBLISHER_ACCOUNT.privateKey, f.chain, f.rpcUrl);
  const t = (await f.publicClient.getBlock()).timestamp;
  const updates = symbols.map((s) => ({ feed: oracle!.feeds[s], answer: ORACLE / 10n ** 10n, observedAt: t }));
  await confirm(f, publisher.writeContract({ address: oracle!.hub!, abi: priceFeedHubAbi, functionName: 'publish', args: [updates], chain: f.chain, account: publisher.account! }));
  executor = testWallet(EXECUTOR_ACCOUNT.privateKey, f.chain, f.rpcUrl);
  await confirm(f, f.operator.writeContract({ address: router, abi: stockRouterAbi, functionName: 'setOperator', args: [EXECUTOR_ACCOUNT.address, true] }));
  await confirm(f, f.operator.writeContract({ address: cashier, abi: cashierAbi, functionName: 'setOperator', args: [EXECUTOR_ACCOUNT.address, true] }));
  // The attacker's own capital.
  await confirm(f, f.operator.writeContract({ address: contracts(f).cashToken, abi: cashTokenAbi, functionName: 'mint', args: [attacker.address, usdc('600000')] }));
  await depositUsdc(f, attacker, usdc('600000'));
  // Bystanders: alice has cash, bob cash, stock and a resting limit sell.
  await depositUsdc(f, alice, usdc('10000'));
  await depositUsdc(f, bob, usdc('5000'));
  await depositStock(f, bob, stocks.AAPL, shares('30'));
}, 120_000);
afterAll(async () => {
  await f?.stop();
});

describe('executor key drill', () => {
  test('the round-trip extraction stops at the treasury loss budget, to the unit; bystanders keep everything and can leave', async () => {
    const deadline = Number((await f.publicClient.getBlock()).timestamp) + 3 * 86_400;
    const bobsSell = (await routerCall<bigint>(f, bob, 'placeLimitOrder', [stocks.AAPL, Side.Sell, shares('10'), price('150'), DAY, deadline])).result;
    const bystanders = async () => ({
      alice: await mUsdOf(f, alice.address),
      bob: await mUsdOf(f, bob.address),
      bobAapl: await stockOf(f, stocks.AAPL, bob.address),
      bobsSell: await f.publicClient.readContract({ address: router, abi: stockRouterAbi, functionName: 'getOrder', args: [bobsSell] }),
    });
    const before = await bystanders();
    const treasury = await f.publicClient.readContract({ address: cashier, abi: cashierAbi, functionName: 'treasury' });
    const treasury0 = (await mUsdOf(f, treasury)).free;
    const attacker0 = await mUsdOf(f, attacker.address);
    const fees0 = await f.publicClient.readContract({ address: cashier, abi: cashierAbi, functionName: 'feeBalance' });

    // The key cannot lift a bound: each lever is the owner's.
    const owned: Array<[Address, 'setTreasuryLossBudget' | 'setOverallTreasuryLossBudget' | 'setTreasuryLossPeriod' | 'setRequireOracle' | 'setPriceFeed' | 'setFeeConfig' | 'setOperator' | 'sweepFees', readonly unknown[]]> = [
      [router, 'setTreasuryLossBudget', [stocks.AAPL, musd('1000000')]],
      [router, 'setOverallTreasuryLossBudget', [musd('1000000')]],
      [router, 'setTreasuryLossPeriod', [3600]],
      [router, 'setRequireOracle', [false]],
      [router, 'setPriceFeed', [stocks.AAPL, zeroAddress, 0, 0]],
      [router, 'setFeeConfig', [{ marketFeeBps: 0, limitFeeBps: 0 }]],
      [router, 'setOperator', [attacker.address, true]],
      [cashier, 'sweepFees', [1n]],
    ];
    for (const [address, functionName, args] of owned) {
      const abi = address === cashier ? cashierAbi : stockRouterAbi;
      await expectRevert(() => f.publicClient.simulateContract({ account: executor.account, address, abi, functionName, args } as never), 'OwnableUnauthorizedAccount', [EXECUTOR_ACCOUNT.address]);
    }

    const receipts: TransactionReceipt[] = [];
    const refusals: Array<{ symbol: string; args: readonly unknown[] }> = [];
    /** Shares the attacker holds from its buys, per stock. */
    const held: Record<string, bigint> = {};
    for (const symbol of symbols) {
      const stock = stocks[symbol];
      held[symbol] = 0n;
      for (;;) {
        const buying = held[symbol] === 0n;
        const orderId = buying
          ? (await routerCall<bigint>(f, attacker, 'placeMarketOrder', [stock, Side.Buy, 0n, musd('495495'), ANY_BUY_PRICE, deadline])).result
          : (await routerCall<bigint>(f, attacker, 'placeMarketOrder', [stock, Side.Sell, held[symbol], 0n, ANY_SELL_PRICE, deadline])).result;
        // The edge of the oracle band: a buy at −1 %, a sell at +1 %. Beyond it the oracle refuses.
        const edge = buying ? price('99') : price('101');
        await expectRevert(simulateAsExecutor([{ orderId, quantity: LEG, price: buying ? edge - 1n : edge + 1n }]), 'OraclePriceDeviation');
        try {
          await simulateAsExecutor([{ orderId, quantity: LEG, price: edge }])();
        } catch (err) {
          // Refused: record why, then free the capital for the next stock — a refused buy is
          // canceled (its lock returns), a refused sell is filled at the mid, which costs the
          // treasury nothing and so is allowed.
          const reverted = (err as { walk: (fn: (e: unknown) => boolean) => unknown }).walk((e) => (e as { name?: string }).name === 'ContractFunctionRevertedError') as { data?: { errorName: string; args: readonly unknown[] } };
          expect(reverted.data?.errorName).toBe('TreasuryLossBudgetExceeded');
          refusals.push({ symbol, args: reverted.data!.args });
          if (buying) await settleAsExecutor([], [{ orderId, status: OrderStatus.Canceled }]);
          else await settleAsExecutor([{ orderId, quantity: held[symbol], price: ORACLE }], [{ orderId, status: OrderStatus.Filled }]);
          held[symbol] = 0n;
          break;
        }
        receipts.push(await settleAsExecutor([{ orderId, quantity: LEG, price: edge }], [{ orderId, status: OrderStatus.Filled }]));
        held[symbol] = buying ? LEG : 0n;
      }
    }

    // Each of the first four stocks took its 25,000 budget in five legs (buy, sell, buy, sell, buy);
    // the fifth stock's first leg was already past the venue's 100,000.
    const window = BigInt(Math.floor(Number((await f.publicClient.getBlock()).timestamp) / 86_400));
    expect(receipts).toHaveLength(20);
    expect(refusals).toEqual([
      ...symbols.slice(0, 4).map((symbol) => ({ symbol, args: [expect.any(BigInt), stocks[symbol], STOCK_BUDGET + musd('5000'), STOCK_BUDGET] })),
      { symbol: symbols[4], args: [expect.any(BigInt), zeroAddress, OVERALL_BUDGET + musd('5000'), OVERALL_BUDGET] },
    ]);
    // Not one unit more: a fill of 1e-18 share 1 % off the mid is refused too.
    const last = (await routerCall<bigint>(f, attacker, 'placeMarketOrder', [stocks[symbols[4]], Side.Buy, 0n, musd('100'), ANY_BUY_PRICE, deadline])).result;
    await expectRevert(simulateAsExecutor([{ orderId: last, quantity: 1n, price: price('99') }]), 'TreasuryLossBudgetExceeded', [last, zeroAddress, OVERALL_BUDGET + 1n, OVERALL_BUDGET]);

    // Every share the attacker bought was sold back, so the treasury's loss against the oracle is its cash change.
    expect(Object.values(held)).toEqual(symbols.map(() => 0n));
    const treasuryLoss = treasury0 - (await mUsdOf(f, treasury)).free;
    expect(treasuryLoss).toBe(OVERALL_BUDGET);
    expect(await f.publicClient.readContract({ address: router, abi: stockRouterAbi, functionName: 'treasuryLoss', args: [zeroAddress] })).toEqual([OVERALL_BUDGET, OVERALL_BUDGET, window * 86_400n, (window + 1n) * 86_400n]);
    // What the attacker took: the loss less the fees it paid (10 bps a leg: 3 × 495 + 2 × 505 and the
    // 500 of the sale at the mid, a stock).
    const attacker1 = await mUsdOf(f, attacker.address);
    const extracted = attacker1.free + attacker1.locked - attacker0.free - attacker0.locked;
    const fees = (await f.publicClient.readContract({ address: cashier, abi: cashierAbi, functionName: 'feeBalance' })) - fees0;
    expect(fees).toBe(4n * musd('2995'));
    expect(extracted).toBe(OVERALL_BUDGET - fees);
    expect(extracted).toBeLessThanOrEqual(OVERALL_BUDGET);

    // The alerts an operator watches: each stock at 80 % (20,000), the venue at 80 % (80,000).
    const alerts = receipts.flatMap((r) => parseEventLogs({ abi: stockRouterAbi, logs: r.logs, eventName: 'TreasuryLossBudgetAlert' }).map((l) => l.args));
    expect(alerts).toEqual([
      ...symbols.slice(0, 3).map((s) => ({ stock: stocks[s], window, netLoss: musd('20000'), limit: STOCK_BUDGET })),
      { stock: zeroAddress, window, netLoss: musd('80000'), limit: OVERALL_BUDGET },
      { stock: stocks[symbols[3]], window, netLoss: musd('20000'), limit: STOCK_BUDGET },
    ]);

    // Bystanders: untouched, and they can leave.
    expect(await bystanders()).toEqual(before);
    await routerCall(f, bob, 'cancelLimitOrder', [bobsSell]);
    expect((await f.publicClient.readContract({ address: router, abi: stockRouterAbi, functionName: 'getOrder', args: [bobsSell] })).status).toBe(OrderStatus.Canceling);
    const aliceUsdc = await usdcOf(f, alice.address);
    await routerCall(f, alice, 'withdraw', [contracts(f).cashToken, usdc('10000')]);
    expect((await usdcOf(f, alice.address)) - aliceUsdc).toBe(usdc('10000'));
    await routerCall(f, bob, 'withdraw', [contracts(f).cashToken, usdc('5000')]);
    await routerCall(f, bob, 'withdrawStock', [stocks.AAPL, shares('20')]);
    expect(await stockOf(f, stocks.AAPL, bob.address)).toEqual({ wallet: before.bobAapl.wallet + shares('20'), exchange: 0n, locked: before.bobAapl.locked });
    await expectCashInvariant(f, [alice.address, bob.address, attacker.address]);
  }, 120_000);
});
