import { expect, test } from 'vitest';
import { parseEventLogs, type Address, type Hex } from 'viem';
import { stockAbi, stockRouterAbi } from '../../src/chain/abi/generated/index.ts';
import { useChainFixture, type ChainUser } from '../support/chain-fixture.ts';
import {
  approveStock,
  confirm,
  contracts,
  DAY,
  deadlineIn,
  depositStock,
  expectRevert,
  expectStockBacking,
  price,
  shares,
  Side,
  stockOf,
} from './chain-test-helpers.ts';

let bob: ChainUser;
let aapl: Address;
let router: Address;

const f = useChainFixture(async () => {
  bob = f.users[1];
  aapl = contracts(f).stocks.AAPL;
  router = contracts(f).stockRouter;
});

function simulate(functionName: 'depositStock' | 'withdrawStock', args: readonly [Address, bigint]) {
  return () => f.publicClient.simulateContract({ account: bob.wallet.account, address: router, abi: stockRouterAbi, functionName, args });
}

test('stock deposit and withdrawal move tokens between wallet and exchange balance', async () => {
  await approveStock(f, bob, aapl, shares('10'));
  const dep = await confirm(f, bob.wallet.writeContract({ address: router, abi: stockRouterAbi, functionName: 'depositStock', args: [aapl, shares('10')] }));
  expect(parseEventLogs({ abi: stockAbi, logs: dep.logs, eventName: 'StockDeposited' })[0].args).toEqual({ user: bob.address, amount: shares('10') });
  expect(await stockOf(f, aapl, bob.address)).toEqual({ wallet: shares('90'), exchange: shares('10'), locked: 0n });
  await expectStockBacking(f, aapl, f.users.map((u) => u.address));

  const wd = await confirm(f, bob.wallet.writeContract({ address: router, abi: stockRouterAbi, functionName: 'withdrawStock', args: [aapl, shares('4')] }));
  const [ev] = parseEventLogs({ abi: stockAbi, logs: wd.logs, eventName: 'StockWithdrawn' });
  expect(ev.address.toLowerCase()).toBe(aapl.toLowerCase());
  expect(ev.args).toEqual({ user: bob.address, amount: shares('4') });
  expect(await stockOf(f, aapl, bob.address)).toEqual({ wallet: shares('94'), exchange: shares('6'), locked: 0n });
  await expectStockBacking(f, aapl, f.users.map((u) => u.address));
});

test('withdrawal beyond the free exchange balance (locked stock excluded) → InsufficientStockBalance', async () => {
  await depositStock(f, bob, aapl, shares('6'));
  await expectRevert(simulate('withdrawStock', [aapl, shares('7')]), 'InsufficientStockBalance', [shares('6'), shares('7')]);
  const deadline = await deadlineIn(f, 600);
  await confirm(
    f,
    bob.wallet.writeContract({ address: router, abi: stockRouterAbi, functionName: 'placeLimitOrder', args: [aapl, Side.Sell, shares('2'), price('300'), DAY, deadline] }),
  );
  await expectRevert(simulate('withdrawStock', [aapl, shares('5')]), 'InsufficientStockBalance', [shares('4'), shares('5')]);
});

test('stock deposit without allowance or wallet balance reverts with the ERC-20 errors', async () => {
  await expectRevert(simulate('depositStock', [aapl, shares('1')]), 'ERC20InsufficientAllowance', [router, 0n, shares('1')]);
  await approveStock(f, bob, aapl, shares('500'));
  await expectRevert(simulate('depositStock', [aapl, shares('101')]), 'ERC20InsufficientBalance', [bob.address, shares('100'), shares('101')]);
});

test('zero amounts, unlisted stocks, direct transfers and non-router calls are refused', async () => {
  await expectRevert(simulate('depositStock', [aapl, 0n]), 'ZeroAmount', []);
  await expectRevert(simulate('withdrawStock', [aapl, 0n]), 'ZeroAmount', []);
  const unlisted = contracts(f).cashToken;
  await expectRevert(simulate('depositStock', [unlisted, 1n]), 'StockNotListed', [unlisted]);
  // A plain transfer to the Stock contract would break its 1:1 backing of exchange balances.
  await expectRevert(
    () => f.publicClient.simulateContract({ account: bob.wallet.account, address: aapl, abi: stockAbi, functionName: 'transfer', args: [aapl, 1n] }),
    'ERC20InvalidReceiver',
    [aapl],
  );
  await expectRevert(
    () => f.publicClient.simulateContract({ account: bob.wallet.account, address: aapl, abi: stockAbi, functionName: 'mintToExchange', args: [bob.address, 1n] }),
    'NotRouter',
    [bob.address],
  );
});
